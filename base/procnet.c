/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sockets a process holds, and the TCP listeners of its network
 * namespace, from /proc. */
#include "base/procnet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/sockdiag.h"

guint64 proc_socket_inode(GPid pid, const char *fd_name)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/fd/%s", pid, fd_name);
	g_autofree gchar *target = g_file_read_link(link, NULL);

	if (!target || !g_str_has_prefix(target, "socket:["))
		return 0;
	return g_ascii_strtoull(target + 8, NULL, 10);
}

guint64 fd_socket_inode(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? st.st_ino : 0;
}

/* 1 listening, 0 not, -1 when it cannot be told (pidfd_getfd refused). */
static int fd_listens(int pidfd, int fd)
{
	int dup = pidfd_getfd(pidfd, fd, 0);
	int listening = 0;
	socklen_t len = sizeof(listening);

	if (dup < 0)
		return -1;
	if (getsockopt(dup, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0)
		listening = 0;
	close(dup);
	return listening ? 1 : 0;
}

static GHashTable *inode_set_new(void)
{
	return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

/*
 * The LISTEN (0A) entries of net_dir's tcp or tcp6 table: the kernel
 * lists the listening sockets first, so the read stops at the first other
 * one. With addresses, each inode maps to "TABLE:LOCAL"; else the inodes
 * make a set.
 */
static void add_tcp_listeners(GHashTable *out, const char *net_dir,
			      const char *table, gboolean addresses)
{
	g_autofree gchar *path = g_build_filename(net_dir, table, NULL);
	FILE *f = fopen(path, "re");
	g_autofree char *line = NULL;
	size_t size = 0;
	char local[64], st[3];
	guint64 ino;

	if (!f)
		return;
	/* After the header: sl local rem st queues tr retrnsmt uid timeout
	 * inode ... */
	if (getline(&line, &size, f) > 0)
		while (getline(&line, &size, f) > 0 &&
		       sscanf(line, "%*s %63s %*s %2s %*s %*s %*s %*s %*s %"
			      G_GUINT64_FORMAT, local, st, &ino) == 3 &&
		       strcmp(st, "0A") == 0) {
			if (!ino)
				continue;
			if (addresses)
				g_hash_table_insert(out,
						    g_memdup2(&ino, sizeof(ino)),
						    g_strdup_printf("%s:%s",
								    table,
								    local));
			else
				g_hash_table_add(out,
						 g_memdup2(&ino, sizeof(ino)));
		}
	fclose(f);
}

GHashTable *proc_net_listener_addresses(void)
{
	GHashTable *out = g_hash_table_new_full(g_int64_hash, g_int64_equal,
						g_free, g_free);

	add_tcp_listeners(out, "/proc/net", "tcp", TRUE);
	add_tcp_listeners(out, "/proc/net", "tcp6", TRUE);
	return out;
}

GHashTable *proc_net_tcp_listeners(const char *net_dir)
{
	GHashTable *inodes = inode_set_new();

	add_tcp_listeners(inodes, net_dir, "tcp", FALSE);
	add_tcp_listeners(inodes, net_dir, "tcp6", FALSE);
	return inodes;
}

gboolean proc_same_netns(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/ns/net", pid);
	struct stat self, other;

	/* Another user's process: ns/net needs ptrace access. */
	return stat("/proc/self/ns/net", &self) == 0 &&
	       stat(path, &other) == 0 && self.st_dev == other.st_dev &&
	       self.st_ino == other.st_ino;
}

GHashTable *proc_tcp_listeners(GPid pid)
{
	g_autofree gchar *net_dir = NULL;

	/* sock_diag answers for our namespace only. */
	if (proc_same_netns(pid)) {
		GHashTable *inodes = sockdiag_tcp_listeners(NULL);

		if (inodes)
			return inodes;
	}
	net_dir = g_strdup_printf("/proc/%d/net", pid);
	return proc_net_tcp_listeners(net_dir);
}

GHashTable *proc_listening_inodes(GPid pid)
{
	g_autofree gchar *dir_path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	g_autoptr(GHashTable) net = NULL;
	GHashTable *inodes;
	const char *name;
	int pidfd = pidfd_open(pid, 0);

	if (pidfd < 0 || !dir) {
		if (pidfd >= 0)
			close(pidfd);
		return NULL;
	}
	inodes = inode_set_new();
	while ((name = g_dir_read_name(dir))) {
		guint64 ino = proc_socket_inode(pid, name);
		int listens = ino ? fd_listens(pidfd, atoi(name)) : 0;

		if (listens < 0 && !net)
			net = proc_tcp_listeners(pid);
		if (listens > 0 ||
		    (listens < 0 && g_hash_table_contains(net, &ino)))
			g_hash_table_add(inodes, g_memdup2(&ino, sizeof(ino)));
	}
	close(pidfd);
	return inodes;
}

/*
 * Gives fn our copy of each listening stream socket that the process of
 * pidfd (pid) holds, those in seen left out and added to it. FALSE when
 * one of them cannot be taken; a process that ended meanwhile holds
 * nothing any more, and *gone says so.
 */
static gboolean each_listening(GPid pid, int pidfd, GHashTable *seen,
			       proc_fd_fn fn, gpointer data, gboolean *gone)
{
	g_autofree gchar *dir_path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	const char *name;

	*gone = FALSE;
	if (!dir)
		return FALSE;
	while ((name = g_dir_read_name(dir))) {
		guint64 ino = proc_socket_inode(pid, name);
		int listening = 0, type = 0, fd;
		socklen_t len = sizeof(int);

		if (!ino || g_hash_table_contains(seen, &ino))
			continue;
		fd = pidfd_getfd(pidfd, atoi(name), 0);
		/* Closed since it was listed: not a socket of its any more. */
		if (fd < 0 && errno == EBADF)
			continue;
		if (fd < 0) {
			*gone = errno == ESRCH;
			return FALSE;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening,
			       &len) == 0 && listening &&
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
		    type == SOCK_STREAM) {
			g_hash_table_add(seen, g_memdup2(&ino, sizeof(ino)));
			fn(fd, data);
		} else {
			close(fd);
		}
	}
	return TRUE;
}

gboolean proc_listening_each(GPid pid, proc_fd_fn fn, gpointer data)
{
	g_autoptr(GHashTable) seen = inode_set_new();
	int pidfd = pidfd_open(pid, 0);
	gboolean complete, gone;

	complete = pidfd >= 0 &&
		   each_listening(pid, pidfd, seen, fn, data, &gone);
	if (pidfd >= 0)
		close(pidfd);
	return complete;
}

/* Does pid run the executable parent runs? A forked worker does; a
 * program a haproxy master runs (its program sections) does not. */
static gboolean same_image(GPid parent, GPid pid)
{
	g_autofree gchar *a = g_strdup_printf("/proc/%d/exe", parent);
	g_autofree gchar *b = g_strdup_printf("/proc/%d/exe", pid);
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

gboolean proc_children_listening_each(GPid parent, const GArray *children,
				      proc_fd_fn fn, gpointer data)
{
	g_autoptr(GHashTable) seen = inode_set_new();
	guint taken = 0;

	for (guint i = 0; i < children->len; i++) {
		GPid pid = g_array_index(children, GPid, i);
		int pidfd = proc_open_if_child_of(pid, parent);
		gboolean ok, gone = FALSE;

		/* Ended, or its pid another's since: nothing of ours. */
		if (pidfd < 0 && errno == ESRCH)
			continue;
		if (pidfd < 0)
			return FALSE;
		/* Checked once the pidfd pins it: not a worker, its sockets
		 * are no haproxy's. */
		if (!same_image(parent, pid)) {
			close(pidfd);
			continue;
		}
		ok = each_listening(pid, pidfd, seen, fn, data, &gone);
		close(pidfd);
		if (!ok && !gone)
			return FALSE;
		taken += ok;
	}
	return taken > 0;
}

gboolean proc_holds_any_socket(GPid pid, GHashTable *inodes)
{
	g_autofree gchar *dir_path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		guint64 ino = proc_socket_inode(pid, name);

		if (ino && g_hash_table_contains(inodes, &ino))
			return TRUE;
	}
	return FALSE;
}
