/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signals and the real haproxy (Debian's 2.6): a stop by SIGTERM, SIGINT
 * or SIGUSR1 (graceful) reaches every generation, a draining one too,
 * and leaves nothing; the serving haproxy killed from outside ends the
 * wrapper with 128 + the signal, for Restart=; stray signals are ignored
 * by both. 127.0.0.1 only; every wait is on a real event and bounded.
 */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "t/lib/real.h"

/* Long timeouts: a drain would outlast every bound of this test. A later
 * global section overrides the harness's hard-stop-after. */
#define LONG_DRAIN "    timeout client 120s\n" \
		   "    timeout http-request 120s\n" \
		   "global\n" \
		   "    hard-stop-after 120s\n"

/* "SIGTERM -> pid." logged: the stop signal relayed to pid. */
static void assert_relayed(struct t_site *s, const char *sig, GPid pid)
{
	g_autofree gchar *relay = g_strdup_printf(LOG_RELAYED_FMT, sig, pid);

	g_assert_nonnull(wrapper_find_log(s->w, relay));
}

/* Generation 1 started, holding the idle connection *conn it accepted,
 * then reloaded: its pid, draining. */
static GPid start_then_drain(struct t_site *s, const char *const *opts,
			     int *conn)
{
	GPid old;

	real_start(s, NULL, opts);
	old = real_worker(s);
	*conn = t_hold_connection(s->port);
	g_assert_cmpint(*conn, >=, 0);
	for (gint64 end = t_deadline(T_WAIT);
	     !accepted_by(old, *conn, s->port) &&
	     g_get_monotonic_time() < end;)
		g_usleep(10 * 1000);
	g_assert_true(accepted_by(old, *conn, s->port));
	real_reload(s, SIGUSR2, FALSE);
	g_assert_true(t_pid_alive(old));
	return old;
}

static void test_sigterm_leaves_nothing(void)
{
	const char *opts[] = { "--stop-timeout=120", NULL };
	g_auto(TSite) s = { 0 };
	g_autofree gchar *old_line = NULL;
	GPid old;
	int conn;

	if (!t_site_init_real(&s, LONG_DRAIN))
		return;
	/* No SIGKILL within T_WAIT: only the relayed SIGTERM can end the
	 * draining generation in time. */
	old = start_then_drain(&s, opts, &conn);
	/* Still draining its idle connection when the stop comes. */
	old_line = g_strdup_printf(LOG_PID_FMT, old);
	g_assert_null(wrapper_find_log(s.w, old_line));

	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
	g_assert_false(t_pid_alive(old));
	g_assert_false(t_pid_alive(s.pid));
	assert_relayed(&s, "SIGTERM", old);
	close(conn);
}

static void test_sigint_stops(void)
{
	g_auto(TSite) s = { 0 };
	GPid worker;

	if (!t_site_init_real(&s, NULL))
		return;

	real_start(&s, NULL, NULL);
	worker = real_worker(&s);
	t_assert_exit_code(real_stop(&s, SIGINT), 0);
	assert_relayed(&s, "SIGINT", worker);
}

static void test_graceful_sigusr1(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *which = NULL;
	g_autofree gchar *how = g_strdup_printf(LOG_EXITED_FMT, 0);
	const char *line;

	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);
	t_assert_exit_code(real_stop(&s, SIGUSR1), 0);
	/* A soft stop: haproxy itself finished with 0, not killed. */
	which = g_strdup_printf(LOG_PID_FMT, s.pid);
	line = wrapper_find_log(s.w, which);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, how));
}

/* The serving haproxy dies without being asked: 128 + signal, for Restart=. */
static void test_external_kill(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_auto(TSite) s = { 0 };
	int status;

	/* Observed on 1.5.18 and 1.7.0: the -Ds parent survives it. */
	if (sig == SIGTERM &&
	    !t_haproxy_needs(1, 8, "a generation that SIGTERM ends"))
		return;
	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);
	real_signal_serving(&s, sig);
	status = wrapper_wait_exit(s.w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	t_assert_exit_code(status, 128 + sig);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_ON_ITS_OWN));
	g_assert_false(t_pid_alive(s.pid));
}

/*
 * The serving haproxy killed while the one before drains: the stop that
 * follows is a stop now, as SIGTERM's, so the draining one gets SIGTERM
 * and nothing is left beside the exit for Restart=.
 */
static void test_killed_while_draining(void)
{
	const char *opts[] = { "--stop-timeout=120", NULL };
	g_auto(TSite) s = { 0 };
	GPid old;
	int conn;

	if (!t_site_init_real(&s, LONG_DRAIN))
		return;
	old = start_then_drain(&s, opts, &conn);

	real_signal_serving(&s, SIGKILL);
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 128 + SIGKILL);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_ON_ITS_OWN));
	g_assert_true(t_wait_gone(old, T_WAIT));
	assert_relayed(&s, "SIGTERM", old);
	close(conn);
}

static void test_stray_signals(void)
{
	static const int strays[] = { SIGQUIT, SIGTTOU, SIGTTIN, SIGWINCH };
	g_auto(TSite) s = { 0 };
	GPid hap;

	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);
	hap = s.pid;

	/* Ignored outright, so it is never read: nothing to log. */
	wrapper_signal(s.w, SIGPIPE);
	for (guint i = 0; i < G_N_ELEMENTS(strays); i++) {
		g_autofree gchar *name = g_strconcat(
			"SIG", sigabbrev_np(strays[i]), NULL);
		g_autofree gchar *want = g_strdup_printf(LOG_IGNORING_FMT,
							 name, getpid());

		wrapper_signal(s.w, strays[i]);
		t_site_wait_log(&s, want);
	}
	/* Neither the wrapper nor haproxy took any of them. */
	real_assert_running(&s);
	g_assert_true(real_is_haproxy(hap));
	g_assert_cmpint(t_http_pid(s.port), ==, real_worker(&s));
	g_assert_cmpuint(real_count_haproxy_below(s.w->pid), ==,
			 real_generation_size());

	real_reload(&s, SIGUSR2, TRUE);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What a wrapper leaves behind becomes ours: seen, and ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	t_cleanup_on_abort();

	g_test_add_func("/real/sigterm-leaves-nothing",
			test_sigterm_leaves_nothing);
	g_test_add_func("/real/sigint-stops", test_sigint_stops);
	g_test_add_func("/real/graceful-sigusr1", test_graceful_sigusr1);
	g_test_add_data_func("/real/killed-haproxy", GINT_TO_POINTER(SIGKILL),
			     test_external_kill);
	g_test_add_data_func("/real/terminated-haproxy",
			     GINT_TO_POINTER(SIGTERM), test_external_kill);
	g_test_add_func("/real/killed-while-draining",
			test_killed_while_draining);
	g_test_add_func("/real/stray-signals", test_stray_signals);
	return g_test_run();
}
