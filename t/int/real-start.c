/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How the real haproxy (Debian's 2.6) is started: in the foreground (-db)
 * with the wrapper's flags before the user's "--", found by a bare name
 * (the wrapper's own in PATH, --haproxy=NAME), with a clean environment,
 * signal mask and descriptors; and a start that cannot be made (no
 * haproxy, a bad option, a bad configuration) ends the wrapper with the
 * right code. 127.0.0.1 only; every wait is on a real event and bounded.
 */
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "t/lib/real.h"

static void test_start_serve(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *pidtext = NULL;
	g_autofree gchar *want = NULL;
	g_auto(GStrv) argv = NULL;

	if (!t_site_init_real(&s, NULL))
		return;
	real_start(&s, NULL, NULL);

	/* The wrapper writes the pidfile, since haproxy -db writes none;
	 * before 1.8 the -Ds parent writes its worker's pid. */
	g_assert_true(g_file_get_contents(s.pidfile, &pidtext, NULL, NULL));
	want = g_strdup_printf("%d", real_worker(&s));
	g_assert_cmpstr(g_strstrip(pidtext), ==, want);

	/* Foreground -db, never the daemonizing -D; -Ds, which stays in
	 * the foreground, before 1.8 (1.5 and 1.7 have no -db that
	 * serves). */
	argv = t_proc_strings(s.pid, "cmdline");
	g_assert_nonnull(argv);
	if (t_haproxy_at_least(1, 8)) {
		g_assert_true(g_strv_contains((const char *const *)argv,
					      "-db"));
		for (char **a = argv; *a; a++)
			g_assert_false(g_str_has_prefix(*a, "-D"));
	} else {
		/* 1.7 rewrites its own command line: the one started. */
		g_assert_nonnull(strstr(wrapper_executing_line(s.w, 1),
					" -Ds "));
	}

	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
	/* Removed by the wrapper that wrote it; haproxy's own stays. */
	if (t_haproxy_at_least(1, 8))
		g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

/* haproxy 1.5 has no "--" and takes -sf only last: the file must come
 * as "-f FILE" before the flags. */
static void assert_file_before_flags(const char *line, const char *flags,
				     const char *cfg)
{
	g_autofree gchar *as_f = g_strconcat(" -f ", cfg, " ", NULL);

	g_assert_null(strstr(line, " -- "));
	g_assert_nonnull(strstr(line, as_f));
	g_assert_true(strstr(line, as_f) < flags);
}

/* Every "executing" line: the wrapper's flags before the user's "--". */
static void assert_flags_before_dashdash(Wrapper *w, const char *cfg)
{
	const char *mode = t_haproxy_at_least(1, 8) ? " -db -sf " : " -Ds -sf ";
	guint n = 0;

	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);
		const char *flags = strstr(line, mode);
		const char *dashdash = strstr(line, " -- ");

		if (!strstr(line, LOG_EXECUTING))
			continue;
		n++;
		g_assert_nonnull(flags);
		if (!t_haproxy_at_least(1, 6)) {
			assert_file_before_flags(line, flags, cfg);
			continue;
		}
		g_assert_nonnull(dashdash);
		g_assert_true(flags < dashdash);
		g_assert_nonnull(strstr(dashdash, cfg));
	}
	g_assert_cmpuint(n, ==, 2);
}

static void test_user_dashdash(void)
{
	g_auto(TSite) s = { 0 };

	if (!t_site_init_real(&s, NULL))
		return;
	s.cfg_after_dashdash = TRUE;
	real_start(&s, NULL, NULL);
	real_reload(&s, SIGUSR2, TRUE);
	assert_flags_before_dashdash(s.w, s.cfg);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

/* The lookup tests find Debian's haproxy by its place: another build
 * under test has no such place. */
static gboolean skip_if_switched(void)
{
	if (!t_haproxy_switched())
		return FALSE;
	g_test_skip("finds /usr/sbin/haproxy by its place, not the build "
		    "$HSW_TEST_HAPROXY names");
	return TRUE;
}

/* The harness runs a path; this runs a bare name, found in the PATH the
 * wrapper gets. */
static void test_bare_name_in_path(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *bin = NULL;
	g_autofree gchar *link = NULL;
	g_autofree gchar *path = NULL;
	g_auto(GStrv) argv = NULL;
	GPid wpid;

	if (skip_if_switched() || !t_site_init_real(&s, NULL))
		return;
	bin = g_build_filename(s.dir, "bin", NULL);
	g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
	link = g_build_filename(bin, "haproxy-systemd-wrapper", NULL);
	g_assert_cmpint(symlink(t_wrapper_path(), link), ==, 0);
	path = g_strconcat(bin, ":/usr/bin:/bin", NULL);
	t_site_setenv(&s, "PATH", path);
	real_start(&s, "haproxy-systemd-wrapper", NULL);
	wpid = s.w->pid;
	/* Really started by its bare name. */
	argv = t_proc_strings(wpid, "cmdline");
	g_assert_nonnull(argv);
	g_assert_cmpstr(argv[0], ==, "haproxy-systemd-wrapper");
	/* Nothing named haproxy beside the real binary: the fallback. */
	g_assert_nonnull(wrapper_find_log(s.w, LOG_EXECUTING "/usr/sbin/haproxy "));

	real_reload(&s, SIGUSR2, TRUE);
	real_reload(&s, SIGUSR2, TRUE);
	g_assert_cmpint(s.w->pid, ==, wpid);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

/* --haproxy=NAME without a slash is looked up in PATH, as a shell would. */
static void test_haproxy_option_bare_name(void)
{
	g_auto(TSite) s = { 0 };

	if (skip_if_switched() || !t_site_init_real(&s, NULL))
		return;
	s.haproxy = g_strdup("haproxy");
	t_site_setenv(&s, "PATH", "/nonexistent:/usr/sbin:/usr/bin:/bin");
	real_start(&s, NULL, NULL);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_EXECUTING "/usr/sbin/haproxy "));
	real_reload(&s, SIGUSR2, TRUE);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

/* The links of pid's fds above stdio. */
static GPtrArray *fd_links(GPid pid)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	GPtrArray *links = g_ptr_array_new_with_free_func(g_free);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		gchar *link = g_file_read_link(path, NULL);

		if (atoi(name) > 2 && link)
			g_ptr_array_add(links, link);
		else
			g_free(link);
	}
	return links;
}

static guint count_links(GPtrArray *links, const char *link)
{
	guint n = 0;

	for (guint i = 0; i < links->len; i++)
		n += g_str_equal(g_ptr_array_index(links, i), link);
	return n;
}

/*
 * Above stdio, haproxy holds only sockets, event fds and its own
 * self-pipes (both ends in haproxy, none in the wrapper).
 */
static void assert_clean_fds(GPid hap, GPid wrapper)
{
	g_autoptr(GPtrArray) mine = fd_links(hap);
	g_autoptr(GPtrArray) theirs = fd_links(wrapper);
	g_autofree gchar *all = NULL;

	g_ptr_array_add(mine, NULL);
	all = g_strjoinv(" ", (char **)mine->pdata);
	g_ptr_array_remove_index(mine, mine->len - 1);
	g_test_message("haproxy fds: %s", all);
	for (guint i = 0; i < mine->len; i++) {
		const char *link = g_ptr_array_index(mine, i);

		/* Upstream 2.x keeps its startup log in a deleted file of
		 * its own in /dev/shm. */
		if (g_str_has_prefix(link, "socket:") ||
		    g_str_has_prefix(link, "anon_inode:") ||
		    g_str_has_prefix(link, "/dev/shm/haproxy_startup_logs_") ||
		    g_str_equal(link, "/dev/null"))
			continue;
		if (!g_str_has_prefix(link, "pipe:") ||
		    count_links(mine, link) < 2 || count_links(theirs, link))
			g_test_fail_printf("haproxy holds %s, not its own; "
					   "all: %s", link, all);
	}
}

static void test_child_environment(void)
{
	static const char *const scrubbed[] = {
		"HAPROXY_MWORKER_REEXEC", "HAPROXY_PROCESSES",
		"HAPROXY_SYSTEMD_REEXEC", "HAPROXY_WRAPPER_FD",
		"NOTIFY_SOCKET",
	};
	static const char *const env[][2] = {
		{ "HAPROXY_MWORKER_REEXEC", "1" }, { "HAPROXY_PROCESSES", "x" },
		{ "HAPROXY_SYSTEMD_REEXEC", "1" }, { "HAPROXY_WRAPPER_FD", "9" },
		{ "NOTIFY_SOCKET", "/nonexistent" }, { "FOO_KEEP", "1" },
	};
	g_auto(TSite) s = { 0 };
	g_auto(GStrv) environ_ = NULL;
	g_autofree gchar *status_path = NULL;
	g_autofree gchar *text = NULL;

	if (!t_site_init_real(&s, NULL))
		return;
	for (guint i = 0; i < G_N_ELEMENTS(env); i++)
		t_site_setenv(&s, env[i][0], env[i][1]);
	real_start(&s, NULL, NULL);
	environ_ = t_proc_strings(s.pid, "environ");
	g_assert_nonnull(environ_);
	for (guint i = 0; i < G_N_ELEMENTS(scrubbed); i++)
		if (t_environ_has(s.pid, scrubbed[i]))
			g_test_fail_printf("haproxy inherited %s",
					   scrubbed[i]);
	g_assert_true(g_strv_contains((const char *const *)environ_,
				      "FOO_KEEP=1"));

	/* No blocked signal inherited from the wrapper's signalfd mask. */
	status_path = g_strdup_printf("/proc/%d/status", s.pid);
	g_assert_true(g_file_get_contents(status_path, &text, NULL, NULL));
	/* 1.8 (1.8.30 observed) blocks SIGUSR2 itself once running. */
	if ((!t_haproxy_at_least(1, 8) || t_haproxy_at_least(1, 9)) &&
	    !strstr(text, "\nSigBlk:\t0000000000000000\n"))
		g_test_fail_printf("haproxy starts with signals blocked:\n%s",
				   text);

	assert_clean_fds(s.pid, s.w->pid);
	t_assert_exit_code(real_stop(&s, SIGTERM), 0);
}

/* A wrapper on s, given opt (may be NULL) and no -p, that must give up
 * before serving: its wait status. */
static int run_to_exit(struct t_site *s, const char *opt)
{
	const char *opts[] = { opt, NULL };
	int status;

	g_clear_pointer(&s->w, wrapper_free);
	s->no_pidfile = TRUE;
	t_site_start_wrapper(s, NULL, opts);
	status = wrapper_wait_exit(s->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	return status;
}

static void test_missing_haproxy(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *noexec = NULL;
	g_autofree gchar *noexec_opt = NULL;
	struct {
		const char *opt;
		int code;
		const char *log;	/* NULL: must not even try */
	} cases[] = {
		{ "--haproxy=/nonexistent/haproxy", 127, LOG_CANNOT_START },
		{ NULL, 126, LOG_CANNOT_START },	/* not executable */
		{ "--no-such-option", 64, NULL },
		{ "--master-worker=sometimes", 64, NULL },
		{ "--format=prometheus", 64, NULL },
	};

	if (!t_site_init_real(&s, NULL))
		return;
	noexec = t_write_file(s.dir, "haproxy", "#!/bin/sh\nexit 0\n");
	g_assert_cmpint(g_chmod(noexec, 0644), ==, 0);
	noexec_opt = g_strconcat("--haproxy=", noexec, NULL);
	cases[1].opt = noexec_opt;
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_test_message("%s", cases[i].opt);
		t_assert_exit_code(run_to_exit(&s, cases[i].opt),
				   cases[i].code);
		if (cases[i].log)
			g_assert_nonnull(wrapper_find_log(s.w, cases[i].log));
		else
			g_assert_null(wrapper_find_log(s.w, LOG_EXECUTING));
	}
}

static void test_config_error_at_start(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *last = g_strdup_printf(LOG_EXIT_RC_FMT, 1);

	if (!t_site_init_real(&s, "    no-such-keyword here\n"))
		return;
	t_assert_exit_code(run_to_exit(&s, NULL), 1);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_CANNOT_START));
	g_assert_nonnull(wrapper_find_log(s.w, last));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What a wrapper leaves behind becomes ours: seen, and ended. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	t_cleanup_on_abort();

	g_test_add_func("/real/start-serve", test_start_serve);
	g_test_add_func("/real/user-dashdash", test_user_dashdash);
	g_test_add_func("/real/bare-name-in-path", test_bare_name_in_path);
	g_test_add_func("/real/haproxy-option-bare-name",
			test_haproxy_option_bare_name);
	g_test_add_func("/real/child-environment", test_child_environment);
	g_test_add_func("/real/missing-haproxy", test_missing_haproxy);
	g_test_add_func("/real/config-error-at-start",
			test_config_error_at_start);
	return g_test_run();
}
