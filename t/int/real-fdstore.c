/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Listening sockets kept in systemd's fd store across a restart, with the
 * real haproxy (1.8 and later). The test plays systemd's part: its notify
 * socket keeps what FDSTORE=1 sends and drops what FDSTOREREMOVE=1 names,
 * and the next wrapper gets what it kept as LISTEN_FDS. Between the two
 * wrappers no haproxy runs, and a connection made then is not refused: it
 * waits in the kept socket's backlog and the next generation 1 answers
 * it. 127.0.0.1 only; every wait is on a real event and bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/logs.h"
#include "t/lib/mastercli.h"
#include "t/lib/real.h"
#include "t/lib/takeover.h"

/* ---- systemd's part ---- */

struct pid1 {
	int fd;
	gchar *path;
	GHashTable *store;	/* FDNAME -> the fd + 1 */
	guint ready;		/* READY=1 seen */
	guint removed;		/* FDSTOREREMOVE=1 seen */
	gboolean marked;	/* the last one taken was pid1_drain's */
	/* PID 1 reads its notify socket at once, whatever the test does
	 * meanwhile: a thread receives (the socket's queue holds only
	 * net.unix.max_dgram_qlen messages, and the wrapper would block),
	 * the test takes what it received, in order. */
	GThread *reader;
	GAsyncQueue *received;	/* struct datagram * */
	gint stop;
};

struct datagram {
	gchar *text;
	int fd;			/* the first descriptor, or -1 */
};

static void datagram_free(gpointer data)
{
	struct datagram *d = data;

	if (d->fd >= 0)
		close(d->fd);
	g_free(d->text);
	g_free(d);
}

/* One message, or NULL after timeout_ms. Only its first descriptor is
 * kept: the wrapper stores one at a time. */
static struct datagram *receive(int fd, guint timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} control;
	char text[4096];
	struct iovec iov = { text, sizeof(text) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct datagram *d;
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return NULL;
	n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return NULL;
	d = g_new0(struct datagram, 1);
	d->text = g_strndup(text, n);
	d->fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
	     c = CMSG_NXTHDR(&msg, c)) {
		int *fds = (int *)CMSG_DATA(c);
		size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < count; i++) {
			int one;

			memcpy(&one, fds + i, sizeof(int));
			if (d->fd < 0)
				d->fd = one;
			else
				close(one);
		}
	}
	return d;
}

static gpointer pid1_read(gpointer data)
{
	struct pid1 *p = data;

	while (!g_atomic_int_get(&p->stop)) {
		struct datagram *d = receive(p->fd, 50);

		if (d)
			g_async_queue_push(p->received, d);
	}
	return NULL;
}

static void pid1_open(struct pid1 *p, const char *dir)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	p->path = g_build_filename(t_short_dir(dir), "pid1.sock", NULL);
	g_assert_cmpuint(strlen(p->path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, p->path);
	p->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_no_errno(bind(p->fd, (struct sockaddr *)&a, sizeof(a)));
	p->store = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					 NULL);
	p->received = g_async_queue_new_full(datagram_free);
	p->reader = g_thread_new("pid1", pid1_read, p);
}

static void pid1_close(struct pid1 *p)
{
	GHashTableIter it;
	gpointer fd;

	g_atomic_int_set(&p->stop, 1);
	g_thread_join(p->reader);
	g_async_queue_unref(p->received);
	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, NULL, &fd))
		close(GPOINTER_TO_INT(fd) - 1);
	g_hash_table_destroy(p->store);
	close(p->fd);
	unlink(p->path);
	g_free(p->path);
}

static const char *field(gchar **lines, const char *key)
{
	for (guint i = 0; lines[i]; i++)
		if (g_str_has_prefix(lines[i], key))
			return lines[i] + strlen(key);
	return NULL;
}

/* One message, as PID 1 takes it: its descriptors kept or dropped. */
static gboolean pid1_take(struct pid1 *p, guint timeout_ms)
{
	struct datagram *d = g_async_queue_timeout_pop(
		p->received, (guint64)timeout_ms * 1000);
	g_auto(GStrv) lines = NULL;
	const char *name;
	int got;

	if (!d)
		return FALSE;
	got = d->fd;
	d->fd = -1;
	lines = g_strsplit(d->text, "\n", -1);
	datagram_free(d);
	name = field(lines, "FDNAME=");
	p->marked = field(lines, "X-TEST-MARKER=1") != NULL;
	if (field(lines, "READY=1"))
		p->ready++;
	if (field(lines, "FDSTORE=1") && name && got >= 0) {
		g_hash_table_insert(p->store, g_strdup(name),
				    GINT_TO_POINTER(got + 1));
		got = -1;
	}
	if (field(lines, "FDSTOREREMOVE=1") && name) {
		gpointer key, fd;

		if (g_hash_table_steal_extended(p->store, name, &key, &fd)) {
			g_free(key);
			close(GPOINTER_TO_INT(fd) - 1);
		}
		p->removed++;
	}
	if (got >= 0)
		close(got);
	return TRUE;
}

/* Messages taken until the store holds n sockets (bounded: one message
 * a socket, 10,000 of them under ASan on a busy machine take long). */
static void pid1_until_stored(struct pid1 *p, guint n)
{
	gint64 end = t_deadline(T_WAIT + 3 * n);

	while (g_hash_table_size(p->store) != n && t_ms_left(end) > 0)
		pid1_take(p, t_ms_left(end));
	g_assert_cmpuint(g_hash_table_size(p->store), ==, n);
}

/* The kept socket listening on port, or -1. */
static int kept_for(struct pid1 *p, guint16 port)
{
	GHashTableIter it;
	gpointer v;

	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		int fd = GPOINTER_TO_INT(v) - 1;
		struct sockaddr_in a;
		socklen_t len = sizeof(a);

		if (getsockname(fd, (struct sockaddr *)&a, &len) == 0 &&
		    a.sin_family == AF_INET && ntohs(a.sin_port) == port)
			return fd;
	}
	return -1;
}

/* Every message sent so far, taken: a marker sent now comes after them
 * (one socket's datagrams keep their order). */
static void pid1_drain(struct pid1 *p)
{
	static const char marker[] = "X-TEST-MARKER=1";
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	gint64 end = t_deadline(T_WAIT);
	gboolean seen = FALSE;

	strcpy(a.sun_path, p->path);
	g_assert_cmpint(sendto(fd, marker, strlen(marker), 0,
			       (struct sockaddr *)&a, sizeof(a)), ==,
			strlen(marker));
	close(fd);
	while (!seen && t_ms_left(end) > 0)
		seen = pid1_take(p, t_ms_left(end)) && p->marked;
	g_assert_true(seen);
	p->marked = FALSE;
}

/* ---- the next wrapper, with LISTEN_FDS ---- */

struct handed {
	int fds[8];		/* kept, then others' */
	guint n;
	int filler;		/* handed filler_n times after them */
	guint filler_n;
};

/* After fork: the handed sockets at 3, 4, ... (moved out of the way
 * first, as the targets may be among them), room made for them all. */
static void put_listen_fds(gpointer data)
{
	struct handed *h = data;
	struct rlimit rl;
	int high[9];

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < h->filler_n + 256) {
		rl.rlim_cur = MIN(h->filler_n + 256, rl.rlim_max);
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (guint i = 0; i < h->n; i++)
		high[i] = fcntl(h->fds[i], F_DUPFD, 100);
	high[h->n] = h->filler_n ? fcntl(h->filler, F_DUPFD, 100) : -1;
	for (guint i = 0; i < h->n; i++) {
		dup2(high[i], 3 + i);
		close(high[i]);
	}
	for (guint i = 0; i < h->filler_n; i++)
		dup2(high[h->n], 3 + h->n + i);
	if (h->filler_n)
		close(high[h->n]);
}

/* What a .socket unit hands beside the store's: sockets under names not
 * ours, and one of them filler_n more times. */
struct others {
	int fds[4];
	const char *names[4];
	guint n;
	int filler;
	guint filler_n;
};

/* LISTEN_PID is the wrapper's own: the shell's, which execs it. */
static void start_handed(struct t_site *s, struct pid1 *p,
			 const char *const *opts, guint16 first_port,
			 const struct others *o)
{
	static const char *const prefix[] = {
		"/bin/sh", "-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"", NULL
	};
	g_autoptr(GPtrArray) args = t_site_args(s, opts);
	g_autoptr(GString) names = g_string_new(NULL);
	struct handed h = { 0 };
	GHashTableIter it;
	gpointer k, v;
	GPtrArray *env = g_ptr_array_new_with_free_func(g_free);

	for (int pass = first_port ? 0 : 1; pass < 2; pass++) {
		int first = first_port ? kept_for(p, first_port) : -1;

		g_hash_table_iter_init(&it, p->store);
		while (g_hash_table_iter_next(&it, &k, &v)) {
			int fd = GPOINTER_TO_INT(v) - 1;

			if ((pass == 0) != (fd == first))
				continue;
			g_assert_cmpuint(h.n, <, G_N_ELEMENTS(h.fds));
			h.fds[h.n++] = fd;
			g_string_append_printf(names, "%s%s",
					       names->len ? ":" : "",
					       (char *)k);
		}
	}
	for (guint i = 0; o && i < o->n; i++) {
		g_assert_cmpuint(h.n, <, G_N_ELEMENTS(h.fds));
		h.fds[h.n++] = o->fds[i];
		g_string_append_printf(names, "%s%s", names->len ? ":" : "",
				       o->names[i]);
	}
	if (o && o->filler_n) {
		h.filler = o->filler;
		h.filler_n = o->filler_n;
		for (guint i = 0; i < h.filler_n; i++)
			g_string_append(names, ":filler");
	}
	for (guint i = 0; i + 1 < s->env->len; i++)
		g_ptr_array_add(env, g_strdup(g_ptr_array_index(s->env, i)));
	g_ptr_array_add(env, g_strdup_printf("LISTEN_FDS=%u",
					     h.n + h.filler_n));
	g_ptr_array_add(env, g_strdup_printf("LISTEN_FDNAMES=%s", names->str));
	g_ptr_array_add(env, NULL);
	g_assert_null(s->w);
	s->w = wrapper_start_prefixed_setup(prefix,
					    (const char *const *)args->pdata,
					    (const char *const *)env->pdata,
					    put_listen_fds, &h);
	g_ptr_array_free(env, TRUE);
}

/* first_port (not 0): the socket kept for it is handed first. */
static void start_with_kept_first(struct t_site *s, struct pid1 *p,
				  const char *const *opts, guint16 first_port)
{
	start_handed(s, p, opts, first_port, NULL);
}

static void start_with_kept(struct t_site *s, struct pid1 *p,
			    const char *const *opts)
{
	start_with_kept_first(s, p, opts, 0);
}

/* ---- the tests ---- */

static void assert_refused(guint16 port)
{
	int fd = connect_port(port);

	if (fd >= 0)
		close(fd);
	g_assert_cmpint(fd, ==, -1);
	g_assert_cmpint(errno, ==, ECONNREFUSED);
}

/* A reload dropped the bind on port extra: the store keeps port's socket
 * alone, and nobody listens on extra any more, the store included. */
static void assert_bind_dropped(struct pid1 *p, guint16 port, guint16 extra)
{
	pid1_until_stored(p, 1);
	g_assert_cmpint(kept_for(p, extra), ==, -1);
	g_assert_cmpint(kept_for(p, port), >=, 0);
	assert_refused(extra);
}

static gboolean site_init_any(struct t_site *s, struct pid1 *p,
			      const char *extra)
{
	if (!t_site_init_real(s, extra))
		return FALSE;
	pid1_open(p, s->dir);
	t_site_setenv(s, "NOTIFY_SOCKET", p->path);
	s->with_runtime_dir = TRUE;
	return TRUE;
}

static gboolean site_init(struct t_site *s, struct pid1 *p, const char *extra)
{
	if (!t_site_init_real(s, extra))
		return FALSE;
	if (!t_haproxy_needs(1, 8, "-x")) {
		t_site_clear(s);
		return FALSE;
	}
	pid1_open(p, s->dir);
	t_site_setenv(s, "NOTIFY_SOCKET", p->path);
	s->with_runtime_dir = TRUE;
	return TRUE;
}

/* The wrapper stopped as systemctl restart stops it, and gone. */
static void stop_first(struct t_site *s)
{
	GPid haproxy = s->pid;

	wrapper_signal(s->w, SIGTERM);
	t_assert_exit_code(wrapper_wait_exit(s->w, T_WAIT), 0);
	g_assert_true(t_wait_gone(haproxy, T_WAIT));
	g_clear_pointer(&s->w, wrapper_free);
}

/* The pid in what port answers on fd (a request already sent). */
static GPid answered_by(int fd)
{
	g_autoptr(GString) resp = g_string_new(NULL);
	char buf[512];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(resp, buf, n);
	close(fd);
	return t_pid_in(resp->str, "pid=");
}

static const char request[] = "GET / HTTP/1.0\r\n\r\n";

/* A client of port that has sent its request: it waits in a kept socket's
 * backlog while no haproxy runs. Its answer is awaited T_WAIT at most. */
static int request_waiting(guint16 port)
{
	struct timeval tv = { .tv_sec = T_WAIT / 1000 };
	int fd = connect_port(port);

	g_assert_cmpint(fd, >=, 0);
	g_assert_no_errno(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				     sizeof(tv)));
	g_assert_cmpint(write(fd, request, strlen(request)), ==,
			strlen(request));
	return fd;
}

/* data: the wrapper's options. With -x (the default) the sockets are
 * asked of the exposed stats socket; without, taken with pidfd_getfd(). */
static void test_restart_refuses_nothing(gconstpointer data)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const *opts = data;
	guint64 inode;
	int waiting;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	pid1_until_stored(&p, 1);
	inode = fd_inode(kept_for(&p, s.port));
	g_assert_true(holds_inode(s.pid, inode));
	stop_first(&s);

	/* No haproxy runs: the kernel completes the handshake into the
	 * kept socket's backlog instead of refusing it. */
	waiting = request_waiting(s.port);

	start_with_kept(&s, &p, opts);
	real_serve(&s);
	g_assert_cmpint(answered_by(waiting), ==, s.pid);
	/* systemd's variables were the wrapper's, not haproxy's. */
	g_assert_false(t_environ_has(s.pid, "LISTEN_FDS"));
	g_assert_false(t_environ_has(s.pid, "LISTEN_PID"));
	g_assert_true(holds_inode(s.pid, inode));
	/* The same socket still kept, under the same name: nothing added
	 * (what the first READY sent came before this answer). */
	{
		g_autofree gchar *out = NULL;

		g_assert_cmpint(t_client("--status", s.rundir_opt, NULL, &out,
					 NULL), ==, 0);
		pid1_drain(&p);
	}
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 1);
	g_assert_cmpuint(fd_inode(kept_for(&p, s.port)), ==, inode);
	t_site_stop(&s);
	pid1_close(&p);
}

/* Without the store the same restart refuses the connection. */
static void test_restart_without_store_refuses(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=off", NULL };

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	stop_first(&s);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 0);
	assert_refused(s.port);
	pid1_close(&p);
}

/* The wrapper started with one more bind, on *extra, and both its
 * sockets stored; FALSE: the test does not apply (skipped). */
static gboolean start_with_extra_bind(struct t_site *s, struct pid1 *p,
				      const char *const *opts, guint16 *extra)
{
	g_autofree gchar *bind = NULL;

	*extra = t_free_port();
	bind = g_strdup_printf("    bind 127.0.0.1:%u\n", *extra);
	if (!site_init(s, p, bind))
		return FALSE;
	real_start(s, NULL, opts);
	pid1_until_stored(p, 2);
	return TRUE;
}

/* A bind the configuration drops is taken out of the store at the
 * reload that drops it: kept, it would take connections nobody accepts. */
static void test_bind_removed(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	guint16 extra;

	if (!start_with_extra_bind(&s, &p, opts, &extra))
		return;
	g_assert_cmpint(kept_for(&p, extra), >=, 0);
	t_site_config(&s, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	assert_bind_dropped(&p, s.port, extra);
	t_site_stop(&s);
	pid1_close(&p);
}

/* A bind added while the wrapper was down is bound by generation 1 and
 * joins the store; the kept one is taken over. */
static void test_bind_added_across_restart(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	guint16 extra = t_free_port();
	g_autofree gchar *bind = g_strdup_printf("    bind 127.0.0.1:%u\n",
						 extra);
	guint64 inode;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	pid1_until_stored(&p, 1);
	inode = fd_inode(kept_for(&p, s.port));
	stop_first(&s);
	t_site_config(&s, bind);
	start_with_kept(&s, &p, opts);
	real_serve(&s);
	pid1_until_stored(&p, 2);
	g_assert_cmpuint(fd_inode(kept_for(&p, s.port)), ==, inode);
	g_assert_cmpint(kept_for(&p, extra), >=, 0);
	g_assert_cmpint(t_wait_serving(extra, T_WAIT), ==, s.pid);
	t_site_stop(&s);
	pid1_close(&p);
}

/* What cannot take the kept sockets over (here, a wrapper told not to
 * use the store) gets none: they are closed and taken out, with a
 * notice, and haproxy binds its own. */
static void test_unusable_dropped(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const on[] = { "--fd-store=on", NULL };
	const char *const off[] = { "--fd-store=off", NULL };
	guint64 inode;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, on);
	pid1_until_stored(&p, 1);
	inode = fd_inode(kept_for(&p, s.port));
	stop_first(&s);
	start_with_kept(&s, &p, off);
	t_site_wait_log(&s, "listening sockets kept by systemd across the "
			"restart are closed");
	pid1_until_stored(&p, 0);
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), >, 0);
	{
		g_autoptr(GArray) on_port = tcp_inodes(s.port, 0, 0x0A);

		g_assert_cmpuint(on_port->len, >=, 1);
		for (guint i = 0; i < on_port->len; i++)
			g_assert_cmpuint(g_array_index(on_port, guint64, i),
					 !=, inode);
	}
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * A stop beside another listener of the same address (a bridge serving
 * while the unit stops, as the move between units does): the kept socket
 * is taken out at once, or it would take a share of the new connections
 * while haproxy drains, and systemd would reset them when the stop
 * releases the store.
 */
/* A listener of ours in haproxy's SO_REUSEPORT group on port. */
static int sibling_listener(guint16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_no_errno(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				     sizeof(one)));
	g_assert_no_errno(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
				     sizeof(one)));
	g_assert_no_errno(bind(fd, (struct sockaddr *)&a, sizeof(a)));
	g_assert_no_errno(listen(fd, 16));
	return fd;
}

static void test_stop_beside_another_listener(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	int sibling;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	pid1_until_stored(&p, 1);
	sibling = sibling_listener(s.port);
	g_assert_cmpint(sibling, >=, 0);
	wrapper_signal(s.w, SIGUSR1);
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 0);
	pid1_drain(&p);
	g_assert_cmpuint(p.removed, ==, 1);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 0);
	close(sibling);
	pid1_close(&p);
}

/*
 * Every stop leaves the store as a graceful one does, whichever door it
 * came through: the serving haproxy crashed (data: SIGKILL), or it ended
 * as a replaced one does and the search found nothing (SIGTERM). A kept
 * socket beside another listener would take a share of the connections
 * the next start, or nobody, accepts.
 */
static void test_end_beside_another_listener(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", "--master-worker=off",
				     NULL };
	int sibling;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	pid1_until_stored(&p, 1);
	sibling = sibling_listener(s.port);
	g_assert_cmpint(sibling, >=, 0);
	g_assert_no_errno(kill(s.pid, sig));
	t_assert_exit_code(wrapper_wait_exit(s.w, T_WAIT), 128 + sig);
	pid1_drain(&p);
	g_assert_cmpuint(p.removed, ==, 1);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 0);
	close(sibling);
	pid1_close(&p);
}

/* The inodes of every socket the store keeps. */
static GArray *kept_inodes(struct pid1 *p)
{
	GArray *inodes = g_array_new(FALSE, FALSE, sizeof(guint64));
	GHashTableIter it;
	gpointer v;

	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		guint64 inode = fd_inode(GPOINTER_TO_INT(v) - 1);

		g_array_append_val(inodes, inode);
	}
	return inodes;
}

/*
 * The -x server's copies of the handed sockets are all closed once
 * generation 1 serves, the first one offered too: a copy the wrapper kept
 * would go on listening after a reload drops its bind, taking connections
 * nobody accepts.
 */
static void test_handed_then_removed(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	guint16 extra;
	g_autoptr(GArray) inodes = NULL;

	if (!start_with_extra_bind(&s, &p, opts, &extra))
		return;
	inodes = kept_inodes(&p);
	stop_first(&s);
	/* The one to be dropped is the first offered. */
	start_with_kept_first(&s, &p, opts, extra);
	real_serve(&s);
	g_assert_true(holds_socket(s.pid, inodes));
	/* What the wrapper did at the serve came before this answer. */
	{
		g_autofree gchar *out = NULL;

		g_assert_cmpint(t_client("--status", s.rundir_opt, NULL, &out,
					 NULL), ==, 0);
	}
	for (guint i = 0; i < inodes->len; i++) {
		if (holds_inode(s.w->pid, g_array_index(inodes, guint64, i)))
			g_error("the wrapper still holds kept socket %"
				G_GUINT64_FORMAT, g_array_index(inodes,
								guint64, i));
	}
	t_site_config(&s, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	pid1_until_stored(&p, 1);
	assert_refused(extra);
	t_site_stop(&s);
	pid1_close(&p);
}

/* The store as release 0.1 named it: listener-INODE, in decimal. */
static void pid1_rename_old(struct pid1 *p)
{
	GHashTable *old = g_hash_table_new_full(g_str_hash, g_str_equal,
						g_free, NULL);
	GHashTableIter it;
	gpointer v;

	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_hash_table_insert(old, g_strdup_printf(
				    "listener-%" G_GUINT64_FORMAT,
				    fd_inode(GPOINTER_TO_INT(v) - 1)), v);
	/* The descriptors move to old; the names go. */
	g_hash_table_destroy(p->store);
	p->store = old;
}

/* A restart whose store release 0.1 had kept: generation 1 serves. */
static void restart_with_old_names(struct t_site *s, struct pid1 *p,
				   const char *const *opts)
{
	stop_first(s);
	pid1_drain(p);
	pid1_rename_old(p);
	start_with_kept(s, p, opts);
	real_serve(s);
}

/*
 * A package upgrade from 0.1, whose store names its sockets otherwise:
 * they are taken over under their names, not stored twice, and one whose
 * bind is removed is taken out under the name it has.
 */
static void test_old_names_kept(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	guint16 extra;
	g_autoptr(GArray) inodes = NULL;

	if (!start_with_extra_bind(&s, &p, opts, &extra))
		return;
	restart_with_old_names(&s, &p, opts);
	inodes = kept_inodes(&p);
	g_assert_true(holds_socket(s.pid, inodes));
	pid1_drain(&p);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 2);
	t_site_config(&s, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	assert_bind_dropped(&p, s.port, extra);
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * The same, then a reload that re-executes the wrapper (a package upgrade
 * with --self-upgrade): the new image gets no LISTEN_FDS, and still takes
 * a dropped bind's socket out under the old name systemd keeps it under.
 */
static void test_old_names_across_self_upgrade(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", "--self-upgrade=always",
				     NULL };
	guint16 extra;

	if (!start_with_extra_bind(&s, &p, opts, &extra))
		return;
	restart_with_old_names(&s, &p, opts);
	t_site_config(&s, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_REEXECUTING "SIGUSR2."));
	assert_bind_dropped(&p, s.port, extra);
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * Several sockets of the serving generation on one address (haproxy 2.8's
 * shards, two bind lines, a bind per process under nbproc) are all ours:
 * a stop keeps every one of them for the restart, which takes them over,
 * and a connection made while no haproxy runs is answered.
 */
struct own_binds {
	guint major, minor;	/* from this version */
	guint below_major, below_minor;	/* up to before this one, or 0 */
	const char *what;
	const char *fmt;	/* the extra lines, %u the shared port (once
				 * or twice) */
	const char *const *opts;
};

static void test_stop_keeps_own(gconstpointer data)
{
	const struct own_binds *o = data;
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	guint16 shared = t_free_port();
	g_autofree gchar *extra = g_strdup_printf(o->fmt, shared, shared);
	g_autoptr(GArray) before = NULL;
	int waiting;

	if (o->below_major && t_have_haproxy() &&
	    t_haproxy_at_least(o->below_major, o->below_minor)) {
		g_test_skip(o->what);
		return;
	}
	if (!t_haproxy_needs(o->major, o->minor, o->what))
		return;
	if (!site_init(&s, &p, extra))
		return;
	real_start(&s, NULL, o->opts);
	before = tcp_inodes(shared, 0, 0x0A);
	g_assert_cmpuint(before->len, ==, 2);
	pid1_until_stored(&p, 3);
	stop_first(&s);
	pid1_drain(&p);
	g_assert_cmpuint(p.removed, ==, 0);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 3);

	/* Whichever kept socket the kernel picks, it is taken over. */
	waiting = request_waiting(shared);
	start_with_kept(&s, &p, o->opts);
	real_serve(&s);
	g_assert_cmpint(answered_by(waiting), ==, s.pid);
	/* Each of them, the very socket kept. */
	assert_holds_all(s.pid, before);
	{
		g_autoptr(GArray) after = tcp_inodes(shared, 0, 0x0A);

		g_assert_cmpuint(after->len, ==, 2);
	}
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * Sockets handed under names not ours (a .socket unit with ReusePort=yes
 * beside the wrapper, an unnamed one) are closed at once, with one
 * notice: kept, the listener would stay in haproxy's SO_REUSEPORT group
 * and take a share of the connections, which nobody would accept. Any
 * haproxy: the wrapper closes them before it runs one.
 */
static void test_others_closed(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	struct others o = { .names = { "haproxy.socket", "" }, .n = 2 };
	g_autoptr(GArray) theirs = NULL;

	if (!site_init_any(&s, &p, NULL))
		return;
	o.fds[0] = sibling_listener(s.port);
	o.fds[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	theirs = fd_inodes(o.fds, o.n);
	start_handed(&s, &p, opts, 0, &o);
	/* Handed: the wrapper's only. */
	close(o.fds[0]);
	close(o.fds[1]);
	real_serve(&s);
	g_assert_false(holds_socket(s.w->pid, theirs));
	g_assert_cmpuint(wrapper_count_log(s.w, LOG_HANDED_NOT_OURS), ==, 1);
	{
		g_autoptr(GArray) on_port = tcp_inodes(s.port, 0, 0x0A);

		g_assert_cmpuint(on_port->len, ==, 1);
	}
	for (guint i = 0; i < 20; i++) {
		g_autofree gchar *body = t_http_get(s.port, T_WAIT);

		g_assert_nonnull(body);
		g_assert_cmpint(t_pid_in(body, "pid="), ==, real_worker(&s));
	}
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * More than 4096 descriptors handed (a .socket unit's beside the store's
 * own): the count is read whatever it is, the kept socket taken over (the
 * connection waiting in it answered) and the others closed, with one
 * notice.
 */
static void test_many_handed(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	struct others o = { .filler_n = 4100 };
	int waiting;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	pid1_until_stored(&p, 1);
	stop_first(&s);
	waiting = request_waiting(s.port);
	o.filler = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	start_handed(&s, &p, opts, 0, &o);
	close(o.filler);
	real_serve(&s);
	g_assert_cmpint(answered_by(waiting), ==, s.pid);
	g_assert_cmpuint(wrapper_count_log(s.w, LOG_HANDED_NOT_OURS), ==, 1);
	g_assert_cmpuint(t_count_fds(s.w->pid), <, 64);
	t_site_stop(&s);
	pid1_close(&p);
}

/* A haproxy that waits at gate (a fifo) before it asks for the kept
 * sockets: the real one, exec'd by a script in the site's directory. */
static gchar *gated_haproxy(struct t_site *s, gchar **gate)
{
	g_autofree gchar *text = NULL;
	gchar *script;

	*gate = g_build_filename(s->dir, "gate", NULL);
	g_assert_no_errno(mkfifo(*gate, 0600));
	text = g_strdup_printf("#!/bin/sh\n"
			       "for a; do [ \"$a\" = -x ] && read go < '%s'; "
			       "done\n"
			       "exec '%s' \"$@\"\n", *gate, t_haproxy_path());
	script = t_write_file(s->dir, "gated-haproxy", text);
	g_assert_no_errno(chmod(script, 0755));
	return script;
}

static void open_gate(const char *gate)
{
	gint64 end = t_deadline(T_WAIT);
	int fd;

	/* ENXIO until the script waits on it. */
	while ((fd = open(gate, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 &&
	       errno == ENXIO && t_ms_left(end) > 0)
		g_usleep(1000);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, "go\n", 3), ==, 3);
	close(fd);
}

/* The descriptors a _getsocks request to path brings this process. */
static guint getsocks_as_us(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = T_WAIT / 1000 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	guint got = 0;

	g_assert_cmpuint(strlen(path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, path);
	g_assert_no_errno(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				     sizeof(tv)));
	g_assert_no_errno(connect(fd, (struct sockaddr *)&a, sizeof(a)));
	if (send(fd, "_getsocks\n", 10, MSG_NOSIGNAL) != 10) {
		close(fd);
		return 0;
	}
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * 253)];
			struct cmsghdr align;
		} control;
		char data[8192];
		struct iovec iov = { data, sizeof(data) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = control.buf,
				      .msg_controllen = sizeof(control.buf) };
		ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
		int ack = 0;

		if (n <= 0)
			break;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
		     c = CMSG_NXTHDR(&msg, c)) {
			guint k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (guint i = 0; i < k; i++) {
				int one;

				memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
				close(one);
			}
			got += k;
		}
		/* As haproxy does, every message acknowledged. */
		send(fd, &ack, sizeof(ack), MSG_NOSIGNAL);
	}
	close(fd);
	return got;
}

/*
 * The -x server answers the haproxy the wrapper launched, not any process
 * of its user: one that asks while generation 1 loads gets nothing, and
 * generation 1 still takes the kept socket over, answering what waited
 * in it.
 */
static void test_x_only_launched(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	g_autofree gchar *gate = NULL;
	g_autofree gchar *server = NULL;
	int waiting;

	if (!site_init(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	pid1_until_stored(&p, 1);
	stop_first(&s);
	waiting = request_waiting(s.port);
	g_free(s.haproxy);
	s.haproxy = gated_haproxy(&s, &gate);
	start_with_kept(&s, &p, opts);
	/* Generation 1 runs, held at the gate: the server is up. */
	t_site_wait_log(&s, LOG_EXECUTING);
	server = g_build_filename(s.rundir, "stored.sock", NULL);
	g_assert_cmpuint(getsocks_as_us(server), ==, 0);
	open_gate(gate);
	real_serve(&s);
	g_assert_cmpint(answered_by(waiting), ==, s.pid);
	g_assert_cmpuint(wrapper_count_log(s.w, "got no listening socket"), ==,
			 1);
	t_site_stop(&s);
	pid1_close(&p);
}

/* ---- master-worker mode: Debian's unit (EXTRAOPTS=-S ...) ---- */

/* The wrapper's options (--fd-store=on, extra if not NULL) and haproxy's
 * -S for a master CLI at path (from 1.9; -W alone before), master-worker
 * mode either way. */
static void mworker_opts(const char *opts[5], const char *extra,
			 const char *cli)
{
	guint n = 0;

	opts[n++] = "--fd-store=on";
	if (extra)
		opts[n++] = extra;
	opts[n++] = t_haproxy_at_least(1, 9) ? "-S" : "-W";
	if (t_haproxy_at_least(1, 9))
		opts[n++] = cli;
	opts[n] = NULL;
}

/* The serving master's worker: the one child of master answering. */
static GPid serving_worker(struct t_site *s, GPid master)
{
	GPid worker = t_wait_serving(s->port, T_WAIT);

	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(proc_parent(worker), ==, master);
	return worker;
}

/* The master CLI at path answers "show proc" as master pid (from 1.9),
 * at once: the wrapper says ready only once a 2.5-3.0 master, which
 * executes itself again after each load, listens again. */
static void assert_master_cli(const char *path, GPid master)
{
	g_autofree gchar *line = g_strdup_printf("\n%d ", master);
	g_autofree gchar *out = NULL;

	if (!t_haproxy_at_least(1, 9))
		return;
	out = t_master_cli(path, "show proc", 5000);
	g_test_message("master CLI: %s", out);
	g_assert_nonnull(strstr(out, line));
	g_assert_nonnull(strstr(out, "master"));
}

/*
 * Debian's haproxy.service through the drop-in: -S selects master-worker
 * mode. The serving workers' listening socket is kept in the store, and
 * stays the same one across a reload of the master; then systemd's kill
 * (the wrapper and every haproxy of the unit, SIGKILL) and Restart=: a
 * connection made while no haproxy runs waits in the kept socket's
 * backlog and the next wrapper's first master takes it over (-x), its
 * worker answers it, a load running throughout is never refused, and the
 * master CLI answers again on -S. data: one more option of the wrapper,
 * or NULL; with --seamless-reload=off no stats socket exposes the
 * listeners, and they are taken from the worker with pidfd_getfd().
 */
static void test_mworker_kill_refuses_nothing(gconstpointer data)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	struct t_load load = { 0 };
	g_autofree gchar *cli = NULL;
	const char *opts[5];
	GPid master, worker;
	guint64 inode;
	int waiting;

	if (!site_init(&s, &p, NULL))
		return;
	cli = g_build_filename(t_short_dir(s.dir), "master.sock", NULL);
	mworker_opts(opts, data, cli);
	t_site_start_wrapper(&s, NULL, opts);
	master = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(master, >, 0);
	g_assert_nonnull(wrapper_find_log(s.w, " -Ws"));
	worker = serving_worker(&s, master);
	pid1_until_stored(&p, 1);
	inode = fd_inode(kept_for(&p, s.port));
	g_assert_true(holds_inode(worker, inode));

	/* A reload: the master passes the socket on to its new worker
	 * when a stats socket exposes it (our fragment) or, from 2.6,
	 * through its own socketpair, and the store keeps it, nothing taken
	 * out; else the new worker binds a new one, which the store follows
	 * (the old one taken out). The answer comes once it is sent. */
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, NULL),
			==, 0);
	g_assert_true(t_wait_gone(worker, T_WAIT));
	/* As systemd does at once: a socket taken out is closed before the
	 * port is asked. Held here, it would stay in the port's SO_REUSEPORT
	 * group with nobody accepting, and take its share of connections. */
	pid1_drain(&p);
	worker = serving_worker(&s, master);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 1);
	if (!data || t_haproxy_at_least(2, 6)) {
		g_assert_cmpuint(p.removed, ==, 0);
		g_assert_cmpuint(fd_inode(kept_for(&p, s.port)), ==, inode);
	} else {
		g_assert_cmpuint(p.removed, ==, 1);
		inode = fd_inode(kept_for(&p, s.port));
	}
	g_assert_true(holds_inode(worker, inode));
	assert_master_cli(cli, master);

	t_load_start(&load, s.port);
	g_assert_true(t_load_wait_answers(&load, worker, 10));
	/* systemd's KillMode: the wrapper and all below it, at once. */
	g_clear_pointer(&s.w, wrapper_free);
	g_assert_true(t_wait_gone(master, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	waiting = request_waiting(s.port);

	start_with_kept(&s, &p, opts);
	master = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(master, >, 0);
	g_assert_cmpint(proc_parent(master), ==, s.w->pid);
	worker = answered_by(waiting);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(proc_parent(worker), ==, master);
	g_assert_true(holds_inode(worker, inode));
	g_assert_true(t_load_wait_answers(&load, worker, 10));
	t_load_finish(&load);
	/* A request the killed worker had taken is reset with it; none is
	 * refused. */
	g_assert_cmpuint(load.refused, ==, 0);
	g_assert_cmpuint(load.failures, <=, 1);
	assert_master_cli(cli, master);
	/* The same socket still kept under its name. */
	g_assert_cmpint(t_client("--status", s.rundir_opt, NULL, NULL, NULL),
			==, 0);
	pid1_drain(&p);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 1);
	g_assert_cmpuint(fd_inode(kept_for(&p, s.port)), ==, inode);
	t_site_stop(&s);
	pid1_close(&p);
}

/* A bind a master's reload drops is taken out of the store at that
 * reload, as a new generation's would be. */
static void test_mworker_bind_removed(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	g_autofree gchar *cli = NULL;
	guint16 extra = t_free_port();
	g_autofree gchar *bind = g_strdup_printf("    bind 127.0.0.1:%u\n",
						 extra);
	const char *opts[5];
	GPid master, worker;

	if (!site_init(&s, &p, bind))
		return;
	cli = g_build_filename(t_short_dir(s.dir), "master.sock", NULL);
	mworker_opts(opts, NULL, cli);
	t_site_start_wrapper(&s, NULL, opts);
	master = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(master, >, 0);
	worker = serving_worker(&s, master);
	pid1_until_stored(&p, 2);
	g_assert_cmpint(kept_for(&p, extra), >=, 0);
	t_site_config(&s, NULL);
	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, NULL),
			==, 0);
	g_assert_true(t_wait_gone(worker, T_WAIT));
	assert_bind_dropped(&p, s.port, extra);
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * nbproc (master-worker mode, 1.8 to 2.4): each worker keeps only the
 * binds of its own process. Every worker's listeners are stored, not only
 * those of the one with the highest pid: a bind of process 1 alone is
 * kept too, and stays kept across a reload. data as for
 * test_mworker_kill_refuses_nothing(). The master tells READY once its
 * workers are forked, and each closes the other processes' binds soon
 * after: the highest-pid worker alone may still hold them all when it is
 * read, so a store of that worker alone fails here only once it closed
 * them (1 run of 4 on 2.0.0 here).
 */
static void test_mworker_nbproc_all_stored(gconstpointer data)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	g_autofree gchar *cli = NULL;
	guint16 first = t_free_port();
	g_autofree gchar *extra = g_strdup_printf(
		"    bind 127.0.0.1:%u process 1\n"
		"global\n"
		"    nbproc 2\n", first);
	const char *opts[5];
	GPid master;

	if (t_haproxy_at_least(2, 5)) {
		g_test_skip("nbproc is gone from haproxy 2.5");
		return;
	}
	if (!site_init(&s, &p, extra))
		return;
	cli = g_build_filename(t_short_dir(s.dir), "master.sock", NULL);
	mworker_opts(opts, data, cli);
	t_site_start_wrapper(&s, NULL, opts);
	master = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(master, >, 0);
	pid1_until_stored(&p, 2);
	g_assert_cmpint(kept_for(&p, first), >=, 0);
	g_assert_cmpint(kept_for(&p, s.port), >=, 0);

	g_assert_cmpint(t_client("--reload", s.rundir_opt, NULL, NULL, NULL),
			==, 0);
	pid1_drain(&p);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 2);
	g_assert_cmpint(kept_for(&p, first), >=, 0);
	g_assert_cmpint(kept_for(&p, s.port), >=, 0);
	t_site_stop(&s);
	pid1_close(&p);
}

/*
 * haproxy before 1.8 cannot take a socket over: nothing of theirs is
 * stored (a socket kept for a restart would take connections that no
 * haproxy accepts), and one notice says so, not one a reload.
 * Generation 1's sockets would have been sent right after its READY=1,
 * before any later answer of the wrapper.
 */
static void test_old_haproxy_stores_nothing(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	g_autofree gchar *out = NULL;

	if (t_haproxy_at_least(1, 8)) {
		g_test_skip("haproxy 1.8 and later can take them over");
		return;
	}
	if (!site_init_any(&s, &p, NULL))
		return;
	real_start(&s, NULL, opts);
	g_assert_cmpint(t_client("--status", s.rundir_opt, NULL, &out, NULL),
			==, 0);
	pid1_drain(&p);
	g_assert_cmpuint(p.ready, >=, 1);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 0);
	real_reload(&s, SIGUSR2, TRUE);
	g_assert_cmpuint(wrapper_count_log(s.w, LOG_FDSTORE_UNUSED), ==, 1);
	g_assert_nonnull(strstr(wrapper_find_log(s.w, LOG_FDSTORE_UNUSED),
				"-x needs 1.8 or later"));
	t_site_stop(&s);
	pid1_close(&p);
}

/* ---- many binds, under systemd's default descriptor limits ---- */

/*
 * systemd's default LimitNOFILE=1024:524288 (the hard limit as high as
 * this test may set it): the wrapper starts with a soft limit of 1024,
 * and the sockets a restart hands back may lie above it, as systemd puts
 * them in place before it sets the limits.
 */
#define UNIT_SOFT_NOFILE 1024
#define UNIT_HARD_NOFILE 524288

struct limited {
	int *fds;		/* the kept sockets, for 3, 4, ... */
	guint n;
	struct rlimit limit;
};

static void put_listen_fds_limited(gpointer data)
{
	struct limited *l = data;

	/* In place, one at a time: with 10,000 kept, a copy of each
	 * would not fit under this process's own limit. */
	for (guint i = 0; i < l->n; i++) {
		int target = 3 + i;

		if (l->fds[i] == target) {
			fcntl(target, F_SETFD, 0);
			continue;
		}
		/* One still to be placed is there: moved aside. */
		for (guint j = i + 1; j < l->n; j++)
			if (l->fds[j] == target) {
				l->fds[j] = fcntl(target, F_DUPFD_CLOEXEC, 3);
				break;
			}
		dup2(l->fds[i], target);
		close(l->fds[i]);
	}
	/* A hard limit above ours needs CAP_SYS_RESOURCE: ours then. */
	if (setrlimit(RLIMIT_NOFILE, &l->limit) < 0) {
		struct rlimit cur;

		getrlimit(RLIMIT_NOFILE, &cur);
		l->limit.rlim_max = MIN(l->limit.rlim_max, cur.rlim_max);
		setrlimit(RLIMIT_NOFILE, &l->limit);
	}
}

/* The unit's limits as this test can have them: the soft one 1024, the
 * hard one hard (0: systemd's default, 524288) or the highest this
 * process may set. */
static struct rlimit unit_limit(rlim_t soft, rlim_t hard)
{
	struct rlimit want = { soft ? soft : UNIT_SOFT_NOFILE,
			       hard ? hard : UNIT_HARD_NOFILE };

	return want;
}

/* This test holds every kept socket, and the clients: its own soft limit
 * as high as it goes. */
static void raise_own_limit(void)
{
	struct rlimit rl;

	g_assert_no_errno(getrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_cur = rl.rlim_max;
	g_assert_no_errno(setrlimit(RLIMIT_NOFILE, &rl));
}

static rlim_t own_limit(void)
{
	struct rlimit rl;

	g_assert_no_errno(getrlimit(RLIMIT_NOFILE, &rl));
	return rl.rlim_cur;
}

/* The wrapper started as systemd starts it under the unit's limits, with
 * what the store keeps handed back as LISTEN_FDS (none the first time). */
static void start_limited(struct t_site *s, struct pid1 *p,
			  const char *const *opts, rlim_t soft, rlim_t hard)
{
	static const char *const prefix[] = {
		"/bin/sh", "-c", "LISTEN_PID=$$ exec \"$0\" \"$@\"", NULL
	};
	g_autoptr(GPtrArray) args = t_site_args(s, opts);
	g_autoptr(GString) names = g_string_new(NULL);
	g_autofree int *fds = g_new0(int, g_hash_table_size(p->store) + 1);
	g_autoptr(GPtrArray) env = g_ptr_array_new_with_free_func(g_free);
	struct limited l = { .fds = fds, .limit = unit_limit(soft, hard) };
	GHashTableIter it;
	gpointer k, v;

	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		fds[l.n++] = GPOINTER_TO_INT(v) - 1;
		g_string_append_printf(names, "%s%s", names->len ? ":" : "",
				       (char *)k);
	}
	for (guint i = 0; i + 1 < s->env->len; i++)
		g_ptr_array_add(env, g_strdup(g_ptr_array_index(s->env, i)));
	if (l.n) {
		g_ptr_array_add(env, g_strdup_printf("LISTEN_FDS=%u", l.n));
		g_ptr_array_add(env, g_strdup_printf("LISTEN_FDNAMES=%s",
						     names->str));
	}
	g_ptr_array_add(env, NULL);
	g_assert_null(s->w);
	s->w = wrapper_start_prefixed_setup(prefix,
					    (const char *const *)args->pdata,
					    (const char *const *)env->pdata,
					    put_listen_fds_limited, &l);
}

/*
 * n free ports, all different, bound in *held until the test ends, with
 * SO_REUSEPORT: haproxy binds them beside ours (bound, not listening: no
 * connection reaches them), while a free port asked by anyone else meanwhile
 * (the site's own, another test's) is never one of them. Released, one of
 * 2,000 could be taken in the second haproxy needs to bind it, and a
 * listener of someone else's beside ours would take it out of the store.
 */
static GArray *free_ports(guint n, int **held_out)
{
	GArray *ports = g_array_new(FALSE, FALSE, sizeof(guint16));
	g_autoptr(GArray) skipped = g_array_new(FALSE, FALSE, sizeof(int));
	int *held = g_new(int, n);

	for (guint i = 0; i < n; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t len = sizeof(a);
		guint16 port;

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		held[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		g_assert_cmpint(held[i], >=, 0);
		g_assert_no_errno(setsockopt(held[i], SOL_SOCKET, SO_REUSEPORT,
					     &(int){ 1 }, sizeof(int)));
		g_assert_no_errno(bind(held[i], (struct sockaddr *)&a,
				       sizeof(a)));
		g_assert_no_errno(getsockname(held[i], (struct sockaddr *)&a,
					      &len));
		port = ntohs(a.sin_port);
		/* Another program's (t_free_port gave it and let it go): its
		 * haproxy would bind it beside ours (SO_REUSEPORT). Held
		 * bound until the end, so that bind() gives another; ours,
		 * bound here, no later t_free_port is given. */
		if (t_port_claimed(port)) {
			g_array_append_val(skipped, held[i]);
			g_assert_cmpuint(skipped->len, <, 1000);
			i--;
			continue;
		}
		g_array_append_val(ports, port);
	}
	for (guint i = 0; i < skipped->len; i++)
		close(g_array_index(skipped, int, i));
	*held_out = held;
	return ports;
}

static void release_ports(int *held, guint n)
{
	for (guint i = 0; i < n; i++)
		close(held[i]);
	g_free(held);
}

static gchar *bind_lines(GArray *ports)
{
	GString *text = g_string_new(NULL);

	for (guint i = 0; i < ports->len; i++)
		g_string_append_printf(text, "    bind 127.0.0.1:%u\n",
				       g_array_index(ports, guint16, i));
	return g_string_free(text, FALSE);
}

/* The port a kept socket listens on. */
static guint16 port_of(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	g_assert_no_errno(getsockname(fd, (struct sockaddr *)&a, &len));
	return ntohs(a.sin_port);
}

/* The store holds n listening sockets, each on a port of the site; all
 * of them when n is their number. */
static void assert_stores(struct pid1 *p, struct t_site *s, GArray *ports,
			  guint n)
{
	g_autoptr(GHashTable) kept = g_hash_table_new(NULL, NULL);
	g_autoptr(GHashTable) ours = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer v;

	pid1_until_stored(p, n);
	pid1_drain(p);
	g_assert_cmpuint(g_hash_table_size(p->store), ==, n);
	g_hash_table_add(ours, GUINT_TO_POINTER(s->port));
	for (guint i = 0; i < ports->len; i++)
		g_hash_table_add(ours, GUINT_TO_POINTER(
			g_array_index(ports, guint16, i)));
	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int listening = 0;
		socklen_t ilen = sizeof(listening);

		g_assert_no_errno(getsockname(GPOINTER_TO_INT(v) - 1,
					      (struct sockaddr *)&a, &len));
		g_assert_no_errno(getsockopt(GPOINTER_TO_INT(v) - 1,
					     SOL_SOCKET, SO_ACCEPTCONN,
					     &listening, &ilen));
		g_assert_true(listening);
		g_assert_true(g_hash_table_contains(
			ours, GUINT_TO_POINTER(ntohs(a.sin_port))));
		g_hash_table_add(kept, GUINT_TO_POINTER(ntohs(a.sin_port)));
	}
	g_assert_cmpuint(g_hash_table_size(kept), ==, n);
}

/* Clients that connect while no haproxy runs, on four ports the store
 * keeps (spread over them): each has sent its request. Where the store
 * keeps only some, a port it does not keep refuses. */
static GArray *clients_while_down(struct t_site *s, struct pid1 *p,
				  GArray *ports)
{
	GArray *fds = g_array_new(FALSE, FALSE, sizeof(int));
	g_autoptr(GArray) kept = g_array_new(FALSE, FALSE, sizeof(guint16));
	g_autoptr(GHashTable) kept_set = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer v;
	guint16 on[4];
	guint n = 0;

	g_hash_table_iter_init(&it, p->store);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		guint16 port = port_of(GPOINTER_TO_INT(v) - 1);

		g_array_append_val(kept, port);
		g_hash_table_add(kept_set, GUINT_TO_POINTER(port));
	}
	g_assert_cmpuint(kept->len, >, 0);
	for (guint i = 0; i < G_N_ELEMENTS(on) && i < kept->len; i++)
		on[n++] = g_array_index(kept, guint16,
					i * (kept->len - 1) / 3);
	if (kept->len < ports->len + 1)
		for (guint i = 0; i < ports->len; i++) {
			guint16 port = g_array_index(ports, guint16, i);

			if (g_hash_table_contains(kept_set,
						  GUINT_TO_POINTER(port)))
				continue;
			assert_refused(port);
			break;
		}
	for (guint i = 0; i < n; i++) {
		/* Refused: nothing kept this port's socket. */
		int fd = request_waiting(on[i]);

		g_array_append_val(fds, fd);
	}
	return fds;
}

static void assert_served_by(GArray *clients, GPid pid)
{
	for (guint i = 0; i < clients->len; i++)
		g_assert_cmpint(answered_by(g_array_index(clients, int, i)),
				==, pid);
}

/* The wrapper killed: systemd then ends what is left of the unit (its
 * haproxy, ours now as the subreaper) before it starts it again. */
static void kill_wrapper(struct t_site *s)
{
	GPid haproxy = s->pid;

	wrapper_signal(s->w, SIGKILL);
	g_assert_cmpint(wrapper_wait_exit(s->w, T_WAIT), !=, -1);
	g_clear_pointer(&s->w, wrapper_free);
	if (t_kill_if_exe(haproxy, t_haproxy_path()))
		g_assert_cmpint(t_wait_child(haproxy, T_WAIT), !=, -1);
	g_assert_true(t_wait_gone(haproxy, T_WAIT));
}

/* Can a SO_REUSEPORT steering map be made here (CAP_BPF, Linux 5.14)? */
static gboolean t_steering_possible(void)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_REUSEPORT_SOCKARRAY;
	attr.key_size = sizeof(__u32);
	attr.value_size = sizeof(__u64);
	attr.max_entries = 1;
	fd = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (fd < 0) {
		g_test_message("no SO_REUSEPORT steering here: %s",
			       g_strerror(errno));
		return FALSE;
	}
	close(fd);
	return TRUE;
}

struct many {
	guint binds;
	gboolean steering;
	rlim_t soft;		/* LimitNOFILE='s soft limit; 0: 1024 */
	rlim_t hard;		/* its hard limit; 0: 524288 */
};

/* The hard limit the wrapper gets: hard (0: 524288), or this process's
 * own where it may not raise its own that far (no CAP_SYS_RESOURCE). */
static rlim_t effective_hard(rlim_t hard)
{
	struct rlimit rl, raised;
	rlim_t want = hard ? hard : UNIT_HARD_NOFILE;

	g_assert_no_errno(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max >= want)
		return want;
	raised = (struct rlimit){ rl.rlim_cur, want };
	return setrlimit(RLIMIT_NOFILE, &raised) == 0 ? want : rl.rlim_max;
}

/* What a start under soft can be handed back: the store keeps no more. */
static guint kept_at_most(rlim_t soft)
{
	return (soft ? soft : UNIT_SOFT_NOFILE) - 3 - 64;
}

/*
 * The wrapper never ran out of descriptors (whatever would have needed
 * one then failed), and said at most once that the unit's limit is too
 * low for it, exactly once where it must be (tight).
 */
static void assert_fds_sufficed(struct t_site *s, gboolean tight)
{
	if (tight)
		g_assert_nonnull(wrapper_wait_log(s->w, "LimitNOFILE=",
						  T_WAIT));
	wrapper_pump(s->w, 0);
	g_assert_null(wrapper_find_log(s->w, "Too many open files"));
	g_assert_cmpuint(wrapper_count_log(s->w, "LimitNOFILE="), ==, tight);
}

/*
 * Every listener of a configuration of many binds is stored, and neither
 * a restart nor a kill of the wrapper refuses a connection: the next
 * wrapper's haproxy takes every kept socket over and serves the clients
 * that waited in their backlogs.
 */
static void test_many_binds(gconstpointer data)
{
	const struct many *m = data;
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = {
		"--fd-store=on",
		m->steering ? "--reuseport-migration=auto"
			    : "--reuseport-migration=off",
		NULL
	};
	g_autoptr(GArray) ports = NULL;
	g_autoptr(GArray) inodes = NULL;
	g_autofree gchar *extra = NULL;
	int *held;
	/* Steering takes two descriptors a bound address, and the wrapper
	 * keeps 512 free besides: more than LimitNOFILE=1024 leaves once
	 * 600 listen. A start gets the store back under the unit's soft
	 * limit. */
	guint kept = MIN(m->binds, kept_at_most(m->soft));
	gboolean tight = (m->steering &&
			  effective_hard(m->hard) < 2 * m->binds + 600 &&
			  t_steering_possible()) ||
			 kept < m->binds;
	/* haproxy binds, and the wrapper stores, each listener before it
	 * is ready: 10,000 take over 12 s under ASan on a busy machine. */
	guint ready_ms = T_WAIT + 3 * m->binds;
	gint64 began;

	raise_own_limit();
	ports = free_ports(m->binds - 1, &held);
	extra = bind_lines(ports);
	if (!site_init(&s, &p, extra)) {
		release_ports(held, m->binds - 1);
		return;
	}
	began = g_get_monotonic_time();
	start_limited(&s, &p, opts, m->soft, m->hard);
	real_serve_within(&s, ready_ms);
	/* This process holds every kept socket and every port: with many
	 * binds (make bench-fdstore), more than it may open. haproxy has
	 * bound them now. */
	if (2 * m->binds + 1024 > own_limit()) {
		release_ports(held, m->binds - 1);
		held = NULL;
	}
	/* systemd hands the names back in one environment string, which
	 * execve() limits to 128 KiB: beyond about 6,900 the store keeps
	 * what fits, and says so. */
	if (kept > 12000) {
		g_assert_nonnull(wrapper_wait_log(s.w, "execve() limits",
						  T_WAIT));
		pid1_drain(&p);
		kept = MIN(kept, g_hash_table_size(p.store));
		g_assert_cmpuint(kept, >, 12000);
	}
	assert_stores(&p, &s, ports, kept);
	g_test_message("measured: %u binds: %u stored %" G_GINT64_FORMAT
		       " ms after the start; the wrapper holds %u descriptors",
		       m->binds, kept,
		       (g_get_monotonic_time() - began) / 1000,
		       t_count_fds(s.w->pid));
	inodes = kept_inodes(&p);
	assert_fds_sufficed(&s, tight);

	/* systemctl restart. */
	stop_first(&s);
	pid1_drain(&p);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, kept);
	{
		g_autoptr(GArray) clients = clients_while_down(&s, &p, ports);

		start_limited(&s, &p, opts, m->soft, m->hard);
		real_serve_within(&s, ready_ms);
		assert_served_by(clients, s.pid);
	}
	assert_holds_all(s.pid, inodes);
	assert_stores(&p, &s, ports, kept);

	assert_fds_sufficed(&s, tight);

	g_test_message("measured: %u binds: after a restart the wrapper "
		       "holds %u descriptors", m->binds, t_count_fds(s.w->pid));

	/* The wrapper killed, then started again by Restart=. */
	kill_wrapper(&s);
	pid1_drain(&p);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, kept);
	{
		g_autoptr(GArray) clients = clients_while_down(&s, &p, ports);

		start_limited(&s, &p, opts, m->soft, m->hard);
		real_serve_within(&s, ready_ms);
		assert_served_by(clients, s.pid);
	}
	assert_holds_all(s.pid, inodes);
	assert_stores(&p, &s, ports, kept);
	assert_fds_sufficed(&s, tight);
	t_site_stop(&s);
	pid1_close(&p);
	if (held)
		release_ports(held, m->binds - 1);
}

/* systemd 254 and later say FileDescriptorStoreMax= in $FDSTORE: no
 * more is sent (PID 1 would refuse and close them), and one notice names
 * the setting, not one a reload. */
static void test_store_max(void)
{
	g_auto(TSite) s = { 0 };
	struct pid1 p = { 0 };
	const char *const opts[] = { "--fd-store=on", NULL };
	g_autoptr(GArray) ports = NULL;
	g_autofree gchar *extra = NULL;
	g_autofree gchar *out = NULL;
	int *held;

	ports = free_ports(19, &held);
	extra = bind_lines(ports);
	if (!site_init(&s, &p, extra)) {
		release_ports(held, 19);
		return;
	}
	t_site_setenv(&s, "FDSTORE", "10");
	real_start(&s, NULL, opts);
	assert_stores(&p, &s, ports, 10);
	g_assert_nonnull(wrapper_wait_log(s.w, "FileDescriptorStoreMax=",
					  T_WAIT));
	real_reload(&s, SIGUSR2, TRUE);
	/* Whatever the new generation's READY sent came before this. */
	g_assert_cmpint(t_client("--status", s.rundir_opt, NULL, &out, NULL),
			==, 0);
	pid1_drain(&p);
	g_assert_cmpuint(g_hash_table_size(p.store), ==, 10);
	wrapper_pump(s.w, 0);
	g_assert_cmpuint(wrapper_count_log(s.w, "FileDescriptorStoreMax="),
			 ==, 1);
	t_site_stop(&s);
	pid1_close(&p);
	release_ports(held, 19);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	t_cleanup_on_abort();

	static const char *const exposed[] = { "--fd-store=on", NULL };
	static const char *const no_x[] = { "--fd-store=on",
					    "--seamless-reload=off", NULL };

	g_test_add_data_func("/fdstore/restart-refuses-nothing", exposed,
			     test_restart_refuses_nothing);
	g_test_add_data_func("/fdstore/restart-refuses-nothing-no-x", no_x,
			     test_restart_refuses_nothing);
	g_test_add_func("/fdstore/restart-without-store-refuses",
			test_restart_without_store_refuses);
	g_test_add_func("/fdstore/bind-removed", test_bind_removed);
	g_test_add_func("/fdstore/old-names-kept", test_old_names_kept);
	g_test_add_func("/fdstore/old-names-across-self-upgrade",
			test_old_names_across_self_upgrade);
	g_test_add_func("/fdstore/bind-added-across-restart",
			test_bind_added_across_restart);
	g_test_add_func("/fdstore/unusable-dropped", test_unusable_dropped);
	g_test_add_func("/fdstore/handed-then-removed",
			test_handed_then_removed);
	g_test_add_func("/fdstore/stop-beside-another-listener",
			test_stop_beside_another_listener);
	g_test_add_data_func("/fdstore/crash-beside-another-listener",
			     GINT_TO_POINTER(SIGKILL),
			     test_end_beside_another_listener);
	g_test_add_data_func("/fdstore/replaced-by-none-beside-another-listener",
			     GINT_TO_POINTER(SIGTERM),
			     test_end_beside_another_listener);
	static const char *const mw_off[] = { "--fd-store=on",
					      "--master-worker=off", NULL };
	static const struct own_binds shards = {
		2, 8, 0, 0, "shards",
		"    bind 127.0.0.1:%u shards 2\n", exposed };
	static const struct own_binds twice = {
		1, 8, 0, 0, "-x",
		"    bind 127.0.0.1:%u\n    bind 127.0.0.1:%u\n", exposed };
	static const struct own_binds per_process = {
		1, 8, 2, 5, "nbproc (gone from 2.5)",
		"    bind 127.0.0.1:%u process 1\n"
		"    bind 127.0.0.1:%u process 2\n"
		"global\n    nbproc 2\n", mw_off };

	g_test_add_data_func("/fdstore/stop-keeps-shards", &shards,
			     test_stop_keeps_own);
	g_test_add_data_func("/fdstore/stop-keeps-two-binds", &twice,
			     test_stop_keeps_own);
	g_test_add_data_func("/fdstore/stop-keeps-nbproc-binds", &per_process,
			     test_stop_keeps_own);
	g_test_add_func("/fdstore/others-closed", test_others_closed);
	g_test_add_func("/fdstore/many-handed", test_many_handed);
	g_test_add_func("/fdstore/x-only-launched", test_x_only_launched);
	g_test_add_data_func("/fdstore/mworker-kill-refuses-nothing", NULL,
			     test_mworker_kill_refuses_nothing);
	g_test_add_data_func("/fdstore/mworker-kill-refuses-nothing-no-x",
			     "--seamless-reload=off",
			     test_mworker_kill_refuses_nothing);
	g_test_add_func("/fdstore/mworker-bind-removed",
			test_mworker_bind_removed);
	g_test_add_data_func("/fdstore/mworker-nbproc-all-stored", NULL,
			     test_mworker_nbproc_all_stored);
	g_test_add_data_func("/fdstore/mworker-nbproc-all-stored-no-x",
			     "--seamless-reload=off",
			     test_mworker_nbproc_all_stored);
	g_test_add_func("/fdstore/old-haproxy-stores-nothing",
			test_old_haproxy_stores_nothing);
	g_test_add_func("/fdstore/store-max", test_store_max);
	{
		/* systemd's default LimitNOFILE=1024:524288 unless said. */
		static const struct many sizes[] = {
			{ 1, TRUE, 0, 0 },
			{ 600, TRUE, 0, 0 },
			{ 600, FALSE, 0, 0 },
			/* LimitNOFILE=1024: room for N, not for 2N. */
			{ 600, TRUE, 1024, 1024 },
			{ 600, FALSE, 1024, 1024 },
			/* More than a start under 1024 can be handed. */
			{ 2000, TRUE, 0, 0 },
			/* LimitNOFILE=4096:524288: room for all. */
			{ 2000, TRUE, 4096, 0 },
			{ 2000, FALSE, 4096, 0 },
			/* LimitNOFILE=11024:524288: 10,000 names fit in
			 * LISTEN_FDNAMES= (at most 6,900 once). */
			{ 10000, TRUE, 11024, 0 },
			{ 10000, FALSE, 11024, 0 },
		};

		/* More, measured (make bench-fdstore): with a soft limit
		 * that lets a start have them all back. */
		static struct many asked = { 0, TRUE, 0, 0 };
		const char *binds = g_getenv("HSW_FDSTORE_BINDS");

		if (binds && (asked.binds = atoi(binds)) > 1) {
			g_autofree gchar *path = NULL;

			asked.soft = asked.binds + 1024;
			path = g_strdup_printf(
				"/fdstore/many-binds/%u-steering-on-limit-%u-%u",
				asked.binds, (guint)asked.soft,
				UNIT_HARD_NOFILE);
			g_test_add_data_func(path, &asked, test_many_binds);
		}
		for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
			g_autofree gchar *path = g_strdup_printf(
				"/fdstore/many-binds/%u-steering-%s-limit-%u-%u",
				sizes[i].binds,
				sizes[i].steering ? "on" : "off",
				(guint)(sizes[i].soft ?: UNIT_SOFT_NOFILE),
				(guint)(sizes[i].hard ?: UNIT_HARD_NOFILE));

			g_test_add_data_func(path, &sizes[i],
					     test_many_binds);
		}
	}
	return g_test_run();
}
