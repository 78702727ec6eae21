/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigrecorder - test helper: record every signal this process receives.
 *
 * Usage: sigrecorder FILE
 *
 * Blocks every catchable signal, appends "ready pid=<pid>" to FILE, then
 * appends "signal=<n> name=<SIGNAME> from=<sender pid>" for each signal
 * it receives.  It never exits on its own: tests SIGKILL it.  Used to
 * prove that a process named in a stale pidfile gets no signal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *out_path;

/* Opened per line so that a test may remove or rotate the file. */
static void record(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int fd, len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(line))
		len = sizeof(line) - 1;

	fd = open(out_path, O_APPEND | O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "sigrecorder: %s: %s\n", out_path, strerror(errno));
		return;
	}
	if (write(fd, line, len) != len)
		fprintf(stderr, "sigrecorder: short write to %s\n", out_path);
	close(fd);
}

static void signame(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, size, "SIG%d", sig);
}

/*
 * An inherited SIG_IGN would make the kernel discard some signals once
 * the mask changes, and we want to see everything: reset them all.
 */
static void reset_dispositions(void)
{
	int sig;

	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		signal(sig, SIG_DFL);	/* fails harmlessly for glibc-internal ones */
	}
}

int main(int argc, char **argv)
{
	sigset_t all;
	siginfo_t si;
	char name[32];
	int sig;

	if (argc != 2) {
		fprintf(stderr, "usage: sigrecorder FILE\n");
		return 2;
	}
	out_path = argv[1];

	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, NULL) < 0) {
		perror("sigrecorder: sigprocmask");
		return 1;
	}
	reset_dispositions();

	record("ready pid=%d\n", (int)getpid());

	for (;;) {
		sig = sigwaitinfo(&all, &si);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			perror("sigrecorder: sigwaitinfo");
			return 1;
		}
		signame(sig, name, sizeof(name));
		record("signal=%d name=%s from=%d\n", sig, name, (int)si.si_pid);
	}
}
