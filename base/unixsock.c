/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/unixsock.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

gboolean unixsock_address(struct sockaddr_un *a, const char *path,
			  GError **error)
{
	*a = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a->sun_path)) {
		errno = ENAMETOOLONG;
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
			    "%s: path too long", path);
		return FALSE;
	}
	strcpy(a->sun_path, path);
	return TRUE;
}

gboolean unixsock_peer_trusted(int fd, pid_t *pid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return FALSE;
	if (pid)
		*pid = cred.pid;
	return cred.uid == 0 || cred.uid == geteuid();
}

int unixsock_listen_private(const char *path, GError **error)
{
	struct sockaddr_un a;
	mode_t old_umask;
	int fd, r;

	if (!unixsock_address(&a, path, error))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* The umask is process-wide; nothing else creates a file while it
	 * is changed. */
	old_umask = umask(0177);
	r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old_umask);
	if (r < 0 || listen(fd, 16) < 0)
		goto fail;
	return fd;
fail:
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "%s: %s", path, g_strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}
