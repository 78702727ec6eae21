/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests for migrate/find.c on the real haproxy (Debian's 2.6
 * in /usr/sbin/haproxy), 127.0.0.1 only: daemons started the way init
 * scripts start them are found by pidfile and by configuration, with the
 * shape /proc really shows; a pidfile naming another program gets it
 * skipped, and that program no signal. The daemons are not our children:
 * they are ended by the pid found, through a pidfd, after checking that it
 * is still that haproxy.
 */
#include "t/lib/takeover.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "legacy/pidfile.h"
#include "migrate/find.h"

#define BOTH (FOREIGN_BY_PIDFILE | FOREIGN_BY_CONFIG)

/* ---- safety net: a failed assertion aborts; leave no daemon behind ---- */

/* ---- starting things the way an init script does ---- */

/* ---- what was found ---- */

static GPtrArray *found;
static GPtrArray *skipped;

static guint find(const char *pidfile, const char *cfg)
{
	const char *configs[] = { cfg, NULL };
	g_autoptr(GError) error = NULL;

	g_clear_pointer(&found, g_ptr_array_unref);
	g_clear_pointer(&skipped, g_ptr_array_unref);
	g_assert_true(find_foreign("/proc", pidfile, configs, NULL, getpid(), &found,
				   &skipped, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < found->len; i++) {
		g_autofree gchar *line = foreign_describe(
			g_ptr_array_index(found, i));

		g_test_message("found: %s", line);
	}
	for (guint i = 0; i < skipped->len; i++) {
		const struct foreign_skip *s = g_ptr_array_index(skipped, i);

		g_test_message("skipped %d: %s", s->pid, s->reason);
	}
	return found->len;
}

static const struct foreign *instance(guint i)
{
	g_assert_cmpuint(i, <, found->len);
	return g_ptr_array_index(found, i);
}

static void show_shape(GPid pid)
{
	struct proc_stat st;
	g_autofree gchar *cwd = NULL;

	if (!proc_stat_at("/proc", pid, &st, NULL))
		return;
	cwd = proc_cwd_at("/proc", pid);
	g_test_message("pid %d: ppid %d, session %d, cwd %s", pid, st.ppid,
		       st.session, cwd ? cwd : "?");
}

/* Wait (bounded) until pid has a handler for sig, not blocked. */
static gboolean wait_catches(GPid pid, int sig)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (!proc_catches_signal_at("/proc", pid, sig)) {
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
	return TRUE;
}

/* Wait (bounded) until f handles the signals -sf would send it. */
static gboolean wait_settled(const struct foreign *f)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (!foreign_settled("/proc", f)) {
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
	return TRUE;
}

/* Another thread of pid, or 0. */
static GPid other_thread(GPid pid)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/task", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		GPid tid = (GPid)g_ascii_strtoll(name, NULL, 10);

		if (tid > 0 && tid != pid)
			return tid;
	}
	return 0;
}

static void assert_thread_skipped(GPid pid)
{
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *pidfile = g_build_filename(dir, "t.pid", NULL);
	g_autofree gchar *content = NULL;
	const struct foreign_skip *skip;
	GPid tid = other_thread(pid);

	if (!tid) {
		g_test_message("pid %d has one thread", pid);
		t_rmtree(dir);
		return;
	}
	content = g_strdup_printf("%d\n", tid);
	g_assert_true(g_file_set_contents(pidfile, content, -1, NULL));
	g_assert_cmpuint(find(pidfile, NULL), ==, 0);
	g_assert_cmpuint(skipped->len, ==, 1);
	skip = g_ptr_array_index(skipped, 0);
	g_assert_cmpint(skip->pid, ==, tid);
	g_assert_nonnull(strstr(skip->reason, "a thread"));
	t_rmtree(dir);
}

/* ---- tests ---- */

static void test_daemon(void)
{
	struct t_site s = { 0 };
	const struct foreign *f;
	g_autofree gchar *moved = NULL;
	GPid pid, serving;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	moved = g_strconcat(s.pidfile, ".old", NULL);
	pid = start_daemon(&s, FALSE);
	serving = t_wait_serving(s.port, T_WAIT);
	show_shape(pid);

	g_assert_cmpuint(find(s.pidfile, s.cfg), ==, 1);
	f = instance(0);
	g_assert_cmpint(f->kind, ==, FOREIGN_STANDALONE);
	g_assert_cmpint(f->pid, ==, pid);
	g_assert_cmpint(f->pid, ==, serving);
	g_assert_cmpuint(f->workers->len, ==, 0);
	g_assert_cmpstr(f->exe, ==, HAPROXY);
	g_assert_cmpstr(f->config_files[0], ==, s.cfg);
	g_assert_cmpuint(f->found_by, ==, BOTH);
	g_assert_cmpuint(skipped->len, ==, 0);
	g_assert_true(proc_same_process_at("/proc", pid, f->start_time));
	g_assert_true(wait_settled(f));

	/* Its pidfile gone, its command line still names it: found by its
	 * configuration alone. */
	g_assert_cmpint(rename(s.pidfile, moved), ==, 0);
	g_assert_cmpuint(find(s.pidfile, s.cfg), ==, 1);
	g_assert_cmpint(instance(0)->pid, ==, pid);
	g_assert_cmpuint(instance(0)->found_by, ==, FOREIGN_BY_CONFIG);
	/* Another service's pidfile, or a part of our files: not ours. */
	g_assert_cmpuint(find(moved, s.cfg), ==, 0);
	g_assert_cmpuint(skipped->len, ==, 1);
	g_assert_nonnull(strstr(((struct foreign_skip *)skipped->pdata[0])
					->reason, "not ours"));
	g_assert_cmpint(rename(moved, s.pidfile), ==, 0);

	/* A pidfile naming one of its threads names no process. */
	assert_thread_skipped(pid);

	daemon_site_clear(&s);
	g_assert_false(t_pid_alive(pid));
}

/* "cd dir && haproxy -D -f haproxy.cfg": found through its cwd. */
static void test_daemon_relative(void)
{
	struct t_site s = { 0 };
	GPid pid;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	pid = T_FOREIGN(s.dir, .program = HAPROXY, .daemon = TRUE,
			.pidfile = s.pidfile,
			.args = (const char *const[]){ "-D", "-p", "haproxy.pid",
						       "-f", "haproxy.cfg", NULL });
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, pid);

	g_assert_cmpuint(find(s.pidfile, s.cfg), ==, 1);
	g_assert_cmpint(instance(0)->pid, ==, pid);
	g_assert_cmpstr(instance(0)->config_files[0], ==, s.cfg);
	daemon_site_clear(&s);
}

static void test_master_worker_daemon(void)
{
	struct t_site s = { 0 };
	const struct foreign *f;
	struct t_started *master;
	GPid pid, serving, reloaded;

	if (!have_haproxy())
		return;
	daemon_site_init(&s);
	/* The master's pid; the worker is the one that answers. */
	pid = T_FOREIGN(s.dir, .program = HAPROXY, .daemon = TRUE,
			.pidfile = s.pidfile, .started = &master,
			.args = (const char *const[]){ "-W", "-D", "-p",
				s.pidfile, "-f", s.cfg, NULL });
	serving = t_wait_serving(s.port, T_WAIT);
	g_assert_cmpint(serving, >, 0);
	g_assert_cmpint(serving, !=, pid);
	show_shape(pid);
	show_shape(serving);

	g_assert_cmpuint(find(s.pidfile, s.cfg), ==, 1);
	f = instance(0);
	g_assert_cmpint(f->kind, ==, FOREIGN_MW_MASTER);
	g_assert_cmpint(f->pid, ==, pid);
	g_assert_cmpuint(f->workers->len, ==, 1);
	g_assert_cmpint(g_array_index(f->workers, GPid, 0), ==, serving);
	g_assert_cmpuint(f->found_by, ==, BOTH);
	g_assert_cmpuint(skipped->len, ==, 0);

	/*
	 * After a reload of its own, the newest worker comes last. 2.6
	 * re-executes its master once the worker is up, and a SIGUSR2 that
	 * comes meanwhile is lost: wait until it handles one again.
	 */
	g_assert_true(wait_settled(f));
	g_assert_true(wait_catches(pid, SIGUSR2));
	g_assert_true(t_signal_verified(master, SIGUSR2));
	for (gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	     ((reloaded = t_http_pid(s.port)) == serving || !reloaded) &&
	     g_get_monotonic_time() < end;)
		g_usleep(20 * 1000);
	g_assert_cmpint(reloaded, !=, serving);
	show_shape(reloaded);
	g_assert_cmpuint(find(s.pidfile, s.cfg), ==, 1);
	f = instance(0);
	g_assert_cmpint(f->kind, ==, FOREIGN_MW_MASTER);
	g_assert_cmpint(f->pid, ==, pid);
	g_assert_cmpint(g_array_index(f->workers, GPid, f->workers->len - 1),
			==, reloaded);

	/* The master takes its workers with it. */
	daemon_site_clear(&s);
	g_assert_true(t_wait_gone(reloaded, T_WAIT));
}

/* Starts sigrecorder detached from us, as an unrelated daemon would be. */
static GPid start_recorder(const char *file)
{
	g_autofree gchar *recorder = g_build_filename(t_dir(), "fake/sigrecorder",
						      NULL);
	const char *argv[] = { "/bin/sh", "-c", "\"$0\" \"$1\" </dev/null "
			       ">/dev/null 2>&1 &", recorder, file, NULL };
	g_autoptr(GError) error = NULL;
	GPid sh;

	g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
		      NULL, NULL, &sh, &error);
	g_assert_no_error(error);
	g_assert_cmpint(t_wait_child(sh, T_WAIT), ==, 0);
	return t_wait_recorder_ready(file);
}

static void test_pidfile_names_other_program(void)
{
	struct t_site s = { 0 };
	g_autofree gchar *record = NULL, *pids = NULL, *others = NULL;
	const struct foreign_skip *skip;
	struct t_started *recorder;
	GPid pid;

	daemon_site_init(&s);
	record = g_build_filename(s.dir, "signals", NULL);
	pid = start_recorder(record);
	g_assert_cmpint(pid, >, 0);
	recorder = t_remember(pid, "/sigrecorder");
	/* Not ours: an unrelated daemon the stale pidfile happens to name. */
	g_assert_cmpint(proc_parent(pid), !=, getpid());
	pids = g_strdup_printf("%d\n", pid);
	g_assert_true(g_file_set_contents(s.pidfile, pids, -1, NULL));

	g_assert_cmpuint(find(s.pidfile, s.cfg), ==, 0);
	g_assert_cmpuint(skipped->len, ==, 1);
	skip = g_ptr_array_index(skipped, 0);
	g_assert_cmpint(skip->pid, ==, pid);
	g_assert_cmpuint(skip->found_by, ==, FOREIGN_BY_PIDFILE);
	g_assert_nonnull(strstr(skip->reason, "sigrecorder, not haproxy"));

	others = t_signals_before_marker(record, recorder);
	g_assert_cmpstr(others, ==, "");
	g_assert_true(t_signal_verified(recorder, SIGKILL));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	daemon_site_clear(&s);
}

int main(int argc, char **argv)
{
	int status;

	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();
	g_test_add_func("/migrate/real/daemon", test_daemon);
	g_test_add_func("/migrate/real/daemon-relative", test_daemon_relative);
	g_test_add_func("/migrate/real/master-worker-daemon",
			test_master_worker_daemon);
	g_test_add_func("/migrate/real/pidfile-names-other-program",
			test_pidfile_names_other_program);
	status = g_test_run();
	g_clear_pointer(&found, g_ptr_array_unref);
	g_clear_pointer(&skipped, g_ptr_array_unref);
	return status;
}
