/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload machine's effects (wrapper/reloader.h decides, this file
 * acts): locate and probe haproxy, spawn a generation or reload a master,
 * make the new one serve; and the bounds on generations still draining. */
#include "wrapper/supervisor-int.h"

#include <poll.h>
#include <sys/pidfd.h>

/* ---- the reload machine's effects (wrapper/reloader.h) ---- */

void sv_post(struct supervisor *s, enum reload_event ev,
	     const struct reload_input *in)
{
	reloader_post(s->reloader, ev, in);
}

struct log_event sv_event(struct supervisor *s, const char *message_id,
			  guint number, GPid pid, const char *result)
{
	return (struct log_event){
		.message_id = message_id,
		.generation = number,
		.pid = pid,
		.result = result,
		.duration_us = g_get_monotonic_time() -
			       reloader_started_us(s->reloader),
	};
}

void sv_launch_failed(struct supervisor *s, int exit_code,
			  const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	sv_post(s, RE_FAILED, &(struct reload_input){ .exit_code = exit_code,
						      .message = msg });
}

static void log_failure(void *ctx, enum reload_failure how, const char *msg)
{
	struct supervisor *s = ctx;
	struct log_event ev = sv_event(s, MSGID_RELOAD_FAILED, 0, 0, "failed");

	switch (how) {
	case FAILURE_FIRST_START:
		wlog_event(&ev, LOG_ERR, "cannot start haproxy: %s", msg);
		break;
	case FAILURE_REPLACED:
		wlog_event(&ev, LOG_ERR, "reload failed: %s; looking for a "
			   "haproxy that replaced generation %u", msg,
			   s->replaced.number);
		break;
	case FAILURE_NONE_SERVING:
		wlog_event(&ev, LOG_ERR, "reload failed: %s; and no generation "
			   "is serving: stopping", msg);
		break;
	case FAILURE_KEPT:
		if (!s->gt.current) {
			wlog_event(&ev, LOG_ERR, "reload failed: %s; the adopted "
				   "haproxy keeps serving", msg);
			break;
		}
		ev = sv_event(s, MSGID_RELOAD_FAILED, s->gt.current->number,
			      s->gt.current->pid, "failed");
		wlog_event(&ev, LOG_ERR, "reload failed: %s; generation %u "
			   "(pid %d) keeps serving", msg, s->gt.current->number,
			   s->gt.current->pid);
		break;
	}
}

static void stop_service(void *ctx, int exit_code)
{
	struct supervisor *s = ctx;

	sv_set_exit_code(s, exit_code);
	sv_begin_stop(s, SIGTERM);
}

static gboolean searching(void *ctx)
{
	struct supervisor *s = ctx;

	return adopt_searching(s->adopt);
}

static gboolean adopted_serving(void *ctx)
{
	struct supervisor *s = ctx;

	return adopt_serving(s->adopt);
}

static void search(void *ctx, gboolean quick)
{
	sv_search_replacement(ctx, quick);
}

static void notify_reloading_now(void *ctx)
{
	g_autofree gchar *line = sv_summary(ctx);

	notify_reloading(line);
}

static void notify_ready_now(void *ctx)
{
	g_autofree gchar *line = sv_summary(ctx);

	notify_ready(line);
}

static void answer(void *ctx, struct control_client *c, const char *text)
{
	control_reply(c, text);
}

static void end_attempt(void *ctx)
{
	struct supervisor *s = ctx;

	g_clear_handle_id(&s->extend_timer, g_source_remove);
	g_clear_handle_id(&s->ready_timer, g_source_remove);
	g_clear_pointer(&s->haproxy_path, g_free);
	master_link_abandon(s->master);
}

static gboolean run_pending_reload(gpointer data)
{
	struct supervisor *s = data;

	s->pending_idle = 0;
	sv_post(s, RE_RUN_PENDING, NULL);
	return G_SOURCE_REMOVE;
}

static void schedule_pending(void *ctx)
{
	struct supervisor *s = ctx;

	if (!s->pending_idle)
		s->pending_idle = g_idle_add(run_pending_reload, s);
}

static void abandon_handoff(void *ctx)
{
	sv_handoff_abandon(ctx);
}

/* ---- bounded draining ---- */

static gboolean on_drain_deadline(gpointer data)
{
	struct generation *g = data;

	g->drain_timer = 0;
	log_notice("generation %u (pid %d) still draining after its deadline; "
		   "SIGTERM", g->number, g->pid);
	generation_signal(g, SIGTERM, TRUE);
	return G_SOURCE_REMOVE;
}

static void start_drain_clock(struct supervisor *s, struct generation *g)
{
	if (s->opts->drain_timeout_s && !g->drain_timer)
		g->drain_timer = g_timeout_add_seconds(s->opts->drain_timeout_s,
						       on_drain_deadline, g);
}

/* A master's superseded workers count as old generations too. */
static guint master_cohorts_draining(struct generation *g)
{
	guint n = 0;

	for (guint i = 0; i < g->cohorts->len; i++) {
		struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);

		n += !c->terminated;
	}
	return n;
}

/* The oldest draining cohorts of the masters go first: they are older
 * than any generation started since (the masters came before them). */
static guint bound_master_cohorts(struct supervisor *s, guint draining)
{
	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		for (guint j = 0; j < g->cohorts->len &&
				  draining > (guint)s->opts->max_old_workers;
		     j++) {
			struct worker_cohort *c =
				g_ptr_array_index(g->cohorts, j);
			g_autofree gchar *pids = NULL;

			if (c->terminated)
				continue;
			pids = pids_text(c->pids);
			log_notice("more than %d old generation(s) draining: "
				   "SIGTERM to workers %s of generation %u",
				   s->opts->max_old_workers, pids, g->number);
			cohort_signal(c, SIGTERM);
			c->terminated = TRUE;
			draining--;
		}
	}
	return draining;
}

/* More than max-old-workers generations draining: the oldest go now. */
void sv_bound_draining(struct supervisor *s)
{
	guint draining = 0;

	if (s->opts->max_old_workers < 0)
		return;
	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		generation_prune_cohorts(g);
		draining += master_cohorts_draining(g);
		if (g->state == GEN_DRAINING && !g->terminated)
			draining++;
	}
	draining = bound_master_cohorts(s, draining);
	for (guint i = 0; i < s->gt.gens->len &&
			  draining > (guint)s->opts->max_old_workers; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		if (g->state != GEN_DRAINING || g->terminated)
			continue;
		log_notice("more than %d old generation(s) draining: SIGTERM "
			   "to generation %u (pid %d)", s->opts->max_old_workers,
			   g->number, g->pid);
		generation_signal(g, SIGTERM, TRUE);
		g->terminated = TRUE;
		draining--;
	}
}

/*
 * With -x the old generation holds the very sockets the new one took over
 * and accepts on them until it has acted on its soft stop, which was sent
 * together with the witness's signal. Wait for it to let go, bounded and
 * only during a reload, so that a reload reported done means that new
 * connections reach the new configuration. If it cannot be told (no
 * pidfd_getfd), the verdict comes as it would without -x.
 */
#define RELEASE_LIMIT_MS 200

static void wait_listeners_released(struct generation *old,
				    struct generation *g)
{
	g_autoptr(GHashTable) inodes = NULL;
	gint64 deadline = g_get_monotonic_time() + RELEASE_LIMIT_MS * 1000LL;
	int pidfd;

	/* A reaped pid may already be someone else's: never look at it. */
	if (!g->took_listeners || old->mode != LAUNCH_DB || old->exited ||
	    g->exited)
		return;
	inodes = proc_listening_inodes(g->pid);
	if (!inodes || g_hash_table_size(inodes) == 0)
		return;
	pidfd = pidfd_open(old->pid, 0);
	if (pidfd < 0)
		return;
	while (proc_holds_any_socket(old->pid, inodes)) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		if (g_get_monotonic_time() >= deadline) {
			log_debug("generation %u (pid %d) still holds its "
				  "listeners after %d ms", old->number,
				  old->pid, RELEASE_LIMIT_MS);
			break;
		}
		/* Woken at once if it exits. */
		poll(&p, 1, 1);
	}
	close(pidfd);
}

/*
 * haproxy can lose the -sf signal it gets from its successor [observed
 * 2.4.0, an old generation started under a second before]: it then
 * serves on, holding its listeners, and never drains. A generation that
 * still listens this long after its successor is ready gets the signal
 * again, from us, once. A soft-stopping haproxy closes every listener
 * (stats sockets too) at once, so listening means it has not acted.
 */
#define STOP_CHECK_MS 1000

static gboolean still_listens(GPid pid)
{
	g_autoptr(GHashTable) inodes = proc_listening_inodes(pid);

	return inodes && g_hash_table_size(inodes) > 0;
}

/* The -db process, or any of the -Ds parent's workers. */
static gboolean generation_listens(const struct generation *g)
{
	g_autoptr(GArray) workers = NULL;

	if (g->mode == LAUNCH_DB)
		return still_listens(g->pid);
	workers = proc_children(g->pid);
	for (guint i = 0; i < workers->len; i++)
		if (still_listens(g_array_index(workers, GPid, i)))
			return TRUE;
	return FALSE;
}

static gboolean on_stop_check(gpointer data)
{
	struct generation *g = data;

	g->stop_check_timer = 0;
	if (g->exited || g->terminated || !generation_listens(g))
		return G_SOURCE_REMOVE;
	log_warn("generation %u (pid %d) still listens %d ms after its "
		 "successor was ready: its stop signal was lost; sending %s "
		 "again", g->number, g->pid, STOP_CHECK_MS,
		 signal_name(g->stop_signal));
	generation_signal(g, g->stop_signal, TRUE);
	return G_SOURCE_REMOVE;
}

static void start_stop_check(struct supervisor *s, struct generation *old)
{
	/* A master soft-stops its own workers: not ours to check. */
	if (old->mode == LAUNCH_MW || old->exited || old->stop_check_timer)
		return;
	old->stop_signal = reloader_hard(s->reloader) ? SIGTERM : SIGUSR1;
	old->stop_check_timer = g_timeout_add(STOP_CHECK_MS, on_stop_check,
					      old);
}

void sv_retire_adopted(struct supervisor *s)
{
	int sig = reloader_hard(s->reloader) ? SIGTERM : SIGUSR1;

	if (!adopt_serving(s->adopt))
		return;
	log_notice("generation %u serves; the haproxy restarted by hand "
		   "during its reload leaves (%s)", s->gt.current->number,
		   signal_name(sig));
	adopt_retire(s->adopt, sig);
}

void sv_generation_ready(struct supervisor *s, struct generation *g)
{
	struct generation *old = s->gt.current;
	struct log_event ev;

	witness_stop(&g->witness);
	g->state = GEN_CURRENT;
	gen_table_set_serving(&s->gt, g);
	/* Its predecessor ended during its start: from its -sf, or from a
	 * restart by hand that it must not serve next to. */
	sv_post(s, RE_SERVING, NULL);
	/* Started with their pids after -sf: they leave now; any found
	 * since (a launcher's daemon) is told to. */
	if (g->sf_adopted)
		adopt_superseded(s->adopt);
	sv_retire_adopted(s);
	if (old) {
		wait_listeners_released(old, g);
		old->state = GEN_DRAINING;
		old->draining_since_us = g_get_real_time();
		/* A -Ds parent may have forked workers after we listed them
		 * for -sf; a second SIGUSR1 to the others is harmless. */
		if (old->mode == LAUNCH_DS && !reloader_hard(s->reloader))
			generation_signal(old, SIGUSR1, FALSE);
		start_drain_clock(s, old);
		start_stop_check(s, old);
	}
	sv_bound_draining(s);
	sv_pidfile_publish(s, g);
	failed_generation_clear(&s->gt.failed);
	ev = sv_event(s, MSGID_RELOAD_OK, g->number, g->pid, "ok");
	if (g->mode == LAUNCH_MW) {
		g_autofree gchar *workers = pids_text(g->workers);

		wlog_event(&ev, LOG_NOTICE, "generation %u ready: master pid "
			   "%d, workers %s, haproxy %s", g->number, g->pid,
			   workers, g->version);
	} else {
		wlog_event(&ev, LOG_NOTICE, "generation %u ready: pid %d, "
			   "haproxy %s", g->number, g->pid, g->version);
	}
	if (s->life.phase == PHASE_STARTING && s->takeover)
		s->takeovers = takeover_instances(s->takeover)->len;
	if (s->life.phase == PHASE_STARTING)
		sv_set_running(s);
	{
		g_autofree gchar *msg = g_strdup_printf(
			"generation %u (pid %d) serving%s", g->number, g->pid,
			reloader_upgrade_postponed(s->reloader) ?
			"; wrapper upgrade postponed (an adopted haproxy ran): "
			"reload again" : "");

		sv_post(s, RE_READY, &(struct reload_input){ .message = msg });
	}
	reuseport_attach_generation(s->reuseport, g);
}

/* ---- a master reloads itself ---- */

const char *sv_master_notify_socket(struct supervisor *s, GError **error)
{
	return master_link_socket(s->master, s->rt.ours ? s->rt.dir : NULL,
				  error);
}

static struct generation *master_find(void *ctx, GPid pid)
{
	struct supervisor *s = ctx;

	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		if (g->mode == LAUNCH_MW && !g->exited && g->pid == pid)
			return g;
	}
	return NULL;
}

static enum master_role master_role(void *ctx, const struct generation *g)
{
	struct supervisor *s = ctx;

	if (g == s->gt.starting)
		return MASTER_STARTING;
	if (g != s->gt.current)
		return MASTER_OTHER;
	/* Our SIGUSR2 was sent: its load is the one a verdict is about. */
	return reloader_state(s->reloader) == RS_MASTER_VERDICT
	       ? MASTER_RELOADING : MASTER_SERVING;
}

static void master_ready(void *ctx, struct generation *g)
{
	sv_generation_ready(ctx, g);
}

static void master_signalled(void *ctx)
{
	sv_post(ctx, RE_SIGNALLED, NULL);
}

static void master_loaded(void *ctx, struct generation *g,
			  const GArray *fresh)
{
	struct supervisor *s = ctx;
	g_autofree gchar *pids = pids_text(fresh);
	g_autofree gchar *msg = NULL;
	struct log_event ev;

	sv_bound_draining(s);
	failed_generation_clear(&s->gt.failed);
	ev = sv_event(s, MSGID_RELOAD_OK, g->number, g->pid, "ok");
	wlog_event(&ev, LOG_NOTICE, "generation %u reloaded: master pid %d, "
		   "workers %s, haproxy %s", g->number, g->pid, pids,
		   g->version);
	msg = g_strdup_printf("generation %u (master pid %d) serving with "
			      "workers %s", g->number, g->pid, pids);
	sv_post(s, RE_READY, &(struct reload_input){ .message = msg });
}

static void master_failed(void *ctx, const char *msg)
{
	sv_launch_failed(ctx, 1, "%s", msg);
}

static void master_retired(void *ctx)
{
	sv_bound_draining(ctx);
}

const struct master_link_ops sv_master_ops = {
	.find = master_find,
	.role = master_role,
	.ready = master_ready,
	.signalled = master_signalled,
	.loaded = master_loaded,
	.failed = master_failed,
	.retired = master_retired,
};

/* ---- requests ---- */

/* sig: the signal that asked, or 0 for the control socket. client: who
 * waits for the verdict, if anyone. */
void sv_request_reload(struct supervisor *s, int sig, gboolean hard,
		       struct control_client *client)
{
	sv_post(s, RE_REQUEST, &(struct reload_input){
		.signal = sig, .hard = hard, .client = client });
}

const struct reloader_ops sv_reload_ops = {
	.searching = searching,
	.adopted_serving = adopted_serving,
	.upgrade_wanted = sv_upgrade_wanted,
	.notify_reloading = notify_reloading_now,
	.begin_upgrade = sv_begin_upgrade,
	.probe = sv_probe,
	.launch_must_wait = sv_launch_must_wait,
	.launch = sv_launch,
	.kill_loading = sv_kill_loading,
	.master_timeout_text = sv_master_timeout_text,
	.search = search,
	.log_failure = log_failure,
	.stop_service = stop_service,
	.notify_ready = notify_ready_now,
	.answer = answer,
	.end_attempt = end_attempt,
	.schedule_pending = schedule_pending,
	.abandon_handoff = abandon_handoff,
};
