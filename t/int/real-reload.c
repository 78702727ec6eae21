/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reloads of the real haproxy (Debian's 2.6), by SIGUSR2 and SIGHUP: one
 * after the other, a burst coalesced, and a reload that fails (a broken
 * configuration, a port held by someone else) with what the client,
 * --status and systemd (a NOTIFY_SOCKET of ours) are told while the old
 * generation keeps serving. 127.0.0.1 only; every wait is on a real
 * event and bounded.
 */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/real.h"

static void test_serial_reloads(void)
{
	g_auto(TSite) s = { 0 };
	GPid wpid;

	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);
	wpid = s.w->pid;
	for (guint i = 0; i < 10; i++) {
		real_reload(&s, SIGUSR2, TRUE);
		g_assert_cmpuint(s.generation, ==, i + 2);
		g_assert_cmpint(s.w->pid, ==, wpid);
	}
	g_assert_cmpuint(real_count_haproxy_below(wpid), ==,
			 real_generation_size());
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

static void test_sighup_reloads(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *hup = real_reloading_line(SIGHUP);

	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);
	real_reload(&s, SIGHUP, TRUE);
	real_reload(&s, SIGHUP, TRUE);
	g_assert_cmpuint(s.generation, ==, 3);
	g_assert_cmpuint(wrapper_count_log(s.w, hup), ==, 2);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

/* Started (with opts), reloaded by SIGUSR2, stopped: how many lines held
 * needle, counted once the exit line, the last, was read. */
static guint reload_log_count(const char *const *opts, const char *needle)
{
	g_auto(TSite) s = { 0 };

	if (!t_site_init_real(&s, NULL))
		return G_MAXUINT;
	real_start(&s, NULL, opts);
	real_reload(&s, SIGUSR2, TRUE);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
	g_assert_nonnull(wrapper_wait_log(s.w, LOG_EXIT_RC, T_WAIT));
	g_assert_cmpuint(wrapper_count_log(s.w, LOG_RELOADING_ON), ==, 1);
	return wrapper_count_log(s.w, needle);
}

/* The journal (and `systemctl status`) keeps to the events: the reload
 * state machine's steps are logged only when --debug asks for them. */
static void test_reload_log_steps(void)
{
	static const char *const debug[] = { "--debug", NULL };
	guint quiet = reload_log_count(NULL, LOG_RELOAD_STEP);
	guint steps;

	if (quiet == G_MAXUINT)
		return;
	g_assert_cmpuint(quiet, ==, 0);
	steps = reload_log_count(debug, LOG_RELOAD_STEP);
	g_test_message("a start and a reload: %u step line(s) with --debug",
		       steps);
	g_assert_cmpuint(steps, >, 0);
	g_assert_cmpuint(reload_log_count(debug, LOG_STEP_READY_IDLE), >=, 1);
}

/* systemd hears READY=1 with the serving generation in STATUS=, and, when
 * failed, that the last reload failed. */
static void expect_ready(struct t_notify *n, struct t_site *s, gboolean failed)
{
	g_autofree gchar *msg = t_notify_expect(n, "READY=1", "STATUS=", NULL);
	g_autofree gchar *status = t_notify_field(msg, "STATUS");
	g_autofree gchar *serving = g_strdup_printf(STATUS_SERVING_FMT,
						    s->generation, s->pid);

	if (!g_str_has_prefix(status, serving) ||
	    (strstr(status, STATUS_LAST_FAILED) != NULL) != failed)
		g_error("STATUS= \"%s\", not generation %u (pid %d) serving%s",
			status, s->generation, s->pid,
			failed ? " after a failed reload" : "");
}

/* A reload as systemd (Type=notify-reload) must hear it: RELOADING=1,
 * then READY=1, failed or not. Nothing else, STOPPING=1 least of all:
 * the next datagram is the next reload's or the stop's. */
static void expect_reload_told(struct t_notify *n, struct t_site *s,
			       gboolean failed)
{
	g_free(t_notify_expect(n, "RELOADING=1", "MONOTONIC_USEC=", "STATUS=",
			       NULL));
	expect_ready(n, s, failed);
}

/* The client (ExecReload= of the notify-reload unit) asks for a reload
 * that haproxy gives up: a port held without SO_REUSEPORT, which it
 * retries, then fails. It is told the reason, never "ok". */
static void reload_port_held(struct t_site *s, guint number)
{
	g_autofree gchar *bind = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autofree gchar *which = g_strdup_printf("error: generation %u (pid ",
						  number);
	guint16 blocked = t_free_port();
	int fd = t_plain_listener(blocked);

	bind = g_strdup_printf("    bind 127.0.0.1:%u\n", blocked);
	t_site_config(s, bind);
	g_assert_cmpint(t_site_client(s, "--reload", &out, &err), ==, 1);
	if (!g_str_has_prefix(err, which) ||
	    !strstr(err, "exited with status 1 before it was ready"))
		g_error("--reload of a failing configuration: out \"%s\" "
			"err \"%s\"", out, err);
	g_assert_null(strstr(out, "ok"));
	real_assert_reload_failed(s);
	close(fd);
}

/* --status --json: the last reload failed, generation failed is listed as
 * such, and the one serving before still is. */
static void assert_status_json_failed(struct t_site *s, guint failed)
{
	g_autofree gchar *json = NULL;
	g_autofree gchar *serving = g_strdup_printf(
		"{\"number\":%u,\"pid\":%d,", s->generation, s->pid);
	g_autofree gchar *gone = g_strdup_printf("{\"number\":%u,", failed);
	const char *entry, *end;

	g_assert_cmpint(t_client("--status", s->rundir_opt, "--json", &json,
				 NULL), ==, 0);
	/* Its object, up to its closing brace (no nested object). */
	entry = strstr(json, gone);
	end = entry ? strchr(entry, '}') : NULL;
	if (!strstr(json, "\"last_reload\":{\"result\":\"failed\",") ||
	    !strstr(json, serving) || !end ||
	    !g_strstr_len(entry, end - entry + 1, "\"state\":\"failed\"}"))
		g_error("--status --json after a failed reload:\n%s", json);
}

static void test_bad_config_reload(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(TNotify) n = { .skip_extend = TRUE };
	g_autofree gchar *status = NULL;

	if (!t_site_init_real(&s, NULL))
		return;
	s.with_runtime_dir = TRUE;
	t_notify_open(&n, s.dir);
	t_site_setenv(&s, "NOTIFY_SOCKET", n.path);
	real_start(&s, NULL, NULL);
	expect_ready(&n, &s, FALSE);

	t_site_config(&s, "    no-such-keyword here\n");
	wrapper_signal(s.w, SIGUSR2);
	real_assert_reload_failed(&s);
	expect_reload_told(&n, &s, TRUE);
	/* What systemd's StatusText and an operator's --status show. */
	g_assert_cmpint(t_site_client(&s, "--status", &status, NULL), ==, 0);
	if (!strstr(status, "last reload: failed in ") ||
	    !strstr(status, "generation 2 (pid "))
		g_error("--status after a failed reload:\n%s", status);
	assert_status_json_failed(&s, 2);

	t_site_config(&s, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	/* Generation 2 was the failed one: its number is not reused. */
	g_assert_cmpuint(s.generation, ==, 3);
	expect_reload_told(&n, &s, FALSE);

	reload_port_held(&s, 4);
	expect_reload_told(&n, &s, TRUE);

	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
	g_free(t_notify_expect(&n, "STOPPING=1", "STATUS=", NULL));
	g_assert_null(t_notify_recv(&n, 0));
}

static void test_burst_coalesce(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *winch = NULL;
	g_autofree gchar *usr2_line = real_reloading_line(SIGUSR2);
	g_autofree gchar *hup_line = real_reloading_line(SIGHUP);
	guint usr2, hup, executing;
	const char *line;

	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);

	for (int i = 0; i < 50; i++)
		wrapper_signal(s.w, SIGUSR2);
	/*
	 * Barrier: signalfd hands out the lowest pending signal first, so
	 * once SIGWINCH (28) is read every SIGUSR2 (12) sent before it has
	 * been read too. A SIGHUP after that either starts the last reload
	 * or replaces the pending one; once it is ready, nothing follows.
	 */
	wrapper_signal(s.w, SIGWINCH);
	winch = g_strdup_printf(LOG_IGNORING_FMT, "SIGWINCH", getpid());
	t_site_wait_log(&s, winch);
	wrapper_signal(s.w, SIGHUP);
	t_site_wait_log(&s, hup_line);
	line = t_site_wait_log(&s, LOG_READY_PID);
	s.pid = t_pid_in(line, "pid ");
	real_assert_pidfile(&s);

	usr2 = wrapper_count_log(s.w, usr2_line);
	hup = wrapper_count_log(s.w, hup_line);
	executing = wrapper_count_log(s.w, LOG_EXECUTING);
	g_test_message("50 x SIGUSR2 made %u reload(s)", usr2);
	g_assert_cmpuint(usr2, >=, 1);
	g_assert_cmpuint(usr2, <=, 3);
	g_assert_cmpuint(hup, ==, 1);
	g_assert_cmpuint(executing, ==, 1 + usr2 + hup);
	g_assert_cmpuint(wrapper_count_log(s.w, LOG_READY_PID), ==, executing);
	g_assert_null(wrapper_find_log(s.w, LOG_RELOAD_FAILED));

	/* Every generation but the last ends; the last one serves. */
	for (guint i = 0; i < s.w->lines->len; i++) {
		const char *l = g_ptr_array_index(s.w->lines, i);
		GPid p = strstr(l, LOG_READY_PID) ? t_pid_in(l, "pid ") : 0;

		if (p && p != s.pid)
			g_assert_true(t_wait_gone(p, T_WAIT));
	}
	g_assert_cmpuint(real_count_haproxy_below(s.w->pid), ==,
			 real_generation_size());
	g_assert_cmpint(wait_answered_by(s.port, real_worker(&s)), ==,
			real_worker(&s));
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

/* Right at the ready line, not later: the -Ds parent (before 1.8) has
 * forked its worker and the pidfile names it. */
static void assert_worker_written(struct t_site *s, const char *ready)
{
	GPid gen = t_pid_in(ready, "pid ");
	g_autoptr(GArray) workers = proc_children(gen);

	g_assert_cmpuint(workers->len, ==, 1);
	g_assert_true(real_is_haproxy(g_array_index(workers, GPid, 0)));
	t_assert_pidfile_holds(s->pidfile, g_array_index(workers, GPid, 0));
}

/*
 * haproxy 1.5 and 1.7 signal their -sf pids (our witness among them) once
 * bound, before the -Ds parent forks the worker and writes the pidfile.
 * Ready (READY=1, --reload's answer, the next reload's -sf) must wait for
 * the worker: else the pidfile is empty, and a reload coming at once
 * signals the -Ds parent, which never acts on it.
 */
static void test_ds_ready_after_fork(void)
{
	g_auto(TSite) s = { 0 };

	if (t_haproxy_at_least(1, 8)) {
		g_test_skip("haproxy 1.8 and later run as -db: one process "
			    "a generation, nothing forked");
		return;
	}
	if (!t_site_init_real(&s, NULL))
		return;
	t_site_start_wrapper(&s, NULL, NULL);
	assert_worker_written(&s, t_site_wait_log(&s, LOG_READY_PID));
	for (guint i = 0; i < 20; i++) {
		wrapper_signal(s.w, SIGUSR2);
		assert_worker_written(&s, t_site_wait_log(&s, LOG_READY_PID));
	}
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What a wrapper leaves behind becomes ours: seen, and ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	t_cleanup_on_abort();

	g_test_add_func("/real/serial-reloads", test_serial_reloads);
	g_test_add_func("/real/sighup-reloads", test_sighup_reloads);
	g_test_add_func("/real/reload-log-steps", test_reload_log_steps);
	g_test_add_func("/real/bad-config-reload", test_bad_config_reload);
	g_test_add_func("/real/burst-coalesce", test_burst_coalesce);
	g_test_add_func("/real/ds-ready-after-fork", test_ds_ready_after_fork);
	return g_test_run();
}
