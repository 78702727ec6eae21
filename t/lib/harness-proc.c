/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Processes: descendants, waits by pidfd, processes that are not our
 * children signalled only after their identity is verified, commands run
 * to their end, the signal recorder, haproxy masters settling.
 */
#include "t/lib/harness.h"
#include "t/lib/harness-priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

static void collect_descendants(GPid root, GArray *out)
{
	g_autoptr(GArray) kids = proc_children(root);

	for (guint i = 0; i < kids->len; i++) {
		GPid k = g_array_index(kids, GPid, i);

		g_array_append_val(out, k);
		collect_descendants(k, out);
	}
}

GArray *t_descendants(GPid root)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(GPid));

	collect_descendants(root, out);
	return out;
}

gboolean t_pid_alive(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *stat = NULL;
	const char *p;

	/* A zombie is not alive. */
	if (!g_file_get_contents(path, &stat, NULL, NULL))
		return FALSE;
	p = strrchr(stat, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

gboolean t_wait_gone(GPid pid, guint timeout_ms)
{
	gint64 deadline = deadline_of(timeout_ms);
	int fd = pidfd_open(pid, 0);

	if (fd < 0)
		return TRUE;
	while (t_pid_alive(pid) && ms_left(deadline) > 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, MIN(ms_left(deadline), 50));
	}
	close(fd);
	return !t_pid_alive(pid);
}

GArray *t_kill_tree(GPid root)
{
	GArray *below;

	/* Frozen first, so that it cannot start anything after the list of
	 * its descendants is taken. */
	kill(root, SIGSTOP);
	below = t_descendants(root);
	kill(root, SIGKILL);
	for (guint i = 0; i < below->len; i++)
		kill(g_array_index(below, GPid, i), SIGKILL);
	return below;
}

static struct t_started started[8];
static guint n_started;

/* The file pid runs, even unlinked or replaced since: FALSE if gone. */
static gboolean exe_identity(GPid pid, struct stat *st)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/exe", pid);

	return stat(link, st) == 0;
}

gboolean t_runs_file(GPid pid, const char *path)
{
	struct stat running, file;

	return exe_identity(pid, &running) && stat(path, &file) == 0 &&
	       running.st_dev == file.st_dev && running.st_ino == file.st_ino;
}

/*
 * Is pid's executable what was expected? An existing absolute path is
 * compared as a file (device and inode), whatever symbolic links lead to
 * it; anything else ("/haproxy", "loadclient") is the end of its name.
 */
static gboolean exe_is(GPid pid, const char *expected)
{
	g_autofree gchar *exe = NULL;

	if (g_path_is_absolute(expected) &&
	    g_file_test(expected, G_FILE_TEST_IS_REGULAR))
		return t_runs_file(pid, expected);
	exe = proc_exe(pid);
	return exe && g_str_has_suffix(exe, expected);
}

/* The same file it ran when it was registered, or the one expected (a
 * master that re-executed another build). */
static gboolean started_exe_holds(const struct t_started *p)
{
	struct stat now;

	if (p->exe_known && exe_identity(p->pid, &now) &&
	    now.st_dev == p->exe_dev && now.st_ino == p->exe_ino)
		return TRUE;
	return exe_is(p->pid, p->exe_suffix);
}

gboolean t_signal_verified(const struct t_started *p, int sig)
{
	gboolean ok = FALSE;
	int fd = pidfd_open(p->pid, 0);

	if (fd < 0)
		return FALSE;
	/* Checked after the open: the pidfd pins the process checked. */
	if (proc_same_process_at("/proc", p->pid, p->start_time) &&
	    started_exe_holds(p))
		ok = proc_pidfd_signal(fd, sig);
	close(fd);
	return ok;
}

/* From a failed assertion in the main thread: /proc reads are fine. */
void t_kill_started(void)
{
	for (guint i = 0; i < n_started; i++)
		t_signal_verified(&started[i], SIGKILL);
}

void t_end_started_on_abort(void)
{
	t_cleanup_on_abort();
}

gboolean t_kill_if_exe(GPid pid, const char *exe_path)
{
	gboolean ok = FALSE;
	int fd = pidfd_open(pid, 0);

	if (fd < 0)
		return FALSE;
	if (t_runs_file(pid, exe_path))
		ok = proc_pidfd_signal(fd, SIGKILL);
	close(fd);
	return ok;
}

/* Does an argument of pid's command line name dir (a path in it)? */
static gboolean cmdline_names(GPid pid, const char *dir)
{
	g_auto(GStrv) argv = t_proc_strings(pid, "cmdline");
	g_autofree gchar *prefix = g_strconcat(dir, "/", NULL);

	for (char **a = argv; a && *a; a++)
		if (strstr(*a, prefix))
			return TRUE;
	return FALSE;
}

/* A haproxy the tests run (the one under test, Debian's, the fake), by
 * its file; or any program run from dir itself (a copy made there). */
static gboolean runs_haproxy_or_from(GPid pid, const char *real_dir)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *prefix = NULL;

	if (t_runs_file(pid, t_haproxy_path()) ||
	    t_runs_file(pid, "/usr/sbin/haproxy") ||
	    t_runs_file(pid, t_fake_path()))
		return TRUE;
	exe = proc_exe(pid);
	prefix = g_strconcat(real_dir, "/", NULL);
	return exe && g_str_has_prefix(exe, prefix);
}

/* pid is one the test started below dir: SIGKILL through a pidfd,
 * checked again once the pidfd pins it. */
static gboolean end_if_ours(GPid pid, const char *dir, const char *real_dir)
{
	gboolean ended = FALSE;
	int fd;

	if (!cmdline_names(pid, dir) && !cmdline_names(pid, real_dir))
		return FALSE;
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return FALSE;
	if ((cmdline_names(pid, dir) || cmdline_names(pid, real_dir)) &&
	    runs_haproxy_or_from(pid, real_dir))
		ended = proc_pidfd_signal(fd, SIGKILL);
	close(fd);
	if (ended) {
		g_test_message("pid %d still named %s: ended", pid, dir);
		t_wait_gone(pid, T_WAIT);
	}
	return ended;
}

guint t_end_haproxy_naming(const char *dir)
{
	g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
	g_autofree gchar *real_dir = realpath(dir, NULL);
	const char *name;
	guint n = 0;

	if (!proc)
		return 0;
	while ((name = g_dir_read_name(proc))) {
		GPid pid = (GPid)g_ascii_strtoll(name, NULL, 10);

		if (pid > 0 && pid != getpid() &&
		    end_if_ours(pid, dir, real_dir ? real_dir : dir))
			n++;
	}
	return n;
}

void t_kill_own_children(gboolean reap)
{
	g_autoptr(GArray) kids = proc_children(getpid());

	/* Unreaped, they cannot be anyone else. */
	for (guint i = 0; i < kids->len; i++) {
		GPid pid = g_array_index(kids, GPid, i);

		kill(pid, SIGKILL);
		if (reap)
			waitpid(pid, NULL, 0);
	}
}

struct t_started *t_remember(GPid pid, const char *exe_suffix)
{
	struct proc_stat st;
	struct t_started *p;
	struct stat exe;

	g_assert_cmpuint(n_started, <, G_N_ELEMENTS(started));
	g_assert_true(proc_stat_at("/proc", pid, &st, NULL));
	p = &started[n_started++];
	*p = (struct t_started){ .pid = pid, .start_time = st.start_time,
				 .exe_suffix = exe_suffix };
	/* Its file from now on, if it is the one expected. */
	if (exe_is(pid, exe_suffix) && exe_identity(pid, &exe)) {
		p->exe_known = TRUE;
		p->exe_dev = exe.st_dev;
		p->exe_ino = exe.st_ino;
	}
	return p;
}

void t_end_started(struct t_started *p)
{
	if (!t_signal_verified(p, SIGTERM)) {
		/* Gone, or its pid reused: else it runs something else than
		 * it was registered with, and would be left running. One
		 * that is exiting has no executable to show any more for a
		 * moment before it is a zombie: it is given that moment. */
		g_assert_false(t_pid_alive(p->pid) &&
			       proc_same_process_at("/proc", p->pid,
						    p->start_time) &&
			       !t_wait_gone(p->pid, T_WAIT));
		return;
	}
	if (!t_wait_gone(p->pid, T_WAIT))
		t_signal_verified(p, SIGKILL);
	g_assert_true(t_wait_gone(p->pid, T_WAIT));
}

void t_end_all_started(void)
{
	while (n_started > 0)
		t_end_started(&started[--n_started]);
}

int t_wait_child(GPid pid, guint timeout_ms)
{
	gint64 end = g_get_monotonic_time() + timeout_ms * 1000LL;
	int fd = pidfd_open(pid, 0), status = -1;

	g_assert_cmpint(fd, >=, 0);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		gint64 left = end - g_get_monotonic_time();

		if (left <= 0) {
			status = -1;
			break;
		}
		poll(&p, 1, (int)(left / 1000) + 1);
	}
	close(fd);
	return status;
}

void t_launch_daemon(const char *dir, const char *const *argv)
{
	g_autofree gchar *log = g_build_filename(dir, "launch.log", NULL);
	g_autoptr(GError) error = NULL;
	int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	GPid pid;
	int status;

	g_assert_cmpint(out, >=, 0);
	g_spawn_async_with_fds(dir, (char **)argv, NULL,
			       G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
			       -1, out, out, &error);
	close(out);
	g_assert_no_error(error);
	status = t_wait_child(pid, T_WAIT);
	if (status != 0) {
		g_autofree gchar *text = NULL;

		g_file_get_contents(log, &text, NULL, NULL);
		g_test_message("%s exited with status %d: %s", argv[0], status,
			       text ? text : "");
	}
	g_assert_cmpint(status, ==, 0);
}

static guint count_in_file(const char *file, const char *needle)
{
	g_autofree gchar *text = NULL;
	guint n = 0;

	if (g_file_get_contents(file, &text, NULL, NULL))
		for (const char *p = text; (p = strstr(p, needle)); p++)
			n++;
	return n;
}

gchar *t_signals_before_marker(const char *file, const struct t_started *p)
{
	g_autofree gchar *marker = g_strdup_printf("signal=%d ", SIGRTMAX);
	/* Earlier calls left markers of their own: wait for one more. */
	guint markers = count_in_file(file, marker);
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	g_assert_true(t_signal_verified(p, SIGRTMAX));
	do {
		g_autofree gchar *text = NULL;
		g_auto(GStrv) lines = NULL;
		g_autoptr(GString) got = g_string_new(NULL);

		if (count_in_file(file, marker) <= markers ||
		    !g_file_get_contents(file, &text, NULL, NULL)) {
			g_usleep(10 * 1000);
			continue;
		}
		lines = g_strsplit(text, "\n", -1);
		for (guint i = 0; lines[i]; i++)
			if (strstr(lines[i], "signal=") &&
			    !strstr(lines[i], marker))
				g_string_append_printf(got, "%s\n", lines[i]);
		return g_string_free(g_steal_pointer(&got), FALSE);
	} while (g_get_monotonic_time() < end);
	g_assert_not_reached();
}

GPid t_wait_recorder_ready(const char *file)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	do {
		g_autofree gchar *text = NULL;
		const char *ready;

		if (g_file_get_contents(file, &text, NULL, NULL) &&
		    (ready = strstr(text, "ready pid=")) && strchr(ready, '\n'))
			return t_pid_in(ready, "pid=");
		g_usleep(10 * 1000);
	} while (g_get_monotonic_time() < end);
	return 0;
}

struct t_started *t_start_recorder(const char *file)
{
	g_autofree gchar *recorder = g_build_filename(t_dir(), "fake/sigrecorder",
						      NULL);
	const char *argv[] = { recorder, file, NULL };
	g_autoptr(GError) error = NULL;
	struct t_started *p;
	GPid pid;

	g_spawn_async(NULL, (char **)argv, NULL,
		      G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
		      G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, &error);
	g_assert_no_error(error);
	p = t_remember(pid, "/sigrecorder");
	g_assert_cmpint(t_wait_recorder_ready(file), ==, pid);
	return p;
}

void t_stop_recorder(struct t_started *p)
{
	g_assert_true(t_signal_verified(p, SIGKILL));
	waitpid(p->pid, NULL, 0);
}

/* ---- a command run to its end, bounded ---- */

void t_command_spawn(struct t_command *c, const char *const *argv)
{
	g_autoptr(GError) error = NULL;

	*c = (struct t_command){ .out = g_string_new(NULL),
				 .err = g_string_new(NULL) };
	g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
				 G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
				 &c->pid, NULL, &c->out_fd, &c->err_fd,
				 &error);
	g_assert_no_error(error);
	c->name = g_strjoinv(" ", (char **)argv);
}

static gboolean read_some(int fd, GString *to)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return TRUE;
	if (n > 0)
		g_string_append_len(to, buf, n);
	return n > 0;
}

gboolean t_read_pipes(int out_fd, int err_fd, GString *out, GString *err,
		      gint64 deadline)
{
	gboolean out_open = TRUE, err_open = TRUE;

	while (out_open || err_open) {
		struct pollfd p[2] = {
			{ .fd = out_open ? out_fd : -1, .events = POLLIN },
			{ .fd = err_open ? err_fd : -1, .events = POLLIN },
		};
		gint64 left = deadline - g_get_monotonic_time();

		if (left <= 0)
			return FALSE;
		if (poll(p, 2, (int)(left / 1000) + 1) <= 0)
			continue;
		if (p[0].revents)
			out_open = read_some(out_fd, out);
		if (p[1].revents)
			err_open = read_some(err_fd, err);
	}
	return TRUE;
}

int t_command_finish(struct t_command *c, guint timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;
	int status = -1;

	if (t_read_pipes(c->out_fd, c->err_fd, c->out, c->err, deadline)) {
		gint64 left = deadline - g_get_monotonic_time();

		status = t_wait_child(c->pid, MAX(left / 1000, 1));
	}
	if (status == -1) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	close(c->out_fd);
	close(c->err_fd);
	g_test_message("%s (pid %d): status 0x%x out \"%s\" err \"%s\"",
		       c->name, c->pid, status, c->out->str, c->err->str);
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

void t_command_clear(struct t_command *c)
{
	if (c->out)
		g_string_free(c->out, TRUE);
	if (c->err)
		g_string_free(c->err, TRUE);
	g_free(c->name);
	*c = (struct t_command){ 0 };
}

int t_run_command(const char *const *argv, guint timeout_ms, gchar **out,
		  gchar **err)
{
	struct t_command c;
	int code;

	t_command_spawn(&c, argv);
	code = t_command_finish(&c, timeout_ms);
	if (out)
		*out = g_strdup(c.out->str);
	if (err)
		*err = g_strdup(c.err->str);
	t_command_clear(&c);
	return code;
}

GStrv t_proc_strings(GPid pid, const char *file)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/%s", pid, file);
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autofree gchar *buf = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &buf, &len, NULL))
		return NULL;
	for (gsize i = 0; i < len; i += strlen(buf + i) + 1)
		g_strv_builder_add(b, buf + i);
	return g_strv_builder_end(b);
}

gboolean t_environ_has(GPid pid, const char *name)
{
	g_auto(GStrv) env = t_proc_strings(pid, "environ");
	g_autofree gchar *prefix = g_strconcat(name, "=", NULL);

	for (char **e = env; e && *e; e++)
		if (g_str_has_prefix(*e, prefix))
			return TRUE;
	return FALSE;
}

/* A 2.5+ master re-executes itself into "wait mode" after each load. */
static gboolean in_wait_mode(GPid pid)
{
	return t_environ_has(pid, "HAPROXY_MWORKER_WAIT_ONLY");
}

gboolean t_master_settled(GPid pid, int sig)
{
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (!(in_wait_mode(pid) &&
		 proc_catches_signal_at("/proc", pid, sig)) &&
	       g_get_monotonic_time() < deadline)
		t_wait_gone(pid, 10);	/* a bounded pause that ends early
					 * only if pid dies */
	return in_wait_mode(pid) && proc_catches_signal_at("/proc", pid, sig);
}

gint64 t_deadline(guint ms)
{
	return deadline_of(ms);
}

void t_assert_exit_code(int status, int code)
{
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

char t_proc_state(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *stat = NULL;
	const char *p;

	if (!g_file_get_contents(path, &stat, NULL, NULL))
		return 0;
	p = strrchr(stat, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

gboolean t_wait_stopped(GPid pid)
{
	gint64 deadline = deadline_of(T_WAIT);

	while (t_proc_state(pid) != 'T' &&
	       g_get_monotonic_time() < deadline)
		g_usleep(5 * 1000);
	return t_proc_state(pid) == 'T';
}

int t_ms_left(gint64 deadline)
{
	return ms_left(deadline);
}

int t_client(const char *command, const char *a, const char *b, gchar **out,
	     gchar **err)
{
	const char *argv[] = { t_wrapper_path(), command, a, b, NULL };

	return t_run_command(argv, T_WAIT, out, err);
}

guint t_count_fds(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
	guint n = 0;

	while (d && g_dir_read_name(d))
		n++;
	return n;
}
