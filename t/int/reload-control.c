/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket the reload and status clients talk to: its modes,
 * bad input (unknown command, line too long, binary data, a command in
 * pieces, a silent client, a flood), a second wrapper on the same
 * runtime directory, and the peer check (another uid is refused; the
 * wrapper's own uid is answered). The real haproxy, or t/fake/fake-haproxy
 * where the wrapper runs as another user; 127.0.0.1 only.
 */
#include "t/lib/reload.h"

#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void assert_mode(const char *path, mode_t type, mode_t mode)
{
	struct stat st;

	g_assert_cmpint(lstat(path, &st), ==, 0);
	g_assert_cmpuint(st.st_mode & S_IFMT, ==, type);
	g_assert_cmpuint(st.st_mode & 07777, ==, mode);
}

static void assert_answer(const char *rundir, const void *data, gsize len,
			  const char *prefix)
{
	g_autofree gchar *answer = ctl_ask(rundir, data, len);

	g_assert_nonnull(answer);
	if (!g_str_has_prefix(answer, prefix))
		fail("answer \"%s\", not %s...", answer, prefix);
	g_assert_true(g_str_has_suffix(answer, "\n"));
}

/* A command in two pieces, the second after the wrapper saw the first. */
static void split_command(struct t_site *s)
{
	g_autofree gchar *answer = NULL;
	g_autofree gchar *head = g_strdup_printf("wrapper pid %d ", s->w->pid);
	int fd = ctl_connect(s->rundir);

	ctl_send(fd, "sta", 3);
	/* Another client's round trip: the wrapper has been through its
	 * loop since, and still waits for the rest of the line. */
	assert_status_of(s, s->w->pid);
	ctl_send(fd, "tus\n", 4);
	answer = ctl_read(fd, T_WAIT);
	close(fd);
	g_assert_nonnull(answer);
	g_assert_true(g_str_has_prefix(answer, head));
	g_assert_true(g_str_has_suffix(answer, "\nok\n"));
}

/* Many connections at once: some are turned away, none blocks it. */
static void flood(struct t_site *s)
{
	guint baseline = t_count_fds(s->w->pid);
	gint64 deadline = t_deadline(T_WAIT);
	int fds[100];
	guint rejected = 0, answered = 0;

	for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
		fds[i] = ctl_connect(s->rundir);
	/* Those beyond its limit are answered at once; the others wait for
	 * a command. Wait for the first "too many". */
	while (!rejected && t_ms_left(deadline)) {
		struct pollfd p[G_N_ELEMENTS(fds)];

		for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
			p[i] = (struct pollfd){ .fd = fds[i],
						.events = POLLIN };
		if (poll(p, G_N_ELEMENTS(fds), t_ms_left(deadline)) <= 0)
			continue;
		for (guint i = 0; i < G_N_ELEMENTS(fds); i++) {
			g_autofree gchar *answer = NULL;

			if (fds[i] < 0 || !p[i].revents)
				continue;
			answer = ctl_read(fds[i], T_WAIT);
			close(fds[i]);
			fds[i] = -1;
			answered++;
			g_assert_nonnull(answer);
			if (g_str_equal(answer, "error: too many clients\n"))
				rejected++;
		}
	}
	/* Those within the limit wait for a command: only refusals came. */
	g_assert_cmpuint(rejected, >=, 1);
	g_assert_cmpuint(answered, ==, rejected);
	for (guint i = 0; i < G_N_ELEMENTS(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* Once it has dropped them all, it serves a new client. */
	while (t_count_fds(s->w->pid) > baseline && t_ms_left(deadline))
		g_usleep(10 * 1000);
	g_assert_cmpuint(t_count_fds(s->w->pid), <=, baseline);
	assert_running(s);
	assert_status_of(s, s->w->pid);
}

/* A second wrapper on the same runtime directory takes nothing over. */
static void second_wrapper(struct t_site *s)
{
	g_auto(TSite) two = { 0 };
	const char *exec;

	g_assert_true(reload_site_init(&two, NULL));
	g_free(two.rundir_opt);
	two.rundir_opt = g_strdup(s->rundir_opt);
	t_site_start_serving(&two, NULL);
	g_assert_nonnull(wrapper_find_log(two.w, LOG_RUNDIR_IN_USE));
	/* Not the first one's listeners socket either. */
	exec = wrapper_executing_line(two.w, 1);
	g_assert_nonnull(exec);
	g_assert_null(strstr(exec, " -x "));
	g_assert_null(strstr(exec, "listeners.cfg"));
	assert_status_of(s, s->w->pid);
	/* Its exit leaves the first one's socket alone. */
	t_site_stop(&two);
	assert_status_of(s, s->w->pid);
	g_assert_cmpint(t_http_pid(s->port), ==, s->pid);
}

static void test_control_socket(void)
{
	static const char nul[] = "sta\0tus\n";
	g_auto(TSite) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *huge = NULL;
	g_autofree gchar *late = NULL;
	struct pollfd p;
	int silent;

	if (!reload_site_init(&s, NULL))
		return;
	t_site_start_serving(&s, NULL);
	sock = g_build_filename(s.rundir, "control.sock", NULL);
	assert_mode(sock, S_IFSOCK, 0600);
	assert_mode(s.rundir, S_IFDIR, 0700);

	assert_answer(s.rundir, "hello\n", 6, "error: unknown command");
	huge = g_strnfill(10 * 1024, 'x');
	huge[10 * 1024 - 1] = '\n';
	assert_answer(s.rundir, huge, 10 * 1024, "error: line too long");
	assert_answer(s.rundir, nul, sizeof(nul) - 1, "error: binary data");
	split_command(&s);

	/* A client that says nothing blocks nobody, and is dropped. */
	silent = ctl_connect(s.rundir);
	assert_status_of(&s, s.w->pid);
	p = (struct pollfd){ .fd = silent, .events = POLLIN };
	g_assert_cmpint(poll(&p, 1, 0), ==, 0);
	late = ctl_read(silent, 15000);
	close(silent);
	g_assert_cmpstr(late, ==, "error: no command received in time\n");

	flood(&s);
	second_wrapper(&s);
	assert_running(&s);
	t_site_stop(&s);
}

/* ---- the peer check ---- */

#define NOBODY 65534
#define SETPRIV "/usr/bin/setpriv"

/* argv run as uid (setpriv: setgroups, setgid, setuid, then exec). */
static int run_as(uid_t uid, const char *const *argv, gchar **out,
		  gchar **err)
{
	g_autofree gchar *reuid = g_strdup_printf("--reuid=%u", uid);
	g_autofree gchar *regid = g_strdup_printf("--regid=%u", uid);
	g_autoptr(GPtrArray) all = g_ptr_array_new();

	g_ptr_array_add(all, (gpointer)SETPRIV);
	g_ptr_array_add(all, reuid);
	g_ptr_array_add(all, regid);
	g_ptr_array_add(all, (gpointer)"--clear-groups");
	for (; *argv; argv++)
		g_ptr_array_add(all, (gpointer)*argv);
	g_ptr_array_add(all, NULL);
	return t_run_command((const char *const *)all->pdata, T_WAIT, out,
			     err);
}

static int run_client_as(uid_t uid, const char *rundir_opt,
			 const char *command, gchar **out, gchar **err)
{
	const char *argv[] = { t_wrapper_path(), command, rundir_opt, NULL };

	return run_as(uid, argv, out, err);
}

/*
 * A client of another uid (neither root nor the wrapper's) is refused,
 * even where the file modes let it connect (loosened here by hand, as an
 * operator might): no status, and above all no reload.
 */
static void test_control_peer_other_uid(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autofree gchar *status = NULL;

	if (!g_file_test(SETPRIV, G_FILE_TEST_IS_EXECUTABLE) || getuid()) {
		g_test_skip("needs root and " SETPRIV);
		return;
	}
	reload_site_init_fake(&s, NULL);
	t_site_start_serving(&s, NULL);
	sock = g_build_filename(s.rundir, "control.sock", NULL);
	/* The socket's path open to everyone: only the peer check is left. */
	g_assert_cmpint(chmod(s.dir, 0755), ==, 0);
	g_assert_cmpint(chmod(t_short_dir(s.dir), 0755), ==, 0);
	g_assert_cmpint(chmod(s.rundir, 0755), ==, 0);
	g_assert_cmpint(chmod(sock, 0666), ==, 0);

	g_assert_cmpint(run_client_as(NOBODY, s.rundir_opt, "--reload", &out,
				      &err), ==, CLIENT_FAILED);
	if (!strstr(err, "error: permission denied"))
		fail("uid %d's --reload: out \"%s\" err \"%s\"", NOBODY, out,
		     err);
	g_assert_null(strstr(out, "ok"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	g_assert_cmpint(run_client_as(NOBODY, s.rundir_opt, "--status", &out,
				      &err), ==, CLIENT_FAILED);
	g_assert_nonnull(strstr(err, "error: permission denied"));
	g_assert_null(strstr(out, "generation"));

	/* Nothing reloaded: root's status says so, the log too. */
	status = client_status(&s, NULL);
	g_assert_nonnull(strstr(status, "reloads 0 ok 0 failed 0\n"));
	g_assert_null(status_line(status, 2));
	g_assert_null(wrapper_find_log(s.w, LOG_RELOADING));
	g_assert_null(wrapper_executing_line(s.w, 2));
	g_assert_cmpint(t_http_pid(s.port), ==, s.pid);
	t_site_stop(&s);
}

/*
 * A wrapper run as a user (not root) answers that same user. (Another
 * non-root user's client refuses that runtime directory by itself.)
 */
static void test_control_peer_same_uid(void)
{
	g_auto(TSite) s = { 0 };
	g_autoptr(GPtrArray) args = NULL;
	g_autofree gchar *reuid = g_strdup_printf("--reuid=%u", NOBODY);
	g_autofree gchar *regid = g_strdup_printf("--regid=%u", NOBODY);
	const char *prefix[] = { SETPRIV, reuid, regid, "--clear-groups",
				 NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	GPid gen2;

	if (!g_file_test(SETPRIV, G_FILE_TEST_IS_EXECUTABLE) || getuid()) {
		g_test_skip("needs root and " SETPRIV);
		return;
	}
	/* t/fake/fake-haproxy on a port above 1024: no privilege needed. */
	reload_site_init_fake(&s, NULL);
	g_assert_cmpint(chown(s.dir, NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(chown(t_short_dir(s.dir), NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(chown(s.rundir, NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(chown(s.cfg, NOBODY, NOBODY), ==, 0);
	args = t_site_args(&s, NULL);
	s.w = wrapper_start_prefixed(prefix,
				     (const char *const *)args->pdata,
				     (const char *const *)s.env->pdata);
	s.pid = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.pid, >, 0);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, s.pid);
	assert_mode(s.rundir, S_IFDIR, 0700);

	/* Its own uid: a real reload. */
	g_assert_cmpint(run_client_as(NOBODY, s.rundir_opt, "--reload", &out,
				      &err), ==, CLIENT_OK);
	gen2 = serving_pid_in(out, 2);
	g_assert_cmpint(gen2, !=, s.pid);
	g_assert_cmpint(t_wait_answered_by(s.port, gen2), ==, gen2);
	s.pid = gen2;
	t_site_stop(&s);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);
	g_test_add_func("/reload/control-socket-permissions-and-bad-input",
			test_control_socket);
	g_test_add_func("/reload/control-peer-other-uid",
			test_control_peer_other_uid);
	g_test_add_func("/reload/control-peer-same-uid",
			test_control_peer_same_uid);
	return g_test_run();
}
