/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake haproxy's listeners (-sf/-st, -x, expose-fd), pidfile and
 * serving: see t/fake/fake-haproxy.c. */
#include "fake-haproxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define REQ_MAX		4096
#define BIND_RETRIES	200
#define READY_DELAY_MS	100

struct client {
	int fd;
	size_t len;
	char buf[REQ_MAX];
};

/* ----------------------------------------------------------- binding */

static const char *addr_str(const struct listener *l)
{
	static char buf[INET_ADDRSTRLEN + 8];
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &l->addr.sin_addr, ip, sizeof(ip));
	snprintf(buf, sizeof(buf), "%s:%u", ip, ntohs(l->addr.sin_port));
	return buf;
}

static int bind_one(struct listener *l)
{
	int one = 1, fd, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!g.noreuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&l->addr, sizeof(l->addr)) < 0 ||
	    listen(fd, 1024) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	l->fd = fd;
	return 0;
}

/* Binds what is not bound yet; returns 0 or the first -errno. */
static int bind_all(void)
{
	int i, err, first = 0;

	for (i = 0; i < g.nlsn; i++) {
		if (g.lsn[i].fd >= 0)
			continue;
		err = bind_one(&g.lsn[i]);
		if (err && !first)
			first = err;
	}
	return first;
}

void unbind_all(void)
{
	int i;

	/* Like haproxy: the stats sockets close with the listeners. */
	if (g.expose_fd >= 0)
		close(g.expose_fd);
	g.expose_fd = -1;
	for (i = 0; i < g.nlsn; i++) {
		if (g.lsn[i].fd >= 0)
			close(g.lsn[i].fd);
		g.lsn[i].fd = -1;
	}
}

/* Returns how many old pids kill() reached. */
int tell_old_pids(int sig)
{
	int i, reached = 0;

	for (i = 0; i < g.nold; i++) {
		log_event("signalled-old SIG%s %d", sigabbrev_np(sig), (int)g.old_pids[i]);
		if (kill(g.old_pids[i], sig) == 0)
			reached++;
	}
	return reached;
}

static const char *first_unbound(void)
{
	int i;

	for (i = 0; i < g.nlsn; i++)
		if (g.lsn[i].fd < 0)
			return addr_str(&g.lsn[i]);
	return "?";
}

/* -x: the listeners of the predecessor, in configuration order. */
void take_listeners(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char data, cbuf[CMSG_SPACE(sizeof(int) * 64)];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd, n, i;

	if (strlen(g.take_from) >= sizeof(a.sun_path))
		alert("-x %s: path too long", g.take_from);
	strcpy(a.sun_path, g.take_from);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    recvmsg(fd, &msg, MSG_CMSG_CLOEXEC) <= 0)
		alert("failed to get the sockets from %s: %s", g.take_from,
		      strerror(errno));
	close(fd);
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		alert("no sockets from %s", g.take_from);
	n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	for (i = 0; i < n; i++) {
		int got;

		memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
		if (i < g.nlsn && g.lsn[i].fd < 0)
			g.lsn[i].fd = got;
		else
			close(got);
	}
	log_event("took %d listener(s) from %s", n, g.take_from);
}

/* The expose-fd socket, bound beside PATH and renamed over it. */
static void expose_open(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char tmp[sizeof(a.sun_path)];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", g.expose_path,
		     (int)getpid()) >= (int)sizeof(tmp))
		alert("stats socket %s: path too long", g.expose_path);
	strcpy(a.sun_path, tmp);
	unlink(tmp);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 16) < 0 || rename(tmp, g.expose_path) < 0)
		alert("stats socket %s: %s", g.expose_path, strerror(errno));
	g.expose_fd = fd;
}

/* A successor asks: every listener, in configuration order. */
static void expose_answer(void)
{
	char data = 'L', cbuf[CMSG_SPACE(sizeof(int) * 64)];
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf };
	struct cmsghdr *cm;
	int fd, i, n = 0;

	fd = accept4(g.expose_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	memset(cbuf, 0, sizeof(cbuf));
	cm = (struct cmsghdr *)cbuf;
	for (i = 0; i < g.nlsn && n < 64; i++)
		if (g.lsn[i].fd >= 0)
			memcpy(CMSG_DATA(cm) + n++ * sizeof(int), &g.lsn[i].fd,
			       sizeof(int));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
	if (n && sendmsg(fd, &msg, MSG_NOSIGNAL) < 0)
		log_event("expose: %s", strerror(errno));
	close(fd);
}

/* Address in use: ask the old processes to pause, then try again. */
void bind_listeners(void)
{
	int err = bind_all(), tries;

	for (tries = 0; err == -EADDRINUSE && g.nold && tries < BIND_RETRIES; tries++) {
		if (!tell_old_pids(SIGTTOU))
			break;
		sleep_ms(10);
		err = bind_all();
	}
	if (!err)
		return;
	fprintf(stderr, "[ALERT] fake: cannot bind socket\n");
	fprintf(stderr, "[ALERT] fake: %s: %s\n", first_unbound(), strerror(-err));
	unbind_all();
	if (g.nold)
		tell_old_pids(SIGTTIN);
	finish(1);
}

/* Not a fatal-on-the-spot error: the old processes must resume first. */
int create_pidfile(void)
{
	int fd;

	if (!g.pidfile)
		return -1;
	unlink(g.pidfile);
	fd = open(g.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "[ALERT] fake: cannot create pidfile %s : %s\n",
			g.pidfile, strerror(errno));
		unbind_all();
		if (g.nold)
			tell_old_pids(SIGTTIN);
		finish(1);
	}
	return fd;
}

void write_pid(int fd, pid_t pid)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)pid);

	if (fd >= 0 && write(fd, buf, len) != len)
		fprintf(stderr, PROG ": short write to pidfile\n");
}

/* ------------------------------------------------------------ serving */

static struct client **clients;
static int nclients;
static bool paused, stopping;

static void add_client(int fd)
{
	struct client *c = calloc(1, sizeof(*c));

	clients = realloc(clients, (nclients + 1) * sizeof(*clients));
	if (!c || !clients)
		abort();
	c->fd = fd;
	clients[nclients++] = c;
}

static void drop_client(int i)
{
	close(clients[i]->fd);
	free(clients[i]);
	clients[i] = clients[--nclients];
}

static void accept_clients(int lfd)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		add_client(fd);
}

static void respond(struct client *c)
{
	char resp[160];
	int len;

	len = snprintf(resp, sizeof(resp),
		       "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
		       "Connection: close\r\n\r\npid=%d\n", (int)getpid());
	if (write(c->fd, resp, len) < 0)
		return;	/* the client went away: nothing to do */
}

/* Returns true when the client is done with. */
static bool serve_client(struct client *c)
{
	ssize_t n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);

	if (n < 0)
		return errno != EAGAIN && errno != EINTR;
	c->len += n;
	if (n == 0 || c->len == sizeof(c->buf) || memmem(c->buf, c->len, "\r\n\r\n", 4)) {
		respond(c);
		return true;
	}
	return false;
}

static void handle_signal(int sig)
{
	switch (sig) {
	case SIGUSR1:
		if (g.lose_first_usr1) {
			g.lose_first_usr1 = false;
			log_event("lost SIGUSR1");
			break;
		}
		if (stopping)
			break;
		stopping = true;
		/* Still accepting meanwhile: what a busy haproxy does. */
		if (g.slow_release_ms)
			sleep_ms(g.slow_release_ms);
		unbind_all();
		log_event("soft-stop");
		break;
	case SIGTERM: {
		sigset_t term;

		/* Only queued under fake-lose-first-term. */
		log_event("lost SIGTERM");
		signal(SIGTERM, SIG_DFL);
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &term, NULL);
		break;
	}
	case SIGTTOU:
		if (stopping || paused)
			break;
		paused = true;
		unbind_all();
		log_event("paused");
		break;
	case SIGTTIN:
		if (stopping || !paused)
			break;
		paused = false;
		if (bind_all())
			log_event("resume-failed");
		else
			log_event("resumed");
		break;
	default:
		log_event("ignored SIG%s", sigabbrev_np(sig));
	}
}

static void __attribute__((noreturn)) self_destruct(void)
{
	sigset_t set;

	if (g.exit_after_ready >= 0)
		finish(g.exit_after_ready);
	log_event("crash");
	signal(SIGSEGV, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGSEGV);
	abort();
}

static int fill_pollfds(struct pollfd *pfd)
{
	int i, n = 0;

	for (i = 0; i < g.nlsn; i++)
		if (g.lsn[i].fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = g.lsn[i].fd, .events = POLLIN };
	for (i = 0; i < nclients; i++)
		pfd[n++] = (struct pollfd){ .fd = clients[i]->fd, .events = POLLIN };
	return n;
}

void __attribute__((noreturn)) serve(void)
{
	long long deadline = -1;
	sigset_t none;
	int sig;

	if (g.exit_after_ready >= 0 || g.crash_after_ready)
		deadline = now_ms() + READY_DELAY_MS;
	if (g.expose_listeners && g.expose_path && !stopping)
		expose_open();
	sigemptyset(&none);

	for (;;) {
		struct pollfd pfd[g.nlsn + nclients + 1];
		struct timespec ts, *tsp = NULL;
		int n, i, nl, ready;

		while ((sig = dequeue_signal()))
			handle_signal(sig);
		if (stopping && !nclients)
			finish(0);
		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0)
				self_destruct();
			ts = (struct timespec){ left / 1000, (left % 1000) * 1000000L };
			tsp = &ts;
		}

		n = fill_pollfds(pfd);
		nl = n - nclients;
		/* The expose socket last, after the clients. */
		if (g.expose_fd >= 0)
			pfd[n] = (struct pollfd){ .fd = g.expose_fd, .events = POLLIN };
		ready = ppoll(pfd, n + (g.expose_fd >= 0), tsp, &none);
		if (ready <= 0)
			continue;
		if (g.expose_fd >= 0 && pfd[n].revents)
			expose_answer();

		/*
		 * pfd holds the listeners, then the clients in array order.
		 * Clients go first, backwards, so that drop_client()'s swap
		 * and accept()'s append cannot shift an index still to visit.
		 */
		for (i = n - 1; i >= nl; i--)
			if (pfd[i].revents && serve_client(clients[i - nl]))
				drop_client(i - nl);
		for (i = 0; i < nl; i++)
			if (pfd[i].revents)
				accept_clients(pfd[i].fd);
	}
}
