/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/signals.h"

#include <errno.h>
#include <glib-unix.h>
#include <signal.h>
#include <unistd.h>

/* Acted on: reload (USR2, HUP), stop (TERM, INT), graceful stop (USR1).
 * Read and ignored, so that they can neither stop nor kill the wrapper:
 * QUIT, TTOU, TTIN, WINCH. */
static const int handled[] = {
	SIGUSR2, SIGHUP, SIGTERM, SIGINT, SIGUSR1,
	SIGQUIT, SIGTTOU, SIGTTIN, SIGWINCH,
};

static void handled_set(sigset_t *set)
{
	sigemptyset(set);
	for (guint i = 0; i < G_N_ELEMENTS(handled); i++)
		sigaddset(set, handled[i]);
}

void signals_block(void)
{
	sigset_t set;

	handled_set(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void signals_unblock(void)
{
	sigset_t set;

	handled_set(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

struct watch {
	int fd;
	signal_fn fn;
	gpointer data;
};

static gboolean on_signalfd(int fd, GIOCondition cond, gpointer data)
{
	struct watch *w = data;
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(fd, &si, sizeof(si));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(si))
			break;
		w->fn(&si, w->data);
	}
	return G_SOURCE_CONTINUE;
}

gboolean signals_watch(signal_fn fn, gpointer data, GError **error)
{
	struct watch *w;
	sigset_t set;
	int fd;

	handled_set(&set);
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0) {
		int saved = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "signalfd: %s", g_strerror(saved));
		return FALSE;
	}
	/* Lives as long as the process. */
	w = g_new0(struct watch, 1);
	*w = (struct watch){ .fd = fd, .fn = fn, .data = data };
	g_unix_fd_add(fd, G_IO_IN, on_signalfd, w);
	return TRUE;
}
