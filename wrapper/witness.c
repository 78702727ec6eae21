/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/witness.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/log.h"
#include "wrapper/child.h"

struct report {
	gint32 signo;
	gint32 sender;
};

static void witness_signals(sigset_t *set)
{
	static const int sigs[] = {
		SIGUSR1, SIGTERM, SIGTTOU, SIGTTIN,
		SIGINT, SIGHUP, SIGUSR2, SIGQUIT,
	};

	sigemptyset(set);
	for (guint i = 0; i < G_N_ELEMENTS(sigs); i++)
		sigaddset(set, sigs[i]);
}

/* After fork() in a threaded process: async-signal-safe calls only. */
static void G_GNUC_NORETURN witness_main(int report_fd, pid_t wrapper)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t set;
	siginfo_t si;

	witness_signals(&set);
	/* Blocked since before the fork, so nothing was lost; SIG_DFL so that
	 * a signal ignored by the wrapper is still queued for sigwaitinfo. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig))
			sigaction(sig, &dfl, NULL);
	prctl(PR_SET_NAME, "hsw-witness");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != wrapper)
		_exit(0);
	if (report_fd != 3) {
		dup2(report_fd, 3);
		report_fd = 3;
	}
	close_range(4, ~0U, 0);

	for (;;) {
		struct report r;
		int sig = sigwaitinfo(&set, &si);

		if (sig < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		r.signo = sig;
		r.sender = si.si_pid;
		/* SIGPIPE is ignored: a wrapper that stopped listening ends us. */
		if (write(report_fd, &r, sizeof(r)) != sizeof(r))
			_exit(0);
	}
}

static gboolean on_report(int fd, GIOCondition cond, gpointer data)
{
	struct witness *w = data;
	struct report r;
	ssize_t n;

	n = read(fd, &r, sizeof(r));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return G_SOURCE_CONTINUE;
	if (n != sizeof(r)) {
		/* EOF: the witness is gone; its child watch says why. */
		g_source_remove(w->fd_source);
		w->fd_source = 0;
		return G_SOURCE_REMOVE;
	}
	w->report(r.signo, r.sender, w->data);
	return G_SOURCE_CONTINUE;
}

void witness_flush(struct witness *w)
{
	while (w->fd_source &&
	       on_report(w->fd, G_IO_IN, w) == G_SOURCE_CONTINUE) {
		int avail = 0;

		if (ioctl(w->fd, FIONREAD, &avail) < 0 || avail == 0)
			break;
	}
}

static void on_witness_exit(GPid pid, int status, gpointer data)
{
	struct witness *w = data;

	g_spawn_close_pid(pid);
	if (w->pid == pid) {
		g_autofree gchar *how = describe_wait_status(status);

		log_warn("witness process %d %s unexpectedly", pid, how);
		w->pid = 0;
		w->child_source = 0;
	}
}


gboolean witness_start(struct witness *w, witness_fn report, gpointer data,
		       GError **error)
{
	sigset_t set, old;
	int fds[2];
	pid_t pid, self = getpid();

	if (pipe2(fds, O_CLOEXEC) < 0) {
		int saved = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "cannot create the witness pipe: %s",
			    g_strerror(saved));
		return FALSE;
	}
	witness_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		witness_main(fds[1], self);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (pid < 0) {
		int saved = errno;

		close(fds[0]);
		g_set_error(error, G_SPAWN_ERROR, G_SPAWN_ERROR_FORK,
			    "cannot fork the readiness witness: %s",
			    g_strerror(saved));
		return FALSE;
	}
	g_unix_set_fd_nonblocking(fds[0], TRUE, NULL);
	*w = (struct witness){
		.pid = pid,
		.fd = fds[0],
		.report = report,
		.data = data,
	};
	w->fd_source = g_unix_fd_add(w->fd, G_IO_IN | G_IO_HUP, on_report, w);
	w->child_source = g_child_watch_add(pid, on_witness_exit, w);
	return TRUE;
}

void witness_stop(struct witness *w)
{
	if (w->fd_source)
		g_source_remove(w->fd_source);
	if (w->report)
		close(w->fd);
	if (w->child_source)
		child_discard(w->pid, w->child_source);
	*w = (struct witness){ 0 };
}
