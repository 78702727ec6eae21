/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Master-worker mode behind the wrapper: the generation is a haproxy
 * master (-Ws) that reloads itself in place on SIGUSR2. The wrapper keeps
 * the stable pid, the status and the synchronous reload: it signals the
 * master, and takes the verdict from what the master says on a private
 * NOTIFY_SOCKET and, where that says too little (haproxy < 2.7), from the
 * master's children: a load that worked started a new worker.
 */
#include "wrapper/supervisor-int.h"

#include "wrapper/mwnotify.h"

/* A 2.5+ master re-executes itself after every load; a SIGUSR2 that came
 * before its new image installs handlers would kill it. */
#define SETTLE_POLL_MS 10
#define SETTLE_LIMIT_MS 5000

/* The pids of now not in before. */
static GArray *pids_minus(const GArray *now, const GArray *before)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < now->len; i++) {
		GPid pid = g_array_index(now, GPid, i);

		if (!proc_pids_contain(before, pid))
			g_array_append_val(out, pid);
	}
	return out;
}

gchar *sv_pids_text(const GArray *pids)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < pids->len; i++)
		g_string_append_printf(s, "%s%d", i ? " " : "",
				       g_array_index(pids, GPid, i));
	return g_string_free(s, FALSE);
}

static struct generation *master_of(struct supervisor *s, GPid sender)
{
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		if (g->mode == LAUNCH_MW && !g->exited && g->pid == sender)
			return g;
	}
	return NULL;
}

static void stop_waiting(struct supervisor *s)
{
	g_clear_handle_id(&s->mw_settle_timer, g_source_remove);
	g_clear_pointer(&s->mw_before, g_array_unref);
}

/* ---- the workers a reload supersedes ---- */

static gboolean on_cohort_deadline(gpointer data)
{
	struct worker_cohort *c = data;
	g_autofree gchar *pids = sv_pids_text(c->pids);

	c->drain_timer = 0;
	log_notice("workers %s of generation %u still draining after their "
		   "deadline; SIGTERM", pids, c->master->number);
	cohort_signal(c, SIGTERM);
	c->terminated = TRUE;
	return G_SOURCE_REMOVE;
}

static void retire_workers(struct supervisor *s, struct generation *g,
			   gboolean hard)
{
	struct worker_cohort *c;

	if (g->workers->len == 0)
		return;
	c = g_new0(struct worker_cohort, 1);
	*c = (struct worker_cohort){
		.master = g,
		.pids = g_steal_pointer(&g->workers),
		.since_us = g_get_real_time(),
	};
	g->workers = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_ptr_array_add(g->cohorts, c);
	if (hard) {
		cohort_signal(c, SIGTERM);
		c->terminated = TRUE;
	} else if (s->opts->drain_timeout_s) {
		c->drain_timer = g_timeout_add_seconds(s->opts->drain_timeout_s,
						       on_cohort_deadline, c);
	}
}

/* ---- a reload's verdict ---- */

static void reload_loaded(struct supervisor *s, struct generation *g,
			  GArray *fresh)
{
	g_autofree gchar *pids = sv_pids_text(fresh);
	g_autofree gchar *msg = NULL;
	struct log_event ev;

	stop_waiting(s);
	generation_prune_cohorts(g);
	retire_workers(s, g, reloader_hard(s->reloader));
	g_array_append_vals(g->workers, fresh->data, fresh->len);
	/* The master re-executes its own binary: the version the wrapper
	 * found is the one it runs when both are the same file. */
	g_strlcpy(g->version, s->mw_version, sizeof(g->version));
	sv_bound_draining(s);
	failed_generation_clear(&s->failed);
	ev = sv_event(s, MSGID_RELOAD_OK, g->number, g->pid, "ok");
	wlog_event(&ev, LOG_NOTICE, "generation %u reloaded: master pid %d, "
		   "workers %s, haproxy %s", g->number, g->pid, pids,
		   g->version);
	msg = g_strdup_printf("generation %u (master pid %d) serving with "
			      "workers %s", g->number, g->pid, pids);
	sv_post(s, RE_READY, &(struct reload_input){ .message = msg });
}

static void reload_verdict(struct supervisor *s, struct generation *g,
			   enum mw_verdict verdict, const char *status)
{
	g_autoptr(GArray) now = proc_children(g->pid);
	g_autoptr(GArray) fresh = pids_minus(now, s->mw_before);

	if (verdict == MW_VERDICT_ASK_WORKERS)
		verdict = fresh->len ? MW_VERDICT_LOADED : MW_VERDICT_FAILED;
	if (verdict == MW_VERDICT_LOADED && fresh->len) {
		reload_loaded(s, g, fresh);
		return;
	}
	stop_waiting(s);
	if (verdict == MW_VERDICT_LOADED)
		sv_launch_failed(s, 1, "the haproxy master says \"%s\" but "
				 "has no new worker", status);
	else
		sv_launch_failed(s, 1, "the haproxy master did not load the "
				 "new configuration (%s)",
				 status ? status : "it started no new worker");
}

/* A master reloaded by someone else (a SIGUSR2 straight to it): follow. */
static void reloaded_behind_our_back(struct supervisor *s,
				     struct generation *g)
{
	g_autoptr(GArray) now = proc_children(g->pid);
	g_autoptr(GArray) fresh = NULL;
	g_autofree gchar *pids = NULL;

	generation_prune_cohorts(g);
	fresh = pids_minus(now, g->workers);
	for (guint i = 0; i < g->cohorts->len; i++) {
		struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);
		g_autoptr(GArray) rest = pids_minus(fresh, c->pids);

		g_array_set_size(fresh, 0);
		g_array_append_vals(fresh, rest->data, rest->len);
	}
	if (fresh->len == 0)
		return;
	pids = sv_pids_text(fresh);
	log_notice("the haproxy master (pid %d) was reloaded without us; "
		   "its workers are now %s", g->pid, pids);
	retire_workers(s, g, FALSE);
	g_array_append_vals(g->workers, fresh->data, fresh->len);
	sv_bound_draining(s);
}

static void master_ready(struct supervisor *s, struct generation *g,
			 enum mw_verdict verdict, const char *status)
{
	g_autoptr(GArray) workers = NULL;

	if (verdict == MW_VERDICT_FAILED) {
		/* Not seen on a first load, which fails by exiting. */
		log_warn("generation %u (pid %d) says \"%s\"", g->number,
			 g->pid, status);
		return;
	}
	workers = proc_children(g->pid);
	g_array_append_vals(g->workers, workers->data, workers->len);
	sv_generation_ready(s, g);
}

static void on_master_message(const struct mw_message *m, GPid sender,
			      gpointer data)
{
	struct supervisor *s = data;
	struct generation *g = master_of(s, sender);
	enum mw_verdict verdict = mw_message_verdict(m);
	gboolean ours;

	if (!g) {
		log_debug("notify socket: ignoring pid %d, not a master of ours",
			  sender);
		return;
	}
	if (m->stopping)
		log_info("generation %u (pid %d) is stopping", g->number,
			 g->pid);
	/* Our SIGUSR2 was sent: its load is the one the verdict is about. */
	ours = g == s->current &&
	       reloader_state(s->reloader) == RS_MASTER_VERDICT;
	if (ours && m->reloading)
		s->mw_reloading_seen = TRUE;
	if (verdict == MW_VERDICT_NONE)
		return;
	if (g == s->starting)
		master_ready(s, g, verdict, m->status);
	else if (ours && s->mw_reloading_seen)
		reload_verdict(s, g, verdict, m->status);
	else if (ours)
		/* The end of a load from before our SIGUSR2 (one whose
		 * verdict timed out): ours is still to come. */
		log_debug("generation %u: an earlier load ended", g->number);
	else if (g == s->current)
		reloaded_behind_our_back(s, g);
}

/* ---- the notify socket ---- */

const char *sv_master_notify_socket(struct supervisor *s, GError **error)
{
	g_autofree gchar *path = NULL;

	if (s->mw_notify)
		return mw_notify_path(s->mw_notify);
	if (!s->rundir_ours) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "no runtime directory of our own for its notify "
			    "socket");
		return NULL;
	}
	path = rundir_notify_socket(s->rundir);
	s->mw_notify = mw_notify_listen(path, on_master_message, s, error);
	return s->mw_notify ? mw_notify_path(s->mw_notify) : NULL;
}

gboolean sv_master_adopt_notify(struct supervisor *s, int fd)
{
	g_autofree gchar *path = NULL;

	if (!s->rundir)
		return FALSE;
	path = rundir_notify_socket(s->rundir);
	s->mw_notify = mw_notify_adopt(fd, path, on_master_message, s);
	return s->mw_notify != NULL;
}

gboolean sv_master_running(struct supervisor *s)
{
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		if (g->mode == LAUNCH_MW && !g->exited)
			return TRUE;
	}
	return FALSE;
}

int sv_master_handover_fd(struct supervisor *s)
{
	if (!s->mw_notify || !sv_master_running(s))
		return -1;
	return mw_notify_handover_fd(s->mw_notify);
}

void sv_master_reclaim_fd(struct supervisor *s)
{
	if (s->mw_notify)
		mw_notify_reclaim_fd(s->mw_notify);
}

gboolean sv_master_notify_fd_is_ours(struct supervisor *s, int fd)
{
	g_autofree gchar *path = NULL;

	if (!s->rundir)
		return FALSE;
	path = rundir_notify_socket(s->rundir);
	return mw_notify_fd_is(fd, path);
}

void sv_master_free(struct supervisor *s)
{
	stop_waiting(s);
	g_clear_pointer(&s->mw_notify, mw_notify_free);
}

/* ---- a reload: SIGUSR2 once the master can take it ---- */

static void send_reload(struct supervisor *s, struct generation *g)
{
	gboolean sent;
	int saved;

	/* Before the signal: the new worker may be forked at once. */
	g_clear_pointer(&s->mw_before, g_array_unref);
	s->mw_before = proc_children(g->pid);
	s->mw_reloading_seen = FALSE;
	log_debug("SIGUSR2 -> %d.", g->pid);
	sent = generation_signal_child(g->pid, SIGUSR2);
	saved = errno;
	if (!sent) {
		stop_waiting(s);
		sv_launch_failed(s, 1, "cannot signal the haproxy master "
				 "(pid %d): %s", g->pid, g_strerror(saved));
		return;
	}
	sv_post(s, RE_SIGNALLED, NULL);
}

static gboolean on_settle_poll(gpointer data)
{
	struct supervisor *s = data;
	struct generation *g = s->current;

	if (proc_catches_signal_at("/proc", g->pid, SIGUSR2)) {
		s->mw_settle_timer = 0;
		send_reload(s, g);
		return G_SOURCE_REMOVE;
	}
	if (g_get_monotonic_time() < s->mw_settle_deadline)
		return G_SOURCE_CONTINUE;
	s->mw_settle_timer = 0;
	stop_waiting(s);
	sv_launch_failed(s, 1, "the haproxy master (pid %d) has not handled "
			 "SIGUSR2 for %d ms", g->pid, SETTLE_LIMIT_MS);
	return G_SOURCE_REMOVE;
}

void sv_master_reload(struct supervisor *s, const struct haproxy_version *v)
{
	struct generation *g = s->current;

	g_strlcpy(s->mw_version, v->full, sizeof(s->mw_version));
	if (proc_catches_signal_at("/proc", g->pid, SIGUSR2)) {
		send_reload(s, g);
		return;
	}
	/* Waiting counts as loading: mw_before marks the reload as ours. */
	s->mw_before = g_array_new(FALSE, FALSE, sizeof(GPid));
	s->mw_settle_deadline = g_get_monotonic_time() +
				SETTLE_LIMIT_MS * 1000LL;
	s->mw_settle_timer = g_timeout_add(SETTLE_POLL_MS, on_settle_poll, s);
}

/* The reload ended another way (timeout, stop, the master's exit). */
void sv_master_abandon(struct supervisor *s)
{
	stop_waiting(s);
}
