/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the reload tests share (t/int/reload*.c): see t/lib/reload.h.
 */
#include "t/lib/reload.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/takeover.h"

void reload_fail_at(int line, const char *func, const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	/* g_error() would trap, not abort: fail the way g_assert does. */
	g_assertion_message(G_LOG_DOMAIN, __FILE__, line, func, msg);
	abort();
}

void reload_tests_init(int *argc, char ***argv)
{
	g_test_init(argc, argv, NULL);
	g_unsetenv("NOTIFY_SOCKET");
	g_unsetenv("WATCHDOG_USEC");
	g_unsetenv("WATCHDOG_PID");
	g_unsetenv("RUNTIME_DIRECTORY");
	g_unsetenv("HAPROXY_STATS_SOCKET");
}

gboolean reload_site_init(struct t_site *s, const char *extra)
{
	/* Before 1.8 a generation is a -Ds parent and the worker it
	 * forks: t/int/real-* follows that, these tests do not. */
	if (!t_haproxy_needs(1, 8, "a generation of one process (-db), "
			     "which the reload tests follow,"))
		return FALSE;
	if (!t_site_init_real(s, extra))
		return FALSE;
	s->with_runtime_dir = TRUE;
	return TRUE;
}

void reload_site_init_fake(struct t_site *s, const char *extra)
{
	t_site_init_fake(s, extra);
	s->with_runtime_dir = TRUE;
}

GPid restart_by_hand_adopted(struct t_site *s)
{
	GPid pid = restart_by_hand(s, "-sf", FALSE);
	const char *line = t_site_wait_log(s, LOG_ADOPTING);

	g_assert_cmpint(t_pid_in(line, "pid "), ==, pid);
	return pid;
}

/* ---- held-open connections ---- */

/* Does pid hold a socket that is not in before? */
static gboolean has_new_socket(GPid pid, GHashTable *before)
{
	g_autoptr(GHashTable) now = held_sockets(pid);
	GHashTableIter iter;
	gpointer inode;

	g_hash_table_iter_init(&iter, now);
	while (g_hash_table_iter_next(&iter, &inode, NULL))
		if (!g_hash_table_contains(before, inode))
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
int hold_on(guint16 port, GPid pid)
{
	g_autoptr(GHashTable) before = held_sockets(pid);
	gint64 deadline = t_deadline(T_WAIT);
	int fd = t_hold_connection(port);

	g_assert_cmpint(fd, >=, 0);
	while (!has_new_socket(pid, before) && t_ms_left(deadline))
		g_usleep(10 * 1000);
	g_assert_true(has_new_socket(pid, before));
	return fd;
}

/* ---- a fake NOTIFY_SOCKET ---- */

void notify_open(Notify *n, struct t_site *s)
{
	*n = (Notify){ .fd = -1 };
	t_notify_open(n, s->dir);
	t_site_setenv(s, "NOTIFY_SOCKET", n->path);
}

void notify_clear(Notify *n)
{
	t_notify_clear(n);
}

gchar *notify_recv(Notify *n, guint timeout_ms)
{
	return t_notify_recv(n, timeout_ms);
}

void assert_fields(const char *msg, ...)
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

gchar *expect_ready(Notify *n, guint timeout_ms)
{
	gchar *msg = notify_recv(n, timeout_ms);

	assert_fields(msg, "READY=1", "STATUS=", NULL);
	return msg;
}

void expect_reloading(Notify *n)
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

/* ---- clients ---- */

void client_spawn(Client *c, const char *rundir_opt, const char *command,
		  const char *extra)
{
	const char *argv[] = { t_wrapper_path(), command, rundir_opt, extra,
			       NULL };

	t_command_spawn(c, argv);
}

GPid serving_pid_in(const char *out, guint number)
{
	const char *ok = strstr(out, "ok generation ");

	g_assert_nonnull(ok);
	g_assert_nonnull(strstr(ok, " serving"));
	if (number)
		g_assert_cmpint(t_pid_in(ok, "ok generation "), ==, number);
	return t_pid_in(ok, "(pid ");
}

GPid reload_client(struct t_site *s, const char *command, guint number)
{
	g_autofree gchar *out = NULL;
	GPid old = s->pid, pid;

	g_assert_cmpint(t_client(command, s->rundir_opt, NULL, &out, NULL),
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

/* (Whether the very first request already reaches the new generation is
 * /reload/sync-reload's.) */
GPid reload_serving(struct t_site *s, const char *command, guint number)
{
	GPid pid = reload_client(s, command, number);

	g_assert_cmpint(t_wait_answered_by(s->port, pid), ==, pid);
	return pid;
}

gchar *client_status(struct t_site *s, const char *extra)
{
	gchar *out = NULL;

	g_assert_cmpint(t_client("--status", s->rundir_opt, extra, &out,
				 NULL), ==, CLIENT_OK);
	return out;
}

gchar *status_line(const char *text, guint number)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree gchar *head = g_strdup_printf("generation %u pid ", number);

	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, head))
			return g_strdup(*l);
	return NULL;
}

void assert_status_gen(const char *text, guint number, GPid pid,
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

void assert_status_of(struct t_site *s, GPid wrapper)
{
	g_autofree gchar *text = client_status(s, NULL);
	g_autofree gchar *head = g_strdup_printf("wrapper pid %d ", wrapper);

	g_assert_true(g_str_has_prefix(text, head));
}

void assert_running(struct t_site *s)
{
	g_assert_cmpint(wrapper_wait_exit(s->w, 0), ==, -1);
	g_assert_true(t_pid_alive(s->w->pid));
}

/* ---- raw control connections ---- */

int ctl_connect(const char *rundir)
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

void ctl_send(int fd, const void *data, gsize len)
{
	g_assert_cmpint(send(fd, data, len, MSG_NOSIGNAL), ==, (gssize)len);
}

/* A close with our bytes still unread ends in ECONNRESET after the
 * answer rather than in EOF: that is an end too. */
gchar *ctl_read(int fd, guint timeout_ms)
{
	g_autoptr(GString) answer = g_string_new(NULL);
	gint64 deadline = t_deadline(timeout_ms);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[1024];
		ssize_t n;

		if (poll(&p, 1, t_ms_left(deadline)) <= 0)
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

gchar *ctl_ask(const char *rundir, const void *data, gsize len)
{
	int fd = ctl_connect(rundir);
	gchar *answer;

	ctl_send(fd, data, len);
	answer = ctl_read(fd, T_WAIT);
	close(fd);
	g_test_message("control answer: %s", answer ? answer : "(none)");
	return answer;
}
