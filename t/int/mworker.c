/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Master-worker mode behind the wrapper, on the real haproxy 2.6 under
 * load: haproxy runs as -Ws, the wrapper keeps the stable pid and turns
 * SIGUSR2 and --reload into a SIGUSR2 to the master, whose verdict it
 * reads on a private notify socket: serial reloads, a bad configuration,
 * stops, the master killed, hard reloads, self-upgrade, a reload behind
 * its back, the hand-off, "auto" choosing -db.
 */
#include <glib.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/mworker.h"

/* Serial reloads, by signal and by request, under load: the master and
 * the wrapper stay, each reload brings a new worker, no request fails. */
static void test_real_serial_reloads(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-W", NULL };
	g_autoptr(GArray) retired = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autofree gchar *status = NULL;
	g_autofree gchar *master_line = NULL;
	g_autofree gchar *ready1 = NULL, *reloaded1 = NULL;
	struct t_load load;
	GPid worker;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	site_start(&s, NULL, opts);
	g_assert_nonnull(wrapper_find_log(s.t.w, " -Ws"));
	ready1 = g_strdup_printf(LOG_READY_FMT, 1);
	reloaded1 = g_strdup_printf(LOG_MASTER_RELOADED_FMT, 1);
	worker = t_pid_in(wrapper_find_log(s.t.w, ready1),
			  LOG_WORKERS_PIDS_KEY);
	g_assert_cmpint(t_wait_serving(s.t.port, T_WAIT), ==, worker);
	g_assert_cmpint(read_pidfile(s.t.pidfile), ==, s.master);
	t_load_start(&load, s.t.port);
	g_assert_true(t_load_wait_answers(&load, worker, 1));
	for (guint i = 0; i < 8; i++) {
		GPid next;

		g_array_append_val(retired, worker);
		if (i % 2) {
			next = site_reload(&s, worker);
			/* Past its line, for the next signal's. */
			g_assert_nonnull(wrapper_wait_log(s.t.w, reloaded1,
							  T_WAIT));
		} else {
			wrapper_signal(s.t.w, SIGUSR2);
			next = t_pid_in(wrapper_wait_log(s.t.w, reloaded1,
							 T_WAIT),
					LOG_WORKERS_PIDS_KEY);
			g_assert_cmpint(next, >, 0);
			g_assert_cmpint(next, !=, worker);
		}
		g_assert_true(t_load_wait_answers(&load, next, 1));
		worker = next;
	}
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
	/* One master all along, the only pid in the pidfile. */
	status = site_status(&s);
	master_line = g_strdup_printf("generation 1 pid %d ", s.master);
	g_assert_nonnull(strstr(status, master_line));
	g_assert_nonnull(strstr(status, "reloads 8 ok 8 failed 0\n"));
	g_assert_cmpint(read_pidfile(s.t.pidfile), ==, s.master);
	for (guint i = 0; i < retired->len; i++)
		g_assert_true(t_wait_gone(g_array_index(retired, GPid, i),
					  T_WAIT));
	g_assert_true(t_pid_alive(worker));
}

/* A configuration the master refuses: --reload says so and exits 1, the
 * old worker keeps serving, and the next good reload works. */
static void test_real_bad_config_reload(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "--master-worker=on", NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *status = NULL;
	struct t_load load;
	GPid worker, next;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	site_start(&s, NULL, opts);
	worker = t_wait_serving(s.t.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	t_load_start(&load, s.t.port);
	site_write_config(&s, "    no-such-keyword here\n");
	g_assert_cmpint(site_client(&s, "--reload", &out), ==, 1);
	g_assert_nonnull(strstr(out, "did not load the new configuration"));
	g_assert_nonnull(wrapper_wait_log(s.t.w, LOG_PRIO_ERR, T_WAIT));
	status = site_status(&s);
	g_assert_nonnull(strstr(status, "last reload: failed"));
	/* Requests after the verdict still reach the old worker. */
	g_assert_true(t_load_wait_answers(&load, worker, 20));
	g_assert_cmpint(t_http_pid(s.t.port), ==, worker);
	g_assert_true(t_pid_alive(s.master));
	site_write_config(&s, NULL);
	next = site_reload(&s, worker);
	g_assert_true(t_load_wait_answers(&load, next, 1));
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
	g_assert_true(t_wait_gone(worker, T_WAIT));
}

/* SIGTERM stops the master and its workers; the wrapper exits 0 and
 * removes the pidfile the master wrote. */
static void test_real_stop(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *relay = g_strdup_printf(LOG_RELAYED_SIG_FMT,
						  "SIGTERM");
	GPid worker;

	worker = real_master_start(&s);
	if (!worker)
		return;
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
	g_assert_true(t_wait_gone(s.master, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_false(g_file_test(s.t.pidfile, G_FILE_TEST_EXISTS));
	g_assert_nonnull(wrapper_find_log(s.t.w, relay));
}

/* The master killed: the service is down, the wrapper exits with its
 * status for Restart=, and no worker is left behind. */
static void test_real_master_killed(void)
{
	g_auto(Site) s = { 0 };
	int status;
	GPid worker;

	worker = real_master_start(&s);
	if (!worker)
		return;
	/* Our wrapper's child, alive: the pid is the master's. */
	g_assert_cmpint(kill(s.master, SIGKILL), ==, 0);
	status = wrapper_wait_exit(s.t.w, T_WAIT);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 128 + SIGKILL);
	g_assert_true(t_wait_gone(worker, T_WAIT));
}

/* A request left half-written keeps its worker busy through a soft stop
 * (until haproxy's client timeout, 10 s here). */
static int hold_half_request(guint16 port)
{
	static const char half[] = "GET / HTTP/1.1\r\nHost: t\r\n";
	int fd = t_hold_connection(port);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, half, sizeof(half) - 1), ==,
			sizeof(half) - 1);
	return fd;
}

/* --hard-reload: the old workers get SIGTERM once the new one serves. */
static void test_real_hard_reload(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *relay = NULL;
	GPid worker;
	int held;

	worker = real_master_start(&s);
	if (!worker)
		return;
	held = hold_half_request(s.t.port);
	g_assert_cmpint(site_client(&s, "--hard-reload", &out), ==, 0);
	relay = g_strdup_printf(LOG_RELAYED_FMT, "SIGTERM", worker);
	g_assert_nonnull(wrapper_wait_log(s.t.w, relay, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_cmpint(t_http_pid(s.t.port), ==, worker_in(out));
	close(held);
}

/* The wrapper replaces itself on reload and keeps driving the master:
 * its notify socket comes over with it. */
static void test_real_self_upgrade(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-W", "--self-upgrade=always", NULL };
	g_autofree gchar *adopted = g_strdup_printf(
		LOG_ADOPTED_GENERATIONS_FMT, 1);
	GPid wrapper, worker;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	site_start(&s, NULL, opts);
	wrapper = s.t.w->pid;
	worker = t_wait_serving(s.t.port, T_WAIT);
	worker = site_reload(&s, worker);
	worker = site_reload(&s, worker);
	g_assert_cmpuint(wrapper_count_log(s.t.w, adopted), ==, 2);
	g_assert_cmpint(s.t.w->pid, ==, wrapper);
	g_assert_true(t_pid_alive(s.master));
	g_assert_cmpint(t_http_pid(s.t.port), ==, worker);
}

/* Someone sends SIGUSR2 to the master itself: the wrapper follows, and
 * its status names the new worker. */
static void test_real_reload_behind_back(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *status = NULL;
	g_autofree gchar *current = NULL;
	GPid worker, next;

	worker = real_master_start(&s);
	if (!worker)
		return;
	/* Our wrapper's child, alive: the pid is the master's. */
	g_assert_true(t_master_settled(s.master, SIGUSR2));
	g_assert_cmpint(kill(s.master, SIGUSR2), ==, 0);
	next = t_pid_in(wrapper_wait_log(s.t.w, LOG_RELOADED_WITHOUT_US,
					 T_WAIT),
			LOG_WORKERS_NOW_KEY);
	g_assert_cmpint(next, >, 0);
	g_assert_cmpint(next, !=, worker);
	status = site_status(&s);
	current = g_strdup_printf("generation 1 workers %d current", next);
	g_assert_nonnull(strstr(status, current));
	/* And the next reload of ours still works. */
	site_reload(&s, next);
}

/* The hand-off from master-worker mode: the wrapper becomes haproxy -Ws
 * (same pid), takes the listeners from the worker, soft-stops the old
 * master; not a request fails. */
static void test_real_handoff(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe_link = NULL;
	g_autofree gchar *exe = NULL;
	struct t_load load;
	GPid worker;

	worker = real_master_start(&s);
	if (!worker)
		return;
	t_load_start(&load, s.t.port);
	g_assert_true(t_load_wait_answers(&load, worker, 1));
	g_assert_cmpint(site_client(&s, "--handoff", &out), ==, 0);
	g_assert_true(t_wait_gone(s.master, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	exe_link = g_strdup_printf("/proc/%d/exe", s.t.w->pid);
	exe = g_file_read_link(exe_link, NULL);
	g_assert_cmpstr(exe, ==, t_haproxy_path());
	g_assert_cmpint(t_wait_serving(s.t.port, T_WAIT), >, 0);
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
}

/* "auto" keeps the real 2.6 as one -db process a generation. */
static void test_real_auto_is_db(void)
{
	g_auto(Site) s = { 0 };
	GPid pid;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	pid = site_start(&s, NULL, NULL);
	g_assert_nonnull(wrapper_find_log(s.t.w, " -db"));
	g_assert_null(wrapper_find_log(s.t.w, " -Ws"));
	g_assert_cmpint(t_wait_serving(s.t.port, T_WAIT), ==, pid);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/mworker/real/serial-reloads", test_real_serial_reloads);
	g_test_add_func("/mworker/real/bad-config-reload",
			test_real_bad_config_reload);
	g_test_add_func("/mworker/real/stop", test_real_stop);
	g_test_add_func("/mworker/real/master-killed", test_real_master_killed);
	g_test_add_func("/mworker/real/hard-reload", test_real_hard_reload);
	g_test_add_func("/mworker/real/self-upgrade", test_real_self_upgrade);
	g_test_add_func("/mworker/real/reload-behind-back",
			test_real_reload_behind_back);
	g_test_add_func("/mworker/real/handoff", test_real_handoff);
	g_test_add_func("/mworker/real/auto-is-db", test_real_auto_is_db);
	return g_test_run();
}
