/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A NOTIFY_SOCKET of our own: the datagrams the wrapper sends systemd
 * (READY=1, RELOADING=1, STOPPING=1, STATUS=...), read in order.
 */
#include "t/lib/harness.h"

#include <glib/gstdio.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void t_notify_open(struct t_notify *n, const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	n->path = g_build_filename(t_short_dir(dir), "notify.sock", NULL);
	g_assert_cmpuint(strlen(n->path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, n->path);
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(n->fd, >=, 0);
	g_assert_cmpint(bind(n->fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
}

void t_notify_clear(struct t_notify *n)
{
	if (n->path) {
		close(n->fd);
		g_unlink(n->path);
	}
	g_clear_pointer(&n->path, g_free);
}

static gchar *recv_one(struct t_notify *n, int timeout_ms)
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

gchar *t_notify_recv(struct t_notify *n, guint timeout_ms)
{
	gint64 deadline = t_deadline(timeout_ms);
	gchar *msg;

	while ((msg = recv_one(n, t_ms_left(deadline))) && n->skip_extend &&
	       g_str_has_prefix(msg, "EXTEND_TIMEOUT_USEC="))
		g_free(msg);
	return msg;
}

gchar *t_notify_expect(struct t_notify *n, ...)
{
	gchar *msg = t_notify_recv(n, T_WAIT);
	g_auto(GStrv) lines = NULL;
	const char *prefix;
	guint i = 0;
	va_list ap;

	if (!msg)
		g_error("notify: nothing within %u ms", T_WAIT);
	lines = g_strsplit(msg, "\n", -1);
	va_start(ap, n);
	while ((prefix = va_arg(ap, const char *))) {
		if (!lines[i] || !g_str_has_prefix(lines[i], prefix))
			g_error("notify: expected %s... as line %u of \"%s\"",
				prefix, i + 1, msg);
		i++;
	}
	va_end(ap);
	if (lines[i])
		g_error("notify: more than expected in \"%s\"", msg);
	return msg;
}

gchar *t_notify_field(const char *msg, const char *key)
{
	g_autofree gchar *prefix = g_strconcat(key, "=", NULL);
	g_auto(GStrv) lines = g_strsplit(msg, "\n", -1);

	for (char **l = lines; *l; l++)
		if (g_str_has_prefix(*l, prefix))
			return g_strdup(*l + strlen(prefix));
	return NULL;
}
