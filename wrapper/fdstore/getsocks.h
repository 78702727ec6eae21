/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A server of haproxy's "_getsocks" exchange: a haproxy 1.8 or later
 * started with -x PATH takes the listening sockets the wrapper holds (the
 * ones systemd kept for it across a restart) instead of binding new ones,
 * so that nothing queued on them is refused or reset.
 *
 * The exchange, as haproxy's -x client expects it: the line "_getsocks\n";
 * the number of descriptors alone (an int, no descriptor attached); then
 * batches of at most GETSOCKS_BATCH descriptors, each one message with the
 * descriptors and, for each, a record (namespace name, interface name,
 * options); the client acknowledges every message with an int before the
 * next one comes.
 */
#pragma once

#include <glib.h>

/* haproxy 2.6 and later read at most 252 descriptors a message (253
 * before): the smaller fits every version. */
#define GETSOCKS_BATCH 252

/* The options word of a record, as haproxy 1.8 to 2.2 compare it with the
 * bind line's (later versions read it from the socket and ignore this). */
#define GETSOCKS_OPT_FOREIGN	0x0002
#define GETSOCKS_OPT_V6ONLY	0x0400
#define GETSOCKS_OPT_V4V6	0x0800

/* One descriptor offered, with its record. */
struct getsocks_offer {
	int fd;
	gchar *iface;		/* SO_BINDTODEVICE, or NULL */
	guint32 options;
};

/*
 * What is offered for these listening sockets. haproxy 1.8 to 2.2 match
 * an IPv6 socket to a bind line by the options of its record, and a
 * record carries one set: with option_copies (haproxy < 2.3), such a
 * socket is offered once for each set its bind line may have had (the
 * copies the haproxy does not match are duplicates it closes). Later
 * versions read the options from the socket itself, and copies would only
 * let two bind lines of one address (shards) share one socket. Sockets
 * that are not stream sockets of AF_INET, AF_INET6 or AF_UNIX are left
 * out.
 */
GArray *getsocks_offers(const int *fds, guint n_fds, gboolean option_copies);

/* The bytes of one batch's records, in the offers' order. */
GByteArray *getsocks_records(const struct getsocks_offer *offers, guint n);

/*
 * The other side: the listening sockets a haproxy exposes on path (a
 * stats socket with "expose-fd listeners"), asked as a haproxy started
 * with -x asks them; our copies, close-on-exec. Needs no ptrace rights,
 * unlike pidfd_getfd(). Blocks, at most about a second a read. One batch
 * at a time: fn gets each descriptor (its own to close) as its batch
 * comes, so that no more than a batch is held. FALSE, with error, if not
 * all came (those that did were given).
 */
typedef void (*getsocks_fd_fn)(int fd, gpointer data);
gboolean getsocks_fetch_each(const char *path, getsocks_fd_fn fn,
			     gpointer data, GError **error);

struct getsocks_server;

/*
 * Listens on PATH (mode 0600; an old socket there is replaced) and hands
 * FDS to the process named by getsocks_server_expect(), every time it
 * asks, until freed. The descriptors themselves, none duplicated: a
 * restart hands back thousands of listening sockets, and copies would
 * take as many descriptors again. On success they are the server's (the
 * ones it does not offer closed now, the others when it is freed); on
 * failure they stay the caller's. Refuses an empty set: haproxy 1.8 to
 * 2.2 take a count of 0 for a failure, so -x is better left out then.
 */
struct getsocks_server *getsocks_server_take(const char *path, const int *fds,
					     guint n_fds,
					     gboolean option_copies,
					     GError **error);
/*
 * The one process it answers from now on: pid, the haproxy just launched,
 * an unreaped child of the caller (so that its pid names it), or a
 * process it forked (in master-worker mode haproxy 3.4, for one, asks
 * from the worker, 3.0 from the master). Until then, and once that
 * process has ended, every client is refused, whatever its uid. Where the
 * kernel tells the peer's pidfd (SO_PEERPIDFD, Linux >= 6.5), a client
 * that ended since it connected is refused too: its pid may name another
 * process by then.
 */
void getsocks_server_expect(struct getsocks_server *s, GPid pid);
const char *getsocks_server_path(const struct getsocks_server *s);
/* Closes the socket, its clients and the descriptors it was given, and
 * removes PATH. */
void getsocks_server_free(struct getsocks_server *s);

typedef struct getsocks_server GetsocksServer;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GetsocksServer, getsocks_server_free)
