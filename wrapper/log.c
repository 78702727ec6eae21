/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/log.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* One write() per line, so that lines from haproxy sharing stderr do not
 * interleave with ours. */
static void write_line(const char *line, gsize len)
{
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, line, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		line += n;
		len -= n;
	}
}

void wlog(int priority, const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	g_autofree gchar *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	line = g_strdup_printf("<%d>" LOG_IDENT ": %s\n", priority, msg);
	write_line(line, strlen(line));
}

void log_executing(char *const *argv)
{
	g_autoptr(GString) s = g_string_new("<7>" LOG_IDENT ": executing ");

	for (; *argv; argv++)
		g_string_append_printf(s, "%s ", *argv);
	g_string_append_c(s, '\n');
	write_line(s->str, s->len);
}

gchar *describe_wait_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return g_strdup_printf("exited with status %d",
				       WEXITSTATUS(wait_status));
	if (WIFSIGNALED(wait_status))
		return g_strdup_printf("killed by signal %d (%s)",
				       WTERMSIG(wait_status),
				       strsignal(WTERMSIG(wait_status)));
	return g_strdup_printf("ended with wait status 0x%x", wait_status);
}

int shell_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 255;
}

const char *signal_name(int sig)
{
	static char names[NSIG][16];

	if (sig <= 0 || sig >= NSIG)
		return "SIG?";
	if (!names[sig][0])
		snprintf(names[sig], sizeof(names[sig]), "SIG%s",
			 sigabbrev_np(sig) ? : "?");
	return names[sig];
}
