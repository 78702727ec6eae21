/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The harness itself, on the real haproxy: a process is known by the file
 * it runs (device and inode), whatever symbolic link named it when it was
 * started; and a haproxy a test started that escaped every tree (a
 * daemon, what a broken wrapper left) is ended with the test's directory.
 */
#include <glib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/harness.h"

/* dir/bin: a symbolic link to the directory of the haproxy under test,
 * as a shared build directory linked beside a checkout is. The path
 * through it. */
static gchar *haproxy_through_link(const char *dir)
{
	g_autofree gchar *real_dir = g_path_get_dirname(t_haproxy_path());
	g_autofree gchar *base = g_path_get_basename(t_haproxy_path());
	g_autofree gchar *link = g_build_filename(dir, "bin", NULL);

	g_assert_cmpint(symlink(real_dir, link), ==, 0);
	return g_build_filename(link, base, NULL);
}

static gboolean have_haproxy(void)
{
	if (t_have_haproxy())
		return TRUE;
	g_test_skip("no haproxy to run");
	return FALSE;
}

/* SIGKILL pid (our child) and reap it: what a test that failed leaves no
 * process behind with. */
static void kill_child(GPid pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A haproxy started through a link is registered and ended by the file
 * it runs: the link's path is not the one /proc/PID/exe shows. */
static void test_started_through_link(void)
{
	g_autofree gchar *dir = NULL, *path = NULL, *cfg = NULL;
	const char *argv[] = { NULL, "-db", "-f", NULL, NULL };
	g_autoptr(GError) error = NULL;
	struct t_started *p;
	gboolean ended;
	GPid pid;

	if (!have_haproxy())
		return;
	dir = t_tmpdir();
	argv[0] = path = haproxy_through_link(dir);
	argv[3] = cfg = t_write_config(dir, "h.cfg", t_free_port(), NULL);

	g_spawn_async(dir, (char **)argv, NULL,
		      G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
		      G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, &error);
	g_assert_no_error(error);
	g_assert_true(t_runs_file(pid, path));
	p = t_remember(pid, path);
	ended = t_signal_verified(p, SIGKILL);
	if (!ended)
		kill_child(pid);
	g_assert_true(ended);
	g_assert_cmpint(t_wait_child(pid, T_WAIT), !=, -1);
	t_end_all_started();
	t_rmtree(dir);
}

/* A haproxy daemon the test started and never registered (reparented
 * to init, no one's descendant): removing the test's directory, that
 * its command line names, ends it. */
static void test_escaped_haproxy_ended(void)
{
	g_autofree gchar *dir = NULL, *path = NULL, *cfg = NULL;
	g_autofree gchar *pidfile = NULL;
	const char *argv[] = { NULL, "-D", "-p", NULL, "-f", NULL, NULL };
	gboolean alive;
	GPid daemon;

	if (!have_haproxy())
		return;
	dir = t_tmpdir();
	argv[0] = path = haproxy_through_link(dir);
	argv[3] = pidfile = g_build_filename(dir, "h.pid", NULL);
	argv[5] = cfg = t_write_config(dir, "h.cfg", t_free_port(), NULL);

	t_launch_daemon(dir, argv);
	daemon = t_wait_pidfile(pidfile);
	g_assert_cmpint(daemon, >, 0);
	g_assert_true(t_runs_file(daemon, t_haproxy_path()));

	t_rmtree(dir);
	alive = t_pid_alive(daemon);
	/* Not left running when the harness failed to end it. */
	if (alive)
		t_kill_if_exe(daemon, t_haproxy_path());
	g_assert_false(alive);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/harness/started-through-link",
			test_started_through_link);
	g_test_add_func("/harness/escaped-haproxy-ended",
			test_escaped_haproxy_ended);
	return g_test_run();
}
