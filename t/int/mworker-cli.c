/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Master-worker mode and what it touches beside haproxy: a pidfile in a
 * shared directory (a planted symlink is never followed), and -S, the
 * master CLI (Debian's unit passes -S /run/...sock), with the real
 * haproxy and with fakes too old for it or with it off.
 */
#include <glib.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/mastercli.h"
#include "t/lib/mworker.h"

/* dir/shared (mode 1777, like /tmp) holding "haproxy.pid", a symlink that
 * another user (nobody) planted, to dir/precious: its path. */
static gchar *plant_pidfile_symlink(const char *dir, struct stat *precious)
{
	g_autofree gchar *shared = g_build_filename(dir, "shared", NULL);
	g_autofree gchar *target = g_build_filename(dir, "precious", NULL);
	gchar *link = g_build_filename(shared, "haproxy.pid", NULL);
	const struct timespec old[2] = { { .tv_sec = 1000000000 },
					 { .tv_sec = 1000000000 } };

	g_assert_cmpint(g_mkdir(shared, 0755), ==, 0);
	g_assert_cmpint(chmod(shared, 01777), ==, 0);
	g_assert_true(g_file_set_contents(target, "precious\n", -1, NULL));
	g_assert_cmpint(utimensat(AT_FDCWD, target, old, 0), ==, 0);
	g_assert_cmpint(symlink(target, link), ==, 0);
	g_assert_cmpint(lchown(link, 65534, 65534), ==, 0);
	g_assert_cmpint(stat(target, precious), ==, 0);
	return link;
}

/* Every open, read or write of dir/precious from now on, queued. */
static int watch_precious(const char *dir)
{
	g_autofree gchar *target = g_build_filename(dir, "precious", NULL);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(inotify_add_watch(fd, target, IN_OPEN | IN_ACCESS |
					  IN_MODIFY | IN_ATTRIB), >=, 0);
	return fd;
}

/* inotify queues events as they happen: none so far means none. */
static void assert_never_opened(int fd)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0)
		g_test_message("precious: event mask 0x%x",
			       ((struct inotify_event *)buf)->mask);
	g_assert_cmpint(n, ==, -1);
	g_assert_cmpint(errno, ==, EAGAIN);
}

static void assert_precious_untouched(const char *dir,
				      const struct stat *before)
{
	g_autofree gchar *target = g_build_filename(dir, "precious", NULL);
	g_autofree gchar *text = NULL;
	struct stat after;

	g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "precious\n");
	g_assert_cmpint(stat(target, &after), ==, 0);
	g_assert_cmpint(after.st_mtim.tv_sec, ==, before->st_mtim.tv_sec);
	g_assert_cmpint(after.st_mtim.tv_nsec, ==, before->st_mtim.tv_nsec);
	g_assert_cmpint(after.st_size, ==, before->st_size);
}

/* The pidfile is replaced, never followed: -p names a sticky
 * world-writable directory where another user planted a symlink to a
 * file; through start, two reloads and stop, in -db and in master-worker
 * mode (where haproxy writes the pidfile itself), the file is never even
 * opened, the pidfile holds the pid to signal, and is ours to remove at
 * exit. */
static void test_real_pidfile_symlink(void)
{
	static const char *const modes[] = { NULL, "-W" };

	if (skip_without_haproxy())
		return;
	for (guint m = 0; m < G_N_ELEMENTS(modes); m++) {
		g_auto(Site) s = { 0 };
		const char *opts[] = { modes[m], NULL };
		gboolean mw = modes[m] != NULL;
		struct stat precious, st;
		GPid serving;

		int watch;

		g_test_message("mode %s", mw ? "-W" : "-db");
		site_init(&s, FALSE, NULL);
		g_free(s.t.pidfile);
		s.t.pidfile = plant_pidfile_symlink(s.t.dir, &precious);
		watch = watch_precious(s.t.dir);
		site_start(&s, NULL, opts);
		assert_never_opened(watch);
		serving = s.master;
		for (guint i = 0; i < 2; i++) {
			g_autofree gchar *line = mw ?
				g_strdup_printf(LOG_MASTER_RELOADED_FMT, 1) :
				g_strdup_printf(LOG_READY_FMT, i + 2);

			const char *got;

			wrapper_signal(s.t.w, SIGUSR2);
			got = wrapper_wait_log(s.t.w, line, T_WAIT);
			g_assert_nonnull(got);
			if (!mw)
				serving = t_pid_in(got, LOG_PID_KEY);
			g_assert_cmpint(lstat(s.t.pidfile, &st), ==, 0);
			g_assert_true(S_ISREG(st.st_mode));
			g_assert_cmpint(read_pidfile(s.t.pidfile), ==, serving);
			assert_never_opened(watch);
		}
		wrapper_signal(s.t.w, SIGTERM);
		g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
		g_assert_cmpint(lstat(s.t.pidfile, &st), ==, -1);
		assert_never_opened(watch);
		close(watch);
		assert_precious_untouched(s.t.dir, &precious);
	}
}

/* "<pid> worker ..." on a line of show proc's answer. */
static gboolean show_proc_lists_worker(const char *text, GPid pid)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree gchar *want = g_strdup_printf("%d", pid);

	for (guint i = 0; lines[i]; i++) {
		g_auto(GStrv) f = g_strsplit_set(lines[i], " \t", -1);
		guint n = 0;
		const char *w[2] = { NULL, NULL };

		for (guint j = 0; f[j] && n < 2; j++)
			if (*f[j])
				w[n++] = f[j];
		if (n == 2 && g_str_equal(w[0], want) &&
		    g_str_equal(w[1], "worker"))
			return TRUE;
	}
	return FALSE;
}

/* pid ended and its parent reaped it: no /proc entry left. Bounded. */
static gboolean wait_reaped(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d", pid);
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;

	g_assert_true(t_wait_gone(pid, T_WAIT));
	while (g_file_test(path, G_FILE_TEST_EXISTS) &&
	       g_get_monotonic_time() < deadline)
		g_usleep(5 * 1000);
	return !g_file_test(path, G_FILE_TEST_EXISTS);
}

/* The real haproxy's site, the wrapper started on it with -S: the master
 * CLI's path. */
static gchar *start_with_master_cli(Site *s)
{
	gchar *sock;
	g_autofree gchar *sock_arg = NULL;
	const char *opts[] = { "-S", NULL, NULL };

	site_init(s, FALSE, NULL);
	sock = g_build_filename(t_short_dir(s->t.dir), "master.sock", NULL);
	sock_arg = g_strdup_printf("%s,mode,600", sock);
	opts[1] = sock_arg;
	site_start(s, NULL, opts);
	return sock;
}

/* -S alone asks for master-worker mode: 2.6 runs as a master whose CLI
 * lists the current worker after two reloads, by signal and by request. */
static void test_real_master_cli(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *proc = NULL;
	g_autofree gchar *ready1 = NULL, *reloaded1 = NULL;
	GPid worker, next;

	if (skip_without_haproxy())
		return;
	sock = start_with_master_cli(&s);
	g_assert_nonnull(wrapper_find_log(s.t.w, " -Ws"));
	ready1 = g_strdup_printf(LOG_READY_FMT, 1);
	reloaded1 = g_strdup_printf(LOG_MASTER_RELOADED_FMT, 1);
	worker = t_pid_in(wrapper_find_log(s.t.w, ready1),
			  LOG_WORKERS_PIDS_KEY);
	g_assert_cmpint(t_wait_serving(s.t.port, T_WAIT), ==, worker);
	wrapper_signal(s.t.w, SIGUSR2);
	next = t_pid_in(wrapper_wait_log(s.t.w, reloaded1, T_WAIT),
			LOG_WORKERS_PIDS_KEY);
	g_assert_cmpint(next, >, 0);
	g_assert_cmpint(next, !=, worker);
	worker = site_reload(&s, next);
	/* Draining, the old worker is still listed as one; no longer once
	 * the master reaped it (it updates its list as it reaps). */
	g_assert_true(wait_reaped(next));
	proc = t_master_cli(sock, "show proc", T_WAIT);
	g_test_message("show proc:\n%s", proc);
	g_assert_true(show_proc_lists_worker(proc, worker));
	g_assert_false(show_proc_lists_worker(proc, next));
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
}

/*
 * When the wrapper says the master serves (its start, a reload, a failed
 * one), the master CLI answers: a 2.5-3.0 master re-executes itself after
 * each load, and its CLI refuses connections until the new image runs.
 * `systemctl start` or `reload` returns at that word; a script's next
 * command on the socket must not be refused.
 */
static void test_real_master_cli_when_ready(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *out = NULL;
	GPid worker;

	if (skip_without_haproxy())
		return;
	sock = start_with_master_cli(&s);
	g_assert_true(t_master_cli_accepts_for(sock, 300));
	worker = t_wait_serving(s.t.port, T_WAIT);
	for (guint i = 0; i < 3; i++) {
		worker = site_reload(&s, worker);
		g_assert_true(t_master_cli_accepts_for(sock, 300));
	}
	site_write_config(&s, "    no-such-keyword here\n");
	g_assert_cmpint(site_client(&s, "--reload", &out), !=, 0);
	g_assert_true(t_master_cli_accepts_for(sock, 300));
	g_assert_cmpint(t_wait_serving(s.t.port, T_WAIT), ==, worker);
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
}

/* A wrapper for the fake haproxy of version at dir/haproxy, replaced
 * (not rewritten): the wrapper probes the new version at its next load. */
static gchar *fake_of_version(const char *dir, const char *version)
{
	g_autofree gchar *text = g_strdup_printf(
		"#!/bin/sh\nFAKE_HAPROXY_VERSION=%s exec %s/fake/fake-haproxy "
		"\"$@\"\n", version, t_dir());
	g_autofree gchar *tmp = t_write_file(dir, "haproxy.tmp", text);
	gchar *path = g_build_filename(dir, "haproxy", NULL);

	g_assert_cmpint(g_chmod(tmp, 0755), ==, 0);
	g_assert_cmpint(g_rename(tmp, path), ==, 0);
	return path;
}

/* Before 1.9 there is no master CLI: -S is a usage error at start. */
static void test_fake_master_cli_too_old(void)
{
	static const char *const versions[] = { "1.5.18", "1.7.0", "1.8.30" };

	for (guint i = 0; i < G_N_ELEMENTS(versions); i++) {
		g_auto(Site) s = { 0 };
		g_autofree gchar *haproxy = NULL;
		g_autofree gchar *haproxy_opt = NULL;
		const char *args[8];
		int status;

		g_test_message("haproxy %s", versions[i]);
		site_init(&s, TRUE, NULL);
		haproxy = fake_of_version(s.t.dir, versions[i]);
		haproxy_opt = g_strdup_printf("--haproxy=%s", haproxy);
		args[0] = s.t.rundir_opt;
		args[1] = haproxy_opt;
		args[2] = "-S";
		args[3] = "/run/nowhere/master.sock";
		args[4] = "-f";
		args[5] = s.t.cfg;
		args[6] = NULL;
		s.t.w = wrapper_start(args, NULL);
		status = wrapper_wait_exit(s.t.w, T_WAIT);
		g_assert_true(WIFEXITED(status));
		g_assert_cmpint(WEXITSTATUS(status), ==, 64);
		g_assert_nonnull(wrapper_find_log(s.t.w,
						  LOG_MASTER_CLI_TOO_OLD));
		g_assert_null(wrapper_find_log(s.t.w, LOG_EXEC_ANY));
	}
}

/* -S asks for master-worker mode, which --master-worker=off refuses: a
 * usage error, before any haproxy runs. */
static void test_fake_master_cli_mode_off(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "--master-worker=off", "-S", "/run/x.sock",
			       NULL };
	const char *args[8];
	guint n = 0;
	int status;

	site_init(&s, TRUE, NULL);
	args[n++] = s.t.rundir_opt;
	for (guint i = 0; opts[i]; i++)
		args[n++] = opts[i];
	args[n++] = "-f";
	args[n++] = s.t.cfg;
	args[n] = NULL;
	s.t.w = wrapper_start(args, NULL);
	status = wrapper_wait_exit(s.t.w, T_WAIT);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 64);
	g_assert_nonnull(wrapper_find_log(s.t.w, LOG_MW_OFF_REFUSES));
	g_assert_null(wrapper_find_log(s.t.w, LOG_EXEC_ANY));
}

/* A reload into a haproxy too old for -S fails; the master serves on,
 * and a reload into a good one works again. */
static void test_fake_master_cli_reload_into_older(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *haproxy = NULL;
	g_autofree gchar *haproxy_opt = NULL;
	g_autofree gchar *sock = NULL;
	g_autofree gchar *out = NULL;
	const char *args[8];
	GPid worker;

	site_init(&s, TRUE, NULL);
	haproxy = fake_of_version(s.t.dir, "2.6.12");
	haproxy_opt = g_strdup_printf("--haproxy=%s", haproxy);
	sock = g_build_filename(t_short_dir(s.t.dir), "master.sock", NULL);
	args[0] = s.t.rundir_opt;
	args[1] = haproxy_opt;
	args[2] = "-S";
	args[3] = sock;
	args[4] = "-f";
	args[5] = s.t.cfg;
	args[6] = NULL;
	s.t.w = wrapper_start(args, NULL);
	s.master = wrapper_wait_ready(s.t.w, 1, T_WAIT);
	g_assert_cmpint(s.master, >, 0);
	g_assert_nonnull(wrapper_find_log(s.t.w, " -Ws"));
	worker = t_wait_serving(s.t.port, T_WAIT);
	g_free(fake_of_version(s.t.dir, "1.8.30"));
	g_assert_cmpint(site_client(&s, "--reload", &out), ==, 1);
	g_assert_nonnull(strstr(out, "needs haproxy >= 1.9"));
	g_assert_nonnull(wrapper_find_log(s.t.w, LOG_KEEPS_SERVING));
	g_assert_cmpint(t_http_pid(s.t.port), ==, worker);
	g_assert_true(t_pid_alive(s.master));
	g_free(fake_of_version(s.t.dir, "2.6.12"));
	site_reload(&s, worker);
	wrapper_signal(s.t.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/mworker/real/master-cli", test_real_master_cli);
	g_test_add_func("/mworker/real/master-cli-when-ready",
			test_real_master_cli_when_ready);
	g_test_add_func("/mworker/real/pidfile-symlink",
			test_real_pidfile_symlink);
	g_test_add_func("/mworker/fake/master-cli-too-old",
			test_fake_master_cli_too_old);
	g_test_add_func("/mworker/fake/master-cli-mode-off",
			test_fake_master_cli_mode_off);
	g_test_add_func("/mworker/fake/master-cli-reload-into-older",
			test_fake_master_cli_reload_into_older);
	return g_test_run();
}
