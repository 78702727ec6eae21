/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * base/sdlib.c: libsystemd stays unmapped until a call needs it (a start
 * outside systemd never maps it), then sd_notify and sd_watchdog_enabled
 * answer as libsystemd's own do.
 */
#include <glib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/sdlib.h"

static gboolean libsystemd_mapped(void)
{
	g_autofree gchar *maps = NULL;

	g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL,
					  NULL));
	return strstr(maps, "/libsystemd.so") != NULL;
}

static void test_lazy(void)
{
	/* Abstract ("@..."): no path, however long $TMPDIR is. */
	g_autofree gchar *name = g_strdup_printf("hsw-sdlib-%d", getpid());
	g_autofree gchar *env = g_strdup_printf("@%s", name);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 +
			strlen(name);
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
	memcpy(sa.sun_path + 1, name, strlen(name));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, len), ==, 0);
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

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/sdlib/lazy", test_lazy);
	return g_test_run();
}
