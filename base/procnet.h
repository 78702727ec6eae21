/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sockets a process holds and the TCP listeners of its network
 * namespace, from /proc (and sock_diag, base/sockdiag.h, where it can
 * answer). Inode sets are GHashTables of guint64 keys.
 */
#pragma once

#include <glib.h>

/*
 * The inodes of the listening sockets pid holds, read by duplicating each
 * socket descriptor (pidfd_getfd: our own child, or root) and asking it
 * SO_ACCEPTCONN; where pidfd_getfd is refused (a seccomp filter), its
 * sockets found among the TCP listeners of its network namespace
 * (proc_tcp_listeners). NULL when pid's descriptors cannot be listed.
 */
GHashTable *proc_listening_inodes(GPid pid);

/* The inodes of the listening TCP sockets (IPv4 and IPv6) of a network
 * namespace, from net_dir's tcp and tcp6 tables ("/proc/PID/net" for
 * pid's): proc_tcp_listeners' path where sock_diag cannot answer. The
 * kernel walks every connection of the namespace to write them. */
GHashTable *proc_net_tcp_listeners(const char *net_dir);

/* The TCP sockets in LISTEN state (IPv4 and IPv6) of this process's
 * network namespace: inode (guint64 key) -> "tcp:ADDR:PORT" or
 * "tcp6:ADDR:PORT" as /proc/net prints them. */
GHashTable *proc_net_listener_addresses(void);
/* Is pid in this process's network namespace? FALSE when either one
 * cannot be read (another user's process: ptrace access needed). */
gboolean proc_same_netns(GPid pid);

/*
 * The inodes of the listening TCP sockets (IPv4 and IPv6) of pid's
 * network namespace. When it is ours, asked of the kernel through
 * sock_diag (base/sockdiag.h), which walks only the listening sockets;
 * otherwise, or when netlink is refused, read from /proc/PID/net, which
 * costs a walk of every connection of the namespace.
 */
GHashTable *proc_tcp_listeners(GPid pid);

/* The inode of the socket pid holds as descriptor fd_name ("socket:[N]"),
 * or 0 when it is not a socket or cannot be read. */
guint64 proc_socket_inode(GPid pid, const char *fd_name);

/* The same for one of our own descriptors, fd: its inode names the socket
 * whichever process holds a copy of it. */
guint64 fd_socket_inode(int fd);

/* Gives fn our own copy (pidfd_getfd, close-on-exec) of each listening
 * stream socket pid holds, one per socket, as it is taken, so that no
 * more than one is held here (fn's own to close). FALSE when they could
 * not all be taken (another user's process without ptrace rights, a
 * seccomp filter, no descriptor left); those that were, were given. */
typedef void (*proc_fd_fn)(int fd, gpointer data);
gboolean proc_listening_each(GPid pid, proc_fd_fn fn, gpointer data);
/*
 * The same for the processes children lists, each taken only if it is
 * still parent's child once a pidfd pins it and runs parent's executable
 * (a pid reused since by another process is left alone, as are a child
 * that ended and a program a haproxy master runs), one copy per socket
 * whichever of them hold it. FALSE when none could be read, or one's
 * sockets cannot all be taken.
 */
gboolean proc_children_listening_each(GPid parent, const GArray *children,
				      proc_fd_fn fn, gpointer data);
/* Does pid still hold a descriptor on one of these socket inodes? */
gboolean proc_holds_any_socket(GPid pid, GHashTable *inodes);
