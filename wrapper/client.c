/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/client.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/unixsock.h"

static int connect_control(const char *path)
{
	struct sockaddr_un a;
	int fd;

	if (!unixsock_address(&a, path, NULL))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static gboolean send_all(int fd, const char *s)
{
	gsize len = strlen(s);

	while (len) {
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return FALSE;
		s += n;
		len -= n;
	}
	return TRUE;
}

/* Everything until the wrapper closes; it answers once, however long a
 * reload takes (systemd's TimeoutStartSec= bounds ExecReload=). */
static GString *read_answer(int fd)
{
	GString *answer = g_string_new(NULL);
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		g_string_append_len(answer, buf, n);
	}
	return answer;
}

static const char *last_line(GString *s)
{
	char *end;

	while (s->len && s->str[s->len - 1] == '\n')
		g_string_truncate(s, s->len - 1);
	end = strrchr(s->str, '\n');
	return end ? end + 1 : s->str;
}

/*
 * A reload's "ok ..." is for a human at a terminal, or a script: under
 * systemd (ExecReload=, its stdout the journal) the wrapper's own line
 * already says it, and the journal needs it once.
 */
static gboolean quiet_success(const char *command)
{
	return (g_str_equal(command, "reload") ||
		g_str_equal(command, "hard-reload")) &&
	       log_fd_is_journal(STDOUT_FILENO);
}

/* An error in the journal is one ("<3>" before each line); elsewhere
 * the text as it came. */
static void print_error(const char *text)
{
	g_auto(GStrv) lines = NULL;

	if (!log_stderr_is_journal()) {
		fprintf(stderr, "%s\n", text);
		return;
	}
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++)
		if (**l)
			fprintf(stderr, "<%d>%s\n", LOG_ERR, *l);
}

int client_run(const char *socket_path, const char *command)
{
	g_autofree gchar *line = g_strdup_printf("%s\n", command);
	g_autoptr(GString) answer = NULL;
	const char *verdict;
	int fd = connect_control(socket_path);

	if (fd < 0) {
		fprintf(stderr, "%s: cannot reach the wrapper at %s: %s\n",
			LOG_IDENT, socket_path, g_strerror(errno));
		return EXIT_CLIENT_UNREACHABLE;
	}
	if (!send_all(fd, line)) {
		int saved = errno;

		/* A refused peer is answered and closed at once: that
		 * answer ("permission denied") is still to be read. */
		answer = read_answer(fd);
		if (!g_str_has_prefix(answer->str, "error:")) {
			fprintf(stderr, "%s: cannot send to %s: %s\n",
				LOG_IDENT, socket_path, g_strerror(saved));
			close(fd);
			return EXIT_CLIENT_UNREACHABLE;
		}
	} else {
		answer = read_answer(fd);
	}
	close(fd);
	verdict = last_line(answer);
	if (g_str_has_prefix(verdict, "ok")) {
		/* JSON and OpenMetrics are for parsers: the verdict is
		 * left out, the exit status says it. */
		if (g_str_equal(command, "status openmetrics") ||
		    g_str_equal(command, "status json"))
			g_string_truncate(answer, verdict - answer->str);
		if (quiet_success(command))
			return 0;
		printf("%s%s", answer->str,
		       g_str_has_suffix(answer->str, "\n") ? "" : "\n");
		return 0;
	}
	if (g_str_has_prefix(verdict, "error:")) {
		print_error(answer->str);
		return EXIT_CLIENT_FAILED;
	}
	fprintf(stderr, "%s: no answer from the wrapper at %s\n", LOG_IDENT,
		socket_path);
	return EXIT_CLIENT_UNREACHABLE;
}
