/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * haproxy failing, with t/fake/fake-haproxy: configuration errors at start and
 * at a reload, a port someone holds, the serving haproxy crashing, a
 * worker that does not die on a stop, a soft or hard stop the old
 * generation lost. Every check rests on an
 * event: a wrapper log line, a line in the fake's event log
 * (FAKE_HAPROXY_LOG), an exit status, an HTTP answer.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <glib.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/fake.h"

static void test_config_error_at_start(void)
{
	g_autofree gchar *rc1 = g_strdup_printf(LOG_EXIT_RC_FMT, 1);
	struct t_site f;
	Wrapper *w;

	t_site_init_fake(&f, "fake-config-error\n");
	w = fx_start(&f, NULL, NULL);
	t_assert_exit_code(stop_wrapper(w, 0), 1);
	g_assert_nonnull(wrapper_find_log(w, LOG_CANNOT_START));
	g_assert_null(wrapper_find_log(w, LOG_READY_ANY));
	g_assert_nonnull(wrapper_find_log(w, rc1));
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_config_error_at_reload(void)
{
	g_autofree gchar *failed = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1;

	t_site_init_fake(&f, NULL);
	gen1 = fx_start_serving(&f, &w);

	t_site_config(&f, "fake-config-error\n");
	wrapper_signal(w, SIGUSR2);
	failed = dup_wait_log(w, LOG_RELOAD_FAILED);
	g_assert_nonnull(strstr(failed, LOG_KEEPS_SERVING));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_true(t_pid_alive(gen1));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);
	/* The old generation was never told to leave. */
	{
		g_autofree gchar *needle = g_strdup_printf(
			"signalled-old SIGUSR1 %d", gen1);

		g_assert_cmpuint(fake_count(&f, needle), ==, 0);
	}

	/* A failed reload is no failure of the service. */
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	wrapper_free(w);
	t_site_clear(&f);
}

/*
 * A reload whose new address is held by another socket. Steered (the
 * default), the old generation is off the -sf list and never paused;
 * without SO_REUSEPORT it is on it, paused by SIGTTOU and resumed by
 * SIGTTIN. Either way it serves on.
 */
static void check_bind_failure_at_reload(gboolean noreuseport)
{
	const char *base = noreuseport ? "noreuseport\n" : "";
	g_autofree gchar *extra = NULL, *needle = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1;
	int held;

	t_site_init_fake(&f, base);
	held = t_plain_listener(t_free_port());
	gen1 = fx_start_serving(&f, &w);

	{
		struct sockaddr_in a;
		socklen_t len = sizeof(a);

		getsockname(held, (struct sockaddr *)&a, &len);
		extra = g_strdup_printf("%sbind 127.0.0.1:%u\n", base,
					ntohs(a.sin_port));
	}
	t_site_config(&f, extra);
	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, LOG_ADDRESS_IN_USE, T_WAIT));
	g_assert_nonnull(wrapper_wait_log(w, LOG_RELOAD_FAILED, T_WAIT));

	needle = g_strdup_printf("pid=%d paused", gen1);
	if (noreuseport) {
		g_autofree gchar *paused = fake_wait(&f, needle, T_WAIT);
		g_autofree gchar *resumed = NULL;

		g_assert_nonnull(paused);
		g_free(needle);
		needle = g_strdup_printf("pid=%d resumed", gen1);
		resumed = fake_wait(&f, needle, T_WAIT);
		g_assert_nonnull(resumed);
	} else {
		g_assert_cmpuint(fake_count(&f, needle), ==, 0);
	}
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);
	g_assert_true(t_pid_alive(gen1));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);

	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	close(held);
	/* The witness saw SIGTTIN before haproxy exited: the reason of the
	 * failure must be in the log, whichever the wrapper reads first. */
	g_assert_nonnull(wrapper_find_log(w, LOG_COULD_NOT_BIND));
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_bind_failure_at_reload(void)
{
	check_bind_failure_at_reload(FALSE);
	check_bind_failure_at_reload(TRUE);
}

static void check_dies_after_ready(const char *extra, int code)
{
	g_autofree gchar *rc = g_strdup_printf(LOG_EXIT_RC_FMT, code);
	struct t_site f;
	Wrapper *w;

	t_site_init_fake(&f, extra);
	w = fx_start(&f, NULL, NULL);
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	t_assert_exit_code(stop_wrapper(w, 0), code);
	g_assert_nonnull(wrapper_find_log(w, LOG_SERVING_LOST));
	g_assert_nonnull(wrapper_find_log(w, rc));
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_crash(void)
{
	check_dies_after_ready("fake-crash-after-ready\n", 128 + SIGSEGV);
	check_dies_after_ready("fake-exit-after-ready 3\n", 3);
	/* A soft stop that nothing replaced: the service ended, cleanly. */
	check_dies_after_ready("fake-exit-after-ready 0\n", 0);
}

/* The -Ds parent exits 0 when its worker crashed: that is no success. */
static void test_crash_ds(void)
{
	g_autofree gchar *crash = NULL, *exit0 = NULL, *needle = NULL;
	g_autofree gchar *rc1 = g_strdup_printf(LOG_EXIT_RC_FMT, 1);
	struct t_site f;
	Wrapper *w;
	GPid gen1;

	t_site_init_fake(&f, "fake-crash-after-ready\n");
	w = fx_start(&f, "1.7.0", NULL);
	gen1 = wait_ready_version(w, 1, "1.7.0");
	t_assert_exit_code(stop_wrapper(w, 0), 1);
	g_assert_nonnull(wrapper_find_log(w, LOG_SERVING_LOST));
	g_assert_nonnull(wrapper_find_log(w, rc1));
	/* The worker crashed; its -Ds parent then exited 0. */
	crash = fake_wait(&f, " crash", T_WAIT);
	g_assert_nonnull(crash);
	g_assert_cmpint(t_pid_in(crash, "pid="), !=, gen1);
	needle = g_strdup_printf("pid=%d exit 0", gen1);
	exit0 = fake_wait(&f, needle, T_WAIT);
	g_assert_nonnull(exit0);
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_stop_timeout(void)
{
	static const char *const opts[] = { "--stop-timeout=1", NULL };
	g_autofree gchar *after_1s = g_strdup_printf(
		LOG_STILL_RUNNING_AFTER_STOP_FMT, 1);
	g_autoptr(GArray) workers = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, worker;

	t_site_init_fake(&f, NULL);
	w = fx_start(&f, "1.7.0", opts);
	gen1 = wait_ready_version(w, 1, "1.7.0");
	workers = wait_workers(&f, gen1, 1);
	worker = g_array_index(workers, GPid, 0);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, worker);

	/* A stopped process keeps a SIGTERM pending; only SIGKILL ends it. */
	kill(worker, SIGSTOP);
	g_assert_true(t_wait_stopped(worker));
	wrapper_signal(w, SIGTERM);
	g_assert_nonnull(wrapper_wait_log(w, after_1s, T_WAIT));
	t_assert_exit_code(stop_wrapper(w, 0), 0);
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	wrapper_free(w);
	t_site_clear(&f);
}

/*
 * Generation 1 lost the stop signal sig (the fake says so): the wrapper
 * sees it still listening, warns and sends sig again; generation 1 ends.
 */
static void assert_lost_stop_resent(struct t_site *f, Wrapper *w, GPid gen1,
				    int sig)
{
	g_autofree gchar *lost = g_strdup_printf("pid=%d lost SIG%s", gen1,
						 sigabbrev_np(sig));
	g_autofree gchar *resend = g_strdup_printf(LOG_STILL_LISTENS_FMT, 1,
						   gen1);
	g_autofree gchar *name = g_strdup_printf("SIG%s", sigabbrev_np(sig));
	g_autofree gchar *again = g_strdup_printf(LOG_SENDING_AGAIN_FMT, name);
	g_autofree gchar *lost_line = fake_wait(f, lost, T_WAIT);
	g_autofree gchar *line = NULL;

	g_assert_nonnull(lost_line);
	line = dup_wait_log(w, resend);
	g_assert_true(g_str_has_prefix(line, LOG_PRIO_WARNING));
	g_assert_nonnull(strstr(line, again));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
}

static void test_lost_soft_stop(void)
{
	g_autofree gchar *stopped = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, gen2;

	/* Generation 1 ignores the first SIGUSR1 it gets: generation 2's. */
	t_site_init_fake(&f, "fake-lose-first-usr1\n");
	gen1 = fx_start_serving(&f, &w);
	t_site_config(&f, NULL);
	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	/* The wrapper sees it still listening, and says it again, once. */
	assert_lost_stop_resent(&f, w, gen1, SIGUSR1);
	stopped = g_strdup_printf("pid=%d soft-stop", gen1);
	g_assert_cmpuint(fake_count(&f, stopped), ==, 1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, LOG_STILL_LISTENS), ==, 1);
	wrapper_free(w);
	t_site_clear(&f);
}

/* --hard-reload: the lost stop is sent again as SIGTERM (-st), once. */
static void test_lost_hard_stop(void)
{
	g_autofree gchar *lost = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, gen2;

	t_site_init_fake(&f, "fake-lose-first-term\n");
	gen1 = fx_start_serving(&f, &w);
	t_site_config(&f, NULL);
	g_assert_cmpint(t_run_command((const char *[]){ t_wrapper_path(),
				      "--hard-reload", "-p", f.pidfile, NULL },
				      T_WAIT, NULL, NULL), ==, 0);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	assert_lost_stop_resent(&f, w, gen1, SIGTERM);
	lost = g_strdup_printf("pid=%d lost SIGTERM", gen1);
	g_assert_cmpuint(fake_count(&f, lost), ==, 1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, LOG_STILL_LISTENS), ==, 1);
	wrapper_free(w);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/fake/config-error-at-start",
			test_config_error_at_start);
	g_test_add_func("/fake/config-error-at-reload",
			test_config_error_at_reload);
	g_test_add_func("/fake/bind-failure-at-reload",
			test_bind_failure_at_reload);
	g_test_add_func("/fake/crash", test_crash);
	g_test_add_func("/fake/crash-ds", test_crash_ds);
	g_test_add_func("/fake/stop-timeout", test_stop_timeout);
	g_test_add_func("/fake/lost-soft-stop", test_lost_soft_stop);
	g_test_add_func("/fake/lost-hard-stop", test_lost_hard_stop);
	return g_test_run();
}
