/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reload pipeline: one attempt at a time, from the request to the
 * verdict, and the bounds on generations still draining. */
#include "wrapper/supervisor-int.h"
#include "wrapper/vcache.h"

#include <poll.h>
#include <sys/pidfd.h>

/* ---- the end of a reload, however it ended, and who waits for it ---- */

static gboolean run_pending_reload(gpointer data)
{
	struct supervisor *s = data;

	s->pending_idle = 0;
	if (s->reload_pending && !s->busy && s->phase == PHASE_RUNNING &&
	    !adopt_searching(s->adopt)) {
		s->reload_pending = FALSE;
		sv_begin_reload(s, s->pending_signal, s->pending_hard);
		s->pending_hard = FALSE;
	}
	return G_SOURCE_REMOVE;
}

void sv_run_pending(struct supervisor *s)
{
	/* From the loop, not from inside whichever event ended this one. */
	if (s->reload_pending && !s->pending_idle)
		s->pending_idle = g_idle_add(run_pending_reload, s);
}

/* Answer every client waiting for an attempt up to "upto". */
void sv_answer_waiters(struct supervisor *s, guint upto, const char *text)
{
	for (guint i = 0; i < s->waiters->len;) {
		struct waiter *w = g_ptr_array_index(s->waiters, i);

		if (w->target > upto) {
			i++;
			continue;
		}
		control_reply(w->client, text);
		g_ptr_array_remove_index(s->waiters, i);
	}
}

struct log_event sv_event(struct supervisor *s, const char *message_id,
			  guint number, GPid pid, const char *result)
{
	return (struct log_event){
		.message_id = message_id,
		.generation = number,
		.pid = pid,
		.result = result,
		.duration_us = g_get_monotonic_time() - s->attempt_started_us,
	};
}

static void record_reload(struct supervisor *s, gboolean ok, const char *msg)
{
	gint64 now = g_get_monotonic_time();

	reload_report_clear(&s->last);
	s->last = (struct reload_report){
		.valid = TRUE,
		.ok = ok,
		.message = g_strdup(msg),
		.ended_us = g_get_real_time(),
		.duration_us = now - s->attempt_started_us,
	};
}

void sv_busy_over(struct supervisor *s)
{
	s->busy = FALSE;
	s->skip_upgrade = FALSE;
	s->upgrade_postponed = FALSE;
	g_clear_pointer(&s->upgrade_refused, g_free);
	sv_run_pending(s);
}

void sv_reload_finished(struct supervisor *s, gboolean ok, const char *msg)
{
	/* A refused self-upgrade is told on the verdict's line. */
	g_autofree gchar *answer = g_strdup_printf(
		"%s%s%s%s", ok ? "ok " : "error: ", msg,
		s->upgrade_refused ? "; not upgraded: " : "",
		s->upgrade_refused ? s->upgrade_refused : "");
	g_autofree gchar *line = NULL;

	if (s->attempt > 0)
		record_reload(s, ok, msg);
	line = sv_summary(s);
	/* systemd waits for READY=1 after RELOADING=1, failed or not. */
	if (s->phase != PHASE_STOPPING)
		notify_ready(line);
	sv_answer_waiters(s, s->attempt, answer);
	g_clear_handle_id(&s->extend_timer, g_source_remove);
	g_clear_handle_id(&s->ready_timer, g_source_remove);
	g_clear_pointer(&s->haproxy_path, g_free);
	sv_master_abandon(s);
	sv_busy_over(s);
}

void sv_launch_failed(struct supervisor *s, int exit_code,
			  const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	struct log_event ev;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (s->phase == PHASE_STARTING) {
		g_autofree gchar *answer = g_strdup_printf("error: %s", msg);

		ev = sv_event(s, MSGID_RELOAD_FAILED, 0, 0, "failed");
		wlog_event(&ev, LOG_ERR, "cannot start haproxy: %s", msg);
		sv_set_exit_code(s, exit_code);
		sv_answer_waiters(s, G_MAXUINT, answer);
		sv_begin_stop(s, SIGTERM);
		return;
	}
	if (s->current_lost && s->lost_replaced) {
		/* As if it had ended outside a reload: maybe a restart by
		 * hand; stopping if nothing replaced it. */
		s->reloads_failed++;
		ev = sv_event(s, MSGID_RELOAD_FAILED, 0, 0, "failed");
		wlog_event(&ev, LOG_ERR, "reload failed: %s; looking for a "
			   "haproxy that replaced generation %u", msg,
			   s->replaced.number);
		s->current_lost = FALSE;
		s->lost_replaced = FALSE;
		sv_search_replacement(s, FALSE);
		sv_reload_finished(s, FALSE, msg);
		return;
	}
	if (s->current_lost && !adopt_serving(s->adopt)) {
		ev = sv_event(s, MSGID_RELOAD_FAILED, 0, 0, "failed");
		wlog_event(&ev, LOG_ERR, "reload failed: %s; and no generation "
			   "is serving: stopping", msg);
		sv_set_exit_code(s, sv_lost_exit_code(s->lost_mode, s->lost_status));
		sv_begin_stop(s, SIGTERM);
		return;
	}
	s->reloads_failed++;
	if (s->current) {
		ev = sv_event(s, MSGID_RELOAD_FAILED, s->current->number,
			      s->current->pid, "failed");
		wlog_event(&ev, LOG_ERR, "reload failed: %s; generation %u "
			   "(pid %d) keeps serving", msg, s->current->number,
			   s->current->pid);
	} else {
		ev = sv_event(s, MSGID_RELOAD_FAILED, 0, 0, "failed");
		wlog_event(&ev, LOG_ERR, "reload failed: %s; the adopted "
			   "haproxy keeps serving", msg);
	}
	sv_reload_finished(s, FALSE, msg);
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
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		for (guint j = 0; j < g->cohorts->len &&
				  draining > (guint)s->opts->max_old_workers;
		     j++) {
			struct worker_cohort *c =
				g_ptr_array_index(g->cohorts, j);
			g_autofree gchar *pids = NULL;

			if (c->terminated)
				continue;
			pids = sv_pids_text(c->pids);
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
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		generation_prune_cohorts(g);
		draining += master_cohorts_draining(g);
		if (g->state == GEN_DRAINING && !g->terminated)
			draining++;
	}
	draining = bound_master_cohorts(s, draining);
	for (guint i = 0; i < s->gens->len &&
			  draining > (guint)s->opts->max_old_workers; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

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
	old->stop_signal = s->attempt_hard ? SIGTERM : SIGUSR1;
	old->stop_check_timer = g_timeout_add(STOP_CHECK_MS, on_stop_check,
					      old);
}

void sv_retire_adopted(struct supervisor *s)
{
	int sig = s->attempt_hard ? SIGTERM : SIGUSR1;

	if (!adopt_serving(s->adopt))
		return;
	log_notice("generation %u serves; the haproxy restarted by hand "
		   "during its reload leaves (%s)", s->current->number,
		   signal_name(sig));
	adopt_retire(s->adopt, sig);
}

void sv_generation_ready(struct supervisor *s, struct generation *g)
{
	struct generation *old = s->current;
	struct log_event ev;

	witness_stop(&g->witness);
	g->state = GEN_CURRENT;
	s->current = g;
	s->starting = NULL;
	s->current_lost = FALSE;
	/* Its predecessor ended during its start: from its -sf, or from a
	 * restart by hand that it must not serve next to. */
	if (s->lost_replaced) {
		s->lost_replaced = FALSE;
		sv_search_replacement(s, TRUE);
	}
	/* Started with their pids after -sf: they leave now. */
	if (g->sf_adopted)
		adopt_superseded(s->adopt);
	else
		sv_retire_adopted(s);
	if (old) {
		wait_listeners_released(old, g);
		old->state = GEN_DRAINING;
		old->draining_since_us = g_get_real_time();
		/* A -Ds parent may have forked workers after we listed them
		 * for -sf; a second SIGUSR1 to the others is harmless. */
		if (old->mode == LAUNCH_DS && !s->attempt_hard)
			generation_signal(old, SIGUSR1, FALSE);
		start_drain_clock(s, old);
		start_stop_check(s, old);
	}
	sv_bound_draining(s);
	sv_pidfile_publish(s, g);
	failed_generation_clear(&s->failed);
	ev = sv_event(s, MSGID_RELOAD_OK, g->number, g->pid, "ok");
	if (g->mode == LAUNCH_MW) {
		g_autofree gchar *workers = sv_pids_text(g->workers);

		wlog_event(&ev, LOG_NOTICE, "generation %u ready: master pid "
			   "%d, workers %s, haproxy %s", g->number, g->pid,
			   workers, g->version);
	} else {
		wlog_event(&ev, LOG_NOTICE, "generation %u ready: pid %d, "
			   "haproxy %s", g->number, g->pid, g->version);
	}
	if (s->phase == PHASE_STARTING && s->takeover)
		s->takeovers = takeover_instances(s->takeover)->len;
	if (s->phase == PHASE_STARTING)
		s->phase = PHASE_RUNNING;
	else
		s->reloads++;
	{
		g_autofree gchar *msg = g_strdup_printf(
			"generation %u (pid %d) serving%s", g->number, g->pid,
			s->upgrade_postponed ?
			"; wrapper upgrade postponed (an adopted haproxy ran): "
			"reload again" : "");

		sv_reload_finished(s, TRUE, msg);
	}
}

static void on_witness(int signo, GPid sender, gpointer data)
{
	struct supervisor *s = data;
	struct generation *g = s->starting;

	if (!g || sender != g->pid) {
		log_debug("witness: ignoring %s from pid %d", signal_name(signo),
			  sender);
		return;
	}
	switch (signo) {
	case SIGUSR1:
	case SIGTERM:
		sv_generation_ready(s, g);
		break;
	case SIGTTOU:
		if (!g->warned_addr_in_use)
			log_warn("generation %u: an address is in use; haproxy "
				 "retries while asking old processes to pause",
				 g->number);
		g->warned_addr_in_use = TRUE;
		break;
	case SIGTTIN:
		log_info("generation %u gave up binding; old processes were "
			 "told to resume", g->number);
		break;
	}
}

/* ---- starting a generation: locate, probe the version, spawn ---- */

static gboolean on_ready_timeout(gpointer data)
{
	struct supervisor *s = data;

	s->ready_timer = 0;
	if (s->starting) {
		log_err("generation %u (pid %d) not ready after %us; killing it",
			s->starting->number, s->starting->pid,
			s->opts->ready_timeout_s);
		generation_signal(s->starting, SIGKILL, FALSE);
	} else if (sv_master_reloading(s)) {
		/* Its old workers serve: leave the master be. */
		sv_launch_failed(s, 1, "the haproxy master (pid %d) %s within "
				 "%us", s->current->pid,
				 s->mw_settle_timer ? "did not handle SIGUSR2"
						    : "gave no verdict",
				 s->opts->ready_timeout_s);
	}
	return G_SOURCE_REMOVE;
}

/* Old pids for -sf: every live generation's, then the user's own -sf/-st
 * pids for the first generation only. */
GArray *sv_generations_sf_pids(struct supervisor *s)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < s->gens->len; i++)
		generation_sf_pids(g_ptr_array_index(s->gens, i), pids);
	return pids;
}

static GArray *old_pids(struct supervisor *s, gboolean *hard)
{
	GArray *pids = sv_generations_sf_pids(s);

	*hard = FALSE;
	if (s->next_number == 1 && s->args->user_old_pids) {
		g_array_append_vals(pids, s->args->user_old_pids->data,
				    s->args->user_old_pids->len);
		*hard = s->args->user_old_hard;
	}
	if (s->next_number == 1 && s->takeover) {
		g_autoptr(GArray) foreign = takeover_targets(s->takeover);

		g_array_append_vals(pids, foreign->data, foreign->len);
	}
	{
		g_autoptr(GArray) adopted = adopt_targets(s->adopt);

		g_array_append_vals(pids, adopted->data, adopted->len);
	}
	return pids;
}

/* The serving generation's listeners socket, if a new one can take its
 * sockets from there (-x fails hard on a missing socket: check first). */
gboolean sv_can_take_listeners(struct supervisor *s)
{
	return s->current && s->current->exposes && !s->current->exited &&
	       g_file_test(s->expose_sock, G_FILE_TEST_EXISTS);
}

/* Our own additions to haproxy's arguments, for this generation. */
static GStrv extra_args(struct supervisor *s, const struct haproxy_version *v,
			gboolean *exposes)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	const char *user_socket = g_getenv("HAPROXY_STATS_SOCKET");

	*exposes = FALSE;
	if (haproxy_version_compare(v, 1, 8, 0) < 0)
		return g_strv_builder_end(b);
	if (user_socket && *user_socket) {
		/* The 1.x wrapper's never-released -x variable: the user
		 * vouches that this socket exposes its listeners. */
		if (s->current && g_file_test(user_socket, G_FILE_TEST_EXISTS)) {
			g_strv_builder_add(b, "-x");
			g_strv_builder_add(b, user_socket);
		}
		return g_strv_builder_end(b);
	}
	if (!s->expose_cfg)
		return g_strv_builder_end(b);
	g_strv_builder_add(b, "-f");
	g_strv_builder_add(b, s->expose_cfg);
	*exposes = TRUE;
	if (sv_can_take_listeners(s)) {
		g_strv_builder_add(b, "-x");
		g_strv_builder_add(b, s->expose_sock);
	}
	return g_strv_builder_end(b);
}

/* Without -x (haproxy < 1.8) a closing listener drops its accept queue,
 * unless the kernel moves it to a sibling (Linux >= 5.14). */
static void notice_migrate_req(struct supervisor *s)
{
	g_autofree gchar *value = NULL;

	if (s->told_migrate_req)
		return;
	s->told_migrate_req = TRUE;
	if (g_file_get_contents("/proc/sys/net/ipv4/tcp_migrate_req", &value,
				NULL, NULL) && g_str_has_prefix(value, "1"))
		return;
	log_notice("haproxy < 1.8 cannot hand its listeners over on reload; "
		   "set net.ipv4.tcp_migrate_req=1 (Linux >= 5.14) so that "
		   "connections queued on the old listeners are not reset");
}

static gboolean on_extend(gpointer data)
{
	notify_extend_timeout(EXTEND_BY_US);
	return G_SOURCE_CONTINUE;
}

/*
 * The wrapper's exit status for a command it could not run: as a shell
 * says it for a missing or non-executable file, an OS error for the rest
 * (fork, pipes, memory); otherwise, what the caller chose.
 */
static int spawn_exit_code(const GError *error, int otherwise)
{
	if (error->domain != G_SPAWN_ERROR)
		return otherwise;
	switch (error->code) {
	case G_SPAWN_ERROR_NOENT:
		return EXIT_HAPROXY_NOT_FOUND;
	case G_SPAWN_ERROR_ACCES:
	case G_SPAWN_ERROR_PERM:
	case G_SPAWN_ERROR_NOEXEC:
		return EXIT_HAPROXY_NOT_EXECUTABLE;
	default:
		return EXIT_OS_ERROR;
	}
}

/* While haproxy loads: the ready timeout, and systemd's patience. */
static void start_load_timers(struct supervisor *s)
{
	if (s->opts->ready_timeout_s)
		s->ready_timer = g_timeout_add_seconds(s->opts->ready_timeout_s,
						       on_ready_timeout, s);
	/* Only under systemd: no wakeup for nobody. */
	if (g_getenv("NOTIFY_SOCKET"))
		s->extend_timer = g_timeout_add_seconds(EXTEND_EVERY_S,
							on_extend, s);
}

/* A master tells its readiness on our notify socket; the others, through
 * the witness at the end of their -sf list. */
static gboolean prepare_readiness(struct supervisor *s, struct generation *g,
				  const char **notify_socket, GError **error)
{
	*notify_socket = NULL;
	if (g->mode != LAUNCH_MW)
		return witness_start(&g->witness, on_witness, s, error);
	*notify_socket = sv_master_notify_socket(s, error);
	if (!*notify_socket)
		g_prefix_error(error, "master-worker mode: ");
	return *notify_socket != NULL;
}

static void spawn_generation(struct supervisor *s,
			     const struct haproxy_version *v,
			     enum launch_mode mode)
{
	const char *notify_socket;
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) pids = NULL;
	g_auto(GStrv) argv = NULL;
	g_auto(GStrv) extra = NULL;
	struct generation *g;
	gboolean hard, exposes;

	if (mode == LAUNCH_DS)
		notice_migrate_req(s);
	g = generation_new(s->next_number, mode, v->full);
	if (!prepare_readiness(s, g, &notify_socket, &error)) {
		generation_free(g);
		sv_launch_failed(s, EXIT_OS_ERROR, "%s", error->message);
		return;
	}
	pids = old_pids(s, &hard);
	g->sf_adopted = adopt_serving(s->adopt);
	hard = hard || s->attempt_hard;
	extra = extra_args(s, v, &exposes);
	g->exposes = exposes;
	g->took_listeners = g_strv_contains((const char *const *)extra, "-x");
	argv = haproxy_argv_build(s->haproxy_path, mode, v, s->args,
				  (const char *const *)extra,
				  (GPid *)pids->data, pids->len,
				  g->witness.pid, hard);
	if (!haproxy_spawn(argv, notify_socket, &g->pid, &error)) {
		generation_free(g);
		sv_launch_failed(s, spawn_exit_code(error,
						    EXIT_HAPROXY_NOT_EXECUTABLE),
				 "cannot run %s: %s", s->haproxy_path,
				 error->message);
		return;
	}
	s->next_number++;
	g_ptr_array_add(s->gens, g);
	s->starting = g;
	sv_watch_generation(s, g);
	start_load_timers(s);
}

/* Say why the launch mode is not the obvious one, once per change. */
static void tell_mode(struct supervisor *s, enum launch_mode mode,
		      const char *why)
{
	if (s->told_mode_valid && s->told_mode == mode)
		return;
	s->told_mode = mode;
	s->told_mode_valid = TRUE;
	if (*why)
		log_notice("%s: running haproxy with %s", why,
			   launch_mode_flag(mode));
}

static enum launch_mode choose_mode(struct supervisor *s,
				    const struct haproxy_version *v)
{
	g_autofree gchar *cwd = g_get_current_dir();
	struct config_hints hints;
	enum launch_mode mode;
	const char *why;

	config_hints_read(s->args, cwd, &hints);
	mode = mw_choose_mode(v, s->opts->master_worker, &hints, &why);
	tell_mode(s, mode, why);
	return mode;
}

/* A serving master reloads itself; anything else means a new generation. */
static void launch_version(struct supervisor *s,
			   const struct haproxy_version *v)
{
	const char *refusal = mw_version_refusal(v, s->args);
	enum launch_mode mode;
	struct generation *c = s->current;

	if (refusal) {
		sv_launch_failed(s, EXIT_USAGE, "%s: haproxy %s", refusal,
				 v->full);
		return;
	}
	/* The one serving ended during this reload, as a replaced one
	 * does: what replaced it goes on the -sf list, once found. */
	if (adopt_searching(s->adopt)) {
		log_info("generation %u waits for the search for a haproxy "
			 "that replaced the one serving", s->next_number);
		s->launch_version = *v;
		s->launch_waits = TRUE;
		return;
	}
	mode = choose_mode(s, v);
	if (mode == LAUNCH_MW && c && c->mode == LAUNCH_MW && !c->exited) {
		start_load_timers(s);
		sv_master_reload(s, v);
		return;
	}
	spawn_generation(s, v, mode);
}

static gboolean vcache_lookup(struct supervisor *s, const struct stat *st)
{
	const struct stat *c = &s->vcache.st;

	return s->vcache.path && g_str_equal(s->vcache.path, s->haproxy_path) &&
	       c->st_dev == st->st_dev && c->st_ino == st->st_ino &&
	       c->st_size == st->st_size &&
	       c->st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       c->st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

static void on_version(const char *output, int wait_status,
		       const GError *error, gpointer data)
{
	struct supervisor *s = data;
	struct haproxy_version v;
	struct stat st;

	s->probe = NULL;
	if (error) {
		sv_launch_failed(s, spawn_exit_code(error, EXIT_NO_VERSION),
				 "%s -v: %s", s->haproxy_path, error->message);
		return;
	}
	if (!haproxy_version_parse(output, &v)) {
		g_autofree gchar *how = describe_wait_status(wait_status);

		sv_launch_failed(s, EXIT_NO_VERSION,
			      "%s -v %s and printed no haproxy version",
			      s->haproxy_path, how);
		return;
	}
	if (stat(s->haproxy_path, &st) == 0) {
		g_free(s->vcache.path);
		s->vcache.path = g_strdup(s->haproxy_path);
		s->vcache.st = st;
		s->vcache.version = v;
		sv_vcache_store(s);
	}
	launch_version(s, &v);
}

void sv_launch_resume(struct supervisor *s)
{
	if (!s->launch_waits)
		return;
	s->launch_waits = FALSE;
	launch_version(s, &s->launch_version);
}

/* Locate haproxy anew, as the 1.x wrapper did at every spawn. */
void sv_launch(struct supervisor *s)
{
	g_autoptr(GError) error = NULL;
	struct stat st;

	s->haproxy_path = haproxy_locate(s->opts->haproxy, s->self.path, &error);
	if (!s->haproxy_path) {
		sv_launch_failed(s, EXIT_HAPROXY_NOT_FOUND, "%s", error->message);
		return;
	}
	if (stat(s->haproxy_path, &st) < 0) {
		sv_launch_failed(s, EXIT_HAPROXY_NOT_FOUND, "%s: %s",
			      s->haproxy_path, g_strerror(errno));
		return;
	}
	if (access(s->haproxy_path, X_OK) < 0) {
		sv_launch_failed(s, EXIT_HAPROXY_NOT_EXECUTABLE, "%s: %s",
			      s->haproxy_path, g_strerror(errno));
		return;
	}
	if (vcache_lookup(s, &st) || sv_vcache_load(s, &st)) {
		launch_version(s, &s->vcache.version);
		return;
	}
	{
		char *argv[] = { s->haproxy_path, (char *)"-v", NULL };

		s->probe = probe_start(argv, VERSION_PROBE_TIMEOUT_MS,
				       on_version, s);
	}
}

/* ---- a reload: the optional self upgrade first, then a generation ---- */

/* The new image refused (or could not run) the dry run: this one
 * reloads, and says why to whoever waits. */
static void upgrade_refuse(struct supervisor *s, const char *why)
{
	log_err("not upgrading: %s --upgrade-dry-run %s; reloading with the "
		"running wrapper", s->self.path, why);
	g_free(s->upgrade_refused);
	s->upgrade_refused = g_strdup_printf("%s --upgrade-dry-run %s",
					     s->self.path, why);
	sv_launch(s);
}

static void on_upgrade_dry_run(const char *output, int wait_status,
			       const GError *error, gpointer data)
{
	struct supervisor *s = data;
	g_autofree gchar *state = NULL;
	g_autofree gchar *how = NULL;
	struct handover h;

	s->probe = NULL;
	if (error) {
		upgrade_refuse(s, error->message);
		return;
	}
	if (!upgrade_check_passed(output, wait_status, sv_master_running(s))) {
		how = describe_wait_status(wait_status);
		upgrade_refuse(s, WIFEXITED(wait_status) &&
					  WEXITSTATUS(wait_status) == 0
				  ? "gave an unexpected answer" : how);
		return;
	}
	/* A second install meanwhile: what passed is not what would run. */
	if (!upgrade_dry_run_same_image(&s->self)) {
		upgrade_refuse(s, "passed, but the file was replaced during "
			       "its dry run");
		return;
	}
	/* Waiters may have come meanwhile: the state is taken anew. */
	h = sv_handover_of(s);
	state = state_serialize(&h);
	g_array_unref(h.waiters);
	log_notice("re-executing on %s.", s->reload_signal ?
		   signal_name(s->reload_signal) : "request");
	sv_handover_inheritable(s, TRUE);
	upgrade_exec(&s->self, s->orig_argv, state);
	sv_handover_inheritable(s, FALSE);
	upgrade_refuse(s, "could not be executed");
}

/* The new image parses this very command line and state, as the exec
 * would, and exits without acting: only then is it executed. */
static void begin_upgrade(struct supervisor *s)
{
	g_autofree gchar *state = NULL;
	struct handover h = sv_handover_of(s);

	state = state_serialize(&h);
	g_array_unref(h.waiters);
	sv_handover_inheritable(s, FALSE);
	s->probe = upgrade_dry_run_start(&s->self, s->orig_argv, state,
					 on_upgrade_dry_run, s);
}

static gboolean upgrade_wanted(struct supervisor *s)
{
	gboolean wanted;

	if (!s->can_upgrade || s->skip_upgrade)
		return FALSE;
	switch (s->opts->self_upgrade) {
	case SELF_UPGRADE_ALWAYS:
		wanted = TRUE;
		break;
	case SELF_UPGRADE_NEVER:
		wanted = FALSE;
		break;
	case SELF_UPGRADE_AUTO:
	default:
		wanted = self_image_replaced(&s->self);
		break;
	}
	/* The handed-over state has no room for adopted instances: this
	 * reload brings them under us first, the next one upgrades. */
	if (wanted && adopt_alive(s->adopt)) {
		log_notice("not upgrading the wrapper on this reload: a haproxy "
			   "adopted after a restart by hand runs; this reload "
			   "takes it over, the next one upgrades");
		s->upgrade_postponed = TRUE;
		return FALSE;
	}
	return wanted;
}

void sv_begin_reload(struct supervisor *s, int sig, gboolean hard)
{
	g_autofree gchar *line = NULL;

	s->busy = TRUE;
	s->reload_signal = sig;
	s->attempt++;
	s->attempt_hard = hard;
	s->attempt_started_us = g_get_monotonic_time();
	log_notice("%sreloading on %s.", hard ? "hard-" : "",
		   sig ? signal_name(sig) : "request");
	/* After our own exec this is the same reload: systemd heard of it. */
	if (!s->skip_upgrade) {
		line = sv_summary(s);
		notify_reloading(line);
	}
	if (upgrade_wanted(s))
		begin_upgrade(s);
	else
		sv_launch(s);
}

/* sig: the signal that asked, or 0 for the control socket. client: who
 * waits for the verdict, if anyone. */
void sv_request_reload(struct supervisor *s, int sig, gboolean hard,
			   struct control_client *client)
{
	const char *who = sig ? signal_name(sig) : "control request";

	if (s->phase == PHASE_STOPPING) {
		log_notice("ignoring %s: stopping", who);
		if (client)
			control_reply(client, "error: stopping");
		return;
	}
	if (client) {
		struct waiter *w = g_new0(struct waiter, 1);

		*w = (struct waiter){ .client = client, .target = s->attempt + 1 };
		g_ptr_array_add(s->waiters, w);
	}
	if (s->busy || adopt_searching(s->adopt)) {
		if (!s->reload_pending)
			log_info("%s: a reload is in progress; one more will "
				 "follow it", who);
		s->reload_pending = TRUE;
		s->pending_signal = sig;
		s->pending_hard = s->pending_hard || hard;
		return;
	}
	sv_begin_reload(s, sig, hard);
}
