/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper under test: started with its stderr on a pipe, its log
 * lines waited for (bounded), its exit waited for by pidfd, and it and
 * everything below it killed by pid when the test is done.
 */
#include "t/lib/harness.h"
#include "t/lib/harness-priv.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

const char *t_wrapper_path(void)
{
	static gchar *path;

	if (!path) {
		const char *env = g_getenv("HSW_WRAPPER");
		g_autofree gchar *cwd = g_get_current_dir();

		path = env ? g_strdup(env)
			   : g_build_filename(cwd, "haproxy-systemd-wrapper",
					      NULL);
	}
	return path;
}

const char *t_dir(void)
{
	static gchar *dir;

	if (!dir) {
		g_autofree gchar *cwd = g_get_current_dir();

		dir = g_build_filename(cwd, "t", NULL);
	}
	return dir;
}

/* Every wrapper started and not yet freed: what a failed assertion
 * kills (t_cleanup_on_abort). A fixed table: read from a signal
 * handler. */
static struct wrapper *live[16];

static void live_add(struct wrapper *w)
{
	for (guint i = 0; i < G_N_ELEMENTS(live); i++) {
		if (!live[i]) {
			live[i] = w;
			return;
		}
	}
	g_error("more than %zu wrappers at once", G_N_ELEMENTS(live));
}

static void live_remove(struct wrapper *w)
{
	for (guint i = 0; i < G_N_ELEMENTS(live); i++)
		if (live[i] == w)
			live[i] = NULL;
}

static void write_all(const char *p, size_t len)
{
	ssize_t n;

	while (len > 0 && (n = write(STDERR_FILENO, p, len)) > 0) {
		p += n;
		len -= n;
	}
}

/* What the wrapper said, on stderr as "# " lines (--verbose showed it
 * already): the lines read, then what is still in the pipe. */
static void dump_log(struct wrapper *w)
{
	char buf[4096];
	ssize_t n;

	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		write_all("# ", 2);
		write_all(line, strlen(line));
		write_all("\n", 1);
	}
	write_all(w->partial->str, w->partial->len);
	while (w->err_fd >= 0 && (n = read(w->err_fd, buf, sizeof(buf))) > 0)
		write_all(buf, n);
}

/* A failed assertion: each wrapper's log, for the diagnosis of a flake
 * seen once, then the kill. */
void t_kill_live_wrappers(void)
{
	static const char head[] = "# the wrapper's log:\n";

	for (guint i = 0; i < G_N_ELEMENTS(live); i++) {
		if (!live[i])
			continue;
		if (!g_test_verbose()) {
			write_all(head, strlen(head));
			dump_log(live[i]);
		}
		if (!live[i]->reaped)
			g_array_unref(t_kill_tree(live[i]->pid));
	}
}

struct spawn_setup {
	GSpawnChildSetupFunc func;
	gpointer data;
};

/* If the test dies (a failed assertion aborts it), the wrapper under test
 * gets SIGTERM and stops its haproxy: nothing outlives a crashed test.
 * Then the test's own setup, if any. */
static void die_with_test(gpointer data)
{
	const struct spawn_setup *setup = data;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (setup->func)
		setup->func(setup->data);
}

/* argv: prefix (a bare first name, valgrind, is looked up in PATH), then
 * the wrapper at path, then args; env adds "K=V" to ours. A bare name is
 * looked up in the PATH the wrapper gets, as a shell would. */
static struct wrapper *spawn_wrapper(const char *const *prefix,
				     const char *path,
				     const char *const *args,
				     const char *const *env,
				     struct spawn_setup setup)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_auto(GStrv) envp = g_get_environ();
	g_autoptr(GError) error = NULL;
	struct wrapper *w = g_new0(struct wrapper, 1);

	for (; prefix && *prefix; prefix++)
		g_ptr_array_add(argv, (char *)*prefix);
	g_ptr_array_add(argv, (char *)path);
	for (; args && *args; args++)
		g_ptr_array_add(argv, (char *)*args);
	g_ptr_array_add(argv, NULL);
	for (; env && *env; env++) {
		g_auto(GStrv) kv = g_strsplit(*env, "=", 2);

		envp = g_environ_setenv(envp, kv[0], kv[1] ? : "", TRUE);
	}
	w->lines = g_ptr_array_new_with_free_func(g_free);
	w->partial = g_string_new(NULL);
	if (!g_spawn_async_with_pipes(NULL, (char **)argv->pdata, envp,
				      G_SPAWN_DO_NOT_REAP_CHILD |
				      G_SPAWN_SEARCH_PATH_FROM_ENVP,
				      die_with_test,
				      &setup, &w->pid, NULL, NULL, &w->err_fd,
				      &error))
		g_error("cannot start %s: %s", (char *)argv->pdata[0],
			error->message);
	fcntl(w->err_fd, F_SETFL, O_NONBLOCK);
	t_cleanup_on_abort();
	live_add(w);
	return w;
}

struct wrapper *wrapper_start_at(const char *wrapper_path,
				 const char *const *args,
				 const char *const *env)
{
	return spawn_wrapper(NULL, wrapper_path ? : t_wrapper_path(), args,
			     env, (struct spawn_setup){ 0 });
}

struct wrapper *wrapper_start_setup(const char *const *args,
				    const char *const *env,
				    GSpawnChildSetupFunc setup, gpointer data)
{
	return spawn_wrapper(NULL, t_wrapper_path(), args, env,
			     (struct spawn_setup){ setup, data });
}

struct wrapper *wrapper_start(const char *const *args, const char *const *env)
{
	return wrapper_start_at(NULL, args, env);
}

/* Read what is there; FALSE at EOF. */
static gboolean drain(struct wrapper *w)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(w->err_fd, buf, sizeof(buf))) > 0) {
		char *nl;

		g_string_append_len(w->partial, buf, n);
		while ((nl = strchr(w->partial->str, '\n'))) {
			gchar *line = g_strndup(w->partial->str,
						nl - w->partial->str);

			if (g_test_verbose())
				g_printerr("# %s\n", line);
			g_ptr_array_add(w->lines, line);
			g_string_erase(w->partial, 0,
				       nl - w->partial->str + 1);
		}
	}
	return n != 0;
}

void wrapper_pump(struct wrapper *w, guint timeout_ms)
{
	struct pollfd p = { .fd = w->err_fd, .events = POLLIN };

	if (w->err_fd >= 0 && poll(&p, 1, timeout_ms) > 0)
		drain(w);
}

static const char *search(struct wrapper *w, const char *needle,
			  gboolean advance)
{
	for (guint i = w->scan; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (strstr(line, needle)) {
			if (advance)
				w->scan = i + 1;
			return line;
		}
	}
	return NULL;
}

const char *wrapper_wait_log(struct wrapper *w, const char *needle,
			     guint timeout_ms)
{
	gint64 deadline = deadline_of(timeout_ms);
	const char *line;

	for (;;) {
		struct pollfd p = { .fd = w->err_fd, .events = POLLIN };
		gboolean open;

		open = drain(w);
		line = search(w, needle, TRUE);
		if (line || !open || ms_left(deadline) == 0)
			return line;
		poll(&p, 1, ms_left(deadline));
	}
}

const char *wrapper_find_log(struct wrapper *w, const char *needle)
{
	drain(w);
	for (guint i = 0; i < w->lines->len; i++)
		if (strstr(g_ptr_array_index(w->lines, i), needle))
			return g_ptr_array_index(w->lines, i);
	return NULL;
}

const char *wrapper_executing_line(struct wrapper *w, guint n)
{
	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (strstr(line, LOG_EXECUTING) && --n == 0)
			return line;
	}
	return NULL;
}

guint wrapper_count_log(struct wrapper *w, const char *needle)
{
	guint n = 0;

	drain(w);
	for (guint i = 0; i < w->lines->len; i++)
		if (strstr(g_ptr_array_index(w->lines, i), needle))
			n++;
	return n;
}

void wrapper_signal(struct wrapper *w, int sig)
{
	if (!w->reaped)
		kill(w->pid, sig);
}

int wrapper_wait_exit(struct wrapper *w, guint timeout_ms)
{
	gint64 deadline = deadline_of(timeout_ms);
	int fd;

	if (w->reaped)
		return w->status;
	fd = pidfd_open(w->pid, 0);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = w->err_fd, .events = POLLIN },
		};

		if (waitpid(w->pid, &w->status, WNOHANG) == w->pid) {
			w->reaped = TRUE;
			break;
		}
		if (ms_left(deadline) == 0)
			break;
		poll(p, 2, ms_left(deadline));
		drain(w);
	}
	close(fd);
	drain(w);
	return w->reaped ? w->status : -1;
}

void wrapper_free(struct wrapper *w)
{
	g_autoptr(GArray) below = NULL;

	if (!w)
		return;
	live_remove(w);
	if (!w->reaped) {
		below = t_kill_tree(w->pid);
		waitpid(w->pid, &w->status, 0);
		for (guint i = 0; i < below->len; i++)
			t_wait_gone(g_array_index(below, GPid, i), T_WAIT);
	}
	close(w->err_fd);
	g_ptr_array_unref(w->lines);
	g_string_free(w->partial, TRUE);
	g_free(w);
}

GPid t_pid_in(const char *line, const char *key)
{
	const char *p = line ? strstr(line, key) : NULL;

	return p ? (GPid)strtol(p + strlen(key), NULL, 10) : 0;
}

GPid wrapper_wait_ready(struct wrapper *w, guint number, guint timeout_ms)
{
	g_autofree gchar *needle = g_strdup_printf(LOG_READY_FMT,
						   number);

	return t_pid_in(wrapper_wait_log(w, needle, timeout_ms), "pid ");
}

struct wrapper *wrapper_start_prefixed(const char *const *prefix,
				       const char *const *args,
				       const char *const *env)
{
	return spawn_wrapper(prefix, t_wrapper_path(), args, env,
			     (struct spawn_setup){ 0 });
}

struct wrapper *wrapper_start_prefixed_setup(const char *const *prefix,
					     const char *const *args,
					     const char *const *env,
					     GSpawnChildSetupFunc setup,
					     gpointer data)
{
	return spawn_wrapper(prefix, t_wrapper_path(), args, env,
			     (struct spawn_setup){ setup, data });
}
