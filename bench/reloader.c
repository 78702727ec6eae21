/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reloader: triggers reloads one after the other and measures each one's
 * latency, from the trigger to the first answer of a NEW haproxy process
 * on 127.0.0.1:PORT.
 *
 *   reloader -p PORT -n RELOADS (-k PID [-S SIGNAL] | -C 'SHELL COMMAND')
 *            [-M MASTER_SOCKET | -Q WRAPPER_CONTROL_SOCKET]
 *            [-w MAX_WAIT_MS] [-o LOG]
 *   reloader -p PORT -X 'SHELL COMMAND' [-w MAX_WAIT_MS]
 *   reloader -f         print a free 127.0.0.1 TCP port and exit
 *
 * The configuration under test answers "pid=<pid>" (or redirects to
 * "/pid=<pid>", 302, for haproxy < 2.2): the process that
 * answered. Before each reload, the current pid is read (bounded); the
 * trigger is a signal to PID (default SIGUSR2) or a command run with
 * /bin/sh -c (not waited for before polling); then a fresh connection
 * every millisecond asks who answers, until a pid never seen before does
 * (not just "another one": a draining older generation is not new). The
 * next reload starts at once: reloads are spaced by the time a new
 * generation takes to serve. A command must then exit 0 (bounded too).
 * With -M (haproxy -Ws), the master must also answer "show proc" on its
 * master CLI before the next reload: a -Ws master loses a SIGUSR2 that
 * arrives while it re-executes itself (not counted in the latency).
 * With -Q (the wrapper reloaded by signal), the wrapper must likewise have
 * finished the reload ("status" on its control socket: the reload count
 * went up and no generation is starting) before the next one; without it,
 * a signal sent while the wrapper still finishes the previous reload waits
 * for it, and that wait would count in the next reload's latency.
 *
 * LOG gets one line per reload, with CLOCK_MONOTONIC times:
 *   i trigger_ns served_ns latency_us old_pid new_pid poll_errors cmd_rc cmd_us
 * (served_ns 0 and new_pid 0 when no new generation answered within
 * MAX_WAIT_MS, default 15000; cmd_rc -1 without a command). The summary,
 * key=value lines, goes to stdout. Exits 1 when the run could not go on
 * (nothing answers, the signal cannot be sent), 0 otherwise, even when
 * some reloads failed (failed= counts them).
 *
 * -X: start to serving. Nothing must answer on PORT before; the command
 * is started (/bin/sh -c; let it exec the server) and a fresh connection
 * every 250 us asks who answers, until a pid does. Prints start_us= (from
 * the fork to that answer), pid= (the command's pid, left running: the
 * caller ends it), served_pid= and cpu_us=: the CPU time the command's
 * process itself (all its threads, not its children) had used by then,
 * from /proc/PID/task/TID/schedstat, which the host's load does not skew. Exits 1 when nothing answered within
 * MAX_WAIT_MS or the command exited first.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RELOADS	100000
#define POLL_TIMEOUT_MS	1000

static int port;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000, .tv_nsec = t % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline - now_ns();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)((left + 999999) / 1000000));
		if (r != 0 && !(r < 0 && errno == EINTR))
			return r;
	}
}

/* Who answers now: the pid, or 0 on any failure (refused, reset, ...). */
static long ask_pid(void)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int64_t deadline = now_ns() + (int64_t)POLL_TIMEOUT_MS * 1000000;
	char buf[2048];
	size_t len = 0;
	long pid = 0;
	char *p;
	int fd, err = 0;
	socklen_t sl = sizeof(err);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (errno != EINPROGRESS || wait_fd(fd, POLLOUT, deadline) <= 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0 || err)
			goto out;
	}
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		goto out;
	while (len < sizeof(buf) - 1) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);

		if (n > 0) {
			len += n;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || wait_fd(fd, POLLIN, deadline) <= 0)
			goto out;
	}
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) != 0 || len < 12)
		goto out;
	/* haproxy < 2.2 cannot make up a body: the bench's configuration
	 * for it redirects to "/pid=N" instead. */
	if (strncmp(buf + 9, "302", 3) == 0)
		p = strcasestr(buf, "\r\nlocation: /pid=");
	else if (strncmp(buf + 9, "200", 3) == 0)
		p = strstr(buf, "\r\n\r\n");
	else
		goto out;
	if (p && (p = strstr(p, "pid=")))
		pid = strtol(p + 4, NULL, 10);
out:
	close(fd);
	return pid > 0 ? pid : 0;
}

/* Sends a command on a unix stream socket and reads the answer into buf
 * (NUL-terminated), until the peer closes or, with stop_on_blank, until an
 * empty line ends the answer (the haproxy master CLI keeps the connection
 * open). 1 on a whole answer, 0 otherwise. */
static int query_unix(const char *path, const char *command, char *buf,
		      size_t size, int stop_on_blank, int64_t deadline)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t got = 0, len = strlen(command);
	int fd, done = 0;

	if (strlen(path) >= sizeof(a.sun_path) || size < 2)
		return 0;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if ((connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ||
	     (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) > 0)) &&
	    send(fd, command, len, MSG_NOSIGNAL) == (ssize_t)len) {
		for (;;) {
			ssize_t n = recv(fd, buf + got, size - 1 - got, 0);

			if (n > 0) {
				got += n;
				buf[got] = '\0';
				if (stop_on_blank && got >= 2 &&
				    buf[got - 1] == '\n' && buf[got - 2] == '\n') {
					done = 1;
					break;
				}
				if (got == size - 1) {
					/* Keep the tail only: enough for the
					 * end markers looked for. */
					memmove(buf, buf + got - 2, 2);
					got = 2;
				}
				continue;
			}
			if (n == 0) {
				done = got > 0;
				break;
			}
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN || wait_fd(fd, POLLIN, deadline) <= 0)
				break;
		}
	}
	buf[got] = '\0';
	close(fd);
	return done;
}

/* The -Ws master takes no reload signal between its re-exec and its event
 * loop (one sent then is lost): it is ready for the next one once its
 * master CLI answers "show proc". 1 once it did, 0 if not by the
 * deadline. */
static int master_answers(const char *path, int64_t deadline)
{
	char buf[8192];

	while (now_ns() < deadline) {
		if (query_unix(path, "show proc\n", buf, sizeof(buf), 1, deadline))
			return 1;
		sleep_until(now_ns() + 1000000);
	}
	return 0;
}

/* The wrapper's reload count, from "status" on its control socket; -1 if
 * it did not answer. *starting is set when a generation is still
 * starting (a reload in progress). */
static long wrapper_reloads(const char *path, int *starting, int64_t deadline)
{
	char buf[16384];
	const char *p;

	*starting = 0;
	if (!query_unix(path, "status\n", buf, sizeof(buf), 0, deadline))
		return -1;
	*starting = strstr(buf, " starting\n") != NULL;
	if (strncmp(buf, "reloads ", 8) == 0)
		p = buf + 8;
	else if ((p = strstr(buf, "\nreloads ")))
		p += 9;
	return p ? strtol(p, NULL, 10) : -1;
}

/* The wrapper is done with the reloads sent so far: its count reached
 * want and no generation is starting. */
static int wrapper_settled(const char *path, long want, int64_t deadline)
{
	while (now_ns() < deadline) {
		int starting;
		long n = wrapper_reloads(path, &starting, deadline);

		if (n >= want && !starting)
			return 1;
		sleep_until(now_ns() + 1000000);
	}
	return 0;
}

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t sl = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &sl) < 0) {
		perror("reloader: free port");
		return 1;
	}
	printf("%d\n", ntohs(a.sin_port));
	close(fd);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank. */
static double pct_ms(const int64_t *sorted, int n, double p)
{
	int r;

	if (n == 0)
		return -1;
	r = (int)(p * n + 0.999999);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return sorted[r - 1] / 1e6;
}

static int signal_number(const char *s)
{
	if (!strcmp(s, "USR2") || !strcmp(s, "SIGUSR2"))
		return SIGUSR2;
	if (!strcmp(s, "HUP") || !strcmp(s, "SIGHUP"))
		return SIGHUP;
	if (!strcmp(s, "USR1") || !strcmp(s, "SIGUSR1"))
		return SIGUSR1;
	fprintf(stderr, "reloader: unknown signal %s\n", s);
	exit(2);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: reloader -p PORT -n RELOADS (-k PID [-S SIGNAL] | -C COMMAND)\n"
		"                [-M MASTER_SOCKET | -Q WRAPPER_CONTROL_SOCKET] [-w MAX_WAIT_MS] [-o LOG]\n"
		"       reloader -p PORT -X COMMAND [-w MAX_WAIT_MS]\n"
		"       reloader -f\n");
	exit(2);
}

/* Waits for a command, bounded: its status, or -2 if it is still running
 * at the deadline (it is then killed, by its pid). */
static int reap(pid_t pid, int64_t deadline)
{
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0 && errno != EINTR)
			return -3;
		if (now_ns() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -2;
		}
		sleep_until(now_ns() + 1000000);
	}
}

/* CPU time of pid's threads so far, in microseconds; -1 if unknown. */
static long long cpu_us_of(pid_t pid)
{
	char path[64];
	long long total = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char p[300];
		unsigned long long ns;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			total += (long long)(ns / 1000);
		fclose(f);
	}
	closedir(d);
	return total;
}

static int start_to_serving(const char *cmd, int max_wait_ms)
{
	int64_t t0, deadline, next;
	long served = 0;
	pid_t child;
	int st;

	if (ask_pid()) {
		fprintf(stderr, "reloader: something answers on 127.0.0.1:%d already\n", port);
		return 1;
	}
	t0 = now_ns();
	child = fork();
	if (child == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (child < 0) {
		perror("reloader: fork");
		return 1;
	}
	deadline = t0 + (int64_t)max_wait_ms * 1000000;
	for (next = t0; !(served = ask_pid()); ) {
		if (now_ns() >= deadline || waitpid(child, &st, WNOHANG) == child) {
			fprintf(stderr, "reloader: nothing answered on 127.0.0.1:%d (%s)\n", port,
				now_ns() >= deadline ? "time limit" : "the command exited");
			return 1;
		}
		next += 250000;
		if (next < now_ns())
			next = now_ns();
		sleep_until(next);
	}
	t0 = now_ns() - t0;
	printf("start_us=%lld\npid=%d\nserved_pid=%ld\ncpu_us=%lld\n",
	       (long long)(t0 / 1000), (int)child, served, cpu_us_of(child));
	return 0;
}

int main(int argc, char **argv)
{
	int reloads = 0, sig = SIGUSR2, max_wait_ms = 15000, c, i, ok = 0;
	int failed = 0, cmd_failed = 0, nseen = 0;
	long target = 0;
	const char *cmd = NULL, *start_cmd = NULL, *log_path = NULL, *master = NULL, *control = NULL;
	long base_reloads = 0;
	int settle_failed = 0;
	int64_t *lat, *cmd_lat, sum = 0, t_begin;
	long *seen;
	int ncmd = 0;
	unsigned long poll_errors_total = 0;
	FILE *log = NULL;

	while ((c = getopt(argc, argv, "p:n:k:S:C:M:Q:w:o:fX:")) != -1) {
		switch (c) {
		case 'p': port = atoi(optarg); break;
		case 'n': reloads = atoi(optarg); break;
		case 'k': target = atol(optarg); break;
		case 'S': sig = signal_number(optarg); break;
		case 'C': cmd = optarg; break;
		case 'M': master = optarg; break;
		case 'Q': control = optarg; break;
		case 'w': max_wait_ms = atoi(optarg); break;
		case 'o': log_path = optarg; break;
		case 'f': return free_port();
		case 'X': start_cmd = optarg; break;
		default: usage();
		}
	}
	if (start_cmd && port > 0 && port <= 65535 && max_wait_ms > 0 && optind == argc)
		return start_to_serving(start_cmd, max_wait_ms);
	if (port <= 0 || port > 65535 || reloads <= 0 || reloads > MAX_RELOADS ||
	    max_wait_ms <= 0 || (!target) == (!cmd) || target < 0 || optind != argc)
		usage();
	lat = calloc(reloads, sizeof(*lat));
	cmd_lat = calloc(reloads, sizeof(*cmd_lat));
	seen = calloc(reloads + 1, sizeof(*seen));
	if (!lat || !cmd_lat || !seen) {
		perror("reloader: calloc");
		return 1;
	}
	if (log_path && !(log = fopen(log_path, "w"))) {
		perror(log_path);
		return 1;
	}
	if (log)
		fprintf(log, "# i trigger_ns served_ns latency_us old_pid new_pid poll_errors cmd_rc cmd_us\n");

	if (control) {
		int starting;

		base_reloads = wrapper_reloads(control, &starting,
					       now_ns() + (int64_t)max_wait_ms * 1000000);
		if (base_reloads < 0) {
			fprintf(stderr, "reloader: no status from the wrapper at %s\n", control);
			return 1;
		}
	}
	t_begin = now_ns();
	for (i = 0; i < reloads; i++) {
		int64_t deadline = now_ns() + 5000000000LL, t0, t1 = 0, next;
		long old = 0, now_pid = 0;
		unsigned long poll_errors = 0;
		int cmd_rc = -1, j, is_new;
		int64_t cmd_ns = 0;
		pid_t child = 0;

		while (!(old = ask_pid()) && now_ns() < deadline)
			sleep_until(now_ns() + 1000000);
		if (!old) {
			fprintf(stderr, "reloader: nothing answers on 127.0.0.1:%d before reload %d\n",
				port, i + 1);
			break;
		}
		for (j = 0; j < nseen && seen[j] != old; j++)
			;
		if (j == nseen && nseen <= reloads)
			seen[nseen++] = old;

		t0 = now_ns();
		if (cmd) {
			child = fork();
			if (child == 0) {
				execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
				_exit(127);
			}
			if (child < 0) {
				perror("reloader: fork");
				break;
			}
		} else if (kill((pid_t)target, sig) < 0) {
			perror("reloader: kill");
			break;
		}
		deadline = t0 + (int64_t)max_wait_ms * 1000000;
		next = t0;
		for (;;) {
			now_pid = ask_pid();
			if (!now_pid) {
				poll_errors++;
			} else {
				for (j = 0, is_new = 1; j < nseen; j++)
					if (seen[j] == now_pid)
						is_new = 0;
				if (is_new) {
					t1 = now_ns();
					break;
				}
			}
			if (now_ns() >= deadline)
				break;
			next += 1000000;
			if (next < now_ns())
				next = now_ns();
			sleep_until(next);
		}
		if (child > 0) {
			cmd_rc = reap(child, now_ns() + (int64_t)max_wait_ms * 1000000);
			cmd_ns = now_ns() - t0;
			cmd_lat[ncmd++] = cmd_ns;
			if (cmd_rc != 0)
				cmd_failed++;
		}
		if (master && !master_answers(master, now_ns() + (int64_t)max_wait_ms * 1000000))
			settle_failed++;
		if (control && !wrapper_settled(control, base_reloads + i + 1,
						now_ns() + (int64_t)max_wait_ms * 1000000))
			settle_failed++;
		poll_errors_total += poll_errors;
		if (t1) {
			lat[ok++] = t1 - t0;
			sum += t1 - t0;
			if (nseen <= reloads)
				seen[nseen++] = now_pid;
		} else {
			failed++;
			now_pid = 0;
		}
		if (log)
			fprintf(log, "%d %lld %lld %lld %ld %ld %lu %d %lld\n", i + 1,
				(long long)t0, (long long)t1,
				t1 ? (long long)((t1 - t0) / 1000) : -1LL, old, now_pid,
				poll_errors, cmd_rc, (long long)(cmd_ns / 1000));
	}
	if (log)
		fclose(log);

	qsort(lat, ok, sizeof(*lat), cmp_i64);
	qsort(cmd_lat, ncmd, sizeof(*cmd_lat), cmp_i64);
	printf("reloads=%d\n", ok + failed);
	printf("served=%d\n", ok);
	printf("failed=%d\n", failed);
	printf("elapsed_s=%.3f\n", (now_ns() - t_begin) / 1e9);
	printf("latency_p50_ms=%.3f\n", pct_ms(lat, ok, 0.50));
	printf("latency_p90_ms=%.3f\n", pct_ms(lat, ok, 0.90));
	printf("latency_p99_ms=%.3f\n", pct_ms(lat, ok, 0.99));
	printf("latency_max_ms=%.3f\n", ok ? lat[ok - 1] / 1e6 : -1.0);
	printf("latency_min_ms=%.3f\n", ok ? lat[0] / 1e6 : -1.0);
	printf("latency_mean_ms=%.3f\n", ok ? sum / 1e6 / ok : -1.0);
	printf("poll_errors=%lu\n", poll_errors_total);
	if (master || control)
		printf("settle_failed=%d\n", settle_failed);
	if (cmd) {
		printf("cmd_failed=%d\n", cmd_failed);
		printf("cmd_p50_ms=%.3f\n", pct_ms(cmd_lat, ncmd, 0.50));
		printf("cmd_p99_ms=%.3f\n", pct_ms(cmd_lat, ncmd, 0.99));
	}
	free(lat);
	free(cmd_lat);
	free(seen);
	return ok + failed == reloads ? 0 : 1;
}
