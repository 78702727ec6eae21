/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/mworker/notify.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/unixsock.h"

/* sd_notify messages are small; a bigger one is not haproxy's. */
#define MESSAGE_MAX 4096

struct mw_notify {
	int fd;
	gchar *path;
	guint source;
	mw_notify_fn fn;
	gpointer data;
};

/* One datagram; FALSE when there is none left. */
static gboolean receive_one(struct mw_notify *n)
{
	char buf[MESSAGE_MAX];
	union {
		struct cmsghdr align;
		char space[CMSG_SPACE(sizeof(struct ucred))];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = &control,
		.msg_controllen = sizeof(control),
	};
	struct mw_message m;
	struct ucred cred = { 0 };
	ssize_t len;

	len = recvmsg(n->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (len < 0)
		return errno == EINTR;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(cred)))
			memcpy(&cred, CMSG_DATA(c), sizeof(cred));
		/* Nobody has a reason to pass us descriptors. */
		else if (c->cmsg_level == SOL_SOCKET &&
			 c->cmsg_type == SCM_RIGHTS)
			for (int *fd = (int *)CMSG_DATA(c);
			     (char *)fd < (char *)c + c->cmsg_len; fd++)
				close(*fd);
	}
	if ((msg.msg_flags & MSG_TRUNC) || cred.pid <= 0 ||
	    !mw_message_parse(buf, len, &m)) {
		log_debug("notify socket: ignoring a message from pid %d",
			  cred.pid);
		return TRUE;
	}
	n->fn(&m, cred.pid, n->data);
	mw_message_clear(&m);
	return TRUE;
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	while (receive_one(data))
		;
	return G_SOURCE_CONTINUE;
}

static struct mw_notify *watch(int fd, const char *path, mw_notify_fn fn,
			       gpointer data)
{
	struct mw_notify *n = g_new0(struct mw_notify, 1);
	int on = 1;

	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
	*n = (struct mw_notify){
		.fd = fd,
		.path = g_strdup(path),
		.fn = fn,
		.data = data,
	};
	n->source = g_unix_fd_add(fd, G_IO_IN, on_readable, n);
	return n;
}

struct mw_notify *mw_notify_listen(const char *path, mw_notify_fn fn,
				   gpointer data, GError **error)
{
	struct sockaddr_un a;
	mode_t old_umask;
	int fd, r;

	if (!unixsock_address(&a, path, error))
		return NULL;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* A socket someone still reads is not a leftover to replace. A
	 * refused connect leaves ours unconnected, free to bind. */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
			    "notify socket %s is in use", path);
		return NULL;
	}
	g_unlink(path);
	old_umask = umask(0177);
	r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old_umask);
	if (r < 0)
		goto fail;
	return watch(fd, path, fn, data);
fail:
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "notify socket %s: %s", path, g_strerror(errno));
	if (fd >= 0)
		close(fd);
	return NULL;
}

gboolean mw_notify_fd_is(int fd, const char *path)
{
	struct sockaddr_un a;
	socklen_t alen = sizeof(a);
	int type;
	socklen_t tlen = sizeof(type);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 &&
	       type == SOCK_DGRAM &&
	       getsockname(fd, (struct sockaddr *)&a, &alen) == 0 &&
	       a.sun_family == AF_UNIX &&
	       strncmp(a.sun_path, path, sizeof(a.sun_path)) == 0;
}

struct mw_notify *mw_notify_adopt(int fd, const char *path, mw_notify_fn fn,
				  gpointer data)
{
	if (!mw_notify_fd_is(fd, path))
		return NULL;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return watch(fd, path, fn, data);
}

const char *mw_notify_path(const struct mw_notify *n)
{
	return n->path;
}

int mw_notify_upgrade_fd(struct mw_notify *n)
{
	fcntl(n->fd, F_SETFD, 0);
	return n->fd;
}

void mw_notify_reclaim_fd(struct mw_notify *n)
{
	fcntl(n->fd, F_SETFD, FD_CLOEXEC);
}

void mw_notify_free(struct mw_notify *n)
{
	if (!n)
		return;
	g_source_remove(n->source);
	close(n->fd);
	g_unlink(n->path);
	g_free(n->path);
	g_free(n);
}
