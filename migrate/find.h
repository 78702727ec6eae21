/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding haproxy instances this wrapper did not start that serve the same
 * service: the pids in its pidfile and the haproxy processes whose command
 * line loads the same configuration files. Every candidate is verified to
 * be a live haproxy (executable and command line) before it is reported,
 * and grouped with its workers. This module only looks: it never sends a
 * signal. Pids are reported with their start time so that the caller can
 * check, after pidfd_open(), that a pid still names the process found here
 * (proc_same_process_at).
 */
#pragma once

#include <glib.h>

enum foreign_kind {
	/* One serving process: -db, a -D daemon (one per nbproc), an -sf
	 * restart, a -Ds on haproxy >= 1.8 (which means -D there). */
	FOREIGN_STANDALONE,
	/* A 1.5-1.7 -Ds parent: it only waits for its workers, which serve
	 * and take signals; it swallows most signals itself. */
	FOREIGN_DS_PARENT,
	/* A master-worker master (-W, -Ws or "master-worker" in the
	 * configuration) with its workers, old draining ones included. */
	FOREIGN_MW_MASTER,
};

/* How a process came to be looked at (flags). */
enum foreign_source {
	FOREIGN_BY_PIDFILE = 1 << 0,
	FOREIGN_BY_CONFIG = 1 << 1,
};

struct foreign {
	enum foreign_kind kind;
	/* The standalone process, the -Ds parent or the master. */
	GPid pid;
	guint64 start_time;	/* of pid, from its stat */
	/* GPid, oldest first (the newest serves); empty for STANDALONE. */
	GArray *workers;
	GArray *worker_start_times;	/* guint64, parallel to workers */
	gchar *exe;		/* pid's executable, without " (deleted)" */
	gboolean exe_deleted;	/* replaced on disk since it started */
	GStrv argv;		/* pid's command line, as /proc shows it */
	/*
	 * Absolute, normalised: every -f value and everything after "--".
	 * From the first worker when pid's own command line names none (the
	 * 1.7 -Ds parent overwrites its arguments).
	 */
	GStrv config_files;
	guint found_by;		/* enum foreign_source, of all of them */
};

/* A pid that was looked at and is not reported as (part of) an instance. */
struct foreign_skip {
	GPid pid;		/* 0: about the pidfile itself, not one pid */
	guint found_by;		/* enum foreign_source */
	gchar *reason;		/* for a log line; valid UTF-8 */
	/* The pid names no process (a stale pidfile): nothing to tell. */
	gboolean gone;
};

typedef struct foreign Foreign;

void foreign_free(struct foreign *f);
void foreign_skip_free(struct foreign_skip *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Foreign, foreign_free)

/* "standalone", "-Ds parent", "master-worker master" */
const char *foreign_kind_name(enum foreign_kind kind);

/* One line for the logs: kind, pid, workers, executable, how found. */
gchar *foreign_describe(const struct foreign *f);

/*
 * Does every process of f that haproxy's -sf protocol signals (the
 * standalone process, the master, or the -Ds parent's workers) handle
 * SIGUSR1 now? A haproxy that is still loading has no handler yet, and a
 * 2.5+ master re-executes itself after every load: a SIGUSR1 or SIGTTOU
 * that comes meanwhile is lost [observed 2.6], and the instance would
 * never stop. Wait for this before starting a generation with -sf.
 */
gboolean foreign_settled(const char *proc_root, const struct foreign *f);

/*
 * Look under proc_root ("/proc") for haproxy instances that self (and its
 * descendants, our own generations) did not start, among:
 *  - the pids in pidfile (may be NULL; a missing file names none);
 *  - the processes whose command line loads one of config_files (NULL-
 *    terminated, may be NULL; relative names are taken against the current
 *    directory), compared by normalised absolute path and, for files that
 *    exist, by device and inode, so that a symlinked path matches too.
 * An instance is reported only if it is this service's own
 * (identity_refusal(), migrate/identity.h: its -p is pidfile, its -f files
 * are config_files, all of them, maybe with fragment, the wrapper's own
 * RUNDIR/listeners.cfg (may be NULL), and more); when the pidfile cannot
 * be trusted, none is.
 * *out gets the instances (struct foreign, oldest first); *skipped (may be
 * NULL) the candidates that are not reported, with why: a stale pidfile, a
 * pid reused by another program, a zombie, a haproxy launcher that is
 * still starting its daemon, a pidfile that cannot be read, another
 * user's haproxy. Fails only when proc_root cannot be listed.
 */
gboolean find_foreign(const char *proc_root, const char *pidfile,
		      const char *const *config_files, const char *fragment,
		      GPid self, GPtrArray **out, GPtrArray **skipped,
		      GError **error);

/*
 * Does pidfile (may be NULL) name a live haproxy other than self that is
 * this service's own, checked as find_foreign() checks its candidates
 * (executable, command line, migrate/identity.h with config_files and
 * fragment)?
 * Only the pids it names are read, never the whole proc tree: cheap on a
 * busy host. *skipped gets why each other pid it names is no haproxy, and
 * why the file itself could not be read, as find_foreign() says it.
 */
gboolean foreign_pidfile_check(const char *proc_root, const char *pidfile,
			       const char *const *config_files,
			       const char *fragment, GPid self,
			       GPtrArray **skipped);
