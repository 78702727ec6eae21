/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/takeover.h"

#include <errno.h>
#include <glib-unix.h>
#include <signal.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"
#include "migrate/cmdline.h"
#include "migrate/find.h"

/* A master (haproxy 2.5 and later) re-executes itself after each load and
 * may lose a signal meanwhile; how often, and how long, to wait for every
 * instance found to handle SIGUSR1. */
#define SETTLE_POLL_MS 20
#define SETTLE_LIMIT_MS 10000

struct watched {
	struct takeover *t;
	struct foreign *f;
	int pidfd;
	guint source;
};

struct takeover {
	GPtrArray *found;	/* struct foreign *, alive */
	guint taken;		/* all found, even gone since: the metric */
	GPtrArray *watches;	/* struct watched * */
	takeover_fn settled;
	gpointer data;
	guint timer;
	gint64 deadline;
};

static void watched_free(struct watched *w)
{
	if (w->source)
		g_source_remove(w->source);
	if (w->pidfd >= 0)
		close(w->pidfd);
	g_free(w);
}

static gboolean on_gone(int fd, GIOCondition cond, gpointer data)
{
	struct watched *w = data;
	struct takeover *t = w->t;

	log_notice("foreign haproxy pid %d (%s) has exited", w->f->pid,
		   foreign_kind_name(w->f->kind));
	w->source = 0;
	g_ptr_array_remove(t->found, w->f);
	g_ptr_array_remove(t->watches, w);
	return G_SOURCE_REMOVE;
}

/* A pidfd becomes readable when its process exits, child or not. */
static void watch(struct takeover *t, struct foreign *f)
{
	struct watched *w = g_new0(struct watched, 1);

	*w = (struct watched){
		.t = t, .f = f,
		.pidfd = proc_open_if_same_at(PROC_ROOT, f->pid, f->start_time),
	};
	if (w->pidfd < 0) {
		watched_free(w);
		return;
	}
	w->source = g_unix_fd_add(w->pidfd, G_IO_IN, on_gone, w);
	g_ptr_array_add(t->watches, w);
}

void foreign_log_skipped(const GPtrArray *skipped)
{
	for (guint i = 0; skipped && i < skipped->len; i++) {
		struct foreign_skip *k = g_ptr_array_index((GPtrArray *)skipped,
							   i);

		/* A stale pidfile's pid: nothing was there to take. */
		if (k->gone)
			continue;
		if (k->pid)
			log_notice("not taking over pid %d: %s", k->pid,
				   k->reason);
		else
			log_notice("pidfile: %s", k->reason);
	}
}

static void log_findings(GPtrArray *found, GPtrArray *skipped)
{
	foreign_log_skipped(skipped);
	for (guint i = 0; i < found->len; i++) {
		struct foreign *f = g_ptr_array_index(found, i);
		g_autofree gchar *what = foreign_describe(f);
		struct log_event ev = { .message_id = MSGID_TAKEOVER,
					.pid = f->pid };

		wlog_event(&ev, LOG_NOTICE, "taking over %s", what);
	}
}

static gboolean all_settled(struct takeover *t)
{
	for (guint i = 0; i < t->found->len; i++)
		if (!foreign_settled(PROC_ROOT, g_ptr_array_index(t->found, i)))
			return FALSE;
	return TRUE;
}

static gboolean on_poll(gpointer data)
{
	struct takeover *t = data;

	if (!all_settled(t) && g_get_monotonic_time() < t->deadline)
		return G_SOURCE_CONTINUE;
	if (!all_settled(t))
		log_warn("a foreign haproxy does not handle SIGUSR1 yet after "
			 "%d ms; taking over anyway", SETTLE_LIMIT_MS);
	t->timer = 0;
	t->settled(t->data);
	return G_SOURCE_REMOVE;
}

/* An instance that started after us is a restart by hand, which the
 * adoption of a replacement handles, not the takeover. */
static void drop_newer(GPtrArray *found, guint64 started_before)
{
	for (guint i = 0; started_before && i < found->len;) {
		struct foreign *f = g_ptr_array_index(found, i);

		if (f->start_time <= started_before) {
			i++;
			continue;
		}
		log_info("not taking over pid %d: it started after this "
			 "wrapper", f->pid);
		g_ptr_array_remove_index(found, i);
	}
}

struct takeover *takeover_begin(const char *pidfile, const char *const *argv,
				const char *cwd, const char *fragment,
				guint64 started_before, takeover_fn settled,
				gpointer data)
{
	struct takeover *t = g_new0(struct takeover, 1);
	g_autoptr(GPtrArray) skipped = NULL;
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) configs = foreign_argv_config_files(argv, cwd, FALSE);

	t->settled = settled;
	t->data = data;
	t->watches = g_ptr_array_new_with_free_func((GDestroyNotify)watched_free);
	if (!find_foreign(PROC_ROOT, pidfile, (const char *const *)configs,
			  fragment, getpid(), &t->found, &skipped, &error)) {
		log_warn("cannot look for foreign haproxy instances: %s",
			 error->message);
		t->found = g_ptr_array_new_with_free_func(
			(GDestroyNotify)foreign_free);
	}
	drop_newer(t->found, started_before);
	log_findings(t->found, skipped);
	t->taken = t->found->len;
	for (guint i = 0; i < t->found->len; i++)
		watch(t, g_ptr_array_index(t->found, i));
	t->deadline = g_get_monotonic_time() + SETTLE_LIMIT_MS * 1000LL;
	/* Even "nothing found" is told from the main loop, as every later
	 * outcome is, never from inside this call. */
	t->timer = g_timeout_add(t->found->len ? SETTLE_POLL_MS : 0, on_poll, t);
	return t;
}

typedef void (*target_fn)(const char *proc_root, GPid pid,
			  guint64 start_time, gpointer data);

/*
 * Who takes haproxy's -sf signals: the standalone process; the -Ds
 * parent's workers (the parent swallows them); the master and its
 * workers (masters before 2.2 do not forward SIGTTOU/SIGTTIN, and a
 * second SIGUSR1 to a worker is harmless).
 */
static void each_sf_target(const char *proc_root, const GPtrArray *instances,
			   target_fn fn, gpointer data)
{
	for (guint i = 0; i < instances->len; i++) {
		struct foreign *f = g_ptr_array_index((GPtrArray *)instances, i);

		if (f->kind != FOREIGN_DS_PARENT)
			fn(proc_root, f->pid, f->start_time, data);
		if (f->kind == FOREIGN_STANDALONE)
			continue;
		for (guint w = 0; w < f->workers->len; w++)
			fn(proc_root, g_array_index(f->workers, GPid, w),
			   g_array_index(f->worker_start_times, guint64, w),
			   data);
	}
}

static void add_if_same(const char *proc_root, GPid pid, guint64 start_time,
			gpointer data)
{
	GArray *pids = data;

	if (proc_same_process_at(proc_root, pid, start_time))
		g_array_append_val(pids, pid);
	else
		log_notice("pid %d is gone or is another process now; not "
			   "listed for -sf", pid);
}

GArray *foreign_sf_targets_at(const char *proc_root,
			      const GPtrArray *instances)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	each_sf_target(proc_root, instances, add_if_same, pids);
	return pids;
}

/* SIGUSR1 through a pidfd that names the process found, never a bare pid. */
static void soft_stop_if_same(const char *proc_root, GPid pid,
			      guint64 start_time, gpointer data)
{
	int fd = proc_open_if_same_at(proc_root, pid, start_time);

	if (fd < 0) {
		log_notice("pid %d is gone or is another process now; not "
			   "signalled", pid);
		return;
	}
	if (!proc_pidfd_signal(fd, SIGUSR1))
		log_warn("cannot send SIGUSR1 to foreign haproxy pid %d: %s",
			 pid, g_strerror(errno));
	else
		log_notice("SIGUSR1 -> foreign haproxy pid %d: soft stop", pid);
	close(fd);
}

void takeover_soft_stop(struct takeover *t)
{
	each_sf_target(PROC_ROOT, t->found, soft_stop_if_same, NULL);
}

GArray *takeover_targets(struct takeover *t)
{
	return foreign_sf_targets_at(PROC_ROOT, t->found);
}

const GPtrArray *takeover_instances(struct takeover *t)
{
	return t->found;
}

guint takeover_taken(const struct takeover *t)
{
	return t->taken;
}

void takeover_hand_over(struct takeover *t, takeover_row_fn fn,
			gpointer data)
{
	/* What a watch names moves; what none does (gone) is freed. */
	for (guint i = 0; i < t->watches->len; i++) {
		struct watched *w = g_ptr_array_index(t->watches, i);
		guint at;

		if (!g_ptr_array_find(t->found, w->f, &at))
			continue;
		g_ptr_array_steal_index(t->found, at);
		fn(w->f, w->pidfd, data);
		w->pidfd = -1;
	}
	g_ptr_array_remove_range(t->watches, 0, t->watches->len);
	g_ptr_array_remove_range(t->found, 0, t->found->len);
}

void takeover_cancel(struct takeover *t)
{
	g_clear_handle_id(&t->timer, g_source_remove);
}

void takeover_free(struct takeover *t)
{
	if (!t)
		return;
	takeover_cancel(t);
	g_ptr_array_unref(t->watches);
	g_ptr_array_unref(t->found);
	g_free(t);
}
