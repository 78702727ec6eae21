/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reloads around the wrapper's own re-exec (--self-upgrade): a client
 * waiting for its reload is answered across it, and systemd hears one
 * RELOADING=1 then READY=1; a haproxy adopted after a restart by hand
 * crosses it as our own (the hand-off is refused while it runs). The
 * real haproxy (Debian's 2.6), 127.0.0.1 only.
 */
#include "t/lib/reload.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

/* GET / on a connection held open since before: the body, or NULL. */
static gchar *ask_on(int fd)
{
	static const char req[] = "GET / HTTP/1.0\r\n\r\n";
	g_autoptr(GString) got = g_string_new(NULL);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	gint64 deadline = t_deadline(T_WAIT);
	char buf[4096];
	ssize_t n;

	if (write(fd, req, sizeof(req) - 1) != sizeof(req) - 1)
		return NULL;
	while (t_ms_left(deadline) && poll(&p, 1, t_ms_left(deadline)) > 0) {
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		g_string_append_len(got, buf, n);
	}
	return got->len ? g_string_free(g_steal_pointer(&got), FALSE) : NULL;
}

/*
 * An adopted haproxy (a restart by hand) runs: the reload upgrades the
 * wrapper all the same, and the new image keeps it as its own. It is on
 * the -sf list of the generation the new image starts, in --status while
 * it drains, and the stop ends it, its end awaited; the connection it
 * holds is answered after the upgrade.
 */
static void test_upgrade_with_adopted(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *out = NULL, *status = NULL, *answer = NULL;
	g_autofree gchar *sf = NULL, *shown = NULL, *exited = NULL;
	g_autofree gchar *body = NULL, *kept = NULL;
	const char *exec;
	GPid pid, gen2;
	int held, keep;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	t_site_start_serving(&s, OPTS("--self-upgrade=always"));
	pid = restart_by_hand_adopted(&s);
	held = hold_on(s.port, pid);
	keep = hold_on(s.port, pid);

	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, &out,
				 NULL), ==, 0);
	g_assert_null(strstr(out, "postponed"));
	gen2 = serving_pid_in(out, 2);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_REEXECUTING));
	/* Taken back as the old image handed it over, not found anew. */
	kept = g_strdup_printf(LOG_STILL_ADOPTED_FMT, pid);
	g_assert_nonnull(wrapper_find_log(s.w, kept));
	/* The new image's generation took the adopted one over with -sf. */
	exec = wrapper_executing_line(s.w, 2);
	g_assert_nonnull(exec);
	sf = g_strdup_printf(" %d ", pid);
	if (!strstr(exec, " -sf ") || !strstr(strstr(exec, " -sf "), sf))
		g_test_fail_printf("the adopted pid %d is not on the -sf list "
				   "after the upgrade: %s", pid, exec);
	g_assert_cmpint(t_wait_answered_by(s.port, gen2), ==, gen2);

	/* It drains the connection it holds, which is answered. */
	g_assert_true(t_pid_alive(pid));
	answer = ask_on(held);
	body = g_strdup_printf("pid=%d", pid);
	g_assert_nonnull(answer);
	g_assert_nonnull(strstr(answer, body));
	status = client_status(&s, NULL);
	shown = g_strdup_printf("%d", pid);
	if (!strstr(status, shown))
		g_test_fail_printf("--status after the upgrade does not show "
				   "the adopted pid %d: %s", pid, status);

	/* Still draining the other one: the stop ends it too, and waits
	 * for its end. */
	g_assert_true(t_pid_alive(pid));
	t_site_stop(&s);
	exited = g_strdup_printf(LOG_ADOPTED_EXITED_FMT, pid);
	g_assert_nonnull(wrapper_find_log(s.w, exited));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	close(held);
	close(keep);
	t_end_all_started();
}

/*
 * An adopted haproxy (a restart by hand) runs: the hand-off is refused,
 * said in the log and to the client.
 */
static void test_handoff_refused_adopted(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *err = NULL;
	const char *line;

	if (!reload_site_init(&s, NULL))
		return;
	t_site_start_serving(&s, OPTS("--self-upgrade=always"));
	restart_by_hand_adopted(&s);
	g_assert_cmpint(t_client("--handoff", s.rundir_opt, NULL, NULL,
				 &err), !=, 0);
	g_assert_nonnull(strstr(err, "adopted after a restart by hand"));
	line = wrapper_find_log(s.w, LOG_HANDOFF_REFUSED_ADOPTED);
	g_assert_nonnull(line);
	g_assert_true(g_str_has_prefix(line, LOG_PRIO_NOTICE));
	t_site_stop(&s);
	t_end_all_started();
}

/* A waiting client survives the wrapper's own re-exec. */

static void test_waiter_across_upgrade(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready = NULL;
	g_autofree gchar *adopted = NULL;
	const char *reexec;
	guint reloading = 0;
	GPid wpid;

	if (!reload_site_init(&s, NULL))
		return;
	notify_open(&n, &s);
	t_site_start_serving(&s, OPTS("--self-upgrade=always"));
	g_free(expect_ready(&n, T_WAIT));
	wpid = s.w->pid;
	reload_serving(&s, "--reload", 2);
	/* It did re-execute itself in between, in the same pid. */
	reexec = wrapper_find_log(s.w, LOG_REEXECUTING);
	g_assert_nonnull(reexec);
	adopted = g_strdup_printf(LOG_ADOPTED_GENERATIONS_FMT, 1);
	g_assert_nonnull(wrapper_find_log(s.w, adopted));
	g_assert_cmpint(s.w->pid, ==, wpid);
	assert_running(&s);
	assert_status_of(&s, wpid);

	/* systemd still gets its READY=1 after RELOADING=1. */
	while (!ready) {
		g_autofree gchar *msg = notify_recv(&n, T_WAIT);

		g_assert_nonnull(msg);
		if (g_str_has_prefix(msg, "READY=1\n"))
			ready = g_steal_pointer(&msg);
		else
			assert_fields(msg, "RELOADING=1", "MONOTONIC_USEC=",
				      "STATUS=", NULL);
		reloading += !ready;
	}
	/* One reload, one RELOADING=1: the re-executed image does not
	 * announce it again, nor log it again. */
	g_assert_cmpuint(reloading, ==, 1);
	g_assert_cmpuint(wrapper_count_log(s.w, "reloading on request."), ==,
			 1);
	g_assert_nonnull(strstr(ready, "generation 2 "));
	g_assert_nonnull(strstr(ready, "last reload ok"));
	t_site_stop(&s);

	/* Asked through the control socket, not by a signal: it should say
	 * so, as "reloading on request." does. */
	if (!strstr(reexec, LOG_REEXECUTING_ON_REQUEST))
		g_test_fail_printf("a control-socket reload logs \"%s\"",
				   reexec);
}

/* "pipe:[N]" that pid's descriptor fd is, or NULL. */
static gchar *fd_target(GPid pid, int fd)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/fd/%d", pid, fd);

	return g_file_read_link(path, NULL);
}

/*
 * haproxy's stderr pipe crosses the wrapper's own exec: the generation
 * the new image starts writes into the pipe the old one's still writes
 * into, and the new image reads it (a reload of a broken configuration
 * names haproxy's [ALERT]).
 */
static void test_stderr_across_upgrade(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *pipe1 = NULL, *pipe2 = NULL;
	g_autofree gchar *out = NULL, *err = NULL;
	GPid gen1, gen2;
	int held;

	if (!reload_site_init(&s, LONG_DRAIN))
		return;
	gen1 = t_site_start_serving(&s, OPTS("--self-upgrade=always"));
	pipe1 = fd_target(gen1, 2);
	g_assert_nonnull(pipe1);
	g_assert_true(g_str_has_prefix(pipe1, "pipe:"));
	/* Generation 1 drains after the reload, its stderr still open. */
	held = hold_on(s.port, gen1);
	gen2 = reload_serving(&s, "--reload", 2);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_REEXECUTING));
	g_assert_true(t_pid_alive(gen1));
	pipe2 = fd_target(gen2, 2);
	g_assert_cmpstr(pipe2, ==, pipe1);

	t_site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(t_site_client(&s, "--reload", &out, &err), ==,
			CLIENT_FAILED);
	g_assert_nonnull(strstr(err, "[ALERT]"));
	close(held);
	t_site_stop(&s);
}

/*
 * A --hard-reload that upgrades the wrapper stays hard in the new image,
 * which carries it out: its generation is run with -st, not -sf.
 */
static void test_hard_across_upgrade(void)
{
	g_auto(TSite) s = { 0 };
	const char *exec;

	if (!reload_site_init(&s, NULL))
		return;
	t_site_start_serving(&s, OPTS("--self-upgrade=always"));
	reload_serving(&s, "--hard-reload", 2);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_REEXECUTING));
	exec = wrapper_executing_line(s.w, 2);
	g_assert_nonnull(exec);
	if (!strstr(exec, " -st "))
		g_test_fail_printf("the hard reload ran soft after the "
				   "upgrade: %s", exec);
	t_site_stop(&s);
}

/*
 * The pidfile across the wrapper's own re-exec: the reload the new image
 * carries out fails, the generation before it still serves and is still
 * in the pidfile, and a stop removes the pidfile, as it does without the
 * upgrade: the new image knows what the old one wrote there.
 * (t/fake/fake-haproxy)
 */
static void pidfile_across_reload(const char *upgrade)
{
	g_auto(TSite) s = { 0 };
	GPid gen1;

	reload_site_init_fake(&s, NULL);
	gen1 = t_site_start_serving(&s, OPTS(upgrade));
	t_assert_pidfile_holds(s.pidfile, gen1);
	t_site_config(&s, "fake-config-error\n");
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, NULL),
			==, CLIENT_FAILED);
	g_assert_true((wrapper_find_log(s.w, LOG_REEXECUTING) != NULL) ==
		      g_str_equal(upgrade, "--self-upgrade=always"));
	g_assert_cmpint(t_http_pid(s.port), ==, gen1);
	t_assert_pidfile_holds(s.pidfile, gen1);
	t_site_stop(&s);
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

static void test_pidfile_kept(void)
{
	pidfile_across_reload("--self-upgrade=always");
}

static void test_pidfile_no_upgrade(void)
{
	pidfile_across_reload("--self-upgrade=never");
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);
	g_test_add_func("/reload/upgrade-with-adopted",
			test_upgrade_with_adopted);
	g_test_add_func("/reload/handoff-refused-adopted",
			test_handoff_refused_adopted);
	g_test_add_func("/reload/waiter-across-upgrade",
			test_waiter_across_upgrade);
	g_test_add_func("/reload/hard-across-upgrade",
			test_hard_across_upgrade);
	g_test_add_func("/upgrade/pidfile-kept", test_pidfile_kept);
	g_test_add_func("/upgrade/pidfile-no-upgrade",
			test_pidfile_no_upgrade);
	g_test_add_func("/reload/stderr-across-upgrade",
			test_stderr_across_upgrade);
	return g_test_run();
}
