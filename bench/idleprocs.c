// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/idleprocs: N idle processes on the host, for the start-up and
 * reload benchmarks (a busy host's process table).
 *
 *   bench/idleprocs -n 10000 [-r READYFILE]
 *   bench/idleprocs -n 400 -e PROGRAM [-a ARGS] [-u UID] [-r READYFILE]
 *
 * Puts itself in a process group of its own, forks N children that only
 * sleep (pause(), no exec: they share its pages), writes "ready N" to
 * READYFILE (or stdout) once all are forked, then waits for SIGTERM or
 * SIGINT, which it also gets when its parent (the bench) ends. It then
 * ends every child by pid (its own children: a pid cannot be reused
 * before it reaps it), reaps them all and exits 0. Exits 1 when fewer than N could be forked
 * (after ending those it had); `ulimit -u` and kernel.pid_max bound N.
 *
 * With -e, each child becomes UID (-u; default: stays who it is) and
 * executes PROGRAM as "NAME 86400 0 0 ..." (NAME: its file's name), ARGS
 * arguments in all (-a, default 1): a crowd of another user's processes
 * named haproxy with long command lines (PROGRAM: a copy of sleep named
 * haproxy), for bench/crowd.sh. "ready" comes once every child has executed it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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

/* What each child executes, with -e. */
struct crowd {
	const char *program;	/* NULL: children only pause */
	char **argv;
	long uid;		/* -1: keep ours */
	int sync;		/* written on failure; closed by the exec */
};

/* argv for -e: the program's name, "86400", then "0" up to nargs
 * arguments. */
static char **crowd_argv(const char *program, long nargs)
{
	const char *slash = strrchr(program, '/');
	char **argv = calloc(nargs + 2, sizeof(*argv));

	if (!argv)
		return NULL;
	argv[0] = (char *)(slash ? slash + 1 : program);
	argv[1] = (char *)"86400";
	for (long i = 2; i <= nargs; i++)
		argv[i] = (char *)"0";
	return argv;
}

/* In a child: tell the helper it failed, and end. */
static void child_failed(const struct crowd *c)
{
	if (write(c->sync, "x", 1) < 0)
		_exit(127);
	_exit(127);
}

/* In a child: become the crowd's user. */
static void become_user(const struct crowd *c)
{
	if (c->uid >= 0 && (setgroups(0, NULL) < 0 || setgid(c->uid) < 0 ||
			    setuid(c->uid) < 0))
		child_failed(c);
}

/* In a child: execute the crowd's program. */
static void run_program(const struct crowd *c)
{
	execv(c->program, c->argv);
	child_failed(c);
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
	long n = 0, forked = 0, nargs = 1;
	struct crowd crowd = { .uid = -1, .sync = -1 };
	int sync[2] = { -1, -1 };
	const char *ready = NULL;
	struct sigaction sa = { .sa_handler = on_stop };
	pid_t *pids, self, parent;
	sigset_t block, old;
	int opt;
	FILE *out;

	while ((opt = getopt(argc, argv, "n:r:e:a:u:")) != -1) {
		if (opt == 'n')
			n = strtol(optarg, NULL, 10);
		else if (opt == 'r')
			ready = optarg;
		else if (opt == 'e')
			crowd.program = optarg;
		else if (opt == 'a')
			nargs = strtol(optarg, NULL, 10);
		else if (opt == 'u')
			crowd.uid = strtol(optarg, NULL, 10);
		else
			goto usage;
	}
	if (n <= 0 || n > 1000000 || optind != argc || nargs < 1 ||
	    nargs > 1000000)
		goto usage;
	if (crowd.program) {
		crowd.argv = crowd_argv(crowd.program, nargs);
		if (!crowd.argv || pipe2(sync, O_CLOEXEC) < 0)
			return 1;
		crowd.sync = sync[1];
	}
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
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (crowd.program)
				become_user(&crowd);
			/* Gone with the helper, whatever ends it (a change
			 * of user clears the setting: made after it). */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != self)
				_exit(0);
			if (crowd.program)
				run_program(&crowd);
			for (;;)
				pause();
		}
		pids[forked] = pid;
	}
	if (crowd.program) {
		char c;
		ssize_t r;

		/* Every child has executed the program (its end of the pipe
		 * closed), or failed (a byte). */
		close(sync[1]);
		while ((r = read(sync[0], &c, 1)) < 0 && errno == EINTR)
			;
		close(sync[0]);
		if (r != 0) {
			fprintf(stderr, "idleprocs: a child could not execute "
				"%s as uid %ld\n", crowd.program, crowd.uid);
			end_children(pids, forked);
			return 1;
		}
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
	fprintf(stderr, "usage: bench/idleprocs -n N [-e PROGRAM [-a ARGS] "
		"[-u UID]] [-r READYFILE]\n");
	return 64;
}
