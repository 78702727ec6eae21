/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_children() while the children change: a haproxy master forks its
 * new worker, then reaps the old one. The kernel's PID/task/TID/children
 * list, read while a child listed before another is reaped, skips the
 * ones after it: the reload verdict then saw no new worker.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "base/proc.h"
#include "base/procnet.h"

#define SLOTS 4096

/* Shared with the churning parent: gen k is published once child k is
 * forked; child k is killed only after gen k + 1 is. */
struct churn {
	atomic_long gen;
	atomic_int pid[SLOTS];
};

static pid_t idle_child(void)
{
	pid_t self = getpid();
	pid_t pid = fork();

	if (pid < 0)
		_exit(1);
	if (pid == 0) {
		/* Ends with the churner, even one gone before this line. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self)
			_exit(0);
		for (;;)
			pause();
	}
	return pid;
}

static void __attribute__((noreturn)) churn_forever(struct churn *c)
{
	pid_t old;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	old = idle_child();
	c->pid[0] = old;
	for (long k = 1;; k++) {
		pid_t fresh = idle_child();

		c->pid[k % SLOTS] = fresh;
		atomic_store(&c->gen, k);
		kill(old, SIGKILL);
		waitpid(old, NULL, 0);
		old = fresh;
	}
}

/* A child alive during the whole call is in its answer. */
static void test_children_churn(void)
{
	struct churn *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gint64 deadline = g_get_monotonic_time() + 3 * G_USEC_PER_SEC;
	guint checked = 0, missed = 0;
	pid_t parent;
	int status;

	g_assert_true(c != MAP_FAILED);
	parent = fork();
	g_assert_cmpint(parent, >=, 0);
	if (parent == 0)
		churn_forever(c);
	while (atomic_load(&c->gen) < 1 && g_get_monotonic_time() < deadline)
		g_usleep(100);
	/* Enough checked calls to see the skip several times over (about
	 * one call in a few thousand skips the new child on a 2-CPU host), and a
	 * bound in time for a slow one. */
	while (checked < 200000 && g_get_monotonic_time() < deadline) {
		long gen = atomic_load(&c->gen);
		GPid want = c->pid[gen % SLOTS];
		g_autoptr(GArray) kids = proc_children(parent);

		if (atomic_load(&c->gen) != gen)
			continue;
		checked++;
		if (!proc_pids_contain(kids, want) && missed++ < 3)
			g_test_message("child %d missed (%u listed)", want,
				       kids->len);
	}
	g_assert_cmpint(kill(parent, SIGKILL), ==, 0);
	g_assert_cmpint(waitpid(parent, &status, 0), ==, parent);
	munmap(c, sizeof(*c));
	g_test_message("%u calls checked, %u missed a child", checked, missed);
	g_assert_cmpuint(checked, >, 0);
	g_assert_cmpuint(missed, ==, 0);
}

/* A pidfd is handed out only for the very process found: the same pid
 * with another start time (a pid reused since) gets none, nor does a
 * process that has ended. */
static void test_open_if_same(void)
{
	pid_t child = idle_child();
	struct proc_stat st;
	int status, fd;

	g_assert_true(proc_stat_at(PROC_ROOT, child, &st, NULL));
	fd = proc_open_if_same_at(PROC_ROOT, child, st.start_time);
	if (fd < 0 && errno == ENOSYS) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		g_test_skip("no pidfd_open() here");
		return;
	}
	g_assert_cmpint(fd, >=, 0);
	close(fd);
	g_assert_cmpint(proc_open_if_same_at(PROC_ROOT, child,
					     st.start_time + 1), ==, -1);
	g_assert_cmpint(kill(child, SIGKILL), ==, 0);
	g_assert_cmpint(waitpid(child, &status, 0), ==, child);
	g_assert_cmpint(proc_open_if_same_at(PROC_ROOT, child, st.start_time),
			==, -1);
}

/* A listening socket of 127.0.0.1 on a free port, bound. */
static int listener(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_assert_no_errno(bind(fd, (struct sockaddr *)&a, sizeof(a)));
	g_assert_no_errno(listen(fd, 4));
	return fd;
}

static void close_all(GArray *fds)
{
	for (guint i = 0; fds && i < fds->len; i++)
		close(g_array_index(fds, int, i));
	if (fds)
		g_array_free(fds, TRUE);
}

static void collect(int fd, gpointer data)
{
	g_array_append_val((GArray *)data, fd);
}

/* The copies proc_children_listening_each() gives; NULL, none kept, when
 * it fails. */
static GArray *children_listening_fds(GPid parent, const GArray *children)
{
	GArray *fds = g_array_new(FALSE, FALSE, sizeof(int));

	if (proc_children_listening_each(parent, children, collect, fds))
		return fds;
	close_all(fds);
	return NULL;
}

/* A worker's listening sockets are taken only while it is the master's
 * child: under another parent (a pid reused since by someone else's
 * process) or once it ended, none are, and two workers holding the
 * same socket give one copy of it. */
static void test_children_listening_fds(void)
{
	int sock = listener();
	guint64 inode = fd_socket_inode(sock);
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	GArray *fds;
	int status;

	for (guint i = 0; i < 2; i++) {
		pid_t child = idle_child();

		g_array_append_val(pids, child);
	}
	close(sock);
	fds = children_listening_fds(getpid(), pids);
	if (!fds && errno == ENOSYS) {
		g_test_skip("no pidfd_open() here");
	} else {
		g_assert_nonnull(fds);
		g_assert_cmpuint(fds->len, ==, 1);
		g_assert_cmpuint(fd_socket_inode(g_array_index(fds, int, 0)),
				 ==, inode);
		close_all(fds);
		/* Under a parent that runs the same program, but not its. */
		g_assert_null(children_listening_fds(
			g_array_index(pids, GPid, 0), pids));
	}
	for (guint i = 0; i < pids->len; i++) {
		pid_t child = g_array_index(pids, GPid, i);

		g_assert_cmpint(kill(child, SIGKILL), ==, 0);
		g_assert_cmpint(waitpid(child, &status, 0), ==, child);
	}
	g_assert_null(children_listening_fds(getpid(), pids));
	g_array_free(pids, TRUE);
}

/* A child of ours that runs another program (as a haproxy master runs
 * its program sections) with a listening socket it inherited. */
static pid_t program_child(int sock)
{
	pid_t pid = fork();

	if (pid < 0)
		_exit(1);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(sock, 3) == 3)
			execl("/bin/sleep", "sleep", "600", (char *)NULL);
		_exit(1);
	}
	return pid;
}

/* A program a master runs is no worker: its listening sockets are not
 * taken, even one that was its master's. */
static void test_program_not_taken(void)
{
	int sock = listener();
	pid_t program = program_child(sock);
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autofree gchar *exe = g_strdup_printf("/proc/%d/exe", program);
	g_autofree gchar *target = NULL;
	int status;

	g_array_append_val(pids, program);
	close(sock);
	/* Once it runs sleep, holding the socket. */
	for (gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
	     g_get_monotonic_time() < end; g_usleep(1000)) {
		g_free(target);
		target = g_file_read_link(exe, NULL);
		if (target && g_str_has_suffix(target, "/sleep"))
			break;
	}
	g_assert_true(g_str_has_suffix(target, "/sleep"));
	g_assert_null(children_listening_fds(getpid(), pids));
	g_assert_cmpint(kill(program, SIGKILL), ==, 0);
	g_assert_cmpint(waitpid(program, &status, 0), ==, program);
	g_array_free(pids, TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/proc/children-churn", test_children_churn);
	g_test_add_func("/proc/open-if-same", test_open_if_same);
	g_test_add_func("/proc/children-listening-fds",
			test_children_listening_fds);
	g_test_add_func("/proc/program-not-taken", test_program_not_taken);
	return g_test_run();
}
