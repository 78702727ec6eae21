/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The takeover at first start (migrate/takeover.c) on the real haproxy
 * (Debian's 2.6), 127.0.0.1 only: a -D daemon and a -W -D master-worker
 * instance using the same pidfile or configuration are taken over under
 * load without a failed request, even mid-reload; a generation that
 * cannot bind leaves the foreign instance serving; --takeover=off leaves
 * it alone. Every wait is on a real event (a log
 * line, a process exit, a socket answering, a file's content) and
 * bounded. The daemons are not our children: they are ended by the pid
 * read, through a pidfd, after checking that it still is that process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "legacy/pidfile.h"
#include "base/proc.h"
#include "t/lib/takeover.h"

static void test_takeover_daemon_under_load(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *exited = NULL, *err = NULL;
	struct t_load l;
	GPid daemon, gen1, answered;
	int held;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	held = hold_request(s.port, daemon);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, daemon, 20));

	w = start_wrapper(&s, NULL, NULL);
	gen1 = wait_taken_over(w, daemon);
	assert_status_foreign(&s, daemon, "standalone",
			      "\nhaproxy_wrapper_takeovers_total 1\n");

	/* The request it had accepted is answered, then it goes. */
	err = finish_request(held, "Host: t\r\n\r\n", &answered);
	close(held);
	g_assert_cmpstr(err, ==, NULL);
	g_assert_cmpint(answered, ==, daemon);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	exited = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, daemon, "standalone");
	g_assert_nonnull(wait_log_anywhere(w, exited));

	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	finish_across_reset_window(&l);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, gen1);
	g_assert_null(wrapper_find_log(w, LOG_NOT_TAKING_OVER));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

static void test_takeover_master_worker(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *taking = NULL, *exited = NULL;
	const char *line;
	struct t_load l;
	GPid master, worker, gen1;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	master = start_daemon(&s, TRUE);
	worker = t_wait_serving(s.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	t_remember(worker, HAPROXY);
	g_assert_cmpint(worker, !=, master);
	g_assert_cmpint(proc_parent(worker), ==, master);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, worker, 20));

	/* The wrapper waits itself until the master handles SIGUSR1. */
	w = start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf(LOG_TAKING_OVER_MASTER_FMT, master);
	line = wrapper_wait_log(w, taking, T_WAIT);
	g_assert_nonnull(line);
	g_assert_true(t_pid_in(line, LOG_WORKERS_KEY) == worker);
	assert_first_sf(w, (const GPid[]){ master, worker }, 2);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);

	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_true(t_wait_gone(master, T_WAIT));
	exited = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, master,
				 "master-worker master");
	g_assert_nonnull(wait_log_anywhere(w, exited));

	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	finish_across_reset_window(&l);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, gen1);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* The nth line of a t/fake/fake-haproxy log holding needle, waited for. */
static void wait_event(const char *log, const char *needle, guint nth)
{
	g_autofree gchar *line = t_wait_file_line(log, needle, NULL, nth,
						  T_WAIT);

	g_assert_nonnull(line);
}

/*
 * A master-worker master taken over in the middle of its reload (a 2.5+
 * master re-executes itself: SIGUSR1 keeps its default action until the
 * new image has set it up). t/fake/fake-haproxy, named haproxy, is that master.
 * The wrapper waits until it handles SIGUSR1: the first generation's -sf
 * soft-stops it (exit 0 through its handler), an early one would kill it.
 */
static void test_takeover_master_mid_reload(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *log = NULL, *taking = NULL, *exited = NULL;
	g_autofree gchar *stopped = NULL, *events = NULL;
	struct t_started *p;
	GPid master, gen1;
	int status;

	/* The file the fake and our haproxy share hides the fake's keyword
	 * in an .if block. */
	if (!have_haproxy_for(TRUE, FALSE))
		return;
	daemon_site_init(&s);
	/* One file for the fake master and our haproxy: the same service. */
	p = fake_master_by_hand(&s,
				FAKE_ONLY("fake-master-late-usr1-ms 2000\n"),
				&log, NULL);
	master = p->pid;
	wait_event(log, "master handles SIGUSR1", 1);

	/* A reload by hand, and the wrapper started in the middle of it. */
	g_assert_true(t_signal_verified(p, SIGUSR2));
	wait_event(log, "master: SIGUSR1 not handled", 2);
	w = start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf(LOG_TAKING_OVER_MASTER_FMT, master);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);

	/* Soft-stopped through its handler, not killed by SIGUSR1. */
	status = t_wait_child(master, T_WAIT);
	g_assert_true(g_file_get_contents(log, &events, NULL, NULL));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		g_error("the foreign master ended with status 0x%x:\n%s",
			status, events);
	stopped = g_strdup_printf("pid=%d master stop USR1", master);
	g_assert_nonnull(strstr(events, stopped));
	g_assert_nonnull(strstr(events, "master handles SIGUSR1"));
	exited = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, master,
				 "master-worker master");
	g_assert_nonnull(wait_log_anywhere(w, exited));
	g_assert_null(wrapper_find_log(w, LOG_FOREIGN_UNSETTLED));
	g_assert_cmpint(wait_answered_by(s.port, gen1), ==, gen1);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

static void test_cannot_bind_leaves_foreign_serving(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *bind_q = NULL;
	g_autofree gchar *ready1 = NULL;
	const char *env[] = { "HSW_TEST_BIND_Q=1", NULL };
	guint16 q = t_free_port();
	GPid daemon;
	int holder;

	if (!have_haproxy_for(TRUE, FALSE))
		return;
	daemon_site_init(&s);
	/* The same file and pidfile, so the daemon is ours; only our
	 * haproxy, its environment says, also binds q. */
	bind_q = g_strdup_printf(".if defined(HSW_TEST_BIND_Q)\n"
				 "    bind 127.0.0.1:%u\n.endif\n", q);
	t_site_config(&s, bind_q);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	holder = t_plain_listener(q);
	w = start_wrapper_env(&s, NULL, NULL, env);
	wait_taking_over(w, daemon);
	/* haproxy retries for about 2 s, pausing the daemon meanwhile. */
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 1);
	/* The witness, listed after the daemon, got SIGTTOU: so did the
	 * daemon. Its SIGTTIN report may come after haproxy's exit has
	 * ended the wrapper: not asserted. */
	g_assert_nonnull(wrapper_find_log(w, LOG_ADDR_IN_USE));
	if (!wrapper_find_log(w, LOG_TOLD_TO_RESUME))
		g_test_message("the witness's SIGTTIN was not logged");
	ready1 = g_strdup_printf(LOG_READY_FMT, 1);
	g_assert_null(wrapper_find_log(w, ready1));

	/* Resumed (SIGTTIN): alive, listening, answering, still in the
	 * pidfile. */
	g_assert_true(t_pid_alive(daemon));
	g_assert_cmpint(wait_answered_by(s.port, daemon), ==, daemon);
	g_assert_true(listens_on(daemon, s.port));
	g_assert_cmpint(t_wait_pidfile(s.pidfile), ==, daemon);
	close(holder);
	daemon_site_clear(&s);
}

static void test_takeover_off(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	struct t_load l;
	GPid daemon, gen1;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, daemon, 20));

	w = start_wrapper(&s, "--takeover=off", NULL);
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	/* Both listen with SO_REUSEPORT: ask /proc, not the port. */
	g_assert_true(t_pid_alive(daemon));
	g_assert_true(listens_on(daemon, s.port));
	g_assert_true(t_load_wait_answers(&l, gen1, 20));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_null(wrapper_find_log(w, LOG_TAKING_OVER));
	stop_wrapper_ok(w);

	/* Never signalled: once the wrapper is gone, it alone answers. */
	g_assert_true(t_pid_alive(daemon));
	g_assert_true(listens_on(daemon, s.port));
	g_assert_cmpint(wait_answered_by(s.port, daemon), ==, daemon);
	daemon_site_clear(&s);
	g_assert_false(t_pid_alive(daemon));
}

static void test_no_foreign(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *done = NULL;
	GPid gen1;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	/* --debug: a search that found nothing is told with it only. */
	w = start_wrapper(&s, "--debug", NULL);
	/* The witness alone after -sf: nothing to wait for, nothing found. */
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	/* The search after the start, then nothing else about foreigners. */
	done = g_strdup_printf(LOG_LATE_SEARCH_FOUND_FMT, 0u);
	g_assert_nonnull(wait_log_anywhere(w, done));
	g_assert_null(wrapper_find_log(w, LOG_TAKING_OVER));
	g_assert_cmpuint(wrapper_count_log(w, LOG_FOREIGN), ==, 1);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* A daemon taken over that is gone before our generation is ready (its
 * -sf, or anything else, ended it first) still counts as taken over. */
static void test_takeover_counted_when_gone_before_ready(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *hold = NULL, *cfg = NULL, *held = NULL;
	g_autofree gchar *gate = NULL, *line = NULL, *exited = NULL;
	g_autofree gchar *status = NULL;
	struct t_started *d;
	GPid daemon;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	/* The daemon and our generation 1 load the same file; the gate is
	 * open for the daemon, closed for generation 1: held while it
	 * loads, before its -sf. */
	hold = held_config_text(s.dir, "gen1");
	cfg = t_write_config(s.dir, "held.cfg", s.port, hold);
	held = g_build_filename(s.dir, "gen1.held", NULL);
	gate = g_build_filename(s.dir, "gen1.gate", NULL);
	g_free(t_write_file(s.dir, "gen1.gate", ""));
	daemon = T_FOREIGN(s.dir, .program = HAPROXY, .daemon = TRUE,
			   .pidfile = s.pidfile, .started = &d,
			   .args = (const char *const[]){ "-D", "-p", s.pidfile,
							  "-f", cfg, NULL });
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	g_assert_cmpint(g_unlink(gate), ==, 0);
	g_assert_cmpint(g_unlink(held), ==, 0);
	w = start_wrapper(&s, NULL, cfg);
	assert_first_sf(w, &daemon, 1);
	line = t_wait_file_line(held, "held", NULL, 1, T_WAIT);
	g_assert_nonnull(line);
	t_end_started(d);
	exited = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, daemon, "standalone");
	g_assert_nonnull(wait_log_anywhere(w, exited));
	g_free(t_write_file(s.dir, "gen1.gate", ""));
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	status = run_status(&s, "--format=openmetrics");
	g_assert_nonnull(strstr(status, "\nhaproxy_wrapper_takeovers_total 1\n"));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/takeover/daemon-under-load",
			test_takeover_daemon_under_load);
	g_test_add_func("/takeover/master-worker", test_takeover_master_worker);
	g_test_add_func("/takeover/counted-when-gone-before-ready",
			test_takeover_counted_when_gone_before_ready);
	g_test_add_func("/takeover/cannot-bind-leaves-foreign-serving",
			test_cannot_bind_leaves_foreign_serving);
	g_test_add_func("/takeover/master-mid-reload",
			test_takeover_master_mid_reload);
	g_test_add_func("/takeover/takeover-off", test_takeover_off);
	g_test_add_func("/takeover/no-foreign", test_no_foreign);
	return g_test_run();
}
