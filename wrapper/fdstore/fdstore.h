/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The serving haproxy's listening sockets, parked in systemd's file
 * descriptor store (FDSTORE=1, the unit's FileDescriptorStoreMax=), so
 * that they stay open while no haproxy runs: across `systemctl restart`
 * and a crash of the wrapper followed by Restart=, connections wait in
 * their backlog instead of being refused. The next wrapper gets them back
 * as LISTEN_FDS and its first haproxy (1.8 and later) takes them over
 * through -x from a server of ours (wrapper/fdstore/getsocks.h): a
 * standalone one, or in master-worker mode the master (up to 3.0) or its
 * first worker (3.1 and later), which hands them on at every reload.
 * What is stored in master-worker mode comes from the serving workers
 * (each only its own process's binds under nbproc): a master closes its
 * own copies once its workers are forked.
 *
 * Only TCP listeners are stored: a unix socket's path may be gone by the
 * next start (the runtime directory's are removed at every stop).
 *
 * Each socket is stored under its own name, "l" and its inode in hex
 * (short: 10,000 names must fit in LISTEN_FDNAMES=), so that one the
 * serving generation no longer listens on (a bind removed) is taken
 * out alone (FDSTOREREMOVE=1): left in the store, an SO_REUSEPORT socket
 * nobody accepts from would still get its share of new connections.
 */
#pragma once

#include <glib.h>

#include "legacy/launch.h"
#include "legacy/version.h"
#include "wrapper/generation.h"

enum fdstore_policy { FDSTORE_AUTO, FDSTORE_ON, FDSTORE_OFF };

/* A NULL store (a launcher built without one) stores nothing. */

struct fdstore;

/* Takes the listening sockets systemd handed this process (LISTEN_FDS for
 * its pid, our names), closes whatever else it handed (one notice), and
 * clears LISTEN_* from the environment, whatever the policy: haproxy must
 * never inherit them. Before anything is spawned or opened. */
struct fdstore *fdstore_new(enum fdstore_policy policy);
/* rundir is where the -x server listens and the names are kept; without
 * one (NULL), nothing systemd handed back can be used. expose_sock is
 * where each generation exposes its listening sockets; without one
 * (NULL), they are taken from haproxy with pidfd_getfd. */
void fdstore_set_rundir(struct fdstore *st, const char *rundir,
			const char *expose_sock);
/* The -x source for a first generation launched so, or NULL: sockets
 * were handed to us and it can take them. The first call sets up the
 * server; what cannot be used is said once and dropped from the store. */
const char *fdstore_first_source(struct fdstore *st,
				 const struct haproxy_version *v,
				 enum launch_mode mode);
/* g was just spawned (still our unreaped child): while the -x server
 * runs, it answers g alone (and what g forks), not any other process of
 * root or our user. */
void fdstore_launched(struct fdstore *st, const struct generation *g);
/* g serves (a generation ready, or a master that loaded again): its
 * listening sockets are stored, the others taken out. Where the unit has
 * a store that g cannot use (haproxy < 1.8), one notice says so. */
void fdstore_serving(struct fdstore *st, const struct generation *g);
/* A stop begins (or a restart: the wrapper cannot tell them apart).
 * Stored sockets that another process's listener shares an address with
 * (a bridge serving while this unit stops) are taken out now: kept, they
 * would take a share of the new connections while haproxy drains, and
 * systemd resets them when the stop releases the store. The others are
 * kept for a restart, several of ours on one address too (shards, two
 * bind lines, a bind per process): the stored sockets, by inode, are
 * never another listener. */
void fdstore_stopping(struct fdstore *st);
/* Everything stored is taken out and closed, with a word. */
void fdstore_empty(struct fdstore *st, const char *why);
/* The wrapper stops: the server and the names file go. What is stored
 * stays in systemd's hands, which keeps it for a restart and releases it
 * for a stop. */
void fdstore_leave(struct fdstore *st);
void fdstore_free(struct fdstore *st);
