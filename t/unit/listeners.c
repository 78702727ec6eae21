/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_listening_inodes(): which of a process's sockets listen, asked the
 * way the reload verdict asks it of the old generation's successor. Where
 * pidfd_getfd() is refused (a seccomp filter: systemd-nspawn's, under the
 * recommended unit), the answer must not be "none": the wait for the old
 * generation to release its listeners would then be skipped silently.
 */
#include <errno.h>
#include <glib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/procnet.h"

/* From now on pidfd_getfd() fails with EPERM in this process. */
static gboolean refuse_pidfd_getfd(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_getfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = G_N_ELEMENTS(code), .filter = code };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

static guint64 inode_of(int fd)
{
	struct stat st;

	g_assert_cmpint(fstat(fd, &st), ==, 0);
	return st.st_ino;
}

/* A TCP socket bound to 127.0.0.1 (any free port), listening or not. */
static int tcp_socket(gboolean listening)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	if (listening)
		g_assert_cmpint(listen(fd, 8), ==, 0);
	return fd;
}

/*
 * In a child (refused pidfd_getfd or not), the listening inodes of this
 * test process: 'E' if the refusal was not in force when it should be,
 * then 'L' for the listener found, 'B' for the bound socket (wrongly)
 * found, '-' when there was no answer at all.
 */
static gchar *ask_child(gboolean refused, guint64 listener, guint64 bound)
{
	GPid self = getpid();
	char buf[8] = "";
	int p[2];
	pid_t pid;
	ssize_t n;
	int status;

	g_assert_cmpint(pipe(p), ==, 0);
	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		g_autoptr(GHashTable) inodes = NULL;
		char out[4];
		int len = 0;
		int pidfd;

		close(p[0]);
		if (refused) {
			pidfd = refuse_pidfd_getfd() ? pidfd_open(self, 0) : -1;
			if (pidfd < 0 || syscall(__NR_pidfd_getfd, pidfd, 0,
						 0) >= 0 || errno != EPERM)
				out[len++] = 'E';
		}
		inodes = proc_listening_inodes(self);
		if (!inodes)
			out[len++] = '-';
		else {
			if (g_hash_table_contains(inodes, &listener))
				out[len++] = 'L';
			if (g_hash_table_contains(inodes, &bound))
				out[len++] = 'B';
		}
		if (write(p[1], out, len) != len)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return g_strndup(buf, MAX(n, 0));
}

static void check(gboolean refused)
{
	int listener = tcp_socket(TRUE);
	int bound = tcp_socket(FALSE);
	g_autofree gchar *found = ask_child(refused, inode_of(listener),
					    inode_of(bound));

	g_assert_cmpstr(found, ==, "L");
	close(listener);
	close(bound);
}

static void test_duplicated(void)
{
	check(FALSE);
}

static void test_pidfd_getfd_refused(void)
{
	check(TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/listeners/duplicated", test_duplicated);
	g_test_add_func("/listeners/pidfd-getfd-refused",
			test_pidfd_getfd_refused);
	return g_test_run();
}
