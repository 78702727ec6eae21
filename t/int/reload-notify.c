/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What systemd hears across reloads: the sd_notify messages,
 * read from a fake NOTIFY_SOCKET, at start, reload, failed reload, stop,
 * while a generation loads (EXTEND_TIMEOUT_USEC=), while it serves
 * (WATCHDOG=1), after a restart by hand; and nothing without
 * NOTIFY_SOCKET. The real haproxy (Debian's 2.6) unless noted, 127.0.0.1
 * only; every wait is on a real event and bounded.
 */
#include "t/lib/reload.h"

#include <signal.h>
#include <string.h>

static gboolean env_has(GPid pid, const char *name)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/environ", pid);
	g_autofree gchar *prefix = g_strconcat(name, "=", NULL);
	g_autofree gchar *buf = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
	for (gsize i = 0; i < len; i += strlen(buf + i) + 1)
		if (g_str_has_prefix(buf + i, prefix))
			return TRUE;
	return FALSE;
}

/* The exact sequence: start, reload, failed reload, stop. */
static void test_notify_start_reload_stop(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready1 = NULL;
	g_autofree gchar *ready2 = NULL;
	g_autofree gchar *ready3 = NULL;
	g_autofree gchar *stopping = NULL;
	g_autofree gchar *want = NULL;
	g_autofree gchar *status = NULL;
	GPid gen1, gen2;

	if (!reload_site_init(&s, NULL))
		return;
	notify_open(&n, &s);
	gen1 = t_site_start_serving(&s, NULL);

	/* Start: READY=1 with a STATUS= naming the serving generation. */
	ready1 = expect_ready(&n, T_WAIT);
	want = g_strdup_printf("STATUS=generation 1 (pid %d, haproxy ", gen1);
	g_assert_nonnull(strstr(ready1, want));
	g_assert_false(env_has(gen1, "NOTIFY_SOCKET"));

	/* A good reload: RELOADING=1, then READY=1 saying it went well. */
	wrapper_signal(s.w, SIGUSR2);
	expect_reloading(&n);
	ready2 = expect_ready(&n, T_WAIT);
	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_free(want);
	want = g_strdup_printf("STATUS=generation 2 (pid %d, haproxy ", gen2);
	g_assert_nonnull(strstr(ready2, want));
	g_assert_nonnull(strstr(ready2, "last reload ok"));
	g_assert_false(env_has(gen2, "NOTIFY_SOCKET"));

	/* A failed reload: READY=1 too (systemd waits for it), saying so. */
	t_site_config(&s, BROKEN);
	wrapper_signal(s.w, SIGUSR2);
	expect_reloading(&n);
	ready3 = expect_ready(&n, T_WAIT);
	t_site_wait_log(&s, LOG_RELOAD_FAILED);
	g_assert_nonnull(strstr(ready3, want));
	g_assert_nonnull(strstr(ready3, "FAILED"));
	g_assert_cmpint(t_wait_answered_by(s.port, gen2), ==, gen2);

	/* Stop: STOPPING=1, and nothing after it. */
	wrapper_signal(s.w, SIGTERM);
	stopping = notify_recv(&n, T_WAIT);
	assert_fields(stopping, "STOPPING=1", "STATUS=", NULL);
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 0);
	status = notify_recv(&n, 0);
	g_assert_null(status);
	g_assert_null(wrapper_find_log(s.w, LOG_SD_NOTIFY));
}

/*
 * A restart by hand ("haproxy -D ... -sf PID"): STATUS= says that the
 * adopted haproxy serves, and so does a failed reload's READY=1.
 */
static void test_notify_adopted(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready1 = NULL, *status = NULL, *ready2 = NULL;
	g_autofree gchar *want = NULL;
	GPid pid;

	if (!reload_site_init(&s, NULL))
		return;
	notify_open(&n, &s);
	t_site_start_serving(&s, NULL);
	ready1 = expect_ready(&n, T_WAIT);
	pid = restart_by_hand_adopted(&s);
	want = g_strdup_printf("STATUS=adopted haproxy (pid %d, standalone) "
			       "serving", pid);
	status = notify_recv(&n, T_WAIT);
	assert_fields(status, "STATUS=", NULL);
	g_assert_nonnull(strstr(status, want));

	t_site_config(&s, BROKEN);
	wrapper_signal(s.w, SIGUSR2);
	expect_reloading(&n);
	ready2 = expect_ready(&n, T_WAIT);
	g_assert_nonnull(strstr(ready2, want));
	g_assert_nonnull(strstr(ready2, "FAILED"));
	t_site_stop(&s);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	t_end_all_started();
}

/* EXTEND_TIMEOUT_USEC= while a generation loads (t/fake/fake-haproxy: it can
 * take 12 s to load). */
static void test_notify_extend_timeout(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_auto(Client) c = { 0 };
	g_autofree gchar *ready = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *loading = NULL;
	guint extends = 0;
	gint64 deadline;
	GPid gen2;

	reload_site_init_fake(&s, NULL);
	notify_open(&n, &s);
	t_site_start_serving(&s, NULL);
	g_free(expect_ready(&n, T_WAIT));

	/* Longer than the wrapper's 10 s between two extensions, and than
	 * its idle timeout for control clients: a waiting one is kept. */
	t_site_config(&s, "fake-load-delay-ms 12000\n");
	client_spawn(&c, s.rundir_opt, "--reload", NULL);
	expect_reloading(&n);

	/* Status answers while it loads, and shows it loading. */
	t_site_wait_log(&s, LOG_EXECUTING);
	text = client_status(&s, NULL);
	assert_status_gen(text, 1, s.pid, "current");
	loading = status_line(text, 2);
	g_assert_nonnull(loading);
	g_assert_true(g_str_has_suffix(loading, " starting"));

	deadline = t_deadline(30000);
	while (!ready && t_ms_left(deadline)) {
		g_autofree gchar *msg = notify_recv(&n, t_ms_left(deadline));

		if (!msg)
			break;
		if (g_str_has_prefix(msg, "READY=1\n")) {
			ready = g_steal_pointer(&msg);
			break;
		}
		g_assert_cmpstr(msg, ==, "EXTEND_TIMEOUT_USEC=30000000");
		extends++;
	}
	g_assert_nonnull(ready);
	assert_fields(ready, "READY=1", "STATUS=", NULL);
	g_assert_cmpuint(extends, >=, 1);
	g_assert_nonnull(strstr(ready, "generation 2 "));
	g_assert_nonnull(strstr(ready, "last reload ok"));

	g_assert_cmpint(t_command_finish(&c, T_WAIT), ==, CLIENT_OK);
	gen2 = serving_pid_in(c.out->str, 2);
	g_assert_cmpint(t_wait_answered_by(s.port, gen2), ==, gen2);
	t_site_stop(&s);
}

/* WATCHDOG=1 while a generation serves. */
static void test_notify_watchdog(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	gboolean stopping = FALSE;
	guint pings = 0;
	gint64 deadline;

	if (!reload_site_init(&s, NULL))
		return;
	notify_open(&n, &s);
	/* WATCHDOG_PID is unset (main() clears it): it is for us. */
	t_site_setenv(&s, "WATCHDOG_USEC", "200000");
	t_site_start_serving(&s, NULL);
	/* Nothing before the first generation serves. */
	g_free(expect_ready(&n, T_WAIT));
	deadline = t_deadline(T_WAIT);
	while (pings < 3 && t_ms_left(deadline)) {
		g_autofree gchar *msg = notify_recv(&n, t_ms_left(deadline));

		if (!msg)
			break;
		g_assert_cmpstr(msg, ==, "WATCHDOG=1");
		pings++;
	}
	g_assert_cmpuint(pings, >=, 3);

	/* The service is down: the wrapper exits 128 + SIGKILL, and pings
	 * no more once it says it is stopping. */
	g_assert_cmpint(kill(s.pid, SIGKILL), ==, 0);
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 128 + SIGKILL);
	for (;;) {
		g_autofree gchar *msg = notify_recv(&n, 0);

		if (!msg)
			break;
		if (g_str_has_prefix(msg, "STOPPING=1\n"))
			stopping = TRUE;
		else if (stopping || !g_str_equal(msg, "WATCHDOG=1"))
			fail("unexpected after the haproxy died: %s", msg);
	}
	g_assert_true(stopping);
}

/* Without NOTIFY_SOCKET nothing changes. */
static void test_no_notify_socket(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *status = NULL;
	GPid gen2;

	if (!reload_site_init(&s, NULL))
		return;
	t_site_start_serving(&s, NULL);
	wrapper_signal(s.w, SIGUSR2);
	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(t_wait_answered_by(s.port, gen2), ==, gen2);
	s.pid = gen2;
	reload_serving(&s, "--reload", 3);
	status = client_status(&s, NULL);
	g_assert_nonnull(strstr(status, "reloads 2 ok 2 failed 0\n"));
	t_site_stop(&s);
	g_assert_null(wrapper_find_log(s.w, LOG_SD_NOTIFY));
	/* The wrapper's own (haproxy's [WARNING] lines are <4> too). */
	g_assert_null(wrapper_find_log(s.w, LOG_PRIO_WARNING LOG_IDENT_PREFIX));
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);

	g_test_add_func("/reload/notify-start-reload-stop",
			test_notify_start_reload_stop);
	g_test_add_func("/reload/notify-adopted", test_notify_adopted);
	g_test_add_func("/reload/notify-extend-timeout",
			test_notify_extend_timeout);
	g_test_add_func("/reload/notify-watchdog", test_notify_watchdog);
	g_test_add_func("/reload/no-notify-socket", test_no_notify_socket);
	return g_test_run();
}
