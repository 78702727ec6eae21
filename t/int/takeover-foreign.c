/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the takeover never touches or never believes: a pidfile naming
 * another program (it gets no signal), another user's instance, names
 * another user chose (never a forged log line), on the real haproxy. Every wait is on a real event (a log
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

/* Names another user chose: never a forged log line. */
#define FORGED_DIR "t\n<0>haproxy-systemd-wrapper: FORGED"
#define FORGED_ESCAPED "t\\n<0>haproxy-systemd-wrapper: FORGED"

/* Started as our child, so that we can reap it; registered once ready. */
static void test_pidfile_naming_unrelated_process(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *record = NULL, *pids = NULL, *skip = NULL;
	g_autofree gchar *others = NULL;
	struct t_started *recorder;
	GPid pid, gen1, gen2;

	daemon_site_init(&s);
	record = g_build_filename(s.dir, "signals", NULL);
	recorder = t_start_recorder(record);
	pid = recorder->pid;
	pids = g_strdup_printf("%d\n", pid);
	g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));

	w = start_wrapper(&s, NULL, NULL);
	skip = g_strdup_printf(LOG_NOT_TAKING_OVER_FMT, pid);
	g_assert_nonnull(wrapper_wait_log(w, skip, T_WAIT));
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	g_assert_null(wrapper_find_log(w, LOG_TAKING_OVER_STANDALONE));

	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wait_answered_by(s.port, gen2), ==, gen2);
	stop_wrapper_ok(w);

	others = t_signals_before_marker(record, recorder);
	g_assert_cmpstr(others, ==, "");
	g_assert_true(t_signal_verified(recorder, SIGKILL));
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	daemon_site_clear(&s);
}

/* Between fork and exec: become nobody, as another local user would be. */
static void become_nobody(gpointer unused)
{
	if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(126);
}

/* Another user's haproxy (uid 65534) that loads the very configuration
 * path of the service (rewritten since, to another port): passed over and
 * left alone, through the wrapper's start, a reload and stop. */
static void test_other_users_instance_left_alone(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *skip = NULL, *cfg = NULL, *done = NULL;
	guint16 theirs;
	struct t_started *other;
	GPid pid, gen1, gen2;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	theirs = s.port;
	g_assert_cmpint(chmod(s.dir, 0755), ==, 0);
	g_assert_cmpint(chmod(s.cfg, 0644), ==, 0);
	pid = T_FOREIGN(s.dir, .program = HAPROXY, .child_setup = become_nobody,
			.args = (const char *const[]){ "-db", "-f", s.cfg, NULL });
	other = t_remember(pid, HAPROXY);
	g_assert_cmpint(t_wait_serving(theirs, T_WAIT), ==, pid);

	/* The same path, now the service's own port. */
	s.port = t_free_port();
	cfg = t_write_config(s.dir, "haproxy.cfg", s.port, NULL);
	g_assert_cmpstr(cfg, ==, s.cfg);
	/* --debug: a search that found nothing is told with it only. */
	w = start_wrapper(&s, "--debug", NULL);
	/* No haproxy in the pidfile: the search runs once generation 1
	 * serves (faststart). */
	assert_first_sf(w, NULL, 0);
	gen1 = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(gen1, >, 0);
	done = g_strdup_printf(LOG_LATE_SEARCH_FOUND_FMT, 0u);
	g_assert_nonnull(wrapper_wait_log(w, done, T_WAIT));
	g_assert_null(wrapper_find_log(w, LOG_TAKING_OVER_STANDALONE));
	/* Another user's process: passed over by its owner, its command
	 * line never read, without a word (any user could make one). */
	skip = g_strdup_printf(LOG_NOT_TAKING_OVER_FMT, pid);
	g_assert_null(wrapper_find_log(w, skip));
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, gen1);
	wrapper_signal(w, SIGUSR2);
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wait_answered_by(s.port, gen2), ==, gen2);
	stop_wrapper_ok(w);

	g_assert_true(t_pid_alive(pid));
	g_assert_cmpint(t_http_pid(theirs), ==, pid);
	g_assert_true(t_signal_verified(other, SIGKILL));
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	daemon_site_clear(&s);
}

/* A copy of program under dir/FORGED_DIR/name: its path. */
static gchar *copy_as_forged(const char *dir, const char *program,
			     const char *name)
{
	g_autofree gchar *sub = g_build_filename(dir, FORGED_DIR, NULL);

	return copy_program(sub, program, name);
}

/* Every line the wrapper wrote is one of its own: a priority of ours
 * (3 to 7) before its name, or haproxy's; the forged text only escaped. */
static void assert_no_forged_line(struct wrapper *w)
{
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		g_assert_false(line[0] == '<' && line[1] >= '0' &&
			       line[1] <= '2');
		if (strstr(line, "FORGED"))
			g_assert_nonnull(strstr(line, FORGED_ESCAPED));
	}
}

/* A process the pidfile names, its executable path holding a newline and
 * "<0>": the stranger notice (--takeover=off) and the takeover's skip
 * notice print it escaped. */
static void test_hostile_name_not_haproxy(void)
{
	struct t_site s = { 0 };
	g_autofree gchar *sleeper = NULL, *pids = NULL;
	char *argv[] = { NULL, (char *)"60", NULL };
	g_autoptr(GError) error = NULL;
	struct t_started *p;
	GPid pid;

	daemon_site_init(&s);
	sleeper = copy_as_forged(s.dir, "/usr/bin/sleep", "sleep");
	argv[0] = sleeper;
	g_assert_true(g_spawn_async(NULL, argv, NULL,
				    G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
				    &pid, &error));
	g_assert_no_error(error);
	p = t_remember(pid, "/sleep");
	pids = g_strdup_printf("%d\n", pid);
	g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));
	for (guint i = 0; i < 2; i++) {
		g_autoptr(Wrapper) w = NULL;
		g_autofree gchar *want = g_strdup_printf(
			i ? LOG_NOT_TAKING_OVER_RUNS_FMT
			  : LOG_PIDFILE_NAMES_FMT, pid);
		const char *line;

		g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));
		w = start_wrapper(&s, i ? NULL : "--takeover=off", NULL);
		line = wrapper_wait_log(w, want, T_WAIT);
		g_assert_nonnull(line);
		g_assert_nonnull(strstr(line, FORGED_ESCAPED));
		g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
		stop_wrapper_ok(w);
		assert_no_forged_line(w);
	}
	g_assert_true(t_signal_verified(p, SIGKILL));
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	daemon_site_clear(&s);
}

/* A haproxy run from such a path, taken over: the takeover notice and
 * --status (text and JSON, with \u escapes) show it escaped. */
static void test_hostile_name_taken_over(void)
{
	struct t_site s = { 0 };
	g_autoptr(Wrapper) w = NULL;
	g_autofree gchar *haproxy = NULL, *taking = NULL, *text = NULL;
	g_autofree gchar *json = NULL, *err = NULL;
	const char *line;
	GPid daemon, answered;
	int held;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	haproxy = copy_as_forged(s.dir, HAPROXY, "haproxy");
	daemon = t_foreign_daemon(s.dir, haproxy, s.pidfile, s.cfg);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, daemon);
	held = hold_request(s.port, daemon);

	w = start_wrapper(&s, NULL, NULL);
	taking = g_strdup_printf(LOG_TAKING_OVER_STANDALONE_FMT, daemon);
	line = wrapper_wait_log(w, taking, T_WAIT);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, FORGED_ESCAPED "/haproxy" LOG_FOUND_BY));
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	/* It drains the held request: listed as foreign meanwhile. */
	text = run_status(&s, NULL);
	json = run_status(&s, "--json");
	g_assert_true(t_pid_alive(daemon));
	g_assert_nonnull(strstr(text, FORGED_ESCAPED "/haproxy standalone"));
	g_assert_null(strstr(text, "\n<0>"));
	g_assert_nonnull(strstr(json, "\"executable\":\"" ));
	/* JSON's own escape for the newline (json-glib's choice). */
	g_assert_nonnull(strstr(json, "t\\n<0>haproxy-systemd-wrapper: "
				      "FORGED/haproxy\""));
	/* One line of JSON, nothing after it: no raw control character
	 * in it. */
	g_assert_true(g_str_has_suffix(json, "}\n"));
	for (const char *c = json; *c != '\n'; c++)
		g_assert_cmpint((unsigned char)*c, >=, 0x20);

	err = finish_request(held, "Host: t\r\n\r\n", &answered);
	close(held);
	g_assert_null(err);
	g_assert_true(t_wait_gone(daemon, T_WAIT));
	stop_wrapper_ok(w);
	assert_no_forged_line(w);
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/takeover/pidfile-naming-unrelated-process",
			test_pidfile_naming_unrelated_process);
	g_test_add_func("/takeover/other-users-instance-left-alone",
			test_other_users_instance_left_alone);
	g_test_add_func("/takeover/hostile-name-not-haproxy",
			test_hostile_name_not_haproxy);
	g_test_add_func("/takeover/hostile-name-taken-over",
			test_hostile_name_taken_over);
	return g_test_run();
}
