/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wrapper/steering/reuseport.c on this process's own loopback listeners: the
 * program really makes the kernel move a closing listener's queue to its
 * sibling, one attach per group, and every fallback (off, no SO_REUSEPORT,
 * a process we may not take sockets from, no CAP_BPF) says why in the
 * state instead of failing. The unprivileged cases run in a child that
 * switched to uid 65534.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wrapper/steering/reuseport.h"

#define NOBODY 65534
#define QUEUED 32

/* A listener on loopback (IPv4, or ::1), on port (0: any); its port. */
static int listener(int family, guint16 *port, gboolean reuseport)
{
	struct sockaddr_storage ss = { .ss_family = family };
	socklen_t len = family == AF_INET ? sizeof(struct sockaddr_in) :
					    sizeof(struct sockaddr_in6);
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	g_assert_cmpint(fd, >=, 0);
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		in->sin_port = htons(*port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_addr = in6addr_loopback;
		in6->sin6_port = htons(*port);
	}
	if (reuseport)
		g_assert_cmpint(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
					   sizeof(one)), ==, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&ss, len), ==, 0);
	g_assert_cmpint(listen(fd, 128), ==, 0);
	g_assert_cmpint(getsockname(fd, (struct sockaddr *)&ss, &len), ==, 0);
	if (family == AF_INET)
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* The listeners of pid attached to as a generation's: did every group
 * get its steering program? */
static gboolean attach_to(struct reuseport *r, GPid pid)
{
	struct generation *g = generation_new(1, LAUNCH_DB, "2.6.12");
	gboolean steerable;

	g->pid = pid;
	steerable = reuseport_attach_generation(r, g);
	generation_free(g);
	return steerable;
}

static gboolean attach_self(struct reuseport *r)
{
	return attach_to(r, getpid());
}

static gboolean host_migrates(void)
{
	g_autofree gchar *v = NULL;

	return g_file_get_contents("/proc/sys/net/ipv4/tcp_migrate_req", &v,
				   NULL, NULL) && g_str_has_prefix(v, "1");
}

/* QUEUED connections into a reuseport pair's queues (the kernel spreads
 * them by hash), then one listener closes: how many the other accepts. */
static guint survivors_of_close(int closing, int staying, guint16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int clients[QUEUED];
	guint accepted = 0;
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (guint i = 0; i < QUEUED; i++) {
		clients[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* Established on loopback before connect() returns. */
		g_assert_cmpint(connect(clients[i], (struct sockaddr *)&a,
					sizeof(a)), ==, 0);
	}
	close(closing);
	fcntl(staying, F_SETFL, O_NONBLOCK);
	while ((fd = accept(staying, NULL, NULL)) >= 0) {
		accepted++;
		close(fd);
	}
	g_assert_cmpint(errno, ==, EAGAIN);
	for (guint i = 0; i < QUEUED; i++)
		close(clients[i]);
	return accepted;
}

static void test_off(void)
{
	struct reuseport *r = reuseport_new(FALSE);
	guint16 port = 0;
	int a = listener(AF_INET, &port, TRUE);

	g_assert_false(reuseport_usable(r));
	g_assert_false(attach_self(r));
	g_assert_cmpstr(reuseport_state(r), ==, "off");
	close(a);
	reuseport_free(r);
}

/* Every group, IPv4 and IPv6, gets its program, and the queue survives a
 * close. */
static void test_migrates(void)
{
	struct reuseport *r = reuseport_new(TRUE);
	guint16 port = 0, port6 = 0;
	int a = listener(AF_INET, &port, TRUE);
	int b = listener(AF_INET, &port, TRUE);
	int a6 = listener(AF_INET6, &port6, TRUE);
	int b6 = listener(AF_INET6, &port6, TRUE);

	g_assert_cmpstr(reuseport_state(r), ==, "pending");
	g_assert_true(reuseport_usable(r));
	g_assert_true(attach_self(r));
	g_assert_cmpstr(reuseport_state(r), ==, "active");
	g_assert_cmpuint(survivors_of_close(a, b, port), ==, QUEUED);
	close(b);
	close(a6);
	close(b6);
	reuseport_free(r);
}

/* What the program prevents: without it, a close resets its queue. */
static void test_without_program_resets(void)
{
	guint16 port = 0;
	int a, b;

	if (host_migrates()) {
		g_test_skip("net.ipv4.tcp_migrate_req=1 migrates every group");
		return;
	}
	a = listener(AF_INET, &port, TRUE);
	b = listener(AF_INET, &port, TRUE);
	g_assert_cmpuint(survivors_of_close(a, b, port), <, QUEUED);
	close(b);
}

static void test_noreuseport(void)
{
	struct reuseport *r = reuseport_new(TRUE);
	guint16 port = 0, port2 = 0;
	int plain = listener(AF_INET, &port, FALSE);
	g_autofree gchar *want = g_strdup_printf(
		"unavailable: 127.0.0.1:%u has no SO_REUSEPORT", port);
	g_autofree gchar *partial = g_strdup_printf(
		"partial: 127.0.0.1:%u has no SO_REUSEPORT", port);
	int shared;

	g_assert_false(attach_self(r));
	g_assert_cmpstr(reuseport_state(r), ==, want);
	/* Beside a group that gets it. */
	shared = listener(AF_INET, &port2, TRUE);
	g_assert_false(attach_self(r));
	g_assert_cmpstr(reuseport_state(r), ==, partial);
	close(plain);
	g_assert_true(attach_self(r));
	g_assert_cmpstr(reuseport_state(r), ==, "active");
	close(shared);
	reuseport_free(r);
}

/*
 * A -Ds generation once its parent has forked: the parent (our child)
 * closed its listener, its worker holds it. The program goes through the
 * worker.
 */
static void test_ds_worker(void)
{
	struct reuseport *r = reuseport_new(TRUE);
	struct generation *g = generation_new(1, LAUNCH_DS, "1.7.0");
	pid_t parent, worker;
	int p[2];

	g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
	parent = fork();
	g_assert_cmpint(parent, >=, 0);
	if (parent == 0) {
		guint16 port = 0;
		int a;

		/* Gone with the test, whatever becomes of it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		a = listener(AF_INET, &port, TRUE);
		worker = fork();
		if (worker == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		close(a);
		if (write(p[1], &worker, sizeof(worker)) != sizeof(worker))
			_exit(1);
		while (wait(NULL) > 0 || errno == EINTR)
			;
		_exit(0);
	}
	close(p[1]);
	g_assert_cmpint(read(p[0], &worker, sizeof(worker)), ==,
			sizeof(worker));
	close(p[0]);
	g->pid = parent;
	reuseport_attach_generation(r, g);
	g_assert_cmpstr(reuseport_state(r), ==, "active");
	/* Our grandchild, not reaped while its parent waits for it. */
	kill(worker, SIGKILL);
	g_assert_cmpint(waitpid(parent, NULL, 0), ==, parent);
	generation_free(g);
	reuseport_free(r);
}

/* How many connections wait in fd's accept queue (taken and closed). */
static guint drain_queue(int fd)
{
	guint n = 0;
	int c;

	fcntl(fd, F_SETFL, O_NONBLOCK);
	while ((c = accept(fd, NULL, NULL)) >= 0) {
		n++;
		close(c);
	}
	g_assert_cmpint(errno, ==, EAGAIN);
	return n;
}

/*
 * Steering: once the group's map holds the socket of a generation (our
 * child, listening beside us on the same port), every new connection
 * goes there and none to our own listener. Without it the kernel's hash
 * would send about half of QUEUED to ours (all avoiding it: 2^-QUEUED).
 */
static void test_steers(void)
{
	struct reuseport *r = reuseport_new(TRUE);
	struct generation *g = generation_new(2, LAUNCH_DB, "2.6.12");
	struct sockaddr_in to = { .sin_family = AF_INET };
	guint16 port = 0;
	int a = listener(AF_INET, &port, TRUE);
	int clients[QUEUED];
	pid_t child;
	int p[2];
	char c;

	g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
	child = fork();
	g_assert_cmpint(child, >=, 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(a);
		listener(AF_INET, &port, TRUE);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	g_assert_cmpint(read(p[0], &c, 1), ==, 1);
	close(p[0]);
	g_assert_true(attach_self(r));
	g->pid = child;
	g_assert_cmpuint(reuseport_steer_generation(r, g), ==, 1);
	to.sin_port = htons(port);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (guint i = 0; i < QUEUED; i++) {
		clients[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		g_assert_cmpint(connect(clients[i], (struct sockaddr *)&to,
					sizeof(to)), ==, 0);
	}
	g_assert_cmpuint(drain_queue(a), ==, 0);
	for (guint i = 0; i < QUEUED; i++)
		close(clients[i]);
	kill(child, SIGKILL);
	g_assert_cmpint(waitpid(child, NULL, 0), ==, child);
	close(a);
	generation_free(g);
	reuseport_free(r);
}

/* Runs fn in a child that became uid NOBODY (no capability left); the
 * state it ended with. */
static gchar *as_nobody(void (*fn)(struct reuseport *r, GPid parent),
			gboolean load_first)
{
	GPid parent = getpid();
	char buf[512];
	int p[2];
	ssize_t n;
	pid_t pid;
	int status;

	g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		struct reuseport *r = reuseport_new(TRUE);
		const char *state;

		if (load_first && !reuseport_usable(r))
			_exit(2);
		if (setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(3);
		fn(r, parent);
		state = reuseport_state(r);
		if (write(p[1], state, strlen(state)) < 0)
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);
	g_assert_cmpint(n, >, 0);
	buf[n] = '\0';
	return g_strdup(buf);
}

static void load_only(struct reuseport *r, GPid parent)
{
	reuseport_usable(r);
}

static void attach_to_parent(struct reuseport *r, GPid parent)
{
	attach_to(r, parent);
}

static void test_no_cap_bpf(void)
{
	g_autofree gchar *state = NULL;

	if (geteuid() != 0) {
		g_test_skip("needs root to become another user");
		return;
	}
	state = as_nobody(load_only, FALSE);
	g_assert_cmpstr(state, ==, "unavailable: loading its BPF program "
				   "needs CAP_BPF (or CAP_SYS_ADMIN)");
}

/* A process of another user: its sockets cannot be taken. */
static void test_pid_not_ours(void)
{
	g_autofree gchar *state = NULL;
	g_autofree gchar *want = NULL;
	guint16 port = 0;
	int a;

	if (geteuid() != 0) {
		g_test_skip("needs root to become another user");
		return;
	}
	a = listener(AF_INET, &port, TRUE);
	state = as_nobody(attach_to_parent, TRUE);
	want = g_strdup_printf("unavailable: cannot take the listeners of "
			       "pid %d: ", getpid());
	g_assert_true(g_str_has_prefix(state, want));
	close(a);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reuseport/off", test_off);
	g_test_add_func("/reuseport/migrates", test_migrates);
	g_test_add_func("/reuseport/without-program-resets",
			test_without_program_resets);
	g_test_add_func("/reuseport/noreuseport", test_noreuseport);
	g_test_add_func("/reuseport/ds-worker", test_ds_worker);
	g_test_add_func("/reuseport/steers", test_steers);
	g_test_add_func("/reuseport/no-cap-bpf", test_no_cap_bpf);
	g_test_add_func("/reuseport/pid-not-ours", test_pid_not_ours);
	return g_test_run();
}
