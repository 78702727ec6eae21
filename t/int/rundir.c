/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtime directory as real deployments have it, with the real
 * haproxy (2.6): long pidfile paths and the default directory named after
 * them, spaces in paths, directories another user could change, symlinks
 * planted inside, and a distribution's stock global section. Reloads run
 * under load; every wait is bounded and on a real event.
 */
#include "t/lib/harness.h"

#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/proc.h"
#include "wrapper/rundir.h"

#define NOBODY 65534

/* One instance: the harness's site, its configuration the real
 * haproxy's. */
typedef struct t_site Site;

static void site_init(Site *s)
{
	t_site_init(s);
	t_site_config(s, NULL);
}

/* The wrapper with opt (may be NULL), -f cfg -p pidfile. */
static void site_launch(Site *s, const char *opt)
{
	const char *args[] = { "-f", s->cfg, "-p", s->pidfile, NULL, NULL };

	if (opt) {
		memmove(args + 1, args, 4 * sizeof(*args));
		args[0] = opt;
	}
	g_clear_pointer(&s->w, wrapper_free);
	s->w = wrapper_start(args, (const char *const *)s->env->pdata);
}

/* The same, once generation 1 serves: its pid. */
static GPid site_start(Site *s, const char *opt)
{
	GPid ready;

	site_launch(s, opt);
	ready = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(ready, >, 0);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, ready);
	return ready;
}

static void site_stop(Site *s)
{
	wrapper_signal(s->w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s->w, T_WAIT), ==, 0);
}

static gboolean test_begin(void)
{
	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return FALSE;
	}
	return TRUE;
}

/* No feature was dropped with a warning. */
static void assert_no_warning(Wrapper *w)
{
	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		/* The wrapper's own: haproxy's [WARNING] and [ALERT]
		 * lines are <4> and <3> too. */
		if (g_str_has_prefix(line, LOG_PRIO_WARNING LOG_IDENT_PREFIX) ||
		    g_str_has_prefix(line, LOG_PRIO_ERR LOG_IDENT_PREFIX))
			g_error("unexpected: %s", line);
	}
}

/* "ok generation N (pid P) serving": P. */
static GPid serving_pid_in(const char *out)
{
	const char *ok = strstr(out, ANSWER_OK_GENERATION);

	g_assert_nonnull(ok);
	return t_pid_in(ok, "(pid ");
}

/*
 * Reloads under load through the client (opt, value: what finds the
 * wrapper, "-p" PIDFILE or "--runtime-dir=DIR" NULL), each one taking the
 * listeners over (-x); `--status` answers; not one request fails.
 */
static void reloads_under_load(Site *s, const char *opt, const char *value,
			       guint reloads)
{
	g_autofree gchar *status = NULL;
	struct t_load load;

	t_load_start(&load, s->port);
	for (guint n = 2; n < 2 + reloads; n++) {
		g_autofree gchar *out = NULL;
		const char *exec;
		GPid pid;

		g_assert_cmpint(t_client("--reload", opt, value, &out, NULL),
				==, 0);
		pid = serving_pid_in(out);
		g_assert_cmpint(proc_parent(pid), ==, s->w->pid);
		exec = wrapper_executing_line(s->w, n);
		g_assert_nonnull(exec);
		g_assert_nonnull(strstr(exec, " -x "));
		g_assert_true(t_load_wait_answers(&load, pid, 20));
	}
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
	g_assert_cmpint(t_client("--status", opt, value, &status, NULL), ==, 0);
	g_assert_nonnull(strstr(status, ANSWER_SERVING));
	assert_no_warning(s->w);
}

/* A path of exactly len characters (or the shortest possible) naming
 * haproxy.pid in a directory below dir, which it creates. */
static gchar *long_pidfile(const char *dir, guint len)
{
	g_autoptr(GString) sub = g_string_new(dir);
	const char *leaf = "/haproxy-public.pid";

	while (sub->len + strlen(leaf) < len) {
		g_string_append(sub, "/instance-blue-eu-west-1a");
		if (sub->len + strlen(leaf) > len)
			g_string_truncate(sub, len - strlen(leaf));
		/* No component may end in "/". */
		if (sub->str[sub->len - 1] == '/')
			g_string_append_c(sub, 'x');
	}
	g_assert_cmpint(g_mkdir_with_parents(sub->str, 0755), ==, 0);
	g_string_append(sub, leaf);
	return g_strdup(sub->str);
}

static void long_pidfile_test(guint len)
{
	g_auto(TSite) s = { 0 };

	if (!test_begin())
		return;
	site_init(&s);
	g_free(s.pidfile);
	s.pidfile = long_pidfile(s.dir, len);
	g_test_message("pidfile: %zu characters", strlen(s.pidfile));
	g_assert_cmpuint(strlen(s.pidfile), >=, len);
	/* The default runtime directory, named after the pidfile. */
	site_start(&s, NULL);
	reloads_under_load(&s, "-p", s.pidfile, 3);
	site_stop(&s);
}

/* The default directory, named after the pidfile, is gone once the
 * wrapper stopped: nobody else would remove it. */
static void test_default_removed_at_stop(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *dir = NULL;

	if (!test_begin())
		return;
	site_init(&s);
	dir = rundir_path(NULL, s.pidfile);
	site_start(&s, NULL);
	g_assert_true(g_file_test(dir, G_FILE_TEST_IS_DIR));
	reloads_under_load(&s, "-p", s.pidfile, 1);
	site_stop(&s);
	g_assert_false(g_file_test(dir, G_FILE_TEST_EXISTS));
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

/* One given by --runtime-dir (by_env: by $RUNTIME_DIRECTORY, as systemd
 * does) is not the wrapper's to remove: it keeps haproxy's version for the
 * next start. */
static void given_keeps_version(gboolean by_env)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *cache = NULL;

	if (!test_begin())
		return;
	site_init(&s);
	cache = g_build_filename(s.rundir, "haproxy-version", NULL);
	if (by_env)
		t_site_setenv(&s, "RUNTIME_DIRECTORY", s.rundir);
	site_start(&s, by_env ? NULL : s.rundir_opt);
	site_stop(&s);
	g_assert_true(g_file_test(cache, G_FILE_TEST_IS_REGULAR));
}

static void test_given_keeps_version(void)
{
	given_keeps_version(FALSE);
}

static void test_env_keeps_version(void)
{
	given_keeps_version(TRUE);
}

/* `make demo` (demo/run) leaves nothing behind: neither its pidfile nor
 * the runtime directory named after it. */
static void test_demo_leaves_nothing(void)
{
	g_autofree gchar *port = g_strdup_printf("DEMO_PORT=%u",
						 t_free_port());
	const char *argv[] = { "/usr/bin/env", port, "demo/run", NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *dir = NULL;
	g_auto(GStrv) words = NULL;
	const char *pidfile;

	if (!test_begin())
		return;
	if (!g_file_test("demo/run", G_FILE_TEST_IS_EXECUTABLE) ||
	    !g_file_test("/usr/bin/curl", G_FILE_TEST_IS_EXECUTABLE)) {
		g_test_skip("no demo/run here, or no curl");
		return;
	}
	g_assert_cmpint(t_run_command(argv, T_WAIT, &out, NULL), ==, 0);
	g_test_message("%s", out);
	/* "demo: pidfile PATH says PID" */
	pidfile = strstr(out, "demo: pidfile ");
	g_assert_nonnull(pidfile);
	words = g_strsplit(pidfile, " ", 4);
	g_assert_cmpuint(g_strv_length(words), ==, 4);
	dir = rundir_path(NULL, words[2]);
	g_assert_false(g_file_test(words[2], G_FILE_TEST_EXISTS));
	g_assert_false(g_file_test(dir, G_FILE_TEST_EXISTS));
}

static void test_pidfile_61(void)
{
	long_pidfile_test(61);
}

static void test_pidfile_230(void)
{
	long_pidfile_test(230);
}

/* A runtime directory for s with a space (and a "#") in its path. */
static gchar *spaced_rundir(Site *s)
{
	gchar *dir = g_build_filename(t_short_dir(s->dir), "run #1", NULL);

	g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
	return dir;
}

static void test_space(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *lb = NULL;
	g_autofree gchar *rundir = NULL;
	g_autofree gchar *opt = NULL;

	if (!test_begin())
		return;
	site_init(&s);
	lb = g_build_filename(s.dir, "my lb", NULL);
	g_assert_cmpint(g_mkdir(lb, 0755), ==, 0);
	g_free(s.pidfile);
	s.pidfile = g_build_filename(lb, "haproxy.pid", NULL);
	/* A space in -p, the default runtime directory. */
	site_start(&s, NULL);
	reloads_under_load(&s, "-p", s.pidfile, 2);
	site_stop(&s);
	/* A space in the runtime directory itself. */
	rundir = spaced_rundir(&s);
	opt = g_strconcat("--runtime-dir=", rundir, NULL);
	site_start(&s, opt);
	reloads_under_load(&s, opt, NULL, 2);
	site_stop(&s);
}

/* ---- trust ---- */

static gboolean need_root(void)
{
	if (geteuid() == 0)
		return TRUE;
	g_test_skip("needs root to chown");
	return FALSE;
}

static guint entries(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	guint n = 0;

	g_assert_nonnull(d);
	while (g_dir_read_name(d))
		n++;
	return n;
}

/* A /tmp/evil: refused with the usage code, nothing written,
 * nothing started. */
static void test_untrusted(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *evil = NULL;
	g_autofree gchar *opt = NULL;

	if (!test_begin() || !need_root())
		return;
	site_init(&s);
	evil = g_build_filename(t_short_dir(s.dir), "evil", NULL);
	g_assert_cmpint(g_mkdir(evil, 0777), ==, 0);
	g_assert_cmpint(chmod(evil, 0777), ==, 0);
	g_assert_cmpint(chown(evil, NOBODY, NOBODY), ==, 0);
	opt = g_strconcat("--runtime-dir=", evil, NULL);
	site_launch(&s, opt);
	g_assert_cmpint(wrapper_wait_exit(s.w, T_WAIT), ==, 64 << 8);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_RUNDIR_MUST_BE_OWNED));
	g_assert_null(wrapper_find_log(s.w, LOG_EXECUTING));
	g_assert_cmpuint(entries(evil), ==, 0);
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

/* A "," in the runtime directory: haproxy would split the listeners
 * socket's address there. No seamless reload, said; haproxy starts, and
 * the control socket (the wrapper's own) answers. */
static void test_comma(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *dir = NULL;
	g_autofree gchar *opt = NULL;
	g_autofree gchar *out = NULL;
	const char *exec;
	GPid first;

	if (!test_begin())
		return;
	site_init(&s);
	dir = g_build_filename(t_short_dir(s.dir), "a,b", NULL);
	opt = g_strconcat("--runtime-dir=", dir, NULL);
	first = site_start(&s, opt);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_COMMA_SEPARATOR));
	g_assert_nonnull(wrapper_find_log(s.w, LOG_NO_SEAMLESS));
	exec = wrapper_executing_line(s.w, 1);
	g_assert_nonnull(exec);
	g_assert_null(strstr(exec, "listeners"));
	g_assert_cmpint(t_client("--reload", opt, NULL, &out, NULL), ==, 0);
	g_assert_cmpint(serving_pid_in(out), !=, first);
	site_stop(&s);
}

/* A socket planted in a directory another user owns must not be asked:
 * it would answer "ok" to an ExecReload=. */
static void test_client_untrusted(void)
{
	g_autofree gchar *evil = NULL;
	g_autofree gchar *opt = NULL;
	g_autofree gchar *err = NULL;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, conn;

	if (!need_root())
		return;
	/* Short enough for a socket whatever the temp root. */
	evil = g_strdup("/run/hsw-evil-XXXXXX");
	g_assert_nonnull(g_mkdtemp_full(evil, 0755));
	g_snprintf(a.sun_path, sizeof(a.sun_path), "%s/control.sock", evil);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(listen(fd, 4), ==, 0);
	/* Not even connected to: nothing waits in the backlog. */
	opt = g_strconcat("--runtime-dir=", evil, NULL);
	g_assert_cmpint(chown(evil, NOBODY, NOBODY), ==, 0);
	g_assert_cmpint(t_client("--status", opt, NULL, NULL, &err), ==, 64);
	g_assert_nonnull(strstr(err, evil));
	conn = accept(fd, NULL, NULL);
	g_assert_cmpint(conn, ==, -1);
	g_assert_cmpint(errno, ==, EAGAIN);
	close(fd);
	t_rmtree(evil);
}

/* Symlinks planted in the runtime directory are replaced, not followed. */
static void test_planted_symlinks(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *run = NULL;
	g_autofree gchar *opt = NULL;
	g_autofree gchar *victim = NULL;
	g_autofree gchar *link_cfg = NULL;
	g_autofree gchar *link_sock = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *out = NULL;
	struct stat st;

	if (!test_begin())
		return;
	site_init(&s);
	victim = t_write_file(s.dir, "victim", "untouched\n");
	run = t_runtime_dir(s.dir);
	link_cfg = g_build_filename(run, "listeners.cfg", NULL);
	link_sock = g_build_filename(run, "control.sock", NULL);
	g_assert_cmpint(symlink(victim, link_cfg), ==, 0);
	g_assert_cmpint(symlink("/nonexistent/control.sock", link_sock), ==, 0);
	opt = g_strconcat("--runtime-dir=", run, NULL);
	site_start(&s, opt);
	g_assert_true(g_file_get_contents(victim, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "untouched\n");
	g_assert_cmpint(lstat(link_cfg, &st), ==, 0);
	g_assert_true(S_ISREG(st.st_mode));
	g_assert_cmpint(lstat(link_sock, &st), ==, 0);
	g_assert_true(S_ISSOCK(st.st_mode));
	g_assert_cmpint(t_client("--status", opt, NULL, &out, NULL), ==, 0);
	assert_no_warning(s.w);
	site_stop(&s);
}

/* listeners.cfg cannot be written (here a directory holds its name, as
 * ENOSPC or EIO would): haproxy still starts and reloads, without the
 * fragment and -x, and the failure is said; no temporary file is left. */
static void test_fragment_unwritable(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *run = NULL;
	g_autofree gchar *opt = NULL;
	g_autofree gchar *blocker = NULL;
	g_autofree gchar *tmp = NULL;
	g_autofree gchar *out = NULL;
	const char *exec;
	GPid first;

	if (!test_begin())
		return;
	site_init(&s);
	run = t_runtime_dir(s.dir);
	blocker = g_build_filename(run, "listeners.cfg", "keep", NULL);
	g_assert_cmpint(g_mkdir_with_parents(blocker, 0700), ==, 0);
	tmp = g_build_filename(run, ".listeners.cfg.tmp", NULL);
	opt = g_strconcat("--runtime-dir=", run, NULL);
	first = site_start(&s, opt);
	g_assert_nonnull(wrapper_find_log(s.w, LOG_CANNOT_WRITE_LISTENERS));
	g_assert_nonnull(wrapper_find_log(s.w, LOG_NO_SEAMLESS));
	exec = wrapper_executing_line(s.w, 1);
	g_assert_nonnull(exec);
	g_assert_null(strstr(exec, "listeners"));
	g_assert_false(g_file_test(tmp, G_FILE_TEST_EXISTS));
	g_assert_cmpint(t_client("--reload", opt, NULL, &out, NULL), ==, 0);
	g_assert_cmpint(serving_pid_in(out), !=, first);
	exec = wrapper_executing_line(s.w, 2);
	g_assert_nonnull(exec);
	g_assert_null(strstr(exec, " -x "));
	site_stop(&s);
}

/* ---- a distribution's stock global section ---- */

/* Debian 12's /etc/haproxy/haproxy.cfg, its paths moved into dir (the
 * admin socket where a socket fits), serving "pid=" on port. */
static gchar *debian_config(const char *dir, const char *admin, guint16 port,
			    const char *extra)
{
	g_autofree gchar *chroot_dir = g_build_filename(dir, "chroot", NULL);
	g_autofree gchar *text = NULL;

	g_mkdir(chroot_dir, 0755);
	text = g_strdup_printf(
		"global\n"
		"\tlog /dev/log\tlocal0\n"
		"\tlog /dev/log\tlocal1 notice\n"
		"\tchroot %s\n"
		"\tstats socket %s mode 660 level admin expose-fd listeners\n"
		"\tstats timeout 30s\n"
		"\tuser haproxy\n"
		"\tgroup haproxy\n"
		"\tdaemon\n"
		"\n"
		"\tca-base /etc/ssl/certs\n"
		"\tcrt-base /etc/ssl/private\n"
		"\tssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:"
		"ECDHE-RSA-AES128-GCM-SHA256\n"
		"\tssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256\n"
		"\tssl-default-bind-options ssl-min-ver TLSv1.2 no-tls-tickets\n"
		"\n"
		"defaults\n"
		"\tlog\tglobal\n"
		"\tmode\thttp\n"
		"\toption\thttplog\n"
		"\toption\tdontlognull\n"
		"\ttimeout connect 5000\n"
		"\ttimeout client  50000\n"
		"\ttimeout server  50000\n"
		"\terrorfile 400 /etc/haproxy/errors/400.http\n"
		"\terrorfile 503 /etc/haproxy/errors/503.http\n"
		"\n"
		"frontend fe\n"
		"\tbind 127.0.0.1:%u\n"
		"\thttp-request return status 200 content-type text/plain "
		"lf-string \"pid=%%pid\\n\"\n"
		"%s",
		chroot_dir, admin, port, extra ? extra : "");
	return t_write_file(dir, "haproxy.cfg", text);
}

/* `show info` on the admin socket: the Pid: it gives, 0 if no answer. */
static GPid admin_pid(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = T_WAIT / 1000 };
	g_autoptr(GString) in = g_string_new(NULL);
	const char *pid;
	char buf[4096];
	ssize_t n;
	int fd;

	g_assert_cmpuint(strlen(path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    write(fd, "show info\n", 10) != 10) {
		close(fd);
		return 0;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(in, buf, n);
	close(fd);
	pid = strstr(in->str, "\nPid: ");
	return pid ? (GPid)atoi(pid + 6) : 0;
}

static void test_debian_stock(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *admin = NULL;
	g_autofree gchar *out = NULL;
	GPid pid;

	if (!test_begin())
		return;
	if (!getpwnam("haproxy")) {
		g_test_skip("no haproxy user");
		return;
	}
	site_init(&s);
	admin = g_build_filename(t_short_dir(s.dir), "admin.sock", NULL);
	g_free(s.cfg);
	s.cfg = debian_config(s.dir, admin, s.port, NULL);
	pid = site_start(&s, NULL);
	g_assert_cmpint(admin_pid(admin), ==, pid);
	reloads_under_load(&s, "-p", s.pidfile, 2);
	pid = t_http_pid(s.port);
	g_assert_cmpint(admin_pid(admin), ==, pid);
	/* A bad configuration: the reload fails, nothing else changes. */
	g_free(debian_config(s.dir, admin, s.port, "\tno-such-keyword\n"));
	g_assert_cmpint(t_client("--reload", "-p", s.pidfile, &out, NULL), ==,
			1);
	g_assert_cmpint(t_http_pid(s.port), ==, pid);
	g_assert_cmpint(admin_pid(admin), ==, pid);
	/* Fixed, it reloads again, seamless. */
	g_free(debian_config(s.dir, admin, s.port, NULL));
	g_clear_pointer(&out, g_free);
	g_assert_cmpint(t_client("--reload", "-p", s.pidfile, &out, NULL), ==,
			0);
	pid = serving_pid_in(out);
	g_assert_nonnull(strstr(wrapper_executing_line(s.w, 5), " -x "));
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), >, 0);
	g_assert_cmpint(admin_pid(admin), ==, pid);
	site_stop(&s);
}

/*
 * A client command with no -p looks for the packaged unit's service
 * first: its RuntimeDirectory= (that of -p /run/haproxy.pid). That one is
 * not running on this host, so the client says where it looked; --help
 * says how a client finds its wrapper and that -p names another. The
 * service itself answering is t/container/systemd's.
 */
static void test_client_defaults(void)
{
	static const char packaged[] = "/run/haproxy-systemd-wrapper/run-haproxy";
	const char *help_argv[] = { t_wrapper_path(), "--help", NULL };
	g_autofree gchar *sock = g_strconcat(packaged, "/control.sock", NULL);
	g_autofree gchar *help = NULL;
	g_autofree gchar *err = NULL;

	g_assert_cmpint(t_run_command(help_argv, T_WAIT, &help, NULL), ==, 0);
	if (!strstr(help, "-p PIDFILE") || !strstr(help, "/run/haproxy.pid") ||
	    !strstr(help, "RUNTIME_DIRECTORY"))
		g_error("--help does not say how a client finds its "
			"wrapper:\n%s", help);
	if (g_file_test(packaged, G_FILE_TEST_EXISTS)) {
		g_test_skip("a packaged service's runtime directory exists");
		return;
	}
	g_assert_cmpint(t_client("--status", NULL, NULL, NULL, &err), ==, 69);
	if (!strstr(err, sock) || !strstr(err, "-p PIDFILE"))
		g_error("--status without -p: %s", err);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_unsetenv("RUNTIME_DIRECTORY");
	g_unsetenv("NOTIFY_SOCKET");
	t_cleanup_on_abort();
	g_test_add_func("/rundir/default-removed-at-stop",
			test_default_removed_at_stop);
	g_test_add_func("/rundir/given-keeps-version",
			test_given_keeps_version);
	g_test_add_func("/rundir/env-keeps-version", test_env_keeps_version);
	g_test_add_func("/rundir/demo-leaves-nothing",
			test_demo_leaves_nothing);
	g_test_add_func("/rundir/pidfile-61", test_pidfile_61);
	g_test_add_func("/rundir/pidfile-230", test_pidfile_230);
	g_test_add_func("/rundir/space", test_space);
	g_test_add_func("/rundir/untrusted", test_untrusted);
	g_test_add_func("/rundir/comma", test_comma);
	g_test_add_func("/rundir/client-untrusted", test_client_untrusted);
	g_test_add_func("/rundir/planted-symlinks", test_planted_symlinks);
	g_test_add_func("/rundir/fragment-unwritable", test_fragment_unwritable);
	g_test_add_func("/rundir/debian-stock", test_debian_stock);
	g_test_add_func("/rundir/client-defaults", test_client_defaults);
	return g_test_run();
}
