/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Larger than any one datagram of a dump. The kernel never makes one
 * larger than 32 KiB less its own overhead, and makes them smaller still
 * unless a reader asks for more, which we never do. */
#define RECV_SIZE 32768

static gboolean fail(GError **error, int err, const char *what)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err),
		    "sock_diag: %s: %s", what, g_strerror(err));
	return FALSE;
}

static gboolean send_request(int fd, int family, guint32 seq, GError **error)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = seq,
		},
		.req = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			/* Only LISTEN: the kernel then walks the listening
			 * hash alone, never the established one. No
			 * idiag_ext: the bare inet_diag_msg has the inode. */
			.idiag_states = 1u << TCP_LISTEN,
		},
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	do
		n = sendto(fd, &msg, sizeof(msg), 0,
			   (struct sockaddr *)&kernel, sizeof(kernel));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail(error, errno, "send");
	if ((size_t)n != sizeof(msg))
		return fail(error, EIO, "send");
	return TRUE;
}

/*
 * One datagram of the dump for seq: its sockets' inodes into inodes.
 * *done once NLMSG_DONE came. FALSE on an error the kernel reported
 * (NLMSG_ERROR, or a DONE that carries one) or a malformed message.
 */
static gboolean read_part(const void *buf, int len, guint32 seq,
			  GHashTable *inodes, gboolean *done, GError **error)
{
	const struct nlmsghdr *nh;

	for (nh = buf; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
		const struct inet_diag_msg *m;
		guint64 ino;

		/* Nothing else is sent on this socket; a stray reply to
		 * an earlier request is not ours to read. */
		if (nh->nlmsg_seq != seq)
			continue;
		if (nh->nlmsg_type == NLMSG_DONE) {
			/* Since Linux 4.x a dump cut short says why here. */
			int err = 0;

			if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(err)))
				memcpy(&err, NLMSG_DATA(nh), sizeof(err));
			*done = TRUE;
			return err < 0 ? fail(error, -err, "dump") : TRUE;
		}
		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return fail(error, EBADMSG, "error message");
			/* 0 would be an acknowledgement, never asked for. */
			return fail(error, e->error ? -e->error : EBADMSG,
				    "request");
		}
		if (nh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			continue;
		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
			return fail(error, EBADMSG, "short message");
		/* The state is not checked again: the kernel sent only the
		 * states asked for, and a test that sees a connected
		 * socket here catches a request that asks for more. */
		m = NLMSG_DATA(nh);
		ino = m->idiag_inode;
		if (ino)
			g_hash_table_add(inodes, g_memdup2(&ino, sizeof(ino)));
	}
	return TRUE;
}

/* The listeners of one address family, dumped on fd. */
static gboolean dump_family(int fd, int family, guint32 seq, void *buf,
			    GHashTable *inodes, GError **error)
{
	gboolean done = FALSE;

	if (!send_request(fd, family, seq, error))
		return FALSE;
	/* A dump comes in as many datagrams as the kernel needs, each one
	 * filled when the previous one is read, until NLMSG_DONE. */
	while (!done) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = buf, .iov_len = RECV_SIZE };
		struct msghdr mh = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
		};
		ssize_t n = recvmsg(fd, &mh, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(error, errno, "receive");
		if (n == 0)
			return fail(error, EPIPE, "receive");
		/* A cut datagram would lose sockets: never take it. */
		if (mh.msg_flags & MSG_TRUNC)
			return fail(error, EMSGSIZE, "receive");
		/* Only the kernel (port 0) answers a dump. */
		if (mh.msg_namelen < sizeof(from) || from.nl_pid != 0)
			continue;
		if (!read_part(buf, (int)n, seq, inodes, &done, error))
			return FALSE;
	}
	return TRUE;
}

GHashTable *sockdiag_tcp_listeners(GError **error)
{
	g_autoptr(GHashTable) inodes = g_hash_table_new_full(
		g_int64_hash, g_int64_equal, g_free, NULL);
	g_autofree void *buf = NULL;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	gboolean ok;

	if (fd < 0) {
		fail(error, errno, "socket");
		return NULL;
	}
	/* The kernel answers at once, but the wait is bounded all the same
	 * since the caller's main loop waits meanwhile; on EAGAIN the
	 * caller reads /proc instead. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO,
		       &(struct timeval){ .tv_sec = 2 },
		       sizeof(struct timeval)) < 0) {
		fail(error, errno, "SO_RCVTIMEO");
		close(fd);
		return NULL;
	}
	buf = g_malloc(RECV_SIZE);
	ok = dump_family(fd, AF_INET, 1, buf, inodes, error) &&
	     dump_family(fd, AF_INET6, 2, buf, inodes, error);
	close(fd);
	return ok ? g_steal_pointer(&inodes) : NULL;
}
