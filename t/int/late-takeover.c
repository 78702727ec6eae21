/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first start costs nothing that grows with the host: the
 * search for foreign instances (a read of every process) runs first only
 * when the pidfile names a live haproxy. Otherwise generation 1 starts at
 * once and the search runs once it serves: a foreign -D serving the same
 * configuration under another pidfile is then soft-stopped by the
 * wrapper; one that holds the port without SO_REUSEPORT makes generation
 * 1 fail, and the search then runs before a second try with its pid on
 * -sf. On the real haproxy; every wait is on a real event (a log line,
 * a process gone, a socket answering, --status) and bounded. The daemons
 * are not our children: registered, and ended by verified pid.
 */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "t/lib/takeover.h"

/* "haproxy -D -p pidfile -f the site's configuration [-f extra]" in the
 * site's directory, its launcher gone: the daemon's pid, registered. */
static GPid daemon_with_pidfile(struct t_site *s, const char *pidfile,
				const char *extra)
{
	return T_FOREIGN(s->dir, .program = HAPROXY, .daemon = TRUE,
			 .pidfile = pidfile,
			 .args = (const char *const[]){ "-D", "-p", pidfile,
				"-f", s->cfg, extra ? "-f" : NULL, extra, NULL });
}

/* The line saying the search that waited is over, with n found. */
static void wait_late_search(struct wrapper *w, guint n)
{
	g_autofree gchar *done = g_strdup_printf(LOG_LATE_SEARCH_FOUND_FMT, n);

	g_assert_nonnull(wait_log_anywhere(w, done));
}

/*
 * (a) A foreign -D on the same configuration and pidfile, the pidfile
 * gone since: generation 1 starts with nothing of it on -sf, serves beside
 * it (SO_REUSEPORT), and only then is it found by its command line, told
 * SIGUSR1, and gone; ours alone answers.
 */
static void test_found_after_serving(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *taking = NULL, *soft = NULL;
	g_autofree gchar *exited = NULL;
	GPid daemon, gen1;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	daemon = daemon_with_pidfile(&s, s.pidfile, NULL);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	g_assert_cmpint(g_unlink(s.pidfile), ==, 0);

	/* --debug: the deferred search is a step, told with it only. */
	w = start_wrapper(&s, "--debug", NULL);
	g_assert_nonnull(wrapper_wait_log(w, LOG_SEARCH_DEFERRED, T_WAIT));
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	taking = g_strdup_printf(LOG_TAKING_OVER_STANDALONE_FMT, daemon);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	soft = g_strdup_printf(LOG_FOREIGN_SOFT_STOP_FMT, daemon);
	g_assert_nonnull(wrapper_wait_log(w, soft, T_WAIT));
	wait_late_search(w, 1);
	assert_status_foreign(&s, daemon, "standalone",
			      "\nhaproxy_wrapper_takeovers_total 1\n");

	g_assert_true(t_wait_gone(daemon, T_WAIT));
	exited = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, daemon, "standalone");
	g_assert_nonnull(wait_log_anywhere(w, exited));
	g_assert_cmpint(wait_answered_by(s.port, gen1), ==, gen1);
	g_assert_true(t_pid_alive(gen1));
	g_assert_null(wrapper_find_log(w, LOG_FIRST_FAILED_SEARCH));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/*
 * (b) The same daemon bound without SO_REUSEPORT: generation 1 cannot
 * bind and ends; the search runs then, and generation 2 starts with the
 * daemon's pid on -sf (haproxy's own pause and soft stop) and serves.
 */
static void test_noreuseport_fallback(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *taking = NULL;
	g_autoptr(GArray) sf = NULL;
	const char *second;
	GPid daemon, gen2;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	/* The service's file, the pidfile gone since (as in (a)). */
	t_site_config(&s, "global\n    noreuseport\n");
	daemon = daemon_with_pidfile(&s, s.pidfile, NULL);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	g_assert_cmpint(g_unlink(s.pidfile), ==, 0);

	w = start_wrapper(&s, NULL, NULL);
	assert_first_sf(w, NULL, 0);
	g_assert_nonnull(wrapper_wait_log(w, LOG_FIRST_FAILED_SEARCH,
					  T_WAIT));
	taking = g_strdup_printf(LOG_TAKING_OVER_STANDALONE_FMT, daemon);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	second = wrapper_executing_line(w, 2);
	g_assert_nonnull(second);
	sf = sf_pid_list(second);
	g_assert_cmpuint(sf->len, ==, 2);
	g_assert_cmpint(g_array_index(sf, GPid, 0), ==, daemon);

	g_assert_true(t_wait_gone(daemon, T_WAIT));
	g_assert_cmpint(wait_answered_by(s.port, gen2), ==, gen2);
	g_assert_null(wrapper_find_log(w, LOG_CANNOT_START));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/*
 * (c) A -D that shares our pidfile: the search runs first, as it always
 * did, and generation 1 starts with the daemon on its -sf.
 */
static void test_pidfile_haproxy_first(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	GPid daemon, gen1;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);

	w = start_wrapper(&s, NULL, NULL);
	gen1 = wait_taken_over(w, daemon);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	g_assert_cmpint(wait_answered_by(s.port, gen1), ==, gen1);
	g_assert_null(wrapper_find_log(w, LOG_SEARCH_DEFERRED));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/*
 * (d) A stop while the search that waited still waits for what it found
 * to handle SIGUSR1 (a master-worker master re-executing itself: the
 * fake, named haproxy, for 8 s): the wrapper exits as it would, and the
 * instance is left alone, never signalled.
 */
static void test_stop_during_late_search(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *log = NULL, *taking = NULL;
	g_autofree gchar *soft = NULL, *events = NULL, *stopped = NULL;
	struct t_started *p;
	GPid master, worker;

	/* The file the fake and our haproxy share hides the fake's keyword
	 * in an .if block. */
	if (!have_haproxy_for(TRUE, FALSE))
		return;
	daemon_site_init(&s);
	/* One file for the fake master and our haproxy: the same service. */
	p = fake_master_by_hand(&s,
				FAKE_ONLY("fake-master-late-usr1-ms 8000\n"),
				&log, &worker);
	master = p->pid;
	g_free(t_wait_file_line(log, "master: SIGUSR1 not handled", NULL, 1,
				T_WAIT));
	/* The pidfile gone: the search waits until generation 1 serves. */
	g_assert_cmpint(t_wait_pidfile(s.pidfile), ==, master);
	g_assert_cmpint(g_unlink(s.pidfile), ==, 0);

	w = start_wrapper(&s, NULL, NULL);
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	taking = g_strdup_printf(LOG_TAKING_OVER_MASTER_FMT, master);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	stop_wrapper_ok(w);

	soft = g_strdup_printf(LOG_FOREIGN_SOFT_STOP_FMT, master);
	g_assert_null(wrapper_find_log(w, soft));
	g_assert_null(wrapper_find_log(w, LOG_FOREIGN_UNSETTLED));
	g_assert_true(t_pid_alive(master));
	g_assert_true(g_file_get_contents(log, &events, NULL, NULL));
	stopped = g_strdup_printf("pid=%d master stop", master);
	g_assert_null(strstr(events, stopped));
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, worker);

	g_assert_true(t_signal_verified(p, SIGKILL));
	g_assert_cmpint(t_wait_child(master, T_WAIT), !=, -1);
	daemon_site_clear(&s);
}

/*
 * (e) The search that runs first (the pidfile's -D) has haproxy -v run
 * meanwhile, and the probing step waits for that one: one probe, not two.
 * Our haproxy is a script that holds -v until the machine is probing.
 */
static void test_early_probe_awaited(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *script = NULL, *text = NULL, *probes = NULL;
	g_autofree gchar *gate = NULL, *opt = NULL, *taking = NULL;
	g_autofree gchar *log = NULL;
	GPid daemon;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	probes = g_build_filename(s.dir, "probes", NULL);
	gate = g_build_filename(s.dir, "gate", NULL);
	/* Held a minute at most: the test's own bound is shorter. */
	text = g_strdup_printf("#!/bin/sh\n"
			       "if [ \"$1\" = -v ]; then\n"
			       "  echo probe >>'%s'\n"
			       "  i=0\n"
			       "  while [ ! -e '%s' ] && [ $i -lt 6000 ]; do\n"
			       "    sleep 0.01; i=$((i + 1))\n"
			       "  done\n"
			       "fi\n"
			       "exec %s \"$@\"\n", probes, gate, HAPROXY);
	script = t_write_file(s.dir, "haproxy-gated", text);
	g_assert_cmpint(chmod(script, 0755), ==, 0);
	opt = g_strdup_printf("--haproxy=%s", script);
	daemon = start_daemon(&s, FALSE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);

	/* --debug: the state machine's steps are the event waited for. */
	w = wrapper_start((const char *const[]){
		s.rundir_opt, opt, "--debug", "-f", s.cfg, "-p", s.pidfile,
		NULL }, NULL);
	taking = g_strdup_printf(LOG_TAKING_OVER_STANDALONE_FMT, daemon);
	g_assert_nonnull(wrapper_wait_log(w, taking, T_WAIT));
	g_assert_nonnull(wrapper_wait_log(w, LOG_SETTLED_TO_PROBING, T_WAIT));
	g_assert_true(g_file_set_contents(gate, "", 0, NULL));
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	g_assert_true(g_file_get_contents(probes, &log, NULL, NULL));
	g_assert_cmpstr(log, ==, "probe\n");
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* An idle connection keeps a soft-stopped haproxy draining past every
 * bound of these tests, unless the wrapper ends it. A later global section
 * overrides the harness's hard-stop-after. */
#define HOLD_OPEN "    timeout client 120s\n" \
		  "    timeout http-request 120s\n" \
		  "global\n" \
		  "    hard-stop-after 120s\n"

/* A connection to port that daemon has accepted and holds, idle. */
static int hold_idle(guint16 port, GPid daemon)
{
	gint64 deadline = t_deadline(T_WAIT);
	int fd = connect_port(port);

	g_assert_cmpint(fd, >=, 0);
	while (!accepted_by(daemon, fd, port) && t_ms_left(deadline))
		g_usleep(5 * 1000);
	g_assert_true(accepted_by(daemon, fd, port));
	return fd;
}

/* The wrapper has exited: the taken-over daemon, ours since its soft
 * stop, ended with it (the stop's signal through its pidfd), its end
 * awaited and said as fmt (printf: pid, kind) says it. */
static void assert_ended_with_wrapper(struct wrapper *w, GPid daemon,
				      const char *fmt)
{
	g_autofree gchar *exited = g_strdup_printf(fmt, daemon, "standalone");

	if (t_pid_alive(daemon))
		g_test_message("taken-over haproxy pid %d still runs after "
			       "the wrapper's stop", daemon);
	g_assert_false(t_pid_alive(daemon));
	g_assert_nonnull(wrapper_find_log(w, exited));
}

/* A daemon serving the site's file (HOLD_OPEN), a connection held on it
 * (in *held): late, its pidfile gone (found once generation 1 serves), or
 * not (found first, before generation 1). Its pid. */
static GPid draining_daemon(struct t_site *s, gboolean late, int *held)
{
	GPid daemon;

	daemon_site_init(s);
	t_site_config(s, HOLD_OPEN);
	daemon = daemon_with_pidfile(s, s->pidfile, NULL);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, daemon);
	if (late)
		g_assert_cmpint(g_unlink(s->pidfile), ==, 0);
	*held = hold_idle(s->port, daemon);
	return daemon;
}

/* w took daemon over (late: soft-stopped by us; else by generation 1's
 * -sf, or by us as it serves), serves, and the daemon drains the
 * connection it holds. */
static void wait_draining(struct wrapper *w, GPid daemon, gboolean late)
{
	g_autofree gchar *soft = g_strdup_printf(LOG_FOREIGN_SOFT_STOP_FMT,
						 daemon);

	if (late) {
		g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
		g_assert_nonnull(wrapper_wait_log(w, soft, T_WAIT));
	} else {
		wait_taken_over(w, daemon);
	}
	g_assert_true(t_pid_alive(daemon));
}

/*
 * (f) A stop while a taken-over instance drains (a connection it holds): it
 * was told to leave, nothing else serves it, so it is ours and stops with
 * the wrapper, which waits for its end, as for an adopted one. Found
 * late (soft-stopped by us) or first: held back off generation 1's -sf
 * (its groups steer; soft-stopped by us once generation 1 serves), or on
 * it (option: --reuseport-migration=off, no steering).
 */
static void stop_ends_taken_over(gboolean late, const char *option)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	GPid daemon;
	int held;

	if (!have_haproxy())
		return;
	daemon = draining_daemon(&s, late, &held);
	w = start_wrapper(&s, option, NULL);
	wait_draining(w, daemon, late);
	stop_wrapper_ok(w);
	assert_ended_with_wrapper(w, daemon, LOG_FOREIGN_EXITED_FMT);
	close(held);
	daemon_site_clear(&s);
}

static void test_stop_ends_late_taken_over(void)
{
	stop_ends_taken_over(TRUE, NULL);
}

static void test_stop_ends_held_back_taken_over(void)
{
	stop_ends_taken_over(FALSE, NULL);
}

static void test_stop_ends_sf_taken_over(void)
{
	stop_ends_taken_over(FALSE, "--reuseport-migration=off");
}

/*
 * (g) The wrapper upgrades itself (a reload with --self-upgrade=always)
 * while a taken-over instance drains: the new image takes it back, proven
 * again by identity and start time, and its stop ends it as (f).
 */
static void test_upgrade_keeps_taken_over(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *kept = NULL;
	GPid daemon;
	int held;

	if (!have_haproxy())
		return;
	daemon = draining_daemon(&s, TRUE, &held);
	w = start_wrapper(&s, "--self-upgrade=always", NULL);
	wait_draining(w, daemon, TRUE);
	reload_by_client(&s);
	g_assert_nonnull(wrapper_find_log(w, LOG_REEXECUTING));
	kept = g_strdup_printf(LOG_STILL_ADOPTED_FMT, daemon);
	g_assert_nonnull(wrapper_find_log(w, kept));
	g_assert_true(t_pid_alive(daemon));
	assert_status_foreign(&s, daemon, "standalone",
			      "\nhaproxy_wrapper_takeovers_total 1\n");
	stop_wrapper_ok(w);
	/* Across the exec it is one of the adopted rows. */
	assert_ended_with_wrapper(w, daemon, LOG_ADOPTED_EXITED_FMT);
	close(held);
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/late-takeover/found-after-serving",
			test_found_after_serving);
	g_test_add_func("/late-takeover/noreuseport-fallback",
			test_noreuseport_fallback);
	g_test_add_func("/late-takeover/pidfile-haproxy-first",
			test_pidfile_haproxy_first);
	g_test_add_func("/late-takeover/early-probe-awaited",
			test_early_probe_awaited);
	g_test_add_func("/late-takeover/stop-during-search",
			test_stop_during_late_search);
	g_test_add_func("/late-takeover/stop-ends-taken-over",
			test_stop_ends_late_taken_over);
	g_test_add_func("/late-takeover/stop-ends-held-back-taken-over",
			test_stop_ends_held_back_taken_over);
	g_test_add_func("/late-takeover/stop-ends-sf-taken-over",
			test_stop_ends_sf_taken_over);
	g_test_add_func("/late-takeover/upgrade-keeps-taken-over",
			test_upgrade_keeps_taken_over);
	return g_test_run();
}
