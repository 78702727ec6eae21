/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper under valgrind's memcheck through a whole life with the real
 * haproxy: start, reloads (a burst that coalesces, a failed one, an
 * ignored signal), stop. Memcheck must find no error and no leak: the run
 * exits 0 (not --error-exitcode) and its log says so. Run by
 * `make valgrind-check`, not by the default suite: it takes a while.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "t/lib/harness.h"

/* Everything is slower under memcheck. */
#define VG_WAIT (4 * T_WAIT)

static Wrapper *guarded_wrapper;
static gchar *guarded_dir;

static void on_abort(int sig)
{
	if (guarded_wrapper)
		g_array_unref(t_kill_tree(guarded_wrapper->pid));
	if (guarded_dir)
		t_rmtree(guarded_dir);
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

static gchar *valgrind_path(void)
{
	return g_find_program_in_path("valgrind");
}

/* memcheck's own verdict, from the log of the wrapper's pid. */
static gchar *read_vg_log(const char *dir, GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("%s/vg.%d", dir, pid);
	gchar *text = NULL;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

static void print_summary(const char *log)
{
	g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
	gboolean in_summary = FALSE;

	for (guint i = 0; lines[i]; i++) {
		const char *l = strstr(lines[i], "== ");

		l = l ? l + 3 : lines[i];
		if (strstr(l, "HEAP SUMMARY") || strstr(l, "LEAK SUMMARY"))
			in_summary = TRUE;
		if (in_summary || strstr(l, "ERROR SUMMARY"))
			g_test_message("%s", l);
	}
}

static gboolean has_line(const char *log, const char *needle)
{
	return strstr(log, needle) != NULL;
}

/* 0 bytes definitely, indirectly or possibly lost (or no leak at all). */
static void assert_no_leak(const char *log)
{
	if (has_line(log, "All heap blocks were freed -- no leaks are possible"))
		return;
	g_assert_true(has_line(log, "definitely lost: 0 bytes in 0 blocks"));
	g_assert_true(has_line(log, "indirectly lost: 0 bytes in 0 blocks"));
	g_assert_true(has_line(log, "possibly lost: 0 bytes in 0 blocks"));
}

static GPid reload_and_wait(Wrapper *w, guint16 port, guint number)
{
	GPid pid;

	wrapper_signal(w, SIGUSR2);
	pid = wrapper_wait_ready(w, number, VG_WAIT);
	g_assert_cmpint(pid, >, 0);
	g_assert_cmpint(t_wait_serving(port, VG_WAIT), ==, pid);
	return pid;
}

static void test_start_reload_stop(void)
{
	g_autofree gchar *vg = valgrind_path();
	g_autofree gchar *dir = NULL, *cfg = NULL, *bad = NULL, *pidfile = NULL;
	g_autofree gchar *supp = NULL, *logopt = NULL, *suppopt = NULL;
	g_autofree gchar *log = NULL;
	g_autoptr(GArray) below = NULL;
	guint16 port = t_free_port();
	const char *prefix[12];
	const char *args[6];
	Wrapper *w;
	GPid gen, pid;
	guint n = 0;
	int status;

	if (!t_have_haproxy() || !vg) {
		g_test_skip("needs /usr/sbin/haproxy and valgrind");
		return;
	}
	dir = guarded_dir = t_tmpdir();
	cfg = t_write_config(dir, "haproxy.cfg", port, NULL);
	pidfile = g_build_filename(dir, "haproxy.pid", NULL);
	supp = g_build_filename(t_dir(), "valgrind.supp", NULL);
	suppopt = g_strdup_printf("--suppressions=%s", supp);
	logopt = g_strdup_printf("--log-file=%s/vg.%%p", dir);

	prefix[n++] = vg;
	prefix[n++] = "--tool=memcheck";
	prefix[n++] = "--leak-check=full";
	prefix[n++] = "--show-leak-kinds=definite,indirect,possible";
	prefix[n++] = "--errors-for-leak-kinds=definite";
	prefix[n++] = "--error-exitcode=99";
	/* The witness is a fork without exec: its exit is not the verdict. */
	prefix[n++] = "--child-silent-after-fork=yes";
	prefix[n++] = suppopt;
	prefix[n++] = logopt;
	prefix[n] = NULL;
	/* Under valgrind /proc/self/exe is memcheck's binary, not the file
	 * the wrapper was started from: "auto" would see an upgrade and
	 * re-execute out from under valgrind. */
	args[0] = "--self-upgrade=never";
	args[1] = "-f";
	args[2] = cfg;
	args[3] = "-p";
	args[4] = pidfile;
	args[5] = NULL;

	w = guarded_wrapper = wrapper_start_prefixed(prefix, args, NULL);
	gen = wrapper_wait_ready(w, 1, VG_WAIT);
	g_assert_cmpint(gen, >, 0);
	g_assert_cmpint(t_wait_serving(port, VG_WAIT), ==, gen);

	gen = reload_and_wait(w, port, 2);
	gen = reload_and_wait(w, port, 3);

	/* A burst: one reload now, exactly one more after it. */
	for (int i = 0; i < 5; i++)
		wrapper_signal(w, i % 2 ? SIGHUP : SIGUSR2);
	g_assert_cmpint(wrapper_wait_ready(w, 4, VG_WAIT), >, 0);
	pid = wrapper_wait_ready(w, 5, VG_WAIT);
	g_assert_cmpint(pid, >, 0);
	g_assert_cmpint(t_wait_serving(port, VG_WAIT), ==, pid);
	gen = pid;

	/* A failed reload, then an ignored signal: generation 5 serves on. */
	bad = t_write_file(dir, "haproxy.cfg", "global\n    no-such-keyword\n");
	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, "reload failed: ", VG_WAIT));
	wrapper_signal(w, SIGQUIT);
	g_assert_nonnull(wrapper_wait_log(w, "ignoring SIGQUIT", VG_WAIT));
	g_assert_cmpint(t_http_pid(port), ==, gen);
	g_free(cfg);
	cfg = t_write_config(dir, "haproxy.cfg", port, NULL);
	reload_and_wait(w, port, 7);

	below = t_descendants(w->pid);
	wrapper_signal(w, SIGTERM);
	status = wrapper_wait_exit(w, VG_WAIT);
	g_assert_cmpint(status, !=, -1);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(g_array_index(below, GPid, i),
					  T_WAIT));

	log = read_vg_log(dir, w->pid);
	print_summary(log);
	if (!has_line(log, "ERROR SUMMARY: 0 errors from 0 contexts"))
		g_printerr("%s", log);
	g_assert_true(has_line(log, "ERROR SUMMARY: 0 errors from 0 contexts"));
	assert_no_leak(log);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);
	g_assert_nonnull(wrapper_find_log(w, "exit, haproxy RC=0"));

	guarded_wrapper = NULL;
	wrapper_free(w);
	guarded_dir = NULL;
	t_rmtree(dir);
}

/*
 * The wrapper's short runs, which exit from main() before any haproxy:
 * they must free what they parsed too. --upgrade-check matters most: a
 * running wrapper runs it on the new binary and upgrades only on exit 0,
 * so a leak there fails every self-upgrade under a leak checker.
 */
static void test_early_exits(void)
{
	/* A client command finding no wrapper there: 69. */
	static const struct {
		const char *args[3];
		int code;
	} runs[] = {
		{ { "--version" }, 0 },
		{ { "--help" }, 0 },
		{ { "--upgrade-check" }, 0 },
		{ { "--status", "--runtime-dir=/nonexistent/hsw-memcheck" }, 69 },
	};
	g_autofree gchar *vg = valgrind_path();

	if (!vg) {
		g_test_skip("needs valgrind");
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(runs); i++) {
		const char *argv[] = {
			vg, "--tool=memcheck", "--leak-check=full",
			"--errors-for-leak-kinds=definite",
			"--error-exitcode=99", "-q", t_wrapper_path(),
			runs[i].args[0], runs[i].args[1], NULL,
		};
		g_autofree gchar *out = NULL, *err = NULL;
		g_autoptr(GError) error = NULL;
		int status;

		g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
					   G_SPAWN_DEFAULT, NULL, NULL, &out,
					   &err, &status, &error));
		g_assert_no_error(error);
		g_test_message("%s: %s", runs[i].args[0], err);
		g_assert_true(WIFEXITED(status));
		g_assert_cmpint(WEXITSTATUS(status), ==, runs[i].code);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	signal(SIGABRT, on_abort);
	g_test_add_func("/memcheck/start-reload-stop", test_start_reload_stop);
	g_test_add_func("/memcheck/early-exits", test_early_exits);
	return g_test_run();
}
