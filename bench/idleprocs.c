// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/idleprocs: N idle processes on the host, for the start-up and
 * reload benchmarks (a busy host's process table).
 *
 *   bench/idleprocs -n 10000 [-r READYFILE]
 *
 * Puts itself in a process group of its own, forks N children that only
 * sleep (pause(), no exec: they share its pages), writes "ready N" to
 * READYFILE (or stdout) once all are forked, then waits for SIGTERM or
 * SIGINT, which it also gets when its parent (the bench) ends. It then
 * ends every child by pid (its own children: a pid cannot be reused
 * before it reaps it), reaps them all and exits 0. Exits 1 when fewer than N could be forked
 * (after ending those it had); `ulimit -u` and kernel.pid_max bound N.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void end_children(const pid_t *pids, long n)
{
	for (long i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (long i = 0; i < n; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
}

int main(int argc, char **argv)
{
	long n = 0, forked = 0;
	const char *ready = NULL;
	struct sigaction sa = { .sa_handler = on_stop };
	pid_t *pids, self, parent;
	sigset_t block, old;
	int opt;
	FILE *out;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		if (opt == 'n')
			n = strtol(optarg, NULL, 10);
		else if (opt == 'r')
			ready = optarg;
		else
			goto usage;
	}
	if (n <= 0 || n > 1000000 || optind != argc)
		goto usage;
	pids = calloc(n, sizeof(*pids));
	if (!pids)
		return 1;
	setpgid(0, 0);
	parent = getppid();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	self = getpid();
	for (; forked < n && !stop; forked++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "idleprocs: fork %ld of %ld: %s\n",
				forked + 1, n, strerror(errno));
			end_children(pids, forked);
			return 1;
		}
		if (pid == 0) {
			/* Gone with the helper, whatever ends it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != self)
				_exit(0);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			for (;;)
				pause();
		}
		pids[forked] = pid;
	}
	out = ready ? fopen(ready, "w") : stdout;
	if (out) {
		fprintf(out, "ready %ld\n", forked);
		fflush(out);
		if (out != stdout)
			fclose(out);
	}
	/* Signals are blocked here: none is lost before the wait. */
	while (!stop)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
	end_children(pids, forked);
	free(pids);
	return 0;
usage:
	fprintf(stderr, "usage: bench/idleprocs -n N [-r READYFILE]\n");
	return 64;
}
