/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Listening sockets parked in systemd's fd store (fdstore.h says why). */
#include "wrapper/fdstore/fdstore.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/fdlimit.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/procnet.h"
#include "base/sdlib.h"
#include "wrapper/fdstore/getsocks.h"

/* "l" and the socket's inode in hex: short, so that 10,000 and more fit
 * in LISTEN_FDNAMES= (see NAMES_MAX). Releases up to 0.1 stored them as
 * listener-INODE in decimal: read too, and kept under that name. */
#define NAME_PREFIX "l"
#define OLD_NAME_PREFIX "listener-"
/* Where the store's names are kept for a new image of the wrapper after
 * a self-upgrade, which gets no LISTEN_FDS. */
#define NAMES_FILE "fdstore.names"
#define SERVER_SOCKET "stored.sock"
/* sd_listen_fds(3): the first descriptor passed. */
#define LISTEN_FDS_START 3
/* How long a stop waits for systemd to have dropped them. */
#define STOP_BARRIER_USEC (1 * G_USEC_PER_SEC)

struct fdstore {
	enum fdstore_policy policy;
	gchar *rundir;
	gchar *expose_sock;	/* where each generation exposes its own */
	GHashTable *stored;	/* inode (guint64 *) -> the name it is under */
	GArray *handed;		/* int: what systemd gave us at start */
	struct getsocks_server *server;
	gboolean systemd_handed;	/* LISTEN_FDS was ours */
	gboolean unit_store_seen;	/* and held some of our names */
	gboolean first_decided;
	gboolean told;
	gboolean told_unusable;	/* the one notice that the store is unused */
	gboolean told_max;	/* FileDescriptorStoreMax= too low: said */
	gboolean told_names;	/* LISTEN_FDNAMES= would be too long: said */
};

static gchar *name_of(guint64 inode)
{
	return g_strdup_printf(NAME_PREFIX "%" G_GINT64_MODIFIER "x", inode);
}

static gboolean digits_in_base(const char *s, guint base, guint64 *n)
{
	for (const char *c = s; *c; c++)
		if (!g_ascii_isxdigit(*c) ||
		    (guint)g_ascii_xdigit_value(*c) >= base)
			return FALSE;
	return g_ascii_string_to_unsigned(s, base, 1, G_MAXUINT64, n, NULL);
}

static gboolean inode_of_name(const char *name, guint64 *inode)
{
	if (g_str_has_prefix(name, OLD_NAME_PREFIX))
		return digits_in_base(name + strlen(OLD_NAME_PREFIX), 10,
				      inode);
	return g_str_has_prefix(name, NAME_PREFIX) &&
	       digits_in_base(name + strlen(NAME_PREFIX), 16, inode);
}

/* Stored under name: NULL for ours now. */
static void remember(struct fdstore *st, guint64 inode, const char *name)
{
	g_hash_table_insert(st->stored, g_memdup2(&inode, sizeof(inode)),
			    name ? g_strdup(name) : name_of(inode));
}

/* The highest descriptor open in this process, or -1. */
static int highest_open_fd(void)
{
	g_autoptr(GDir) d = g_dir_open("/proc/self/fd", 0, NULL);
	struct rlimit rl;
	const char *name;
	int highest = -1;

	if (d) {
		while ((name = g_dir_read_name(d)))
			highest = MAX(highest, atoi(name));
		return highest;
	}
	/* Without /proc: none can be above the limit it was opened under. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return MIN(rl.rlim_cur, (rlim_t)G_MAXINT) - 1;
	return G_MAXINT - 1;
}

/*
 * LISTEN_FDS is for us only when LISTEN_PID is our pid (sd_listen_fds).
 * Any count is read: what is really open bounds it, so that the cost is
 * what systemd handed, not what the variable says.
 */
static guint listen_fds_for_us(void)
{
	const char *pid = g_getenv("LISTEN_PID");
	const char *n = g_getenv("LISTEN_FDS");
	guint64 count;
	GPid p;
	int highest;

	if (!pid || !n || !proc_parse_pid(pid, &p) || p != getpid())
		return 0;
	if (!g_ascii_string_to_unsigned(n, 10, 0, G_MAXUINT64, &count,
					NULL)) {
		g_autofree gchar *text = escape_untrusted(n, 32);

		log_notice("LISTEN_FDS=%s is not a count: the descriptors "
			   "systemd handed are not used", text);
		return 0;
	}
	highest = highest_open_fd();
	if (highest < LISTEN_FDS_START)
		return 0;
	return MIN(count, (guint64)(highest - LISTEN_FDS_START + 1));
}

static gboolean ours_at(int fd, const char *name)
{
	guint64 named;

	return name && inode_of_name(name, &named) &&
	       fd_socket_inode(fd) == named;
}

/* The names of what is not ours, for the notice: a few, escaped. */
#define OTHER_NAMES_TOLD 4

static void note_other(GPtrArray *told, const char *name)
{
	g_autofree gchar *text = escape_untrusted(name && *name ? name :
						  "(no name)", 64);

	if (told->len > OTHER_NAMES_TOLD)
		return;
	for (guint i = 0; i < told->len; i++)
		if (g_str_equal(g_ptr_array_index(told, i), text))
			return;
	g_ptr_array_add(told, told->len < OTHER_NAMES_TOLD ?
			g_steal_pointer(&text) : g_strdup("..."));
}

/*
 * Ours are named listener-INODE and are that very socket. Anything else
 * handed to us (a .socket unit's, for haproxy or not) is closed at once,
 * with one notice: kept, a listener would stay in haproxy's SO_REUSEPORT
 * group and take a share of the connections, which nobody accepts.
 */
static void take_handed(struct fdstore *st, guint n)
{
	g_auto(GStrv) names = g_strsplit(g_getenv("LISTEN_FDNAMES") ?: "",
					 ":", -1);
	guint n_names = g_strv_length(names);
	g_autoptr(GPtrArray) told = g_ptr_array_new_with_free_func(g_free);
	guint others = 0;

	for (guint i = 0; i < n; i++) {
		int fd = LISTEN_FDS_START + i;
		const char *name = i < n_names ? names[i] : NULL;

		/* Nothing there: the count said more than was handed. */
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		if (!ours_at(fd, name)) {
			note_other(told, name);
			close(fd);
			others++;
			continue;
		}
		/* Ours from now on: no haproxy inherits them. */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		g_array_append_val(st->handed, fd);
		remember(st, fd_socket_inode(fd), name);
	}
	if (others) {
		g_autofree gchar *which = NULL;

		g_ptr_array_add(told, NULL);
		which = g_strjoinv(", ", (gchar **)told->pdata);
		log_notice("%u descriptors handed in LISTEN_FDS are not the fd "
			   "store's (%s): closed; haproxy binds its own "
			   "sockets, a .socket unit's are not used", others,
			   which);
	}
	g_unsetenv("LISTEN_PID");
	g_unsetenv("LISTEN_FDS");
	g_unsetenv("LISTEN_FDNAMES");
	g_unsetenv("LISTEN_PIDFDID");
}

/* After our own exec: what the image before us had stored. */
static void read_names(struct fdstore *st)
{
	g_autofree gchar *path = NULL;
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!st->rundir)
		return;
	path = g_build_filename(st->rundir, NAMES_FILE, NULL);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++) {
		guint64 inode;

		if (inode_of_name(lines[i], &inode))
			remember(st, inode, lines[i]);
	}
}

static void write_names(struct fdstore *st)
{
	g_autoptr(GString) text = g_string_new(NULL);
	g_autofree gchar *path = NULL;
	GHashTableIter it;
	gpointer name;

	if (!st->rundir)
		return;
	g_hash_table_iter_init(&it, st->stored);
	while (g_hash_table_iter_next(&it, NULL, &name))
		g_string_append_printf(text, "%s\n", (const char *)name);
	path = g_build_filename(st->rundir, NAMES_FILE, NULL);
	g_file_set_contents(path, text->str, text->len, NULL);
}

struct fdstore *fdstore_new(enum fdstore_policy policy)
{
	struct fdstore *st = g_new0(struct fdstore, 1);
	guint n;

	st->policy = policy;
	st->stored = g_hash_table_new_full(g_int64_hash, g_int64_equal,
					   g_free, g_free);
	st->handed = g_array_new(FALSE, FALSE, sizeof(int));
	n = listen_fds_for_us();
	st->systemd_handed = n > 0;
	take_handed(st, n);
	st->unit_store_seen = st->handed->len > 0;
	return st;
}

void fdstore_set_rundir(struct fdstore *st, const char *rundir,
			const char *expose_sock)
{
	if (!st)
		return;
	g_free(st->rundir);
	st->rundir = g_strdup(rundir);
	g_free(st->expose_sock);
	st->expose_sock = g_strdup(expose_sock);
	if (!st->systemd_handed)
		read_names(st);
	else if (g_hash_table_size(st->stored))
		/* The names systemd keeps them under, for an image of ours
		 * after a self-upgrade, which gets no LISTEN_FDS. */
		write_names(st);
}

/* The unit's FileDescriptorStoreMax=, as systemd 254 and later tell it
 * in $FDSTORE; 0 when unknown. */
static guint store_max(void)
{
	const char *max = g_getenv("FDSTORE");
	guint64 n;

	return max && g_ascii_string_to_unsigned(max, 10, 1, G_MAXUINT, &n,
						 NULL) ? (guint)n : 0;
}

/* Before systemd 254 (no $FDSTORE), --fd-store=on says the unit has a
 * store, or systemd itself by handing some back. Storing without one
 * would get a warning in the journal at every reload. */
static gboolean unit_has_store(const struct fdstore *st)
{
	if (st->policy == FDSTORE_OFF || !g_getenv("NOTIFY_SOCKET"))
		return FALSE;
	return st->policy == FDSTORE_ON || st->unit_store_seen ||
	       store_max() > 0;
}

static void take_out(struct fdstore *st, guint64 inode)
{
	g_autofree gchar *msg = g_strdup_printf(
		"FDSTOREREMOVE=1\nFDNAME=%s",
		(const char *)g_hash_table_lookup(st->stored, &inode));

	sdlib_notify(msg);
	g_hash_table_remove(st->stored, &inode);
}

static void close_handed(struct fdstore *st)
{
	for (guint i = 0; i < st->handed->len; i++)
		close(g_array_index(st->handed, int, i));
	g_array_set_size(st->handed, 0);
}

void fdstore_empty(struct fdstore *st, const char *why)
{
	g_autofree guint64 **inodes = NULL;
	guint n;

	if (!st || !g_hash_table_size(st->stored))
		return;
	if (st->handed->len)
		log_notice("%u listening sockets kept by systemd across the "
			   "restart are closed (%s): connections waiting on "
			   "them are lost", st->handed->len, why);
	else
		log_info("systemd's fd store emptied: %s", why);
	inodes = (guint64 **)g_hash_table_get_keys_as_array(st->stored, &n);
	for (guint i = 0; i < n; i++)
		take_out(st, *inodes[i]);
	close_handed(st);
	write_names(st);
}

/* -x: haproxy 1.8 and later, standalone (-db) or master-worker (-Ws: the
 * master, or from 3.1 its first worker, asks at its first start). */
static gboolean mode_takes_over(enum launch_mode mode)
{
	return mode == LAUNCH_DB || mode == LAUNCH_MW;
}

const char *fdstore_first_source(struct fdstore *st,
				 const struct haproxy_version *v,
				 enum launch_mode mode)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *path = NULL;

	if (!st)
		return NULL;
	if (st->first_decided)
		return st->server ? getsocks_server_path(st->server) : NULL;
	st->first_decided = TRUE;
	if (!st->handed->len)
		return NULL;
	if (st->policy == FDSTORE_OFF) {
		fdstore_empty(st, "--fd-store=off");
		return NULL;
	}
	if (!mode_takes_over(mode)) {
		fdstore_empty(st, "only haproxy 1.8 and later take them over");
		return NULL;
	}
	if (!st->rundir) {
		fdstore_empty(st, "no runtime directory");
		return NULL;
	}
	path = g_build_filename(st->rundir, SERVER_SOCKET, NULL);
	/* The server's from now on, not copies: thousands handed back
	 * would take as many descriptors again. */
	st->server = getsocks_server_take(
		path, &g_array_index(st->handed, int, 0), st->handed->len,
		haproxy_version_compare(v, 2, 3, 0) < 0, &error);
	if (!st->server) {
		fdstore_empty(st, error->message);
		return NULL;
	}
	log_info("generation 1 takes over %u listening sockets kept by "
		 "systemd", st->handed->len);
	g_array_set_size(st->handed, 0);
	return getsocks_server_path(st->server);
}

void fdstore_launched(struct fdstore *st, const struct generation *g)
{
	if (st && st->server)
		getsocks_server_expect(st->server, g->pid);
}

static gboolean tcp_listener(int fd)
{
	int domain = 0, type = 0, listening = 0;
	socklen_t len = sizeof(int);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
	       (domain == AF_INET || domain == AF_INET6) &&
	       getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_STREAM &&
	       getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) ==
		       0 && listening;
}

static gboolean put_in(struct fdstore *st, guint64 inode, int fd)
{
	g_autofree gchar *name = name_of(inode);
	/* FDPOLL=0: a listener haproxy paused reports a hangup, and PID 1
	 * would drop it. */
	g_autofree gchar *msg = g_strdup_printf("FDSTORE=1\nFDPOLL=0\n"
						"FDNAME=%s", name);
	int r = sdlib_notify_with_fds(msg, &fd, 1);

	if (r <= 0) {
		if (!st->told)
			log_notice("listening sockets not kept by systemd "
				   "(FDSTORE=1: %s): a restart will refuse "
				   "connections", r < 0 ? g_strerror(-r) :
				   "no notify socket");
		if (r == -EMFILE || r == -ENFILE)
			fdlimit_tell_short("storing the listening sockets", 0);
		st->told = TRUE;
		return FALSE;
	}
	remember(st, inode, name);
	return TRUE;
}

/* A unit with a store that this haproxy cannot use: said once, why. */
static void tell_unusable(struct fdstore *st, const struct generation *g)
{
	if (st->told_unusable || !unit_has_store(st))
		return;
	st->told_unusable = TRUE;
	log_notice("systemd's fd store is not used: haproxy %s cannot take "
		   "listening sockets over (-x needs 1.8 or later); a restart "
		   "refuses connections", g->version);
}

/*
 * systemd hands the names back as one environment string,
 * LISTEN_FDNAMES=NAME:NAME:..., and execve() refuses a string longer than
 * 128 KiB (MAX_ARG_STRLEN): the next start would fail. About 13,000
 * sockets fit (socket inodes have 8 hex digits at most).
 */
#define NAMES_MAX (128 * 1024 - sizeof("LISTEN_FDNAMES=") - 64)

/* Its name's share of LISTEN_FDNAMES=, with the separator. */
static gsize name_length(guint64 inode)
{
	g_autofree gchar *name = name_of(inode);

	return strlen(name) + 1;
}

static gsize names_length(GHashTable *stored)
{
	GHashTableIter it;
	gpointer name;
	gsize n = 0;

	g_hash_table_iter_init(&it, stored);
	while (g_hash_table_iter_next(&it, NULL, &name))
		n += strlen(name) + 1;
	return n;
}

/* A walk through the serving generation's listening sockets. */
struct walk {
	struct fdstore *st;
	GHashTable *serving;	/* their inodes (guint64 *) */
	guint max;		/* FileDescriptorStoreMax=, or 0 */
	guint room;		/* what a start can be handed back */
	guint added;
	guint over;		/* not stored: beyond the unit's maximum */
	guint beyond_room;	/* not stored: beyond room */
	gsize names;		/* LISTEN_FDNAMES= as stored */
	guint beyond_names;	/* not stored: it would be too long */
};

/*
 * One of them, our copy, stored unless it is already, then closed: one
 * held at a time (a batch of the -x exchange), not all of them at once,
 * whatever their number.
 */
static void walk_one(int fd, gpointer data)
{
	struct walk *w = data;
	guint64 inode = fd_socket_inode(fd);

	/* A socket exposed twice (shards sharing one) is one. */
	if (!inode || !tcp_listener(fd) ||
	    !g_hash_table_add(w->serving, g_memdup2(&inode, sizeof(inode))) ||
	    g_hash_table_contains(w->st->stored, &inode)) {
		close(fd);
		return;
	}
	if (w->max && g_hash_table_size(w->st->stored) >= w->max)
		w->over++;
	else if (g_hash_table_size(w->st->stored) >= w->room)
		w->beyond_room++;
	else if (w->names + name_length(inode) > NAMES_MAX)
		w->beyond_names++;
	else if (put_in(w->st, inode, fd)) {
		w->added++;
		w->names += name_length(inode);
	}
	close(fd);
}

/*
 * Every one walked; FALSE when they cannot all be known. A standalone
 * generation's are asked of its exposed stats socket, as a new haproxy
 * would ask, since that needs no ptrace rights and a container's seccomp
 * filter may refuse pidfd_getfd. When it exposes none, or the asking
 * fails, they are taken from its descriptors.
 */
static gboolean walk_serving(struct fdstore *st, const struct generation *g,
			     struct walk *w)
{
	g_autoptr(GError) error = NULL;
	gboolean workers = g->mode == LAUNCH_MW && g->workers &&
			   g->workers->len;

	/* A master closes its own copies once its workers are forked: they
	 * hold them, each only those of its process under nbproc. Their
	 * exposed stats socket is shared with the workers a reload retires,
	 * which may answer with the old configuration's listeners until
	 * they stop: the current ones are asked first. */
	if (workers && proc_children_listening_each(g->pid, g->workers,
						    walk_one, w))
		return TRUE;
	if (g->exposes && st->expose_sock) {
		if (getsocks_fetch_each(st->expose_sock, walk_one, w, &error))
			return TRUE;
		log_debug("fd store: %s", error->message);
	}
	if (workers)
		return FALSE;
	return proc_listening_each(g->pid, walk_one, w);
}

/*
 * systemd hands the store back at descriptors 3, 4, ... of the next start,
 * under the unit's soft limit: systemd cannot place one at or above it
 * (or the program cannot load its libraries for want of a lower one), and
 * the start fails. What is stored stays below it, with room for the
 * wrapper to start; beyond, a restart refuses connections on the rest,
 * said once.
 */
#define START_HEADROOM 64

static guint handback_room(void)
{
	guint soft = fdlimit_unit_soft();

	return soft > LISTEN_FDS_START + START_HEADROOM ?
		       soft - LISTEN_FDS_START - START_HEADROOM : 0;
}

static void tell_beyond_room(const struct walk *w)
{
	g_autofree gchar *what = NULL;

	if (!w->beyond_room)
		return;
	what = g_strdup_printf("fd store: %u listening sockets, %u not kept "
			       "(a restart refuses connections on them): "
			       "keeping them all", g_hash_table_size(w->serving),
			       w->beyond_room);
	fdlimit_tell_short(what, g_hash_table_size(w->serving) +
				 LISTEN_FDS_START + START_HEADROOM);
}

static void tell_beyond_names(struct fdstore *st, const struct walk *w)
{
	if (!w->beyond_names || st->told_names)
		return;
	st->told_names = TRUE;
	log_notice("fd store: %u listening sockets, %u not kept: systemd "
		   "hands their names back in one environment variable, "
		   "which execve() limits to 128 KiB (about 13,000 sockets); "
		   "a restart refuses connections on the others",
		   g_hash_table_size(w->serving), w->beyond_names);
}

static void tell_over_max(struct fdstore *st, const struct walk *w)
{
	if (!w->over || st->told_max)
		return;
	st->told_max = TRUE;
	log_notice("fd store: %u listening sockets, the unit keeps at most "
		   "%u: %u not kept, and a restart refuses connections on "
		   "them; raise FileDescriptorStoreMax= in the unit",
		   g_hash_table_size(w->serving), w->max, w->over);
}

void fdstore_serving(struct fdstore *st, const struct generation *g)
{
	g_autoptr(GHashTable) serving = NULL;
	g_autofree guint64 **stored = NULL;
	struct walk w = { .st = st, .max = store_max(),
			  .room = handback_room() };
	guint n, removed = 0;

	if (!st)
		return;
	w.names = names_length(st->stored);
	g_clear_pointer(&st->server, getsocks_server_free);
	if (!unit_has_store(st) || !mode_takes_over(g->mode)) {
		tell_unusable(st, g);
		fdstore_empty(st, "not storable");
		return;
	}
	/* g has taken them over: ours are no longer needed. */
	close_handed(st);
	serving = w.serving = g_hash_table_new_full(g_int64_hash,
						    g_int64_equal, g_free,
						    NULL);
	/* Unknown is not "none": nothing is taken out on a guess. */
	if (!walk_serving(st, g, &w)) {
		log_notice("fd store: the listening sockets of generation %u "
			   "(pid %d) cannot be listed; systemd keeps the ones "
			   "it had%s", g->number, g->pid,
			   w.added ? " and those it got now" : "");
		if (w.added)
			write_names(st);
		return;
	}
	tell_over_max(st, &w);
	tell_beyond_room(&w);
	tell_beyond_names(st, &w);
	/* What it does not listen on any more must not take connections. */
	stored = (guint64 **)g_hash_table_get_keys_as_array(st->stored, &n);
	for (guint i = 0; i < n; i++) {
		if (g_hash_table_contains(serving, stored[i]))
			continue;
		take_out(st, *stored[i]);
		removed++;
	}
	if (w.added || removed) {
		log_info("listening sockets kept by systemd: %u (%u added, %u "
			 "taken out)", g_hash_table_size(st->stored), w.added,
			 removed);
		write_names(st);
	}
}

void fdstore_stopping(struct fdstore *st)
{
	g_autoptr(GHashTable) listeners = NULL;
	g_autoptr(GHashTable) foreign = NULL;
	g_autofree guint64 **stored = NULL;
	GHashTableIter it;
	gpointer key, value;
	guint n, removed = 0;

	if (!st || !g_hash_table_size(st->stored))
		return;
	listeners = proc_net_listener_addresses();
	/* The addresses another process listens on. What is stored is the
	 * serving generation's, one socket or several on one address
	 * (shards, two bind lines, a bind per process): all ours. */
	foreign = g_hash_table_new(g_str_hash, g_str_equal);
	g_hash_table_iter_init(&it, listeners);
	while (g_hash_table_iter_next(&it, &key, &value))
		if (!g_hash_table_contains(st->stored, key))
			g_hash_table_add(foreign, value);
	stored = (guint64 **)g_hash_table_get_keys_as_array(st->stored, &n);
	for (guint i = 0; i < n; i++) {
		const char *address = g_hash_table_lookup(listeners, stored[i]);

		if (!address || !g_hash_table_contains(foreign, address))
			continue;
		take_out(st, *stored[i]);
		removed++;
	}
	if (removed) {
		log_info("%u listening sockets taken out of systemd's store: "
			 "another process listens on their addresses",
			 removed);
		write_names(st);
		/* Gone from PID 1 before haproxy lets go of them: until
		 * then, systemd's copy would take connections nobody
		 * accepts. */
		sdlib_notify_barrier(STOP_BARRIER_USEC);
	}
}

void fdstore_leave(struct fdstore *st)
{
	g_autofree gchar *path = NULL;

	if (!st)
		return;
	g_clear_pointer(&st->server, getsocks_server_free);
	if (!st->rundir)
		return;
	path = g_build_filename(st->rundir, NAMES_FILE, NULL);
	unlink(path);
}

void fdstore_free(struct fdstore *st)
{
	if (!st)
		return;
	getsocks_server_free(st->server);
	close_handed(st);
	g_array_free(st->handed, TRUE);
	g_hash_table_destroy(st->stored);
	g_free(st->rundir);
	g_free(st->expose_sock);
	g_free(st);
}
