/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-group SO_REUSEPORT migration. When a haproxy closes a listener of a
 * SO_REUSEPORT group (its soft stop on a reload without -x, a takeover),
 * the kernel resets the connections queued on it, unless migration is on:
 * host-wide (net.ipv4.tcp_migrate_req, never touched here) or for one group,
 * by a BPF_PROG_TYPE_SK_REUSEPORT program loaded for
 * BPF_SK_REUSEPORT_SELECT_OR_MIGRATE and attached to any one socket of the
 * group (Linux >= 5.14). Ours only returns SK_PASS: the kernel keeps
 * choosing the listener as it would, and moves the queue of a closing one
 * to a sibling instead of resetting it.
 *
 * Where it can (Linux >= 5.14 with BPF_MAP_TYPE_REUSEPORT_SOCKARRAY), each
 * group gets a program of its own instead, with a one-socket map: while
 * the map is empty it passes as the plain one does; set to a socket of the
 * new generation, it steers the group's new handshakes there, so that the
 * old listener can close with no handshake completing on it (the kernel
 * resets a handshake whose last ACK it checked against a listener that
 * closes before the child is queued). See reuseport_steer_generation().
 *
 * The program is loaded once, at the first need, and kept. The listeners
 * of a serving haproxy are found through /proc (its socket descriptors
 * among the LISTEN entries of its /proc/PID/net/tcp{,6}), taken with
 * pidfd_getfd, and the program attached once per group (address and
 * device) a round. Whatever stands in the way (old kernel, no CAP_BPF,
 * pidfd_getfd refused, a listener without SO_REUSEPORT) is one notice,
 * never an error: the service runs on, as it would without us.
 */
#pragma once

#include <glib.h>

#include "wrapper/generation.h"

struct reuseport;

/* enabled is --reuseport-migration=auto; when it is off (FALSE), this
 * module does nothing at all. */
struct reuseport *reuseport_new(gboolean enabled);
void reuseport_free(struct reuseport *r);

/* Can groups get migration: enabled and the program loaded (loading it
 * now if that was not tried yet)? */
gboolean reuseport_usable(struct reuseport *r);

/* Attach to every group g's processes listen on: the -db process, the
 * -Ds parent and its workers, the master and its workers. TRUE when every
 * group got its steering program (so g may be soft-stopped by us after
 * its successor is steered to, instead of by the successor's -sf). */
gboolean reuseport_attach_generation(struct reuseport *r,
				     const struct generation *g);

/* The same for instances we did not start (struct foreign *), each
 * process checked to still be the one that was found. */
gboolean reuseport_attach_foreign(struct reuseport *r,
				  const GPtrArray *instances);

/*
 * Before a haproxy that shares groups with g closes its listeners: every
 * group that has its steering program sends its new handshakes to g's
 * socket from now on, then the handshakes in flight on the others get a
 * short grace (see STEER_GRACE_MS) to complete. The number of groups
 * steered (0: nothing set, no wait).
 */
guint reuseport_steer_generation(struct reuseport *r,
				 const struct generation *g);

/* For status: "off", "pending" (nothing to attach to yet), "active", or
 * "unavailable: WHY" / "partial: WHY" after the last round. */
const char *reuseport_state(const struct reuseport *r);
