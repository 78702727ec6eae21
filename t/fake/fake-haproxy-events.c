/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake haproxy's event log, time and signals: see t/fake/fake-haproxy.c. */
#include "fake-haproxy.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- log */

/* One write() per line: several processes append to the same file. */
void log_event(const char *fmt, ...)
{
	char *body = NULL, *line = NULL;
	va_list ap;
	int len;

	if (g.log_fd < 0)
		return;
	va_start(ap, fmt);
	len = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	len = asprintf(&line, "pid=%d %s\n", (int)getpid(), body);
	if (len >= 0 && write(g.log_fd, line, len) != len)
		fprintf(stderr, PROG ": short write to log\n");
	free(body);
	free(line);
}

void __attribute__((noreturn)) finish(int code)
{
	log_event("exit %d", code);
	fflush(stdout);
	exit(code);
}

static void status_field(const char *field, char *out, size_t size)
{
	char line[256];
	size_t flen = strlen(field);
	FILE *f;

	snprintf(out, size, "?");
	f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, flen) || line[flen] != ':')
			continue;
		snprintf(out, size, "%s", line + flen + 1 + strspn(line + flen + 1, " \t"));
		out[strcspn(out, "\n")] = '\0';
		break;
	}
	fclose(f);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Inherited descriptors, as a sorted comma-separated list. */
static void open_fds(FILE *out)
{
	int fds[1024], n = 0, i;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((de = readdir(d)) && n < (int)(sizeof(fds) / sizeof(fds[0]))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (atoi(de->d_name) != dirfd(d))
			fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	qsort(fds, n, sizeof(int), cmp_int);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%d", i ? "," : "", fds[i]);
}

static void haproxy_env(FILE *out)
{
	bool first = true;
	char **e;

	for (e = environ; *e; e++) {
		size_t nlen = strcspn(*e, "=");

		if (strncmp(*e, "HAPROXY_", 8) &&
		    !(nlen == 13 && !strncmp(*e, "NOTIFY_SOCKET", 13)))
			continue;
		fprintf(out, "%s%.*s", first ? "" : ",", (int)nlen, *e);
		first = false;
	}
}

/* What the process inherited, captured before we open anything ourselves. */
void log_start(int argc, char **argv)
{
	char sigblk[64], sigign[64], *text = NULL;
	struct rlimit nofile;
	const char *path = getenv("FAKE_HAPROXY_LOG");
	size_t size;
	FILE *out;
	int i;

	if (!path || !*path)
		return;
	status_field("SigBlk", sigblk, sizeof(sigblk));
	status_field("SigIgn", sigign, sizeof(sigign));
	out = open_memstream(&text, &size);
	if (!out)
		return;
	fprintf(out, "start ppid=%d args=", (int)getppid());
	for (i = 1; i < argc; i++)
		fprintf(out, "%s%s", i > 1 ? " " : "", argv[i]);
	fprintf(out, " sigblk=%s sigign=%s", sigblk, sigign);
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0)
		fprintf(out, " nofile=%llu:%llu",
			(unsigned long long)nofile.rlim_cur,
			(unsigned long long)nofile.rlim_max);
	fprintf(out, " fds=");
	open_fds(out);
	fprintf(out, " env=");
	haproxy_env(out);
	fclose(out);

	g.log_fd = open(path, O_APPEND | O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (g.log_fd < 0)
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
	log_event("%s", text);
	free(text);
}

/* --------------------------------------------------------------- time */

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	/* An interrupted sleep goes on with what is left. */
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ signals */

/* Handlers only queue the signal; the event loop acts on it in order. */
static volatile sig_atomic_t sigq[64];
static volatile sig_atomic_t sigq_head, sigq_tail;

void queue_signal(int sig)
{
	int next = (sigq_tail + 1) % 64;

	if (next != sigq_head) {
		sigq[sigq_tail] = sig;
		sigq_tail = next;
	}
}

int dequeue_signal(void)
{
	int sig;

	if (sigq_head == sigq_tail)
		return 0;
	sig = sigq[sigq_head];
	sigq_head = (sigq_head + 1) % 64;
	return sig;
}

void handled_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGTTOU);
	sigaddset(set, SIGTTIN);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
	if (!version_before(1, 8))
		sigaddset(set, SIGUSR2);
}

/*
 * Handled signals stay blocked except inside ppoll().  SIGTERM is left as
 * inherited (normally default); so is SIGINT before 3.2, which is how an
 * ignored SIGINT leaks into real haproxy.  SIGUSR2 is left alone before 1.8
 * so that it kills the process like it did then.
 */
void setup_signals(void)
{
	struct sigaction sa = { .sa_handler = queue_signal };
	sigset_t set;
	int sig;

	signal(SIGPIPE, SIG_IGN);
	if (!version_before(3, 2))
		signal(SIGINT, SIG_DFL);

	handled_signals(&set);
	/* Only to lose the first one: then back to the default action. */
	if (g.lose_first_term)
		sigaddset(&set, SIGTERM);
	sa.sa_mask = set;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			sigaction(sig, &sa, NULL);
	sigprocmask(SIG_BLOCK, &set, NULL);
}
