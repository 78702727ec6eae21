/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/log.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/sdlib.h"

static gboolean steps;

void log_set_steps(gboolean on)
{
	steps = on;
}

gboolean log_steps_on(void)
{
	return steps;
}

gboolean log_fd_is_journal(int fd)
{
	const char *stream = g_getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 &&
	       fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

gboolean log_stderr_is_journal(void)
{
	return log_fd_is_journal(STDERR_FILENO);
}

static void add_field(GPtrArray *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void add_field(GPtrArray *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	g_ptr_array_add(f, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

/* The text journald would have made of our stderr line, and the fields. */
static gboolean journal_send(const struct log_event *ev, int priority,
			     const char *msg)
{
	g_autoptr(GPtrArray) f = g_ptr_array_new_with_free_func(g_free);
	g_autofree struct iovec *iov = NULL;

	add_field(f, "MESSAGE=" LOG_IDENT ": %s", msg);
	add_field(f, "PRIORITY=%d", priority);
	add_field(f, "SYSLOG_IDENTIFIER=%s", program_invocation_short_name);
	add_field(f, "MESSAGE_ID=%s", ev->message_id);
	if (ev->generation)
		add_field(f, "HAPROXY_GENERATION=%u", ev->generation);
	if (ev->pid)
		add_field(f, "HAPROXY_PID=%d", ev->pid);
	if (ev->result) {
		add_field(f, "RELOAD_RESULT=%s", ev->result);
		add_field(f, "RELOAD_DURATION_USEC=%" G_GINT64_FORMAT,
			  ev->duration_us);
	}
	if (g_str_equal(ev->message_id, MSGID_STOP))
		add_field(f, "EXIT_STATUS=%d", ev->exit_status);
	iov = g_new(struct iovec, f->len);
	for (guint i = 0; i < f->len; i++)
		iov[i] = (struct iovec){ f->pdata[i], strlen(f->pdata[i]) };
	return sdlib_journal_sendv(iov, f->len) >= 0;
}

static void vlog_event(const struct log_event *ev, int priority,
		       const char *fmt, va_list ap)
{
	g_autofree gchar *msg = g_strdup_vprintf(fmt, ap);
	g_autofree gchar *line = NULL;

	if (ev && log_stderr_is_journal() && journal_send(ev, priority, msg))
		return;
	/* The whole line in one write(), so that lines from haproxy sharing
	 * stderr do not interleave with ours. One that fails is lost. */
	line = g_strdup_printf("<%d>" LOG_IDENT ": %s\n", priority, msg);
	fd_write_all(STDERR_FILENO, line, strlen(line));
}

void wlog(int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_event(NULL, priority, fmt, ap);
	va_end(ap);
}

void wlog_event(const struct log_event *ev, int priority, const char *fmt,
		...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_event(ev, priority, fmt, ap);
	va_end(ap);
}

void log_executing(char *const *argv)
{
	g_autoptr(GString) s = g_string_new("<7>" LOG_IDENT ": executing ");

	for (; *argv; argv++)
		g_string_append_printf(s, "%s ", *argv);
	g_string_append_c(s, '\n');
	fd_write_all(STDERR_FILENO, s->str, s->len);
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
