/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The supervisor: life cycle, signals, control requests, stop, and what
 * the end of each generation means. */
#include "wrapper/supervisor-int.h"

#include "base/escape.h"

void sv_set_exit_code(struct supervisor *s, int code)
{
	if (!s->life.have_exit_code) {
		s->life.have_exit_code = TRUE;
		s->life.exit_code = code;
	}
}

void sv_set_running(struct supervisor *s)
{
	s->life.phase = PHASE_RUNNING;
}

static void quit_if_done(struct supervisor *s)
{
	if (s->life.phase == PHASE_STOPPING && s->gt.gens->len == 0 &&
	    !adopt_alive(s->adopt)) {
		/* May happen before the loop runs: "done" covers that. */
		s->life.done = TRUE;
		g_main_loop_quit(s->loop);
	}
}

static void forget_generation(struct supervisor *s, struct generation *g)
{
	gen_table_forget(&s->gt, g);
	quit_if_done(s);
}

/* ---- the pidfile, for scripts that read it (-db writes none) ---- */

void sv_pidfile_publish(struct supervisor *s, struct generation *g)
{
	g_autoptr(GError) error = NULL;

	if (!s->args->pidfile || g->mode == LAUNCH_DS)
		return;
	/* A master writes its own pid there (-p), as upstream's unit has
	 * it: ours to remove at exit all the same. */
	if (g->mode == LAUNCH_MW) {
		s->gt.pidfile_pid = g->pid;
		return;
	}
	if (!pidfile_write(s->args->pidfile, &g->pid, 1, &error)) {
		log_warn("cannot write pidfile: %s", error->message);
		return;
	}
	s->gt.pidfile_pid = g->pid;
}

/* Remove the pidfile at exit, only if it still is what we wrote. */
static void pidfile_retract(struct supervisor *s)
{
	if (s->gt.pidfile_pid)
		pidfile_remove_if_ours(s->args->pidfile, s->gt.pidfile_pid);
}

/* A pidfile naming live processes we did not start: say so, touch none. */
static void pidfile_notice_strangers(struct supervisor *s)
{
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;
	guint invalid = 0;

	if (!s->args->pidfile)
		return;
	if (!pidfile_read(s->args->pidfile, &pids, &invalid, &error)) {
		log_warn("ignoring pidfile: %s", error->message);
		return;
	}
	if (invalid)
		log_notice("pidfile %s holds %u token(s) that are not pids",
			   s->args->pidfile, invalid);
	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);
		g_autofree gchar *exe = proc_exe(pid);
		g_autofree gchar *shown = NULL;

		if (!exe && kill(pid, 0) < 0 && errno == ESRCH)
			continue;
		/* Another user may have named that executable. */
		shown = exe ? escape_untrusted(exe, 0)
			    : g_strdup("unknown program");
		log_notice("pidfile %s names pid %d (%s), which this wrapper "
			   "did not start; it gets no signal from us",
			   s->args->pidfile, pid, shown);
	}
}

/* The status a serving generation's unasked-for end gives the wrapper. */
int sv_lost_exit_code(enum launch_mode mode, int status)
{
	int code = shell_status(status);

	/* A -Ds parent exits 0 whenever its workers are gone, crashed or
	 * killed: its 0 says nothing, and must not read as success. */
	return mode == LAUNCH_DS && code == 0 ? 1 : code;
}

gboolean sv_master_running(struct supervisor *s)
{
	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		if (g->mode == LAUNCH_MW && !g->exited)
			return TRUE;
	}
	return FALSE;
}

/* ---- status ---- */

static const char *phase_name(enum phase phase)
{
	switch (phase) {
	case PHASE_STARTING:
		return "starting";
	case PHASE_RUNNING:
		return "running";
	case PHASE_STOPPING:
		return "stopping";
	}
	return "unknown";
}

/* The instances we did not start: taken over at start, or adopted. */
static const GPtrArray *foreign_view(struct supervisor *s)
{
	const GPtrArray *parts[] = {
		s->takeover ? takeover_instances(s->takeover) : NULL,
		s->adopt ? adopt_instances(s->adopt) : NULL,
	};

	g_ptr_array_set_size(s->foreign_view, 0);
	for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
		for (guint j = 0; parts[i] && j < parts[i]->len; j++)
			g_ptr_array_add(s->foreign_view,
					g_ptr_array_index((GPtrArray *)parts[i],
							  j));
	return s->foreign_view;
}

static const struct foreign *adopted_serving(struct supervisor *s)
{
	const GPtrArray *in;

	if (!adopt_serving(s->adopt))
		return NULL;
	in = adopt_instances(s->adopt);
	return in->len ? g_ptr_array_index((GPtrArray *)in, 0) : NULL;
}

static struct status_view status_view_of(struct supervisor *s)
{
	for (guint i = 0; i < s->gt.gens->len; i++)
		generation_prune_cohorts(g_ptr_array_index(s->gt.gens, i));
	return (struct status_view){
		.wrapper_pid = getpid(),
		.phase = phase_name(s->life.phase),
		.reloads = reloader_reloads(s->reloader),
		.reloads_failed = reloader_reloads_failed(s->reloader),
		.takeovers = s->takeovers,
		.restarts_adopted = s->restarts_adopted,
		.adoptions = s->adoptions,
		.last = reloader_last(s->reloader),
		.failed = &s->gt.failed,
		.gens = s->gt.gens,
		.current = s->gt.current,
		.foreign = foreign_view(s),
		.adopted = adopted_serving(s),
		.reuseport = reuseport_state(s->reuseport),
	};
}

gchar *sv_summary(struct supervisor *s)
{
	struct status_view v = status_view_of(s);

	return status_summary(&v);
}

/* ---- the end of a generation, and what it means ---- */

static void on_generation_exit(GPid pid, int status, gpointer data);

void sv_watch_generation(struct supervisor *s, struct generation *g)
{
	g->child_source = g_child_watch_add(g->pid, on_generation_exit, s);
}

static struct generation *find_generation(struct supervisor *s, GPid pid)
{
	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		if (g->pid == pid)
			return g;
	}
	return NULL;
}

/* The generation being started ended before it was ready. */
static void starting_generation_exited(struct supervisor *s,
				       struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);
	g_autofree gchar *msg = NULL;
	guint number = g->number;
	GPid pid = g->pid;
	int code = shell_status(status);
	gboolean addr_in_use = g->warned_addr_in_use;

	/* It was to take its listeners (-x) from the one serving, which
	 * ended meanwhile (a restart by hand): again, without -x. */
	if (g->took_listeners && !s->gt.current && s->life.phase == PHASE_RUNNING) {
		log_notice("generation %u (pid %d) %s: the one serving, whose "
			   "listeners it was to take, ended while it loaded; "
			   "starting it again", number, pid, how);
		forget_generation(s, g);
		sv_post(s, RE_RETRY, NULL);
		return;
	}
	failed_generation_clear(&s->gt.failed);
	s->gt.failed = (struct failed_generation){
		.valid = TRUE,
		.number = number,
		.pid = pid,
		.started_us = g->started_us,
		.how = g_strdup(how),
	};
	g_strlcpy(s->gt.failed.version, g->version, sizeof(s->gt.failed.version));
	forget_generation(s, g);
	if (s->life.phase == PHASE_STOPPING)
		log_info("generation %u (pid %d) %s while starting", number,
			 pid, how);
	/* Ending before it was ready is a failure, whatever the status. */
	msg = g_strdup_printf("generation %u (pid %d) %s%s before it was ready",
			      number, pid, addr_in_use ?
			      "could not bind its addresses and " : "", how);
	sv_post(s, RE_CHILD_EXIT, &(struct reload_input){
		.exit_code = code ? code : 1, .message = msg });
}

/* ---- a haproxy started by hand replaced the one serving ---- */

/* A replaced haproxy soft-stops (exit 0; a -Ds parent, a master too) or
 * dies of the SIGTERM of -st. Anything else is a crash. */
static gboolean ended_as_replaced(int status)
{
	return (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
	       (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

static GStrv own_haproxy_argv(struct supervisor *s);

static void on_adopt(enum adopt_event event, gpointer data);

static void search_replacement(struct supervisor *s)
{
	sv_search_replacement(s, FALSE);
}

void sv_search_replacement(struct supervisor *s, gboolean quick)
{
	if (!s->adopt) {
		g_auto(GStrv) argv = own_haproxy_argv(s);
		g_autofree gchar *cwd = g_get_current_dir();

		s->adopt = adopt_new(s->args->pidfile,
				     (const char *const *)argv, cwd, on_adopt,
				     s);
	}
	if (quick)
		adopt_look(s->adopt);
	else
		adopt_search(s->adopt);
}

static void remember_replaced(struct supervisor *s, struct generation *g,
			      int status)
{
	s->replaced.valid = TRUE;
	s->replaced.number = g->number;
	s->replaced.pid = g->pid;
	s->replaced.status = status;
	s->replaced.mode = g->mode;
}

static void look_for_replacement(struct supervisor *s, struct generation *g,
				 int status)
{
	g_autofree gchar *how = describe_wait_status(status);

	log_info("generation %u (pid %d), the one serving, %s on its own; "
		 "looking for a haproxy that replaced it", g->number, g->pid,
		 how);
	remember_replaced(s, g, status);
	search_replacement(s);
}

/* Nothing replaced the one serving: the service is down, as before. */
static void replacement_not_found(struct supervisor *s)
{
	if (s->replaced.valid) {
		g_autofree gchar *how = describe_wait_status(
			s->replaced.status);

		log_err("generation %u (pid %d), the one serving, %s on its "
			"own; stopping", s->replaced.number, s->replaced.pid,
			how);
		sv_set_exit_code(s, sv_lost_exit_code(s->replaced.mode,
						      s->replaced.status));
	} else {
		/* Not our child: how it ended is unknown, and no success. */
		log_err("the adopted haproxy, the one serving, has exited on "
			"its own; stopping");
		sv_set_exit_code(s, 1);
	}
	s->replaced.valid = FALSE;
	sv_begin_stop(s, SIGTERM);
}

/* The adopted instances ended while they served. */
static void adopted_lost(struct supervisor *s)
{
	/* Most likely the soft stop from a successor of ours, seen before
	 * its witness: the successor decides, as for our own. Their status
	 * is unknown (not our children), and no success. */
	if (s->gt.starting) {
		log_info("the adopted haproxy ended while generation %u "
			 "starts", s->gt.starting->number);
		sv_post(s, RE_SERVING_LOST, &(struct reload_input){
			.exit_code = sv_lost_exit_code(LAUNCH_DB,
						       W_EXITCODE(1, 0)) });
		/* Not told by it: maybe replaced by hand again. */
		if (!s->gt.starting->sf_adopted)
			search_replacement(s);
		return;
	}
	log_info("looking for a haproxy that replaced the adopted one");
	s->replaced.valid = FALSE;
	adopt_search(s->adopt);
}

/* STATUS= for systemd, outside a reload or a stop that say it anyway. */
static void tell_status(struct supervisor *s)
{
	g_autofree gchar *line = NULL;

	if (reloader_busy(s->reloader) || s->life.phase != PHASE_RUNNING)
		return;
	line = sv_summary(s);
	notify_status(line);
}

static void on_adopt(enum adopt_event event, gpointer data)
{
	struct supervisor *s = data;

	switch (event) {
	case ADOPT_FOUND:
		s->replaced.valid = FALSE;
		s->restarts_adopted++;
		reuseport_attach_foreign(s->reuseport, adopt_instances(s->adopt));
		if (s->gt.current)
			/* Found after our reload's generation was ready. */
			sv_retire_adopted(s);
		else if (s->gt.starting)
			log_notice("an adopted haproxy serves; generation %u "
				   "replaces it once ready",
				   s->gt.starting->number);
		else
			log_notice("an adopted haproxy serves; the next reload "
				   "brings it back under the wrapper");
		/* It serves now, whatever becomes of a starting one; a
		 * launch that waited for it goes on. */
		sv_post(s, RE_REPLACED, NULL);
		tell_status(s);
		break;
	case ADOPT_NONE:
		if (s->life.phase == PHASE_STOPPING)
			break;
		/* During a reload its generation decides (current_lost). */
		if (!s->gt.current && !s->gt.starting)
			replacement_not_found(s);
		else
			sv_post(s, RE_SEARCH_OVER, NULL);
		break;
	case ADOPT_LOST:
		adopted_lost(s);
		break;
	case ADOPT_GONE:
		quit_if_done(s);
		break;
	}
}

/* The serving generation ended without being asked to: the service is
 * down, so stop the rest and exit with its status for Restart=. */
static void current_generation_exited(struct supervisor *s,
				      struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);
	struct log_event ev;

	if (s->gt.starting) {
		log_info("generation %u (pid %d) %s while generation %u "
			 "starts", g->number, g->pid, how, s->gt.starting->number);
		/* Most likely the starting one's own -sf, seen before its
		 * witness; or a restart by hand, whose instance is not on
		 * its -sf list: looked for once the reload decides. */
		gboolean replaced = s->opts->takeover &&
				    ended_as_replaced(status);

		if (replaced)
			remember_replaced(s, g, status);
		sv_post(s, RE_SERVING_LOST, &(struct reload_input){
			.exit_code = sv_lost_exit_code(g->mode, status),
			.replaced = replaced });
		forget_generation(s, g);
		return;
	}
	/* --takeover=off: instances we did not start are not ours. */
	if (s->opts->takeover && ended_as_replaced(status)) {
		look_for_replacement(s, g, status);
		forget_generation(s, g);
		return;
	}
	ev = sv_event(s, MSGID_GENERATION_LOST, g->number, g->pid, NULL);
	wlog_event(&ev, LOG_ERR, "generation %u (pid %d), the one serving, %s "
		   "on its own; stopping", g->number, g->pid, how);
	sv_set_exit_code(s, sv_lost_exit_code(g->mode, status));
	forget_generation(s, g);
	sv_begin_stop(s, SIGTERM);
}

static void on_generation_exit(GPid pid, int status, gpointer data)
{
	struct supervisor *s = data;
	struct generation *g = find_generation(s, pid);
	g_autofree gchar *how = describe_wait_status(status);

	g_spawn_close_pid(pid);
	if (!g)
		return;
	g->child_source = 0;
	g->exited = TRUE;
	/* Its exit may be seen before the witness's last reports: read
	 * them first (a "ready" makes it the serving generation). */
	if (g == s->gt.starting)
		witness_flush(&g->witness);
	if (g == s->gt.starting) {
		starting_generation_exited(s, g, status);
	} else if (g == s->gt.current && s->life.phase != PHASE_STOPPING) {
		current_generation_exited(s, g, status);
	} else {
		log_info("generation %u (pid %d) finished: %s", g->number,
			 g->pid, how);
		forget_generation(s, g);
	}
}

static void on_control(struct control_client *c,
		       enum control_command command, gpointer data)
{
	struct supervisor *s = data;
	struct status_view v = status_view_of(s);
	g_autofree gchar *text = NULL;

	switch (command) {
	case CMD_RELOAD:
	case CMD_HARD_RELOAD:
		sv_request_reload(s, 0, command == CMD_HARD_RELOAD, c);
		break;
	case CMD_HANDOFF:
		sv_handoff(s, c);
		break;
	case CMD_STATUS:
	case CMD_STATUS_JSON:
	case CMD_STATUS_OPENMETRICS:
		text = command == CMD_STATUS ? status_text(&v) :
		       command == CMD_STATUS_JSON ? status_json(&v) :
		       status_openmetrics(&v);
		control_reply(c, text);
		break;
	case CMD_INCOMPLETE:
	case CMD_INVALID:
		g_assert_not_reached();
	}
}

/* ---- stop ---- */

static gboolean on_stop_timeout(gpointer data)
{
	struct supervisor *s = data;

	s->life.stop_timer = 0;
	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		log_warn("generation %u (pid %d) still running %us after the "
			 "stop; SIGKILL", g->number, g->pid,
			 s->opts->stop_timeout_s);
		generation_signal(g, SIGKILL, FALSE);
	}
	if (adopt_alive(s->adopt)) {
		log_warn("the adopted haproxy still runs %us after the stop; "
			 "SIGKILL", s->opts->stop_timeout_s);
		adopt_stop(s->adopt, SIGKILL);
	}
	return G_SOURCE_REMOVE;
}

static void signal_all(struct supervisor *s, int sig)
{
	for (guint i = 0; i < s->gt.gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gt.gens, i);

		/* A haproxy still loading has nothing to drain. */
		generation_signal(g, g->state == GEN_STARTING ? SIGTERM : sig,
				  TRUE);
	}
}

/* SIGTERM/SIGINT: hard, bounded; SIGUSR1: graceful, haproxy's soft stop. */
void sv_begin_stop(struct supervisor *s, int sig)
{
	gboolean hard = sig != SIGUSR1;

	if (s->life.phase == PHASE_STOPPING) {
		if (!hard || s->life.stop_hard)
			return;
		log_notice("%s while stopping gracefully: stopping now",
			   signal_name(sig));
	}
	if (s->life.phase != PHASE_STOPPING) {
		g_autofree gchar *line = NULL;

		s->life.phase = PHASE_STOPPING;
		line = sv_summary(s);
		notify_stopping(line);
	}
	/* Waiting clients told, a hand-off abandoned, the attempt under
	 * way ended unless a generation loads (its end ends it). */
	sv_post(s, RE_STOP, NULL);
	if (s->takeover)
		takeover_cancel(s->takeover);
	if (s->probe)
		g_clear_pointer(&s->probe, probe_cancel);
	signal_all(s, sig);
	adopt_stop(s->adopt, sig);
	if (hard && !s->life.stop_hard && s->opts->stop_timeout_s)
		s->life.stop_timer = g_timeout_add_seconds(s->opts->stop_timeout_s,
						      on_stop_timeout, s);
	s->life.stop_hard = hard;
	quit_if_done(s);
}

static void on_signal(const struct signalfd_siginfo *si, gpointer data)
{
	struct supervisor *s = data;
	int sig = si->ssi_signo;

	switch (sig) {
	case SIGUSR2:
	case SIGHUP:
		sv_request_reload(s, sig, FALSE, NULL);
		break;
	case SIGTERM:
	case SIGINT:
	case SIGUSR1:
		log_notice("%s from pid %u: %s", signal_name(sig), si->ssi_pid,
			   sig == SIGUSR1 ? "stopping gracefully" : "stopping");
		sv_begin_stop(s, sig);
		break;
	default:
		log_info("ignoring %s from pid %u", signal_name(sig), si->ssi_pid);
		break;
	}
}

/* ---- life cycle ---- */

struct supervisor *supervisor_new(const struct wrapper_args *args,
				  const struct wrapper_options *opts,
				  char **orig_argv)
{
	struct supervisor *s = g_new0(struct supervisor, 1);

	s->loop = g_main_loop_new(NULL, FALSE);
	s->args = args;
	s->opts = opts;
	gen_table_init(&s->gt);
	s->reloader = reloader_new(&sv_reload_ops, s);
	s->master = master_link_new(&sv_master_ops, s, opts->drain_timeout_s);
	s->foreign_view = g_ptr_array_new();
	s->reuseport = reuseport_new(opts->reuseport_migration);
	sv_self_upgrade_init(s, orig_argv);
	return s;
}

static void teardown_runtime(struct supervisor *s)
{
	reloader_answer_all(s->reloader, "error: the wrapper exited");
	g_clear_pointer(&s->master, master_link_free);
	runtime_teardown(&s->rt);
}

/* WATCHDOG=1 only while a generation serves: a wrapper whose haproxy is
 * gone should be noticed. */
static gboolean on_watchdog(gpointer data)
{
	struct supervisor *s = data;

	if ((s->gt.current && !s->gt.current->exited) || adopt_serving(s->adopt))
		notify_watchdog();
	return G_SOURCE_CONTINUE;
}

static void start_watchdog(struct supervisor *s)
{
	guint64 usec = notify_watchdog_usec();

	if (usec)
		s->watchdog_timer = g_timeout_add(MAX(usec / 2000, 1),
						  on_watchdog, s);
}

static void on_takeover_settled(gpointer data)
{
	struct supervisor *s = data;

	/* Before our generation's -sf makes them close their listeners. */
	reuseport_attach_foreign(s->reuseport, takeover_instances(s->takeover));
	sv_post(s, RE_SETTLED, NULL);
}

/* haproxy's own argv, as a running haproxy would show it, to match the
 * configuration files of instances we did not start. */
static GStrv own_haproxy_argv(struct supervisor *s)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();

	g_strv_builder_add(b, "haproxy");
	g_strv_builder_addv(b, (const char **)s->args->haproxy_args);
	if (s->args->config_tail) {
		g_strv_builder_add(b, "--");
		g_strv_builder_addv(b, (const char **)s->args->config_tail);
	}
	return g_strv_builder_end(b);
}

/* The first generation: after a takeover of what already runs, if any. */
static void start_first(struct supervisor *s)
{
	g_auto(GStrv) argv = NULL;
	g_autofree gchar *cwd = NULL;

	if (!s->opts->takeover) {
		pidfile_notice_strangers(s);
		sv_post(s, RE_SETTLED, NULL);
		return;
	}
	/* On a busy host the search takes long: haproxy -v runs meanwhile. */
	sv_probe_early(s);
	argv = own_haproxy_argv(s);
	cwd = g_get_current_dir();
	s->takeover = takeover_begin(s->args->pidfile,
				     (const char *const *)argv, cwd,
				     on_takeover_settled, s);
}

int supervisor_run(struct supervisor *s)
{
	g_autoptr(GError) error = NULL;

	if (!signals_watch(on_signal, s, &error)) {
		log_err("%s", error->message);
		return EXIT_OS_ERROR;
	}
	if (g_getenv("HAPROXY_SYSTEMD_REEXEC")) {
		/* The 1.x wrapper's re-exec marker: meaningless to us, and
		 * dangerous to honour (it meant "signal the pidfile's pids"). */
		log_info("ignoring HAPROXY_SYSTEMD_REEXEC from the environment");
		g_unsetenv("HAPROXY_SYSTEMD_REEXEC");
	}
	s->life.exit_code = runtime_setup(&s->rt, s->opts->runtime_dir,
				     s->args->pidfile, s->opts->seamless,
				     on_control, s);
	if (s->life.exit_code)
		return s->life.exit_code;
	start_watchdog(s);
	if (!sv_restore_upgrade_state(s)) {
		sv_post(s, RE_START, NULL);
		start_first(s);
	}
	if (!s->life.done)
		g_main_loop_run(s->loop);
	/* Witness and probes killed on the way out are ours to reap. */
	if (s->probe)
		g_clear_pointer(&s->probe, probe_cancel);
	child_reap_discarded(1000);
	pidfile_retract(s);
	teardown_runtime(s);
	if (!s->life.have_exit_code)
		s->life.exit_code = 0;
	{
		struct log_event ev = { .message_id = MSGID_STOP,
					.exit_status = s->life.exit_code };

		wlog_event(&ev, LOG_NOTICE, "exit, haproxy RC=%d",
			   s->life.exit_code);
	}
	return s->life.exit_code;
}

void supervisor_free(struct supervisor *s)
{
	g_clear_handle_id(&s->life.stop_timer, g_source_remove);
	g_clear_handle_id(&s->ready_timer, g_source_remove);
	g_clear_handle_id(&s->pending_idle, g_source_remove);
	g_clear_handle_id(&s->extend_timer, g_source_remove);
	g_clear_handle_id(&s->watchdog_timer, g_source_remove);
	if (s->probe)
		probe_cancel(s->probe);
	gen_table_clear(&s->gt);
	reloader_free(s->reloader);
	master_link_free(s->master);
	takeover_free(s->takeover);
	adopt_free(s->adopt);
	g_ptr_array_unref(s->foreign_view);
	reuseport_free(s->reuseport);
	runtime_clear(&s->rt);
	g_free(s->haproxy_path);
	g_free(s->vcache.path);
	sv_self_upgrade_clear(s);
	g_main_loop_unref(s->loop);
	g_free(s);
}
