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
 * The idle deadline of the test (0: the wrapper's own). The control
 * socket's timers are set through this (linked with
 * -Wl,--wrap=g_timeout_add), so that a test need not wait the wrapper's
 * seconds for a deadline to pass.
 */
static guint idle_ms;

guint __real_g_timeout_add(guint interval, GSourceFunc fn, gpointer data);
guint __wrap_g_timeout_add(guint interval, GSourceFunc fn, gpointer data);

guint __wrap_g_timeout_add(guint interval, GSourceFunc fn, gpointer data)
{
	return __real_g_timeout_add(idle_ms ? idle_ms : interval, fn, data);
}

/* A control socket in a directory of its own (its idle deadline data ms,
 * 0: the wrapper's) and a client connected to it. */
struct fixture {
	gchar *dir;
	struct control *ctl;	/* NULL: freed by the test */
	struct seen seen;
	int fd;
};

static void fixture_setup(struct fixture *f, gconstpointer data)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *path = NULL;

	idle_ms = GPOINTER_TO_UINT(data);
	f->dir = t_tmpdir();
	path = g_build_filename(t_short_dir(f->dir), "control.sock", NULL);
	f->ctl = control_listen(path, on_command, &f->seen, &error);
	g_assert_no_error(error);
	f->fd = connect_to(path);
}

static void fixture_teardown(struct fixture *f, gconstpointer data)
{
	close(f->fd);
	if (f->ctl)
		control_free(f->ctl);
	t_rmtree(f->dir);
	g_free(f->dir);
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
static void test_command_after_deadline(struct fixture *f,
					gconstpointer data)
{
	g_autofree gchar *answer = NULL;

	real_poll = g_main_context_get_poll_func(NULL);
	g_main_context_set_poll_func(NULL, poll_sending_late);
	late_fd = f->fd;
	answer = read_to_eof(f->fd);
	g_main_context_set_poll_func(NULL, real_poll);
	g_assert_cmpint(late_fd, ==, -1);
	g_assert_cmpstr(answer, ==, "error: no command received in time\n");
	g_assert_cmpuint(f->seen.commands, ==, 0);
	/* What the supervisor does with a waiter it was given: under ASan a
	 * use after free if the client was taken, then freed. */
	if (f->seen.last)
		control_reply(f->seen.last, "ok reloaded");
}

/* A command in time is taken once; the client lives until answered. */
static void test_command_in_time(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *answer = NULL;

	g_assert_cmpint(send(f->fd, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	while (!f->seen.commands)
		g_main_context_iteration(NULL, TRUE);
	/* Long past the idle deadline: a waiting client is not dropped. */
	g_usleep(50 * 1000);
	while (g_main_context_iteration(NULL, FALSE))
		;
	control_reply(f->seen.last, "ok reloaded");
	answer = read_to_eof(f->fd);
	g_assert_cmpstr(answer, ==, "ok reloaded\n");
	g_assert_cmpuint(f->seen.commands, ==, 1);
}

/* The wrapper exits with answers queued ("error: the wrapper exited" to
 * every waiter, then control_free() at once): they are sent, not lost to
 * an end of file without a verdict. */
static void test_answer_queued_at_free(struct fixture *f,
				       gconstpointer data)
{
	g_autofree gchar *answer = NULL;

	g_assert_cmpint(send(f->fd, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	while (!f->seen.commands)
		g_main_context_iteration(NULL, TRUE);
	control_reply(f->seen.last, "error: the wrapper exited");
	g_clear_pointer(&f->ctl, control_free);
	answer = read_to_eof(f->fd);
	g_assert_cmpstr(answer, ==, "error: the wrapper exited\n");
}

/* TEST(path, idle deadline in ms or 0, function) */
#define TEST(path, idle_ms, fn) \
	g_test_add(path, struct fixture, GUINT_TO_POINTER(idle_ms), \
		   fixture_setup, fn, fixture_teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	TEST("/control/command-after-deadline", 20,
	     test_command_after_deadline);
	TEST("/control/command-in-time", 20, test_command_in_time);
	TEST("/control/answer-queued-at-free", 0, test_answer_queued_at_free);
	return g_test_run();
}
