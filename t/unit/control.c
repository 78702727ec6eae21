/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket's client life cycle, driven one main-loop iteration
 * at a time: a client is read, then answered, then closed, and never
 * handed to the supervisor once it has been answered.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "t/lib/harness.h"
#include "wrapper/control.h"

struct seen {
	guint commands;
	struct control_client *last;
};

static void on_command(struct control_client *c, enum control_command cmd,
		       gpointer data)
{
	struct seen *seen = data;

	/* A reload keeps its client, to answer it when the reload ends. */
	seen->commands++;
	seen->last = c;
}

static int connect_to(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_strlcpy(a.sun_path, path, sizeof(a.sun_path));
	g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	return fd;
}

/* Everything the wrapper sends until it closes, iterating the loop. */
static gchar *read_to_eof(int fd)
{
	g_autoptr(GString) got = g_string_new(NULL);
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

	while (g_get_monotonic_time() < end) {
		char buf[256];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0)
			return g_string_free(g_steal_pointer(&got), FALSE);
		if (n > 0) {
			g_string_append_len(got, buf, n);
			continue;
		}
		g_main_context_iteration(NULL, FALSE);
		g_usleep(1000);
	}
	g_assert_not_reached();
}

/*
 * The loop's poll, watched: the first time the wrapper asks to write to a
 * client (its answer is queued), the late command is sent, so that it is
 * there in the very iteration that can send the answer.
 */
static GPollFunc real_poll;
static int late_fd = -1;

static gint poll_sending_late(GPollFD *fds, guint n, gint timeout)
{
	for (guint i = 0; late_fd >= 0 && i < n; i++) {
		if (!(fds[i].events & G_IO_OUT))
			continue;
		g_assert_cmpint(send(late_fd, "reload\n", 7, MSG_NOSIGNAL),
				==, 7);
		late_fd = -1;
	}
	return real_poll(fds, n, timeout);
}

/*
 * The deadline passes (its answer queued), then the command arrives, in
 * the same iteration as the wrapper's chance to send the answer: the
 * command must not be taken. Taken, its client would be freed by the
 * answer's end while the supervisor still holds it (a reload's waiter).
 */
static void test_command_after_deadline(void)
{
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *path = g_build_filename(t_short_dir(dir),
						  "control.sock", NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *answer = NULL;
	struct seen seen = { 0 };
	struct control *ctl;
	int fd;

	ctl = control_listen(path, on_command, &seen, &error);
	g_assert_no_error(error);
	control_set_idle_ms(ctl, 20);
	fd = connect_to(path);
	real_poll = g_main_context_get_poll_func(NULL);
	g_main_context_set_poll_func(NULL, poll_sending_late);
	late_fd = fd;
	answer = read_to_eof(fd);
	g_main_context_set_poll_func(NULL, real_poll);
	g_assert_cmpint(late_fd, ==, -1);
	g_assert_cmpstr(answer, ==, "error: no command received in time\n");
	g_assert_cmpuint(seen.commands, ==, 0);
	/* What the supervisor does with a waiter it was given: under ASan a
	 * use after free if the client was taken, then freed. */
	if (seen.last)
		control_reply(seen.last, "ok reloaded");
	close(fd);
	control_free(ctl);
	t_rmtree(dir);
}

/* A command in time is taken once; the client lives until answered. */
static void test_command_in_time(void)
{
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *path = g_build_filename(t_short_dir(dir),
						  "control.sock", NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *answer = NULL;
	struct seen seen = { 0 };
	struct control *ctl;
	int fd;

	ctl = control_listen(path, on_command, &seen, &error);
	g_assert_no_error(error);
	control_set_idle_ms(ctl, 20);
	fd = connect_to(path);
	g_assert_cmpint(send(fd, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	while (!seen.commands)
		g_main_context_iteration(NULL, TRUE);
	/* Long past the idle deadline: a waiting client is not dropped. */
	g_usleep(50 * 1000);
	while (g_main_context_iteration(NULL, FALSE))
		;
	control_reply(seen.last, "ok reloaded");
	answer = read_to_eof(fd);
	g_assert_cmpstr(answer, ==, "ok reloaded\n");
	g_assert_cmpuint(seen.commands, ==, 1);
	close(fd);
	control_free(ctl);
	t_rmtree(dir);
}

/* The wrapper exits with answers queued ("error: the wrapper exited" to
 * every waiter, then control_free() at once): they are sent, not lost to
 * an end of file without a verdict. */
static void test_answer_queued_at_free(void)
{
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *path = g_build_filename(t_short_dir(dir),
						  "control.sock", NULL);
	g_autoptr(GError) error = NULL;
	g_autofree gchar *answer = NULL;
	struct seen seen = { 0 };
	struct control *ctl;
	int fd;

	ctl = control_listen(path, on_command, &seen, &error);
	g_assert_no_error(error);
	fd = connect_to(path);
	g_assert_cmpint(send(fd, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	while (!seen.commands)
		g_main_context_iteration(NULL, TRUE);
	control_reply(seen.last, "error: the wrapper exited");
	control_free(ctl);
	answer = read_to_eof(fd);
	g_assert_cmpstr(answer, ==, "error: the wrapper exited\n");
	close(fd);
	t_rmtree(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/control/command-after-deadline",
			test_command_after_deadline);
	g_test_add_func("/control/command-in-time", test_command_in_time);
	g_test_add_func("/control/answer-queued-at-free",
			test_answer_queued_at_free);
	return g_test_run();
}
