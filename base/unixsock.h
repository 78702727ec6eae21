/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unix sockets the wrapper listens on and connects to. */
#pragma once

#include <sys/un.h>

#include <glib.h>

/* *a, the address of path; FALSE (errno ENAMETOOLONG, error "PATH: path
 * too long") when it does not fit. */
gboolean unixsock_address(struct sockaddr_un *a, const char *path,
			  GError **error);

/*
 * A listening stream socket at path (which must not exist), non-blocking
 * and close-on-exec, created 0600 from the start: there is no moment in
 * which another user may connect. -1 with error set ("PATH: why").
 */
int unixsock_listen_private(const char *path, GError **error);

/* Is the peer of a connection to such a socket root or our own user? Its
 * pid goes to *pid, when not NULL. */
gboolean unixsock_peer_trusted(int fd, pid_t *pid);
