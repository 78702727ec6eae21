/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off to upstream's unit: --handoff replaces the running wrapper,
 * same pid, by haproxy -Ws, which takes the listening sockets over and
 * soft-stops the old generation; a configuration haproxy refuses, or a
 * haproxy without master-worker mode, leaves the wrapper as it was.
 */
#include <glib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "t/lib/harness.h"

struct site {
	struct t_site t;	/* the real haproxy, --runtime-dir */
	GPid gen1;
};

/* n: a NOTIFY_SOCKET of the test's for the wrapper (NULL: none); shim:
 * a script run as --haproxy (NULL: the real haproxy itself). */
static void site_start_with(struct site *s, struct t_notify *n,
			    const char *shim)
{
	t_site_init(&s->t);
	t_site_config(&s->t, NULL);
	s->t.with_runtime_dir = TRUE;
	if (shim) {
		g_free(s->t.haproxy);
		s->t.haproxy = t_write_file(s->t.dir, "haproxy-shim", shim);
		g_assert_cmpint(chmod(s->t.haproxy, 0755), ==, 0);
	}
	if (n) {
		t_notify_open(n, s->t.dir);
		t_site_setenv(&s->t, "NOTIFY_SOCKET", n->path);
	}
	t_site_start_wrapper(&s->t, NULL, NULL);
	s->gen1 = wrapper_wait_ready(s->t.w, 1, T_WAIT);
	g_assert_cmpint(s->gen1, >, 0);
	g_assert_cmpint(t_wait_serving(s->t.port, T_WAIT), ==, s->gen1);
}

static void site_start(struct site *s, struct t_notify *n)
{
	site_start_with(s, n, NULL);
}

static void site_clear(struct site *s)
{
	t_site_clear(&s->t);
}

/* The client command, its exit status and its output. */
static int run_handoff(struct site *s, gchar **out)
{
	const char *argv[] = { t_wrapper_path(), "--handoff", s->t.rundir_opt,
			       NULL };
	g_autofree gchar *err = NULL;
	/* Bounded: a client that never ends fails the test. */
	int code = t_run_command(argv, T_WAIT, out, &err);

	g_test_message("handoff: %s%s", *out, err);
	return code;
}

static gchar *exe_of(GPid pid)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/exe", pid);

	return g_file_read_link(link, NULL);
}

/*
 * systemd keeps the last STATUS= until haproxy sends one (2.7 and later;
 * 2.6 sends none): the wrapper's last one says it handed off to the
 * master, its own pid, not which generation served before.
 */
static void assert_status_handed_off(struct t_notify *n, GPid master)
{
	g_autofree gchar *want = g_strdup_printf(STATUS_HANDED_OFF_FMT, master);
	g_autofree gchar *last = NULL;
	gint64 deadline = t_deadline(T_WAIT);

	for (;;) {
		g_autofree gchar *msg = t_notify_recv(n, t_ms_left(deadline));
		g_autofree gchar *status = msg ? t_notify_field(msg, "STATUS")
					       : NULL;

		if (!msg)
			g_error("no STATUS= of the hand-off; last: %s", last);
		if (!status)
			continue;
		g_free(last);
		last = g_steal_pointer(&status);
		if (g_str_has_prefix(last, want))
			return;
	}
}

/* After the hand-off: no control socket left, and a client says why
 * nothing answers. */
static void assert_no_wrapper_answers(struct site *s)
{
	g_autofree gchar *sock = g_build_filename(s->t.rundir,
						  "control.sock", NULL);
	g_autofree gchar *err = NULL;
	g_autofree gchar *pid = g_strdup_printf("pid %d is its master",
						s->t.w->pid);

	g_assert_false(g_file_test(sock, G_FILE_TEST_EXISTS));
	g_assert_cmpint(t_client("--status", s->t.rundir_opt, NULL, NULL,
				 &err), ==, 69);
	g_assert_nonnull(strstr(err, "no wrapper answers"));
	g_assert_nonnull(strstr(err, "handed off to haproxy -Ws"));
	g_assert_nonnull(strstr(err, pid));
	g_assert_null(strstr(err, "Connection refused"));
}

static void test_handoff(void)
{
	g_auto(TNotify) n = { 0 };
	struct site s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe = NULL;
	g_autofree gchar *cmdline = NULL;
	g_autofree gchar *cmdline_path = NULL;
	GPid worker, reloaded;

	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return;
	}
	site_start(&s, &n);
	g_assert_cmpint(run_handoff(&s, &out), ==, 0);
	g_assert_nonnull(strstr(out, "is now haproxy -Ws"));
	assert_status_handed_off(&n, s.t.w->pid);

	/* Same pid, now haproxy's master. The answer comes just before the
	 * exec: wait (bounded) for it to have happened. */
	g_assert_nonnull(wrapper_wait_log(s.t.w, " -Ws ", T_WAIT));
	cmdline_path = g_strdup_printf("/proc/%d/cmdline", s.t.w->pid);
	for (gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	     g_get_monotonic_time() < end; t_wait_gone(s.t.w->pid, 10)) {
		g_clear_pointer(&cmdline, g_free);
		if (g_file_get_contents(cmdline_path, &cmdline, NULL, NULL) &&
		    g_str_equal(cmdline, "/usr/sbin/haproxy"))
			break;
	}
	g_assert_cmpstr(cmdline, ==, "/usr/sbin/haproxy");
	exe = exe_of(s.t.w->pid);
	g_assert_cmpstr(exe, ==, "/usr/sbin/haproxy");
	assert_no_wrapper_answers(&s);

	/* The old generation soft-stops; the master's worker serves. */
	g_assert_true(t_wait_gone(s.gen1, T_WAIT));
	worker = t_wait_serving(s.t.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(worker, !=, s.gen1);

	/* Reloads are haproxy's own now: SIGUSR2 to the same pid. */
	g_assert_true(t_master_settled(s.t.w->pid, SIGUSR2));
	wrapper_signal(s.t.w, SIGUSR2);
	g_assert_true(t_wait_gone(worker, T_WAIT));
	reloaded = t_wait_serving(s.t.port, T_WAIT);
	g_assert_cmpint(reloaded, >, 0);
	g_assert_cmpint(reloaded, !=, worker);

	/* haproxy >= 2.0 masters exit 0 after SIGTERM. Settled first: the
	 * master re-executes itself after the reload too. The new worker
	 * serves before that, so wait for the re-executed image: the old
	 * worker's exit is reaped by it. */
	g_assert_true(t_master_settled(s.t.w->pid, SIGTERM));
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
	site_clear(&s);
}

static void test_handoff_bad_config(void)
{
	struct site s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe = NULL;

	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return;
	}
	site_start(&s, NULL);
	g_free(t_write_config(s.t.dir, "haproxy.cfg", s.t.port,
			      "    no-such-keyword\n"));
	g_assert_cmpint(run_handoff(&s, &out), ==, 1);
	g_assert_nonnull(wrapper_wait_log(s.t.w, LOG_NOT_HANDING_OFF, T_WAIT));

	/* Still the wrapper, still serving, still reloading. */
	exe = exe_of(s.t.w->pid);
	g_assert_cmpstr(exe, ==, t_wrapper_path());
	g_assert_cmpint(t_http_pid(s.t.port), ==, s.gen1);
	g_free(t_write_config(s.t.dir, "haproxy.cfg", s.t.port, NULL));
	wrapper_signal(s.t.w, SIGUSR2);
	g_assert_cmpint(wrapper_wait_ready(s.t.w, 2, T_WAIT), >, 0);
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
	site_clear(&s);
}

/*
 * A configuration check that dies of a signal (a crash, the OOM killer)
 * passed nothing: the hand-off is refused and the wrapper goes on. The
 * real haproxy cannot be made to crash on -c: a shim kills itself there,
 * and runs the real one for everything else.
 */
static void test_handoff_check_killed(void)
{
	struct site s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe = NULL;
	g_autofree gchar *shim = NULL;

	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return;
	}
	shim = g_strdup_printf("#!/bin/sh\n"
			       "for a; do [ \"$a\" = -c ] && kill -KILL $$; done\n"
			       "exec %s \"$@\"\n", t_haproxy_path());
	site_start_with(&s, NULL, shim);
	g_assert_cmpint(run_handoff(&s, &out), ==, 1);
	g_assert_nonnull(wrapper_wait_log(s.t.w, LOG_NOT_HANDING_OFF, T_WAIT));

	/* Still the wrapper, still serving. */
	exe = exe_of(s.t.w->pid);
	g_assert_cmpstr(exe, ==, t_wrapper_path());
	g_assert_cmpint(t_http_pid(s.t.port), ==, s.gen1);
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
	site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/handoff/in-place", test_handoff);
	g_test_add_func("/handoff/bad-config", test_handoff_bad_config);
	g_test_add_func("/handoff/check-killed", test_handoff_check_killed);
	return g_test_run();
}
