/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A client of haproxy's master CLI: see t/lib/mastercli.h. */
#include "t/lib/mastercli.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int cli_socket(const char *path, struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	*a = (struct sockaddr_un){ .sun_family = AF_UNIX };
	g_assert_cmpuint(strlen(path), <, sizeof(a->sun_path));
	strcpy(a->sun_path, path);
	return fd;
}

gchar *t_master_cli(const char *path, const char *command, guint bound_ms)
{
	struct sockaddr_un a;
	g_autoptr(GString) answer = g_string_new(NULL);
	g_autofree gchar *line = g_strdup_printf("%s\n", command);
	gint64 deadline = g_get_monotonic_time() + bound_ms * 1000LL;
	int fd = cli_socket(path, &a);

	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		g_error("master CLI %s: %s", path, g_strerror(errno));
	g_assert_cmpint(send(fd, line, strlen(line), MSG_NOSIGNAL), ==,
			(gssize)strlen(line));
	/* Nothing more to ask: the master closes once it has answered
	 * (otherwise it waits for another command, past our bound). */
	g_assert_cmpint(shutdown(fd, SHUT_WR), ==, 0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[1024];
		ssize_t n;

		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		g_assert_cmpint(n, >=, 0);
		if (n == 0)
			break;
		g_string_append_len(answer, buf, n);
	}
	close(fd);
	return g_strdup(answer->str);
}

gboolean t_master_cli_accepts_for(const char *path, guint ms)
{
	gint64 end = g_get_monotonic_time() + ms * 1000LL;
	guint tries = 0;

	do {
		struct sockaddr_un a;
		int fd = cli_socket(path, &a);
		int r = connect(fd, (struct sockaddr *)&a, sizeof(a));
		int errsv = errno;

		close(fd);
		if (r < 0) {
			g_test_message("master CLI %s, try %u: %s", path, tries,
				       g_strerror(errsv));
			return FALSE;
		}
		tries++;
		g_usleep(500);
	} while (g_get_monotonic_time() < end);
	return TRUE;
}
