/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The supervisor's failure paths (issue 16): descriptors running short
 * under the control socket, a hand-off refused or interrupted while a
 * reload or a client waits, a self-upgrade into an image that cannot run
 * the command line, descriptors that must not leak across an exec, a
 * handed-over state that cannot be read, a probe that never answers, a
 * runtime directory that cannot be written, and a control signal or a
 * client gone at each step (version probe, dry run, hand-off). In each
 * case: haproxy still serving, the wrapper still supervising, every
 * waiting client answered, nothing pending lost. Waits are on events (log lines, files, exits,
 * sockets), all bounded.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/harness.h"

#define HAPROXY "/usr/sbin/haproxy"

static Wrapper *guarded_wrapper;
static const char *guarded_dir;

/* Our own children once the wrapper is reaped: what it orphaned (the
 * test is a child subreaper). */
static void kill_orphans(void)
{
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void on_abort(int sig)
{
	if (guarded_wrapper && !guarded_wrapper->reaped) {
		g_array_unref(t_kill_tree(guarded_wrapper->pid));
		waitpid(guarded_wrapper->pid, NULL, 0);
	}
	kill_orphans();
	if (guarded_dir)
		t_rmtree(guarded_dir);
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

/* ---- the fixture ---- */

struct fx {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	gchar *rundir;
	gchar *rundir_opt;
	gchar *haproxy;		/* --haproxy=, or NULL: the real one */
	gchar *gate;		/* while it exists, the gated haproxy waits */
	guint16 port;
	GPtrArray *env;
	Wrapper *w;
};

static const char *helper(const char *name)
{
	static GHashTable *paths;
	gchar *path;

	if (!paths)
		paths = g_hash_table_new(g_str_hash, g_str_equal);
	path = g_hash_table_lookup(paths, name);
	if (!path) {
		path = g_build_filename(t_dir(), name, NULL);
		g_hash_table_insert(paths, (gpointer)name, path);
	}
	return path;
}

static void fx_init(struct fx *f)
{
	*f = (struct fx){ 0 };
	f->dir = t_tmpdir();
	guarded_dir = f->dir;
	f->port = t_free_port();
	f->pidfile = g_build_filename(f->dir, "haproxy.pid", NULL);
	f->rundir = t_runtime_dir(f->dir);
	f->rundir_opt = g_strconcat("--runtime-dir=", f->rundir, NULL);
	f->env = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(f->env, NULL);
}

static gboolean fx_init_real(struct fx *f)
{
	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return FALSE;
	}
	fx_init(f);
	f->cfg = t_write_config(f->dir, "haproxy.cfg", f->port, NULL);
	return TRUE;
}

static void fx_setenv(struct fx *f, const char *key, const char *value)
{
	g_ptr_array_insert(f->env, f->env->len - 1,
			   g_strdup_printf("%s=%s", key, value));
}

/*
 * The fake haproxy behind a script whose runs with "step" among their
 * arguments (-v, -c, -sf) wait
 * while f->gate exists, after writing their pid to f->gate.entered: the
 * test holds a hand-off in that step as long as it needs.
 */
static void fx_init_gated(struct fx *f, const char *version, const char *step)
{
	g_autofree gchar *script = NULL, *text = NULL;

	fx_init(f);
	f->gate = g_build_filename(f->dir, "gate", NULL);
	text = g_strdup_printf("bind 127.0.0.1:%u\n", f->port);
	f->cfg = t_write_file(f->dir, "haproxy.cfg", text);
	script = g_strdup_printf(
		"#!/bin/sh\n"
		"case \" $* \" in *\" %s \"*) [ -e %s ] && {\n"
		"	echo $$ > %s.entered\n"
		"	while [ -e %s ]; do sleep 0.01; done\n"
		"	} ;;\nesac\n"
		"exec %s \"$@\"\n",
		step, f->gate, f->gate, f->gate, helper("fake-haproxy"));
	f->haproxy = t_write_file(f->dir, "haproxy", script);
	g_assert_cmpint(g_chmod(f->haproxy, 0755), ==, 0);
	fx_setenv(f, "FAKE_HAPROXY_VERSION", version);
}

static void fx_start_at(struct fx *f, const char *path,
			const char *const *opts)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);

	if (f->haproxy)
		g_ptr_array_add(args, g_strdup_printf("--haproxy=%s",
						      f->haproxy));
	g_ptr_array_add(args, g_strdup(f->rundir_opt));
	for (; opts && *opts; opts++)
		g_ptr_array_add(args, g_strdup(*opts));
	g_ptr_array_add(args, g_strdup("-f"));
	g_ptr_array_add(args, g_strdup(f->cfg));
	g_ptr_array_add(args, g_strdup("-p"));
	g_ptr_array_add(args, g_strdup(f->pidfile));
	g_ptr_array_add(args, NULL);
	f->w = guarded_wrapper = wrapper_start_at(
		path, (const char *const *)args->pdata,
		(const char *const *)f->env->pdata);
}

static void fx_start(struct fx *f, const char *const *opts)
{
	fx_start_at(f, NULL, opts);
}

static void fx_clear(struct fx *f)
{
	guarded_wrapper = NULL;
	g_clear_pointer(&f->w, wrapper_free);
	kill_orphans();
	guarded_dir = NULL;
	t_rmtree(f->dir);
	g_free(f->dir);
	g_free(f->cfg);
	g_free(f->pidfile);
	g_free(f->rundir);
	g_free(f->rundir_opt);
	g_free(f->haproxy);
	g_free(f->gate);
	g_ptr_array_unref(f->env);
}

static const char *fx_wait_log(struct fx *f, const char *needle)
{
	const char *line = wrapper_wait_log(f->w, needle, T_WAIT);

	if (!line)
		g_test_message("no log line with \"%s\"", needle);
	g_assert_nonnull(line);
	return line;
}

/* Generation number ready, and the one answering: an old generation may
 * still take a connection or two just after its successor is ready. */
static GPid fx_serving(struct fx *f, guint number)
{
	GPid pid = wrapper_wait_ready(f->w, number, T_WAIT);
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	g_assert_cmpint(pid, >, 0);
	while (t_http_pid(f->port) != pid && g_get_monotonic_time() < end)
		g_usleep(10 * 1000);
	g_assert_cmpint(t_http_pid(f->port), ==, pid);
	return pid;
}

/* SIGTERM: exit 0. */
static void fx_stop(struct fx *f)
{
	int status;

	wrapper_signal(f->w, SIGTERM);
	status = wrapper_wait_exit(f->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* A client command of the wrapper's, started now. */
static void fx_client(struct fx *f, struct t_command *c, const char *cmd)
{
	const char *argv[] = { t_wrapper_path(), cmd, f->rundir_opt, NULL };

	t_command_spawn(c, argv);
}

static gboolean wait_file(const char *path)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (!g_file_test(path, G_FILE_TEST_EXISTS)) {
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
	return TRUE;
}

/* The gated step has begun: it waits until fx_open_gate(). */
static void fx_close_gate(struct fx *f)
{
	g_free(t_write_file(f->dir, "gate", ""));
}

static void fx_wait_gate_entered(struct fx *f)
{
	g_autofree gchar *entered = g_strconcat(f->gate, ".entered", NULL);

	g_assert_true(wait_file(entered));
}

static void fx_open_gate(struct fx *f)
{
	g_assert_cmpint(g_unlink(f->gate), ==, 0);
}

/* The pid of the run that entered the gate (its shell). */
static GPid fx_gate_pid(struct fx *f)
{
	g_autofree gchar *entered = g_strconcat(f->gate, ".entered", NULL);
	g_autofree gchar *text = NULL;
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	/* Created, then written: until the pid is there. */
	while (g_file_get_contents(entered, &text, NULL, NULL) &&
	       !strchr(text, '\n') && g_get_monotonic_time() < end) {
		g_clear_pointer(&text, g_free);
		g_usleep(5 * 1000);
	}
	g_assert_nonnull(text);
	return (GPid)strtol(text, NULL, 10);
}

/* The haproxy binary looks changed: the next reload asks its version. */
static void fx_touch_haproxy(struct fx *f)
{
	const struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };

	g_assert_cmpint(utimensat(AT_FDCWD, f->haproxy, ts, 0), ==, 0);
}

/* A child of the wrapper that is not one of pids, or 0. */
static GPid stray_child(GPid wrapper, const GArray *pids)
{
	g_autoptr(GArray) kids = proc_children(wrapper);

	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);

		if (!proc_pids_contain(pids, pid))
			return pid;
	}
	return 0;
}

/* Every child of the wrapper is one of pids, once the ones it ended are
 * reaped (bounded): no probe left behind. */
static void assert_children_only(GPid wrapper, const GArray *pids)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	GPid stray;

	while ((stray = stray_child(wrapper, pids)) &&
	       g_get_monotonic_time() < end)
		g_usleep(10 * 1000);
	if (stray)
		g_test_message("stray child of the wrapper: %d", stray);
	g_assert_cmpint(stray, ==, 0);
}

/* ---- descriptors ---- */

static guint64 cpu_ticks(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *stat = NULL;
	g_auto(GStrv) f = NULL;
	const char *p;

	g_assert_true(g_file_get_contents(path, &stat, NULL, NULL));
	p = strrchr(stat, ')');
	g_assert_nonnull(p);
	f = g_strsplit(p + 2, " ", -1);
	/* Fields 14 and 15 (utime, stime); f[0] is field 3. */
	return g_ascii_strtoull(f[11], NULL, 10) +
	       g_ascii_strtoull(f[12], NULL, 10);
}

static guint count_fds(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
	guint n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}

static int lowest_free_fd(GPid pid)
{
	for (int fd = 0;; fd++) {
		g_autofree gchar *path = g_strdup_printf("/proc/%d/fd/%d",
							 pid, fd);

		if (!g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			return fd;
	}
}

static void set_nofile(GPid pid, rlim_t soft)
{
	struct rlimit old, lim;

	g_assert_cmpint(prlimit(pid, RLIMIT_NOFILE, NULL, &old), ==, 0);
	lim = (struct rlimit){ .rlim_cur = soft, .rlim_max = old.rlim_max };
	g_assert_cmpint(prlimit(pid, RLIMIT_NOFILE, &lim, NULL), ==, 0);
}

static int connect_control(struct fx *f)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_snprintf(a.sun_path, sizeof(a.sun_path), "%s/control.sock",
		   f->rundir);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	return fd;
}

/* Until the wrapper holds n descriptors (bounded). */
static gboolean wait_fd_count(GPid pid, guint n)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (count_fds(pid) != n) {
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
	return TRUE;
}

/* Everything until EOF from a client socket of ours (bounded). */
static gchar *read_answer(int fd)
{
	g_autoptr(GString) got = g_string_new(NULL);
	struct timeval tv = { .tv_sec = T_WAIT / 1000 };
	char buf[512];
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		g_string_append_len(got, buf, n);
	g_assert_cmpint(n, ==, 0);
	return g_string_free(g_steal_pointer(&got), FALSE);
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
	struct fx f;

	if (!fx_init_real(&f))
		return;
	fx_start(&f, NULL);
	fx_serving(&f, 1);
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
	g_assert_cmpuint(wrapper_count_log(f.w, "control socket: Too many "
					   "open files"), ==, 1);
	g_assert_true(g_str_has_prefix(
		wrapper_find_log(f.w, "control socket: Too many"), "<4>"));
	set_nofile(f.w->pid, orig.rlim_cur);
	answer = read_answer(queued);
	close(queued);
	g_assert_nonnull(strstr(answer, "generation 1"));
	fx_wait_log(&f, "control socket: accepting clients again");

	/* Ten idle clients hold descriptors: they go first. */
	fds = count_fds(f.w->pid);
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
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- a hand-off refused or interrupted ---- */

/*
 * A reload asked for while a hand-off is checked runs once the hand-off
 * is refused (haproxy 1.7 has no master-worker mode), without another
 * request.
 */
static void test_handoff_refused_runs_pending(void)
{
	struct t_command handoff = { 0 };
	struct fx f;

	fx_init_gated(&f, "1.7.14", "-v");
	fx_start(&f, NULL);
	/* A -Ds parent is ready; its worker answers. */
	g_assert_cmpint(wrapper_wait_ready(f.w, 1, T_WAIT), >, 0);
	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	wrapper_signal(f.w, SIGHUP);
	fx_wait_log(&f, "SIGHUP: a reload is in progress");
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "no master-worker mode"));
	fx_wait_log(&f, "not handing off");
	fx_wait_log(&f, "reloading on SIGHUP");
	g_assert_cmpint(wrapper_wait_ready(f.w, 2, T_WAIT), >, 0);
	t_command_clear(&handoff);
	fx_stop(&f);
	fx_clear(&f);
}

/*
 * A stop while the hand-off checks haproxy: the --handoff client hears
 * "stopping" at once, and no reload that never happened is recorded.
 */
static void test_stop_during_handoff(void)
{
	struct t_command handoff = { 0 }, status = { 0 };
	int conn;
	struct fx f;
	GPid gen2;

	fx_init_gated(&f, "2.6.12", "-v");
	fx_start(&f, NULL);
	fx_serving(&f, 1);
	wrapper_signal(f.w, SIGUSR2);
	gen2 = fx_serving(&f, 2);
	/* Held open: the graceful stop lasts while we look. */
	conn = t_hold_connection(f.port);
	g_assert_cmpint(conn, >=, 0);
	g_assert_cmpint(t_http_pid(f.port), ==, gen2);

	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	wrapper_signal(f.w, SIGUSR1);
	fx_wait_log(&f, "stopping gracefully");
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "error: stopping"));

	fx_client(&f, &status, "--status");
	g_assert_cmpint(t_command_finish(&status, T_WAIT), ==, 0);
	g_test_message("%s", status.out->str);
	g_assert_null(strstr(status.out->str, "failed"));
	g_assert_nonnull(strstr(status.out->str, "last reload: ok"));
	fx_open_gate(&f);
	close(conn);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	t_command_clear(&handoff);
	t_command_clear(&status);
	fx_clear(&f);
}

/* ---- t/failshim.so in the wrapper ---- */

static gchar *shim_setup(struct fx *f)
{
	g_autofree gchar *so = g_build_filename(t_dir(), "failshim.so", NULL);
	gchar *control = t_write_file(f->dir, "failshim.control", "");

	g_assert_true(g_file_test(so, G_FILE_TEST_EXISTS));
	fx_setenv(f, "LD_PRELOAD", so);
	fx_setenv(f, "FAILSHIM_CONTROL", control);
	fx_setenv(f, "FAILSHIM_EXE", "haproxy-systemd-wrapper");
	return control;
}

static void shim_set(const char *control, const char *tokens)
{
	g_assert_true(g_file_set_contents(control, tokens, -1, NULL));
}

/*
 * The hand-off's execve fails after every check passed: the client hears
 * the failure, never "ok", and the wrapper goes on.
 */
static void test_handoff_exec_fails(void)
{
	struct t_command handoff = { 0 };
	g_autofree gchar *shim = NULL;
	struct fx f;

	fx_init_gated(&f, "2.6.12", "-c");
	shim = shim_setup(&f);
	fx_start(&f, NULL);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	shim_set(shim, "execve");
	fx_open_gate(&f);
	fx_wait_log(&f, "hand-off failed");
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "error: "));
	shim_set(shim, "");
	wrapper_signal(f.w, SIGUSR2);
	fx_serving(&f, 2);
	t_command_clear(&handoff);
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- the runtime directory unwritable ---- */

struct rundir_case {
	const char *token;
	const char *why;
};

static const struct rundir_case rundir_cases[] = {
	{ "tmp-write", "No space left on device" },
	{ "tmp-open-eacces", "Permission denied" },
	{ "tmp-open-erofs", "Read-only file system" },
};

/*
 * listeners.cfg cannot be written (a full disk, a denied or read-only
 * directory): the file is optional, so the wrapper starts and reloads
 * without -x, says so once, and leaves nothing half-written.
 */
static void test_listeners_unwritable(gconstpointer data)
{
	const struct rundir_case *c = data;
	struct t_command reload = { 0 };
	g_autofree gchar *shim = NULL, *tmp = NULL, *cfg = NULL;
	const char *line;
	struct fx f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	shim = shim_setup(&f);
	shim_set(shim, c->token);
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	/* Said before generation 1 was started. */
	line = wrapper_find_log(f.w, "cannot write listeners.cfg");
	g_assert_nonnull(line);
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, "<4>"));
	g_assert_nonnull(strstr(line, c->why));
	g_assert_nonnull(strstr(line, "no seamless reload"));
	g_assert_cmpuint(wrapper_count_log(f.w, "listeners.cfg"), ==, 1);
	tmp = g_build_filename(f.rundir, ".listeners.cfg.tmp", NULL);
	cfg = g_build_filename(f.rundir, "listeners.cfg", NULL);
	g_assert_false(g_file_test(tmp, G_FILE_TEST_EXISTS));
	g_assert_false(g_file_test(cfg, G_FILE_TEST_EXISTS));

	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_null(wrapper_find_log(f.w, " -x "));
	g_assert_cmpuint(wrapper_count_log(f.w, "listeners.cfg"), ==, 1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

/* The control socket cannot be made: the wrapper runs without it, says
 * so, and reloads on signals. */
static void test_control_unbindable(void)
{
	g_autofree gchar *shim = NULL, *sock = NULL;
	const char *line;
	struct fx f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	shim = shim_setup(&f);
	shim_set(shim, "control-bind");
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	line = wrapper_find_log(f.w, "no control socket");
	g_assert_nonnull(line);
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, "<4>"));
	g_assert_nonnull(strstr(line, "Read-only file system"));
	sock = g_build_filename(f.rundir, "control.sock", NULL);
	g_assert_false(g_file_test(sock, G_FILE_TEST_EXISTS));
	wrapper_signal(f.w, SIGUSR2);
	fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- descriptors across an exec ---- */

/* Every descriptor of pid above 2 is close-on-exec; the first that is
 * not, or -1. */
static int inheritable_fd(GPid pid)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fdinfo", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *info = NULL;
		const char *flags;
		int fd = atoi(name);

		if (fd <= 2 || !g_file_get_contents(path, &info, NULL, NULL))
			continue;
		flags = strstr(info, "flags:");
		g_assert_nonnull(flags);
		if (!(g_ascii_strtoull(flags + 6, NULL, 8) & O_CLOEXEC)) {
			g_autofree gchar *link = g_strdup_printf(
				"/proc/%d/fd/%d", pid, fd);
			g_autofree gchar *to = g_file_read_link(link, NULL);

			g_test_message("fd %d (%s) is inheritable", fd, to);
			return fd;
		}
	}
	return -1;
}

/* Until pid runs exe (bounded): an exec in place has happened. */
static gboolean wait_exe(GPid pid, const char *exe)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	for (;;) {
		g_autofree gchar *now = proc_exe(pid);

		if (g_strcmp0(now, exe) == 0)
			return TRUE;
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
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
	struct fx f;

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
	f.w = guarded_wrapper = wrapper_start_prefixed(prefix, args, NULL);
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
	fx_clear(&f);
}

/* ---- self-upgrade ---- */

static void install_file(const char *src, const char *dst)
{
	g_autofree gchar *data = NULL;
	g_autofree gchar *tmp = g_strconcat(dst, ".dpkg-new", NULL);
	gsize len;

	g_assert_true(g_file_get_contents(src, &data, &len, NULL));
	g_assert_true(g_file_set_contents(tmp, data, len, NULL));
	g_assert_cmpint(g_chmod(tmp, 0755), ==, 0);
	g_assert_cmpint(g_rename(tmp, dst), ==, 0);
}

static gchar *wrapper_copy(struct fx *f)
{
	g_autofree gchar *bindir = g_build_filename(f->dir, "bin", NULL);
	gchar *bin = g_build_filename(bindir, "haproxy-systemd-wrapper", NULL);

	g_assert_cmpint(g_mkdir(bindir, 0755), ==, 0);
	install_file(t_wrapper_path(), bin);
	return bin;
}

static void assert_runs_inode(GPid pid, const struct stat *st)
{
	g_autofree gchar *exe = g_strdup_printf("/proc/%d/exe", pid);
	struct stat now;

	g_assert_cmpint(stat(exe, &now), ==, 0);
	g_assert_cmpuint(now.st_ino, ==, st->st_ino);
}

/*
 * A new image that cannot run today's command line (it rejects one of
 * its options), or that has no dry run: the reload goes on with the
 * running image, says why, and the client that asked hears it.
 */
static void upgrade_refused(const char *image, const char *why)
{
	const char *const opts[] = { "--drain-timeout=30", NULL };
	struct t_command reload = { 0 };
	g_autofree gchar *bin = NULL;
	const char *line;
	struct stat orig;
	struct fx f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	bin = wrapper_copy(&f);
	g_assert_cmpint(stat(bin, &orig), ==, 0);
	fx_start_at(&f, bin, opts);
	gen1 = fx_serving(&f, 1);
	install_file(image, bin);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(reload.out->str, "not upgraded"));
	line = fx_wait_log(&f, "not upgrading: ");
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, "<3>"));
	g_assert_nonnull(strstr(line, why));
	g_assert_cmpuint(wrapper_count_log(f.w, "re-executing"), ==, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_serving(&f, 2);
	assert_runs_inode(f.w->pid, &orig);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

static void test_upgrade_rejects_argv(void)
{
	upgrade_refused(helper("haproxy-systemd-wrapper-next-rejecting"),
			"exited with status 64");
}

static void test_upgrade_without_dry_run(void)
{
	static const char script[] =
		"#!/bin/sh\n"
		"if [ \"$1\" = --upgrade-check ]; then\n"
		"	echo 'haproxy-systemd-wrapper 9.9 handover master-worker "
		"state-format 1'\n"
		"	exit 0\n"
		"fi\n"
		"echo \"unknown option $1\" >&2\n"
		"exit 64\n";
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *path = t_write_file(dir, "old-image", script);

	g_assert_cmpint(g_chmod(path, 0755), ==, 0);
	upgrade_refused(path, "exited with status 64");
	t_rmtree(dir);
}

/* The upgrade's execv fails: the waiting client's descriptor, made
 * inheritable for the exec, is close-on-exec again. */
static void test_upgrade_exec_fails(void)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	struct t_command reload = { 0 };
	g_autofree gchar *shim = NULL;
	struct fx f;

	fx_init_gated(&f, "2.6.12", "-sf");
	shim = shim_setup(&f);
	fx_start(&f, opts);
	fx_serving(&f, 1);
	shim_set(shim, "self-execv");
	fx_close_gate(&f);
	fx_client(&f, &reload, "--reload");
	fx_wait_log(&f, "re-exec(");
	fx_wait_gate_entered(&f);
	g_assert_cmpint(inheritable_fd(f.w->pid), ==, -1);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 2);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- a client vanishing while it waits ---- */

/*
 * A --reload client gone while its reload runs (and one gone while the
 * upgrade's dry run runs): the wrapper answers into nothing and goes on.
 */
static void test_client_vanishes(void)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	struct t_command reload = { 0 };
	int gone;
	struct fx f;

	fx_init_gated(&f, "2.6.12", "-sf");
	fx_start(&f, opts);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_gate_entered(&f);
	close(gone);
	fx_open_gate(&f);
	fx_serving(&f, 2);

	/* Gone while the upgrade runs (dry run or exec): the re-executed
	 * image serves, and answers the next client. */
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_log(&f, "reloading on request");
	close(gone);
	fx_serving(&f, 3);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 4);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- a probe that never answers ---- */

/*
 * The version probe of a reload hangs: after its time limit the reload
 * fails, the --reload client hears why, the old generation serves on, the
 * probe is killed and reaped, and the reload asked for meanwhile runs.
 */
static void test_probe_timeout(void)
{
	struct t_command reload = { 0 };
	g_autoptr(GArray) gens = g_array_new(FALSE, FALSE, sizeof(GPid));
	struct fx f;
	GPid gen1, probe;

	fx_init_gated(&f, "2.6.12", "-v");
	fx_setenv(&f, "HAPROXY_SYSTEMD_WRAPPER_TEST_PROBE_MS", "1500");
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	g_array_append_val(gens, gen1);
	fx_close_gate(&f);
	fx_touch_haproxy(&f);
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);
	probe = fx_gate_pid(&f);
	wrapper_signal(f.w, SIGHUP);
	fx_wait_log(&f, "SIGHUP: a reload is in progress");

	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
	g_test_message("%s", reload.err->str);
	g_assert_nonnull(strstr(reload.err->str, "-v: no answer within the "
						 "time limit"));
	g_assert_true(t_wait_gone(probe, T_WAIT));
	/* The pending reload's probe may be held at the gate by now. */
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);
	fx_open_gate(&f);
	fx_wait_log(&f, "reloading on SIGHUP");
	g_array_index(gens, GPid, 0) = fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	assert_children_only(f.w->pid, gens);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

/* A --reload client gone while the version probe runs: the reload
 * completes, and the next client is served. */
static void test_probe_client_vanishes(void)
{
	struct t_command reload = { 0 };
	struct fx f;
	int gone;

	fx_init_gated(&f, "2.6.12", "-v");
	fx_start(&f, NULL);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_touch_haproxy(&f);
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_gate_entered(&f);
	close(gone);
	fx_open_gate(&f);
	fx_serving(&f, 2);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 3);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- the upgrade's dry run held ---- */

/*
 * The wrapper runs from a copy that a script replaces: its dry runs wait
 * while f->gate exists (after writing their pid to f->gate.entered), then
 * every run goes on as the wrapper built here.
 */
static void fx_start_dry_run_gated(struct fx *f)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	g_autofree gchar *bin = wrapper_copy(f);
	g_autofree gchar *script = NULL, *path = NULL;

	f->gate = g_build_filename(f->dir, "gate", NULL);
	fx_start_at(f, bin, opts);
	fx_serving(f, 1);
	script = g_strdup_printf(
		"#!/bin/sh\n"
		"case \" $* \" in *\" --upgrade-dry-run \"*) [ -e %s ] && {\n"
		"	echo $$ > %s.entered\n"
		"	while [ -e %s ]; do sleep 0.01; done\n"
		"	} ;;\nesac\n"
		"exec %s \"$@\"\n",
		f->gate, f->gate, f->gate, t_wrapper_path());
	path = t_write_file(f->dir, "gated-image", script);
	install_file(path, bin);
	fx_close_gate(f);
}

/*
 * A --reload client gone while the dry run runs: the wrapper answers into
 * nothing, upgrades, serves, and answers the next client.
 */
static void test_dry_run_client_vanishes(void)
{
	struct t_command reload = { 0 };
	int gone;
	struct fx f;
	GPid wrapper;

	if (!fx_init_real(&f))
		return;
	fx_start_dry_run_gated(&f);
	wrapper = f.w->pid;
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_gate_entered(&f);
	close(gone);
	fx_open_gate(&f);
	fx_wait_log(&f, "re-executing on request");
	fx_serving(&f, 2);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 3);
	g_assert_cmpint(f.w->pid, ==, wrapper);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

/*
 * The image replaced again while its dry run runs (a second install):
 * the file an exec would run now is not the one that passed. It is not
 * executed; the reload goes on with the running image and says why.
 */
static void test_dry_run_image_replaced(void)
{
	struct t_command reload = { 0 };
	g_autofree gchar *bin = NULL, *broken = NULL;
	struct fx f;
	GPid wrapper;

	if (!fx_init_real(&f))
		return;
	fx_start_dry_run_gated(&f);
	wrapper = f.w->pid;
	bin = g_build_filename(f.dir, "bin", "haproxy-systemd-wrapper", NULL);
	broken = t_write_file(f.dir, "broken-image", "#!/bin/sh\nexit 70\n");
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);
	install_file(broken, bin);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(reload.out->str, "not upgraded"));
	fx_wait_log(&f, "replaced during its dry run");
	g_assert_cmpuint(wrapper_count_log(f.w, "re-executing"), ==, 0);
	fx_serving(&f, 2);
	g_assert_cmpint(f.w->pid, ==, wrapper);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop(&f);
	fx_clear(&f);
}

static const int control_signals[] = { SIGUSR2, SIGHUP, SIGTERM, SIGUSR1 };

/*
 * A control signal while the dry run is held. A reload (SIGUSR2, SIGHUP)
 * waits and runs after the upgrade, in the new image; a stop (SIGTERM,
 * SIGUSR1) answers the waiting client, ends the dry run, and no exec
 * follows.
 */
static void test_signal_in_dry_run(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_autofree gchar *queued = g_strdup_printf(
		"SIG%s: a reload is in progress", sigabbrev_np(sig));
	struct t_command reload = { 0 };
	struct fx f;
	GPid gen1, dry_run;

	if (!fx_init_real(&f))
		return;
	fx_start_dry_run_gated(&f);
	gen1 = t_http_pid(f.port);
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);
	dry_run = fx_gate_pid(&f);
	wrapper_signal(f.w, sig);
	if (sig == SIGUSR2 || sig == SIGHUP) {
		fx_wait_log(&f, queued);
		fx_open_gate(&f);
		g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
		fx_serving(&f, 2);
		fx_serving(&f, 3);
		/* --self-upgrade=always: the reload that waited upgrades
		 * too (the new image knows it as pending, not by its
		 * signal). */
		g_assert_cmpuint(wrapper_count_log(f.w, "re-executing on "),
				 ==, 2);
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		fx_stop(&f);
	} else {
		g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
		g_assert_nonnull(strstr(reload.err->str, "error: stopping"));
		g_assert_true(t_wait_gone(dry_run, T_WAIT));
		g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		g_assert_cmpuint(wrapper_count_log(f.w, "re-executing"), ==, 0);
		fx_open_gate(&f);
	}
	t_command_clear(&reload);
	fx_clear(&f);
}

/*
 * A control signal while the hand-off checks haproxy's version. A stop
 * (SIGTERM, SIGUSR1) abandons the hand-off, tells its client, ends the
 * check; the wrapper stops. A reload (SIGUSR2, SIGHUP) waits for the
 * hand-off: haproxy -Ws reads the configuration after the request, which
 * is what the reload was for; it serves, and takes its reloads itself.
 */
static void test_signal_in_handoff(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_autofree gchar *queued = g_strdup_printf(
		"SIG%s: a reload is in progress", sigabbrev_np(sig));
	struct t_command handoff = { 0 };
	struct fx f;
	GPid gen1, check;

	fx_init_gated(&f, "2.6.12", "-v");
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	check = fx_gate_pid(&f);
	wrapper_signal(f.w, sig);
	if (sig == SIGUSR2 || sig == SIGHUP) {
		fx_wait_log(&f, queued);
		g_assert_cmpint(t_http_pid(f.port), ==, gen1);
		fx_open_gate(&f);
		g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 0);
		g_assert_nonnull(strstr(handoff.out->str,
					"is now haproxy -Ws"));
		g_assert_true(wait_exe(f.w->pid, helper("fake-haproxy")));
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		g_assert_cmpint(t_wait_serving(f.port, T_WAIT), >, 0);
		/* Verified above: the pid is haproxy's master now. */
		wrapper_signal(f.w, SIGTERM);
		g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	} else {
		g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
		g_assert_nonnull(strstr(handoff.err->str, "error: stopping"));
		g_assert_true(t_wait_gone(check, T_WAIT));
		g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		g_assert_null(wrapper_find_log(f.w, "handing off to"));
		fx_open_gate(&f);
	}
	t_command_clear(&handoff);
	fx_clear(&f);
}

/*
 * A --reload client that waits while the hand-off checks haproxy, and
 * one that is gone by then: the waiting one is answered, not left with
 * an end of file, and the gone one costs nothing.
 */
static void test_reload_client_in_handoff(void)
{
	struct t_command handoff = { 0 }, reload = { 0 };
	struct fx f;
	int gone;

	fx_init_gated(&f, "2.6.12", "-v");
	fx_start(&f, NULL);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_client(&f, &reload, "--reload");
	g_assert_true(wrapper_wait_log(f.w, "control request: a reload is "
					    "in progress", T_WAIT) != NULL);
	close(gone);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 0);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(reload.out->str, "haproxy -Ws"));
	g_assert_true(wait_exe(f.w->pid, helper("fake-haproxy")));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), >, 0);
	wrapper_signal(f.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	t_command_clear(&handoff);
	t_command_clear(&reload);
	fx_clear(&f);
}

/* ---- a request while a reload is held ---- */

/*
 * While a reload is held (its haproxy loading): a hand-off is refused at
 * once, a stop answers the waiting --reload client, and nothing runs
 * after the stop.
 */
static void test_requests_during_reload(void)
{
	struct t_command reload = { 0 }, handoff = { 0 };
	struct fx f;
	GPid gen1;

	fx_init_gated(&f, "2.6.12", "-sf");
	fx_start(&f, NULL);
	gen1 = fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);

	fx_client(&f, &handoff, "--handoff");
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "in progress"));
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);

	wrapper_signal(f.w, SIGTERM);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(reload.err->str, "error: stopping"));
	fx_open_gate(&f);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_null(wrapper_find_log(f.w, "generation 2 ready"));
	t_command_clear(&reload);
	t_command_clear(&handoff);
	fx_clear(&f);
}

/*
 * No fork during a reload that upgrades: the dry run cannot run, so no
 * exec; the reload fails too; the client hears both; haproxy serves on,
 * and once forks work the upgrade happens.
 */
static void test_fork_fails_at_upgrade(void)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	struct t_command reload = { 0 };
	g_autofree gchar *shim = NULL;
	struct fx f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	shim = shim_setup(&f);
	fx_start(&f, opts);
	gen1 = fx_serving(&f, 1);
	shim_set(shim, "spawn-fork");
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(reload.err->str, "not upgraded"));
	g_assert_null(wrapper_find_log(f.w, "re-executing"));
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);

	shim_set(shim, "");
	wrapper_signal(f.w, SIGUSR2);
	fx_wait_log(&f, "re-executing on SIGUSR2.");
	fx_serving(&f, 2);
	fx_stop(&f);
	fx_clear(&f);
}

/* ---- a handed-over state that cannot be read ---- */

/*
 * The old image's generations are the new image's children whatever the
 * state says: those it names (and are ours) are adopted, a child it does
 * not name is stopped, and the log says so. Modelled by a shell that
 * starts them, then execs the wrapper with a state one token of which is
 * garbage.
 */
static void test_handover_malformed(void)
{
	g_autofree gchar *script = NULL, *cfg = NULL, *text = NULL;
	g_autofree gchar *fake_log = NULL, *started = NULL;
	const char *prefix[] = { "/bin/sh", "-c", NULL, NULL };
	const char *args[8];
	struct fx f;
	GPid gen1, stray;

	fx_init(&f);
	fake_log = g_build_filename(f.dir, "fake.log", NULL);
	fx_setenv(&f, "FAKE_HAPROXY_LOG", fake_log);
	text = g_strdup_printf("bind 127.0.0.1:%u\n", f.port);
	f.cfg = t_write_file(f.dir, "haproxy.cfg", text);
	script = g_strdup_printf(
		"%s -f %s -db & gen=$!\n"
		"sleep 600 & stray=$!\n"
		"echo \"$gen $stray\" > %s/started.tmp\n"
		"mv %s/started.tmp %s/started\n"
		"export HAPROXY_WRAPPER_STATE=\"1 2 0 12 0 1 0 0 "
		"1:$gen:1:1:0:2.6.12 w:garbage\"\n"
		"exec \"$0\" \"$@\"\n",
		helper("fake-haproxy"), f.cfg, f.dir, f.dir, f.dir);
	prefix[2] = script;
	args[0] = g_strdup_printf("--haproxy=%s", helper("fake-haproxy"));
	args[1] = f.rundir_opt;
	args[2] = "-f";
	args[3] = f.cfg;
	args[4] = "-p";
	args[5] = f.pidfile;
	args[6] = NULL;
	f.w = guarded_wrapper = wrapper_start_prefixed(prefix, args,
		(const char *const *)f.env->pdata);
	g_free((gchar *)args[0]);
	started = g_build_filename(f.dir, "started", NULL);
	g_assert_true(wait_file(started));
	{
		g_autofree gchar *pids = NULL;

		g_assert_true(g_file_get_contents(started, &pids, NULL, NULL));
		g_assert_cmpint(sscanf(pids, "%d %d", &gen1, &stray), ==, 2);
	}
	g_assert_true(t_wait_gone(stray, T_WAIT));
	fx_wait_log(&f, "could not be read");
	fx_wait_log(&f, "running, adopted 1 generation(s)");
	/* The reload the state was about: gen1 soft-stops, gen2 serves. */
	fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_stop(&f);
	fx_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	signal(SIGABRT, on_abort);
	/* What the wrapper leaves behind becomes ours, to be ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_test_add_func("/failpaths/fd-shortage", test_fd_shortage);
	g_test_add_func("/failpaths/handoff/refused-runs-pending",
			test_handoff_refused_runs_pending);
	g_test_add_func("/failpaths/handoff/stop-during-check",
			test_stop_during_handoff);
	g_test_add_func("/failpaths/handoff/exec-fails",
			test_handoff_exec_fails);
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
	g_test_add_func("/failpaths/upgrade/rejects-argv",
			test_upgrade_rejects_argv);
	g_test_add_func("/failpaths/upgrade/without-dry-run",
			test_upgrade_without_dry_run);
	g_test_add_func("/failpaths/upgrade/exec-fails",
			test_upgrade_exec_fails);
	g_test_add_func("/failpaths/client-vanishes", test_client_vanishes);
	g_test_add_func("/failpaths/probe-timeout", test_probe_timeout);
	g_test_add_func("/failpaths/probe-client-vanishes",
			test_probe_client_vanishes);
	g_test_add_func("/failpaths/dry-run/client-vanishes",
			test_dry_run_client_vanishes);
	g_test_add_func("/failpaths/dry-run/image-replaced",
			test_dry_run_image_replaced);
	for (guint i = 0; i < G_N_ELEMENTS(control_signals); i++) {
		g_autofree gchar *path = g_strdup_printf(
			"/failpaths/dry-run/SIG%s",
			sigabbrev_np(control_signals[i]));

		g_test_add_data_func(path, GINT_TO_POINTER(control_signals[i]),
				     test_signal_in_dry_run);
	}
	for (guint i = 0; i < G_N_ELEMENTS(control_signals); i++) {
		g_autofree gchar *path = g_strdup_printf(
			"/failpaths/handoff/version-check/SIG%s",
			sigabbrev_np(control_signals[i]));

		g_test_add_data_func(path, GINT_TO_POINTER(control_signals[i]),
				     test_signal_in_handoff);
	}
	g_test_add_func("/failpaths/handoff/reload-client",
			test_reload_client_in_handoff);
	g_test_add_func("/failpaths/requests-during-reload",
			test_requests_during_reload);
	g_test_add_func("/failpaths/upgrade/fork-fails",
			test_fork_fails_at_upgrade);
	g_test_add_func("/failpaths/handover-malformed",
			test_handover_malformed);
	return g_test_run();
}
