/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests of reloads systemd can trust (issue 3), against the
 * real haproxy (Debian's 2.6) unless noted, on 127.0.0.1 only:
 * sd_notify messages read from a fake NOTIFY_SOCKET, the control socket
 * and its client commands, status, bounded draining (max-old-workers, the
 * drain deadline) and seamless reloads (-x).
 *
 * Every wait is on a real event (a datagram, a log line, a process exit,
 * a client's exit, a socket answering) and bounded. Every wrapper runs
 * with --runtime-dir=<its temp dir>/run; everything started is ended by
 * pid (wrapper_free, reaped clients).
 */
#include "t/harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

#define HAPROXY "/usr/sbin/haproxy"

/* Exit codes of the client commands. */
#define CLIENT_OK		0
#define CLIENT_FAILED		1

/* Long timeouts: an idle connection keeps its generation draining past
 * every bound of these tests, unless the wrapper ends it. A later global
 * section overrides the harness's hard-stop-after. */
#define LONG_DRAIN "    timeout client 120s\n" \
		   "    timeout http-request 120s\n" \
		   "global\n" \
		   "    hard-stop-after 120s\n"

#define BROKEN "    no-such-keyword here\n"

/* ---- safety net: a failed assertion aborts; leave no process behind ---- */

static GPid started[64];
static guint n_started;

static void remember(GPid pid)
{
	started[n_started++ % G_N_ELEMENTS(started)] = pid;
}

/* Synchronous abort from g_assert in the main thread: /proc reads are fine. */
static void on_abort(int sig)
{
	for (guint i = 0; i < MIN(n_started, G_N_ELEMENTS(started)); i++) {
		g_autoptr(GArray) below = NULL;

		/* Only our own children: an unreaped pid cannot be reused. */
		if (proc_parent(started[i]) != getpid())
			continue;
		below = t_kill_tree(started[i]);
	}
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

/* g_error() would trap, not abort: fail the way g_assert does. */
static void G_GNUC_NORETURN G_GNUC_PRINTF(3, 4)
fail_at(int line, const char *func, const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_assertion_message(G_LOG_DOMAIN, __FILE__, line, func, msg);
	abort();
}
#define fail(...) fail_at(__LINE__, G_STRFUNC, __VA_ARGS__)

static gboolean test_begin(void)
{
	n_started = 0;
	if (t_have_haproxy())
		return TRUE;
	g_test_skip("no " HAPROXY);
	return FALSE;
}

static gint64 deadline_in(guint ms)
{
	return g_get_monotonic_time() + (gint64)ms * 1000;
}

static int ms_until(gint64 deadline)
{
	gint64 left = deadline - g_get_monotonic_time();

	return left <= 0 ? 0 : (int)(left / 1000) + 1;
}

static void assert_exit_code(int status, int code)
{
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

/* ---- held-open connections ---- */

/* The sockets pid holds ("socket:[inode]"), as a set. */
static GHashTable *sockets_of(GPid pid)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	GHashTable *set = g_hash_table_new_full(g_str_hash, g_str_equal,
						g_free, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		gchar *link = g_file_read_link(path, NULL);

		if (link && g_str_has_prefix(link, "socket:"))
			g_hash_table_add(set, link);
		else
			g_free(link);
	}
	return set;
}

/* Does pid hold a socket that is not in before? */
static gboolean has_new_socket(GPid pid, GHashTable *before)
{
	g_autoptr(GHashTable) now = sockets_of(pid);
	GHashTableIter iter;
	gpointer link;

	g_hash_table_iter_init(&iter, now);
	while (g_hash_table_iter_next(&iter, &link, NULL))
		if (!g_hash_table_contains(before, link))
			return TRUE;
	return FALSE;
}

/*
 * An idle connection that pid has accepted: after a reload it keeps pid
 * draining. One still in the accept queue would go to the successor
 * along with the listening socket (-x), and keep nothing. Nothing else
 * connects to port meanwhile: pid's new socket is our connection. (Not
 * through /proc/net/tcp, which load tests can swell to megabytes.)
 */
static int hold_on(guint16 port, GPid pid)
{
	g_autoptr(GHashTable) before = sockets_of(pid);
	gint64 deadline = deadline_in(T_WAIT);
	int fd = t_hold_connection(port);

	g_assert_cmpint(fd, >=, 0);
	while (!has_new_socket(pid, before) && ms_until(deadline))
		g_usleep(10 * 1000);
	g_assert_true(has_new_socket(pid, before));
	return fd;
}

/* ---- a fake NOTIFY_SOCKET ---- */

typedef struct {
	int fd;
	gchar *path;
	gchar *env;	/* "NOTIFY_SOCKET=<path>" */
} Notify;

static void notify_open(Notify *n, const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	n->path = g_build_filename(t_short_dir(dir), "notify.sock", NULL);
	n->env = g_strconcat("NOTIFY_SOCKET=", n->path, NULL);
	g_assert_cmpuint(strlen(n->path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, n->path);
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(n->fd, >=, 0);
	g_assert_cmpint(bind(n->fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
}

static void notify_clear(Notify *n)
{
	if (n->path) {
		close(n->fd);
		g_unlink(n->path);
	}
	g_free(n->path);
	g_free(n->env);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Notify, notify_clear)

/* The next datagram, or NULL if none came within timeout_ms. */
static gchar *notify_recv(Notify *n, guint timeout_ms)
{
	struct pollfd p = { .fd = n->fd, .events = POLLIN };
	char buf[4096];
	gchar *msg;
	ssize_t len;

	if (poll(&p, 1, timeout_ms) <= 0)
		return NULL;
	len = recv(n->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (len < 0)
		return NULL;
	buf[len] = '\0';
	msg = g_strndup(buf, len);
	g_test_message("notify: %s", g_strdelimit(buf, "\n", '|'));
	return msg;
}

/*
 * Assert that msg is exactly the lines starting with the given prefixes,
 * in order (NULL-terminated).
 */
static void G_GNUC_NULL_TERMINATED assert_fields(const char *msg, ...)
{
	g_auto(GStrv) lines = NULL;
	const char *prefix;
	guint i = 0;
	va_list ap;

	g_assert_nonnull(msg);
	lines = g_strsplit(msg, "\n", -1);
	va_start(ap, msg);
	while ((prefix = va_arg(ap, const char *))) {
		g_assert_nonnull(lines[i]);
		if (!g_str_has_prefix(lines[i], prefix))
			fail("notify: expected %s..., got \"%s\" in \"%s\"",
				prefix, lines[i], msg);
		i++;
	}
	va_end(ap);
	g_assert_null(lines[i]);
}

/* The value of "KEY=" in msg (a datagram of lines), or NULL. */
static gchar *field(const char *msg, const char *key)
{
	g_auto(GStrv) lines = g_strsplit(msg, "\n", -1);

	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, key))
			return g_strdup(*l + strlen(key));
	return NULL;
}

static gchar *expect_ready(Notify *n, guint timeout_ms)
{
	gchar *msg = notify_recv(n, timeout_ms);

	assert_fields(msg, "READY=1", "STATUS=", NULL);
	return msg;
}

/* RELOADING=1 with a MONOTONIC_USEC= of this boot's CLOCK_MONOTONIC. */
static void expect_reloading(Notify *n)
{
	g_autofree gchar *msg = notify_recv(n, T_WAIT);
	g_autofree gchar *usec = NULL;
	gint64 now, stamp;
	char *end;

	assert_fields(msg, "RELOADING=1", "MONOTONIC_USEC=", "STATUS=", NULL);
	now = g_get_monotonic_time();
	usec = field(msg, "MONOTONIC_USEC=");
	stamp = g_ascii_strtoll(usec, &end, 10);
	g_assert_true(*usec && !*end);
	/* A sanity bound on the value (same clock, a moment ago), not a
	 * measure of speed. */
	g_assert_cmpint(stamp, >, 0);
	g_assert_cmpint(stamp, <=, now);
	g_assert_cmpint(now - stamp, <, 60 * G_USEC_PER_SEC);
}

/* ---- client commands, run as separate processes ---- */

typedef struct t_command Client;

static void client_spawn(Client *c, const char *rundir_opt,
			 const char *command, const char *extra)
{
	const char *argv[] = { t_wrapper_path(), command, rundir_opt, extra,
			       NULL };

	t_command_spawn(c, argv);
	remember(c->pid);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Client, t_command_clear)

/* Run a client command to its end; its exit code, stdout, stderr. */
static int run_client(const char *rundir_opt, const char *command,
		      const char *extra, gchar **out, gchar **err)
{
	g_auto(Client) c = { 0 };
	int code;

	client_spawn(&c, rundir_opt, command, extra);
	code = t_command_finish(&c, T_WAIT);
	if (out)
		*out = g_strdup(c.out->str);
	if (err)
		*err = g_strdup(c.err->str);
	return code;
}

/* ---- raw control connections, for what the client never sends ---- */

static int ctl_connect(const char *rundir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	/* Bounds a connect() that would wait for a full backlog. */
	struct timeval tv = { .tv_sec = 5 };
	g_autofree gchar *path = g_build_filename(rundir, "control.sock", NULL);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpuint(strlen(path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, path);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		fail("connect %s: %s", path, g_strerror(errno));
	return fd;
}

static void ctl_send(int fd, const void *data, gsize len)
{
	g_assert_cmpint(send(fd, data, len, MSG_NOSIGNAL), ==, (gssize)len);
}

/*
 * The answer, up to the wrapper's close; NULL if it did not close within
 * timeout_ms. A close with our bytes still unread ends in ECONNRESET
 * after the answer rather than in EOF: that is an end too.
 */
static gchar *ctl_read(int fd, guint timeout_ms)
{
	g_autoptr(GString) answer = g_string_new(NULL);
	gint64 deadline = deadline_in(timeout_ms);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[1024];
		ssize_t n;

		if (poll(&p, 1, ms_until(deadline)) <= 0)
			return NULL;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		g_string_append_len(answer, buf, n);
	}
	return g_strdup(answer->str);
}

static gchar *ctl_ask(const char *rundir, const void *data, gsize len)
{
	int fd = ctl_connect(rundir);
	gchar *answer;

	ctl_send(fd, data, len);
	answer = ctl_read(fd, T_WAIT);
	close(fd);
	g_test_message("control answer: %s", answer ? answer : "(none)");
	return answer;
}

/* ---- a tiny JSON validator (RFC 8259 syntax, no semantics) ---- */

static const char *json_value(const char *p, guint depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;	/* control characters, and the end */
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u') {
			for (int i = 0; i < 4; i++)
				if (!g_ascii_isxdigit(*++p))
					return NULL;
		} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return p + 1;
}

static const char *json_digits(const char *p)
{
	if (!g_ascii_isdigit(*p))
		return NULL;
	while (g_ascii_isdigit(*p))
		p++;
	return p;
}

static const char *json_number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (!(p = json_digits(p)))
		return NULL;
	if (*p == '.' && !(p = json_digits(p + 1)))
		return NULL;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		p = json_digits(p);
	}
	return p;
}

/* '{' members '}' or '[' elements ']'. */
static const char *json_container(const char *p, guint depth)
{
	gboolean object = *p == '{';
	char close = object ? '}' : ']';

	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (object) {
			if (!(p = json_string(p)))
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = json_value(p, depth + 1)))
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = json_ws(p);
	}
}

/* A value with the white space around it; the end, or NULL. */
static const char *json_value(const char *p, guint depth)
{
	static const char *const literals[] = { "true", "false", "null" };

	if (depth > 64)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[')
		p = json_container(p, depth);
	else if (*p == '"')
		p = json_string(p);
	else if (*p == '-' || g_ascii_isdigit(*p))
		p = json_number(p);
	else {
		const char *lit = p;

		p = NULL;
		for (guint i = 0; i < G_N_ELEMENTS(literals); i++)
			if (g_str_has_prefix(lit, literals[i]))
				p = lit + strlen(literals[i]);
	}
	return p ? json_ws(p) : NULL;
}

static gboolean json_valid(const char *text)
{
	const char *end = json_value(text, 0);

	return end && !*end;
}

/* ---- the fixture: a wrapper serving one port from a temp dir ---- */

typedef struct {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	gchar *rundir;
	gchar *rundir_opt;	/* --runtime-dir=<rundir>, also for clients */
	gchar *haproxy_opt;	/* --haproxy=..., or NULL: the real one */
	guint16 port;
	Wrapper *w;
	GPid pid;	/* the serving haproxy */
} Site;

static void site_init(Site *s, const char *extra)
{
	s->dir = t_tmpdir();
	s->port = t_free_port();
	s->cfg = t_write_config(s->dir, "haproxy.cfg", s->port, extra);
	s->pidfile = g_build_filename(s->dir, "haproxy.pid", NULL);
	s->rundir = t_runtime_dir(s->dir);
	s->rundir_opt = g_strconcat("--runtime-dir=", s->rundir, NULL);
}

/* Replace the configuration: the next reload reads it. */
static void site_config(Site *s, const char *extra)
{
	g_autofree gchar *text = NULL;

	if (!s->haproxy_opt) {
		g_free(t_write_config(s->dir, "haproxy.cfg", s->port, extra));
		return;
	}
	/* t/fake-haproxy's own keywords. */
	text = g_strdup_printf("bind 127.0.0.1:%u\n%s", s->port,
			       extra ? extra : "");
	g_free(t_write_file(s->dir, "haproxy.cfg", text));
}

/* With t/fake-haproxy instead of the real one. */
static void site_init_fake(Site *s, const char *extra)
{
	site_init(s, NULL);
	s->haproxy_opt = g_strconcat("--haproxy=", t_dir(), "/fake-haproxy",
				     NULL);
	site_config(s, extra);
}

static void site_clear(Site *s)
{
	g_clear_pointer(&s->w, wrapper_free);
	if (s->dir)
		t_rmtree(s->dir);
	g_free(s->dir);
	g_free(s->cfg);
	g_free(s->pidfile);
	g_free(s->rundir);
	g_free(s->rundir_opt);
	g_free(s->haproxy_opt);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Site, site_clear)

/*
 * Start the wrapper: --runtime-dir, the options up to NULL, then
 * -f cfg -p pidfile. env: additions "K=V" (may be NULL). Waits for
 * generation 1 to serve.
 */
static void G_GNUC_NULL_TERMINATED site_start(Site *s, const char *const *env,
					      ...)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	const char *arg;
	va_list ap;

	g_ptr_array_add(args, s->rundir_opt);
	if (s->haproxy_opt)
		g_ptr_array_add(args, s->haproxy_opt);
	va_start(ap, env);
	while ((arg = va_arg(ap, const char *)))
		g_ptr_array_add(args, (gpointer)arg);
	va_end(ap);
	g_ptr_array_add(args, (gpointer)"-f");
	g_ptr_array_add(args, s->cfg);
	g_ptr_array_add(args, (gpointer)"-p");
	g_ptr_array_add(args, s->pidfile);
	g_ptr_array_add(args, NULL);
	s->w = wrapper_start((const char *const *)args->pdata, env);
	remember(s->w->pid);
	s->pid = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(s->pid, >, 0);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, s->pid);
}

static void assert_running(Site *s)
{
	g_assert_cmpint(wrapper_wait_exit(s->w, 0), ==, -1);
	g_assert_true(t_pid_alive(s->w->pid));
}

/* Stop with SIGTERM; the wrapper exits 0, nothing of it left. */
static void site_stop(Site *s)
{
	g_autoptr(GArray) below = t_descendants(s->w->pid);

	wrapper_signal(s->w, SIGTERM);
	assert_exit_code(wrapper_wait_exit(s->w, T_WAIT), 0);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(g_array_index(below, GPid, i),
					  T_WAIT));
}

/* "ok generation N (pid P) serving": P, checking N if not 0. */
static GPid serving_pid_in(const char *out, guint number)
{
	const char *ok = strstr(out, "ok generation ");

	g_assert_nonnull(ok);
	g_assert_nonnull(strstr(ok, " serving"));
	if (number)
		g_assert_cmpint(t_pid_in(ok, "ok generation "), ==, number);
	return t_pid_in(ok, "(pid ");
}

/*
 * `--reload` (or `--hard-reload`) exits 0 once the new generation serves,
 * naming it: a new pid, a child of the same wrapper.
 */
static GPid reload_client(Site *s, const char *command, guint number)
{
	g_autofree gchar *out = NULL;
	GPid old = s->pid, pid;

	g_assert_cmpint(run_client(s->rundir_opt, command, NULL, &out, NULL),
			==, CLIENT_OK);
	/* Keep its stderr pipe from filling up over many reloads. */
	wrapper_pump(s->w, 0);
	pid = serving_pid_in(out, number);
	g_assert_cmpint(pid, >, 0);
	g_assert_cmpint(pid, !=, old);
	g_assert_cmpint(proc_parent(pid), ==, s->w->pid);
	/* Published before the client is answered: at once. */
	t_assert_pidfile_holds(s->pidfile, pid);
	s->pid = pid;
	return pid;
}

/* Poll (bounded) until port answers with pid; the last pid that answered. */
static GPid wait_answering(guint16 port, GPid pid)
{
	gint64 deadline = deadline_in(T_WAIT);
	GPid got;

	while ((got = t_http_pid(port)) != pid && ms_until(deadline))
		g_usleep(10 * 1000);
	return got;
}

/*
 * A reload for tests about something else: the new generation serves.
 * (Whether the very first request already reaches it is test 5's.)
 */
static GPid site_reload(Site *s, const char *command, guint number)
{
	GPid pid = reload_client(s, command, number);

	g_assert_cmpint(wait_answering(s->port, pid), ==, pid);
	return pid;
}

/*
 * The first request after the client returned goes to the new pid. The
 * wrapper answers once the new generation is bound; until the old one
 * has acted on its soft stop it still holds the shared listener (-x)
 * and can take that request: seen under CPU load, a wrapper bug.
 */
/*
 * The client returns once the new generation serves and the old one has
 * let go of the sockets they share (-x): the very next request is the
 * new generation's.
 */
static GPid site_reload_strict(Site *s, const char *command, guint number)
{
	GPid pid = reload_client(s, command, number);

	g_assert_cmpint(t_http_pid(s->port), ==, pid);
	return pid;
}

static gchar *site_status(Site *s, const char *extra)
{
	gchar *out = NULL;

	g_assert_cmpint(run_client(s->rundir_opt, "--status", extra, &out,
				   NULL), ==, CLIENT_OK);
	return out;
}

/* The `--status` line about generation number, or NULL. */
static gchar *status_line(const char *text, guint number)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree gchar *head = g_strdup_printf("generation %u pid ", number);

	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, head))
			return g_strdup(*l);
	return NULL;
}

static void assert_status_gen(const char *text, guint number, GPid pid,
			      const char *state)
{
	g_autofree gchar *line = status_line(text, number);
	g_autofree gchar *tail = g_strconcat(" ", state, NULL);

	if (!line)
		fail("no generation %u in status:\n%s", number, text);
	g_assert_cmpint(t_pid_in(line, " pid "), ==, pid);
	g_assert_nonnull(strstr(line, " haproxy "));
	g_assert_nonnull(strstr(line, " started "));
	/* "... current", but "... failed: exited with status 1" */
	if (g_str_equal(state, "failed") ? !strstr(line, " failed: ")
					 : !g_str_has_suffix(line, tail))
		fail("generation %u is not %s: %s", number, state, line);
}

/* The client's output is the answer, lines; the last one is "ok...". */
static gchar **answer_lines(const char *out)
{
	g_autofree gchar *text = g_strdup(out);

	return g_strsplit(g_strchomp(text), "\n", -1);
}

/* ---- 1. sd_notify: the exact sequence ---- */

static gboolean env_has(GPid pid, const char *name)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/environ", pid);
	g_autofree gchar *prefix = g_strconcat(name, "=", NULL);
	g_autofree gchar *buf = NULL;
	gsize len = 0;

	g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
	for (gsize i = 0; i < len; i += strlen(buf + i) + 1)
		if (g_str_has_prefix(buf + i, prefix))
			return TRUE;
	return FALSE;
}

static void test_notify_start_reload_stop(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready1 = NULL;
	g_autofree gchar *ready2 = NULL;
	g_autofree gchar *ready3 = NULL;
	g_autofree gchar *stopping = NULL;
	g_autofree gchar *want = NULL;
	g_autofree gchar *status = NULL;
	GPid gen1, gen2;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	notify_open(&n, s.dir);
	{
		const char *env[] = { n.env, NULL };

		site_start(&s, env, NULL);
	}
	gen1 = s.pid;

	/* Start: READY=1 with a STATUS= naming the serving generation. */
	ready1 = expect_ready(&n, T_WAIT);
	want = g_strdup_printf("STATUS=generation 1 (pid %d, haproxy ", gen1);
	g_assert_nonnull(strstr(ready1, want));
	g_assert_false(env_has(gen1, "NOTIFY_SOCKET"));

	/* A good reload: RELOADING=1, then READY=1 saying it went well. */
	wrapper_signal(s.w, SIGUSR2);
	expect_reloading(&n);
	ready2 = expect_ready(&n, T_WAIT);
	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_free(want);
	want = g_strdup_printf("STATUS=generation 2 (pid %d, haproxy ", gen2);
	g_assert_nonnull(strstr(ready2, want));
	g_assert_nonnull(strstr(ready2, "last reload ok"));
	g_assert_false(env_has(gen2, "NOTIFY_SOCKET"));

	/* A failed reload: READY=1 too (systemd waits for it), saying so. */
	site_config(&s, BROKEN);
	wrapper_signal(s.w, SIGUSR2);
	expect_reloading(&n);
	ready3 = expect_ready(&n, T_WAIT);
	g_assert_nonnull(wrapper_wait_log(s.w, "reload failed", T_WAIT));
	g_assert_nonnull(strstr(ready3, want));
	g_assert_nonnull(strstr(ready3, "FAILED"));
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);

	/* Stop: STOPPING=1, and nothing after it. */
	wrapper_signal(s.w, SIGTERM);
	stopping = notify_recv(&n, T_WAIT);
	assert_fields(stopping, "STOPPING=1", "STATUS=", NULL);
	assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 0);
	status = notify_recv(&n, 0);
	g_assert_null(status);
	g_assert_null(wrapper_find_log(s.w, "sd_notify"));
}

/*
 * A restart by hand ("haproxy -D ... -sf PID"): STATUS= says that the
 * adopted haproxy serves, and so does a failed reload's READY=1.
 */
static void test_notify_adopted(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready1 = NULL, *status = NULL, *ready2 = NULL;
	g_autofree gchar *oldarg = NULL, *want = NULL;
	const char *line;
	GPid pid;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	notify_open(&n, s.dir);
	{
		const char *env[] = { n.env, NULL };

		site_start(&s, env, NULL);
	}
	ready1 = expect_ready(&n, T_WAIT);
	oldarg = g_strdup_printf("%d", s.pid);
	{
		const char *argv[] = { HAPROXY, "-D", "-p", s.pidfile, "-f",
				       s.cfg, "-sf", oldarg, NULL };

		t_launch_daemon(s.dir, argv);
	}
	line = wrapper_wait_log(s.w, "adopting standalone pid ", T_WAIT);
	g_assert_nonnull(line);
	pid = t_pid_in(line, "pid ");
	t_remember(pid, HAPROXY);
	want = g_strdup_printf("STATUS=adopted haproxy (pid %d, standalone) "
			       "serving", pid);
	status = notify_recv(&n, T_WAIT);
	assert_fields(status, "STATUS=", NULL);
	g_assert_nonnull(strstr(status, want));

	site_config(&s, BROKEN);
	wrapper_signal(s.w, SIGUSR2);
	expect_reloading(&n);
	ready2 = expect_ready(&n, T_WAIT);
	g_assert_nonnull(strstr(ready2, want));
	g_assert_nonnull(strstr(ready2, "FAILED"));
	site_stop(&s);
	g_assert_true(t_wait_gone(pid, T_WAIT));
	t_end_all_started();
}

/* ---- 2. EXTEND_TIMEOUT_USEC= while a generation loads (fake haproxy) ---- */

static void test_notify_extend_timeout(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_auto(Client) c = { 0 };
	g_autofree gchar *ready = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *loading = NULL;
	guint extends = 0;
	gint64 deadline;
	GPid gen2;

	/* t/fake-haproxy here: it can take 12 s to load. */
	n_started = 0;
	{
		g_autofree gchar *fake = g_build_filename(t_dir(),
							  "fake-haproxy", NULL);

		if (!g_file_test(fake, G_FILE_TEST_IS_EXECUTABLE)) {
			g_test_skip("no t/fake-haproxy");
			return;
		}
	}
	site_init_fake(&s, NULL);
	notify_open(&n, s.dir);
	{
		const char *env[] = { n.env, NULL };

		site_start(&s, env, NULL);
	}
	g_free(expect_ready(&n, T_WAIT));

	/* Longer than the wrapper's 10 s between two extensions, and than
	 * its idle timeout for control clients: a waiting one is kept. */
	site_config(&s, "fake-load-delay-ms 12000\n");
	client_spawn(&c, s.rundir_opt, "--reload", NULL);
	expect_reloading(&n);

	/* Status answers while it loads, and shows it loading. */
	g_assert_nonnull(wrapper_wait_log(s.w, ": executing ", T_WAIT));
	text = site_status(&s, NULL);
	assert_status_gen(text, 1, s.pid, "current");
	loading = status_line(text, 2);
	g_assert_nonnull(loading);
	g_assert_true(g_str_has_suffix(loading, " starting"));

	deadline = deadline_in(30000);
	while (!ready && ms_until(deadline)) {
		g_autofree gchar *msg = notify_recv(&n, ms_until(deadline));

		if (!msg)
			break;
		if (g_str_has_prefix(msg, "READY=1\n")) {
			ready = g_steal_pointer(&msg);
			break;
		}
		g_assert_cmpstr(msg, ==, "EXTEND_TIMEOUT_USEC=30000000");
		extends++;
	}
	g_assert_nonnull(ready);
	assert_fields(ready, "READY=1", "STATUS=", NULL);
	g_assert_cmpuint(extends, >=, 1);
	g_assert_nonnull(strstr(ready, "generation 2 "));
	g_assert_nonnull(strstr(ready, "last reload ok"));

	g_assert_cmpint(t_command_finish(&c, T_WAIT), ==, CLIENT_OK);
	gen2 = serving_pid_in(c.out->str, 2);
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);
	site_stop(&s);
}

/* ---- 3. WATCHDOG=1 while a generation serves ---- */

static void test_notify_watchdog(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Notify) n = { 0 };
	gboolean stopping = FALSE;
	guint pings = 0;
	gint64 deadline;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	notify_open(&n, s.dir);
	{
		/* WATCHDOG_PID is unset (main() clears it): it is for us. */
		const char *env[] = { n.env, "WATCHDOG_USEC=200000", NULL };

		site_start(&s, env, NULL);
	}
	/* Nothing before the first generation serves. */
	g_free(expect_ready(&n, T_WAIT));
	deadline = deadline_in(T_WAIT);
	while (pings < 3 && ms_until(deadline)) {
		g_autofree gchar *msg = notify_recv(&n, ms_until(deadline));

		if (!msg)
			break;
		g_assert_cmpstr(msg, ==, "WATCHDOG=1");
		pings++;
	}
	g_assert_cmpuint(pings, >=, 3);

	/* The service is down: the wrapper exits 128 + SIGKILL, and pings
	 * no more once it says it is stopping. */
	g_assert_cmpint(kill(s.pid, SIGKILL), ==, 0);
	assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 128 + SIGKILL);
	for (;;) {
		g_autofree gchar *msg = notify_recv(&n, 0);

		if (!msg)
			break;
		if (g_str_has_prefix(msg, "STOPPING=1\n"))
			stopping = TRUE;
		else if (stopping || !g_str_equal(msg, "WATCHDOG=1"))
			fail("unexpected after the haproxy died: %s", msg);
	}
	g_assert_true(stopping);
}

/* ---- 4. without NOTIFY_SOCKET nothing changes ---- */

static void test_no_notify_socket(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *status = NULL;
	GPid gen2;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, NULL);
	wrapper_signal(s.w, SIGUSR2);
	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);
	s.pid = gen2;
	site_reload(&s, "--reload", 3);
	status = site_status(&s, NULL);
	g_assert_nonnull(strstr(status, "reloads 2\n"));
	site_stop(&s);
	g_assert_null(wrapper_find_log(s.w, "sd_notify"));
	g_assert_null(wrapper_find_log(s.w, "<4>"));
}

/*
 * A --hard-reload queued behind a loading reload stays hard when a
 * SIGUSR2 (soft) is queued after it: the reload that follows is -st and
 * the generation before it is stopped, not left draining.
 */
static void test_queued_hard_stays_hard(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Client) hard = { 0 };
	g_autofree gchar *fake_log = NULL;
	g_autofree gchar *log_env = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *soft_stop = NULL;
	g_autofree gchar *loading = NULL;
	const char *exec;
	GPid gen2, gen3;

	n_started = 0;
	site_init_fake(&s, NULL);
	fake_log = g_build_filename(s.dir, "fake.log", NULL);
	log_env = g_strconcat("FAKE_HAPROXY_LOG=", fake_log, NULL);
	{
		const char *env[] = { log_env, NULL };

		site_start(&s, env, NULL);
	}
	/* Generation 2 loads for 2 s: both requests below queue behind it. */
	site_config(&s, "fake-load-delay-ms 2000\n");
	wrapper_signal(s.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(s.w, ": executing ", T_WAIT));
	client_spawn(&hard, s.rundir_opt, "--hard-reload", NULL);
	g_assert_nonnull(wrapper_wait_log(s.w, "a reload is in progress",
					  T_WAIT));
	wrapper_signal(s.w, SIGUSR2);
	/* The signal was pending before this client connected: answered
	 * means the wrapper has read it (one loop iteration earlier). */
	text = site_status(&s, NULL);
	loading = status_line(text, 2);
	g_assert_nonnull(loading);
	site_config(&s, NULL);

	gen2 = wrapper_wait_ready(s.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(t_command_finish(&hard, T_WAIT), ==, CLIENT_OK);
	gen3 = serving_pid_in(hard.out->str, 3);
	exec = wrapper_executing_line(s.w, 3);
	g_assert_nonnull(exec);
	if (!strstr(exec, " -st "))
		fail("the queued --hard-reload ran soft: %s", exec);
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	/* Terminated, not soft-stopped: its SIGUSR1 handler never ran. */
	soft_stop = g_strdup_printf("pid=%d soft-stop", gen2);
	{
		g_autofree gchar *events = NULL;

		g_assert_true(g_file_get_contents(fake_log, &events, NULL,
						  NULL));
		g_assert_null(strstr(events, soft_stop));
	}
	g_assert_cmpint(wait_answering(s.port, gen3), ==, gen3);
	/* Nothing more queued: no fourth generation. */
	g_assert_null(wrapper_executing_line(s.w, 4));
	site_stop(&s);
}

/*
 * The stop signal reaches a generation still draining an idle connection
 * (a second angle beside /real/sigterm-leaves-nothing): without it the
 * drain would outlast the test. Its end is the wrapper's SIGTERM, logged
 * with its wait status, and the stop is clean: exit 0, no SIGKILL.
 */
static void test_stop_reaches_draining(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *finished = NULL;
	const char *line;
	GPid gen1;
	int conn;

	if (!test_begin())
		return;
	site_init(&s, LONG_DRAIN);
	site_start(&s, NULL, "--stop-timeout=120", NULL);
	gen1 = s.pid;
	conn = hold_on(s.port, gen1);
	site_reload(&s, "--reload", 2);
	text = site_status(&s, NULL);
	assert_status_gen(text, 1, gen1, "draining");

	wrapper_signal(s.w, SIGTERM);
	assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 0);
	finished = g_strdup_printf("generation 1 (pid %d) finished: ", gen1);
	line = wrapper_find_log(s.w, finished);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "killed by signal 15"));
	g_assert_false(t_pid_alive(gen1));
	g_assert_null(wrapper_find_log(s.w, "SIGKILL"));
	close(conn);
}

/*
 * A -Ds parent (haproxy < 1.8) exits 0 once its workers are gone, killed
 * or crashed: its serving generation lost that way is a failure for
 * Restart=on-failure (exit 1), and systemd is told the wrapper stops. A
 * second angle beside /fake/crash-ds: the worker killed from outside.
 */
static void test_ds_worker_killed(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready = NULL;
	g_autofree gchar *stopping = NULL;
	const char *lost;
	GPid worker;

	n_started = 0;
	site_init_fake(&s, NULL);
	notify_open(&n, s.dir);
	{
		const char *env[] = { n.env, "FAKE_HAPROXY_VERSION=1.7.0",
				      NULL };
		const char *args[] = { s.rundir_opt, s.haproxy_opt, "-f",
				       s.cfg, NULL };

		s.w = wrapper_start(args, env);
	}
	remember(s.w->pid);
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);
	ready = expect_ready(&n, T_WAIT);
	/* The parent serves nothing itself: its one worker answers. */
	worker = t_wait_serving(s.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(proc_parent(worker), ==, s.pid);
	g_assert_cmpint(kill(worker, SIGKILL), ==, 0);

	assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 1);
	lost = wrapper_find_log(s.w, "the one serving, ");
	g_assert_nonnull(lost);
	g_assert_nonnull(wrapper_find_log(s.w, "exit, haproxy RC=1"));
	stopping = notify_recv(&n, T_WAIT);
	g_assert_nonnull(stopping);
	assert_fields(stopping, "STOPPING=1", "STATUS=", NULL);
}

/*
 * A wrapper started while a master-worker haproxy started by hand still
 * sets itself up (a 2.5+ master re-executes itself after its load:
 * SIGUSR1 keeps its default action until the new image has set it up;
 * t/fake-haproxy, named haproxy, for 5 s here, its worker already
 * serving). The takeover waits until it handles SIGUSR1: the first
 * generation's -sf then soft-stops it (exit 0 through its handler), where
 * an early one would kill it. The first generation is the fake too, ready
 * at once: no start-up of the wrapper outlasts the window.
 */
static void test_takeover_waits_for_handler(void)
{
	g_auto(Site) s = { 0 };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *fake = NULL, *bin = NULL, *haproxy = NULL;
	g_autofree gchar *fake_log = NULL, *log_env = NULL;
	g_autofree gchar *events = NULL, *stopped = NULL, *taking = NULL;
	g_auto(GStrv) env = NULL;
	const char *argv[] = { NULL, "-W", "-p", NULL, "-f", NULL, NULL };
	GPid master;
	int status;

	n_started = 0;
	site_init_fake(&s, "fake-master-late-usr1-ms 5000\n");
	fake = g_build_filename(t_dir(), "fake-haproxy", NULL);
	bin = g_build_filename(s.dir, "bin", NULL);
	haproxy = g_build_filename(bin, "haproxy", NULL);
	g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
	{
		const char *cp[] = { "cp", fake, haproxy, NULL };
		int cp_status;

		g_assert_true(g_spawn_sync(NULL, (char **)cp, NULL,
					   G_SPAWN_SEARCH_PATH, NULL, NULL,
					   NULL, NULL, &cp_status, &error));
		g_assert_true(g_spawn_check_wait_status(cp_status, &error));
	}
	fake_log = g_build_filename(s.dir, "fake.log", NULL);
	log_env = g_strconcat("FAKE_HAPROXY_LOG=", fake_log, NULL);
	env = g_environ_setenv(g_get_environ(), "FAKE_HAPROXY_LOG", fake_log,
			       TRUE);
	argv[0] = haproxy;
	argv[3] = s.pidfile;
	argv[5] = s.cfg;
	g_assert_true(g_spawn_async(NULL, (char **)argv, env,
				    G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
				    &master, &error));
	t_remember(master, "/haproxy");
	/* Serving through its worker, not settled yet: the wrapper starts. */
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), !=, master);
	g_free(t_wait_file_line(fake_log, "master: SIGUSR1 not handled", NULL,
				1, T_WAIT));
	g_assert_null(t_wait_file_line(fake_log, "master handles SIGUSR1",
				       NULL, 1, 0));
	{
		const char *wenv[] = { log_env, NULL };
		const char *args[] = { s.rundir_opt, s.haproxy_opt, "-f",
				       s.cfg, "-p", s.pidfile, NULL };

		s.w = wrapper_start(args, wenv);
	}
	remember(s.w->pid);
	taking = g_strdup_printf("taking over master-worker master pid %d ",
				 master);
	g_assert_nonnull(wrapper_wait_log(s.w, taking, T_WAIT));
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);

	status = t_wait_child(master, T_WAIT);
	g_assert_true(g_file_get_contents(fake_log, &events, NULL, NULL));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		g_error("the foreign master ended with status 0x%x:\n%s",
			status, events);
	stopped = g_strdup_printf("pid=%d master stop USR1", master);
	g_assert_nonnull(strstr(events, stopped));
	g_assert_null(wrapper_find_log(s.w, "does not handle SIGUSR1 yet"));
	g_assert_cmpint(wait_answering(s.port, s.pid), ==, s.pid);
	site_stop(&s);
	t_end_all_started();
}

/* ---- 5. --reload and --hard-reload are synchronous ---- */

static void test_sync_reload(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	const char *exec;
	GPid gen1, gen2;
	int conn;

	if (!test_begin())
		return;
	site_init(&s, LONG_DRAIN);
	site_start(&s, NULL, NULL);
	gen1 = s.pid;

	/* Returns 0 once generation 2 serves: the next request is its. */
	gen2 = site_reload_strict(&s, "--reload", 2);
	g_assert_cmpint(gen2, !=, gen1);

	/* A bad configuration: 1, the failure on stderr, gen 2 serving. */
	site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(run_client(s.rundir_opt, "--reload", NULL, &out, &err),
			==, CLIENT_FAILED);
	g_assert_nonnull(strstr(err, "error: generation 3 (pid "));
	g_assert_nonnull(strstr(err, "exited with status 1 before it was "
				     "ready"));
	g_assert_null(strstr(out, "ok"));
	g_assert_cmpint(t_http_pid(s.port), ==, gen2);
	g_assert_true(t_pid_alive(gen2));
	t_assert_pidfile_holds(s.pidfile, gen2);

	/* -st: the old generation stops at once, even with a connection
	 * it would otherwise drain for 120 s. */
	site_config(&s, LONG_DRAIN);
	conn = hold_on(s.port, gen2);
	site_reload(&s, "--hard-reload", 4);
	exec = wrapper_executing_line(s.w, 4);
	g_assert_nonnull(exec);
	g_assert_nonnull(strstr(exec, " -st "));
	g_assert_true(t_wait_gone(gen2, T_WAIT));
	g_assert_nonnull(wrapper_find_log(s.w, "hard-reloading on request."));
	close(conn);
	site_stop(&s);
}

/* ---- 6. status, text and JSON ---- */

static void assert_json_status(Site *s, GPid draining)
{
	g_autofree gchar *out = site_status(s, "--json");
	g_autofree gchar *pid = g_strdup_printf("\"pid\":%d,", draining);
	g_auto(GStrv) lines = answer_lines(out);

	g_assert_cmpuint(g_strv_length(lines), ==, 2);
	g_assert_true(g_str_has_prefix(lines[0], "{"));
	if (!json_valid(lines[0]))
		fail("not JSON: %s", lines[0]);
	g_assert_nonnull(strstr(lines[0], "\"generations\":["));
	g_assert_nonnull(strstr(lines[0], pid));
	g_assert_nonnull(strstr(lines[0], "\"state\":\"draining\""));
	g_assert_cmpstr(lines[1], ==, "ok");
}

static void test_status(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *failed = NULL;
	g_autofree gchar *json = NULL;
	g_autofree gchar *wrapper = NULL;
	g_autofree gchar *err = NULL;
	GPid gen1, gen2, gen3;
	int conn;

	if (!test_begin())
		return;
	site_init(&s, LONG_DRAIN);
	site_start(&s, NULL, NULL);
	gen1 = s.pid;
	conn = hold_on(s.port, gen1);
	gen2 = site_reload(&s, "--reload", 2);
	g_assert_true(t_pid_alive(gen1));

	text = site_status(&s, NULL);
	wrapper = g_strdup_printf("wrapper pid %d ", s.w->pid);
	g_assert_true(g_str_has_prefix(text, wrapper));
	g_assert_nonnull(strstr(text, "\nreloads 1\n"));
	g_assert_nonnull(strstr(text, "\nlast reload: ok in "));
	assert_status_gen(text, 2, gen2, "current");
	assert_status_gen(text, 1, gen1, "draining");
	g_assert_true(g_str_has_suffix(g_strchomp(text), "\nok"));
	assert_json_status(&s, gen1);

	/* A failed reload leaves a "failed" entry behind. */
	site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(run_client(s.rundir_opt, "--reload", NULL, NULL, &err),
			==, CLIENT_FAILED);
	gen3 = t_pid_in(err, "error: generation 3 (pid ");
	g_assert_cmpint(gen3, >, 0);
	failed = site_status(&s, NULL);
	g_assert_nonnull(strstr(failed, "\nreloads 1\n"));
	g_assert_nonnull(strstr(failed, "\nlast reload: failed in "));
	assert_status_gen(failed, 2, gen2, "current");
	assert_status_gen(failed, 1, gen1, "draining");
	assert_status_gen(failed, 3, gen3, "failed");
	{
		g_autofree gchar *line = status_line(failed, 3);

		g_assert_nonnull(strstr(line, " failed: exited with status 1"));
	}
	json = site_status(&s, "--json");
	g_assert_nonnull(strstr(json, "\"state\":\"failed\""));
	g_assert_nonnull(strstr(json, "\"result\":\"failed\""));
	close(conn);
	site_stop(&s);
}

/* ---- 6b. metrics, OpenMetrics through a real parser ---- */

static void test_metrics(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *text = NULL;
	g_autofree gchar *parsed = NULL;
	g_autofree gchar *raw = NULL;
	GPid gen1;
	int conn, fd;

	if (!test_begin())
		return;
	site_init(&s, LONG_DRAIN);
	site_start(&s, NULL, NULL);
	gen1 = s.pid;
	conn = hold_on(s.port, gen1);
	site_reload(&s, "--reload", 2);
	site_config(&s, LONG_DRAIN BROKEN);
	g_assert_cmpint(run_client(s.rundir_opt, "--reload", NULL, NULL, NULL),
			==, CLIENT_FAILED);

	text = site_status(&s, "--format=openmetrics");
	g_assert_true(g_str_has_suffix(text, "# EOF\n"));
	parsed = t_openmetrics_parsed(text);
	if (!parsed) {
		g_test_skip("no python3-prometheus-client to parse OpenMetrics");
		close(conn);
		site_stop(&s);
		return;
	}
	t_assert_sample(parsed, "haproxy_wrapper_reloads_total{result=\"ok\"} 1");
	t_assert_sample(parsed,
		      "haproxy_wrapper_reloads_total{result=\"failed\"} 1");
	t_assert_sample(parsed, "haproxy_wrapper_last_reload_success{} 0");
	t_assert_sample(parsed,
		      "haproxy_wrapper_generations{state=\"current\"} 1");
	t_assert_sample(parsed,
		      "haproxy_wrapper_generations{state=\"draining\"} 1");
	t_assert_sample(parsed,
		      "haproxy_wrapper_generations{state=\"failed\"} 1");
	t_assert_sample(parsed, "haproxy_wrapper_draining_processes{} 1");
	t_assert_sample(parsed, "haproxy_wrapper_takeovers_total{} 0");
	g_assert_cmpfloat(t_sample_value(parsed, "haproxy_wrapper_last_reload_"
				       "duration_seconds"), >, 0);
	g_assert_cmpfloat(t_sample_value(parsed, "haproxy_wrapper_last_reload_"
				       "timestamp_seconds"), >, 1.7e9);

	/* The same from the control socket, its verdict after "# EOF". */
	fd = ctl_connect(s.rundir);
	ctl_send(fd, "status openmetrics\n", 19);
	raw = ctl_read(fd, T_WAIT);
	close(fd);
	g_assert_nonnull(raw);
	g_assert_true(g_str_has_prefix(raw, "# TYPE haproxy_wrapper_reloads "
					    "counter\n"));
	g_assert_nonnull(strstr(raw, "\n# EOF\nok"));
	close(conn);
	site_stop(&s);
}

/* ---- 7. concurrent reload requests coalesce ---- */

/* Is pid blocked reading a socket: a client that sent its line and waits
 * for the answer? */
static gboolean waits_on_socket(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/syscall", pid);
	g_autofree gchar *text = NULL;
	g_autofree gchar *fd_path = NULL;
	g_autofree gchar *link = NULL;
	unsigned long fd;
	long nr;

	if (!g_file_get_contents(path, &text, NULL, NULL) ||
	    sscanf(text, "%ld 0x%lx", &nr, &fd) != 2 || nr != SYS_read)
		return FALSE;
	fd_path = g_strdup_printf("/proc/%d/fd/%lu", pid, fd);
	link = g_file_read_link(fd_path, NULL);
	return link && g_str_has_prefix(link, "socket:");
}

/* A client waiting for an answer that never comes is an ordinary
 * command: SIGTERM (timeout(1), Ctrl-C's SIGINT alike) ends it. */
static void test_client_stops_on_sigterm(void)
{
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *run = t_runtime_dir(dir);
	g_autofree gchar *opt = g_strdup_printf("--runtime-dir=%s", run);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	g_auto(Client) c = { 0 };
	gint64 deadline = deadline_in(T_WAIT);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int status;

	/* A listener that never accepts: the client's connect succeeds (the
	 * backlog), its request is sent, and its read waits. */
	g_snprintf(a.sun_path, sizeof(a.sun_path), "%s/control.sock", run);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(listen(fd, 4), ==, 0);
	client_spawn(&c, opt, "--reload", NULL);
	while (!waits_on_socket(c.pid) && ms_until(deadline))
		g_usleep(10 * 1000);
	g_assert_true(waits_on_socket(c.pid));
	g_assert_cmpint(kill(c.pid, SIGTERM), ==, 0);
	status = t_wait_child(c.pid, T_WAIT);
	g_assert_true(WIFSIGNALED(status));
	g_assert_cmpint(WTERMSIG(status), ==, SIGTERM);
	close(c.out_fd);
	close(c.err_fd);
	close(fd);
	t_rmtree(dir);
}

static void test_concurrent_reload_clients(void)
{
	g_auto(Site) s = { 0 };
	Client c[5];
	guint executing, last = 0;
	gint64 deadline;
	gboolean all;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, NULL);

	/*
	 * All five requests are queued while the wrapper is frozen: however
	 * slowly the clients start, they are there together when it goes on.
	 */
	g_assert_cmpint(kill(s.w->pid, SIGSTOP), ==, 0);
	for (guint i = 0; i < G_N_ELEMENTS(c); i++)
		client_spawn(&c[i], s.rundir_opt, "--reload", NULL);
	deadline = deadline_in(T_WAIT);
	do {
		all = TRUE;
		for (guint i = 0; i < G_N_ELEMENTS(c) && all; i++)
			all = waits_on_socket(c[i].pid);
		if (!all)
			g_usleep(10 * 1000);
	} while (!all && ms_until(deadline));
	g_assert_cmpint(kill(s.w->pid, SIGCONT), ==, 0);
	g_assert_true(all);

	for (guint i = 0; i < G_N_ELEMENTS(c); i++) {
		guint gen;

		g_assert_cmpint(t_command_finish(&c[i], T_WAIT), ==, CLIENT_OK);
		serving_pid_in(c[i].out->str, 0);
		gen = t_pid_in(strstr(c[i].out->str, "ok generation "),
			       "ok generation ");
		g_assert_cmpuint(gen, >=, 2);
		last = MAX(last, gen);
		t_command_clear(&c[i]);
	}
	/* One reload for the first request, one more for all the others
	 * (they came while it was in progress). */
	executing = wrapper_count_log(s.w, ": executing ");
	g_test_message("5 concurrent --reload made %u reload(s)",
		       executing - 1);
	g_assert_cmpuint(executing, >=, 2);
	g_assert_cmpuint(executing, <=, 3);
	g_assert_cmpuint(last, ==, executing);
	g_assert_null(wrapper_find_log(s.w, "reload failed"));
	assert_running(&s);
	site_stop(&s);
}

/* ---- 8. the control socket: permissions, bad input, many clients ---- */

static void assert_mode(const char *path, mode_t type, mode_t mode)
{
	struct stat st;

	g_assert_cmpint(lstat(path, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & S_IFMT, ==, type);
	g_assert_cmpuint(st.st_mode & 07777, ==, mode);
}

static void assert_answer(const char *rundir, const void *data, gsize len,
			  const char *prefix)
{
	g_autofree gchar *answer = ctl_ask(rundir, data, len);

	g_assert_nonnull(answer);
	if (!g_str_has_prefix(answer, prefix))
		fail("answer \"%s\", not %s...", answer, prefix);
	g_assert_true(g_str_has_suffix(answer, "\n"));
}

static void assert_status_of(Site *s, GPid wrapper)
{
	g_autofree gchar *text = site_status(s, NULL);
	g_autofree gchar *head = g_strdup_printf("wrapper pid %d ", wrapper);

	g_assert_true(g_str_has_prefix(text, head));
}

/* A command in two pieces, the second after the wrapper saw the first. */
static void split_command(Site *s)
{
	g_autofree gchar *answer = NULL;
	g_autofree gchar *head = g_strdup_printf("wrapper pid %d ", s->w->pid);
	int fd = ctl_connect(s->rundir);

	ctl_send(fd, "sta", 3);
	/* Another client's round trip: the wrapper has been through its
	 * loop since, and still waits for the rest of the line. */
	assert_status_of(s, s->w->pid);
	ctl_send(fd, "tus\n", 4);
	answer = ctl_read(fd, T_WAIT);
	close(fd);
	g_assert_nonnull(answer);
	g_assert_true(g_str_has_prefix(answer, head));
	g_assert_true(g_str_has_suffix(answer, "\nok\n"));
}

/* Many connections at once: some are turned away, none blocks it. */
static void flood(Site *s)
{
	guint baseline = t_count_fds(s->w->pid);
	gint64 deadline = deadline_in(T_WAIT);
	int fds[100];
	guint rejected = 0, answered = 0;

	for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
		fds[i] = ctl_connect(s->rundir);
	/* Those beyond its limit are answered at once; the others wait for
	 * a command. Wait for the first "too many". */
	while (!rejected && ms_until(deadline)) {
		struct pollfd p[G_N_ELEMENTS(fds)];

		for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
			p[i] = (struct pollfd){ .fd = fds[i],
						.events = POLLIN };
		if (poll(p, G_N_ELEMENTS(fds), ms_until(deadline)) <= 0)
			continue;
		for (guint i = 0; i < G_N_ELEMENTS(fds); i++) {
			g_autofree gchar *answer = NULL;

			if (fds[i] < 0 || !p[i].revents)
				continue;
			answer = ctl_read(fds[i], T_WAIT);
			close(fds[i]);
			fds[i] = -1;
			answered++;
			g_assert_nonnull(answer);
			if (g_str_equal(answer, "error: too many clients\n"))
				rejected++;
		}
	}
	/* Those within the limit wait for a command: only refusals came. */
	g_assert_cmpuint(rejected, >=, 1);
	g_assert_cmpuint(answered, ==, rejected);
	for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* Once it has dropped them all, it serves a new client. */
	while (t_count_fds(s->w->pid) > baseline && ms_until(deadline))
		g_usleep(10 * 1000);
	g_assert_cmpuint(t_count_fds(s->w->pid), <=, baseline);
	assert_running(s);
	assert_status_of(s, s->w->pid);
}

/* A second wrapper on the same runtime directory takes nothing over. */
static void second_wrapper(Site *s)
{
	g_auto(Site) two = { 0 };
	const char *exec;

	site_init(&two, NULL);
	g_free(two.rundir_opt);
	two.rundir_opt = g_strdup(s->rundir_opt);
	site_start(&two, NULL, NULL);
	g_assert_nonnull(wrapper_find_log(two.w, "in use by another wrapper"));
	/* Not the first one's listeners socket either. */
	exec = wrapper_executing_line(two.w, 1);
	g_assert_nonnull(exec);
	g_assert_null(strstr(exec, " -x "));
	g_assert_null(strstr(exec, "listeners.cfg"));
	assert_status_of(s, s->w->pid);
	/* Its exit leaves the first one's socket alone. */
	site_stop(&two);
	assert_status_of(s, s->w->pid);
	g_assert_cmpint(t_http_pid(s->port), ==, s->pid);
}

static void test_control_socket(void)
{
	static const char nul[] = "sta\0tus\n";
	g_auto(Site) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *huge = NULL;
	g_autofree gchar *late = NULL;
	struct pollfd p;
	int silent;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, NULL);
	sock = g_build_filename(s.rundir, "control.sock", NULL);
	assert_mode(sock, S_IFSOCK, 0600);
	assert_mode(s.rundir, S_IFDIR, 0700);

	assert_answer(s.rundir, "hello\n", 6, "error: unknown command");
	huge = g_strnfill(10 * 1024, 'x');
	huge[10 * 1024 - 1] = '\n';
	assert_answer(s.rundir, huge, 10 * 1024, "error: line too long");
	assert_answer(s.rundir, nul, sizeof(nul) - 1, "error: binary data");
	split_command(&s);

	/* A client that says nothing blocks nobody, and is dropped. */
	silent = ctl_connect(s.rundir);
	assert_status_of(&s, s.w->pid);
	p = (struct pollfd){ .fd = silent, .events = POLLIN };
	g_assert_cmpint(poll(&p, 1, 0), ==, 0);
	late = ctl_read(silent, 15000);
	close(silent);
	g_assert_cmpstr(late, ==, "error: no command received in time\n");

	flood(&s);
	second_wrapper(&s);
	assert_running(&s);
	site_stop(&s);
}

/* ---- the control socket's peer check ---- */

#define NOBODY 65534
#define SETPRIV "/usr/bin/setpriv"

/* argv run as uid (setpriv: setgroups, setgid, setuid, then exec). */
static int run_as(uid_t uid, const char *const *argv, gchar **out,
		  gchar **err)
{
	g_autofree gchar *reuid = g_strdup_printf("--reuid=%u", uid);
	g_autofree gchar *regid = g_strdup_printf("--regid=%u", uid);
	g_autoptr(GPtrArray) all = g_ptr_array_new();

	g_ptr_array_add(all, (gpointer)SETPRIV);
	g_ptr_array_add(all, reuid);
	g_ptr_array_add(all, regid);
	g_ptr_array_add(all, (gpointer)"--clear-groups");
	for (; *argv; argv++)
		g_ptr_array_add(all, (gpointer)*argv);
	g_ptr_array_add(all, NULL);
	return t_run_command((const char *const *)all->pdata, T_WAIT, out,
			     err);
}

static int run_client_as(uid_t uid, const char *rundir_opt,
			 const char *command, gchar **out, gchar **err)
{
	const char *argv[] = { t_wrapper_path(), command, rundir_opt, NULL };

	return run_as(uid, argv, out, err);
}

/*
 * A client of another uid (neither root nor the wrapper's) is refused,
 * even where the file modes let it connect (loosened here by hand, as an
 * operator might): no status, and above all no reload.
 */
static void test_control_peer_other_uid(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autofree gchar *status = NULL;

	n_started = 0;
	if (!g_file_test(SETPRIV, G_FILE_TEST_IS_EXECUTABLE) || getuid()) {
		g_test_skip("needs root and " SETPRIV);
		return;
	}
	site_init_fake(&s, NULL);
	site_start(&s, NULL, NULL);
	sock = g_build_filename(s.rundir, "control.sock", NULL);
	/* The socket's path open to everyone: only the peer check is left. */
	g_assert_cmpint(chmod(s.dir, 0755), ==, 0);
	g_assert_cmpint(chmod(t_short_dir(s.dir), 0755), ==, 0);
	g_assert_cmpint(chmod(s.rundir, 0755), ==, 0);
	g_assert_cmpint(chmod(sock, 0666), ==, 0);

	g_assert_cmpint(run_client_as(NOBODY, s.rundir_opt, "--reload", &out,
				      &err), ==, CLIENT_FAILED);
	if (!strstr(err, "error: permission denied"))
		fail("uid %d's --reload: out \"%s\" err \"%s\"", NOBODY, out,
		     err);
	g_assert_null(strstr(out, "ok"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	g_assert_cmpint(run_client_as(NOBODY, s.rundir_opt, "--status", &out,
				      &err), ==, CLIENT_FAILED);
	g_assert_nonnull(strstr(err, "error: permission denied"));
	g_assert_null(strstr(out, "generation"));

	/* Nothing reloaded: root's status says so, the log too. */
	status = site_status(&s, NULL);
	g_assert_nonnull(strstr(status, "reloads 0\n"));
	g_assert_null(status_line(status, 2));
	g_assert_null(wrapper_find_log(s.w, "reloading"));
	g_assert_null(wrapper_executing_line(s.w, 2));
	g_assert_cmpint(t_http_pid(s.port), ==, s.pid);
	site_stop(&s);
}

/*
 * A wrapper run as a user (not root) answers that same user. (Another
 * non-root user's client refuses that runtime directory by itself.)
 */
static void test_control_peer_same_uid(void)
{
	g_auto(Site) s = { 0 };
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	g_autofree gchar *reuid = g_strdup_printf("--reuid=%u", NOBODY);
	g_autofree gchar *regid = g_strdup_printf("--regid=%u", NOBODY);
	const char *prefix[] = { SETPRIV, reuid, regid, "--clear-groups",
				 NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	GPid gen2;

	n_started = 0;
	if (!g_file_test(SETPRIV, G_FILE_TEST_IS_EXECUTABLE) || getuid()) {
		g_test_skip("needs root and " SETPRIV);
		return;
	}
	/* t/fake-haproxy on a port above 1024: no privilege needed. */
	site_init_fake(&s, NULL);
	g_assert_cmpint(chown(s.dir, NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(chown(t_short_dir(s.dir), NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(chown(s.rundir, NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(chown(s.cfg, NOBODY, NOBODY), ==, 0);
	g_ptr_array_add(args, s.rundir_opt);
	g_ptr_array_add(args, s.haproxy_opt);
	g_ptr_array_add(args, (gpointer)"-f");
	g_ptr_array_add(args, s.cfg);
	g_ptr_array_add(args, (gpointer)"-p");
	g_ptr_array_add(args, s.pidfile);
	g_ptr_array_add(args, NULL);
	s.w = wrapper_start_prefixed(prefix,
				     (const char *const *)args->pdata, NULL);
	remember(s.w->pid);
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, s.pid);
	assert_mode(s.rundir, S_IFDIR, 0700);

	/* Its own uid: a real reload. */
	g_assert_cmpint(run_client_as(NOBODY, s.rundir_opt, "--reload", &out,
				      &err), ==, CLIENT_OK);
	gen2 = serving_pid_in(out, 2);
	g_assert_cmpint(gen2, !=, s.pid);
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);
	s.pid = gen2;
	site_stop(&s);
}

/* ---- 9. --max-old-workers ---- */

static void test_max_old_workers(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *want = NULL;
	g_autofree gchar *text = NULL;
	GPid gen1, gen2, gen3;
	int conn1, conn2;

	if (!test_begin())
		return;
	site_init(&s, LONG_DRAIN);
	site_start(&s, NULL, "--max-old-workers=1", NULL);
	gen1 = s.pid;
	conn1 = hold_on(s.port, gen1);
	gen2 = site_reload(&s, "--reload", 2);
	/* One draining: within the bound. */
	g_assert_true(t_pid_alive(gen1));
	g_assert_null(wrapper_find_log(s.w, "old generation(s) draining"));

	conn2 = hold_on(s.port, gen2);
	gen3 = site_reload(&s, "--reload", 3);
	/* Two: the oldest goes, the other drains on. */
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	want = g_strdup_printf("more than 1 old generation(s) draining: "
			       "SIGTERM to generation 1 (pid %d)", gen1);
	g_assert_nonnull(wrapper_wait_log(s.w, want, T_WAIT));
	g_assert_true(t_pid_alive(gen2));
	g_assert_cmpuint(wrapper_count_log(s.w, "old generation(s) draining"),
			 ==, 1);
	text = site_status(&s, NULL);
	assert_status_gen(text, 3, gen3, "current");
	assert_status_gen(text, 2, gen2, "draining");
	g_assert_null(status_line(text, 1));
	close(conn1);
	close(conn2);
	site_stop(&s);
}

/* ---- 10. --drain-timeout ---- */

static void test_drain_timeout(void)
{
	g_auto(Site) bounded = { 0 };
	g_auto(Site) unbounded = { 0 };
	g_autofree gchar *want = NULL;
	GPid b1, u1;
	int bconn, uconn;

	if (!test_begin())
		return;
	site_init(&bounded, LONG_DRAIN);
	site_init(&unbounded, LONG_DRAIN);
	site_start(&bounded, NULL, "--drain-timeout=1", NULL);
	site_start(&unbounded, NULL, NULL);
	b1 = bounded.pid;
	u1 = unbounded.pid;
	bconn = hold_on(bounded.port, b1);
	uconn = hold_on(unbounded.port, u1);

	/* The control case first: its old generation drains from before
	 * the bounded one's reload, so longer than its deadline. */
	site_reload(&unbounded, "--reload", 2);
	g_assert_true(t_pid_alive(u1));
	site_reload(&bounded, "--reload", 2);
	want = g_strdup_printf("generation 1 (pid %d) still draining after "
			       "its deadline", b1);
	g_assert_nonnull(wrapper_wait_log(bounded.w, want, T_WAIT));
	g_assert_true(t_wait_gone(b1, T_WAIT));

	/* Past the bounded one's deadline: the control case still drains. */
	g_assert_true(t_pid_alive(u1));
	g_assert_null(wrapper_find_log(unbounded.w, "still draining"));
	close(bconn);
	close(uconn);
	site_stop(&bounded);
	site_stop(&unbounded);
}

/* ---- 11. seamless reloads (-x) ---- */

/*
 * Load clients: each opens a new connection a request, in a tight loop,
 * while a reload is under way. Several at once keep the accept queue
 * busy: with one sequential client a reload without -x hardly ever drops
 * a connection, with eight it does.
 */
#define LOADERS 8
/* Only a safety bound: the load runs around each reload, then pauses. */
#define LOAD_MAX 2000000

struct load {
	guint16 port;
	GMutex lock;
	GCond changed;
	gboolean running;
	gboolean stop;
	guint requests;
	guint failures;
	gchar *first_failure;
};

static gpointer load_run(gpointer data)
{
	struct load *l = data;

	g_mutex_lock(&l->lock);
	for (;;) {
		gchar *why;

		/* main() always sets stop in the end: not an endless wait. */
		while (!l->running && !l->stop)
			g_cond_wait(&l->changed, &l->lock);
		if (l->stop || l->requests >= LOAD_MAX)
			break;
		g_mutex_unlock(&l->lock);
		why = t_request_once(l->port);
		g_mutex_lock(&l->lock);
		if (why && !l->failures++)
			l->first_failure = g_strdup_printf(
				"request %u: %s", l->requests, why);
		l->requests++;
		g_cond_broadcast(&l->changed);
		g_free(why);
	}
	g_mutex_unlock(&l->lock);
	return NULL;
}

static void load_set(struct load *l, gboolean running, gboolean stop)
{
	g_mutex_lock(&l->lock);
	l->running = running;
	l->stop = stop;
	g_cond_broadcast(&l->changed);
	g_mutex_unlock(&l->lock);
}

/* Wait for n more requests (bounded); how many there are in all. */
static guint load_more(struct load *l, guint n)
{
	gint64 deadline = deadline_in(T_WAIT);
	guint want, got;

	g_mutex_lock(&l->lock);
	want = l->requests + n;
	while (l->requests < want && l->requests < LOAD_MAX &&
	       g_cond_wait_until(&l->changed, &l->lock, deadline))
		;
	got = l->requests;
	g_mutex_unlock(&l->lock);
	g_assert_cmpuint(got, >=, want);
	return got;
}

static void assert_seamless_args(Wrapper *w, const char *rundir, guint n,
				 gboolean on)
{
	g_autofree gchar *cfg = g_strdup_printf(" -f %s/listeners.cfg ",
						rundir);
	g_autofree gchar *x = g_strdup_printf(" -x %s/listeners.sock ", rundir);
	const char *line = wrapper_executing_line(w, n);

	g_assert_nonnull(line);
	if (!on) {
		g_assert_null(strstr(line, "listeners.cfg"));
		g_assert_null(strstr(line, " -x "));
		return;
	}
	g_assert_nonnull(strstr(line, cfg));
	/* The first generation has nobody to take sockets from. */
	if (n == 1)
		g_assert_null(strstr(line, " -x "));
	else
		g_assert_nonnull(strstr(line, x));
}

/*
 * A reload under load; how the first request after it was answered. The
 * wrapper answers once the new generation has bound its sockets; the old
 * one takes the -sf soft stop at the same moment, and may still accept a
 * connection or two until it has acted on it (the socket is shared).
 */
static gboolean reload_under_load(Site *s, struct load *l, guint number)
{
	GPid first;

	load_set(l, TRUE, FALSE);
	load_more(l, 100);
	reload_client(s, "--reload", number);
	first = t_http_pid(s->port);
	/* And on, across the old generation's soft stop. */
	load_more(l, 100);
	load_set(l, FALSE, FALSE);
	if (first != s->pid)
		g_test_message("generation %u: the first request after the "
			       "reload was answered by pid %d, not %d", number,
			       first, s->pid);
	return first == s->pid;
}

/*
 * The race behind the above, made certain: a fake haproxy that takes
 * 100 ms (under the wrapper's 200 ms bound) to close the listeners it
 * shares with its successor (-x) after the soft stop. The --reload client
 * is answered only once the old generation has let go of them.
 */
static void test_verdict_after_release(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *fake_log = NULL;
	g_autofree gchar *log_env = NULL;
	GPid old;

	n_started = 0;
	site_init_fake(&s, "fake-expose-listeners\nfake-slow-release-ms 100\n");
	fake_log = g_build_filename(s.dir, "fake.log", NULL);
	log_env = g_strconcat("FAKE_HAPROXY_LOG=", fake_log, NULL);
	{
		const char *env[] = { log_env, NULL };

		site_start(&s, env, NULL);
	}
	for (guint n = 2; n <= 4; n++) {
		g_autofree gchar *events = NULL;
		g_autofree gchar *released = NULL;
		g_autofree gchar *took = NULL;
		const char *exec;

		old = s.pid;
		reload_client(&s, "--reload", n);
		g_assert_true(g_file_get_contents(fake_log, &events, NULL,
						  NULL));
		/* The new generation really took the old one's sockets. */
		exec = wrapper_executing_line(s.w, n);
		g_assert_nonnull(exec);
		g_assert_nonnull(strstr(exec, " -x "));
		took = g_strdup_printf("pid=%d took 1 listener(s)", s.pid);
		g_assert_nonnull(strstr(events, took));
		released = g_strdup_printf("pid=%d soft-stop", old);
		if (!strstr(events, released))
			fail("--reload answered before generation %u (pid %d) "
			     "released its listeners:\n%s", n - 1, old, events);
		g_assert_cmpint(t_http_pid(s.port), ==, s.pid);
		g_assert_true(t_wait_gone(old, T_WAIT));
	}
	g_assert_null(wrapper_find_log(s.w, "still holds its listeners"));
	site_stop(&s);
}

static void test_seamless(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Site) off = { 0 };
	struct load l = { 0 };
	GThread *threads[LOADERS];
	guint early = 0;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, NULL);
	assert_seamless_args(s.w, s.rundir, 1, TRUE);

	l.port = s.port;
	g_mutex_init(&l.lock);
	g_cond_init(&l.changed);
	for (guint i = 0; i < LOADERS; i++)
		threads[i] = g_thread_new("load", load_run, &l);
	for (guint i = 0; i < 20; i++)
		early += !reload_under_load(&s, &l, i + 2);
	load_set(&l, FALSE, TRUE);
	for (guint i = 0; i < LOADERS; i++)
		g_thread_join(threads[i]);
	g_test_message("%u requests over 20 reloads, %u failed%s%s; %u "
		       "first request(s) answered by the old generation",
		       l.requests, l.failures, l.failures ? ": first " : "",
		       l.failures ? l.first_failure : "", early);
	g_assert_cmpuint(l.requests, <, LOAD_MAX);
	g_assert_cmpuint(l.failures, ==, 0);
	/* The verdict waits for the old generation to let go of the
	 * shared sockets: none of it may answer after the client returned. */
	g_assert_cmpuint(early, ==, 0);
	g_mutex_clear(&l.lock);
	g_cond_clear(&l.changed);
	g_free(l.first_failure);
	for (guint i = 2; i <= 21; i++)
		assert_seamless_args(s.w, s.rundir, i, TRUE);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, s.pid);
	site_stop(&s);

	/* Off: the user's arguments only. */
	site_init(&off, NULL);
	site_start(&off, NULL, "--seamless-reload=off", NULL);
	site_reload(&off, "--reload", 2);
	assert_seamless_args(off.w, off.rundir, 1, FALSE);
	assert_seamless_args(off.w, off.rundir, 2, FALSE);
	site_stop(&off);
}

/*
 * An adopted haproxy (a restart by hand) runs: the hand-off is refused
 * and the self-upgrade postponed, both said in the log and to the
 * client; the reload that takes it over answers ok, and the next one
 * upgrades.
 */
static void test_upgrade_postponed_adopted(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *oldarg = NULL, *out = NULL, *err = NULL;
	g_autofree gchar *out2 = NULL;
	const char *line;
	GPid pid, gen2;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, "--self-upgrade=always", NULL);
	oldarg = g_strdup_printf("%d", s.pid);
	{
		const char *argv[] = { HAPROXY, "-D", "-p", s.pidfile, "-f",
				       s.cfg, "-sf", oldarg, NULL };

		t_launch_daemon(s.dir, argv);
	}
	line = wrapper_wait_log(s.w, "adopting standalone pid ", T_WAIT);
	g_assert_nonnull(line);
	pid = t_pid_in(line, "pid ");
	t_remember(pid, HAPROXY);

	g_assert_cmpint(run_client(s.rundir_opt, "--handoff", NULL, NULL,
				   &err), !=, 0);
	g_assert_nonnull(strstr(err, "adopted after a restart by hand"));
	line = wrapper_find_log(s.w, "hand-off refused: a haproxy adopted");
	g_assert_nonnull(line);
	g_assert_true(g_str_has_prefix(line, "<5>"));

	g_assert_cmpint(run_client(s.rundir_opt, "--reload", NULL, &out,
				   NULL), ==, 0);
	gen2 = serving_pid_in(out, 2);
	g_assert_nonnull(strstr(out, "wrapper upgrade postponed"));
	line = wrapper_find_log(s.w, "not upgrading the wrapper on this "
				"reload: a haproxy adopted");
	g_assert_nonnull(line);
	g_assert_true(g_str_has_prefix(line, "<5>"));
	g_assert_null(wrapper_find_log(s.w, "re-executing on "));
	g_assert_true(t_wait_gone(pid, T_WAIT));
	g_assert_cmpint(wait_answering(s.port, gen2), ==, gen2);

	g_assert_cmpint(run_client(s.rundir_opt, "--reload", NULL, &out2,
				   NULL), ==, 0);
	serving_pid_in(out2, 3);
	g_assert_null(strstr(out2, "postponed"));
	g_assert_nonnull(wrapper_find_log(s.w, "re-executing on "));
	site_stop(&s);
	t_end_all_started();
}

/* ---- 12. a waiting client survives the wrapper's own re-exec ---- */

static void test_waiter_across_upgrade(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Notify) n = { 0 };
	g_autofree gchar *ready = NULL;
	const char *reexec;
	guint reloading = 0;
	GPid wpid;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	notify_open(&n, s.dir);
	{
		const char *env[] = { n.env, NULL };

		site_start(&s, env, "--self-upgrade=always", NULL);
	}
	g_free(expect_ready(&n, T_WAIT));
	wpid = s.w->pid;
	site_reload(&s, "--reload", 2);
	/* It did re-execute itself in between, in the same pid. */
	reexec = wrapper_find_log(s.w, "re-executing on ");
	g_assert_nonnull(reexec);
	g_assert_nonnull(wrapper_find_log(s.w, "adopted 1 generation(s)"));
	g_assert_cmpint(s.w->pid, ==, wpid);
	assert_running(&s);
	assert_status_of(&s, wpid);

	/* systemd still gets its READY=1 after RELOADING=1. */
	while (!ready) {
		g_autofree gchar *msg = notify_recv(&n, T_WAIT);

		g_assert_nonnull(msg);
		if (g_str_has_prefix(msg, "READY=1\n"))
			ready = g_steal_pointer(&msg);
		else
			assert_fields(msg, "RELOADING=1", "MONOTONIC_USEC=",
				      "STATUS=", NULL);
		reloading += !ready;
	}
	/* One reload, one RELOADING=1: the re-executed image does not
	 * announce it again. */
	g_assert_cmpuint(reloading, ==, 1);
	g_assert_nonnull(strstr(ready, "generation 2 "));
	g_assert_nonnull(strstr(ready, "last reload ok"));
	site_stop(&s);

	/* Asked through the control socket, not by a signal: it should say
	 * so, as "reloading on request." does. */
	if (!strstr(reexec, "re-executing on request."))
		g_test_fail_printf("a control-socket reload logs \"%s\"",
				   reexec);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_abort };

	g_test_init(&argc, &argv, NULL);
	sigaction(SIGABRT, &sa, NULL);
	/* Each test decides what the wrapper sees of systemd. */
	g_unsetenv("NOTIFY_SOCKET");
	g_unsetenv("WATCHDOG_USEC");
	g_unsetenv("WATCHDOG_PID");
	g_unsetenv("RUNTIME_DIRECTORY");
	g_unsetenv("HAPROXY_STATS_SOCKET");

	g_test_add_func("/reload/notify-start-reload-stop",
			test_notify_start_reload_stop);
	g_test_add_func("/reload/notify-adopted", test_notify_adopted);
	g_test_add_func("/reload/upgrade-postponed-adopted",
			test_upgrade_postponed_adopted);
	g_test_add_func("/reload/notify-extend-timeout",
			test_notify_extend_timeout);
	g_test_add_func("/reload/notify-watchdog", test_notify_watchdog);
	g_test_add_func("/reload/no-notify-socket", test_no_notify_socket);
	g_test_add_func("/reload/stop-reaches-draining",
			test_stop_reaches_draining);
	g_test_add_func("/reload/ds-worker-killed", test_ds_worker_killed);
	g_test_add_func("/reload/takeover-waits-for-handler",
			test_takeover_waits_for_handler);
	g_test_add_func("/reload/sync-reload", test_sync_reload);
	g_test_add_func("/reload/queued-hard-stays-hard",
			test_queued_hard_stays_hard);
	g_test_add_func("/reload/status", test_status);
	g_test_add_func("/reload/metrics", test_metrics);
	g_test_add_func("/reload/client-stops-on-sigterm",
			test_client_stops_on_sigterm);
	g_test_add_func("/reload/concurrent-reload-clients",
			test_concurrent_reload_clients);
	g_test_add_func("/reload/control-socket-permissions-and-bad-input",
			test_control_socket);
	g_test_add_func("/reload/control-peer-other-uid",
			test_control_peer_other_uid);
	g_test_add_func("/reload/control-peer-same-uid",
			test_control_peer_same_uid);
	g_test_add_func("/reload/max-old-workers", test_max_old_workers);
	g_test_add_func("/reload/drain-timeout", test_drain_timeout);
	g_test_add_func("/reload/seamless", test_seamless);
	g_test_add_func("/reload/verdict-after-release",
			test_verdict_after_release);
	g_test_add_func("/reload/waiter-across-upgrade",
			test_waiter_across_upgrade);
	return g_test_run();
}
