/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loadclient: HTTP load on 127.0.0.1:PORT, a new TCP connection per
 * request, errors counted by kind and on a per-interval timeline.
 *
 *   loadclient -p PORT [-c CONCURRENCY] [-d SECONDS] [-n REQUESTS]
 *              [-t TIMEOUT_MS] [-i INTERVAL_MS] [-s STOPFILE]
 *              [-T TIMELINE_FILE] [-E ERROR_LOG] [-o SUMMARY_FILE]
 *              [-k STATUS]
 *
 * Each of CONCURRENCY threads loops: connect, send
 * "GET / HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n", read until
 * the server closes. A request is ok when a complete 200 response came
 * (headers, then Content-Length bytes of body, or everything until EOF
 * when there is no Content-Length). Errors by kind:
 *
 *   refused   ECONNREFUSED on connect
 *   reset     ECONNRESET or EPIPE at any stage
 *   short     EOF before a complete response (also EOF with nothing)
 *   timeout   the request took longer than TIMEOUT_MS (default 2000)
 *   non200    a complete response whose status is not 200 (or STATUS:
 *             -k 302 for haproxy < 2.2, which answers its pid by a redirect)
 *   other     any other failure (errno in the error log)
 *
 * Runs until SIGTERM/SIGINT, until STOPFILE exists, after SECONDS
 * (default 60, at most 3600) or after REQUESTS requests (default and at
 * most 1e9), whichever comes first. Requests in flight then finish
 * (bounded by their timeout) and are counted.
 *
 * Prints key=value lines (the summary) to stdout or SUMMARY_FILE. The
 * timeline has one line per interval (default 100 ms):
 *   t_ms total ok refused reset short timeout non200 other
 * where t_ms is the interval's start after the client's start and a
 * request counts in the interval where it ended. The error log has one
 * line per failed request (at most 100000):
 *   end_mono_ns start_mono_ns kind errno
 * with CLOCK_MONOTONIC times, which other tools can relate to theirs
 * (start_mono_ns in the summary is the timeline's origin).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum kind { K_OK, K_REFUSED, K_RESET, K_SHORT, K_TIMEOUT, K_NON200, K_OTHER, K_MAX };
static const char *const kind_name[K_MAX] = {
	"ok", "refused", "reset", "short", "timeout", "non200", "other",
};

#define MAX_SECONDS	3600
#define MAX_REQUESTS	1000000000ULL
#define MAX_CONC	256
#define MAX_ERRLOG	100000

static const char request[] = "GET / HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n";

struct bucket {
	uint64_t n[K_MAX];
};

static int port;
static int conc = 8;
static double seconds = 60;
static unsigned long long max_requests = MAX_REQUESTS;
static int timeout_ms = 2000;
static int interval_ms = 100;
static const char *stopfile, *timeline_path, *errlog_path, *summary_path;

static int64_t t0;
static struct bucket *buckets;
static size_t nbuckets;
static uint64_t totals[K_MAX];
static uint64_t issued;
static int stop_flag;
static volatile sig_atomic_t signalled;

static pthread_mutex_t errlog_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *errlog;
static uint64_t errlog_lines;
static uint64_t latency_max_ns;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void on_signal(int sig)
{
	signalled = sig;
}

static int stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_RELAXED);
}

/* Waits for events on fd until the deadline: 1 ready, 0 timed out,
 * -1 error (errno). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline - now_ns();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)((left + 999999) / 1000000));
		if (r > 0)
			return 1;
		if (r == 0)
			continue;
		if (errno != EINTR)
			return -1;
	}
}

static enum kind errno_kind(int e)
{
	switch (e) {
	case ECONNREFUSED:
		return K_REFUSED;
	case ECONNRESET:
	case EPIPE:
		return K_RESET;
	case ETIMEDOUT:
		return K_TIMEOUT;
	default:
		return K_OTHER;
	}
}

/* The response so far: K_OK when complete and 200, K_NON200 when complete
 * with another status, K_SHORT when incomplete. */
static int ok_status = 200;

static enum kind judge(const char *buf, size_t len, int eof)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	const char *p;
	long clen = -1;
	int status;

	if (!end)
		return K_SHORT;
	if (len < 12 || memcmp(buf, "HTTP/1.", 7) != 0)
		return K_SHORT;
	status = atoi(buf + 9);
	for (p = buf; p && p < end; p = memchr(p, '\n', end - p)) {
		if (*p == '\n')
			p++;
		if (strncasecmp(p, "content-length:", 15) == 0) {
			clen = strtol(p + 15, NULL, 10);
			break;
		}
	}
	if (clen >= 0) {
		if ((size_t)(end + 4 - buf) + (size_t)clen > len)
			return K_SHORT;
	} else if (!eof) {
		return K_SHORT;
	}
	return status == ok_status ? K_OK : K_NON200;
}

/* One request; *err gets the errno of a failure. */
static enum kind one_request(int *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
	char buf[4096];
	size_t len = 0, sent = 0;
	enum kind k;
	int fd, r, soerr;
	socklen_t sl = sizeof(soerr);

	*err = 0;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return K_OTHER;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (errno != EINPROGRESS) {
			*err = errno;
			k = errno_kind(errno);
			goto out;
		}
		r = wait_fd(fd, POLLOUT, deadline);
		if (r <= 0) {
			*err = r < 0 ? errno : 0;
			k = r < 0 ? K_OTHER : K_TIMEOUT;
			goto out;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
			soerr = errno;
		if (soerr) {
			*err = soerr;
			k = errno_kind(soerr);
			goto out;
		}
	}
	while (sent < sizeof(request) - 1) {
		ssize_t n = send(fd, request + sent, sizeof(request) - 1 - sent,
				 MSG_NOSIGNAL);

		if (n > 0) {
			sent += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			r = wait_fd(fd, POLLOUT, deadline);
			if (r > 0)
				continue;
			*err = r < 0 ? errno : 0;
			k = r < 0 ? K_OTHER : K_TIMEOUT;
			goto out;
		}
		*err = errno;
		k = errno_kind(errno);
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (len == sizeof(buf)) {
			/* Far more than any answer of the bench's config:
			 * judge what we have. */
			k = judge(buf, len, 1);
			goto out;
		}
		n = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (n > 0) {
			len += n;
			/* Complete: no need to wait for the close. */
			if (judge(buf, len, 0) != K_SHORT) {
				k = judge(buf, len, 0);
				goto out;
			}
			continue;
		}
		if (n == 0) {
			k = judge(buf, len, 1);
			goto out;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			r = wait_fd(fd, POLLIN, deadline);
			if (r > 0)
				continue;
			*err = r < 0 ? errno : 0;
			k = r < 0 ? K_OTHER : K_TIMEOUT;
			goto out;
		}
		*err = errno;
		/* A reset after a complete answer is still an answer. */
		k = judge(buf, len, 0);
		if (k == K_SHORT)
			k = errno_kind(errno);
		goto out;
	}
out:
	close(fd);
	return k;
}

static void record(enum kind k, int err, int64_t start, int64_t end)
{
	int64_t rel = end - t0;
	size_t b = rel < 0 ? 0 : (size_t)(rel / ((int64_t)interval_ms * 1000000));
	uint64_t lat = (uint64_t)(end - start);
	uint64_t cur;

	if (b >= nbuckets)
		b = nbuckets - 1;
	__atomic_fetch_add(&buckets[b].n[k], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&totals[k], 1, __ATOMIC_RELAXED);
	cur = __atomic_load_n(&latency_max_ns, __ATOMIC_RELAXED);
	while (lat > cur &&
	       !__atomic_compare_exchange_n(&latency_max_ns, &cur, lat, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (k != K_OK && errlog) {
		pthread_mutex_lock(&errlog_lock);
		if (errlog_lines < MAX_ERRLOG) {
			fprintf(errlog, "%lld %lld %s %d\n", (long long)end,
				(long long)start, kind_name[k], err);
			errlog_lines++;
		}
		pthread_mutex_unlock(&errlog_lock);
	}
}

static void *worker(void *arg)
{
	while (!stopping()) {
		int64_t start;
		enum kind k;
		int err;

		if (__atomic_fetch_add(&issued, 1, __ATOMIC_RELAXED) >= max_requests) {
			__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
			break;
		}
		start = now_ns();
		k = one_request(&err);
		record(k, err, start, now_ns());
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: loadclient -p PORT [-c CONCURRENCY] [-d SECONDS] [-n REQUESTS]\n"
		"                  [-t TIMEOUT_MS] [-i INTERVAL_MS] [-s STOPFILE]\n"
		"                  [-T TIMELINE] [-E ERRLOG] [-o SUMMARY] [-k STATUS]\n");
	exit(2);
}

static long num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "loadclient: bad number %s (%ld..%ld)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_CONC];
	struct sigaction sa = { .sa_handler = on_signal };
	int64_t end_at, t_end;
	uint64_t total = 0, errors, max_err = 0, err_intervals = 0;
	size_t max_err_at = 0, used, i;
	int64_t first_err = -1, last_err = -1;
	FILE *out = stdout;
	const char *why = "duration";
	int c, k;

	while ((c = getopt(argc, argv, "p:c:d:n:t:i:s:T:E:o:k:")) != -1) {
		switch (c) {
		case 'p': port = (int)num(optarg, 1, 65535); break;
		case 'c': conc = (int)num(optarg, 1, MAX_CONC); break;
		case 'd': seconds = (double)num(optarg, 1, MAX_SECONDS); break;
		case 'n': max_requests = (unsigned long long)num(optarg, 1, 1000000000L); break;
		case 't': timeout_ms = (int)num(optarg, 1, 60000); break;
		case 'i': interval_ms = (int)num(optarg, 1, 10000); break;
		case 's': stopfile = optarg; break;
		case 'T': timeline_path = optarg; break;
		case 'E': errlog_path = optarg; break;
		case 'o': summary_path = optarg; break;
		case 'k': ok_status = (int)num(optarg, 100, 599); break;
		default: usage();
		}
	}
	if (!port || optind != argc)
		usage();

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* One more interval for requests in flight at the end. */
	nbuckets = (size_t)(seconds * 1000 / interval_ms) + 2 +
		   (size_t)(timeout_ms / interval_ms) + 1;
	buckets = calloc(nbuckets, sizeof(*buckets));
	if (!buckets) {
		perror("loadclient: calloc");
		return 1;
	}
	if (errlog_path && !(errlog = fopen(errlog_path, "w"))) {
		perror(errlog_path);
		return 1;
	}

	t0 = now_ns();
	end_at = t0 + (int64_t)(seconds * 1e9);
	for (i = 0; i < (size_t)conc; i++) {
		if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "loadclient: pthread_create failed\n");
			__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
			conc = (int)i;
			break;
		}
	}
	for (;;) {
		struct timespec ts = { 0, 5000000 };
		struct stat st;

		if (signalled) {
			why = signalled == SIGINT ? "SIGINT" : "SIGTERM";
			break;
		}
		if (stopfile && stat(stopfile, &st) == 0) {
			why = "stopfile";
			break;
		}
		if (stopping()) {
			why = "requests";
			break;
		}
		if (now_ns() >= end_at)
			break;
		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (i = 0; i < (size_t)conc; i++)
		pthread_join(th[i], NULL);
	t_end = now_ns();
	if (errlog)
		fclose(errlog);

	used = (size_t)((t_end - t0) / ((int64_t)interval_ms * 1000000)) + 1;
	if (used > nbuckets)
		used = nbuckets;
	for (i = 0; i < used; i++) {
		uint64_t e = 0;

		for (k = K_REFUSED; k < K_MAX; k++)
			e += buckets[i].n[k];
		if (e) {
			err_intervals++;
			if (first_err < 0)
				first_err = (int64_t)i * interval_ms;
			last_err = (int64_t)i * interval_ms;
		}
		if (e > max_err) {
			max_err = e;
			max_err_at = i;
		}
	}
	if (timeline_path) {
		FILE *f = fopen(timeline_path, "w");

		if (!f) {
			perror(timeline_path);
		} else {
			fprintf(f, "# t_ms total ok refused reset short timeout non200 other\n");
			for (i = 0; i < used; i++) {
				uint64_t t = 0;

				for (k = 0; k < K_MAX; k++)
					t += buckets[i].n[k];
				fprintf(f, "%zu %llu", i * (size_t)interval_ms,
					(unsigned long long)t);
				for (k = 0; k < K_MAX; k++)
					fprintf(f, " %llu", (unsigned long long)buckets[i].n[k]);
				fputc('\n', f);
			}
			fclose(f);
		}
	}

	for (k = 0; k < K_MAX; k++)
		total += totals[k];
	errors = total - totals[K_OK];
	if (summary_path && !(out = fopen(summary_path, "w"))) {
		perror(summary_path);
		out = stdout;
	}
	fprintf(out, "port=%d\n", port);
	fprintf(out, "concurrency=%d\n", conc);
	fprintf(out, "timeout_ms=%d\n", timeout_ms);
	fprintf(out, "interval_ms=%d\n", interval_ms);
	fprintf(out, "stopped_by=%s\n", why);
	fprintf(out, "start_mono_ns=%lld\n", (long long)t0);
	fprintf(out, "duration_s=%.3f\n", (double)(t_end - t0) / 1e9);
	fprintf(out, "total=%llu\n", (unsigned long long)total);
	for (k = 0; k < K_MAX; k++)
		fprintf(out, "%s=%llu\n", kind_name[k], (unsigned long long)totals[k]);
	fprintf(out, "errors=%llu\n", (unsigned long long)errors);
	fprintf(out, "rate_per_s=%.0f\n", total / ((double)(t_end - t0) / 1e9));
	fprintf(out, "max_request_ms=%.3f\n", latency_max_ns / 1e6);
	fprintf(out, "intervals=%zu\n", used);
	fprintf(out, "intervals_with_errors=%llu\n", (unsigned long long)err_intervals);
	fprintf(out, "max_errors_in_interval=%llu\n", (unsigned long long)max_err);
	fprintf(out, "max_errors_interval_t_ms=%lld\n",
		max_err ? (long long)max_err_at * interval_ms : -1LL);
	fprintf(out, "first_error_interval_t_ms=%lld\n", (long long)first_err);
	fprintf(out, "last_error_interval_t_ms=%lld\n", (long long)last_err);
	if (out != stdout)
		fclose(out);
	return 0;
}
