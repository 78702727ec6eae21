/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sockdiag_tcp_listeners() and proc_tcp_listeners(), the listener discovery
 * of the SO_REUSEPORT attach: the listening sockets' inodes and
 * nothing else (a connection, either end, is never one), IPv4 and IPv6;
 * in a namespace of its own the very set /proc/net/tcp{,6} gives; and the
 * fallback to /proc/PID/net where sock_diag cannot answer: a process in
 * another network namespace, netlink refused by a seccomp filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/procnet.h"
#include "base/sockdiag.h"

#define NO_NETNS "no network namespace of its own for a test here"

static guint64 inode_of(int fd)
{
	struct stat st;

	g_assert_cmpint(fstat(fd, &st), ==, 0);
	return st.st_ino;
}

static socklen_t loopback(int family, struct sockaddr_storage *ss)
{
	*ss = (struct sockaddr_storage){ .ss_family = family };
	if (family == AF_INET) {
		((struct sockaddr_in *)ss)->sin_addr.s_addr =
			htonl(INADDR_LOOPBACK);
		return sizeof(struct sockaddr_in);
	}
	((struct sockaddr_in6 *)ss)->sin6_addr = in6addr_loopback;
	return sizeof(struct sockaddr_in6);
}

/* A listener on 127.0.0.1 or ::1, any free port; -1 when this host has
 * no such address (IPv6 disabled). */
static int listener(int family)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback(family, &ss);
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 && family == AF_INET6)
		return -1;
	g_assert_cmpint(fd, >=, 0);
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		g_assert_cmpint(family, ==, AF_INET6);
		close(fd);
		return -1;
	}
	g_assert_cmpint(listen(fd, 8), ==, 0);
	return fd;
}

/* An established connection to listener l: both ends, as fds. */
static void connection(int l, int end[2])
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	g_assert_cmpint(getsockname(l, (struct sockaddr *)&ss, &len), ==, 0);
	end[0] = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(end[0], >=, 0);
	g_assert_cmpint(connect(end[0], (struct sockaddr *)&ss, len), ==, 0);
	end[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	g_assert_cmpint(end[1], >=, 0);
}

/* Listeners and connections of one process, IPv4 then IPv6. */
struct sockets {
	int listener[2];	/* -1: that family is not there */
	int conn[2][2];
};

static void sockets_open(struct sockets *s)
{
	static const int families[2] = { AF_INET, AF_INET6 };

	for (int i = 0; i < 2; i++) {
		s->listener[i] = listener(families[i]);
		s->conn[i][0] = s->conn[i][1] = -1;
		if (s->listener[i] >= 0)
			connection(s->listener[i], s->conn[i]);
	}
	g_assert_cmpint(s->listener[0], >=, 0);
}

static void sockets_close(struct sockets *s)
{
	for (int i = 0; i < 2; i++) {
		if (s->listener[i] < 0)
			continue;
		close(s->listener[i]);
		close(s->conn[i][0]);
		close(s->conn[i][1]);
	}
}

static gboolean has(GHashTable *inodes, int fd)
{
	guint64 ino = inode_of(fd);

	return g_hash_table_contains(inodes, &ino);
}

/* Every listener of s in inodes, no end of a connection. */
static void assert_listeners_only(GHashTable *inodes, struct sockets *s)
{
	for (int i = 0; i < 2; i++) {
		if (s->listener[i] < 0)
			continue;
		g_assert_true(has(inodes, s->listener[i]));
		g_assert_false(has(inodes, s->conn[i][0]));
		g_assert_false(has(inodes, s->conn[i][1]));
	}
}

/* A network namespace of our own with its loopback up: as root, or
 * through a user namespace; FALSE when neither is allowed here. */
static gboolean own_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd;

	if (unshare(CLONE_NEWNET) < 0 &&
	    unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return FALSE;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(ioctl(fd, SIOCGIFFLAGS, &ifr), ==, 0);
	ifr.ifr_flags |= IFF_UP;
	g_assert_cmpint(ioctl(fd, SIOCSIFFLAGS, &ifr), ==, 0);
	close(fd);
	return TRUE;
}

/* Can a child have a network namespace of its own here? */
static gboolean netns_available(void)
{
	pid_t pid = fork();
	int status;

	g_assert_cmpint(pid, >=, 0);
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) == 0 ||
		      unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : 1);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static gboolean same_set(GHashTable *a, GHashTable *b)
{
	GHashTableIter it;
	gpointer key;

	if (g_hash_table_size(a) != g_hash_table_size(b))
		return FALSE;
	g_hash_table_iter_init(&it, a);
	while (g_hash_table_iter_next(&it, &key, NULL))
		if (!g_hash_table_contains(b, key))
			return FALSE;
	return TRUE;
}

/* In the host's namespace, among whatever else listens there. */
static void test_listeners(void)
{
	struct sockets s;
	g_autoptr(GHashTable) inodes = NULL;
	g_autoptr(GError) error = NULL;

	sockets_open(&s);
	if (s.listener[1] < 0)
		g_test_message("no ::1 here: IPv4 only");
	inodes = sockdiag_tcp_listeners(&error);
	g_assert_no_error(error);
	g_assert_nonnull(inodes);
	assert_listeners_only(inodes, &s);
	sockets_close(&s);
}

/* Alone in a namespace: exactly our listeners, and the same set as the
 * slow path's. Run in a subprocess, which the unshare changes for good. */
static void test_exactly(void)
{
	if (g_test_subprocess()) {
		struct sockets s;
		g_autoptr(GHashTable) inodes = NULL;
		g_autoptr(GHashTable) from_proc = NULL;
		g_autoptr(GError) error = NULL;
		guint expected = 0;

		g_assert_true(own_netns());
		sockets_open(&s);
		inodes = sockdiag_tcp_listeners(&error);
		g_assert_no_error(error);
		assert_listeners_only(inodes, &s);
		for (int i = 0; i < 2; i++)
			expected += s.listener[i] >= 0;
		g_assert_cmpuint(g_hash_table_size(inodes), ==, expected);
		from_proc = proc_net_tcp_listeners("/proc/self/net");
		g_assert_true(same_set(inodes, from_proc));
		/* Nothing listens: an empty set, not a failure. */
		sockets_close(&s);
		g_hash_table_unref(g_steal_pointer(&inodes));
		inodes = sockdiag_tcp_listeners(&error);
		g_assert_no_error(error);
		g_assert_cmpuint(g_hash_table_size(inodes), ==, 0);
		return;
	}
	if (!netns_available()) {
		g_test_skip(NO_NETNS);
		return;
	}
	g_test_trap_subprocess(NULL, 10 * G_USEC_PER_SEC, 0);
	g_test_trap_assert_passed();
}

/*
 * A process in another namespace: sock_diag would answer with ours, so
 * proc_tcp_listeners reads its /proc/PID/net. The child listens there and
 * tells its listener's inode, then waits for the pipe to close.
 */
static void test_other_netns(void)
{
	int to_parent[2], hold[2];
	struct sockets s;
	g_autoptr(GHashTable) inodes = NULL;
	guint64 theirs = 0;
	pid_t pid;
	int status;
	char c;

	g_assert_cmpint(pipe2(to_parent, O_CLOEXEC), ==, 0);
	g_assert_cmpint(pipe2(hold, O_CLOEXEC), ==, 0);
	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		int l;

		close(to_parent[0]);
		close(hold[1]);
		if (!own_netns())
			_exit(77);
		l = listener(AF_INET);
		theirs = inode_of(l);
		if (write(to_parent[1], &theirs, sizeof(theirs)) !=
		    sizeof(theirs))
			_exit(1);
		(void)!read(hold[0], &c, 1);	/* until the parent is done */
		_exit(0);
	}
	close(to_parent[1]);
	close(hold[0]);
	if (read(to_parent[0], &theirs, sizeof(theirs)) != sizeof(theirs)) {
		g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
		g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 77);
		g_test_skip(NO_NETNS);
		close(to_parent[0]);
		close(hold[1]);
		return;
	}
	sockets_open(&s);
	g_assert_true(proc_same_netns(getpid()));
	g_assert_false(proc_same_netns(pid));
	inodes = proc_tcp_listeners(pid);
	g_assert_true(g_hash_table_contains(inodes, &theirs));
	g_assert_false(has(inodes, s.listener[0]));
	/* Ours, through sock_diag: the same question asked of our pid. */
	g_hash_table_unref(g_steal_pointer(&inodes));
	inodes = proc_tcp_listeners(getpid());
	assert_listeners_only(inodes, &s);
	g_assert_false(g_hash_table_contains(inodes, &theirs));
	close(hold[1]);
	close(to_parent[0]);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	sockets_close(&s);
}

/* From now on socket(AF_NETLINK, ...) fails with EPERM in this process. */
static gboolean refuse_netlink(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = G_N_ELEMENTS(code), .filter = code };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/* Netlink refused (a seccomp filter): an error, and the /proc path. */
static void test_refused(void)
{
	if (g_test_subprocess()) {
		struct sockets s;
		g_autoptr(GHashTable) inodes = NULL;
		g_autoptr(GError) error = NULL;

		sockets_open(&s);
		g_assert_true(refuse_netlink());
		inodes = sockdiag_tcp_listeners(&error);
		g_assert_null(inodes);
		g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM);
		inodes = proc_tcp_listeners(getpid());
		assert_listeners_only(inodes, &s);
		sockets_close(&s);
		return;
	}
	g_test_trap_subprocess(NULL, 10 * G_USEC_PER_SEC, 0);
	g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sockdiag/listeners", test_listeners);
	g_test_add_func("/sockdiag/exactly", test_exactly);
	g_test_add_func("/sockdiag/other-netns", test_other_netns);
	g_test_add_func("/sockdiag/refused", test_refused);
	return g_test_run();
}
