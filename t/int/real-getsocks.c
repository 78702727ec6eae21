/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper's -x server (wrapper/fdstore/getsocks.c) against the real haproxy's
 * -x client (1.8 and later): the listening sockets the test bound are the
 * very ones haproxy serves on, by inode, whatever the number (batches of
 * 252), the family (IPv4; IPv6 v6only, v4v6, neither) or a unix bind; a
 * client that never acknowledges, or that is not haproxy, gets nothing
 * more and leaves the server serving; only the process the server was
 * told of (or one it forked: haproxy 3.1+ with "master-worker" in the
 * configuration asks from its worker) is served, no other of the same
 * user, nor a process that got the pid of the launched one or of a
 * client reaped since it connected. 127.0.0.1 and ::1 only; every wait
 * is on a real event and bounded; every haproxy is ended by pid.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "base/proc.h"
#include "t/lib/harness.h"
#include "t/lib/takeover.h"
#include "wrapper/fdstore/getsocks.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/* A listening socket as haproxy makes one, on a port the kernel chose. */
static int listener(int family, int v6only, guint16 *port)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	struct sockaddr_storage ss = { 0 };
	socklen_t len;

	g_assert_cmpint(fd, >=, 0);
	g_assert_no_errno(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				     sizeof(one)));
	g_assert_no_errno(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
				     sizeof(one)));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		g_assert_no_errno(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					     &v6only, sizeof(v6only)));
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		close(fd);
		return -1;
	}
	g_assert_no_errno(listen(fd, 128));
	g_assert_no_errno(getsockname(fd, (struct sockaddr *)&ss, &len));
	*port = ntohs(family == AF_INET6 ?
			      ((struct sockaddr_in6 *)&ss)->sin6_port :
			      ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* A unix listener as haproxy leaves one: bound under its temporary name
 * (PATH.PID.tmp, which -x matches on every version), then renamed. */
static int unix_listener(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	g_autofree gchar *tmp = g_strdup_printf("%s.%d.tmp", path, getpid());
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpuint(strlen(tmp), <, sizeof(a.sun_path));
	strcpy(a.sun_path, tmp);
	g_assert_no_errno(bind(fd, (struct sockaddr *)&a, sizeof(a)));
	g_assert_no_errno(listen(fd, 128));
	g_assert_no_errno(rename(tmp, path));
	return fd;
}

/* The listening sockets on port in /proc/net/tcp6. */
static guint tcp6_listeners(guint16 port)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	guint n = 0;

	g_assert_true(g_file_get_contents("/proc/net/tcp6", &text, NULL,
					  NULL));
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 1; lines[i]; i++) {
		unsigned int lp, st;

		if (sscanf(lines[i], " %*s %*32s:%x %*32s:%*x %x", &lp, &st) ==
			    2 &&
		    lp == port && st == 0x0A)
			n++;
	}
	return n;
}

static gboolean tick(gpointer data)
{
	return G_SOURCE_CONTINUE;
}

/* Runs the main loop (the server's) until done(data), or the time is
 * up. */
static void serve_until(gboolean (*done)(gpointer data), gpointer data)
{
	guint wake = g_timeout_add(20, tick, NULL);
	gint64 end = t_deadline(T_WAIT);

	while (!done(data) && t_ms_left(end) > 0)
		g_main_context_iteration(NULL, TRUE);
	g_source_remove(wake);
}

/* Has pid, a child of ours, exited? Left for the test to reap. */
static gboolean exited(GPid pid)
{
	siginfo_t info = { 0 };

	return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       info.si_pid == pid;
}

static gboolean child_exited(gpointer pid)
{
	return exited(GPOINTER_TO_INT(pid));
}

struct served {
	GPid pid;		/* haproxy, or what started it */
	GArray *inodes;		/* the sockets handed */
};

/* pid or one of its children (a worker, a haproxy a shell started) holds
 * every socket handed, or pid has exited. */
static gboolean served(gpointer data)
{
	const struct served *sv = data;
	g_autoptr(GArray) children = NULL;

	if (exited(sv->pid) || holds_all(sv->pid, sv->inodes))
		return TRUE;
	children = proc_children(sv->pid);
	for (guint i = 0; i < children->len; i++)
		if (holds_all(g_array_index(children, GPid, i), sv->inodes))
			return TRUE;
	return FALSE;
}

/* haproxy in the foreground, taking its listeners from path. */
static GPid start_haproxy(const char *dir, const char *cfg, const char *path)
{
	GPid pid = T_FOREIGN(dir, .program = t_haproxy_path(),
			     .args = (const char *const[]){ "-db", "-f", cfg,
							    "-x", path, NULL });

	t_remember(pid, t_haproxy_path());
	return pid;
}

struct run {
	gchar *dir;
	gchar *path;		/* the -x socket */
	GString *binds;		/* extra bind lines */
	GArray *fds;		/* int, the listeners bound here: the server's */
	guint16 port;		/* the first IPv4 one: answers HTTP */
};

static GArray *handed_inodes(const struct run *r)
{
	return fd_inodes(&g_array_index(r->fds, int, 0), r->fds->len);
}

/* pid holds every listener bound here. */
static void assert_holds_handed(GPid pid, const struct run *r)
{
	g_autoptr(GArray) handed = handed_inodes(r);

	assert_holds_all(pid, handed);
}

/* Serves until pid, or a child of it, holds every listener bound here. */
static void serve_until_served(GPid pid, const struct run *r)
{
	g_autoptr(GArray) handed = handed_inodes(r);
	struct served sv = { pid, handed };

	serve_until(served, &sv);
}

static void run_init(struct run *r)
{
	int fd;

	r->dir = t_tmpdir();
	r->path = g_build_filename(t_short_dir(r->dir), "x.sock", NULL);
	r->binds = g_string_new(NULL);
	r->fds = g_array_new(FALSE, FALSE, sizeof(int));
	fd = listener(AF_INET, 0, &r->port);
	g_array_append_val(r->fds, fd);
}

static void run_bind(struct run *r, int fd, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);

static void run_bind(struct run *r, int fd, const char *fmt, ...)
{
	va_list ap;

	g_array_append_val(r->fds, fd);
	g_string_append(r->binds, "    bind ");
	va_start(ap, fmt);
	g_string_append_vprintf(r->binds, fmt, ap);
	va_end(ap);
	g_string_append_c(r->binds, '\n');
}

/* The listeners are the server's: it closes them when it is freed. */
static void run_clear(struct run *r)
{
	t_end_all_started();
	g_array_free(r->fds, TRUE);
	g_string_free(r->binds, TRUE);
	t_rmtree(r->dir);
	g_free(r->path);
	g_free(r->dir);
}

/* haproxy as above, forked by a shell that waits for it: the shell's
 * pid; *haproxy, the one that asks. */
static GPid start_haproxy_forked(const char *dir, const char *cfg,
				 const char *path, GPid *haproxy)
{
	const char *args[] = { "-c", "\"$0\" \"$@\"; exit $?",
			       t_haproxy_path(), "-db", "-f", cfg, "-x", path,
			       NULL };
	gint64 end = t_deadline(T_WAIT);
	GPid pid = T_FOREIGN(dir, .program = "/bin/sh", .args = args);

	*haproxy = 0;
	while (!*haproxy && t_ms_left(end) > 0) {
		g_autoptr(GArray) children = proc_children(pid);

		if (children->len)
			*haproxy = g_array_index(children, GPid, 0);
		else
			g_usleep(1000);
	}
	g_assert_cmpint(*haproxy, >, 0);
	t_remember(*haproxy, t_haproxy_path());
	return pid;
}

/* The server up, haproxy started on it (forked by a shell the server is
 * told of, with forked): it serves, on our sockets. */
static void run_haproxy_as(struct run *r, struct getsocks_server *s,
			   gboolean forked)
{
	g_autofree gchar *cfg = t_write_config(r->dir, "h.cfg", r->port,
					       r->binds->str);
	GPid shell = 0, pid;

	if (forked) {
		shell = start_haproxy_forked(r->dir, cfg, r->path, &pid);
		getsocks_server_expect(s, shell);
	} else {
		pid = start_haproxy(r->dir, cfg, r->path);
		getsocks_server_expect(s, pid);
	}
	/* Until it ends, if it does. */
	serve_until_served(shell ? shell : pid, r);
	g_assert_cmpint(t_wait_answered_by(r->port, pid), ==, pid);
	assert_holds_handed(pid, r);
	/* Nothing bound beside ours: one listener on the port. */
	{
		g_autoptr(GArray) on_port = tcp_inodes(r->port, 0, 0x0A);

		g_assert_cmpuint(on_port->len, ==, 1);
	}
	if (shell) {
		t_end_all_started();
		g_assert_cmpint(t_wait_child(shell, T_WAIT), >=, 0);
	}
}

static void run_haproxy(struct run *r, struct getsocks_server *s)
{
	run_haproxy_as(r, s, FALSE);
}

static struct getsocks_server *run_server(struct run *r)
{
	g_autoptr(GError) error = NULL;
	/* The listeners given to the server, as the fd store gives its own;
	 * the wrapper offers option copies to the versions that read them. */
	struct getsocks_server *s = getsocks_server_take(
		r->path, &g_array_index(r->fds, int, 0), r->fds->len,
		!t_haproxy_at_least(2, 3), &error);

	g_assert_no_error(error);
	return s;
}

static gboolean applies(void)
{
	if (!t_have_haproxy()) {
		g_test_skip("no haproxy to run");
		return FALSE;
	}
	return t_haproxy_needs(1, 8, "-x");
}

static void test_ipv4(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	struct stat st;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	/* Whoever connects takes the listeners: the owner only. */
	g_assert_no_errno(stat(r.path, &st));
	g_assert_cmpuint(st.st_mode & 07777, ==, 0600);
	run_haproxy(&r, s);
	g_clear_pointer(&s, getsocks_server_free);
	g_assert_false(g_file_test(r.path, G_FILE_TEST_EXISTS));
	run_clear(&r);
}

/* More than a batch: three messages, each acknowledged. */
static void test_batches(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;

	if (!applies())
		return;
	run_init(&r);
	for (guint i = 0; i < 2 * GETSOCKS_BATCH + 10; i++) {
		guint16 port;
		int fd = listener(AF_INET, 0, &port);

		run_bind(&r, fd, "127.0.0.1:%u", port);
	}
	s = run_server(&r);
	run_haproxy(&r, s);
	run_clear(&r);
}

/*
 * Linux makes a socket bound to ::1 v6only whatever was asked. haproxy
 * 1.8 to 2.2 match the options of the record, and every set is offered:
 * each line takes our socket. From 2.3 haproxy reads v6only from the
 * socket and takes it for a "v6only" line only; for the others it binds a
 * socket of its own (its own -x does the same), and ours is left to the
 * wrapper to close.
 */
static void test_ipv6(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	guint16 only, both, plain;
	gboolean options_read = t_haproxy_at_least(2, 3);
	int fd;

	if (!applies())
		return;
	fd = listener(AF_INET6, 1, &only);
	if (fd < 0) {
		g_test_skip("no ::1 here");
		return;
	}
	run_init(&r);
	run_bind(&r, fd, "[::1]:%u v6only", only);
	if (!options_read) {
		fd = listener(AF_INET6, 0, &both);
		run_bind(&r, fd, "[::1]:%u v4v6", both);
		fd = listener(AF_INET6, 0, &plain);
		run_bind(&r, fd, "[::1]:%u", plain);
	} else {
		g_autofree gchar *more = NULL;

		fd = listener(AF_INET6, 0, &both);
		close(fd);
		fd = listener(AF_INET6, 0, &plain);
		close(fd);
		more = g_strdup_printf("    bind [::1]:%u v4v6\n"
				       "    bind [::1]:%u\n", both, plain);
		g_string_append(r.binds, more);
	}
	s = run_server(&r);
	run_haproxy(&r, s);
	g_assert_cmpuint(tcp6_listeners(only), ==, 1);
	g_assert_cmpuint(tcp6_listeners(both), ==, 1);
	g_assert_cmpuint(tcp6_listeners(plain), ==, 1);
	run_clear(&r);
}

static void test_unix(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	g_autofree gchar *sock = NULL;

	if (!applies())
		return;
	run_init(&r);
	sock = g_build_filename(t_short_dir(r.dir), "u.sock", NULL);
	run_bind(&r, unix_listener(sock), "unix@%s", sock);
	s = run_server(&r);
	run_haproxy(&r, s);
	run_clear(&r);
}

/* A raw client of the server, in this process: non-blocking, so that the
 * main loop serves between its steps. */
static int raw_client(const char *path, const char *request)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	strcpy(a.sun_path, path);
	g_assert_no_errno(connect(fd, (struct sockaddr *)&a, sizeof(a)));
	g_assert_cmpint(send(fd, request, strlen(request), 0), ==,
			strlen(request));
	return fd;
}

/* Reads what the server sent (the main loop running meanwhile) until it
 * closes; the descriptors received, closed at once. */
static gsize drain(int fd, guint *fds_got)
{
	guint wake = g_timeout_add(20, tick, NULL);
	gint64 end = t_deadline(T_WAIT);
	gsize total = 0;

	*fds_got = 0;
	while (t_ms_left(end) > 0) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * GETSOCKS_BATCH)];
			struct cmsghdr align;
		} control;
		char data[8192];
		struct iovec iov = { data, sizeof(data) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = control.buf,
				      .msg_controllen = sizeof(control.buf) };
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		/* Closed, or closed with our request unread: a reset. */
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		if (n < 0) {
			g_assert_cmpint(errno, ==, EAGAIN);
			g_main_context_iteration(NULL, TRUE);
			continue;
		}
		total += n;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
		     c = CMSG_NXTHDR(&msg, c)) {
			guint k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (guint i = 0; i < k; i++) {
				int got;

				memcpy(&got, CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
				close(got);
			}
			*fds_got += k;
		}
	}
	g_source_remove(wake);
	g_assert_cmpint(t_ms_left(end), >, 0);
	return total;
}

/* A client that takes the first batch and never acknowledges it is
 * closed after a while; the next client still gets everything. */
static void test_no_ack(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	guint fds_got;
	int fd;

	if (!applies())
		return;
	run_init(&r);
	for (guint i = 0; i < GETSOCKS_BATCH + 1; i++) {
		guint16 port;
		int one = listener(AF_INET, 0, &port);

		run_bind(&r, one, "127.0.0.1:%u", port);
	}
	s = run_server(&r);
	getsocks_server_expect(s, getpid());
	fd = raw_client(r.path, "_getsocks\n");
	g_assert_cmpuint(drain(fd, &fds_got), >, sizeof(int));
	close(fd);
	g_assert_cmpuint(fds_got, ==, GETSOCKS_BATCH);
	run_haproxy(&r, s);
	run_clear(&r);
}

/* Anything but haproxy's request gets nothing at all. */
static void test_not_haproxy(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	guint fds_got;
	int fd;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	getsocks_server_expect(s, getpid());
	fd = raw_client(r.path, "show info\n");
	g_assert_cmpuint(drain(fd, &fds_got), ==, 0);
	close(fd);
	g_assert_cmpuint(fds_got, ==, 0);
	run_haproxy(&r, s);
	run_clear(&r);
}

/* In a child, after fork or clone (async-signal-safe calls only): asks
 * path for the sockets; 0 when nothing came, the exit status. */
static int ask_in_child(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	union {
		char c[CMSG_SPACE(sizeof(int) * GETSOCKS_BATCH)];
		struct cmsghdr align;
	} control;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd;
	ssize_t n;

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(a.sun_path, path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return 4;
	/* Closed on us before the request is out: nothing got. */
	if (send(fd, "_getsocks\n", 10, MSG_NOSIGNAL) != 10)
		return errno == EPIPE || errno == ECONNRESET ? 0 : 6;
	msg.msg_control = control.c;
	msg.msg_controllen = sizeof(control.c);
	n = recvmsg(fd, &msg, 0);
	/* Closed on us, our request unread: a reset. */
	if (n < 0 && errno == ECONNRESET)
		return 0;
	return n == 0 && !msg.msg_controllen ? 0 : 1;
}

/* The file's mode is the first guard; the peer's uid the second: a
 * client of another user gets nothing even where the mode would let it
 * connect. */
static void test_other_user(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	g_autofree gchar *open_dir = NULL;
	pid_t child;

	if (!applies())
		return;
	run_init(&r);
	/* A directory the other user can cross, short enough for a socket
	 * path whatever $TMPDIR is: in /tmp itself. */
	open_dir = g_strdup("/tmp/hsw-getsocks-XXXXXX");
	g_assert_nonnull(g_mkdtemp(open_dir));
	g_assert_no_errno(chmod(open_dir, 0711));
	g_free(r.path);
	r.path = g_build_filename(open_dir, "x.sock", NULL);
	s = run_server(&r);
	g_assert_no_errno(chmod(r.path, 0666));
	child = fork();
	g_assert_cmpint(child, >=, 0);
	if (child == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(3);
		_exit(ask_in_child(r.path));
	}
	/* The one launched, even: its uid alone refuses it. */
	getsocks_server_expect(s, child);
	serve_until(child_exited, GINT_TO_POINTER(child));
	g_assert_cmpint(t_wait_child(child, T_WAIT), ==, 0);
	g_clear_pointer(&s, getsocks_server_free);
	g_assert_no_errno(rmdir(open_dir));
	run_clear(&r);
}


/* A child given pid (free again: reaped) by clone3's set_tid, root's
 * alone: it asks path for the sockets and exits with ask_in_child()'s
 * answer, or, without a path, waits to be killed. 0 (the test skipped)
 * where the kernel refuses. */
static GPid clone_with_pid(GPid pid, const char *path)
{
	pid_t tid = pid;
	struct clone_args ca = {
		.exit_signal = SIGCHLD,
		.set_tid = (guint64)(guintptr)&tid,
		.set_tid_size = 1,
	};
	long child = syscall(SYS_clone3, &ca, sizeof(ca));

	if (child == 0) {
		if (path)
			_exit(ask_in_child(path));
		for (;;)
			pause();
	}
	if (child < 0) {
		g_test_skip("no process of a chosen pid (clone3 set_tid)");
		return 0;
	}
	g_assert_cmpint(child, ==, pid);
	return child;
}

/*
 * The launched process ended and was reaped: its pid names it no more.
 * Another process given that pid gets nothing.
 */
static void test_launched_pid_reused(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	GPid launched, again;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	launched = fork();
	g_assert_cmpint(launched, >=, 0);
	if (launched == 0)
		_exit(0);
	/* Told while it is an unreaped child, as the wrapper tells it. */
	getsocks_server_expect(s, launched);
	g_assert_cmpint(t_wait_child(launched, T_WAIT), ==, 0);
	again = clone_with_pid(launched, r.path);
	if (again) {
		serve_until(child_exited, GINT_TO_POINTER(again));
		g_assert_cmpint(t_wait_child(again, T_WAIT), ==, 0);
	}
	run_clear(&r);
}

/*
 * The client connected, then ended and was reaped before the server got
 * to it: its pid may name another process by then, here one the launched
 * process (this test) forked, which would pass for its worker. The
 * connection gets nothing.
 */
static void asker_pid_reused(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	GPid asker, again;
	guint fds_got;
	int fd;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	getsocks_server_expect(s, getpid());
	/* Ours to hold; the asker's connect() names it as the peer. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	g_assert_cmpint(fd, >=, 0);
	asker = fork();
	g_assert_cmpint(asker, >=, 0);
	if (asker == 0) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		strcpy(a.sun_path, r.path);
		_exit(connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0);
	}
	g_assert_cmpint(t_wait_child(asker, T_WAIT), ==, 0);
	again = clone_with_pid(asker, NULL);
	if (again) {
		g_assert_cmpint(send(fd, "_getsocks\n", 10, MSG_NOSIGNAL), ==,
				10);
		drain(fd, &fds_got);
		g_assert_no_errno(kill(again, SIGKILL));
		g_assert_cmpint(t_wait_child(again, T_WAIT), ==, SIGKILL);
		if (fds_got)
			g_error("a connection whose pid was reused got %u "
				"listening sockets", fds_got);
	}
	close(fd);
	run_clear(&r);
}

static void test_asker_pid_reused(void)
{
	asker_pid_reused();
}

/* SO_PEERPIDFD fails with err in this process (all its threads). */
static gboolean peerpidfd_fails_with(int err)
{
#if defined(__x86_64__)
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getsockopt, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOL_SOCKET, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SO_PEERPIDFD, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = G_N_ELEMENTS(f), .filter = f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_TSYNC, &prog) == 0;
#else
	return FALSE;
#endif
}

/*
 * The same where the kernel gives no pidfd for a reaped peer: Linux 6.5
 * to 6.16 answer SO_PEERPIDFD with EINVAL then (6.17 gives one of an
 * ended process). A filter makes this kernel answer so.
 */
static void test_asker_pid_reused_einval(void)
{
	if (g_test_subprocess()) {
		if (!peerpidfd_fails_with(EINVAL)) {
			g_test_skip("no seccomp filter");
			return;
		}
		asker_pid_reused();
		return;
	}
	/* The subprocess's own skips would read as a failure here (its
	 * exit status 77): what it needs is checked first. */
	if (!applies())
		return;
#if !defined(__x86_64__)
	g_test_skip("no seccomp filter");
	return;
#endif
	if (geteuid() != 0) {
		g_test_skip("no process of a chosen pid (clone3 set_tid)");
		return;
	}
	g_test_trap_subprocess(NULL, 3 * T_WAIT * 1000,
			       G_TEST_SUBPROCESS_INHERIT_STDOUT |
				       G_TEST_SUBPROCESS_INHERIT_STDERR);
	g_test_trap_assert_passed();
}

/*
 * Only the process the server was told of gets the sockets: before it is
 * named, nobody; then another process of the same user (this test) gets
 * nothing, not one descriptor, while haproxy is served.
 */
static void test_only_launched(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	guint fds_got;
	int fd;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	fd = raw_client(r.path, "_getsocks\n");
	drain(fd, &fds_got);
	close(fd);
	g_assert_cmpuint(fds_got, ==, 0);
	run_haproxy(&r, s);
	fd = raw_client(r.path, "_getsocks\n");
	drain(fd, &fds_got);
	close(fd);
	g_assert_cmpuint(fds_got, ==, 0);
	run_clear(&r);
}

/* The process launched forks the one that asks (as haproxy 3.4 does in
 * master-worker mode, the worker asking): it is served. */
static void test_forked_client(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	run_haproxy_as(&r, s, TRUE);
	run_clear(&r);
}

/*
 * haproxy with -db and "master-worker" in its global section: from 3.1
 * the worker, forked by the launched master, loads the configuration
 * and asks for the sockets (before, the master asks and the worker
 * inherits them). It is served, and serves on the very sockets.
 */
static void test_master_worker_keyword(void)
{
	struct run r = { 0 };
	g_autoptr(GetsocksServer) s = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *body = NULL;
	g_auto(GStrv) parts = NULL;
	g_autofree gchar *mw = NULL;
	g_autofree gchar *cfg = NULL;
	GPid master, worker;

	if (!applies())
		return;
	run_init(&r);
	s = run_server(&r);
	text = t_config_text(r.port, NULL);
	parts = g_strsplit(text, "global\n", 2);
	g_assert_cmpuint(g_strv_length(parts), ==, 2);
	mw = g_strconcat(parts[0], "global\n    master-worker\n", parts[1],
			 NULL);
	cfg = t_write_file(r.dir, "h.cfg", mw);
	master = start_haproxy(r.dir, cfg, r.path);
	getsocks_server_expect(s, master);
	serve_until_served(master, &r);
	body = t_http_get(r.port, T_WAIT);
	g_assert_nonnull(body);
	worker = t_pid_in(body, "pid=");
	t_remember(worker, t_haproxy_path());
	g_assert_cmpint(worker, !=, master);
	g_assert_cmpint(proc_parent(worker), ==, master);
	assert_holds_handed(worker, &r);
	run_clear(&r);
}

/* Nothing to offer: no server (a count of 0 fails haproxy 1.8 to 2.2). */
static void test_nothing_to_offer(void)
{
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *path = g_build_filename(dir, "x.sock", NULL);
	g_autoptr(GError) error = NULL;
	int udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	g_assert_null(getsocks_server_take(path, &udp, 1, TRUE, &error));
	g_assert_nonnull(error);
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
	close(udp);
	t_rmtree(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	t_cleanup_on_abort();
	/* A client gone mid-exchange must not kill the test. */
	signal(SIGPIPE, SIG_IGN);

	g_test_add_func("/getsocks/ipv4", test_ipv4);
	g_test_add_func("/getsocks/batches", test_batches);
	g_test_add_func("/getsocks/ipv6", test_ipv6);
	g_test_add_func("/getsocks/unix", test_unix);
	g_test_add_func("/getsocks/no-ack", test_no_ack);
	g_test_add_func("/getsocks/not-haproxy", test_not_haproxy);
	g_test_add_func("/getsocks/other-user", test_other_user);
	g_test_add_func("/getsocks/only-launched", test_only_launched);
	g_test_add_func("/getsocks/forked-client", test_forked_client);
	g_test_add_func("/getsocks/master-worker-keyword",
			test_master_worker_keyword);
	g_test_add_func("/getsocks/launched-pid-reused",
			test_launched_pid_reused);
	g_test_add_func("/getsocks/asker-pid-reused", test_asker_pid_reused);
	g_test_add_func("/getsocks/asker-pid-reused-einval",
			test_asker_pid_reused_einval);
	g_test_add_func("/getsocks/nothing-to-offer", test_nothing_to_offer);
	return g_test_run();
}
