/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HTTP and load: free ports, GET requests, held connections, the load
 * generator thread, plain listeners, OpenMetrics parsing.
 */
#include "t/lib/harness.h"
#include "t/lib/harness-priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Test programs run side by side (prove -j, other developers' suites): a
 * port one of them was given must not be given to another before its
 * haproxy binds it, or both haproxys (SO_REUSEPORT, same user) would
 * share it silently. A port is claimed by a lock on a file named after
 * it in a directory every run shares, held until this process exits (the
 * kernel drops it then, even after a crash).
 */
#define PORT_CLAIMS "/tmp/hsw-test-ports"

static gboolean claim_port(guint16 port)
{
	g_autofree gchar *path = g_strdup_printf(PORT_CLAIMS "/%u", port);
	int fd;

	if (g_mkdir(PORT_CLAIMS, 01777) < 0 && errno != EEXIST)
		return TRUE;	/* Nowhere to claim: as before, unclaimed. */
	chmod(PORT_CLAIMS, 01777);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return TRUE;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return FALSE;
	}
	return TRUE;	/* fd kept open: the claim lasts as long as we do. */
}

gboolean t_port_claimed(guint16 port)
{
	g_autofree gchar *path = g_strdup_printf(PORT_CLAIMS "/%u", port);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	gboolean held;

	if (fd < 0)
		return FALSE;
	held = flock(fd, LOCK_SH | LOCK_NB) < 0;
	close(fd);
	return held;
}

static guint16 bound_port(void)
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

guint16 t_free_port(void)
{
	static GHashTable *given;
	guint16 port;

	if (!given)
		given = g_hash_table_new(NULL, NULL);
	/* Bounded: the kernel's range holds thousands of ports. */
	for (guint i = 0; i < 1000; i++) {
		port = bound_port();
		if (g_hash_table_contains(given, GUINT_TO_POINTER(port)) ||
		    !claim_port(port))
			continue;
		g_hash_table_add(given, GUINT_TO_POINTER(port));
		return port;
	}
	g_error("no free port that no other test program has claimed");
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

/* haproxy before 2.2 answers "302" to "/pid=N" (t_config_text): N, or 0
 * for any other answer. 2.0 writes the header's name in lower case. */
static GPid redirect_to_pid(const char *resp)
{
	static const char location[] = "\r\nlocation: /pid=";
	g_autofree gchar *lower = g_ascii_strdown(resp, -1);
	const char *at = strstr(lower, location);

	if (!g_str_has_prefix(resp, "HTTP/1.1 302 ") || !at)
		return 0;
	return atoi(at + strlen(location));
}

GPid t_http_answer_pid(const char *resp)
{
	const char *body;

	if (redirect_to_pid(resp))
		return redirect_to_pid(resp);
	if (!g_str_has_prefix(resp, "HTTP/1.") || !strstr(resp, " 200 "))
		return 0;
	body = strstr(resp, "\r\n\r\n");
	return body ? t_pid_in(body, "pid=") : 0;
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
	if (n < 0 || !g_str_has_prefix(resp->str, "HTTP/1."))
		return NULL;
	if (redirect_to_pid(resp->str))
		return g_strdup_printf("pid=%d\n", redirect_to_pid(resp->str));
	if (!strstr(resp->str, " 200 "))
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

GPid t_wait_answered_by(guint16 port, GPid pid)
{
	gint64 deadline = deadline_of(T_WAIT);
	GPid got;

	while ((got = t_http_pid(port)) != pid && ms_left(deadline) > 0)
		g_usleep(10 * 1000);
	return got;
}

int t_hold_connection(guint16 port)
{
	return connect_to(port);
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
	if (!why && redirect_to_pid(buf)) {
		if (pid)
			*pid = redirect_to_pid(buf);
		return NULL;
	}
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
	if (err && strstr(err, "connect: Connection refused"))
		l->refused++;
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

guint t_load_answers(struct t_load *l, GPid pid)
{
	guint n;

	g_mutex_lock(&l->lock);
	n = GPOINTER_TO_UINT(g_hash_table_lookup(l->answers,
						 GINT_TO_POINTER(pid)));
	g_mutex_unlock(&l->lock);
	return n;
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

gboolean t_host_migrates(void)
{
	g_autofree gchar *v = NULL;

	if (g_file_get_contents("/proc/sys/net/ipv4/tcp_migrate_req", &v,
				NULL, NULL) && g_str_has_prefix(v, "1")) {
		g_test_skip("net.ipv4.tcp_migrate_req=1 migrates every group");
		return TRUE;
	}
	return FALSE;
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
