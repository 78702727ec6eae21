/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The supervisor, the composition root: its parts' creation order,
 * signals, control requests, the run and the teardown, and the reload
 * machine's effects (struct reloader_ops). See wrapper/supervisor.h and
 * doc/internals.md. */
#include "wrapper/supervisor.h"

#include <signal.h>

#include "base/log.h"
#include "migrate/adopt.h"
#include "migrate/firststart.h"
#include "migrate/handoff.h"
#include "migrate/replacement.h"
#include "wrapper/child.h"
#include "wrapper/control.h"
#include "wrapper/fdstore/fdstore.h"
#include "wrapper/hastderr.h"
#include "wrapper/launcher.h"
#include "wrapper/mworker/link.h"
#include "wrapper/outcome.h"
#include "wrapper/reloader.h"
#include "wrapper/sdnotify.h"
#include "wrapper/selfupgrade/selfupgrade.h"
#include "wrapper/signals.h"
#include "wrapper/status.h"
#include "wrapper/statussource.h"
#include "wrapper/steering/reuseport.h"

/* sig: the signal that asked, or 0 for the control socket. client: who
 * waits for the verdict, if anyone. */
static void sv_request_reload(struct supervisor *s, int sig, gboolean hard,
			      struct control_client *client)
{
	reloader_post(s->reloader, RE_REQUEST, &(struct reload_input){
		.signal = sig, .hard = hard, .client = client });
}

static struct status_owners status_owners(struct supervisor *s)
{
	return (struct status_owners){
		.gt = &s->gt,
		.phase = lifecycle_state_name(&s->life),
		.reloader = s->reloader,
		.metrics = &s->metrics,
		.takeover = first_start_takeover(s->first),
		.adopt = replacement_adopt(s->replacement),
		.reuseport = s->reuseport,
		.foreign_view = s->foreign_view,
	};
}

/* What "status" shows (wrapper/statussource.h), from the owners; valid
 * until the next call. */
static struct status_view supervisor_status_view(struct supervisor *s)
{
	struct status_owners o = status_owners(s);

	return status_source_view(&o);
}

gchar *supervisor_status_summary(struct supervisor *s)
{
	struct status_owners o = status_owners(s);

	return status_source_summary(&o);
}

void supervisor_status_tell(struct supervisor *s)
{
	g_autofree gchar *line = NULL;

	if (reloader_busy(s->reloader) || !lifecycle_running(&s->life))
		return;
	line = supervisor_status_summary(s);
	notify_status(line);
}

static void on_control(struct control_client *c,
		       enum control_command command, gpointer data)
{
	struct supervisor *s = data;
	struct status_view v;
	g_autofree gchar *text = NULL;

	switch (command) {
	case CMD_RELOAD:
	case CMD_HARD_RELOAD:
		sv_request_reload(s, 0, command == CMD_HARD_RELOAD, c);
		break;
	case CMD_HANDOFF:
		handoff_request(s->handoff, c, lifecycle_running(&s->life));
		break;
	case CMD_STATUS:
	case CMD_STATUS_JSON:
	case CMD_STATUS_OPENMETRICS:
		v = supervisor_status_view(s);
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
		lifecycle_stop(&s->life, sig, -1);
		break;
	default:
		log_info("ignoring %s from pid %u", signal_name(sig), si->ssi_pid);
		break;
	}
}

/*
 * ---- the reload machine's effects (wrapper/reloader.h) ----
 *
 * The machine stays an ops table, its one boundary: it decides without
 * processes (t/unit/reloader fakes these). Most effects are the
 * performing part's own function; those below are the supervisor's.
 */

/*
 * The journal fields of a failed reload name what failed: the generation
 * started for this attempt, or a master whose reload in place failed;
 * none when nothing was started (a probe that failed). Never the one that
 * keeps serving: the message says that one.
 */
static struct log_event failure_event(struct supervisor *s)
{
	const struct failed_generation *f = &s->gt.failed;
	const struct generation *c = s->gt.current;
	guint number = 0;
	GPid pid = 0;

	if (f->valid && f->attempt == reloader_attempt(s->reloader)) {
		number = f->number;
		pid = f->pid;
	} else if (c && c->mode == LAUNCH_MW &&
		   (reloader_state(s->reloader) == RS_MASTER_SETTLING ||
		    reloader_state(s->reloader) == RS_MASTER_VERDICT)) {
		number = c->number;
		pid = c->pid;
	}
	return reloader_event(s->reloader, MSGID_RELOAD_FAILED, number, pid,
			      "failed");
}

static void log_failure(struct supervisor *s, enum reload_failure how,
			const char *msg)
{
	struct log_event ev = failure_event(s);

	switch (how) {
	case FAILURE_FIRST_START:
		wlog_event(&ev, LOG_ERR, "cannot start haproxy: %s", msg);
		break;
	case FAILURE_REPLACED:
		wlog_event(&ev, LOG_ERR, "reload failed: %s; looking for a "
			   "haproxy that replaced generation %u", msg,
			   replacement_number(s->replacement));
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
		wlog_event(&ev, LOG_ERR, "reload failed: %s; generation %u "
			   "(pid %d) keeps serving", msg, s->gt.current->number,
			   s->gt.current->pid);
		break;
	}
}

/* The parts' effects, handed to the part that performs them. */
static enum upgrade_choice upgrade_wanted(struct supervisor *s)
{
	return selfupgrade_wanted(s->up);
}

static void begin_upgrade(struct supervisor *s)
{
	selfupgrade_begin(s->up);
}

static void probe(struct supervisor *s)
{
	launcher_probe(s->launcher, reloader_first_start(s->reloader));
}

static gboolean launch_must_wait(struct supervisor *s)
{
	return launcher_must_wait(s->launcher);
}

static enum launch_kind launch(struct supervisor *s,
			       const struct haproxy_version *v)
{
	return launcher_launch(s->launcher, v,
			       reloader_first_start(s->reloader),
			       reloader_hard(s->reloader));
}

static void kill_loading(struct supervisor *s)
{
	launcher_kill_loading(s->launcher);
}

static gchar *master_timeout_text(struct supervisor *s, gboolean settling)
{
	return launcher_master_timeout_text(s->launcher, settling);
}

static void end_attempt(struct supervisor *s)
{
	launcher_end_attempt(s->launcher);
}

static void abandon_handoff(struct supervisor *s)
{
	handoff_abandon(s->handoff);
}

static void search(struct supervisor *s, gboolean quick)
{
	replacement_search(s->replacement, quick);
}

static gboolean retry_first(struct supervisor *s, int exit_code,
			    const char *msg)
{
	return first_start_retry(s->first, exit_code, msg);
}

static gboolean searching(struct supervisor *s)
{
	return adopt_searching(replacement_adopt(s->replacement));
}

static gboolean adopted_serves(struct supervisor *s)
{
	return adopt_serving(replacement_adopt(s->replacement));
}

static void notify_reloading_now(struct supervisor *s)
{
	g_autofree gchar *line = supervisor_status_summary(s);

	notify_reloading(line);
}

static void notify_ready_now(struct supervisor *s)
{
	g_autofree gchar *line = supervisor_status_summary(s);

	notify_ready(line);
}

static gboolean run_pending_reload(gpointer data)
{
	struct supervisor *s = data;

	s->pending_idle = 0;
	reloader_post(s->reloader, RE_RUN_PENDING, NULL);
	return G_SOURCE_REMOVE;
}

static void schedule_pending(struct supervisor *s)
{
	if (!s->pending_idle)
		s->pending_idle = g_idle_add(run_pending_reload, s);
}

/* The life cycle owns "stopping": the machine asks it. */
static gboolean life_stopping(struct supervisor *s)
{
	return lifecycle_stopping(&s->life);
}

/* A first start that failed, or a failure with nothing serving. */
static void stop_service(struct supervisor *s, int exit_code)
{
	lifecycle_stop(&s->life, SIGTERM, exit_code);
}

static const struct reloader_ops sv_reload_ops = {
	.searching = searching,
	.adopted_serving = adopted_serves,
	.upgrade_wanted = upgrade_wanted,
	.notify_reloading = notify_reloading_now,
	.begin_upgrade = begin_upgrade,
	.probe = probe,
	.launch_must_wait = launch_must_wait,
	.launch = launch,
	.kill_loading = kill_loading,
	.master_timeout_text = master_timeout_text,
	.search = search,
	.log_failure = log_failure,
	.stop_service = stop_service,
	.notify_ready = notify_ready_now,
	.answer = control_reply,
	.end_attempt = end_attempt,
	.schedule_pending = schedule_pending,
	.abandon_handoff = abandon_handoff,
	.stopping = life_stopping,
	.retry_first = retry_first,
};

/*
 * ---- the parts' reports ----
 *
 * A part is built with what it uses and never calls back up: what it
 * reports, the core acts on (wrapper/outcome.h, the life cycle, STATUS=).
 */

static void on_selfupgrade(enum selfupgrade_report what,
			   struct generation *g, gpointer data)
{
	struct supervisor *s = data;

	switch (what) {
	case SELFUPGRADE_ADOPTED:
		outcome_watch(s, g);
		break;
	}
}

static void on_handoff(enum handoff_report what, gpointer data)
{
	struct supervisor *s = data;

	switch (what) {
	case HANDOFF_EXEC_FAILED:
		supervisor_status_tell(s);
		break;
	}
}

static void on_launcher(enum launcher_report what, struct generation *g,
			gpointer data)
{
	struct supervisor *s = data;

	switch (what) {
	case LAUNCHER_SPAWNED:
		outcome_watch(s, g);
		break;
	case LAUNCHER_SERVES:
		outcome_serve(s, g);
		break;
	}
}

static void on_master(enum master_link_report what, struct generation *g,
		      gpointer data)
{
	struct supervisor *s = data;

	switch (what) {
	case MASTER_SERVES:
		outcome_serve(s, g);
		break;
	case MASTER_RELOADED:
		outcome_master_reloaded(s, g);
		break;
	}
}

static void on_first_start(enum first_start_report what, gpointer data)
{
	struct supervisor *s = data;

	switch (what) {
	case FIRST_START_SEARCHING:
		launcher_probe_early(s->launcher);
		break;
	}
}

/* ---- life cycle ---- */

struct supervisor *supervisor_new(const struct wrapper_args *args,
				  const struct wrapper_options *opts,
				  char **orig_argv)
{
	struct supervisor *s = g_new0(struct supervisor, 1);

	/* First: LISTEN_FDS must not reach anything we spawn, and what it
	 * names is what systemd handed, before any descriptor of ours. */
	s->rt.fdstore = fdstore_new(opts->fd_store);
	s->loop = g_main_loop_new(NULL, FALSE);
	s->args = args;
	s->opts = opts;
	s->hastderr = ha_stderr_new();
	s->foreign_view = g_ptr_array_new();
	gen_table_init(&s->gt);
	lifecycle_init(&s->life, s);
	s->reloader = reloader_new(&sv_reload_ops, s);
	reloader_set_ready_timeout(s->reloader, opts->ready_timeout_s);
	s->master = master_link_new(&s->gt, s->reloader, &s->rt, s->hastderr,
				    opts->max_old_workers,
				    opts->drain_timeout_s, on_master, s);
	s->reuseport = reuseport_new(opts->reuseport_migration);
	s->replacement = replacement_new(args, &s->gt, s->reloader, &s->rt,
					 s->reuseport, &s->metrics,
					 outcome_replacement, s);
	s->up = selfupgrade_new(&(struct selfupgrade_uses){
		.opts = opts, .gt = &s->gt, .reloader = s->reloader,
		.rt = &s->rt, .master = s->master,
		.replacement = s->replacement, .hastderr = s->hastderr,
		.metrics = &s->metrics,
	}, orig_argv, on_selfupgrade, s);
	s->first = first_start_new(args, opts->takeover, &s->gt, s->reloader,
				   &s->rt, s->reuseport, &s->metrics,
				   s->replacement, on_first_start, s);
	s->launcher = launcher_new(&(struct launcher_uses){
		.args = args, .opts = opts, .gt = &s->gt,
		.reloader = s->reloader, .rt = &s->rt,
		.reuseport = s->reuseport, .master = s->master,
		.first = s->first, .replacement = s->replacement,
		.hastderr = s->hastderr,
		.self_path = selfupgrade_image_path(s->up),
	}, on_launcher, s);
	s->handoff = handoff_new(args, opts, &s->gt, s->reloader, &s->rt,
				 s->launcher, s->replacement,
				 selfupgrade_image_path(s->up), on_handoff, s);
	return s;
}

static void teardown_runtime(struct supervisor *s)
{
	reloader_answer_all(s->reloader, "error: the wrapper exited");
	/* The launcher and the self-upgrade keep a copy of this pointer:
	 * both are cancelled already, and freeing them does not use it. */
	g_clear_pointer(&s->master, master_link_free);
	fdstore_leave(s->rt.fdstore);
	rundir_use_teardown(&s->rt);
}

/* WATCHDOG=1 only while a generation serves: a wrapper whose haproxy is
 * gone should be noticed. */
static gboolean on_watchdog(gpointer data)
{
	struct supervisor *s = data;

	if ((s->gt.current && !s->gt.current->exited) || adopted_serves(s))
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
	s->life.exit_code = rundir_use_setup(&s->rt, s->opts->runtime_dir,
				     s->args->pidfile, s->opts->seamless,
				     on_control, s);
	if (s->life.exit_code)
		return s->life.exit_code;
	fdstore_set_rundir(s->rt.fdstore, s->rt.control ? s->rt.dir : NULL,
			   s->rt.expose_sock);
	start_watchdog(s);
	if (!selfupgrade_restore(s->up)) {
		reloader_post(s->reloader, RE_START, NULL);
		first_start_begin(s->first);
	}
	if (!s->life.done)
		g_main_loop_run(s->loop);
	/* Witness and probes killed on the way out are ours to reap. */
	launcher_cancel(s->launcher);
	selfupgrade_cancel(s->up);
	child_reap_discarded(1000);
	gen_table_retract(&s->gt, s->args->pidfile);
	teardown_runtime(s);
	/* haproxy's last lines before our last one. */
	ha_stderr_flush(s->hastderr);
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
	lifecycle_clear(&s->life);
	g_clear_handle_id(&s->pending_idle, g_source_remove);
	g_clear_handle_id(&s->watchdog_timer, g_source_remove);
	launcher_free(s->launcher);
	handoff_free(s->handoff);
	gen_table_clear(&s->gt);
	reloader_free(s->reloader);
	master_link_free(s->master);
	first_start_free(s->first);
	replacement_free(s->replacement);
	g_clear_pointer(&s->foreign_view, g_ptr_array_unref);
	reuseport_free(s->reuseport);
	fdstore_free(s->rt.fdstore);
	rundir_use_clear(&s->rt);
	selfupgrade_free(s->up);
	ha_stderr_free(s->hastderr);
	g_main_loop_unref(s->loop);
	g_free(s);
}
