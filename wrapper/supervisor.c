/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/supervisor.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "legacy/launch.h"
#include "legacy/pidfile.h"
#include "legacy/version.h"
#include "migrate/proc.h"
#include "wrapper/child.h"
#include "wrapper/control.h"
#include "wrapper/generation.h"
#include "wrapper/log.h"
#include "wrapper/notify.h"
#include "wrapper/probe.h"
#include "wrapper/rundir.h"
#include "wrapper/signals.h"
#include "wrapper/state.h"
#include "wrapper/status.h"
#include "wrapper/upgrade.h"

#define VERSION_PROBE_TIMEOUT_MS 10000
/* While haproxy loads, systemd is told every EXTEND_EVERY_S that it is
 * still alive, and given EXTEND_BY_US more. */
#define EXTEND_EVERY_S 10
#define EXTEND_BY_US (30 * G_USEC_PER_SEC)

enum phase {
	PHASE_STARTING,	/* the first generation is not ready yet */
	PHASE_RUNNING,
	PHASE_STOPPING,
};

/* "haproxy -v" is asked again only when the binary changed. */
struct version_cache {
	gchar *path;
	struct stat st;
	struct haproxy_version version;
};

struct supervisor {
	GMainLoop *loop;
	const struct wrapper_args *args;
	const struct wrapper_options *opts;
	char **orig_argv;
	struct self_image self;
	gboolean can_upgrade;

	GPtrArray *gens;		/* oldest first; owns them */
	struct generation *current;
	struct generation *starting;
	guint next_number;
	guint reloads;
	enum phase phase;

	/* One reload in flight; any number of requests meanwhile make one
	 * more. "busy" spans the upgrade check, the version probe and the
	 * starting generation. */
	gboolean busy;
	int reload_signal;
	gboolean reload_pending;
	int pending_signal;
	gboolean pending_hard;
	guint pending_idle;
	/* Reload attempts are numbered (0: the first start). A client that
	 * asks for a reload waits for the first attempt after its request. */
	guint attempt;
	gboolean attempt_hard;		/* this one uses -st */
	gint64 attempt_started_us;
	GPtrArray *waiters;		/* struct waiter * */
	struct reload_report last;
	struct failed_generation failed;
	gboolean skip_upgrade;		/* this reload follows our own exec */
	struct probe *probe;
	guint ready_timer;
	gchar *haproxy_path;		/* of the generation being started */
	struct version_cache vcache;

	/* The serving generation ended while its successor was starting:
	 * usually the soft stop the successor sent once bound, which can
	 * reach us before the witness does. The successor decides. */
	gboolean current_lost;
	int lost_status;
	enum launch_mode lost_mode;

	struct control *control;
	gchar *rundir;
	gchar *expose_cfg;		/* our -f fragment; NULL: no -x */
	gchar *expose_sock;
	guint extend_timer;
	guint watchdog_timer;
	gboolean told_migrate_req;

	gboolean stop_hard;
	guint stop_timer;
	gboolean done;
	gboolean have_exit_code;
	int exit_code;
	GPid pidfile_pid;		/* what we wrote there, 0 if nothing */
};

struct waiter {
	struct control_client *client;
	guint target;
};

static void begin_reload(struct supervisor *s, int sig, gboolean hard);
static void begin_stop(struct supervisor *s, int sig);
static void launch(struct supervisor *s);

static void set_exit_code(struct supervisor *s, int code)
{
	if (!s->have_exit_code) {
		s->have_exit_code = TRUE;
		s->exit_code = code;
	}
}

static void quit_if_done(struct supervisor *s)
{
	if (s->phase == PHASE_STOPPING && s->gens->len == 0) {
		/* May happen before the loop runs: "done" covers that. */
		s->done = TRUE;
		g_main_loop_quit(s->loop);
	}
}

static void forget_generation(struct supervisor *s, struct generation *g)
{
	if (s->current == g)
		s->current = NULL;
	if (s->starting == g)
		s->starting = NULL;
	g_ptr_array_remove(s->gens, g);
	quit_if_done(s);
}

/* ---- the pidfile, for scripts that read it (-db writes none) ---- */

static void pidfile_publish(struct supervisor *s, struct generation *g)
{
	g_autoptr(GError) error = NULL;

	if (!s->args->pidfile || g->mode != LAUNCH_DB)
		return;
	if (!pidfile_write(s->args->pidfile, &g->pid, 1, &error)) {
		log_warn("cannot write pidfile: %s", error->message);
		return;
	}
	s->pidfile_pid = g->pid;
}

/* Remove the pidfile at exit, only if it still says what we wrote. */
static void pidfile_retract(struct supervisor *s)
{
	g_autoptr(GArray) pids = NULL;

	if (!s->pidfile_pid ||
	    !pidfile_read(s->args->pidfile, &pids, NULL, NULL))
		return;
	if (pids->len == 1 && g_array_index(pids, GPid, 0) == s->pidfile_pid)
		unlink(s->args->pidfile);
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

		if (!exe && kill(pid, 0) < 0 && errno == ESRCH)
			continue;
		log_notice("pidfile %s names pid %d (%s), which this wrapper "
			   "did not start; it gets no signal from us",
			   s->args->pidfile, pid, exe ? exe : "unknown program");
	}
}

static gboolean run_pending_reload(gpointer data)
{
	struct supervisor *s = data;

	s->pending_idle = 0;
	if (s->reload_pending && !s->busy && s->phase == PHASE_RUNNING) {
		s->reload_pending = FALSE;
		begin_reload(s, s->pending_signal, s->pending_hard);
		s->pending_hard = FALSE;
	}
	return G_SOURCE_REMOVE;
}

/* The status a serving generation's unasked-for end gives the wrapper. */
static int lost_exit_code(enum launch_mode mode, int status)
{
	int code = shell_status(status);

	/* A -Ds parent exits 0 whenever its workers are gone, crashed or
	 * killed: its 0 says nothing, and must not read as success. */
	return mode == LAUNCH_DS && code == 0 ? 1 : code;
}

/* ---- status, notification, waiting clients ---- */

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

static struct status_view status_view_of(struct supervisor *s)
{
	return (struct status_view){
		.wrapper_pid = getpid(),
		.phase = phase_name(s->phase),
		.reloads = s->reloads,
		.last = &s->last,
		.failed = &s->failed,
		.gens = s->gens,
		.current = s->current,
	};
}

static gchar *summary(struct supervisor *s)
{
	struct status_view v = status_view_of(s);

	return status_summary(&v);
}

/* Answer every client waiting for an attempt up to "upto". */
static void answer_waiters(struct supervisor *s, guint upto, const char *text)
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

/* ---- the end of a reload, however it ended ---- */

static void reload_finished(struct supervisor *s, gboolean ok, const char *msg)
{
	g_autofree gchar *answer = g_strdup_printf("%s%s", ok ? "ok " : "error: ",
						   msg);
	g_autofree gchar *line = NULL;

	if (s->attempt > 0)
		record_reload(s, ok, msg);
	line = summary(s);
	/* systemd waits for READY=1 after RELOADING=1, failed or not. */
	if (s->phase != PHASE_STOPPING)
		notify_ready(line);
	answer_waiters(s, s->attempt, answer);
	g_clear_handle_id(&s->extend_timer, g_source_remove);
	g_clear_handle_id(&s->ready_timer, g_source_remove);
	g_clear_pointer(&s->haproxy_path, g_free);
	s->busy = FALSE;
	s->skip_upgrade = FALSE;
	/* From the loop, not from inside whichever event ended this one. */
	if (s->reload_pending && !s->pending_idle)
		s->pending_idle = g_idle_add(run_pending_reload, s);
}

/* Could not even start a generation (no haproxy, no version, no fork). */
static void launch_failed(struct supervisor *s, int exit_code,
			  const char *fmt, ...) G_GNUC_PRINTF(3, 4);

static void launch_failed(struct supervisor *s, int exit_code,
			  const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (s->phase == PHASE_STARTING) {
		g_autofree gchar *answer = g_strdup_printf("error: %s", msg);

		log_err("cannot start haproxy: %s", msg);
		set_exit_code(s, exit_code);
		answer_waiters(s, G_MAXUINT, answer);
		begin_stop(s, SIGTERM);
		return;
	}
	if (s->current_lost) {
		log_err("reload failed: %s; and no generation is serving: "
			"stopping", msg);
		set_exit_code(s, lost_exit_code(s->lost_mode, s->lost_status));
		begin_stop(s, SIGTERM);
		return;
	}
	log_err("reload failed: %s; generation %u (pid %d) keeps serving",
		msg, s->current->number, s->current->pid);
	reload_finished(s, FALSE, msg);
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

/* More than max-old-workers generations draining: the oldest go now. */
static void bound_draining(struct supervisor *s)
{
	guint draining = 0;

	if (s->opts->max_old_workers < 0)
		return;
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		if (g->state == GEN_DRAINING && !g->terminated)
			draining++;
	}
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

static void generation_ready(struct supervisor *s, struct generation *g)
{
	struct generation *old = s->current;

	witness_stop(&g->witness);
	g->state = GEN_CURRENT;
	s->current = g;
	s->starting = NULL;
	s->current_lost = FALSE;
	if (old) {
		old->state = GEN_DRAINING;
		/* A -Ds parent may have forked workers after we listed them
		 * for -sf; a second SIGUSR1 to the others is harmless. */
		if (old->mode == LAUNCH_DS && !s->attempt_hard)
			generation_signal(old, SIGUSR1, FALSE);
		start_drain_clock(s, old);
	}
	bound_draining(s);
	pidfile_publish(s, g);
	failed_generation_clear(&s->failed);
	log_notice("generation %u ready: pid %d, haproxy %s", g->number,
		   g->pid, g->version);
	if (s->phase == PHASE_STARTING)
		s->phase = PHASE_RUNNING;
	else
		s->reloads++;
	{
		g_autofree gchar *msg = g_strdup_printf(
			"generation %u (pid %d) serving", g->number, g->pid);

		reload_finished(s, TRUE, msg);
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
		generation_ready(s, g);
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

static void on_generation_exit(GPid pid, int status, gpointer data);

static void watch_generation(struct supervisor *s, struct generation *g)
{
	g->child_source = g_child_watch_add(g->pid, on_generation_exit, s);
}

static struct generation *find_generation(struct supervisor *s, GPid pid)
{
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

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
	guint number = g->number;
	GPid pid = g->pid;
	int code = shell_status(status);
	gboolean addr_in_use = g->warned_addr_in_use;

	failed_generation_clear(&s->failed);
	s->failed = (struct failed_generation){
		.valid = TRUE,
		.number = number,
		.pid = pid,
		.started_us = g->started_us,
		.how = g_strdup(how),
	};
	g_strlcpy(s->failed.version, g->version, sizeof(s->failed.version));
	forget_generation(s, g);
	if (s->phase == PHASE_STOPPING) {
		log_info("generation %u (pid %d) %s while starting", number,
			 pid, how);
		reload_finished(s, FALSE, "stopped while starting");
		return;
	}
	/* Ending before it was ready is a failure, whatever the status. */
	launch_failed(s, code ? code : 1,
		      "generation %u (pid %d) %s%s before it was ready", number,
		      pid, addr_in_use ? "could not bind its addresses and " : "",
		      how);
}

/* The serving generation ended without being asked to: the service is
 * down, so stop the rest and exit with its status for Restart=. */
static void current_generation_exited(struct supervisor *s,
				      struct generation *g, int status)
{
	g_autofree gchar *how = describe_wait_status(status);

	if (s->starting) {
		log_info("generation %u (pid %d) %s while generation %u "
			 "starts", g->number, g->pid, how, s->starting->number);
		s->current_lost = TRUE;
		s->lost_status = status;
		s->lost_mode = g->mode;
		forget_generation(s, g);
		return;
	}
	log_err("generation %u (pid %d), the one serving, %s on its own; "
		"stopping", g->number, g->pid, how);
	set_exit_code(s, lost_exit_code(g->mode, status));
	forget_generation(s, g);
	begin_stop(s, SIGTERM);
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
	if (g == s->starting)
		witness_flush(&g->witness);
	if (g == s->starting) {
		starting_generation_exited(s, g, status);
	} else if (g == s->current && s->phase != PHASE_STOPPING) {
		current_generation_exited(s, g, status);
	} else {
		log_info("generation %u (pid %d) finished: %s", g->number,
			 g->pid, how);
		forget_generation(s, g);
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
	}
	return G_SOURCE_REMOVE;
}

/* Old pids for -sf: every live generation's, then the user's own -sf/-st
 * pids for the first generation only. */
static GArray *old_pids(struct supervisor *s, gboolean *hard)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	*hard = FALSE;
	for (guint i = 0; i < s->gens->len; i++)
		generation_sf_pids(g_ptr_array_index(s->gens, i), pids);
	if (s->next_number == 1 && s->args->user_old_pids) {
		g_array_append_vals(pids, s->args->user_old_pids->data,
				    s->args->user_old_pids->len);
		*hard = s->args->user_old_hard;
	}
	return pids;
}

/* The serving generation's listeners socket, if a new one can take its
 * sockets from there (-x fails hard on a missing socket: check first). */
static gboolean can_take_listeners(struct supervisor *s)
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
	if (can_take_listeners(s)) {
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

static void spawn_generation(struct supervisor *s,
			     const struct haproxy_version *v)
{
	enum launch_mode mode = haproxy_version_launch_mode(v);
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) pids = NULL;
	g_auto(GStrv) argv = NULL;
	g_auto(GStrv) extra = NULL;
	struct generation *g;
	gboolean hard, exposes;

	if (mode == LAUNCH_DS)
		notice_migrate_req(s);
	g = generation_new(s->next_number, mode, v->full);
	if (!witness_start(&g->witness, on_witness, s, &error)) {
		generation_free(g);
		launch_failed(s, EXIT_OS_ERROR, "%s", error->message);
		return;
	}
	pids = old_pids(s, &hard);
	hard = hard || s->attempt_hard;
	extra = extra_args(s, v, &exposes);
	g->exposes = exposes;
	argv = haproxy_argv_build(s->haproxy_path, mode, s->args,
				  (const char *const *)extra,
				  (GPid *)pids->data, pids->len,
				  g->witness.pid, hard);
	if (!haproxy_spawn(argv, &g->pid, &error)) {
		int code = g_error_matches(error, G_SPAWN_ERROR,
					   G_SPAWN_ERROR_NOENT)
				   ? EXIT_HAPROXY_NOT_FOUND
				   : EXIT_HAPROXY_NOT_EXECUTABLE;

		generation_free(g);
		launch_failed(s, code, "execv(%s) failed: %s",
			      s->haproxy_path, error->message);
		return;
	}
	s->next_number++;
	g_ptr_array_add(s->gens, g);
	s->starting = g;
	watch_generation(s, g);
	if (s->opts->ready_timeout_s)
		s->ready_timer = g_timeout_add_seconds(s->opts->ready_timeout_s,
						       on_ready_timeout, s);
	/* Only under systemd: no wakeup for nobody. */
	if (g_getenv("NOTIFY_SOCKET"))
		s->extend_timer = g_timeout_add_seconds(EXTEND_EVERY_S,
							on_extend, s);
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
		launch_failed(s, EXIT_NO_VERSION, "%s -v: %s", s->haproxy_path,
			      error->message);
		return;
	}
	if (!haproxy_version_parse(output, &v)) {
		g_autofree gchar *how = describe_wait_status(wait_status);

		launch_failed(s, EXIT_NO_VERSION,
			      "%s -v %s and printed no haproxy version",
			      s->haproxy_path, how);
		return;
	}
	if (stat(s->haproxy_path, &st) == 0) {
		g_free(s->vcache.path);
		s->vcache.path = g_strdup(s->haproxy_path);
		s->vcache.st = st;
		s->vcache.version = v;
	}
	spawn_generation(s, &v);
}

/* Locate haproxy anew, as the 1.x wrapper did at every spawn. */
static void launch(struct supervisor *s)
{
	g_autoptr(GError) error = NULL;
	struct stat st;

	s->haproxy_path = haproxy_locate(s->opts->haproxy, s->self.path, &error);
	if (!s->haproxy_path) {
		launch_failed(s, EXIT_HAPROXY_NOT_FOUND, "%s", error->message);
		return;
	}
	if (stat(s->haproxy_path, &st) < 0) {
		launch_failed(s, EXIT_HAPROXY_NOT_FOUND, "%s: %s",
			      s->haproxy_path, g_strerror(errno));
		return;
	}
	if (access(s->haproxy_path, X_OK) < 0) {
		launch_failed(s, EXIT_HAPROXY_NOT_EXECUTABLE, "%s: %s",
			      s->haproxy_path, g_strerror(errno));
		return;
	}
	if (vcache_lookup(s, &st)) {
		spawn_generation(s, &s->vcache.version);
		return;
	}
	{
		char *argv[] = { s->haproxy_path, (char *)"-v", NULL };

		s->probe = probe_start(argv, VERSION_PROBE_TIMEOUT_MS,
				       on_version, s);
	}
}

/* ---- reload, with the optional self upgrade in front ---- */

/* The waiting clients' descriptors stay open across the exec. */
static GArray *handover_waiters(struct supervisor *s)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(struct handover_waiter));

	for (guint i = 0; i < s->waiters->len; i++) {
		struct waiter *w = g_ptr_array_index(s->waiters, i);
		struct handover_waiter hw = {
			.fd = control_client_handover_fd(w->client),
			.target = w->target,
		};

		g_array_append_val(out, hw);
	}
	return out;
}

static struct handover handover_of(struct supervisor *s)
{
	return (struct handover){
		.next_number = s->next_number,
		.reloads = s->reloads,
		.reload_signal = s->reload_signal,
		.reload_pending = s->reload_pending,
		.attempt = s->attempt,
		.hard = s->attempt_hard,
		.pending_hard = s->pending_hard,
		.gens = s->gens,
		.waiters = handover_waiters(s),
	};
}

static void on_upgrade_check(const char *output, int wait_status,
			     const GError *error, gpointer data)
{
	struct supervisor *s = data;
	g_autofree gchar *state = NULL;
	struct handover h;

	s->probe = NULL;
	if (error || !upgrade_check_passed(output, wait_status)) {
		log_err("not upgrading: %s --upgrade-check %s; reloading with "
			"the running wrapper", s->self.path,
			error ? error->message : "gave an unexpected answer");
		launch(s);
		return;
	}
	h = handover_of(s);
	state = state_serialize(&h);
	g_array_unref(h.waiters);
	log_notice("re-executing on %s.", signal_name(s->reload_signal));
	upgrade_exec(&s->self, s->orig_argv, state);
	launch(s);
}

static gboolean upgrade_wanted(struct supervisor *s)
{
	if (!s->can_upgrade || s->skip_upgrade)
		return FALSE;
	switch (s->opts->self_upgrade) {
	case SELF_UPGRADE_ALWAYS:
		return TRUE;
	case SELF_UPGRADE_NEVER:
		return FALSE;
	case SELF_UPGRADE_AUTO:
		break;
	}
	return self_image_replaced(&s->self);
}

static void begin_reload(struct supervisor *s, int sig, gboolean hard)
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
		line = summary(s);
		notify_reloading(line);
	}
	if (upgrade_wanted(s))
		s->probe = upgrade_check_start(&s->self, on_upgrade_check, s);
	else
		launch(s);
}

/* sig: the signal that asked, or 0 for the control socket. client: who
 * waits for the verdict, if anyone. */
static void request_reload(struct supervisor *s, int sig, gboolean hard,
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
	if (s->busy) {
		if (!s->reload_pending)
			log_info("%s: a reload is in progress; one more will "
				 "follow it", who);
		s->reload_pending = TRUE;
		s->pending_signal = sig;
		s->pending_hard = s->pending_hard || hard;
		return;
	}
	begin_reload(s, sig, hard);
}

static void on_control(struct control_client *c, const char *line,
		       gpointer data)
{
	struct supervisor *s = data;
	struct status_view v = status_view_of(s);
	g_autofree gchar *text = NULL;

	if (g_str_equal(line, "reload")) {
		request_reload(s, 0, FALSE, c);
	} else if (g_str_equal(line, "hard-reload")) {
		request_reload(s, 0, TRUE, c);
	} else if (g_str_equal(line, "status")) {
		text = status_text(&v);
		control_reply(c, text);
	} else if (g_str_equal(line, "status json")) {
		text = status_json(&v);
		control_reply(c, text);
	} else {
		control_reply(c, "error: unknown command (reload, hard-reload, "
				 "status, status json)");
	}
}

/* ---- stop ---- */

static gboolean on_stop_timeout(gpointer data)
{
	struct supervisor *s = data;

	s->stop_timer = 0;
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		log_warn("generation %u (pid %d) still running %us after the "
			 "stop; SIGKILL", g->number, g->pid,
			 s->opts->stop_timeout_s);
		generation_signal(g, SIGKILL, FALSE);
	}
	return G_SOURCE_REMOVE;
}

static void signal_all(struct supervisor *s, int sig)
{
	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		/* A haproxy still loading has nothing to drain. */
		generation_signal(g, g->state == GEN_STARTING ? SIGTERM : sig,
				  TRUE);
	}
}

/* SIGTERM/SIGINT: hard, bounded; SIGUSR1: graceful, haproxy's soft stop. */
static void begin_stop(struct supervisor *s, int sig)
{
	gboolean hard = sig != SIGUSR1;

	if (s->phase == PHASE_STOPPING) {
		if (!hard || s->stop_hard)
			return;
		log_notice("%s while stopping gracefully: stopping now",
			   signal_name(sig));
	}
	if (s->phase != PHASE_STOPPING) {
		g_autofree gchar *line = NULL;

		s->phase = PHASE_STOPPING;
		line = summary(s);
		notify_stopping(line);
	}
	s->reload_pending = FALSE;
	answer_waiters(s, G_MAXUINT, "error: stopping");
	if (s->probe)
		g_clear_pointer(&s->probe, probe_cancel);
	signal_all(s, sig);
	if (hard && !s->stop_hard && s->opts->stop_timeout_s)
		s->stop_timer = g_timeout_add_seconds(s->opts->stop_timeout_s,
						      on_stop_timeout, s);
	s->stop_hard = hard;
	if (!s->starting && s->busy)
		reload_finished(s, FALSE, "stopping");
	quit_if_done(s);
}

static void on_signal(const struct signalfd_siginfo *si, gpointer data)
{
	struct supervisor *s = data;
	int sig = si->ssi_signo;

	switch (sig) {
	case SIGUSR2:
	case SIGHUP:
		request_reload(s, sig, FALSE, NULL);
		break;
	case SIGTERM:
	case SIGINT:
	case SIGUSR1:
		log_notice("%s from pid %u: %s", signal_name(sig), si->ssi_pid,
			   sig == SIGUSR1 ? "stopping gracefully" : "stopping");
		begin_stop(s, sig);
		break;
	default:
		log_info("ignoring %s from pid %u", signal_name(sig), si->ssi_pid);
		break;
	}
}

/* ---- a new image after a self upgrade takes the generations back ---- */

static gboolean fd_is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void child_discard_strays_of(struct supervisor *s)
{
	g_autoptr(GArray) keep = g_array_new(FALSE, FALSE, sizeof(GPid));

	for (guint i = 0; i < s->gens->len; i++) {
		struct generation *g = g_ptr_array_index(s->gens, i);

		g_array_append_val(keep, g->pid);
	}
	child_discard_strays(keep);
}

static gboolean adopt(struct supervisor *s, struct handover *h)
{
	GPid self = getpid();

	while (h->gens->len) {
		struct generation *g = g_ptr_array_steal_index(h->gens, 0);

		/* A leaked variable may name anyone: only our children. */
		if (proc_parent(g->pid) != self) {
			log_warn("handover names pid %d, not our child; ignored",
				 g->pid);
			generation_free(g);
			continue;
		}
		g_ptr_array_add(s->gens, g);
		if (g->state == GEN_CURRENT)
			s->current = g;
		/* Same instance, same runtime directory, same fragment. */
		g->exposes = s->expose_cfg && g->mode == LAUNCH_DB;
		watch_generation(s, g);
	}
	child_discard_strays_of(s);
	/* A leaked variable must not even renumber a fresh start. */
	if (s->gens->len) {
		s->next_number = h->next_number;
		s->reloads = h->reloads;
	}
	if (!s->current) {
		log_warn("handover has no serving generation; starting anew");
		return FALSE;
	}
	s->phase = PHASE_RUNNING;
	log_notice("%s %s running, adopted %u generation(s)", LOG_IDENT,
		   WRAPPER_VERSION, s->gens->len);
	return TRUE;
}

/* Clients that were waiting for the reload this image now carries out. */
static void adopt_waiters(struct supervisor *s, struct handover *h,
			  gboolean adopted)
{
	for (guint i = 0; i < h->waiters->len; i++) {
		struct handover_waiter *hw =
			&g_array_index(h->waiters, struct handover_waiter, i);
		struct control_client *c;
		struct waiter *w;

		/* Only sockets: a leaked variable may name any descriptor. */
		if (!s->control || !fd_is_socket(hw->fd))
			continue;
		c = control_adopt(s->control, hw->fd);
		if (!c)
			continue;
		if (!adopted) {
			control_reply(c, "error: the upgraded wrapper could "
					 "not take over; starting anew");
			continue;
		}
		w = g_new0(struct waiter, 1);
		*w = (struct waiter){ .client = c, .target = hw->target };
		g_ptr_array_add(s->waiters, w);
	}
}

static gboolean restore_handover(struct supervisor *s)
{
	const char *text = g_getenv(STATE_ENV);
	struct handover h;
	gboolean adopted;

	if (!text)
		return FALSE;
	if (!state_parse(text, &h)) {
		log_warn("ignoring malformed %s", STATE_ENV);
		handover_clear(&h);
		g_unsetenv(STATE_ENV);
		return FALSE;
	}
	g_unsetenv(STATE_ENV);
	adopted = adopt(s, &h);
	adopt_waiters(s, &h, adopted);
	if (adopted) {
		s->skip_upgrade = TRUE;
		s->reload_pending = h.reload_pending;
		s->pending_signal = h.reload_signal;
		s->pending_hard = h.pending_hard;
		/* The same attempt, carried on by the new image. */
		s->attempt = h.attempt - 1;
		begin_reload(s, h.reload_signal, h.hard);
	}
	handover_clear(&h);
	return adopted;
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
	s->orig_argv = orig_argv;
	s->gens = g_ptr_array_new_with_free_func(
		(GDestroyNotify)generation_free);
	s->waiters = g_ptr_array_new_with_free_func(g_free);
	s->next_number = 1;
	s->can_upgrade = self_image_init(&s->self);
	if (!s->can_upgrade && opts->self_upgrade != SELF_UPGRADE_NEVER)
		log_warn("cannot read /proc/self/exe: self-upgrade disabled");
	return s;
}

/* The fragment that makes every generation expose its listening sockets
 * on a private socket, from which the next one takes them (-x). */
static gboolean write_expose_config(struct supervisor *s, GError **error)
{
	g_autofree gchar *text = g_strdup_printf(
		"# Written by " LOG_IDENT ": lets a reloaded haproxy take over\n"
		"# the listening sockets of the previous one (-x).\n"
		"global\n"
		"    stats socket %s mode 600 level admin expose-fd listeners\n",
		s->expose_sock);

	return g_file_set_contents_full(s->expose_cfg, text, -1,
					G_FILE_SET_CONTENTS_CONSISTENT, 0600,
					error);
}

/* Control socket and listeners fragment. Neither is vital: without them
 * the wrapper runs as the 1.x one did, and says so. */
static void setup_runtime(struct supervisor *s)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *control = NULL;

	s->rundir = rundir_path(s->opts->runtime_dir, s->args->pidfile);
	if (!rundir_create(s->rundir, &error)) {
		log_warn("%s: no control socket, no seamless reload",
			 error->message);
		return;
	}
	control = rundir_control_socket(s->rundir);
	s->control = control_listen(control, on_control, s, &error);
	if (!s->control) {
		log_warn("%s: no control socket", error->message);
		/* Another live wrapper owns this directory: its listeners
		 * socket is not ours to take sockets from. */
		if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_EXIST))
			return;
		g_clear_error(&error);
	}
	if (!s->opts->seamless)
		return;
	s->expose_sock = rundir_expose_socket(s->rundir);
	if (!rundir_socket_path_fits(s->expose_sock)) {
		log_warn("%s: path too long for a socket; no seamless reload",
			 s->expose_sock);
		g_clear_pointer(&s->expose_sock, g_free);
		return;
	}
	s->expose_cfg = rundir_expose_config(s->rundir);
	if (!write_expose_config(s, &error)) {
		log_warn("%s: no seamless reload", error->message);
		g_clear_pointer(&s->expose_cfg, g_free);
	}
}

static void teardown_runtime(struct supervisor *s)
{
	answer_waiters(s, G_MAXUINT, "error: the wrapper exited");
	g_clear_pointer(&s->control, control_free);
	/* Every haproxy of ours is gone: their listeners socket too. */
	if (s->expose_cfg) {
		unlink(s->expose_cfg);
		unlink(s->expose_sock);
	}
	if (s->rundir)
		rmdir(s->rundir);	/* only if empty: haproxy's socket stays */
}

/* WATCHDOG=1 only while a generation serves: a wrapper whose haproxy is
 * gone should be noticed. */
static gboolean on_watchdog(gpointer data)
{
	struct supervisor *s = data;

	if (s->current && !s->current->exited)
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
	setup_runtime(s);
	start_watchdog(s);
	if (!restore_handover(s)) {
		pidfile_notice_strangers(s);
		s->busy = TRUE;
		s->attempt_started_us = g_get_monotonic_time();
		launch(s);
	}
	if (!s->done)
		g_main_loop_run(s->loop);
	pidfile_retract(s);
	teardown_runtime(s);
	if (!s->have_exit_code)
		s->exit_code = 0;
	log_notice("exit, haproxy RC=%d", s->exit_code);
	return s->exit_code;
}

void supervisor_free(struct supervisor *s)
{
	g_clear_handle_id(&s->stop_timer, g_source_remove);
	g_clear_handle_id(&s->ready_timer, g_source_remove);
	g_clear_handle_id(&s->pending_idle, g_source_remove);
	g_clear_handle_id(&s->extend_timer, g_source_remove);
	g_clear_handle_id(&s->watchdog_timer, g_source_remove);
	if (s->probe)
		probe_cancel(s->probe);
	g_ptr_array_unref(s->gens);
	g_ptr_array_unref(s->waiters);
	reload_report_clear(&s->last);
	failed_generation_clear(&s->failed);
	g_free(s->rundir);
	g_free(s->expose_cfg);
	g_free(s->expose_sock);
	g_free(s->haproxy_path);
	g_free(s->vcache.path);
	self_image_clear(&s->self);
	g_main_loop_unref(s->loop);
	g_free(s);
}
