/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reloads systemd can trust, the basics: `--reload` and
 * `--hard-reload` answer once the new generation serves, or say why it
 * failed; requests that come while a reload runs are queued and
 * coalesced, a queued hard reload stays hard; a waiting client ends on
 * SIGTERM. The real haproxy (Debian's 2.6) unless noted, 127.0.0.1 only.
 *
 * The other reload tests, by behaviour: t/int/reload-notify (sd_notify),
 * -status (status, metrics), -control (the control socket), -drain
 * (draining bounds, the stop), -seamless (-x), -upgrade (the wrapper's
 * own re-exec), -versions (older haproxy models). Their helpers are in
 * t/lib/reload.c.
 */
#include "t/lib/reload.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The client returns once the new generation serves and the old one has
 * let go of the sockets they share (-x): the very next request is the
 * new generation's. (Seen under CPU load before: the old one, until it
 * had acted on its soft stop, could still take that request.)
 */
static GPid reload_strict(struct t_site *s, const char *command,
			  guint number)
{
	GPid pid = reload_client(s, command, number);

	g_assert_cmpint(t_http_pid(s->port), ==, pid);
	return pid;
}

/* --reload and --hard-reload are synchronous. */
static void test_sync_reload(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	const char *exec;
	GPid gen1, gen2;
	int conn;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	gen1 = t_site_start_serving(&s, NULL);

	/* Returns 0 once generation 2 serves: the next request is its. */
	gen2 = reload_strict(&s, "--reload", 2);
	g_assert_cmpint(gen2, !=, gen1);

	/* A bad configuration: 1, the failure on stderr, gen 2 serving. */
	t_site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, &out, &err),
			==, CLIENT_FAILED);
	g_assert_nonnull(strstr(err, "error: generation 3 (pid "));
	g_assert_nonnull(strstr(err, "exited with status 1 before it was "
				     "ready"));
	g_assert_null(strstr(out, "ok"));
	g_assert_cmpint(t_http_pid(s.port), ==, gen2);
	g_assert_true(t_pid_alive(gen2));
	t_assert_pidfile_holds(s.pidfile, gen2);

	/* -st: the old generation stops at once, even with a connection
	 * it would otherwise drain for 120 s. */
	t_site_config(&s, LONG_DRAIN);
	conn = hold_on(s.port, gen2);
	reload_serving(&s, "--hard-reload", 4);
	exec = wrapper_executing_line(s.w, 4);
	g_assert_nonnull(exec);
	g_assert_nonnull(strstr(exec, " -st "));
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	g_assert_nonnull(wrapper_find_log(s.w, LOG_HARD_RELOADING_ON_REQUEST));
	close(conn);
	t_site_stop(&s);
}

/*
 * A --hard-reload queued behind a loading reload stays hard when a
 * SIGUSR2 (soft) is queued after it: the reload that follows is -st and
 * the generation before it is stopped, not left draining. (t/fake/fake-haproxy)
 */
static void test_queued_hard_stays_hard(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Client) hard = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *soft_stop = NULL;
	g_autofree gchar *loading = NULL;
	g_autofree gchar *events = NULL;
	const char *exec;
	GPid gen2, gen3;

	reload_site_init_fake(&s, NULL);
	t_site_start_serving(&s, NULL);
	/* Generation 2 loads for 2 s: both requests below queue behind it. */
	t_site_config(&s, "fake-load-delay-ms 2000\n");
	wrapper_signal(s.w, SIGUSR2);
	t_site_wait_log(&s, LOG_EXECUTING);
	client_spawn(&hard, s.rundir_opt, "--hard-reload", NULL);
	t_site_wait_log(&s, LOG_RELOAD_QUEUED);
	wrapper_signal(s.w, SIGUSR2);
	/* The signal was pending before this client connected: answered
	 * means the wrapper has read it (one loop iteration earlier). */
	text = client_status(&s, NULL);
	loading = status_line(text, 2);
	g_assert_nonnull(loading);
	t_site_config(&s, NULL);

	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(t_command_finish(&hard, T_WAIT), ==, CLIENT_OK);
	gen3 = serving_pid_in(hard.out->str, 3);
	exec = wrapper_executing_line(s.w, 3);
	g_assert_nonnull(exec);
	if (!strstr(exec, " -st "))
		fail("the queued --hard-reload ran soft: %s", exec);
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	/* Terminated, not soft-stopped: its SIGUSR1 handler never ran. */
	soft_stop = g_strdup_printf("pid=%d soft-stop", gen2);
	g_assert_true(g_file_get_contents(s.fake_log, &events, NULL, NULL));
	g_assert_null(strstr(events, soft_stop));
	g_assert_cmpint(t_wait_answered_by(s.port, gen3), ==, gen3);
	/* Nothing more queued: no fourth generation. */
	g_assert_null(wrapper_executing_line(s.w, 4));
	t_site_stop(&s);
}

/* Is pid blocked reading a socket: a client that sent its line and waits
 * for the answer? */
static gboolean waits_on_socket(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/syscall", pid);
	g_autofree gchar *text = NULL;
	g_autofree gchar *fd_path = NULL;
	g_autofree gchar *link = NULL;
	unsigned long fd;
	long nr;

	if (!g_file_get_contents(path, &text, NULL, NULL) ||
	    sscanf(text, "%ld 0x%lx", &nr, &fd) != 2 || nr != SYS_read)
		return FALSE;
	fd_path = g_strdup_printf("/proc/%d/fd/%lu", pid, fd);
	link = g_file_read_link(fd_path, NULL);
	return link && g_str_has_prefix(link, "socket:");
}

/* A client waiting for an answer that never comes is an ordinary
 * command: SIGTERM (timeout(1), Ctrl-C's SIGINT alike) ends it. */
static void test_client_stops_on_sigterm(void)
{
	g_auto(TSite) s = { 0 };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	g_auto(Client) c = { 0 };
	gint64 deadline = t_deadline(T_WAIT);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int status;

	/* No wrapper: only its runtime directory. */
	t_site_init(&s);
	/* A listener that never accepts: the client's connect succeeds (the
	 * backlog), its request is sent, and its read waits. */
	g_snprintf(a.sun_path, sizeof(a.sun_path), "%s/control.sock",
		   s.rundir);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(listen(fd, 4), ==, 0);
	client_spawn(&c, s.rundir_opt, "--reload", NULL);
	while (!waits_on_socket(c.pid) && t_ms_left(deadline))
		g_usleep(10 * 1000);
	g_assert_true(waits_on_socket(c.pid));
	g_assert_cmpint(kill(c.pid, SIGTERM), ==, 0);
	status = t_wait_child(c.pid, T_WAIT);
	g_assert_true(WIFSIGNALED(status));
	g_assert_cmpint(WTERMSIG(status), ==, SIGTERM);
	close(c.out_fd);
	close(c.err_fd);
	close(fd);
}

/* Concurrent reload requests coalesce. */
static void test_concurrent_reload_clients(void)
{
	g_auto(TSite) s = { 0 };
	Client c[5];
	guint executing, last = 0;
	gint64 deadline;
	gboolean all;

	if (!reload_site_init(&s, NULL))
		return;
	t_site_start_serving(&s, NULL);

	/*
	 * All five requests are queued while the wrapper is frozen: however
	 * slowly the clients start, they are there together when it goes on.
	 */
	g_assert_cmpint(kill(s.w->pid, SIGSTOP), ==, 0);
	for (guint i = 0; i < G_N_ELEMENTS(c); i++)
		client_spawn(&c[i], s.rundir_opt, "--reload", NULL);
	deadline = t_deadline(T_WAIT);
	do {
		all = TRUE;
		for (guint i = 0; i < G_N_ELEMENTS(c) && all; i++)
			all = waits_on_socket(c[i].pid);
		if (!all)
			g_usleep(10 * 1000);
	} while (!all && t_ms_left(deadline));
	g_assert_cmpint(kill(s.w->pid, SIGCONT), ==, 0);
	g_assert_true(all);

	for (guint i = 0; i < G_N_ELEMENTS(c); i++) {
		guint gen;

		g_assert_cmpint(t_command_finish(&c[i], T_WAIT), ==, CLIENT_OK);
		serving_pid_in(c[i].out->str, 0);
		gen = t_pid_in(strstr(c[i].out->str, "ok generation "),
			       "ok generation ");
		g_assert_cmpuint(gen, >=, 2);
		last = MAX(last, gen);
		t_command_clear(&c[i]);
	}
	/* One reload for the first request, one more for all the others
	 * (they came while it was in progress). */
	executing = wrapper_count_log(s.w, LOG_EXECUTING);
	g_test_message("5 concurrent --reload made %u reload(s)",
		       executing - 1);
	g_assert_cmpuint(executing, >=, 2);
	g_assert_cmpuint(executing, <=, 3);
	g_assert_cmpuint(last, ==, executing);
	g_assert_null(wrapper_find_log(s.w, LOG_RELOAD_FAILED));
	assert_running(&s);
	t_site_stop(&s);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);

	g_test_add_func("/reload/sync-reload", test_sync_reload);
	g_test_add_func("/reload/queued-hard-stays-hard",
			test_queued_hard_stays_hard);
	g_test_add_func("/reload/client-stops-on-sigterm",
			test_client_stops_on_sigterm);
	g_test_add_func("/reload/concurrent-reload-clients",
			test_concurrent_reload_clients);
	return g_test_run();
}
