/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real-haproxy tests' steps on a site: start, reload, stop, each
 * checked by what it must leave (see t/lib/real.h).
 */
#include "t/lib/real.h"


#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/proc.h"

/* By the file, not its name: the path under test may run through a
 * symbolic link (a shared/ linked beside a checkout). */
gboolean real_is_haproxy(GPid pid)
{
	g_autofree gchar *exe = g_strdup_printf("/proc/%d/exe", pid);
	struct stat running, tested;

	return t_pid_alive(pid) && stat(exe, &running) == 0 &&
	       stat(t_haproxy_path(), &tested) == 0 &&
	       running.st_dev == tested.st_dev &&
	       running.st_ino == tested.st_ino;
}

guint real_count_haproxy_below(GPid root)
{
	g_autoptr(GArray) below = t_descendants(root);
	guint n = 0;

	for (guint i = 0; i < below->len; i++)
		n += real_is_haproxy(g_array_index(below, GPid, i));
	return n;
}

gchar *real_reloading_line(int sig)
{
	g_autofree gchar *name = g_strconcat("SIG", sigabbrev_np(sig), NULL);

	return g_strdup_printf(LOG_RELOADING_ON_FMT, name);
}

guint real_generation_size(void)
{
	return t_haproxy_at_least(1, 8) ? 1 : 2;
}

GPid real_worker(struct t_site *s)
{
	g_autoptr(GArray) workers = NULL;

	if (t_haproxy_at_least(1, 8))
		return s->pid;
	/* -Ds (before 1.8): a generation is ready once its parent has
	 * forked its one worker. */
	workers = proc_children(s->pid);
	g_assert_cmpuint(workers->len, ==, 1);
	g_assert_true(real_is_haproxy(g_array_index(workers, GPid, 0)));
	return g_array_index(workers, GPid, 0);
}

void real_assert_pidfile(struct t_site *s)
{
	if (s->no_pidfile)
		g_assert_false(g_file_test(s->pidfile, G_FILE_TEST_EXISTS));
	else
		t_assert_pidfile_holds(s->pidfile, real_worker(s));
}

void real_serve(struct t_site *s)
{
	real_serve_within(s, T_WAIT);
}

void real_serve_within(struct t_site *s, guint ready_ms)
{
	s->pid = wrapper_wait_ready(s->w, 1, ready_ms);
	g_assert_cmpint(s->pid, >, 0);
	s->generation = 1;
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, real_worker(s));
	/* Direct child of the wrapper, not a daemon. */
	g_assert_cmpint(proc_parent(s->pid), ==, s->w->pid);
	real_assert_pidfile(s);
}

void real_start(struct t_site *s, const char *path, const char *const *opts)
{
	t_site_start_wrapper(s, path, opts);
	real_serve(s);
}

void real_assert_running(struct t_site *s)
{
	g_assert_cmpint(wrapper_wait_exit(s->w, 0), ==, -1);
	g_assert_true(t_pid_alive(s->w->pid));
}

void real_reload(struct t_site *s, int sig, gboolean wait_old)
{
	g_autofree gchar *want = real_reloading_line(sig);
	GPid old = s->pid;
	const char *line;

	wrapper_signal(s->w, sig);
	t_site_wait_log(s, want);
	line = t_site_wait_log(s, LOG_READY_PID);
	s->pid = t_pid_in(line, "pid ");
	s->generation = t_pid_in(line, "generation ");
	g_assert_cmpint(s->pid, >, 0);
	g_assert_cmpint(s->pid, !=, old);
	g_assert_cmpint(proc_parent(s->pid), ==, s->w->pid);
	real_assert_pidfile(s);
	g_assert_cmpint(wait_answered_by(s->port, real_worker(s)), ==,
			real_worker(s));
	if (wait_old)
		g_assert_true(t_wait_gone(old, T_WAIT));
	real_assert_running(s);
}

void real_assert_reload_failed(struct t_site *s)
{
	t_site_wait_log(s, LOG_RELOAD_FAILED);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, real_worker(s));
	g_assert_true(real_is_haproxy(s->pid));
	g_assert_cmpuint(real_count_haproxy_below(s->w->pid), ==,
			 real_generation_size());
	/* The pidfile still names the generation that serves. */
	real_assert_pidfile(s);
	real_assert_running(s);
}

/* A process that outlived the wrapper is a bug. It is our child (we are
 * a subreaper): the failed assertion's cleanup ends it. */
static void assert_gone(GPid pid)
{
	if (t_pid_alive(pid))
		g_test_message("pid %d outlived the wrapper", pid);
	g_assert_false(t_pid_alive(pid));
}

int real_stop(struct t_site *s, int sig)
{
	g_autoptr(GArray) below = t_descendants(s->w->pid);
	int status;

	wrapper_signal(s->w, sig);
	status = wrapper_wait_exit(s->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	for (guint i = 0; i < below->len; i++)
		assert_gone(g_array_index(below, GPid, i));
	return status;
}

void real_signal_serving(struct t_site *s, int sig)
{
	int fd = proc_open_if_child_of(s->pid, s->w->pid);

	g_assert_cmpint(fd, >=, 0);
	g_assert_true(proc_pidfd_signal(fd, sig));
	close(fd);
}
