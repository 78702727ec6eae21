/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the fault tests share: see t/lib/faults.h. */
#include "t/lib/faults.h"

#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

/* The lowest descriptor number pid does not use (the /proc entries are
 * symbolic links, not always to a file that exists). */
int lowest_free_fd(GPid pid)
{
	for (int fd = 0;; fd++) {
		g_autofree gchar *path = g_strdup_printf("/proc/%d/fd/%d",
							 pid, fd);

		if (!g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			return fd;
	}
}

/* Bounded wait until the wrapper's only descendants are want (its
 * helpers of a failed reload killed and reaped). */
gboolean wait_descendants(Wrapper *w, const GPid *want, guint n)
{
	gint64 deadline = t_deadline(T_WAIT);

	for (;;) {
		g_autoptr(GArray) below = t_descendants(w->pid);
		gboolean same = below->len == n;

		for (guint i = 0; same && i < n; i++) {
			gboolean found = FALSE;

			for (guint j = 0; j < below->len; j++)
				found |= g_array_index(below, GPid, j) == want[i];
			same = found;
		}
		if (same)
			return TRUE;
		if (g_get_monotonic_time() >= deadline) {
			for (guint j = 0; j < below->len; j++)
				g_test_message("descendant: %d",
					       g_array_index(below, GPid, j));
			return FALSE;
		}
		g_usleep(10 * 1000);
	}
}

/* Nothing but the wrapper (if still running) has been reparented to us. */
void assert_no_orphans(struct t_site *f)
{
	g_autoptr(GArray) kids = proc_children(getpid());

	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);
		g_autofree gchar *path = g_strdup_printf("/proc/%d/comm", pid);
		g_autofree gchar *comm = NULL;

		if (pid == f->w->pid && !f->w->reaped)
			continue;
		g_file_get_contents(path, &comm, NULL, NULL);
		comm = g_strchomp(comm ? comm : g_strdup("?"));
		/* The wrapper reaps its helpers, even those it killed on its
		 * way out: anything here was orphaned. */
		g_test_message("orphan: pid %d (%s), state %c", pid, comm,
			       t_proc_state(pid));
		g_assert_not_reached();
	}
}

GPid fx_wait_ready(struct t_site *f, guint number)
{
	GPid pid = wrapper_wait_ready(f->w, number, T_WAIT);

	g_assert_cmpint(pid, >, 0);
	return pid;
}

/* Poll (bounded) until pid answers on port: an old generation may still
 * take a connection or two just after its successor is ready. */
gboolean wait_answering(guint16 port, GPid pid)
{
	gint64 deadline = t_deadline(T_WAIT);

	while (t_http_pid(port) != pid) {
		if (g_get_monotonic_time() >= deadline)
			return FALSE;
		g_usleep(10 * 1000);
	}
	return TRUE;
}

/* Generation number serves: ready, and the one answering. */
GPid fx_serving(struct t_site *f, guint number)
{
	GPid pid = fx_wait_ready(f, number);

	g_assert_true(wait_answering(f->port, pid));
	return pid;
}

/* The wrapper goes on: a reload signal makes generation number serve. */
GPid fx_reload_works(struct t_site *f, guint number)
{
	wrapper_signal(f->w, SIGUSR2);
	return fx_serving(f, number);
}

/* After a failure: gen still answers, the wrapper's only descendant is
 * gen (the failed attempt's helpers are reaped), nothing reparented. */
void fx_keeps_serving(struct t_site *f, GPid gen)
{
	g_assert_cmpint(t_http_pid(f->port), ==, gen);
	g_assert_true(wait_descendants(f->w, &gen, 1));
	g_assert_cmpint(wrapper_wait_exit(f->w, 0), ==, -1);
	assert_no_orphans(f);
}

/*
 * The wrapper's descriptor count once gen is its only child and the
 * wrapper is between two events. GLib (2.74) holds a pidfd for each child
 * watch until the exit is dispatched, and the SO_REUSEPORT attach after
 * "ready" holds a pidfd, a /proc directory and haproxy's listener while
 * it runs: counted mid-way, one of those read as a descriptor "leaked".
 * A --status answered proves the main loop finished every dispatch before
 * it (one thread), and the client reads to the wrapper's close of the
 * connection, so none of the three, nor the connection, is counted.
 */
guint settled_fds(struct t_site *f, GPid gen)
{
	g_assert_true(wait_descendants(f->w, &gen, 1));
	g_assert_cmpint(t_site_client(f, "--status", NULL, NULL), ==, 0);
	return t_count_fds(f->w->pid);
}

/* A failed reload leaks no descriptor: back to n, within the bound. */
void assert_fds(struct t_site *f, guint n)
{
	gint64 deadline = t_deadline(T_WAIT);

	while (t_count_fds(f->w->pid) != n && g_get_monotonic_time() < deadline)
		g_usleep(10 * 1000);
	g_assert_cmpuint(t_count_fds(f->w->pid), ==, n);
}

/* The failure line of a failed reload; it must name the serving one. */
const char *fx_reload_fails(struct t_site *f, GPid gen)
{
	g_autofree gchar *keeps = g_strdup_printf(LOG_KEEPS_SERVING_FMT, gen);
	const char *line;

	wrapper_signal(f->w, SIGUSR2);
	line = t_site_wait_log(f, LOG_RELOAD_FAILED);
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, LOG_PRIO_ERR));
	g_assert_nonnull(strstr(line, keeps));
	fx_keeps_serving(f, gen);
	return line;
}

/* Signal the wrapper (0: it ends on its own), wait for its end; all
 * below it must end with it, nothing reparented. The exit status. */
int fx_stop(struct t_site *f, int sig)
{
	g_autoptr(GArray) below = t_descendants(f->w->pid);
	int status;

	if (sig)
		wrapper_signal(f->w, sig);
	status = wrapper_wait_exit(f->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(g_array_index(below, GPid, i),
					  T_WAIT));
	assert_no_orphans(f);
	return status;
}

/* The nth (from 1) line of the fake's log holding needle and needle2. */
gchar *fake_wait_nth(struct t_site *f, const char *needle,
			    const char *needle2, guint nth)
{
	return t_wait_file_line(f->fake_log, needle, needle2, nth, T_WAIT);
}

gboolean fake_logged(struct t_site *f, GPid pid, const char *event)
{
	g_autofree gchar *text = NULL;
	g_autofree gchar *needle = g_strdup_printf("pid=%d %s", pid, event);

	return g_file_get_contents(f->fake_log, &text, NULL, NULL) &&
	       strstr(text, needle);
}

/* The nth generation the wrapper started (not a "-v" probe), caught
 * while it loads, and frozen there: its pid. */
GPid fake_freeze_loading(struct t_site *f, guint nth)
{
	g_autofree gchar *start = fake_wait_nth(f, " start ", " -db ", nth);
	GPid pid;

	g_assert_nonnull(start);
	pid = t_pid_in(start, "pid=");
	g_assert_cmpint(pid, >, 0);
	kill(pid, SIGSTOP);
	g_assert_true(t_wait_stopped(pid));
	/* Caught within its load delay: not bound, so still loading. */
	g_assert_false(fake_logged(f, pid, "bound"));
	return pid;
}

void shim_setup(struct t_site *f, struct shim *s, const char *initial)
{
	g_autofree gchar *so = g_build_filename(t_dir(), "fake/failshim.so", NULL);

	g_assert_true(g_file_test(so, G_FILE_TEST_EXISTS));
	s->control = t_write_file(f->dir, "failshim.control", initial);
	s->log = g_build_filename(f->dir, "failshim.log", NULL);
	t_site_setenv(f, "LD_PRELOAD", so);
	t_site_setenv(f, "FAILSHIM_CONTROL", s->control);
	t_site_setenv(f, "FAILSHIM_LOG", s->log);
	t_site_setenv(f, "FAILSHIM_EXE", "haproxy-systemd-wrapper");
}

void shim_set(struct shim *s, const char *tokens)
{
	g_assert_true(g_file_set_contents(s->control, tokens, -1, NULL));
}

/* The shim's own record that it failed a call: the fault was real. */
gboolean shim_injected(struct shim *s, const char *token)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(s->log, &text, NULL, NULL))
		return FALSE;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		const char *sp = strchr(lines[i], ' ');

		if (sp && g_str_equal(sp + 1, token))
			return TRUE;
	}
	return FALSE;
}

void shim_clear(struct shim *s)
{
	g_free(s->control);
	g_free(s->log);
}

void set_nofile(GPid pid, rlim_t soft)
{
	struct rlimit old, lim;

	g_assert_cmpint(prlimit(pid, RLIMIT_NOFILE, NULL, &old), ==, 0);
	lim = (struct rlimit){ .rlim_cur = soft, .rlim_max = old.rlim_max };
	g_assert_cmpint(prlimit(pid, RLIMIT_NOFILE, &lim, NULL), ==, 0);
}

/*
 * The fake haproxy behind a script whose runs with "step" among their
 * arguments (-v, -c, -sf) wait
 * while dir/gate exists, after writing their pid to dir/gate.entered: the
 * test holds a hand-off in that step as long as it needs.
 */
void fx_init_gated(struct t_site *f, const char *version, const char *step)
{
	g_autofree gchar *script = NULL, *text = NULL, *gate = NULL;

	t_site_init(f);
	f->with_runtime_dir = TRUE;
	gate = g_build_filename(f->dir, "gate", NULL);
	text = g_strdup_printf("bind 127.0.0.1:%u\n", f->port);
	g_free(t_write_file(f->dir, "haproxy.cfg", text));
	script = g_strdup_printf(
		"#!/bin/sh\n"
		"case \" $* \" in *\" %s \"*) [ -e %s ] && {\n"
		"	echo $$ > %s.entered\n"
		"	while [ -e %s ]; do sleep 0.01; done\n"
		"	} ;;\nesac\n"
		"exec %s \"$@\"\n",
		step, gate, gate, gate, t_fake_path());
	f->haproxy = t_write_file(f->dir, "haproxy", script);
	g_assert_cmpint(g_chmod(f->haproxy, 0755), ==, 0);
	t_site_setenv(f, "FAKE_HAPROXY_VERSION", version);
}

/* SIGTERM: exit 0. */
void fx_stop_ok(struct t_site *f)
{
	int status;

	wrapper_signal(f->w, SIGTERM);
	status = wrapper_wait_exit(f->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

/* A client command of the wrapper's, started now. */
void fx_client(struct t_site *f, struct t_command *c, const char *cmd)
{
	const char *argv[] = { t_wrapper_path(), cmd, f->rundir_opt, NULL };

	t_command_spawn(c, argv);
}

gboolean wait_file(const char *path)
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
void fx_close_gate(struct t_site *f)
{
	g_free(t_write_file(f->dir, "gate", ""));
}

void fx_wait_gate_entered(struct t_site *f)
{
	g_autofree gchar *entered = g_build_filename(f->dir, "gate.entered",
						     NULL);

	g_assert_true(wait_file(entered));
}

void fx_open_gate(struct t_site *f)
{
	g_autofree gchar *gate = g_build_filename(f->dir, "gate", NULL);

	g_assert_cmpint(g_unlink(gate), ==, 0);
}

/* The pid of the run that entered the gate (its shell). */
GPid fx_gate_pid(struct t_site *f)
{
	g_autofree gchar *entered = g_build_filename(f->dir, "gate.entered",
						     NULL);
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
void fx_touch_haproxy(struct t_site *f)
{
	const struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };

	g_assert_cmpint(utimensat(AT_FDCWD, f->haproxy, ts, 0), ==, 0);
}

/* A child of the wrapper that is not one of pids, or 0. */
GPid stray_child(GPid wrapper, const GArray *pids)
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
void assert_children_only(GPid wrapper, const GArray *pids)
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

guint64 cpu_ticks(GPid pid)
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

int connect_control(struct t_site *f)
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
gboolean wait_fd_count(GPid pid, guint n)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (t_count_fds(pid) != n) {
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
	return TRUE;
}

/* Everything until EOF from a client socket of ours (bounded). */
gchar *read_answer(int fd)
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

void install_file(const char *src, const char *dst)
{
	g_autofree gchar *data = NULL;
	g_autofree gchar *tmp = g_strconcat(dst, ".dpkg-new", NULL);
	gsize len;

	g_assert_true(g_file_get_contents(src, &data, &len, NULL));
	g_assert_true(g_file_set_contents(tmp, data, len, NULL));
	g_assert_cmpint(g_chmod(tmp, 0755), ==, 0);
	g_assert_cmpint(g_rename(tmp, dst), ==, 0);
}

gchar *wrapper_copy(struct t_site *f)
{
	g_autofree gchar *bindir = g_build_filename(f->dir, "bin", NULL);
	gchar *bin = g_build_filename(bindir, "haproxy-systemd-wrapper", NULL);

	g_assert_cmpint(g_mkdir(bindir, 0755), ==, 0);
	install_file(t_wrapper_path(), bin);
	return bin;
}

void assert_runs_inode(GPid pid, const struct stat *st)
{
	g_autofree gchar *exe = g_strdup_printf("/proc/%d/exe", pid);
	struct stat now;

	g_assert_cmpint(stat(exe, &now), ==, 0);
	g_assert_cmpuint(now.st_ino, ==, st->st_ino);
}

/* Every descriptor of pid above 2 is close-on-exec; the first that is
 * not, or -1. */
int inheritable_fd(GPid pid)
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

			g_printerr("# fd %d (%s) is inheritable\n", fd, to);
			return fd;
		}
	}
	return -1;
}

/* Until pid runs exe (bounded): an exec in place has happened. */
gboolean wait_exe(GPid pid, const char *exe)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	for (;;) {
		if (t_runs_file(pid, exe))
			return TRUE;
		if (g_get_monotonic_time() >= end)
			return FALSE;
		g_usleep(5 * 1000);
	}
}

/* A helper built in t/. */
const char *fx_helper(const char *name)
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

gboolean fx_init_real(struct t_site *f)
{
	if (!t_site_init_real(f, NULL))
		return FALSE;
	f->with_runtime_dir = TRUE;
	return TRUE;
}

gboolean fx_init_real_gated(struct t_site *f)
{
	g_autofree gchar *script = NULL, *gate = NULL;

	if (!fx_init_real(f))
		return FALSE;
	gate = g_build_filename(f->dir, "gate", NULL);
	script = g_strdup_printf(
		"#!/bin/sh\n"
		"case \" $* \" in *\" -sf \"*) [ -e %s ] && {\n"
		"	echo $$ > %s.entered\n"
		"	while [ -e %s ]; do sleep 0.01; done\n"
		"	} ;;\nesac\n"
		"exec %s \"$@\"\n",
		gate, gate, gate, HAPROXY);
	g_free(f->haproxy);
	f->haproxy = t_write_file(f->dir, "haproxy", script);
	g_assert_cmpint(g_chmod(f->haproxy, 0755), ==, 0);
	return TRUE;
}

GPid fx_hold_request(struct t_site *f, const char *step, struct t_command *c,
		     const char *cmd)
{
	GPid gen1;

	fx_init_gated(f, "2.6.12", step);
	t_site_start_wrapper(f, NULL, NULL);
	gen1 = fx_serving(f, 1);
	fx_close_gate(f);
	fx_client(f, c, cmd);
	fx_wait_gate_entered(f);
	return gen1;
}
