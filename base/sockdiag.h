/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The listening TCP sockets of this process's network namespace, asked of
 * the kernel through NETLINK_SOCK_DIAG (inet_diag). Reading
 * /proc/net/tcp{,6} gives the same answer but makes the kernel walk every
 * connection of the namespace (its established hash, TIME_WAIT included):
 * a dump limited to the LISTEN state walks only the listening hash, so it
 * costs the same on a host with no connections and one with 100,000.
 */
#pragma once

#include <glib.h>

/*
 * The inodes (guint64 keys, the set proc_net_tcp_listeners returns) of
 * the IPv4 and IPv6 TCP sockets in LISTEN state of the namespace the
 * caller is in. NULL with error set when the kernel cannot be asked (no
 * netlink or inet_diag, a seccomp filter refusing it: EPERM) or its answer
 * cannot be read: the caller then reads /proc/net instead.
 */
GHashTable *sockdiag_tcp_listeners(GError **error);
