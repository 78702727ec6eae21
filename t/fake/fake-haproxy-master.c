/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake haproxy's master-worker mode (-W, -Ws): see fake-haproxy.c. */
#include "fake-haproxy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------ master-worker */

static struct {
	pid_t *cur, *old;
	int ncur, nold;
	bool stopping;
	int stop_sig;
	int last_status;
} mw;

static void mw_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void mw_notify(const char *fmt, ...)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char *msg = NULL;
	va_list ap;
	int fd, len;

	if (!g.notify || !path || strlen(path) >= sizeof(a.sun_path))
		return;
	va_start(ap, fmt);
	len = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	strcpy(a.sun_path, path);
	if (a.sun_path[0] == '@')
		a.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && sendto(fd, msg, len, 0, (struct sockaddr *)&a,
			      sizeof(a)) == len)
		log_event("notify %s", msg);
	if (fd >= 0)
		close(fd);
	free(msg);
}

static bool has_status(void)
{
	return !version_before(2, 7);
}

static void mw_ready(bool ok)
{
	if (has_status())
		mw_notify("READY=1\nMAINPID=%d\nSTATUS=%s", (int)getpid(),
			  ok ? "Ready." : "Reload failed!");
	else
		mw_notify("READY=1\nMAINPID=%d", (int)getpid());
}

static void mw_reloading(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!version_before(3, 0))
		mw_notify("RELOADING=1\nSTATUS=Reloading Configuration.\n"
			  "MONOTONIC_USEC=%lld", ts.tv_sec * 1000000LL +
			  ts.tv_nsec / 1000);
	else if (has_status())
		mw_notify("RELOADING=1\nSTATUS=Reloading Configuration.");
	else
		mw_notify("RELOADING=1");
}

static void mw_add(pid_t **v, int *n, pid_t pid)
{
	*v = realloc(*v, (*n + 1) * sizeof(pid_t));
	if (!*v)
		abort();
	(*v)[(*n)++] = pid;
}

static bool mw_remove(pid_t *v, int *n, pid_t pid)
{
	for (int i = 0; i < *n; i++) {
		if (v[i] == pid) {
			v[i] = v[--*n];
			return true;
		}
	}
	return false;
}

static void mw_signal_all(int sig)
{
	for (int i = 0; i < mw.ncur; i++)
		kill(mw.cur[i], sig);
	for (int i = 0; i < mw.nold; i++)
		kill(mw.old[i], sig);
}

/* The workers share the master's listening sockets: none is ever closed
 * while a reload hands over, as with -x. */
static void mw_fork_workers(void)
{
	int n = version_before(2, 5) ? g.nbproc : 1;

	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			alert("fork: %s", strerror(errno));
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			g.nold = 0;
			log_event("worker");
			serve();
		}
		mw_add(&mw.cur, &mw.ncur, pid);
	}
}

/* A new image of the master loads the configuration: a child here. */
static bool mw_load_ok(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		g.nlsn = 0;
		g.config_error = false;
		load_config();
		if (g.load_delay_ms)
			sleep_ms(g.load_delay_ms);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* fake-master-late-usr1-ms: until usr1_at, SIGUSR1 kills the master. */
static long long usr1_at = -1;

static void mw_usr1_late_begin(void)
{
	sigset_t one;

	if (!g.late_usr1_ms)
		return;
	usr1_at = now_ms() + g.late_usr1_ms;
	signal(SIGUSR1, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	log_event("master: SIGUSR1 not handled");
}

/* Handled again once its time has come; set is what the loop waits for. */
static void mw_usr1_late_check(sigset_t *set)
{
	if (usr1_at < 0 || now_ms() < usr1_at)
		return;
	usr1_at = -1;
	sigaddset(set, SIGUSR1);
	sigprocmask(SIG_BLOCK, set, NULL);
	signal(SIGUSR1, queue_signal);
	log_event("master handles SIGUSR1");
}

/* fake-master-late-handler-ms: after each load, as a 2.8-3.0 master
 * executing itself again, SIGUSR2 kills the master until usr2_at. */
static long long usr2_at = -1;

static void mw_usr2_late_begin(void)
{
	sigset_t one;

	if (!g.late_handler_ms)
		return;
	usr2_at = now_ms() + g.late_handler_ms;
	signal(SIGUSR2, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, SIGUSR2);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
}

static void mw_usr2_late_check(sigset_t *set)
{
	if (usr2_at < 0 || now_ms() < usr2_at)
		return;
	usr2_at = -1;
	sigaddset(set, SIGUSR2);
	sigprocmask(SIG_BLOCK, set, NULL);
	/* Said first: once the handler is there, the wrapper may act. */
	log_event("master handles SIGUSR2");
	signal(SIGUSR2, queue_signal);
}

static void mw_reload(void)
{
	log_event("master reload");
	mw_reloading();
	if (!mw_load_ok()) {
		fprintf(stderr, "[WARNING] fake: Loading failure!\n");
		if (!version_before(2, 5) && version_before(2, 7))
			mw_reloading();
		mw_usr2_late_begin();
		mw_ready(false);
		return;
	}
	for (int i = 0; i < mw.ncur; i++)
		mw_add(&mw.old, &mw.nold, mw.cur[i]);
	mw.ncur = 0;
	mw_fork_workers();
	for (int i = 0; i < mw.nold; i++)
		kill(mw.old[i], SIGUSR1);
	mw_usr1_late_begin();
	if (!version_before(2, 5) && version_before(2, 7))
		mw_reloading();
	mw_usr2_late_begin();
	mw_ready(true);
}

/* SIGTTOU/SIGTTIN reach the workers from 1.8.24 and 2.2 on. */
static bool mw_forwards_pause(void)
{
	if (g.major == 1)
		return atoi(strrchr(g.version, '.') + 1) >= 24;
	return !version_before(2, 2);
}

static void __attribute__((noreturn)) mw_exit(void)
{
	int code = 0;

	/* 1.8: the last worker's status; later: 0, or 130 after SIGINT. */
	if (!version_before(2, 0))
		code = mw.stop_sig == SIGINT ? 130 : 0;
	else if (WIFSIGNALED(mw.last_status))
		code = 128 + WTERMSIG(mw.last_status);
	else
		code = WEXITSTATUS(mw.last_status);
	finish(code);
}

static void mw_reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		mw.last_status = status;
		if (mw_remove(mw.old, &mw.nold, pid))
			continue;
		if (!mw_remove(mw.cur, &mw.ncur, pid) || mw.stopping)
			continue;
		/* exit-on-failure */
		log_event("worker %d died", (int)pid);
		mw.stopping = true;
		mw_signal_all(SIGTERM);
		while (wait(NULL) > 0)
			;
		finish(WIFSIGNALED(status) ? 128 + WTERMSIG(status)
					   : WEXITSTATUS(status));
	}
	if (mw.stopping && !mw.ncur && !mw.nold)
		mw_exit();
}

static void mw_stop(int sig)
{
	if (mw.stopping)
		return;
	mw.stopping = true;
	mw.stop_sig = sig;
	mw_notify("STOPPING=1");
	log_event("master stop %s", sigabbrev_np(sig));
	mw_signal_all(sig);
}

static void mw_handle(int sig)
{
	switch (sig) {
	case SIGUSR2:
	case SIGHUP:
		if (!mw.stopping)
			mw_reload();
		break;
	case SIGTERM:
	case SIGINT:
	case SIGUSR1:
		mw_stop(sig);
		break;
	case SIGTTOU:
	case SIGTTIN:
		if (mw_forwards_pause())
			mw_signal_all(sig);
		else
			log_event("swallowed SIG%s", sigabbrev_np(sig));
		break;
	case SIGCHLD:
		mw_reap();
		break;
	}
}

void __attribute__((noreturn)) master_mode(int pidfd)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGHUP, SIGTERM, SIGINT,
				    SIGTTOU, SIGTTIN, SIGCHLD };
	sigset_t set;

	write_pid(pidfd, getpid());
	if (pidfd >= 0)
		close(pidfd);
	mw_fork_workers();
	mw_usr2_late_begin();
	mw_usr1_late_begin();
	if (!version_before(2, 5) && version_before(2, 7))
		mw_reloading();
	mw_ready(true);
	log_event("master ready");
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	if (usr2_at >= 0)
		sigdelset(&set, SIGUSR2);
	if (usr1_at >= 0)
		sigdelset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		struct timespec ts = { 0, 10 * 1000000L };
		int sig;

		mw_usr2_late_check(&set);
		mw_usr1_late_check(&set);
		if (usr2_at >= 0)
			sigdelset(&set, SIGUSR2);
		if (usr1_at >= 0)
			sigdelset(&set, SIGUSR1);
		sig = sigtimedwait(&set, NULL,
				   usr2_at >= 0 || usr1_at >= 0 ? &ts : NULL);
		if (sig > 0)
			mw_handle(sig);
	}
}
