/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pidfile with the real haproxy (Debian's 2.6): none without -p; one
 * someone rewrote during the run left as it is at exit; a stale one naming
 * a live process that is not ours never gets that process signalled.
 * 127.0.0.1 only; every wait is on a real event and bounded.
 */
#include <signal.h>
#include <sys/prctl.h>

#include "t/lib/real.h"

static void test_no_pidfile(void)
{
	g_auto(TSite) s = { 0 };

	if (!t_site_init_real(&s, NULL))
		return;
	s.no_pidfile = TRUE;
	real_start(&s, NULL, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

/* A pidfile someone rewrote during the run is no longer ours: the wrapper
 * leaves it at exit, whether it names another pid or ours among others. */
static void test_pidfile_rewritten(void)
{
	if (!t_haproxy_needs(1, 8, "a pidfile the wrapper writes (-db)"))
		return;
	for (guint i = 0; i < 2; i++) {
		g_auto(TSite) s = { 0 };
		g_autofree gchar *text = NULL;
		g_autofree gchar *left = NULL;
		g_autofree gchar *ours = NULL;

		if (!t_site_init_real(&s, NULL))
			return;
		real_start(&s, NULL, NULL);
		real_reload(&s, SIGUSR2, TRUE);
		ours = g_strdup_printf("%d\n", s.pid);
		g_assert_true(g_file_get_contents(s.pidfile, &left, NULL,
						  NULL));
		g_assert_cmpstr(left, ==, ours);
		g_clear_pointer(&left, g_free);
		text = i ? g_strdup_printf("%d\n999999\n", s.pid)
			 : g_strdup("999999\n");
		g_assert_true(g_file_set_contents(s.pidfile, text, -1, NULL));
		t_assert_exit_code(real_stop(&s, SIGTERM), 0);
		g_assert_true(g_file_get_contents(s.pidfile, &left, NULL,
						  NULL));
		g_assert_cmpstr(left, ==, text);
	}
}

static void test_stale_pidfile(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *rec_log = NULL;
	g_autofree gchar *recorded = NULL;
	g_autofree gchar *stale = NULL;
	struct t_started *rec;

	if (!t_site_init_real(&s, NULL))
		return;
	rec_log = g_build_filename(s.dir, "signals.log", NULL);
	rec = t_start_recorder(rec_log);

	/* A pidfile left over, naming a live process that is not ours. */
	stale = g_strdup_printf("%d\n", rec->pid);
	g_free(t_write_file(s.dir, "haproxy.pid", stale));

	real_start(&s, NULL, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	real_reload(&s, SIGUSR2, TRUE);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);

	g_assert_true(t_pid_alive(rec->pid));
	recorded = t_signals_before_marker(rec_log, rec);
	g_test_message("sigrecorder: %s", recorded);
	g_assert_cmpstr(recorded, ==, "");
	t_stop_recorder(rec);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What a wrapper leaves behind becomes ours: seen, and ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	t_cleanup_on_abort();

	g_test_add_func("/real/no-pidfile", test_no_pidfile);
	g_test_add_func("/real/pidfile-rewritten", test_pidfile_rewritten);
	g_test_add_func("/real/stale-pidfile", test_stale_pidfile);
	return g_test_run();
}
