/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Restarts by hand while the wrapper runs (-sf, -st, master-worker):
 * the new haproxy is adopted, not an unrelated one; an adopted one
 * killed or stopped by hand; adoption with --takeover=off. The real
 * haproxy. Every wait is on a real event (a log
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
#include <stdarg.h>
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

/*
 * Generation 1 serves; a restart by hand (how: -sf or -st; -W -D when
 * master_worker) replaces it: the wrapper adopts the new instance, lists
 * it in status, and its next reload takes it over (-sf) without a failed
 * request from the adoption on, and the pidfile names generation 2.
 */
static void check_restart_by_hand(const char *how, gboolean master_worker,
				  const char *option)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *adopting = NULL, *exec2 = NULL;
	g_autoptr(GArray) sf = NULL;
	gboolean hard = g_str_equal(how, "-st");
	struct t_load l;
	GPid gen1, pid, serving, gen2;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	gen1 = start_serving(&s, option, &w);
	/* -st kills generation 1 with its connections: load from after. */
	if (!hard) {
		t_load_start(&l, s.port);
		g_assert_true(t_load_wait_answers(&l, gen1, 20));
	}
	pid = restart_by_hand(&s, how, master_worker);
	adopting = g_strdup_printf(LOG_ADOPTING_KIND_FMT,
				   master_worker ? "master-worker master"
						 : "standalone", pid);
	g_assert_nonnull(wrapper_wait_log(w, adopting, T_WAIT));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	serving = answering_for(s.port, pid);
	if (serving != pid)
		t_remember(serving, HAPROXY);
	if (hard)
		t_load_start(&l, s.port);
	g_assert_true(t_load_wait_answers(&l, serving, 20));
	assert_status_foreign(&s, pid, master_worker ? "master-worker master"
						     : "standalone",
			      "\nhaproxy_wrapper_restarts_adopted_total 1\n");

	wrapper_signal(w, SIGUSR2);
	exec2 = g_strdup(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	sf = sf_pid_list(exec2);
	g_test_message("%s", exec2);
	g_assert_true(proc_pids_contain(sf, pid));
	g_assert_true(proc_pids_contain(sf, serving));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(serving, T_WAIT));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	serving = answering_for(s.port, gen2);
	g_assert_true(t_load_wait_answers(&l, serving, 20));
	/* The restart by hand and the reload that took it back both closed
	 * listeners nobody handed over. */
	finish_across_reset_window(&l);
	g_assert_cmpint(t_wait_pidfile(s.pidfile), ==, gen2);

	/* From then on the wrapper's reloads lose nothing. */
	assert_reload_loses_nothing(&s, serving);
	g_assert_null(wrapper_find_log(w, LOG_LOST_STOPPING));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

static void test_adopt_sf(void)
{
	check_restart_by_hand("-sf", FALSE, NULL);
}

static void test_adopt_st(void)
{
	check_restart_by_hand("-st", FALSE, NULL);
}

static void test_adopt_master_worker_by_hand(void)
{
	check_restart_by_hand("-sf", TRUE, NULL);
}

/* The wrapper runs haproxy -Ws: its master is what the pidfile names. */
static void test_adopt_wrapper_master_worker(void)
{
	check_restart_by_hand("-sf", FALSE, "--master-worker=on");
}

/* Another service's haproxy, started with the restart, is left alone. */
static void test_adopt_not_unrelated(void)
{
	struct t_site s = { 0 }, other = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *unrelated = NULL;
	GPid gen1, pid, stranger, gen2;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	daemon_site_init(&other);
	gen1 = start_serving(&s, NULL, &w);
	stranger = start_daemon(&other, FALSE);
	pid = restart_adopted(&s, w);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	stop_wrapper_ok(w);

	unrelated = g_strdup_printf(LOG_NAMES_PID_FMT, stranger);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (strstr(line, LOG_ADOPT_ANY))
			g_assert_null(strstr(line, unrelated));
	}
	g_assert_true(t_pid_alive(stranger));
	g_assert_cmpint(wait_answered_by(other.port, stranger), ==, stranger);
	daemon_site_clear(&other);
	daemon_site_clear(&s);
}

/* The adopted instance dies while it serves: a crash, for Restart=. */
static void test_adopted_killed(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	struct t_started *adopted;
	GPid pid;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	start_serving(&s, NULL, &w);
	pid = restart_adopted(&s, w);
	adopted = t_remember(pid, HAPROXY);
	g_assert_true(t_signal_verified(adopted, SIGKILL));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 1);
	g_assert_nonnull(wrapper_find_log(w, LOG_ADOPTED_LOST));
	daemon_site_clear(&s);
}

/* A stop while the adopted instance serves ends it, like our own. */
static void test_adopted_stopped(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	GPid pid;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	start_serving(&s, NULL, &w);
	pid = restart_adopted(&s, w);
	stop_wrapper_ok(w);
	g_assert_false(t_pid_alive(pid));
	daemon_site_clear(&s);
}

/* --takeover=off: a restart by hand ends the wrapper, as it used to, and
 * the new instance gets nothing from it. */
static void test_adopt_takeover_off(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	GPid pid;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	start_serving(&s, "--takeover=off", &w);
	pid = restart_by_hand(&s, "-sf", FALSE);
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 0);
	g_assert_nonnull(wrapper_find_log(w, LOG_LOST_STOPPING));
	g_assert_null(wrapper_find_log(w, LOG_ADOPTING_ANY));
	g_assert_true(t_pid_alive(pid));
	g_assert_cmpint(wait_answered_by(s.port, pid), ==, pid);
	daemon_site_clear(&s);
}

/* A "haproxy -D" of the site's configuration and pidfile started by
 * hand, held loading (its Lua, for it alone) until dir/launch.gate
 * exists: its pid; the gate in *gate. */
static GPid held_launcher(struct t_site *s, gchar **gate)
{
	g_autofree gchar *held = g_build_filename(s->dir, "launch.held", NULL);
	g_autofree gchar *text = held_config_text_if(s->dir, "launch",
						     HOLD_VAR);
	g_autofree gchar *line = NULL;
	GPid launcher;

	*gate = g_build_filename(s->dir, "launch.gate", NULL);
	t_site_config(s, text);
	launcher = start_daemon_by_hand(s, HOLD_VAR);
	line = t_wait_file_line(held, "held", NULL, 1, T_WAIT);
	g_assert_nonnull(line);
	return launcher;
}

/* The gate of a held launcher opened: it exits 0 and its daemon writes
 * the pidfile (over old's pid). That daemon's pid, registered. */
static GPid release_launcher(struct t_site *s, GPid launcher,
			     const char *gate, GPid old)
{
	GPid daemon;

	g_assert_true(g_file_set_contents(gate, "", 0, NULL));
	g_assert_cmpint(t_wait_child(launcher, T_WAIT), ==, 0);
	daemon = wait_pidfile_other(s->pidfile, old);
	g_assert_cmpint(daemon, >, 0);
	t_remember(daemon, HAPROXY);
	return daemon;
}

/*
 * A second "haproxy -D" for the same configuration still loads (held by
 * a Lua file until the test opens a gate) when a restart by hand replaces
 * generation 1: the search waits for it, then gives up and adopts what
 * serves. The launcher is not taken for an instance: once it has forked
 * its daemon and exited, the daemon is adopted too, and the next reload
 * takes both over.
 */
static void test_adopt_launcher_loading(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *gate = NULL, *exec2 = NULL;
	g_autofree gchar *adopting = NULL, *adopting_launcher = NULL;
	g_autofree gchar *adopting_second = NULL;
	g_autofree gchar *launcher_end = NULL;
	g_autoptr(GArray) sf = NULL;
	g_autoptr(GError) error = NULL;
	GPid gen1, pid, launcher, second, gen2;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gen1 = start_serving(&s, NULL, &w);
	/* The service's file and pidfile: held for the launcher alone. */
	launcher = held_launcher(&s, &gate);

	pid = restart_by_hand(&s, "-sf", FALSE);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	g_assert_nonnull(wrapper_wait_log(w, adopting, T_WAIT));
	adopting_launcher = g_strdup_printf(LOG_ADOPTING "%d", launcher);
	g_assert_null(wrapper_find_log(w, adopting_launcher));
	g_assert_nonnull(wrapper_find_log(w, LOG_LAUNCHER_AWAITED));

	second = release_launcher(&s, launcher, gate, pid);
	adopting_second = g_strdup_printf(LOG_ADOPTING "%d", second);
	g_assert_nonnull(wrapper_wait_log(w, adopting_second, T_WAIT));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);

	wrapper_signal(w, SIGUSR2);
	exec2 = g_strdup(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	sf = sf_pid_list(exec2);
	g_assert_true(proc_pids_contain(sf, pid));
	g_assert_true(proc_pids_contain(sf, second));
	g_assert_false(proc_pids_contain(sf, launcher));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	g_assert_true(t_wait_gone(second, T_WAIT));
	g_assert_cmpint(answering_for(s.port, gen2), ==, gen2);
	/* The launcher's exit was not an adopted instance's end. */
	launcher_end = g_strdup_printf(LOG_ADOPTED_EXITED_FMT, launcher);
	g_assert_null(wrapper_find_log(w, launcher_end));
	g_assert_null(wrapper_find_log(w, LOG_LOST_STOPPING));
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* Until pid leads a session (its setsid() done); bounded. */
static gboolean wait_own_session(GPid pid)
{
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;
	struct proc_stat st;

	while (proc_stat_at("/proc", pid, &st, NULL) && st.session != pid) {
		if (g_get_monotonic_time() >= deadline)
			return FALSE;
		g_usleep(2 * 1000);
	}
	return st.session == pid;
}

/*
 * The fake, as "haproxy" in s->dir/bin, started by hand as a -D launcher
 * of the service's own file and pidfile (this service's own), with the
 * pairs NAME, VALUE (NULL-terminated) added to its environment; its event
 * log in *log. The launcher's pid.
 */
static GPid fake_launcher_by_hand(struct t_site *s, gchar **log, ...)
{
	const char *args[] = { "-D", "-p", s->pidfile, "-f", s->cfg, NULL };
	g_autoptr(GPtrArray) env = g_ptr_array_new();
	const char *name;
	va_list ap;

	va_start(ap, log);
	while ((name = va_arg(ap, const char *))) {
		g_ptr_array_add(env, (gpointer)name);
		g_ptr_array_add(env, va_arg(ap, gpointer));
	}
	va_end(ap);
	g_ptr_array_add(env, NULL);
	return T_FOREIGN(s->dir, .args = args,
			 .env = (const char *const *)env->pdata, .log = log);
}

/*
 * The search gives up while a -D daemon has been forked but has not yet
 * called setsid() (the fake holds it there; its launcher has exited): it
 * looks like a launcher, and is awaited as one. Once in its own session it
 * is a daemon: the next reload lists it after -sf and it leaves.
 */
static void test_adopt_daemon_before_setsid(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *log = NULL, *gate = NULL, *cfg_text = NULL;
	g_autofree gchar *exec2 = NULL, *pidfile_text = NULL;
	g_autofree gchar *adopting = NULL, *waiting = NULL, *awaited = NULL;
	g_autoptr(GArray) sf = NULL;
	struct proc_stat st;
	GPid gen1, launcher, daemon, pid, gen2;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gen1 = start_serving(&s, NULL, &w);
	gate = g_build_filename(s.dir, "setsid.gate", NULL);
	/* The service's file and pidfile; the gate for the fake alone. */
	cfg_text = g_strdup_printf(FAKE_ONLY("fake-setsid-gate %s\n"), gate);
	t_site_config(&s, cfg_text);
	launcher = fake_launcher_by_hand(&s, &log, NULL);
	g_assert_cmpint(t_wait_child(launcher, T_WAIT), ==, 0);
	daemon = wait_pidfile_other(s.pidfile, gen1);
	g_assert_cmpint(daemon, >, 0);
	t_remember(daemon, "/haproxy");
	waiting = t_wait_file_line(log, "daemon waits to setsid", NULL, 1,
				   T_WAIT);
	g_assert_nonnull(waiting);
	g_assert_true(proc_stat_at("/proc", daemon, &st, NULL));
	g_assert_cmpint(st.session, !=, daemon);

	/* The deploy script's -sf names generation 1, which serves. */
	pidfile_text = g_strdup_printf("%d\n", gen1);
	g_assert_true(g_file_set_contents(s.pidfile, pidfile_text, -1, NULL));
	pid = restart_by_hand(&s, "-sf", FALSE);
	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	g_assert_nonnull(wrapper_wait_log(w, adopting, T_WAIT));
	awaited = g_strdup_printf(LOG_LAUNCHER_AWAITED_FMT, daemon);
	g_assert_nonnull(wait_log_anywhere(w, awaited));
	g_assert_true(g_file_set_contents(gate, "", 0, NULL));
	g_assert_true(wait_own_session(daemon));

	wrapper_signal(w, SIGUSR2);
	exec2 = g_strdup(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	sf = sf_pid_list(exec2);
	g_assert_true(proc_pids_contain(sf, pid));
	g_assert_true(proc_pids_contain(sf, daemon));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	g_assert_cmpint(answering_for(s.port, gen2), ==, gen2);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

/* Ours serving, a launcher held loading by hand, then a restart by hand
 * (-sf) that replaces ours while the search waits for that launcher: the
 * restart's pid. */
static GPid replaced_while_launcher_held(struct t_site *s, Wrapper **w,
					 gchar **gate, GPid *launcher)
{
	GPid pid;

	start_serving(s, NULL, w);
	*launcher = held_launcher(s, gate);
	pid = restart_by_hand(s, "-sf", FALSE);
	g_assert_nonnull(wrapper_wait_log(*w, LOG_LOOKING_FOR_REPLACEMENT,
					  T_WAIT));
	return pid;
}

/*
 * A restart by hand (-sf) replaces generation 1 while a second "haproxy
 * -D" still loads, held: the search waits for it. A stop comes during
 * that search: one last look, and the standalone haproxy that replaced
 * ours stops with the wrapper, through a verified pidfd, with the stop's
 * signal; a hard stop ends the launcher still loading too (nothing of it
 * serves, nothing to drain). Nothing is left running.
 */
static void test_adopt_stop_during_search(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *gate = NULL;
	g_autofree gchar *stops = NULL, *launcher_stops = NULL;
	g_autofree gchar *adopting = NULL;
	g_autoptr(GArray) left = NULL;
	const char *line;
	GPid pid, launcher;
	int status;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	pid = replaced_while_launcher_held(&s, &w, &gate, &launcher);
	wrapper_signal(w, SIGTERM);
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 0);

	/* The search was still waiting for the launcher. */
	adopting = g_strdup_printf(LOG_ADOPTING "%d", pid);
	g_assert_null(wrapper_find_log(w, adopting));
	stops = g_strdup_printf(LOG_STOPS_TOO_FMT, pid);
	line = wrapper_find_log(w, stops);
	g_assert_nonnull(line);
	g_assert_true(g_str_has_prefix(line, LOG_PRIO_NOTICE));
	g_assert_nonnull(strstr(line, "(SIGTERM)" LOG_IT_REPLACED_OURS));
	launcher_stops = g_strdup_printf(LOG_LAUNCHER_STOPS_FMT "SIGTERM)",
					 launcher);
	g_assert_nonnull(wrapper_find_log(w, launcher_stops));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	status = t_wait_child(launcher, T_WAIT);
	g_assert_true(WIFSIGNALED(status));
	g_assert_cmpint(WTERMSIG(status), ==, SIGTERM);
	/* It never wrote the pidfile: it still names the restart by hand. */
	g_assert_true(pidfile_read(s.pidfile, &left, NULL, NULL));
	g_assert_cmpuint(left->len, ==, 1);
	g_assert_cmpint(g_array_index(left, GPid, 0), ==, pid);
	daemon_site_clear(&s);
}

/*
 * The same, with a graceful stop (SIGUSR1): the standalone haproxy that
 * replaced ours gets SIGUSR1; the launcher still loading is not signalled
 * (it handles no signal yet: SIGUSR1 would kill it, and it is not the
 * wrapper's). Once it has forked its daemon and exited (0), the daemon
 * gets SIGUSR1 too, and the wrapper exits 0 when both are gone.
 */
static void test_adopt_graceful_stop_launcher(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *gate = NULL;
	g_autofree gchar *stops = NULL, *spared = NULL, *stops2 = NULL;
	const char *line;
	GPid pid, launcher, second;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	pid = replaced_while_launcher_held(&s, &w, &gate, &launcher);
	wrapper_signal(w, SIGUSR1);

	stops = g_strdup_printf(LOG_STOPS_TOO_FMT, pid);
	line = wait_log_anywhere(w, stops);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "(SIGUSR1)" LOG_IT_REPLACED_OURS));
	spared = g_strdup_printf(LOG_LAUNCHER_SPARED_FMT, launcher);
	g_assert_nonnull(wait_log_anywhere(w, spared));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	/* It waits for what the launcher starts. */
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);

	second = release_launcher(&s, launcher, gate, pid);
	stops2 = g_strdup_printf(LOG_STOPS_TOO_FMT, second);
	line = wait_log_anywhere(w, stops2);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "(SIGUSR1)" LOG_IT_REPLACED_OURS));
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 0);
	g_assert_true(t_wait_gone(second, T_WAIT));
	daemon_site_clear(&s);
}

/*
 * A graceful stop while a launcher loads by hand, and its daemon caught
 * between its fork and its setsid() when the launcher exits (the fake
 * holds it at both points): the last look sees the daemon still in the
 * launcher's session, a launcher to spare. Once it leads its own session
 * it is the daemon, and it gets SIGUSR1 like the instance it joined; the
 * wrapper exits 0 when it is gone, instead of waiting for it forever.
 */
static void test_adopt_graceful_stop_daemon_before_setsid(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *log = NULL;
	g_autofree gchar *launch_gate = NULL, *setsid_gate = NULL;
	g_autofree gchar *line = NULL, *pidfile_text = NULL;
	g_autofree gchar *stops = NULL, *spared = NULL, *daemon_stops = NULL;
	g_autofree gchar *daemon_spared = NULL;
	GPid gen1, pid, launcher, daemon;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	gen1 = start_serving(&s, NULL, &w);
	launch_gate = g_build_filename(s.dir, "launch.gate", NULL);
	setsid_gate = g_build_filename(s.dir, "setsid.gate", NULL);
	launcher = fake_launcher_by_hand(&s, &log, "FAKE_HAPROXY_LAUNCH_GATE",
					 launch_gate,
					 "FAKE_HAPROXY_SETSID_GATE",
					 setsid_gate, NULL);
	t_remember(launcher, "/haproxy");
	line = t_wait_file_line(log, "launcher waits to fork", NULL, 1,
				T_WAIT);
	g_assert_nonnull(line);
	g_clear_pointer(&line, g_free);

	/* The launcher emptied the pidfile; the deploy script's -sf names
	 * generation 1, which serves. */
	pidfile_text = g_strdup_printf("%d\n", gen1);
	g_assert_true(g_file_set_contents(s.pidfile, pidfile_text, -1, NULL));
	pid = restart_by_hand(&s, "-sf", FALSE);
	g_assert_nonnull(wrapper_wait_log(w, LOG_LOOKING_FOR_REPLACEMENT,
					  T_WAIT));
	wrapper_signal(w, SIGUSR1);
	stops = g_strdup_printf(LOG_STOPS_TOO_FMT, pid);
	g_assert_nonnull(wait_log_anywhere(w, stops));
	spared = g_strdup_printf(LOG_LAUNCHER_SPARED_FMT, launcher);
	g_assert_nonnull(wait_log_anywhere(w, spared));
	g_assert_true(t_wait_gone(pid, T_WAIT));

	/* The launcher forks; its daemon waits before setsid(). */
	g_assert_true(g_file_set_contents(launch_gate, "", 0, NULL));
	line = t_wait_file_line(log, "daemon waits to setsid", NULL, 1,
				T_WAIT);
	g_assert_nonnull(line);
	daemon = (GPid)g_ascii_strtoll(line + strlen("pid="), NULL, 10);
	g_assert_cmpint(daemon, >, 0);
	g_clear_pointer(&line, g_free);
	t_remember(daemon, "/haproxy");
	g_assert_cmpint(t_wait_child(launcher, T_WAIT), ==, 0);
	daemon_spared = g_strdup_printf(LOG_LAUNCHER_SPARED_FMT, daemon);
	g_assert_nonnull(wait_log_anywhere(w, daemon_spared));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);

	g_assert_true(g_file_set_contents(setsid_gate, "", 0, NULL));
	daemon_stops = g_strdup_printf(LOG_STOPS_TOO_FMT, daemon);
	line = g_strdup(wait_log_anywhere(w, daemon_stops));
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "(SIGUSR1)" LOG_IT_REPLACED_OURS));
	t_assert_exit_code(wrapper_wait_exit(w, T_WAIT), 0);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	daemon_site_clear(&s);
}

/*
 * A second restart by hand, stop then start: the adopted haproxy is
 * stopped while its successor's launcher still loads. The search that
 * follows is a new one: it waits for that launcher as the first search
 * would, and adopts its daemon; what the first search adopted does not
 * end it at its first look, with the service stopped.
 */
static void test_adopt_second_restart_stop_then_start(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *gate = NULL, *adopting_second = NULL;
	GPid gen1, pid, launcher, second;

	if (!have_haproxy_for(TRUE, TRUE))
		return;
	daemon_site_init(&s);
	gen1 = start_serving(&s, NULL, &w);
	pid = restart_adopted(&s, w);
	g_assert_true(t_wait_gone(gen1, T_WAIT));

	launcher = held_launcher(&s, &gate);

	/* Stopped by hand: nothing serves until the launcher's daemon. */
	g_assert_cmpint(kill(pid, SIGUSR1), ==, 0);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	g_assert_nonnull(wrapper_wait_log(w, LOG_REPLACED_ADOPTED, T_WAIT));
	second = release_launcher(&s, launcher, gate, pid);
	adopting_second = g_strdup_printf(LOG_ADOPTING "%d", second);
	g_assert_nonnull(wrapper_wait_log(w, adopting_second, T_WAIT));
	g_assert_null(wrapper_find_log(w, LOG_LOST_STOPPING));
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	stop_wrapper_ok(w);
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/adopt/sf", test_adopt_sf);
	g_test_add_func("/adopt/graceful-stop-daemon-before-setsid",
			test_adopt_graceful_stop_daemon_before_setsid);
	g_test_add_func("/adopt/st", test_adopt_st);
	g_test_add_func("/adopt/master-worker-by-hand",
			test_adopt_master_worker_by_hand);
	g_test_add_func("/adopt/wrapper-master-worker",
			test_adopt_wrapper_master_worker);
	g_test_add_func("/adopt/not-unrelated", test_adopt_not_unrelated);
	g_test_add_func("/adopt/killed", test_adopted_killed);
	g_test_add_func("/adopt/stopped", test_adopted_stopped);
	g_test_add_func("/adopt/takeover-off", test_adopt_takeover_off);
	g_test_add_func("/adopt/launcher-loading",
			test_adopt_launcher_loading);
	g_test_add_func("/adopt/second-restart-stop-then-start",
			test_adopt_second_restart_stop_then_start);
	g_test_add_func("/adopt/daemon-before-setsid",
			test_adopt_daemon_before_setsid);
	g_test_add_func("/adopt/stop-during-search",
			test_adopt_stop_during_search);
	g_test_add_func("/adopt/graceful-stop-launcher-loading",
			test_adopt_graceful_stop_launcher);
	return g_test_run();
}
