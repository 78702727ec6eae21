/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/adopt.h"

#include <errno.h>
#include <glib-unix.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"
#include "migrate/cmdline.h"
#include "migrate/find.h"
#include "migrate/takeover.h"

/*
 * A replacement exists before the old one ends, since it sent the signal
 * that ended it. But a -D launcher may not have forked its daemon yet,
 * and a match by the pidfile alone shows only once haproxy has written
 * it. So the search looks again on every change in the pidfile's
 * directory and on a short schedule, for a bounded time.
 */
#define SEARCH_POLL_MS 20
#define SEARCH_LIMIT_MS 3000

struct adopted {
	struct adopt *a;
	struct foreign *f;
	int pidfd;		/* f->pid, verified after opening */
	guint source;
	/* A -D launcher still loading when the search gave up. It is not an
	 * instance yet (neither in status nor on an -sf list); when it
	 * exits, the search looks for the daemon it started. */
	gboolean launcher;
	gboolean on_sf;		/* on the -sf list of a generation of ours */
	gboolean leaving;	/* superseded by that -sf, or retired */
	gboolean spared;	/* a launcher a graceful stop leaves alone */
	gboolean taken_over;	/* found at the first start, not adopted */
};

struct adopt {
	gchar *proc_root;	/* PROC_ROOT, or a fake tree in tests */
	gchar *pidfile;
	GStrv configs;
	gchar *fragment;	/* our RUNDIR/listeners.cfg; NULL: none */
	adopt_fn fn;
	gpointer data;

	GPtrArray *adopted;	/* struct adopted *, alive */
	GPtrArray *instances;	/* their struct foreign *, for status */
	gboolean serving;	/* the adopted ones are the service */
	int stop_sig;		/* the stop's signal, as adopt_stop() was
				 * told it; 0 while the wrapper runs */
	gboolean quick;		/* this search ends when nothing is there */
	guint found;		/* adopted by this search */

	guint timer;		/* searching */
	guint spared_timer;	/* stopping, while a launcher is spared */
	gint64 deadline;
	int inotify_fd;		/* the pidfile's directory, while searching */
	guint inotify_source;
};

static void adopted_free(struct adopted *d)
{
	if (d->source)
		g_source_remove(d->source);
	if (d->pidfd >= 0)
		close(d->pidfd);
	foreign_free(d->f);
	g_free(d);
}

struct adopt *adopt_new_at(const char *proc_root, const char *pidfile,
			   const char *const *argv, const char *cwd,
			   const char *fragment, adopt_fn fn, gpointer data)
{
	struct adopt *a = g_new0(struct adopt, 1);

	a->proc_root = g_strdup(proc_root);
	a->pidfile = g_strdup(pidfile);
	a->configs = foreign_argv_config_files(argv, cwd, FALSE);
	a->fragment = g_strdup(fragment);
	a->fn = fn;
	a->data = data;
	a->adopted = g_ptr_array_new_with_free_func(
		(GDestroyNotify)adopted_free);
	a->instances = g_ptr_array_new();
	a->inotify_fd = -1;
	return a;
}

/* ---- watching the adopted ---- */

static void forget(struct adopt *a, struct adopted *d)
{
	g_ptr_array_remove(a->instances, d->f);
	g_ptr_array_remove(a->adopted, d);
}

static void search_start(struct adopt *a, gboolean quick);
static void last_look(struct adopt *a);

/* Its daemon takes its place: looked for like a replacement. */
static void launcher_exited(struct adopt *a, struct adopted *d)
{
	log_notice("haproxy launcher pid %d has exited; looking for its "
		   "daemon", d->f->pid);
	forget(a, d);
	search_start(a, FALSE);
}

static gboolean on_adopted_exit(int fd, GIOCondition cond, gpointer data)
{
	struct adopted *d = data;
	struct adopt *a = d->a;

	d->source = 0;
	if (d->launcher && !a->stop_sig) {
		launcher_exited(a, d);
		return G_SOURCE_REMOVE;
	}
	if (d->launcher) {
		/* What it started replaced ours: it stops with us. */
		log_notice("haproxy launcher pid %d has exited; looking once "
			   "more for what it started", d->f->pid);
		forget(a, d);
		last_look(a);
		if (!a->adopted->len)
			a->fn(ADOPT_GONE, a->data);
		return G_SOURCE_REMOVE;
	}
	log_notice("%s haproxy pid %d (%s) has exited%s",
		   d->taken_over ? "foreign" : "adopted", d->f->pid,
		   foreign_kind_name(d->f->kind),
		   a->serving && a->adopted->len == 1 && !a->stop_sig ?
		   ", and it was serving" :
		   "");
	forget(a, d);
	if (a->adopted->len)
		return G_SOURCE_REMOVE;
	if (a->serving && !a->stop_sig) {
		a->serving = FALSE;
		a->fn(ADOPT_LOST, a->data);
	} else {
		a->fn(ADOPT_GONE, a->data);
	}
	return G_SOURCE_REMOVE;
}

static gboolean is_launcher(const struct adopt *a, const struct foreign *f);

static gboolean already_adopted(const struct adopt *a,
				const struct foreign *f)
{
	for (guint i = 0; i < a->adopted->len; i++) {
		const struct adopted *d = g_ptr_array_index(a->adopted, i);

		if (d->f->pid == f->pid && d->f->start_time == f->start_time)
			return TRUE;
	}
	return FALSE;
}

/* f (ours now) watched through pidfd, which names it for good. */
static struct adopted *watch_pidfd(struct adopt *a, struct foreign *f,
				   int pidfd)
{
	struct adopted *d = g_new0(struct adopted, 1);

	*d = (struct adopted){ .a = a, .f = f, .pidfd = pidfd };
	d->launcher = is_launcher(a, f);
	d->source = g_unix_fd_add(d->pidfd, G_IO_IN, on_adopted_exit, d);
	g_ptr_array_add(a->adopted, d);
	if (!d->launcher)
		g_ptr_array_add(a->instances, f);
	return d;
}

/* f (ours now) watched through a pidfd that names it for good, or NULL
 * (f freed): it is gone. Not listed yet. */
static struct adopted *watch_one(struct adopt *a, struct foreign *f)
{
	int pidfd = proc_open_if_same_at(a->proc_root, f->pid, f->start_time);

	if (pidfd < 0) {
		log_notice("not adopting pid %d: it is gone", f->pid);
		foreign_free(f);
		return NULL;
	}
	return watch_pidfd(a, f, pidfd);
}

/* Adopt f: a pidfd that names it for good, or nothing. */
static gboolean adopt_one(struct adopt *a, struct foreign *f)
{
	g_autofree gchar *what = foreign_describe(f);
	struct adopted *d = watch_one(a, f);

	if (!d)
		return FALSE;
	if (d->launcher)
		log_notice("haproxy pid %d is a launcher still loading; its "
			   "daemon is adopted once it forks", f->pid);
	else
		log_notice("adopting %s", what);
	a->found++;
	return TRUE;
}

/* ---- the search ---- */

/* A -D launcher forks its daemon, which calls setsid(), and exits: a -D
 * haproxy that leads no session is a launcher, its daemon still to come. */
static gboolean is_launcher(const struct adopt *a, const struct foreign *f)
{
	struct proc_stat st;

	if (!f->argv || !g_strv_contains((const char *const *)f->argv, "-D"))
		return FALSE;
	return proc_stat_at(a->proc_root, f->pid, &st, NULL) &&
	       st.session != f->pid;
}

/* The instances there now, or NULL while one of them is not ready to be
 * adopted yet. A late look (the wrapper stops) takes what there is. */
static GPtrArray *look(struct adopt *a, gboolean late, gboolean *none)
{
	g_autoptr(GPtrArray) found = NULL;
	g_autoptr(GError) error = NULL;

	*none = FALSE;
	if (!find_foreign(a->proc_root, a->pidfile,
			  (const char *const *)a->configs, a->fragment,
			  getpid(), &found,
			  NULL, &error)) {
		log_warn("cannot look for a haproxy that replaced ours: %s",
			 error->message);
		return NULL;
	}
	*none = found->len == 0;
	for (guint i = 0; i < found->len && !late; i++) {
		struct foreign *f = g_ptr_array_index(found, i);

		/* A master without a worker has not forked it yet. */
		if (is_launcher(a, f) || !foreign_settled(a->proc_root, f) ||
		    (f->kind == FOREIGN_MW_MASTER && !f->workers->len))
			return NULL;
	}
	return found->len ? g_steal_pointer(&found) : NULL;
}

static void search_end(struct adopt *a)
{
	g_clear_handle_id(&a->timer, g_source_remove);
	g_clear_handle_id(&a->inotify_source, g_source_remove);
	if (a->inotify_fd >= 0)
		close(a->inotify_fd);
	a->inotify_fd = -1;
}

/* Adopted and not told to leave: serving, or (a launcher) about to. */
static gboolean any_staying(const struct adopt *a)
{
	for (guint i = 0; i < a->adopted->len; i++) {
		const struct adopted *d = g_ptr_array_index(a->adopted, i);

		if (!d->leaving)
			return TRUE;
	}
	return FALSE;
}

static gboolean same_instances(const GPtrArray *x, const GPtrArray *y)
{
	if (!x || !y)
		return x == y;
	if (x->len != y->len)
		return FALSE;
	for (guint i = 0; i < x->len; i++) {
		const struct foreign *fx = g_ptr_array_index(x, i);
		const struct foreign *fy = g_ptr_array_index(y, i);

		if (fx->pid != fy->pid || fx->start_time != fy->start_time)
			return FALSE;
	}
	return TRUE;
}

/*
 * What one look shows may lack a daemon: its -D launcher listed before
 * the fork and read once it had exited (a zombie, passed over), the
 * daemon too new for the listing. A second look, listed after the first
 * ended, has it: what two looks in a row show the same is there.
 */
static GPtrArray *look_twice(struct adopt *a, gboolean *none)
{
	g_autoptr(GPtrArray) first = look(a, FALSE, none);
	GPtrArray *second;

	/* Nothing there, or not ready: the search goes on. Only a quick
	 * search ends when nothing is there, and it must see that twice. */
	if (!first && !(*none && a->quick))
		return NULL;
	second = look(a, FALSE, none);
	if (same_instances(first, second))
		return second;
	if (second)
		g_ptr_array_unref(second);
	*none = FALSE;
	return NULL;
}

/* What a look found: those adopted already are freed and dropped; the
 * others are ours now (the array no longer frees them), in order. */
static void take_new(struct adopt *a, GPtrArray *found)
{
	g_ptr_array_set_free_func(found, NULL);
	for (guint i = found->len; i-- > 0;) {
		struct foreign *f = g_ptr_array_index(found, i);

		if (already_adopted(a, f)) {
			foreign_free(f);
			g_ptr_array_remove_index(found, i);
		}
	}
}

static void search_step(struct adopt *a)
{
	gboolean late = g_get_monotonic_time() >= a->deadline, none;
	g_autoptr(GPtrArray) found = late ? look(a, TRUE, &none)
					  : look_twice(a, &none);

	if (found) {
		take_new(a, found);
		for (guint i = 0; i < found->len; i++)
			adopt_one(a, g_ptr_array_index(found, i));
	}
	if (!a->found && !late && !(a->quick && none))
		return;
	search_end(a);
	a->serving = any_staying(a);
	a->fn(a->serving ? ADOPT_FOUND : ADOPT_NONE, a->data);
}

static gboolean on_poll(gpointer data)
{
	struct adopt *a = data;

	/* search_step may end the search, and this source with it. */
	a->timer = g_timeout_add(SEARCH_POLL_MS, on_poll, a);
	search_step(a);
	return G_SOURCE_REMOVE;
}

/* Anything written or renamed in the pidfile's directory: look now. */
static gboolean on_pidfile_dir(int fd, GIOCondition cond, gpointer data)
{
	struct adopt *a = data;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	search_step(a);
	return G_SOURCE_CONTINUE;
}

static void watch_pidfile(struct adopt *a)
{
	g_autofree gchar *dir = NULL;

	if (!a->pidfile)
		return;
	dir = g_path_get_dirname(a->pidfile);
	a->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->inotify_fd < 0)
		return;
	if (inotify_add_watch(a->inotify_fd, dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		close(a->inotify_fd);
		a->inotify_fd = -1;
		return;
	}
	a->inotify_source = g_unix_fd_add(a->inotify_fd, G_IO_IN,
					  on_pidfile_dir, a);
}

static void search_start(struct adopt *a, gboolean quick)
{
	if (a->timer || a->stop_sig)
		return;
	a->quick = quick;
	a->found = 0;
	a->deadline = g_get_monotonic_time() + SEARCH_LIMIT_MS * 1000LL;
	watch_pidfile(a);
	if (!quick) {
		/* Even the first look runs from the main loop, as every
		 * outcome is told from there, never from inside this call. */
		a->timer = g_timeout_add(0, on_poll, a);
		return;
	}
	/* Now, while the pidfile may still name what replaced ours. */
	a->timer = g_timeout_add(SEARCH_POLL_MS, on_poll, a);
	search_step(a);
}

void adopt_search(struct adopt *a)
{
	search_start(a, FALSE);
}

void adopt_look(struct adopt *a)
{
	search_start(a, TRUE);
}

gboolean adopt_searching(const struct adopt *a)
{
	return a && a->timer;
}

gboolean adopt_serving(const struct adopt *a)
{
	return a && a->serving;
}

gboolean adopt_alive(const struct adopt *a)
{
	return a && a->adopted->len > 0;
}

const GPtrArray *adopt_instances(const struct adopt *a)
{
	return a->instances;
}

GArray *adopt_rows(const struct adopt *a)
{
	GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct adopt_row));

	for (guint i = 0; a && i < a->adopted->len; i++) {
		const struct adopted *d = g_ptr_array_index(a->adopted, i);
		struct adopt_row row = { .pid = d->f->pid,
			.start_time = d->f->start_time, .leaving = d->leaving };

		g_array_append_val(rows, row);
	}
	return rows;
}

static const struct adopt_row *row_of(const GArray *rows,
				      const struct foreign *f)
{
	for (guint i = 0; i < rows->len; i++) {
		const struct adopt_row *row =
			&g_array_index(rows, struct adopt_row, i);

		if (row->pid == f->pid && row->start_time == f->start_time)
			return row;
	}
	return NULL;
}

void adopt_restore(struct adopt *a, const GArray *rows)
{
	g_autoptr(GPtrArray) found = NULL;
	guint kept = 0;
	gboolean none;

	/* A late look: the instances as they are, settled or not. */
	found = look(a, TRUE, &none);
	for (guint i = 0; found && i < found->len;) {
		struct foreign *f = g_ptr_array_index(found, i);
		const struct adopt_row *row = row_of(rows, f);
		g_autofree gchar *what = NULL;
		struct adopted *d;

		if (!row || already_adopted(a, f)) {
			i++;
			continue;
		}
		what = foreign_describe(f);
		d = watch_one(a, g_ptr_array_steal_index(found, i));
		if (!d)
			continue;
		d->leaving = row->leaving;
		log_notice("still adopted after the upgrade: %s", what);
		kept++;
	}
	if (kept < rows->len)
		log_warn("%u adopted haproxy instance(s) named by the handover "
			 "are gone, or no longer this service's: left alone",
			 rows->len - kept);
	a->serving = any_staying(a);
}

/*
 * An awaited launcher that now leads its own session was a daemon caught
 * between its fork and its setsid() when the search gave up: an instance.
 * The same process, by its start time: a launcher that exited (its pidfd
 * not yet read) may have left its pid to another session leader, which
 * is no instance; its exit still brings the search for its daemon.
 */
static void promote_daemons(struct adopt *a)
{
	struct proc_stat st;

	for (guint i = 0; a && i < a->adopted->len; i++) {
		struct adopted *d = g_ptr_array_index(a->adopted, i);
		g_autofree gchar *what = NULL;

		if (!d->launcher ||
		    !proc_stat_at(a->proc_root, d->f->pid, &st, NULL) ||
		    st.session != d->f->pid)
			continue;
		if (!proc_same_process_at(a->proc_root, d->f->pid,
					  d->f->start_time)) {
			log_debug("pid %d leads a session, but it is no longer "
				  "the launcher found: not adopted", d->f->pid);
			continue;
		}
		what = foreign_describe(d->f);
		log_notice("adopting %s", what);
		d->launcher = FALSE;
		g_ptr_array_add(a->instances, d->f);
	}
}

GArray *adopt_targets(struct adopt *a)
{
	g_autoptr(GPtrArray) serving = g_ptr_array_new();

	promote_daemons(a);

	for (guint i = 0; adopt_serving(a) && i < a->adopted->len; i++) {
		struct adopted *d = g_ptr_array_index(a->adopted, i);

		d->on_sf = !d->leaving && !d->launcher;
		if (d->on_sf)
			g_ptr_array_add(serving, d->f);
	}
	return foreign_sf_targets_at(a ? a->proc_root : PROC_ROOT, serving);
}

void adopt_superseded(struct adopt *a)
{
	if (!a)
		return;
	promote_daemons(a);
	for (guint i = 0; i < a->adopted->len; i++) {
		struct adopted *d = g_ptr_array_index(a->adopted, i);

		d->leaving = d->leaving || d->on_sf;
	}
	/* Any found since that generation started stays to be retired. */
	a->serving = any_staying(a);
}

/* A -Ds parent's workers take the signals; each is checked to be the
 * one found, through a pidfd. */
static void signal_workers(const struct adopt *a, const struct foreign *f,
			   int sig)
{
	for (guint i = 0; i < f->workers->len; i++) {
		GPid pid = g_array_index(f->workers, GPid, i);
		int fd = proc_open_if_same_at(a->proc_root, pid,
					      g_array_index(f->worker_start_times,
							    guint64, i));

		if (fd < 0)
			continue;
		log_debug("%s -> %d.", signal_name(sig), pid);
		proc_pidfd_signal(fd, sig);
		close(fd);
	}
}

static void signal_one(struct adopt *a, struct adopted *d, int sig)
{
	if (d->f->kind == FOREIGN_DS_PARENT)
		signal_workers(a, d->f, sig);
	/* A master relays the stop signals to its workers itself. */
	if (d->f->kind != FOREIGN_DS_PARENT || sig == SIGKILL) {
		log_debug("%s -> %d.", signal_name(sig), d->f->pid);
		proc_pidfd_signal(d->pidfd, sig);
	}
}

/*
 * A spared "launcher" may be a daemon caught between its fork and its
 * setsid(): its launcher exited, and the last look saw the daemon still in
 * the launcher's session. Nothing announces the setsid() that follows
 * within moments, so a graceful stop checks on a short schedule; once it
 * leads its own session (the same process, by its start time) it is the
 * daemon, and it gets the stop's signal like any instance.
 */
static gboolean daemon_now(struct adopt *a, struct adopted *d)
{
	struct proc_stat st;

	return proc_stat_at(a->proc_root, d->f->pid, &st, NULL) &&
	       st.session == d->f->pid &&
	       proc_same_process_at(a->proc_root, d->f->pid, d->f->start_time);
}

static gboolean on_spared_check(gpointer data)
{
	struct adopt *a = data;
	gboolean waiting = FALSE;

	for (guint i = 0; i < a->adopted->len; i++) {
		struct adopted *d = g_ptr_array_index(a->adopted, i);
		g_autofree gchar *what = NULL;

		if (!d->launcher || !d->spared)
			continue;
		if (!daemon_now(a, d)) {
			waiting = TRUE;
			continue;
		}
		d->launcher = FALSE;
		g_ptr_array_add(a->instances, d->f);
		what = foreign_describe(d->f);
		log_notice("the wrapper stops: so does %s (%s); it replaced "
			   "ours", what, signal_name(a->stop_sig));
		signal_one(a, d, a->stop_sig);
	}
	if (waiting)
		return G_SOURCE_CONTINUE;
	a->spared_timer = 0;
	return G_SOURCE_REMOVE;
}

static void watch_spared(struct adopt *a)
{
	if (!a->spared_timer)
		a->spared_timer = g_timeout_add(SEARCH_POLL_MS,
						on_spared_check, a);
}

/*
 * A launcher still loading by hand handles no signal yet: SIGUSR1 would
 * kill it, and nothing of it serves, so a graceful stop leaves it alone;
 * once it exits, the daemon it started gets the stop's signal
 * (on_adopted_exit). A hard stop ends it: nothing to drain.
 */
static gboolean spare_launcher(struct adopted *d, int sig)
{
	if (!d->launcher || sig != SIGUSR1)
		return FALSE;
	if (!d->spared)
		log_notice("haproxy pid %d, a launcher still loading by hand, "
			   "is not signalled: once it exits, the daemon it "
			   "started gets %s", d->f->pid, signal_name(sig));
	d->spared = TRUE;
	watch_spared(d->a);
	return TRUE;
}

static void signal_adopted(struct adopt *a, int sig, gboolean retiring)
{
	for (guint i = 0; i < a->adopted->len; i++) {
		struct adopted *d = g_ptr_array_index(a->adopted, i);

		/* A launcher's daemon is retired once found. */
		if (retiring && (d->leaving || d->launcher))
			continue;
		d->leaving = d->leaving || retiring;
		if (!retiring && spare_launcher(d, sig))
			continue;
		signal_one(a, d, sig);
	}
}

/* The wrapper stops: f, found by a last look, replaced ours. Watched,
 * and the stop's signal through the pidfd just verified. */
static void stop_found(struct adopt *a, struct foreign *f)
{
	g_autofree gchar *what = foreign_describe(f);
	int sig = a->stop_sig;
	struct adopted *d = watch_one(a, f);

	if (!d)
		return;
	if (spare_launcher(d, sig))
		return;
	if (d->launcher)
		log_notice("the wrapper stops: so does haproxy pid %d, a "
			   "launcher still loading by hand (%s)", d->f->pid,
			   signal_name(sig));
	else
		log_notice("the wrapper stops: so does %s (%s); it replaced "
			   "ours", what, signal_name(sig));
	signal_one(a, d, sig);
}

/* A stop ended a search (or a launcher awaited meanwhile exited): what
 * replaced ours is there now, ready or not, and stops with the wrapper
 * instead of serving on unsupervised. */
static void last_look(struct adopt *a)
{
	g_autoptr(GPtrArray) found = NULL;
	gboolean none;

	found = look(a, TRUE, &none);
	if (!found)
		return;
	take_new(a, found);
	for (guint i = 0; i < found->len; i++)
		stop_found(a, g_ptr_array_index(found, i));
}

void adopt_retire(struct adopt *a, int sig)
{
	if (!adopt_serving(a))
		return;
	promote_daemons(a);
	a->serving = FALSE;
	signal_adopted(a, sig, TRUE);
}

void adopt_stop(struct adopt *a, int sig)
{
	gboolean searching;

	if (!a)
		return;
	searching = a->timer != 0;
	a->stop_sig = sig;
	search_end(a);
	signal_adopted(a, sig, FALSE);
	if (searching)
		last_look(a);
}

void adopt_taken_over(struct adopt *a, struct foreign *f, int pidfd)
{
	struct adopted *d;

	if (already_adopted(a, f)) {
		close(pidfd);
		foreign_free(f);
		return;
	}
	d = watch_pidfd(a, f, pidfd);
	d->leaving = TRUE;
	d->taken_over = TRUE;
	/* Handed over while the wrapper stops: it stops with the rest. */
	if (a->stop_sig)
		signal_one(a, d, a->stop_sig);
}

void adopt_free(struct adopt *a)
{
	if (!a)
		return;
	search_end(a);
	g_clear_handle_id(&a->spared_timer, g_source_remove);
	g_ptr_array_unref(a->instances);
	g_ptr_array_unref(a->adopted);
	g_free(a->proc_root);
	g_free(a->pidfile);
	g_free(a->fragment);
	g_strfreev(a->configs);
	g_free(a);
}
