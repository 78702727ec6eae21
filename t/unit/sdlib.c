/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * base/sdlib.c: libsystemd stays unmapped until a call needs it (a start
 * outside systemd never maps it), then sd_notify and sd_watchdog_enabled
 * answer as libsystemd's own do; a load that failed (no descriptor left at
 * that moment) is tried again at the next call.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/sdlib.h"

#define FD_LIMIT 64

static gboolean libsystemd_mapped(void)
{
	g_autofree gchar *maps = NULL;

	g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL,
					  NULL));
	return strstr(maps, "/libsystemd.so") != NULL;
}

/* A datagram socket bound to an abstract name ("@..."): no path, however
 * long $TMPDIR is. NOTIFY_SOCKET is not set yet; its value is in *env. */
static int notify_socket(gchar **env)
{
	g_autofree gchar *name = g_strdup_printf("hsw-sdlib-%d", getpid());
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 +
			strlen(name);
	int fd;

	memcpy(sa.sun_path + 1, name, strlen(name));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, len), ==, 0);
	*env = g_strdup_printf("@%s", name);
	return fd;
}

static void test_lazy(void)
{
	g_autofree gchar *env = NULL;
	uint64_t usec = 0;
	char buf[64] = { 0 };
	int fd;

	g_unsetenv("NOTIFY_SOCKET");
	g_unsetenv("WATCHDOG_USEC");
	g_unsetenv("WATCHDOG_PID");
	g_assert_false(libsystemd_mapped());
	g_assert_cmpint(sdlib_notify("READY=1"), ==, 0);
	g_assert_cmpint(sdlib_watchdog_enabled(&usec), ==, 0);
	g_assert_false(libsystemd_mapped());
	g_assert_null(sdlib_load_error());

	/* A notify socket: loaded, and the message arrives. */
	fd = notify_socket(&env);
	g_setenv("NOTIFY_SOCKET", env, TRUE);
	g_assert_cmpint(sdlib_notify("READY=1"), >, 0);
	g_assert_cmpint(recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT), ==, 7);
	g_assert_cmpstr(buf, ==, "READY=1");
	g_assert_true(libsystemd_mapped());

	g_setenv("WATCHDOG_USEC", "5000000", TRUE);
	g_assert_cmpint(sdlib_watchdog_enabled(&usec), >, 0);
	g_assert_cmpuint(usec, ==, 5000000);

	close(fd);
}

/* Every free descriptor taken (under a low limit): the ones taken. */
static GArray *fill_descriptors(void)
{
	GArray *taken = g_array_new(FALSE, FALSE, sizeof(int));
	struct rlimit rl = { FD_LIMIT, FD_LIMIT };
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC), fd;

	g_assert_cmpint(null, >=, 0);
	g_array_append_val(taken, null);
	g_assert_cmpint(setrlimit(RLIMIT_NOFILE, &rl), ==, 0);
	while ((fd = fcntl(null, F_DUPFD_CLOEXEC, 0)) >= 0)
		g_array_append_val(taken, fd);
	g_assert_cmpint(errno, ==, EMFILE);
	return taken;
}

static void free_descriptors(GArray *taken)
{
	for (guint i = 0; i < taken->len; i++)
		close(g_array_index(taken, int, i));
	g_array_unref(taken);
}

/*
 * No descriptor left when READY=1 first needs libsystemd: not sent, and
 * said. Once descriptors are free again the next notification loads it
 * and arrives: a failed load is not the answer for the process's life
 * (a WatchdogSec= unit would be killed for the WATCHDOG=1 never sent).
 * In a subprocess of its own: nothing loaded yet.
 */
static void test_retry_after_failed_load(void)
{
	g_autofree gchar *env = NULL;
	char buf[64] = { 0 };
	GArray *taken;
	int fd;

	if (!g_test_subprocess()) {
		g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
		g_test_trap_assert_passed();
		return;
	}
	g_assert_false(libsystemd_mapped());
	fd = notify_socket(&env);
	g_setenv("NOTIFY_SOCKET", env, TRUE);
	taken = fill_descriptors();
	g_assert_cmpint(sdlib_notify("READY=1"), ==, -ELIBACC);
	free_descriptors(taken);
	g_assert_nonnull(sdlib_load_error());
	g_assert_false(libsystemd_mapped());
	g_assert_cmpint(recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT), ==, -1);
	g_assert_cmpint(errno, ==, EAGAIN);

	g_assert_cmpint(sdlib_notify("WATCHDOG=1"), >, 0);
	g_assert_cmpint(recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT), ==, 10);
	g_assert_cmpstr(buf, ==, "WATCHDOG=1");
	g_assert_true(libsystemd_mapped());
	g_assert_null(sdlib_load_error());
	close(fd);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sdlib/lazy", test_lazy);
	g_test_add_func("/sdlib/retry-after-failed-load",
			test_retry_after_failed_load);
	return g_test_run();
}
