/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/fdstore/getsocks.h"

#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"
#include "base/unixsock.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define REQUEST "_getsocks\n"
/* haproxy's client gives each read 1 s: a client that has not finished
 * within twice that has given up, and its descriptors are better closed. */
#define EXCHANGE_MS 2000
#define ACCEPT_REST_MS 250

struct getsocks_server {
	gchar *path;
	int fd;
	guint source;		/* accepting, or 0 while resting */
	guint resume;		/* the rest while out of descriptors */
	GArray *offers;		/* struct getsocks_offer; the fds ours */
	GPtrArray *exchanges;	/* struct exchange *, in progress */
	GPid expected;		/* the one it answers, or 0: nobody */
	int expected_pidfd;	/* its pidfd, or -1 */
};

enum step { READ_REQUEST, SEND_COUNT, SEND_BATCH, READ_ACK };

/* What one step of an exchange asks for next. */
enum next { GO_ON, WAIT_IN, WAIT_OUT, DONE, FAILED };

struct exchange {
	struct getsocks_server *s;
	int fd;
	pid_t peer;
	enum step step;
	char buf[sizeof(REQUEST)];
	gsize got;		/* bytes of the request, then of an ack */
	guint next;		/* the first offer of the next batch */
	guint source;
	guint timer;
	const char *why;	/* when FAILED */
};

/* ---- what is offered ---- */

static void clear_offer(gpointer p)
{
	struct getsocks_offer *o = p;

	g_clear_pointer(&o->iface, g_free);
}

static gboolean int_option(int fd, int level, int name, int *val)
{
	socklen_t len = sizeof(*val);

	return getsockopt(fd, level, name, val, &len) == 0;
}

static gchar *bound_device(int fd)
{
	char name[IFNAMSIZ + 1] = "";
	socklen_t len = IFNAMSIZ;

	if (getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, name, &len) < 0 ||
	    !name[0])
		return NULL;
	return g_strndup(name, len);
}

static void offer(GArray *offers, int fd, guint32 options)
{
	struct getsocks_offer o = {
		.fd = fd,
		.iface = bound_device(fd),
		.options = options,
	};

	g_array_append_val(offers, o);
}

/* Bound to an address of its own, not to "::": Linux made it v6only
 * whatever was asked, and a bind line's v6only or v4v6 changes nothing. */
static gboolean bound_to_one_address(int fd)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);

	return getsockname(fd, (struct sockaddr *)&a, &len) == 0 &&
	       !IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr);
}

static void offer_inet6(GArray *offers, int fd, gboolean option_copies)
{
	guint32 foreign = 0;
	int on = 0;

	if (int_option(fd, SOL_IPV6, IPV6_TRANSPARENT, &on) && on)
		foreign = GETSOCKS_OPT_FOREIGN;
	/* The bind line's option, or none as net.ipv6.bindv6only had it. */
	offer(offers, fd, foreign);
	if (!option_copies)
		return;
	if (bound_to_one_address(fd)) {
		offer(offers, fd, foreign | GETSOCKS_OPT_V6ONLY);
		offer(offers, fd, foreign | GETSOCKS_OPT_V4V6);
	} else if (int_option(fd, SOL_IPV6, IPV6_V6ONLY, &on) && on) {
		offer(offers, fd, foreign | GETSOCKS_OPT_V6ONLY);
	} else {
		offer(offers, fd, foreign | GETSOCKS_OPT_V4V6);
	}
}

GArray *getsocks_offers(const int *fds, guint n_fds, gboolean option_copies)
{
	GArray *offers = g_array_new(FALSE, FALSE,
				     sizeof(struct getsocks_offer));

	g_array_set_clear_func(offers, clear_offer);
	for (guint i = 0; i < n_fds; i++) {
		int domain, type, on = 0;

		if (!int_option(fds[i], SOL_SOCKET, SO_DOMAIN, &domain) ||
		    !int_option(fds[i], SOL_SOCKET, SO_TYPE, &type) ||
		    type != SOCK_STREAM)
			continue;
		if (domain == AF_INET) {
			gboolean transparent =
				int_option(fds[i], SOL_IP, IP_TRANSPARENT, &on) &&
				on;

			offer(offers, fds[i],
			      transparent ? GETSOCKS_OPT_FOREIGN : 0);
		} else if (domain == AF_INET6) {
			offer_inet6(offers, fds[i], option_copies);
		} else if (domain == AF_UNIX) {
			offer(offers, fds[i], 0);
		}
	}
	return offers;
}

GByteArray *getsocks_records(const struct getsocks_offer *offers, guint n)
{
	GByteArray *b = g_byte_array_new();
	static const guint8 no_namespace = 0;

	for (guint i = 0; i < n; i++) {
		guint8 len = offers[i].iface ? strlen(offers[i].iface) : 0;

		g_byte_array_append(b, &no_namespace, 1);
		g_byte_array_append(b, &len, 1);
		g_byte_array_append(b, (const guint8 *)offers[i].iface, len);
		/* A native int, as haproxy reads it. */
		g_byte_array_append(b, (const guint8 *)&offers[i].options,
				    sizeof(offers[i].options));
	}
	return b;
}

/* ---- one exchange ---- */

static enum next failed(struct exchange *x, const char *why)
{
	x->why = why;
	return FAILED;
}

static enum next read_request(struct exchange *x)
{
	gsize want = strlen(REQUEST);
	ssize_t n = recv(x->fd, x->buf + x->got, want - x->got, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return WAIT_IN;
	if (n <= 0)
		return failed(x, "the client left before asking");
	x->got += n;
	/* Anything but haproxy's request gets nothing. */
	if (memcmp(x->buf, REQUEST, x->got) != 0)
		return failed(x, "not a request for listening sockets");
	if (x->got < want)
		return WAIT_IN;
	x->step = SEND_COUNT;
	return GO_ON;
}

/* The count comes alone: haproxy reads it without room for descriptors. */
static enum next send_count(struct exchange *x)
{
	int count = x->s->offers->len;
	ssize_t n = send(x->fd, &count, sizeof(count),
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return WAIT_OUT;
	if (n != sizeof(count))
		return failed(x, "the count could not be sent");
	x->step = SEND_BATCH;
	return GO_ON;
}

static enum next send_batch(struct exchange *x)
{
	GArray *offers = x->s->offers;
	guint n = MIN(GETSOCKS_BATCH, offers->len - x->next);
	const struct getsocks_offer *o =
		&g_array_index(offers, struct getsocks_offer, x->next);
	g_autoptr(GByteArray) records = getsocks_records(o, n);
	union {
		char buf[CMSG_SPACE(sizeof(int) * GETSOCKS_BATCH)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = records->data,
			     .iov_len = records->len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * n),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t sent;

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	for (guint i = 0; i < n; i++)
		memcpy(CMSG_DATA(c) + i * sizeof(int), &o[i].fd, sizeof(int));
	sent = sendmsg(x->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (sent < 0 && (errno == EAGAIN || errno == EINTR))
		return WAIT_OUT;
	/* The client waits for our batches one at a time, so its buffer is
	 * empty: a part of one sent means it is gone. */
	if (sent != (ssize_t)records->len)
		return failed(x, "a batch could not be sent");
	x->next += n;
	x->got = 0;
	x->step = READ_ACK;
	return GO_ON;
}

/* haproxy acknowledges every message it reads, the last one too: waiting
 * for that one as well means the client never writes to a closed socket. */
static enum next read_ack(struct exchange *x)
{
	ssize_t n = recv(x->fd, x->buf + x->got, sizeof(int) - x->got, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return WAIT_IN;
	if (n <= 0)
		return failed(x, "the client left before acknowledging");
	x->got += n;
	if (x->got < sizeof(int))
		return WAIT_IN;
	if (x->next == x->s->offers->len)
		return DONE;
	x->step = SEND_BATCH;
	return GO_ON;
}

static enum next step(struct exchange *x)
{
	switch (x->step) {
	case READ_REQUEST:
		return read_request(x);
	case SEND_COUNT:
		return send_count(x);
	case SEND_BATCH:
		return send_batch(x);
	case READ_ACK:
		return read_ack(x);
	}
	g_assert_not_reached();
}

static void exchange_free(gpointer p)
{
	struct exchange *x = p;

	if (x->source)
		g_source_remove(x->source);
	if (x->timer)
		g_source_remove(x->timer);
	close(x->fd);
	g_free(x);
}

static void end_exchange(struct exchange *x, const char *why)
{
	struct getsocks_server *s = x->s;

	if (why)
		log_notice("-x server %s: pid %d got no listening socket: %s",
			   s->path, x->peer, why);
	else
		log_info("-x server %s: %u listening sockets handed to pid %d",
			 s->path, s->offers->len, x->peer);
	g_ptr_array_remove_fast(s->exchanges, x);
}

static gboolean on_io(int fd, GIOCondition cond, gpointer data);

static void advance(struct exchange *x)
{
	enum next next;

	do
		next = step(x);
	while (next == GO_ON);
	if (next == DONE || next == FAILED) {
		end_exchange(x, next == FAILED ? x->why : NULL);
		return;
	}
	x->source = g_unix_fd_add(x->fd, next == WAIT_IN ? G_IO_IN : G_IO_OUT,
				  on_io, x);
}

static gboolean on_io(int fd, GIOCondition cond, gpointer data)
{
	struct exchange *x = data;

	/* This source ends as the callback returns; advance() adds the
	 * next one. */
	x->source = 0;
	advance(x);
	return G_SOURCE_REMOVE;
}

static gboolean on_timeout(gpointer data)
{
	struct exchange *x = data;

	x->timer = 0;
	end_exchange(x, "no answer within 2 s");
	return G_SOURCE_REMOVE;
}

/* ---- who is answered ---- */

/* Ended, or a zombie: a pidfd is readable once its process has exited. */
static gboolean pidfd_ended(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/*
 * The peer's pidfd, where the kernel tells it (Linux >= 6.5), or -1.
 * *reaped: it told that the peer has ended and was reaped, by having no
 * pidfd to give (EINVAL before Linux 6.17, which gives one of an ended
 * process): its pid may be another process's already.
 */
static int peer_pidfd(int fd, gboolean *reaped)
{
	int pidfd = -1;
	socklen_t len = sizeof(pidfd);

	*reaped = FALSE;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0) {
		*reaped = errno == EINVAL || errno == ESRCH;
		return -1;
	}
	return pidfd;
}

/* How far below the launched process its client may be: a master and
 * its worker, a daemon's fork, with room to spare. */
#define FORK_DEPTH 8

static gboolean forked_from(GPid pid, GPid ancestor)
{
	for (guint depth = 0; depth <= FORK_DEPTH && pid > 1; depth++) {
		if (pid == ancestor)
			return TRUE;
		pid = proc_parent(pid);
	}
	return FALSE;
}

/* Why the peer gets nothing, or NULL: it is the process launched to take
 * the sockets (alive, so its pid names it), or one it forked. */
static const char *peer_refusal(struct getsocks_server *s, int fd, pid_t peer)
{
	gboolean reaped;
	int pidfd;
	const char *why = NULL;

	if (!s->expected || (s->expected_pidfd >= 0 &&
			     pidfd_ended(s->expected_pidfd)))
		return "no haproxy launched by the wrapper waits for them";
	pidfd = peer_pidfd(fd, &reaped);
	/* Alive before and after the look at its ancestry: peer named the
	 * client all along. */
	if (reaped || (pidfd >= 0 && pidfd_ended(pidfd)) ||
	    !forked_from(peer, s->expected) ||
	    (pidfd >= 0 && pidfd_ended(pidfd)))
		why = "not the haproxy the wrapper launched";
	if (pidfd >= 0)
		close(pidfd);
	return why;
}

void getsocks_server_expect(struct getsocks_server *s, GPid pid)
{
	if (s->expected_pidfd >= 0)
		close(s->expected_pidfd);
	s->expected = pid;
	/* Our unreaped child: the pidfd (close-on-exec, as every pidfd)
	 * names it; -1 without pidfds. */
	s->expected_pidfd = pidfd_open(pid, 0);
}

/* ---- accepting ---- */

static gboolean on_accept(int fd, GIOCondition cond, gpointer data);

static gboolean on_resume(gpointer data)
{
	struct getsocks_server *s = data;

	s->resume = 0;
	s->source = g_unix_fd_add(s->fd, G_IO_IN, on_accept, s);
	return G_SOURCE_REMOVE;
}

static gboolean on_accept(int fd, GIOCondition cond, gpointer data)
{
	struct getsocks_server *s = data;
	struct exchange *x;
	const char *why;
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	/* No descriptor for it: the connection stays queued and the socket
	 * readable; the next try after a rest, not in a busy loop. */
	if (cfd < 0 && (errno == EMFILE || errno == ENFILE)) {
		s->source = 0;
		s->resume = g_timeout_add(ACCEPT_REST_MS, on_resume, s);
		return G_SOURCE_REMOVE;
	}
	if (cfd < 0)
		return G_SOURCE_CONTINUE;
	x = g_new0(struct exchange, 1);
	x->s = s;
	x->fd = cfd;
	g_ptr_array_add(s->exchanges, x);
	/* The socket is 0600; the peer check holds even if the file's mode
	 * were changed under us. Root and our user run other processes:
	 * only the haproxy we launched shares the listen queues. */
	why = unixsock_peer_trusted(cfd, &x->peer) ?
		      peer_refusal(s, cfd, x->peer) : "permission denied";
	if (why) {
		end_exchange(x, why);
		return G_SOURCE_CONTINUE;
	}
	x->timer = g_timeout_add(EXCHANGE_MS, on_timeout, x);
	advance(x);
	return G_SOURCE_CONTINUE;
}

/* ---- the client ---- */

static int connect_to(const char *path, GError **error)
{
	struct sockaddr_un a;
	/* haproxy's own client gives each read a second. */
	struct timeval tv = { .tv_sec = 1 };
	int fd;

	if (!unixsock_address(&a, path, error))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: %s", path, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One message: its descriptors appended to fds; the number, or -1. */
static int receive_batch(int fd, GArray *fds)
{
	/* Room for a batch of any version's (253 before haproxy 2.6). */
	union {
		char buf[CMSG_SPACE(sizeof(int) * (GETSOCKS_BATCH + 1))];
		struct cmsghdr align;
	} control;
	static char records[(GETSOCKS_BATCH + 1) * 64];
	struct iovec iov = { records, sizeof(records) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	int got = 0;
	ssize_t n;

	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; CMSG_LEN((i + 1) * sizeof(int)) <=
				   c->cmsg_len; i++, got++) {
			int one;

			memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(int));
			g_array_append_val(fds, one);
		}
	}
	/* Descriptors cut off for want of room are lost: say so. */
	return msg.msg_flags & MSG_CTRUNC ? -1 : got;
}

static void close_all(GArray *fds)
{
	for (guint i = 0; i < fds->len; i++)
		close(g_array_index(fds, int, i));
	g_array_set_size(fds, 0);
}

gboolean getsocks_fetch_each(const char *path, getsocks_fd_fn fn,
			     gpointer data, GError **error)
{
	g_autoptr(GArray) batch = g_array_new(FALSE, FALSE, sizeof(int));
	int fd = connect_to(path, error);
	int count = 0;
	guint got = 0;

	if (fd < 0)
		return FALSE;
	if (send(fd, REQUEST, strlen(REQUEST), MSG_NOSIGNAL) !=
		    (ssize_t)strlen(REQUEST) ||
	    recv(fd, &count, sizeof(count), MSG_WAITALL) != sizeof(count) ||
	    count < 0) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "%s: no count of listening sockets", path);
		close(fd);
		return FALSE;
	}
	while (got < (guint)count) {
		int ack;

		if (receive_batch(fd, batch) < 0 ||
		    got + batch->len > (guint)count) {
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
				    "%s: %u of %d listening sockets received",
				    path, got + batch->len, count);
			close_all(batch);
			break;
		}
		got += batch->len;
		/* One batch held at a time, whatever the count. */
		for (guint i = 0; i < batch->len; i++)
			fn(g_array_index(batch, int, i), data);
		g_array_set_size(batch, 0);
		ack = got;
		send(fd, &ack, sizeof(ack), MSG_NOSIGNAL);
	}
	close(fd);
	return got == (guint)count;
}

/* ---- the server ---- */

static void close_offered(GArray *offers)
{
	/* Copies of one socket share its descriptor: closed once. */
	for (guint i = 0; i < offers->len; i++) {
		int fd = g_array_index(offers, struct getsocks_offer, i).fd;

		if (i == 0 ||
		    fd != g_array_index(offers, struct getsocks_offer, i - 1).fd)
			close(fd);
	}
}

static gboolean offers_none(const GArray *offers, GError **error)
{
	if (offers->len)
		return FALSE;
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
		    "-x server: no listening socket to hand over");
	return TRUE;
}

/* Listening on path, with offers (taken); NULL with offers untouched. */
static struct getsocks_server *server_listen(const char *path,
					     GArray **offers, GError **error)
{
	struct getsocks_server *s;
	int fd;

	/* Ours, in our runtime directory: whatever is there is stale. */
	g_unlink(path);
	fd = unixsock_listen_private(path, error);
	if (fd < 0) {
		g_prefix_error(error, "-x server: ");
		return NULL;
	}
	s = g_new0(struct getsocks_server, 1);
	s->path = g_strdup(path);
	s->fd = fd;
	s->offers = g_steal_pointer(offers);
	s->exchanges = g_ptr_array_new_with_free_func(exchange_free);
	s->expected_pidfd = -1;
	s->source = g_unix_fd_add(fd, G_IO_IN, on_accept, s);
	return s;
}

/* The caller's descriptors that are not offered: closed. */
static void close_not_offered(const int *fds, guint n_fds,
			      const GArray *offers)
{
	g_autoptr(GHashTable) offered = g_hash_table_new(NULL, NULL);

	for (guint i = 0; i < offers->len; i++)
		g_hash_table_add(offered, GINT_TO_POINTER(g_array_index(
			offers, struct getsocks_offer, i).fd));
	for (guint i = 0; i < n_fds; i++)
		if (!g_hash_table_contains(offered, GINT_TO_POINTER(fds[i])))
			close(fds[i]);
}

struct getsocks_server *getsocks_server_take(const char *path, const int *fds,
					     guint n_fds,
					     gboolean option_copies,
					     GError **error)
{
	g_autoptr(GArray) offers = getsocks_offers(fds, n_fds, option_copies);
	struct getsocks_server *s;

	if (offers_none(offers, error))
		return NULL;
	s = server_listen(path, &offers, error);
	if (s)
		close_not_offered(fds, n_fds, s->offers);
	return s;
}

const char *getsocks_server_path(const struct getsocks_server *s)
{
	return s->path;
}

void getsocks_server_free(struct getsocks_server *s)
{
	if (!s)
		return;
	g_clear_handle_id(&s->source, g_source_remove);
	g_clear_handle_id(&s->resume, g_source_remove);
	g_ptr_array_free(s->exchanges, TRUE);
	close(s->fd);
	if (s->expected_pidfd >= 0)
		close(s->expected_pidfd);
	g_unlink(s->path);
	close_offered(s->offers);
	g_array_free(s->offers, TRUE);
	g_free(s->path);
	g_free(s);
}
