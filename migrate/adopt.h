/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Adoption: a haproxy started behind the wrapper's back replaced the one
 * serving (a deploy script's "haproxy -D -f CFG -p PIDFILE -sf $(cat
 * PIDFILE)", or -st, or -W -D). When the serving haproxy ends as a
 * replaced one does (soft stop, or SIGTERM for -st), the supervisor asks
 * for a search: the instances using the same pidfile or configuration
 * are found and verified as at a first-start takeover (find.h), waited
 * for while a -D launcher is still starting its daemon or they do not
 * handle SIGUSR1 yet, bounded. The ones found are adopted: watched
 * (pidfds: they are not our children), listed for the next generation's
 * -sf, and signalled through those pidfds when the wrapper stops.
 */
#pragma once

#include <glib.h>

struct foreign;

struct adopt;

enum adopt_event {
	ADOPT_FOUND,	/* a replacement was found and adopted: it serves */
	ADOPT_NONE,	/* nothing replaced the one serving within the bound */
	ADOPT_LOST,	/* the adopted ones ended while they served */
	ADOPT_GONE,	/* the last adopted instance not serving has exited */
};

typedef void (*adopt_fn)(enum adopt_event event, gpointer data);

/* pidfile (may be NULL) and the configuration files of argv (haproxy's
 * arguments, argv[0] included and ignored) taken against cwd, with the
 * wrapper's own fragment (RUNDIR/listeners.cfg; may be NULL); processes
 * read under proc_root (PROC_ROOT, or a fake tree in tests), the pidfds
 * naming real pids. */
struct adopt *adopt_new_at(const char *proc_root, const char *pidfile,
			   const char *const *argv, const char *cwd,
			   const char *fragment, adopt_fn fn, gpointer data);

/* The haproxy serving has ended, ours or one adopted earlier (LOST):
 * look for what replaced it. The outcome, FOUND or NONE, comes from the
 * main loop. */
void adopt_search(struct adopt *a);
/* The same, but the first look now (its outcome may come from inside
 * this call), and NONE at once when no candidate is there at all. */
void adopt_look(struct adopt *a);
gboolean adopt_searching(const struct adopt *a);

/* Does an adopted instance serve (it is the service now)? */
gboolean adopt_serving(const struct adopt *a);
/* Is an adopted instance still running, serving or not? */
gboolean adopt_alive(const struct adopt *a);

/* One adopted instance as it crosses our own exec (the upgrade state):
 * proven again by identity in the new image, never by pid alone. */
struct adopt_row {
	GPid pid;
	guint64 start_time;	/* of pid, from its stat */
	gboolean leaving;	/* superseded or retired: no longer serving */
};

/* The adopted, a launcher still loading included, as rows. */
GArray *adopt_rows(const struct adopt *a);
/* The new image after our own exec: the rows the old one adopted, each
 * kept only if the search's identity rule (find.h) still finds it, with
 * its start time; watched again. */
void adopt_restore(struct adopt *a, const GArray *rows);

/* An instance taken over at the first start (f and pidfd, the pidfd
 * that names it since it was found, now a's), told to leave by -sf or
 * our soft stop: from now on a row like an adopted one that leaves,
 * watched, stopped with the wrapper and carried across our exec. */
void adopt_taken_over(struct adopt *a, struct foreign *f, int pidfd);

/* The adopted instances alive (struct foreign *), for status. */
const GPtrArray *adopt_instances(const struct adopt *a);

/* The -sf pids of the instances serving, checked again; remembered as
 * on the -sf list of the generation about to start. */
GArray *adopt_targets(struct adopt *a);

/* A generation of ours took over (-sf): the instances on its -sf list
 * drain and leave; their end is no longer the service's. Any adopted
 * since (a launcher's daemon) still serves: adopt_retire() it. */
void adopt_superseded(struct adopt *a);

/* A generation of ours serves that did not have them on its -sf list
 * (they were found during its reload): sig (SIGUSR1, or SIGTERM for a
 * hard reload) to them, as -sf or -st would have; they drain and leave. */
void adopt_retire(struct adopt *a, int sig);

/*
 * The wrapper stops: no more searching, and sig (SIGTERM, SIGINT,
 * SIGUSR1, SIGKILL) to every adopted instance, through the pidfds opened
 * when they were found (a -Ds parent's workers, verified by their start
 * time). Their ends are then GONE events. A search under way ends with a
 * last look: what replaced ours is watched and gets sig too. A -D
 * launcher still loading gets no SIGUSR1 (it would die of it, and it is
 * not the wrapper's): once it exits, the daemon it started gets it.
 */
void adopt_stop(struct adopt *a, int sig);

void adopt_free(struct adopt *a);
