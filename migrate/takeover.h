/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Taking over haproxy instances this wrapper did not start (an init
 * script's -D daemon, a manual -sf restart, a master-worker instance): at
 * the first start they are found (find.h), the wrapper waits until each of
 * them handles SIGUSR1, and the first generation starts with their pids
 * after -sf. haproxy's own protocol then pauses them while it binds, and
 * soft-stops them once it has bound, or resumes them if it could not: a
 * failed takeover leaves them serving. Instances found only once our
 * first generation serves beside them are soft-stopped by the wrapper
 * itself, as -sf would (takeover_soft_stop). It watches them (pidfds)
 * until they are gone.
 */
#pragma once

#include <glib.h>

struct foreign;
struct takeover;

typedef void (*takeover_fn)(gpointer data);

/*
 * Look for instances using pidfile or the configuration files of argv
 * (haproxy's arguments, argv[0] included and ignored), taken against cwd,
 * with the wrapper's own fragment (RUNDIR/listeners.cfg; may be NULL).
 * settled is called once, from the main loop, when every instance found
 * is ready for -sf, or after a bounded wait (logged), or at once if there
 * is none. started_before (a start time from stat; 0: none) leaves out
 * the instances that started later.
 */
struct takeover *takeover_begin(const char *pidfile, const char *const *argv,
				const char *cwd, const char *fragment,
				guint64 started_before, takeover_fn settled,
				gpointer data);

/* The pids for the first generation's -sf, each checked again to still be
 * the process that was found. */
GArray *takeover_targets(struct takeover *t);

/* The -sf pids of instances (struct foreign *) that haproxy's protocol
 * signals, each checked again to still be the process that was found,
 * reading proc_root (/proc, or tests' fake trees). */
GArray *foreign_sf_targets_at(const char *proc_root,
			      const GPtrArray *instances);

/* What haproxy's -sf does once it has bound, done by us: SIGUSR1 to the
 * same processes, each through a pidfd checked to name the process
 * found. For instances found after our first generation serves beside
 * them (SO_REUSEPORT). */
void takeover_soft_stop(struct takeover *t);

/* The instances still alive (struct foreign *), for status. */
const GPtrArray *takeover_instances(struct takeover *t);
/* How many were found, whether or not they have exited since: an
 * instance our -sf ends before our generation is ready still counts. */
guint takeover_taken(const struct takeover *t);

/* The candidates a search did not take over, with why (struct
 * foreign_skip *, may be NULL), in the log as the search says them. */
void foreign_log_skipped(const GPtrArray *skipped);

/* Each instance watched (f and the pidfd that names it since it was
 * found) handed to fn, which owns both from then on; the takeover keeps
 * none (they have been told to leave: their rows are the adopted ones'). */
typedef void (*takeover_row_fn)(struct foreign *f, int pidfd, gpointer data);
void takeover_hand_over(struct takeover *t, takeover_row_fn fn,
			gpointer data);

/* Stop waiting (a stop request came); the instances are left alone. */
void takeover_cancel(struct takeover *t);

void takeover_free(struct takeover *t);
