/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "t/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "legacy/pidfile.h"
#include "wrapper/rundir.h"

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

static gint64 deadline_of(guint timeout_ms)
{
	return g_get_monotonic_time() + (gint64)timeout_ms * 1000;
}

static int ms_left(gint64 deadline)
{
	gint64 left = deadline - g_get_monotonic_time();

	return left <= 0 ? 0 : (int)(left / 1000) + 1;
}

/* If the test dies (a failed assertion aborts it), the wrapper under test
 * gets SIGTERM and stops its haproxy: nothing outlives a crashed test. */
static void die_with_test(gpointer unused)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

/* argv: prefix (a bare first name, valgrind, is looked up in PATH), then
 * the wrapper at path, then args; env adds "K=V" to ours. */
static struct wrapper *spawn_wrapper(const char *const *prefix,
				     const char *path,
				     const char *const *args,
				     const char *const *env)
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
				      G_SPAWN_SEARCH_PATH, die_with_test,
				      NULL, &w->pid, NULL, NULL, &w->err_fd,
				      &error))
		g_error("cannot start %s: %s", (char *)argv->pdata[0],
			error->message);
	fcntl(w->err_fd, F_SETFL, O_NONBLOCK);
	return w;
}

struct wrapper *wrapper_start_at(const char *wrapper_path,
				 const char *const *args,
				 const char *const *env)
{
	return spawn_wrapper(NULL, wrapper_path ? : t_wrapper_path(), args,
			     env);
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

		if (strstr(line, ": executing ") && --n == 0)
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

void wrapper_free(struct wrapper *w)
{
	g_autoptr(GArray) below = NULL;

	if (!w)
		return;
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
	g_autofree gchar *needle = g_strdup_printf("generation %u ready: ",
						   number);

	return t_pid_in(wrapper_wait_log(w, needle, timeout_ms), "pid ");
}

guint16 t_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	guint16 port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(getsockname(fd, (struct sockaddr *)&a, &len), ==, 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static int connect_to(guint16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

gchar *t_http_get(guint16 port, guint timeout_ms)
{
	static const char req[] = "GET / HTTP/1.0\r\nHost: t\r\n\r\n";
	g_autoptr(GString) resp = g_string_new(NULL);
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	const char *body;
	char buf[1024];
	ssize_t n;
	int fd = connect_to(port);

	if (fd < 0)
		return NULL;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, req, sizeof(req) - 1) != sizeof(req) - 1) {
		close(fd);
		return NULL;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(resp, buf, n);
	close(fd);
	if (n < 0 || !g_str_has_prefix(resp->str, "HTTP/1.") ||
	    !strstr(resp->str, " 200 "))
		return NULL;
	body = strstr(resp->str, "\r\n\r\n");
	return body ? g_strdup(body + 4) : NULL;
}

GPid t_http_pid(guint16 port)
{
	g_autofree gchar *body = t_http_get(port, 5000);

	return body ? t_pid_in(body, "pid=") : 0;
}

GPid t_wait_serving(guint16 port, guint timeout_ms)
{
	gint64 deadline = deadline_of(timeout_ms);
	GPid pid;

	while (!(pid = t_http_pid(port)) && ms_left(deadline) > 0)
		g_usleep(20 * 1000);
	return pid;
}

int t_hold_connection(guint16 port)
{
	return connect_to(port);
}

gchar *t_tmpdir(void)
{
	g_autoptr(GError) error = NULL;
	gchar *dir = g_dir_make_tmp("hsw-test-XXXXXX", &error);

	g_assert_no_error(error);
	return dir;
}

static void rmtree(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			rmtree(path);
		else
			g_unlink(path);
	}
	g_rmdir(dir);
}

/* dir -> the short directory standing in for it. */
static GHashTable *short_dirs;

const char *t_short_dir(const char *dir)
{
	gchar *tmp;

	if (strlen(dir) + strlen("/run") <= RUNDIR_PATH_MAX)
		return dir;
	if (!short_dirs)
		short_dirs = g_hash_table_new_full(g_str_hash, g_str_equal,
						   g_free, g_free);
	tmp = g_hash_table_lookup(short_dirs, dir);
	if (tmp)
		return tmp;
	tmp = g_strdup("/run/hsw-t-XXXXXX");
	if (!g_mkdtemp_full(tmp, 0700)) {
		/* Not root: /tmp is short too. */
		g_free(tmp);
		tmp = g_strdup("/tmp/hsw-t-XXXXXX");
		g_assert_nonnull(g_mkdtemp_full(tmp, 0700));
	}
	g_hash_table_insert(short_dirs, g_strdup(dir), tmp);
	return tmp;
}

gchar *t_runtime_dir(const char *dir)
{
	gchar *run = g_build_filename(t_short_dir(dir), "run", NULL);

	g_assert_cmpint(g_mkdir_with_parents(run, 0700), ==, 0);
	return run;
}

void t_rmtree(const char *dir)
{
	const char *other = short_dirs ? g_hash_table_lookup(short_dirs, dir)
				       : NULL;

	if (other) {
		rmtree(other);
		g_hash_table_remove(short_dirs, dir);
	}
	rmtree(dir);
}

gchar *t_write_file(const char *dir, const char *name, const char *content)
{
	g_autoptr(GError) error = NULL;
	gchar *path = g_build_filename(dir, name, NULL);

	g_file_set_contents(path, content, -1, &error);
	g_assert_no_error(error);
	return path;
}

gchar *t_config_text(guint16 port, const char *extra)
{
	return g_strdup_printf(
		"global\n"
		"    hard-stop-after 10s\n"
		"defaults\n"
		"    mode http\n"
		"    timeout connect 1s\n"
		"    timeout client 10s\n"
		"    timeout server 10s\n"
		"frontend fe\n"
		"    bind 127.0.0.1:%u\n"
		"    http-request return status 200 content-type text/plain "
		"lf-string \"pid=%%pid\\n\"\n"
		"%s",
		port, extra ? extra : "");
}

gchar *t_write_config(const char *dir, const char *name, guint16 port,
		      const char *extra)
{
	g_autofree gchar *cfg = t_config_text(port, extra);

	return t_write_file(dir, name, cfg);
}

gboolean t_have_haproxy(void)
{
	return g_file_test("/usr/sbin/haproxy", G_FILE_TEST_IS_EXECUTABLE);
}

struct wrapper *wrapper_start_prefixed(const char *const *prefix,
				       const char *const *args,
				       const char *const *env)
{
	return spawn_wrapper(prefix, t_wrapper_path(), args, env);
}

static struct t_started started[8];
static guint n_started;

gboolean t_signal_verified(const struct t_started *p, int sig)
{
	g_autofree gchar *exe = NULL;
	gboolean ok = FALSE;
	int fd = pidfd_open(p->pid, 0);

	if (fd < 0)
		return FALSE;
	/* Checked after the open: the pidfd pins the process checked. */
	exe = proc_exe(p->pid);
	if (exe && g_str_has_suffix(exe, p->exe_suffix) &&
	    proc_same_process_at("/proc", p->pid, p->start_time))
		ok = proc_pidfd_signal(fd, sig);
	close(fd);
	return ok;
}

/* From a failed assertion in the main thread: /proc reads are fine. */
static void end_started_now(int sig)
{
	for (guint i = 0; i < n_started; i++)
		t_signal_verified(&started[i], SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

void t_end_started_on_abort(void)
{
	struct sigaction sa = { .sa_handler = end_started_now };

	/* g_assert aborts; g_error may trap. */
	sigaction(SIGABRT, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
}

struct t_started *t_remember(GPid pid, const char *exe_suffix)
{
	struct proc_stat st;
	struct t_started *p;

	g_assert_cmpuint(n_started, <, G_N_ELEMENTS(started));
	g_assert_true(proc_stat_at("/proc", pid, &st, NULL));
	p = &started[n_started++];
	*p = (struct t_started){ pid, st.start_time, exe_suffix };
	return p;
}

void t_end_started(struct t_started *p)
{
	if (!t_signal_verified(p, SIGTERM))
		return;
	if (!t_wait_gone(p->pid, T_WAIT))
		t_signal_verified(p, SIGKILL);
	g_assert_true(t_wait_gone(p->pid, T_WAIT));
}

void t_end_all_started(void)
{
	while (n_started > 0)
		t_end_started(&started[--n_started]);
}

gchar *t_request_once(guint16 port)
{
	return t_request_pid(port, NULL);
}

gchar *t_request_pid(guint16 port, GPid *pid)
{
	static const char req[] = "GET / HTTP/1.0\r\nHost: t\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 5 };
	struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };
	char buf[1024];
	gsize got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	gchar *why = NULL;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		why = g_strdup_printf("connect: %s", g_strerror(errno));
	else if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) !=
		 sizeof(req) - 1)
		why = g_strdup_printf("send: %s", g_strerror(errno));
	while (!why && got < sizeof(buf) - 1 &&
	       (n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			why = g_strdup_printf("recv: %s", g_strerror(errno));
		else
			got += n;
	}
	/* haproxy closed first: an RST now ends our side at once instead
	 * of leaving tens of thousands of sockets in TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_close,
		   sizeof(abort_close));
	close(fd);
	buf[got] = '\0';
	if (!why && (!g_str_has_prefix(buf, "HTTP/1.") ||
		     !strstr(buf, " 200 ") || !strstr(buf, "pid=")))
		why = g_strdup_printf("bad answer: \"%s\"", buf);
	if (pid)
		*pid = why ? 0 : atoi(strstr(buf, "pid=") + 4);
	return why;
}

/* ---- load: fresh connections one after the other, in a thread ---- */

/* Bounds of a load run, whatever the test does. */
#define LOAD_MAX_REQUESTS 200000
#define LOAD_MAX_US (120 * G_USEC_PER_SEC)
#define LOAD_ERRORS_KEPT 10

static gboolean load_take(struct t_load *l, const char *err, GPid pid)
{
	gboolean stop;

	g_mutex_lock(&l->lock);
	l->requests++;
	if (err && ++l->failures <= LOAD_ERRORS_KEPT)
		g_string_append_printf(l->errors, "request %u: %s\n",
				       l->requests, err);
	if (!err) {
		gpointer key = GINT_TO_POINTER(pid);
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(l->answers,
							       key));

		g_hash_table_insert(l->answers, key, GUINT_TO_POINTER(n + 1));
	}
	g_cond_broadcast(&l->cond);
	stop = l->stop;
	g_mutex_unlock(&l->lock);
	return stop;
}

static gpointer load_run(gpointer data)
{
	struct t_load *l = data;
	gint64 end = g_get_monotonic_time() + LOAD_MAX_US;
	gboolean stop = FALSE;

	for (guint i = 0; !stop && i < LOAD_MAX_REQUESTS &&
	     g_get_monotonic_time() < end; i++) {
		GPid pid;
		g_autofree gchar *err = t_request_pid(l->port, &pid);

		stop = load_take(l, err, pid);
		if (!stop && l->pause_us)
			g_usleep(l->pause_us);
	}
	g_mutex_lock(&l->lock);
	l->done = TRUE;
	g_cond_broadcast(&l->cond);
	g_mutex_unlock(&l->lock);
	return NULL;
}

void t_load_start(struct t_load *l, guint16 port)
{
	t_load_start_paced(l, port, 0);
}

void t_load_start_paced(struct t_load *l, guint16 port, guint pause_us)
{
	*l = (struct t_load){ .port = port, .pause_us = pause_us };
	g_mutex_init(&l->lock);
	g_cond_init(&l->cond);
	l->answers = g_hash_table_new(NULL, NULL);
	l->errors = g_string_new(NULL);
	l->thread = g_thread_new("load", load_run, l);
}

gboolean t_load_wait_answers(struct t_load *l, GPid pid, guint n)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	gboolean ok;

	g_mutex_lock(&l->lock);
	while (!(ok = GPOINTER_TO_UINT(g_hash_table_lookup(
			      l->answers, GINT_TO_POINTER(pid))) >= n) &&
	       !l->done && g_cond_wait_until(&l->cond, &l->lock, end))
		;
	g_mutex_unlock(&l->lock);
	return ok;
}

guint t_load_finish(struct t_load *l)
{
	g_autoptr(GString) by = g_string_new(NULL);
	GHashTableIter it;
	gpointer pid, n;
	guint failures;

	g_mutex_lock(&l->lock);
	l->stop = TRUE;
	g_mutex_unlock(&l->lock);
	g_thread_join(l->thread);
	g_hash_table_iter_init(&it, l->answers);
	while (g_hash_table_iter_next(&it, &pid, &n))
		g_string_append_printf(by, " pid %d: %u;", GPOINTER_TO_INT(pid),
				       GPOINTER_TO_UINT(n));
	g_test_message("load on port %u: %u requests, %u failed; answered "
		       "by%s", l->port, l->requests, l->failures, by->str);
	if (l->failures)
		g_test_message("first failures:\n%s", l->errors->str);
	failures = l->failures;
	g_hash_table_unref(l->answers);
	g_string_free(l->errors, TRUE);
	g_cond_clear(&l->cond);
	g_mutex_clear(&l->lock);
	return failures;
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

GPid t_wait_pidfile(const char *pidfile)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	do {
		g_autoptr(GArray) pids = NULL;

		if (pidfile_read(pidfile, &pids, NULL, NULL) && pids->len)
			return g_array_index(pids, GPid, 0);
		g_usleep(10 * 1000);
	} while (g_get_monotonic_time() < end);
	return 0;
}

void t_assert_pidfile_holds(const char *pidfile, GPid pid)
{
	g_autoptr(GArray) pids = NULL;
	guint invalid = 0;

	if (!pidfile_read(pidfile, &pids, &invalid, NULL))
		g_error("pidfile %s: unreadable, pid %d expected", pidfile,
			pid);
	g_assert_cmpuint(invalid, ==, 0);
	g_assert_cmpuint(pids->len, ==, 1);
	g_assert_cmpint(g_array_index(pids, GPid, 0), ==, pid);
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
	g_autofree gchar *recorder = g_build_filename(t_dir(), "sigrecorder",
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

int t_plain_listener(guint16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(listen(fd, 1), ==, 0);
	return fd;
}

gchar *t_wait_file_line(const char *file, const char *needle,
			const char *needle2, guint nth, guint timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;

	for (;;) {
		g_autofree gchar *text = NULL;
		g_auto(GStrv) lines = NULL;
		guint seen = 0;

		if (g_file_get_contents(file, &text, NULL, NULL)) {
			lines = g_strsplit(text, "\n", -1);
			for (guint i = 0; lines[i]; i++) {
				if (!strstr(lines[i], needle) ||
				    (needle2 && !strstr(lines[i], needle2)))
					continue;
				if (++seen == nth)
					return g_strdup(lines[i]);
			}
		}
		if (g_get_monotonic_time() >= deadline)
			return NULL;
		g_usleep(5 * 1000);
	}
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

/* Both pipes to EOF, within the deadline; FALSE if it passed. */
static gboolean read_to_eof(struct t_command *c, gint64 deadline)
{
	gboolean out_open = TRUE, err_open = TRUE;

	while (out_open || err_open) {
		struct pollfd p[2] = {
			{ .fd = out_open ? c->out_fd : -1, .events = POLLIN },
			{ .fd = err_open ? c->err_fd : -1, .events = POLLIN },
		};
		gint64 left = deadline - g_get_monotonic_time();

		if (left <= 0)
			return FALSE;
		if (poll(p, 2, (int)(left / 1000) + 1) <= 0)
			continue;
		if (p[0].revents)
			out_open = read_some(c->out_fd, c->out);
		if (p[1].revents)
			err_open = read_some(c->err_fd, c->err);
	}
	return TRUE;
}

int t_command_finish(struct t_command *c, guint timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;
	int status = -1;

	if (read_to_eof(c, deadline)) {
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

/* A 2.5+ master re-executes itself into "wait mode" after each load. */
static gboolean in_wait_mode(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/environ", pid);
	g_autofree gchar *env = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &env, &len, NULL))
		return FALSE;
	for (gsize i = 0; i < len; i += strlen(env + i) + 1)
		if (g_str_has_prefix(env + i, "HAPROXY_MWORKER_WAIT_ONLY="))
			return TRUE;
	return FALSE;
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

/* ---- OpenMetrics ---- */

/* Every sample as "name{k="v",...} value", one a line, from Debian's
 * python3-prometheus-client's OpenMetrics parser (which rejects what is
 * not OpenMetrics); NULL where that parser is not installed. */
gchar *t_openmetrics_parsed(const char *text)
{
	static const char script[] =
		"import sys\n"
		"from prometheus_client.openmetrics.parser import "
		"text_string_to_metric_families as parse\n"
		"for f in parse(sys.argv[1]):\n"
		"    for s in f.samples:\n"
		"        l = ','.join('%s=\"%s\"' % kv for kv in "
		"sorted(s.labels.items()))\n"
		"        print('%s{%s} %r' % (s.name, l, s.value))\n";
	const char *argv[] = { "/usr/bin/python3", "-c", script, text, NULL };
	gchar *out = NULL;
	g_autofree gchar *err = NULL;

	if (!g_file_test("/usr/lib/python3/dist-packages/prometheus_client",
			 G_FILE_TEST_IS_DIR))
		return NULL;
	if (t_run_command(argv, T_WAIT, &out, &err) != 0)
		g_error("not OpenMetrics (%s):\n%s", err, text);
	return out;
}

void t_assert_sample(const char *parsed, const char *sample)
{
	g_autofree gchar *all = g_strdup_printf("\n%s", parsed);
	g_autofree gchar *line = g_strdup_printf("\n%s\n", sample);

	if (!strstr(all, line))
		g_error("no \"%s\" in:\n%s", sample, parsed);
}

double t_sample_value(const char *parsed, const char *name)
{
	g_autofree gchar *head = g_strdup_printf("%s{} ", name);
	const char *p = strstr(parsed, head);

	g_assert_nonnull(p);
	return g_ascii_strtod(p + strlen(head), NULL);
}
