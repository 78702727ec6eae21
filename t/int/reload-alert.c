/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A failed start or reload says what haproxy said: its [ALERT] line in
 * the --reload client's error, in STATUS= (a fake NOTIFY_SOCKET), and in
 * the wrapper's failure line at <3>; haproxy's own lines reach the log at
 * the priority their tag means ([ALERT] <3>, [NOTICE] <5>), read through
 * the wrapper's pipe. Standalone generations (every series) and a -Ws
 * master (1.8 and later). The real haproxy, 127.0.0.1 only; every wait is
 * on a real event and bounded.
 */
#include "t/lib/reload.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

/* What haproxy says of BROKEN, in every series. */
#define ALERT_WORDS "unknown keyword 'no-such-keyword'"

/* Every series: a failed generation is its exit, before 1.8 too. */
static gboolean alert_site_init(struct t_site *s)
{
	if (!t_site_init_real(s, NULL))
		return FALSE;
	s->with_runtime_dir = TRUE;
	return TRUE;
}

/* A line of the wrapper's log that starts with prefix and holds words. */
static const char *log_line_with(Wrapper *w, const char *prefix,
				 const char *words)
{
	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (g_str_has_prefix(line, prefix) && strstr(line, words))
			return line;
	}
	return NULL;
}

/* haproxy's [ALERT] line about BROKEN, at <3>, as haproxy wrote it. */
static void assert_alert_logged(struct t_site *s)
{
	const char *line = log_line_with(s->w, "<3>[ALERT]", ALERT_WORDS);

	if (!line)
		fail("no <3>[ALERT] line from haproxy naming %s", ALERT_WORDS);
	g_assert_null(log_line_with(s->w, "<6>", "[ALERT]"));
}

/* A reload of BROKEN: the client, STATUS= and the failure's log line
 * name haproxy's [ALERT]. */
static void assert_reload_names_alert(struct t_site *s, Notify *n,
				      GPid answering)
{
	g_autofree gchar *out = NULL, *err = NULL;
	g_autofree gchar *ready = NULL, *status = NULL;
	const char *line;

	t_site_config(s, BROKEN);
	g_assert_cmpint(t_site_client(s, "--reload", &out, &err), ==,
			CLIENT_FAILED);
	g_assert_nonnull(strstr(err, "[ALERT]"));
	g_assert_nonnull(strstr(err, ALERT_WORDS));

	expect_reloading(n);
	ready = expect_ready(n, T_WAIT);
	status = t_notify_field(ready, "STATUS");
	g_assert_nonnull(status);
	g_assert_nonnull(strstr(status, "FAILED"));
	g_assert_nonnull(strstr(status, ALERT_WORDS));

	line = t_site_wait_log(s, LOG_RELOAD_FAILED);
	g_assert_true(g_str_has_prefix(line, "<3>"));
	g_assert_nonnull(strstr(line, "[ALERT]"));
	g_assert_nonnull(strstr(line, ALERT_WORDS));
	assert_alert_logged(s);
	/* The one serving goes on. */
	g_assert_cmpint(t_wait_answered_by(s->port, answering), ==, answering);
}

/* Generation 1 ready (told on the notify socket too): the pid that
 * answers (a -Ds parent's worker, a master's). */
static GPid start_answering(struct t_site *s, Notify *n,
			    const char *const *opts)
{
	GPid answering;

	t_site_start_wrapper(s, NULL, opts);
	s->pid = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(s->pid, >, 0);
	g_free(expect_ready(n, T_WAIT));
	answering = t_wait_serving(s->port, T_WAIT);
	g_assert_cmpint(answering, >, 0);
	return answering;
}

static void test_standalone_reload(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	GPid answering;

	if (!alert_site_init(&s))
		return;
	notify_open(&n, &s);
	answering = start_answering(&s, &n, NULL);
	assert_reload_names_alert(&s, &n, answering);
	/* haproxy's notices are notices, not <6> lines. */
	if (t_haproxy_at_least(2, 4))
		g_assert_nonnull(log_line_with(s.w, "<5>[NOTICE]", "haproxy "
					       "version is"));
	t_site_stop(&s);
}

static void test_master_worker_reload(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	GPid worker;

	if (!t_haproxy_needs(1, 8, "master-worker mode") ||
	    !alert_site_init(&s))
		return;
	notify_open(&n, &s);
	worker = start_answering(&s, &n, OPTS("--master-worker=on"));
	/* A 2.5+ master takes SIGUSR2 once it has re-executed itself: the
	 * wrapper waits for that, the test need not. */
	assert_reload_names_alert(&s, &n, worker);
	t_site_stop(&s);
}

/* The first start: the wrapper's last words name haproxy's. */
static void first_start_fails(const char *const *opts)
{
	g_auto(TSite) s = { 0 };
	const char *line;

	if (!alert_site_init(&s))
		return;
	t_site_config(&s, BROKEN);
	t_site_start_wrapper(&s, NULL, opts);
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 1);
	line = log_line_with(s.w, "<3>", "cannot start haproxy: ");
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "[ALERT]"));
	g_assert_nonnull(strstr(line, ALERT_WORDS));
	assert_alert_logged(&s);
}

static void test_first_start(void)
{
	first_start_fails(NULL);
}

/* From 3.1 a master forks a worker to load: the [ALERT] is the worker's. */
static void test_master_worker_first_start(void)
{
	if (t_haproxy_needs(1, 8, "master-worker mode"))
		first_start_fails(OPTS("--master-worker=on"));
}

/* Each request logged on haproxy's stderr: its traffic fills the pipe. */
#define LOG_STDERR "    log stderr format raw local0\n" \
		   "    option httplog\n"

/* n requests, each answered. */
static void serve_requests(struct t_site *s, guint n)
{
	for (guint i = 0; i < n; i++) {
		g_autofree gchar *failure = t_request_once(s->port);

		if (failure)
			fail("request %u of %u: %s", i + 1, n, failure);
	}
}

/*
 * The pipe never holds haproxy up: a wrapper that does not read (stopped)
 * leaves haproxy serving with more stderr than the pipe takes (its
 * traffic log, "log stderr", which haproxy itself writes non-blocking),
 * and so does a wrapper killed (haproxy ignores SIGPIPE).
 */
static void test_pipe_never_blocks(void)
{
	g_auto(TSite) s = { 0 };
	g_auto(Notify) n = { 0 };
	struct t_started *gen;
	GPid answering;
	int status;

	if (!t_haproxy_needs(1, 9, "log stderr") ||
	    !t_site_init_real(&s, LOG_STDERR))
		return;
	s.with_runtime_dir = TRUE;
	notify_open(&n, &s);
	answering = start_answering(&s, &n, NULL);
	gen = t_remember(answering, t_haproxy_path());
	serve_requests(&s, 10);
	/* haproxy's traffic log, passed on by the wrapper. */
	g_assert_nonnull(wrapper_wait_log(s.w, " fe fe/", T_WAIT));

	/* About 100 bytes a request: several times the pipe's 64 KiB. */
	g_assert_cmpint(kill(s.w->pid, SIGSTOP), ==, 0);
	g_assert_true(t_wait_stopped(s.w->pid));
	serve_requests(&s, 3000);

	/* Gone: its read end closes, haproxy's writes fail, it serves. */
	g_assert_cmpint(kill(s.w->pid, SIGKILL), ==, 0);
	status = wrapper_wait_exit(s.w, T_WAIT);
	g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	serve_requests(&s, 100);
	g_assert_true(t_pid_alive(answering));
	t_end_started(gen);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);

	g_test_add_func("/alert/standalone-reload", test_standalone_reload);
	g_test_add_func("/alert/master-worker-reload",
			test_master_worker_reload);
	g_test_add_func("/alert/first-start", test_first_start);
	g_test_add_func("/alert/master-worker-first-start",
			test_master_worker_first_start);
	g_test_add_func("/alert/pipe-never-blocks", test_pipe_never_blocks);
	return g_test_run();
}
