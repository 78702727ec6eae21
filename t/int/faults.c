/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system failing under the wrapper: haproxy missing or not a program
 * at a reload, a pidfile it cannot write, descriptors exhausted
 * (RLIMIT_NOFILE lowered under it, a client queued on the control socket
 * meanwhile), a runtime directory it cannot write, a descriptor inherited
 * from a careless parent, the wrapper SIGKILLed in the middle of a
 * reload. In each case: a clear error in the log, the serving
 * generation keeps serving (the same pid answers HTTP), nothing is
 * orphaned, and the wrapper goes on unless the case is fatal by design.
 * The test process is a child subreaper: whatever the wrapper leaves
 * behind is reparented to it, where "nothing orphaned" is checked. Waits
 * are on events (log lines, exits, sockets, /proc), all bounded.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/faults.h"

static gchar *copy_haproxy(const char *dir)
{
	g_autofree gchar *data = NULL;
	gchar *copy = g_build_filename(dir, "haproxy", NULL);
	gsize len;

	g_assert_true(g_file_get_contents(HAPROXY, &data, &len, NULL));
	g_assert_true(g_file_set_contents(copy, data, len, NULL));
	g_assert_cmpint(g_chmod(copy, 0755), ==, 0);
	return copy;
}

static void test_haproxy_missing_at_reload(void)
{
	g_autofree gchar *away = NULL;
	struct t_site f;
	GPid gen1;
	guint fds;

	if (!t_site_init_real(&f, NULL))
		return;
	f.haproxy = copy_haproxy(f.dir);
	away = g_strconcat(f.haproxy, ".away", NULL);
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);
	fds = settled_fds(&f, gen1);

	g_assert_cmpint(g_rename(f.haproxy, away), ==, 0);
	g_assert_nonnull(strstr(fx_reload_fails(&f, gen1), f.haproxy));
	assert_fds(&f, fds);

	/* Back, but without x bits (root may read it, exec needs them). */
	g_assert_cmpint(g_rename(away, f.haproxy), ==, 0);
	g_assert_cmpint(g_chmod(f.haproxy, 0644), ==, 0);
	g_assert_nonnull(strstr(fx_reload_fails(&f, gen1),
				"Permission denied"));
	assert_fds(&f, fds);

	g_assert_cmpint(g_chmod(f.haproxy, 0755), ==, 0);
	fx_reload_works(&f, 2);
	t_assert_exit_code(fx_stop(&f, SIGTERM), 0);
	t_site_clear(&f);
}

/* Replaced by something that is no program: the version probe fails. */
static void test_haproxy_not_a_program(void)
{
	g_autofree gchar *saved = NULL;
	struct t_site f;
	GPid gen1;

	if (!t_site_init_real(&f, NULL))
		return;
	f.haproxy = copy_haproxy(f.dir);
	saved = g_strconcat(f.haproxy, ".saved", NULL);
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);

	g_assert_cmpint(g_rename(f.haproxy, saved), ==, 0);
	g_assert_true(g_file_set_contents(f.haproxy, "\x7f" "ELF garbage",
					  -1, NULL));
	g_assert_cmpint(g_chmod(f.haproxy, 0755), ==, 0);
	g_assert_nonnull(strstr(fx_reload_fails(&f, gen1), "-v"));

	g_assert_cmpint(g_rename(saved, f.haproxy), ==, 0);
	fx_reload_works(&f, 2);
	t_assert_exit_code(fx_stop(&f, SIGTERM), 0);
	t_site_clear(&f);
}

/* Root ignores permission bits: a parent that is a regular file does not. */
static void test_pidfile_unwritable(void)
{
	g_autofree gchar *notdir = NULL;
	const char *warn;
	struct t_site f;
	GPid gen1;

	if (!t_site_init_real(&f, NULL))
		return;
	notdir = t_write_file(f.dir, "not-a-directory", "");
	g_free(f.pidfile);
	f.pidfile = g_build_filename(notdir, "haproxy.pid", NULL);
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);
	warn = wrapper_find_log(f.w, LOG_PIDFILE_UNWRITABLE);
	g_assert_nonnull(warn);
	g_assert_true(g_str_has_prefix(warn, LOG_PRIO_WARNING));
	g_assert_nonnull(strstr(warn, "Not a directory"));
	fx_keeps_serving(&f, gen1);

	fx_reload_works(&f, 2);
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_PIDFILE_UNWRITABLE), ==, 2);
	t_assert_exit_code(fx_stop(&f, SIGTERM), 0);
	t_site_clear(&f);
}

static void test_nofile(void)
{
	struct rlimit orig;
	const char *line;
	struct t_site f;
	GPid gen1;
	guint fds;

	if (!t_site_init_real(&f, NULL))
		return;
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);
	fds = settled_fds(&f, gen1);
	g_assert_cmpint(prlimit(f.w->pid, RLIMIT_NOFILE, NULL, &orig), ==, 0);

	/* Every new descriptor would be at or above the limit. */
	set_nofile(f.w->pid, lowest_free_fd(f.w->pid));
	line = fx_reload_fails(&f, gen1);
	g_assert_nonnull(strstr(line, "Too many open files"));
	assert_fds(&f, fds);

	set_nofile(f.w->pid, orig.rlim_cur);
	fx_reload_works(&f, 2);
	t_assert_exit_code(fx_stop(&f, SIGTERM), 0);
	t_site_clear(&f);
}

/*
 * Nothing kills haproxy when its wrapper dies: the witness goes (it has
 * PR_SET_PDEATHSIG), both generations are reparented (to the subreaper,
 * here the test; under systemd to PID 1), and the reload completes on its
 * own: the new haproxy binds, sends the old one its -sf SIGUSR1, serves.
 * Under systemd, KillMode=mixed then SIGKILLs what is left in the cgroup
 * once the main process is gone, and Restart= starts the service anew.
 */
static void test_wrapper_killed_mid_reload(void)
{
	g_autofree gchar *start2 = NULL;
	g_autoptr(GArray) below = NULL;
	struct t_site f;
	GPid gen1, gen2, witness = 0;
	int status;

	/* Without SO_REUSEPORT generation 1 is on generation 2's -sf list,
	 * which is what finishes the reload; steered, it would wait for
	 * its soft stop from the wrapper, and serve on beside generation 2
	 * until a new wrapper takes both over. */
	t_site_init_fake(&f, "noreuseport\n");
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);

	t_site_config(&f, "noreuseport\nfake-load-delay-ms 2000\n");
	wrapper_signal(f.w, SIGUSR2);
	t_site_wait_log(&f, LOG_EXECUTING_WORD);
	start2 = fake_wait_nth(&f, " start ", " -db ", 2);
	g_assert_nonnull(start2);
	gen2 = t_pid_in(start2, "pid=");
	g_assert_false(fake_logged(&f, gen2, "bound"));
	below = t_descendants(f.w->pid);
	for (guint i = 0; i < below->len; i++) {
		GPid p = g_array_index(below, GPid, i);

		if (p != gen1 && p != gen2)
			witness = p;
	}
	g_assert_cmpuint(below->len, ==, 3);

	kill(f.w->pid, SIGKILL);
	status = wrapper_wait_exit(f.w, T_WAIT);
	g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* The witness dies with the wrapper; the generations do not. */
	g_assert_true(t_wait_gone(witness, T_WAIT));
	g_assert_cmpint(proc_parent(gen1), ==, getpid());
	g_assert_cmpint(proc_parent(gen2), ==, getpid());
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);
	/* The reload finishes without its wrapper. */
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_true(wait_answering(f.port, gen2));
	g_assert_true(fake_logged(&f, gen1, "soft-stop"));
	g_assert_true(t_pid_alive(gen2));

	/* Ended by pid, as systemd's KillMode=mixed would. */
	kill(gen2, SIGKILL);
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	t_site_clear(&f);
}

/*
 * Out of descriptors with a client queued: the wrapper must not spin on
 * accept4 (a full core, ~100 ticks a second); idle clients are dropped
 * first, and once descriptors come back, clients are served again.
 */
static void test_fd_shortage(void)
{
	struct t_command status = { 0 };
	g_autofree gchar *answer = NULL;
	struct rlimit orig;
	int idle[10], queued;
	guint64 before, used;
	guint fds;
	struct t_site f;

	if (!fx_init_real(&f))
		return;
	t_site_start_wrapper(&f, NULL, NULL);
	fx_serving(&f, 1);
	/* Answered only once the wrapper is done with what readiness began
	 * (the reuseport round holds descriptors for a moment): the lowest
	 * free descriptor below is then the one accept4 would get. */
	g_assert_cmpint(t_site_client(&f, "--status", NULL, NULL), ==, 0);
	g_assert_cmpint(prlimit(f.w->pid, RLIMIT_NOFILE, NULL, &orig), ==, 0);

	/* No idle client to drop: a client waits in the queue. */
	set_nofile(f.w->pid, lowest_free_fd(f.w->pid));
	queued = connect_control(&f);
	g_assert_cmpint(send(queued, "status\n", 7, MSG_NOSIGNAL), ==, 7);
	before = cpu_ticks(f.w->pid);
	/* A measurement window, not a synchronization. */
	g_usleep(2 * G_USEC_PER_SEC);
	used = cpu_ticks(f.w->pid) - before;
	g_test_message("wrapper CPU while short of descriptors: %" G_GUINT64_FORMAT
		       " ticks in 2 s", used);
	g_assert_cmpuint(used, <, 30);
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_CONTROL_SOCKET "Too many "
					   "open files"), ==, 1);
	g_assert_true(g_str_has_prefix(
		wrapper_find_log(f.w, LOG_CONTROL_SOCKET "Too many"),
		LOG_PRIO_WARNING));
	set_nofile(f.w->pid, orig.rlim_cur);
	answer = read_answer(queued);
	close(queued);
	g_assert_nonnull(strstr(answer, "generation 1"));
	t_site_wait_log(&f, LOG_CONTROL_ACCEPTING_AGAIN);

	/* Ten idle clients hold descriptors: they go first. */
	fds = t_count_fds(f.w->pid);
	for (guint i = 0; i < G_N_ELEMENTS(idle); i++)
		idle[i] = connect_control(&f);
	g_assert_true(wait_fd_count(f.w->pid, fds + G_N_ELEMENTS(idle)));
	set_nofile(f.w->pid, lowest_free_fd(f.w->pid));
	fx_client(&f, &status, "--status");
	g_assert_cmpint(t_command_finish(&status, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(status.out->str, "generation 1"));
	for (guint i = 0; i < G_N_ELEMENTS(idle); i++) {
		g_autofree gchar *bye = read_answer(idle[i]);

		g_assert_cmpstr(bye, ==, "error: the wrapper is out of "
					 "descriptors\n");
		close(idle[i]);
	}
	t_command_clear(&status);
	set_nofile(f.w->pid, orig.rlim_cur);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

struct rundir_case {
	const char *token;
	const char *why;
};

static const struct rundir_case rundir_cases[] = {
	{ "tmp-write", "No space left on device" },
	{ "tmp-open-eacces", "Permission denied" },
	{ "tmp-open-erofs", "Read-only file system" },
};

/* The wrapper on the real haproxy with the shim's fault token set from
 * the start; returns generation 1, serving. */
static GPid start_with_fault(struct t_site *f, struct shim *shim,
			     const char *token)
{
	shim_setup(f, shim, "");
	shim_set(shim, token);
	t_site_start_wrapper(f, NULL, NULL);
	return fx_serving(f, 1);
}

/* The wrapper warned (<4>) with a line holding what and why. */
static const char *assert_warned(Wrapper *w, const char *what,
				 const char *why)
{
	const char *line = wrapper_find_log(w, what);

	g_assert_nonnull(line);
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, LOG_PRIO_WARNING));
	g_assert_nonnull(strstr(line, why));
	return line;
}

/*
 * listeners.cfg cannot be written (a full disk, a denied or read-only
 * directory): the file is optional, so the wrapper starts and reloads
 * without -x, says so once, and leaves nothing half-written.
 */
static void test_listeners_unwritable(gconstpointer data)
{
	const struct rundir_case *c = data;
	struct t_command reload = { 0 };
	g_autofree gchar *tmp = NULL, *cfg = NULL;
	struct shim shim;
	const char *line;
	struct t_site f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	gen1 = start_with_fault(&f, &shim, c->token);
	/* Said before generation 1 was started. */
	line = assert_warned(f.w, LOG_LISTENERS_UNWRITABLE, c->why);
	g_assert_nonnull(strstr(line, LOG_NO_SEAMLESS_RELOAD));
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_LISTENERS_CFG), ==, 1);
	tmp = g_build_filename(f.rundir, ".listeners.cfg.tmp", NULL);
	cfg = g_build_filename(f.rundir, "listeners.cfg", NULL);
	g_assert_false(g_file_test(tmp, G_FILE_TEST_EXISTS));
	g_assert_false(g_file_test(cfg, G_FILE_TEST_EXISTS));

	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_null(wrapper_find_log(f.w, LOG_ARG_X));
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_LISTENERS_CFG), ==, 1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	shim_clear(&shim);
	t_site_clear(&f);
}

/* The control socket cannot be made: the wrapper runs without it, says
 * so, and reloads on signals. */
static void test_control_unbindable(void)
{
	g_autofree gchar *sock = NULL;
	struct shim shim;
	struct t_site f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	gen1 = start_with_fault(&f, &shim, "control-bind");
	assert_warned(f.w, LOG_NO_CONTROL_SOCKET, "Read-only file system");
	sock = g_build_filename(f.rundir, "control.sock", NULL);
	g_assert_false(g_file_test(sock, G_FILE_TEST_EXISTS));
	wrapper_signal(f.w, SIGUSR2);
	fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_stop_ok(&f);
	shim_clear(&shim);
	t_site_clear(&f);
}

/* Does pid hold a descriptor of this file? */
static gboolean holds_file(GPid pid, const char *file)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d))) {
		g_autofree gchar *link = g_build_filename(dir, name, NULL);
		g_autofree gchar *to = g_file_read_link(link, NULL);

		if (g_strcmp0(to, file) == 0)
			return TRUE;
	}
	return FALSE;
}

/* Started with a descriptor open (as a careless parent leaves one): the
 * wrapper passes it to nobody, not even through the hand-off's execve. */
static void test_inherited_fd(void)
{
	struct t_command handoff = { 0 };
	g_autofree gchar *leak = NULL;
	const char *prefix[] = { "/bin/sh", "-c",
				 "exec 7>>\"$0\" && exec \"$@\"", NULL, NULL };
	const char *args[8];
	struct t_site f;

	if (!fx_init_real(&f))
		return;
	leak = g_build_filename(f.dir, "inherited", NULL);
	prefix[3] = leak;
	args[0] = f.rundir_opt;
	args[1] = "-f";
	args[2] = f.cfg;
	args[3] = "-p";
	args[4] = f.pidfile;
	args[5] = NULL;
	f.w = wrapper_start_prefixed(prefix, args, NULL);
	fx_serving(&f, 1);
	g_assert_cmpint(inheritable_fd(f.w->pid), ==, -1);

	/* Through the hand-off, same pid: haproxy -Ws holds no such fd. */
	fx_client(&f, &handoff, "--handoff");
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 0);
	g_assert_true(wait_exe(f.w->pid, HAPROXY));
	g_assert_false(holds_file(f.w->pid, leak));
	g_assert_true(t_master_settled(f.w->pid, SIGTERM));
	wrapper_signal(f.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	t_command_clear(&handoff);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_test_add_func("/faults/haproxy-missing-at-reload",
			test_haproxy_missing_at_reload);
	g_test_add_func("/faults/haproxy-not-a-program",
			test_haproxy_not_a_program);
	g_test_add_func("/faults/pidfile-unwritable", test_pidfile_unwritable);
	g_test_add_func("/faults/nofile", test_nofile);
	g_test_add_func("/faults/wrapper-killed-mid-reload",
			test_wrapper_killed_mid_reload);
	g_test_add_func("/failpaths/fd-shortage", test_fd_shortage);
	g_test_add_func("/failpaths/inherited-fd", test_inherited_fd);
	for (guint i = 0; i < G_N_ELEMENTS(rundir_cases); i++) {
		g_autofree gchar *path = g_strdup_printf(
			"/failpaths/rundir/listeners-unwritable/%s",
			rundir_cases[i].token);

		g_test_add_data_func(path, &rundir_cases[i],
				     test_listeners_unwritable);
	}
	g_test_add_func("/failpaths/rundir/control-unbindable",
			test_control_unbindable);
	return g_test_run();
}
