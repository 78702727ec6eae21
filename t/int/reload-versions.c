/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reloads and stops with the models of older or slower haproxy versions
 * (t/fake/fake-haproxy): a -Ds parent (haproxy < 1.8) whose worker is killed,
 * and a 2.5+ master started by hand, taken over while it still sets
 * itself up. 127.0.0.1 only; every wait is on a real event and bounded.
 */
#include "t/lib/reload.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "base/proc.h"

/*
 * A -Ds parent (haproxy < 1.8) exits 0 once its workers are gone, killed
 * or crashed: its serving generation lost that way is a failure for
 * Restart=on-failure (exit 1), and systemd is told the wrapper stops. A
 * second angle beside /fake/crash-ds: the worker killed from outside.
 */
static void test_ds_worker_killed(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready = NULL;
	g_autofree gchar *stopping = NULL;
	g_autofree gchar *haproxy_opt = NULL;
	g_autofree gchar *exit_rc = NULL;
	const char *lost;
	GPid worker;

	reload_site_init_fake(&s, NULL);
	notify_open(&n, &s);
	t_site_setenv(&s, "FAKE_HAPROXY_VERSION", "1.7.0");
	haproxy_opt = g_strconcat("--haproxy=", s.haproxy, NULL);
	{
		/* No pidfile (-p). */
		const char *args[] = { s.rundir_opt, haproxy_opt, "-f", s.cfg,
				       NULL };

		s.w = wrapper_start(args, (const char *const *)s.env->pdata);
	}
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);
	ready = expect_ready(&n, T_WAIT);
	/* The parent serves nothing itself: its one worker answers. */
	worker = t_wait_serving(s.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(proc_parent(worker), ==, s.pid);
	g_assert_cmpint(kill(worker, SIGKILL), ==, 0);

	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 1);
	lost = wrapper_find_log(s.w, LOG_SERVING_LOST);
	g_assert_nonnull(lost);
	exit_rc = g_strdup_printf(LOG_EXIT_RC_FMT, 1);
	g_assert_nonnull(wrapper_find_log(s.w, exit_rc));
	stopping = notify_recv(&n, T_WAIT);
	g_assert_nonnull(stopping);
	assert_fields(stopping, "STOPPING=1", "STATUS=", NULL);
}

/*
 * A wrapper started while a master-worker haproxy started by hand still
 * sets itself up (a 2.5+ master re-executes itself after its load:
 * SIGUSR1 keeps its default action until the new image has set it up;
 * t/fake/fake-haproxy, named haproxy, for 5 s here, its worker already
 * serving). The takeover waits until it handles SIGUSR1: the first
 * generation's -sf then soft-stops it (exit 0 through its handler), where
 * an early one would kill it. The first generation is the fake too, ready
 * at once: no start-up of the wrapper outlasts the window.
 */
static void test_takeover_waits_for_handler(void)
{
	g_auto(TSite) s = { 0 };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *fake = NULL, *bin = NULL, *haproxy = NULL;
	g_autofree gchar *events = NULL, *stopped = NULL, *taking = NULL;
	g_auto(GStrv) env = NULL;
	const char *argv[] = { NULL, "-W", "-p", NULL, "-f", NULL, NULL };
	GPid master;
	int status;

	reload_site_init_fake(&s, "fake-master-late-usr1-ms 5000\n");
	fake = g_build_filename(t_dir(), "fake/fake-haproxy", NULL);
	bin = g_build_filename(s.dir, "bin", NULL);
	haproxy = g_build_filename(bin, "haproxy", NULL);
	g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
	{
		const char *cp[] = { "cp", fake, haproxy, NULL };
		int cp_status;

		g_assert_true(g_spawn_sync(NULL, (char **)cp, NULL,
					   G_SPAWN_SEARCH_PATH, NULL, NULL,
					   NULL, NULL, &cp_status, &error));
		g_assert_true(g_spawn_check_wait_status(cp_status, &error));
	}
	env = g_environ_setenv(g_get_environ(), "FAKE_HAPROXY_LOG", s.fake_log,
			       TRUE);
	argv[0] = haproxy;
	argv[3] = s.pidfile;
	argv[5] = s.cfg;
	g_assert_true(g_spawn_async(NULL, (char **)argv, env,
				    G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
				    &master, &error));
	t_remember(master, "/haproxy");
	/* Serving through its worker, not settled yet: the wrapper starts. */
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), !=, master);
	g_free(t_wait_file_line(s.fake_log, "master: SIGUSR1 not handled", NULL,
				1, T_WAIT));
	g_assert_null(t_wait_file_line(s.fake_log, "master handles SIGUSR1",
				       NULL, 1, 0));
	t_site_start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf(LOG_TAKING_OVER_MASTER_FMT, master);
	g_assert_nonnull(wrapper_wait_log(s.w, taking, T_WAIT));
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);

	status = t_wait_child(master, T_WAIT);
	g_assert_true(g_file_get_contents(s.fake_log, &events, NULL, NULL));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		g_error("the foreign master ended with status 0x%x:\n%s",
			status, events);
	stopped = g_strdup_printf("pid=%d master stop USR1", master);
	g_assert_nonnull(strstr(events, stopped));
	g_assert_null(wrapper_find_log(s.w, LOG_FOREIGN_UNSETTLED));
	g_assert_cmpint(t_wait_answered_by(s.port, s.pid), ==, s.pid);
	t_site_stop(&s);
	t_end_all_started();
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);
	g_test_add_func("/reload/ds-worker-killed", test_ds_worker_killed);
	g_test_add_func("/reload/takeover-waits-for-handler",
			test_takeover_waits_for_handler);
	return g_test_run();
}
