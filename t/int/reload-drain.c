/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Old generations that drain, bounded: --max-old-workers ends the oldest
 * beyond the bound, --drain-timeout ends one past its deadline, and the
 * wrapper's stop reaches a generation still draining. The real haproxy
 * (Debian's 2.6), 127.0.0.1 only; idle connections held open keep a
 * generation draining (LONG_DRAIN).
 */
#include "t/lib/reload.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

/*
 * The stop signal reaches a generation still draining an idle connection
 * (a second angle beside /real/sigterm-leaves-nothing): without it the
 * drain would outlast the test. Its end is the wrapper's SIGTERM, logged
 * with its wait status, and the stop is clean: exit 0, no SIGKILL.
 */
static void test_stop_reaches_draining(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *finished = NULL;
	g_autofree gchar *killed = NULL;
	const char *line;
	GPid gen1;
	int conn;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	t_site_start_serving(&s, OPTS("--stop-timeout=120"));
	gen1 = s.pid;
	conn = hold_on(s.port, gen1);
	reload_serving(&s, "--reload", 2);
	text = client_status(&s, NULL);
	assert_status_gen(text, 1, gen1, "draining");

	wrapper_signal(s.w, SIGTERM);
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 0);
	finished = g_strdup_printf(LOG_FINISHED_FMT, 1, gen1);
	killed = g_strdup_printf(LOG_KILLED_BY_FMT, SIGTERM);
	line = wrapper_find_log(s.w, finished);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, killed));
	g_assert_false(t_pid_alive(gen1));
	g_assert_null(wrapper_find_log(s.w, LOG_SIGKILL));
	close(conn);
}

/* --max-old-workers: the oldest beyond the bound goes. */

static void test_max_old_workers(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *want = NULL;
	g_autofree gchar *text = NULL;
	GPid gen1, gen2, gen3;
	int conn1, conn2;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	t_site_start_serving(&s, OPTS("--max-old-workers=1"));
	gen1 = s.pid;
	conn1 = hold_on(s.port, gen1);
	gen2 = reload_serving(&s, "--reload", 2);
	/* One draining: within the bound. */
	g_assert_true(t_pid_alive(gen1));
	g_assert_null(wrapper_find_log(s.w, LOG_DRAINING_OVER));

	conn2 = hold_on(s.port, gen2);
	gen3 = reload_serving(&s, "--reload", 3);
	/* Two: the oldest goes, the other drains on. */
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	want = g_strdup_printf(LOG_DRAINING_OVER_FMT, 1, 1, gen1);
	g_assert_nonnull(wrapper_wait_log(s.w, want, T_WAIT));
	g_assert_true(t_pid_alive(gen2));
	g_assert_cmpuint(wrapper_count_log(s.w, LOG_DRAINING_OVER), ==, 1);
	text = client_status(&s, NULL);
	assert_status_gen(text, 3, gen3, "current");
	assert_status_gen(text, 2, gen2, "draining");
	g_assert_null(status_line(text, 1));
	close(conn1);
	close(conn2);
	t_site_stop(&s);
}

/* --drain-timeout: one past its deadline goes, not without it. */

static void test_drain_timeout(void)
{
	g_auto(TSite) bounded = { 0 };
	g_auto(TSite) unbounded = { 0 };
	g_autofree gchar *want = NULL;
	GPid b1, u1;
	int bconn, uconn;

	if (!reload_site_init(&bounded, LONG_DRAIN))
		return;
	g_assert_true(reload_site_init(&unbounded, LONG_DRAIN));
	t_site_start_serving(&bounded, OPTS("--drain-timeout=1"));
	t_site_start_serving(&unbounded, NULL);
	b1 = bounded.pid;
	u1 = unbounded.pid;
	bconn = hold_on(bounded.port, b1);
	uconn = hold_on(unbounded.port, u1);

	/* The control case first: its old generation drains from before
	 * the bounded one's reload, so longer than its deadline. */
	reload_serving(&unbounded, "--reload", 2);
	g_assert_true(t_pid_alive(u1));
	reload_serving(&bounded, "--reload", 2);
	want = g_strdup_printf(LOG_DRAIN_DEADLINE_FMT, 1, b1);
	g_assert_nonnull(wrapper_wait_log(bounded.w, want, T_WAIT));
	g_assert_true(t_wait_gone(b1, T_WAIT));

	/* Past the bounded one's deadline: the control case still drains. */
	g_assert_true(t_pid_alive(u1));
	g_assert_null(wrapper_find_log(unbounded.w, LOG_DRAIN_DEADLINE));
	close(bconn);
	close(uconn);
	t_site_stop(&bounded);
	t_site_stop(&unbounded);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);
	g_test_add_func("/reload/stop-reaches-draining",
			test_stop_reaches_draining);
	g_test_add_func("/reload/max-old-workers", test_max_old_workers);
	g_test_add_func("/reload/drain-timeout", test_drain_timeout);
	return g_test_run();
}
