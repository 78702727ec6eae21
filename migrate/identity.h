/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What makes a running haproxy this service's own: the one rule every path
 * that acts on a haproxy it did not start (the takeover at the first
 * start, the adoption of a restart by hand, the SO_REUSEPORT attach, the
 * stop) goes through, by way of find_foreign() (migrate/find.h). Another
 * service on the same host may share a configuration file, a container may
 * have a file at the same path, and whoever can write a pidfile could name
 * any pid in it: none of these is enough.
 */
#pragma once

#include <glib.h>

#include "base/proc.h"

struct identity;
typedef struct identity Identity;

/*
 * The wrapper's side of the rule: its pidfile (may be NULL: then nothing
 * is ever its own), its configuration files (NULL-terminated), its own
 * fragment (RUNDIR/listeners.cfg, which its generations load besides
 * them; may be NULL), its pid, and the namespaces and cgroup of the
 * calling process. Relative names are taken against the current
 * directory. Processes are read under proc_root.
 */
struct identity *identity_new(const char *proc_root, const char *pidfile,
			      const char *const *config_files,
			      const char *fragment, GPid self);
void identity_free(struct identity *id);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Identity, identity_free)

/*
 * NULL when the wrapper's pidfile can be trusted to name its haproxy; else
 * why not, for one notice: then nothing is this service's own at all. A
 * pidfile can be trusted when it (if it exists) is owned by root or the
 * wrapper's effective uid and writable by no one else, in a directory
 * owned by one of them that no one else can write to, or that is sticky.
 */
const char *identity_pidfile_distrust(const struct identity *id);
/*
 * Could a process with these ids (its /proc/PID/status) belong to a
 * haproxy of this service, as its top or a worker (migrate/trust.h)? A
 * process that could not is passed over before its command line is read.
 */
gboolean identity_may_own(const struct identity *id,
			  const struct proc_ids *ids);
/* The same for one of its uids. */
gboolean identity_may_own_uid(const struct identity *id, guint32 uid);

/* The same for pidfile alone (may be NULL: then NULL), without a whole
 * identity; to be freed. */
gchar *pidfile_distrust_reason(const char *pidfile);

/*
 * NULL when the haproxy at pid (the top of an instance: a standalone
 * process, a master, a -Ds parent) is this service's own; else why not,
 * for a notice (valid UTF-8, untrusted text escaped). argv and cwd are the
 * command line and directory its -p and -f are read from: pid's own, or
 * its first worker's when pid blanked its arguments (a 1.7 -Ds parent).
 * All of these must hold, checked in this order:
 *  a. it is in the wrapper's network namespace; in another mount namespace
 *     (a unit's PrivateTmp=), its names are looked at through its root
 *     (/proc/PID/root): only the same files by device and inode count;
 *  b. this wrapper could have started it (migrate/trust.h);
 *  c. its last -p names the wrapper's pidfile (same normalised absolute
 *     path, or same device and inode), which can be trusted;
 *  d. its configuration files are the wrapper's, the whole set (by path,
 *     or device and inode), and maybe the wrapper's own fragment (by path
 *     and device and inode): a generation of a wrapper killed on this
 *     command line is this service's own;
 *  e. no ancestor but this wrapper is a haproxy-systemd-wrapper;
 *  f. its cgroup is the wrapper's, or not a systemd service's (*.service).
 */
gchar *identity_refusal(const struct identity *id, GPid pid,
			const char *const *argv, const char *cwd);
