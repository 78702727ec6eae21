/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests against the real haproxy (Debian's 2.6 in
 * /usr/sbin/haproxy), on 127.0.0.1 only: start, reload, stop, failures,
 * and what a haproxy child inherits. Every wait is on a real event (a log
 * line, a process exit, a socket answering) and bounded by T_WAIT.
 */
#include "t/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

#define HAPROXY "/usr/sbin/haproxy"

/*
 * Safety net: a failed assertion aborts. The test process is a child
 * subreaper, so everything it started, orphans of a dead wrapper
 * included, is below it: end all of it, by pid.
 */
static void on_abort(int sig)
{
	g_autoptr(GArray) below = t_descendants(getpid());

	for (guint i = 0; i < below->len; i++)
		kill(g_array_index(below, GPid, i), SIGKILL);
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
}

static gboolean test_begin(void)
{
	if (t_have_haproxy())
		return TRUE;
	g_test_skip("no " HAPROXY);
	return FALSE;
}

/* ---- small helpers ---- */

static gchar *reload_line(int sig)
{
	return g_strdup_printf("reloading on SIG%s.", sigabbrev_np(sig));
}

/* Poll (bounded) until port answers with pid; the last pid that answered. */
static GPid wait_answering(guint16 port, GPid pid)
{
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;
	GPid got;

	while ((got = t_http_pid(port)) != pid &&
	       g_get_monotonic_time() < deadline)
		g_usleep(20 * 1000);
	return got;
}

static GStrv proc_strings(GPid pid, const char *file)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/%s", pid, file);
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();
	g_autofree gchar *buf = NULL;
	gsize len = 0;

	if (!g_file_get_contents(path, &buf, &len, NULL))
		return NULL;
	for (gsize i = 0; i < len; i += strlen(buf + i) + 1)
		g_strv_builder_add(b, buf + i);
	return g_strv_builder_end(b);
}

static gboolean env_has(GStrv env, const char *name)
{
	g_autofree gchar *prefix = g_strconcat(name, "=", NULL);

	for (char **e = env; e && *e; e++)
		if (g_str_has_prefix(*e, prefix))
			return TRUE;
	return FALSE;
}

static gboolean is_haproxy(GPid pid)
{
	g_autofree gchar *exe = proc_exe(pid);

	return t_pid_alive(pid) && g_strcmp0(exe, HAPROXY) == 0;
}

static guint count_haproxy_below(GPid root)
{
	g_autoptr(GArray) below = t_descendants(root);
	guint n = 0;

	for (guint i = 0; i < below->len; i++)
		n += is_haproxy(g_array_index(below, GPid, i));
	return n;
}

/* The socket inode of the server side of our connection conn to port. */
static guint64 server_side_inode(int conn, guint16 port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	g_autofree gchar *table = NULL;
	g_auto(GStrv) lines = NULL;

	g_assert_cmpint(getsockname(conn, (struct sockaddr *)&a, &len), ==, 0);
	g_assert_true(g_file_get_contents("/proc/net/tcp", &table, NULL, NULL));
	lines = g_strsplit(table, "\n", -1);
	for (char **l = lines; *l; l++) {
		unsigned int lport, rport;
		guint64 inode;

		/* sl local rem st tx:rx tr:when retr uid timeout inode */
		if (sscanf(*l, " %*s %*8s:%x %*8s:%x %*s %*s %*s %*s %*s %*s "
			   "%" G_GUINT64_FORMAT, &lport, &rport, &inode) == 3 &&
		    lport == port && rport == ntohs(a.sin_port))
			return inode;
	}
	return 0;
}

/* Has pid accepted our connection conn to port (holds its other end)? */
static gboolean accepted_by(GPid pid, int conn, guint16 port)
{
	g_autofree gchar *dir = g_strdup_printf("/proc/%d/fd", pid);
	g_autofree gchar *want = NULL;
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	guint64 inode = server_side_inode(conn, port);
	const char *name;

	want = g_strdup_printf("socket:[%" G_GUINT64_FORMAT "]", inode);
	while (inode && d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);
		g_autofree gchar *link = g_file_read_link(path, NULL);

		if (g_strcmp0(link, want) == 0)
			return TRUE;
	}
	return FALSE;
}

/*
 * A process that outlived the wrapper is a bug: kill it (by pid, it was
 * seen alive just now) so that the failure leaves nothing, then fail.
 */
static void assert_gone(GPid pid)
{
	gboolean gone = !t_pid_alive(pid);

	if (!gone) {
		kill(pid, SIGKILL);
		g_test_message("pid %d outlived the wrapper", pid);
	}
	g_assert_true(gone);
}


/* ---- the fixture: a wrapper serving one port from a temp dir ---- */

typedef struct {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	guint16 port;
	Wrapper *w;
	GPid pid;	/* the serving haproxy */
	guint gen;	/* its generation number */
	gboolean has_pidfile;	/* started with -p pidfile */
} Site;

static void site_init(Site *s, const char *extra)
{
	s->dir = t_tmpdir();
	s->port = t_free_port();
	s->cfg = t_write_config(s->dir, "haproxy.cfg", s->port, extra);
	s->pidfile = g_build_filename(s->dir, "haproxy.pid", NULL);
}

static void site_clear(Site *s)
{
	g_clear_pointer(&s->w, wrapper_free);
	if (s->dir)
		t_rmtree(s->dir);
	g_free(s->dir);
	g_free(s->cfg);
	g_free(s->pidfile);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Site, site_clear)

/* The pidfile names the serving generation (written before its "ready"
 * line, so at once), or there is none. */
static void assert_pidfile(Site *s)
{
	if (s->has_pidfile)
		t_assert_pidfile_holds(s->pidfile, s->pid);
	else
		g_assert_false(g_file_test(s->pidfile, G_FILE_TEST_EXISTS));
}

/* Adopt a started wrapper: generation 1 ready, answering with its pid. */
static void site_serve(Site *s, Wrapper *w)
{
	s->w = w;
	s->pid = wrapper_wait_ready(w, 1, T_WAIT);
	g_assert_cmpint(s->pid, >, 0);
	s->gen = 1;
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, s->pid);
	/* Direct child of the wrapper, not a daemon. */
	g_assert_cmpint(proc_parent(s->pid), ==, w->pid);
	assert_pidfile(s);
}

/* Start the wrapper with env additions and the arguments up to NULL. */
static void G_GNUC_NULL_TERMINATED site_start(Site *s, const char *const *env,
					      ...)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new();
	const char *arg;
	va_list ap;

	va_start(ap, env);
	while ((arg = va_arg(ap, const char *))) {
		g_ptr_array_add(args, (gpointer)arg);
		s->has_pidfile |= g_str_equal(arg, s->pidfile);
	}
	va_end(ap);
	g_ptr_array_add(args, NULL);
	site_serve(s, wrapper_start((const char *const *)args->pdata, env));
}

static void site_start_default(Site *s)
{
	site_start(s, NULL, "-f", s->cfg, "-p", s->pidfile, NULL);
}

static void assert_running(Site *s)
{
	g_assert_cmpint(wrapper_wait_exit(s->w, 0), ==, -1);
	g_assert_true(t_pid_alive(s->w->pid));
}

/*
 * Reload with sig: the next generation gets ready with a new pid, is a
 * child of the same wrapper and answers; the old one ends unless it has
 * connections to drain (wait_old FALSE).
 */
static void site_reload(Site *s, int sig, gboolean wait_old)
{
	g_autofree gchar *want = reload_line(sig);
	GPid old = s->pid;
	const char *line;

	wrapper_signal(s->w, sig);
	g_assert_nonnull(wrapper_wait_log(s->w, want, T_WAIT));
	line = wrapper_wait_log(s->w, " ready: pid ", T_WAIT);
	g_assert_nonnull(line);
	s->pid = t_pid_in(line, "pid ");
	s->gen = t_pid_in(line, "generation ");
	g_assert_cmpint(s->pid, >, 0);
	g_assert_cmpint(s->pid, !=, old);
	g_assert_cmpint(proc_parent(s->pid), ==, s->w->pid);
	assert_pidfile(s);
	g_assert_cmpint(wait_answering(s->port, s->pid), ==, s->pid);
	if (wait_old)
		g_assert_true(t_wait_gone(old, T_WAIT));
	assert_running(s);
}

/* Stop with sig; the wait status. The wrapper waits for its children:
 * when it has exited, nothing below it may be left. */
static int site_stop(Site *s, int sig)
{
	g_autoptr(GArray) below = t_descendants(s->w->pid);
	int status;

	wrapper_signal(s->w, sig);
	status = wrapper_wait_exit(s->w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	for (guint i = 0; i < below->len; i++)
		assert_gone(g_array_index(below, GPid, i));
	return status;
}

static void assert_exit_code(int status, int code)
{
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

/* ---- tests ---- */

static void test_start_serve(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *pidtext = NULL;
	g_autofree gchar *want = NULL;
	g_auto(GStrv) argv = NULL;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);

	/* The wrapper writes the pidfile, since haproxy -db writes none. */
	g_assert_true(g_file_get_contents(s.pidfile, &pidtext, NULL, NULL));
	want = g_strdup_printf("%d", s.pid);
	g_assert_cmpstr(g_strstrip(pidtext), ==, want);

	/* Foreground -db, never the daemonizing -D or -Ds. */
	argv = proc_strings(s.pid, "cmdline");
	g_assert_nonnull(argv);
	g_assert_true(g_strv_contains((const char *const *)argv, "-db"));
	for (char **a = argv; *a; a++)
		g_assert_false(g_str_has_prefix(*a, "-D"));

	assert_exit_code(site_stop(&s, SIGTERM), 0);
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

static void test_serial_reloads(void)
{
	g_auto(Site) s = { 0 };
	GPid wpid;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);
	wpid = s.w->pid;
	for (guint i = 0; i < 10; i++) {
		site_reload(&s, SIGUSR2, TRUE);
		g_assert_cmpuint(s.gen, ==, i + 2);
		g_assert_cmpint(s.w->pid, ==, wpid);
	}
	g_assert_cmpuint(count_haproxy_below(wpid), ==, 1);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

static void test_sighup_reloads(void)
{
	g_auto(Site) s = { 0 };

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);
	site_reload(&s, SIGHUP, TRUE);
	site_reload(&s, SIGHUP, TRUE);
	g_assert_cmpuint(s.gen, ==, 3);
	g_assert_cmpuint(wrapper_count_log(s.w, "reloading on SIGHUP."), ==, 2);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

/* After a failed reload: the current generation keeps serving. */
static void assert_reload_failed(Site *s)
{
	GPid before = s->pid;

	g_assert_nonnull(wrapper_wait_log(s->w, "reload failed", T_WAIT));
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, before);
	g_assert_true(is_haproxy(before));
	g_assert_cmpuint(count_haproxy_below(s->w->pid), ==, 1);
	/* The pidfile still names the generation that serves. */
	assert_pidfile(s);
	assert_running(s);
}

/* A reload that must fail, asked by SIGUSR2. */
static void reload_must_fail(Site *s)
{
	wrapper_signal(s->w, SIGUSR2);
	assert_reload_failed(s);
}

/* The client command, against the runtime directory rundir_opt names;
 * its exit code, stdout and stderr. */
static int run_client(const char *rundir_opt, const char *command,
		      gchar **out, gchar **err)
{
	const char *argv[] = { t_wrapper_path(), command, rundir_opt, NULL };

	return t_run_command(argv, T_WAIT, out, err);
}

static void test_bad_config_reload(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *broken = NULL;
	g_autofree gchar *good = NULL;
	g_autofree gchar *second = NULL;
	g_autofree gchar *rundir = NULL;
	g_autofree gchar *rundir_opt = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autofree gchar *status = NULL;
	guint16 blocked;
	int fd;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	rundir = t_runtime_dir(s.dir);
	rundir_opt = g_strconcat("--runtime-dir=", rundir, NULL);
	site_start(&s, NULL, rundir_opt, "-f", s.cfg, "-p", s.pidfile, NULL);

	broken = t_write_config(s.dir, "haproxy.cfg", s.port,
				"    no-such-keyword here\n");
	reload_must_fail(&s);
	/* What systemd's StatusText and an operator's --status show. */
	g_assert_cmpint(run_client(rundir_opt, "--status", &status, NULL), ==,
			0);
	if (!strstr(status, "last reload: failed in ") ||
	    !strstr(status, "generation 2 (pid "))
		g_error("--status after a failed reload:\n%s", status);
	good = t_write_config(s.dir, "haproxy.cfg", s.port, NULL);
	site_reload(&s, SIGUSR2, TRUE);
	/* Generation 2 was the failed one: its number is not reused. */
	g_assert_cmpuint(s.gen, ==, 3);

	/* A port held without SO_REUSEPORT: haproxy retries, then gives up.
	 * Asked by the client (ExecReload= of the notify-reload unit): it
	 * fails with the reason, never "ok". */
	blocked = t_free_port();
	fd = t_plain_listener(blocked);
	second = g_strdup_printf("    bind 127.0.0.1:%u\n", blocked);
	g_free(t_write_config(s.dir, "haproxy.cfg", s.port, second));
	g_assert_cmpint(run_client(rundir_opt, "--reload", &out, &err), ==, 1);
	if (!g_str_has_prefix(err, "error: generation 4 (pid ") ||
	    !strstr(err, "exited with status 1 before it was ready"))
		g_error("--reload of a failing configuration: out \"%s\" "
			"err \"%s\"", out, err);
	g_assert_null(strstr(out, "ok"));
	assert_reload_failed(&s);
	close(fd);

	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

static void test_burst_coalesce(void)
{
	g_auto(Site) s = { 0 };
	guint usr2, hup, executing;
	const char *line;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);

	for (int i = 0; i < 50; i++)
		wrapper_signal(s.w, SIGUSR2);
	/*
	 * Barrier: signalfd hands out the lowest pending signal first, so
	 * once SIGWINCH (28) is read every SIGUSR2 (12) sent before it has
	 * been read too. A SIGHUP after that either starts the last reload
	 * or replaces the pending one; once it is ready, nothing follows.
	 */
	wrapper_signal(s.w, SIGWINCH);
	g_assert_nonnull(wrapper_wait_log(s.w, "ignoring SIGWINCH", T_WAIT));
	wrapper_signal(s.w, SIGHUP);
	g_assert_nonnull(wrapper_wait_log(s.w, "reloading on SIGHUP.", T_WAIT));
	line = wrapper_wait_log(s.w, " ready: pid ", T_WAIT);
	g_assert_nonnull(line);
	s.pid = t_pid_in(line, "pid ");
	assert_pidfile(&s);

	usr2 = wrapper_count_log(s.w, "reloading on SIGUSR2.");
	hup = wrapper_count_log(s.w, "reloading on SIGHUP.");
	executing = wrapper_count_log(s.w, "executing ");
	g_test_message("50 x SIGUSR2 made %u reload(s)", usr2);
	g_assert_cmpuint(usr2, >=, 1);
	g_assert_cmpuint(usr2, <=, 3);
	g_assert_cmpuint(hup, ==, 1);
	g_assert_cmpuint(executing, ==, 1 + usr2 + hup);
	g_assert_cmpuint(wrapper_count_log(s.w, " ready: pid "), ==, executing);
	g_assert_null(wrapper_find_log(s.w, "reload failed"));

	/* Every generation but the last ends; the last one serves. */
	for (guint i = 0; i < s.w->lines->len; i++) {
		const char *l = g_ptr_array_index(s.w->lines, i);
		GPid p = strstr(l, " ready: pid ") ? t_pid_in(l, "pid ") : 0;

		if (p && p != s.pid)
			g_assert_true(t_wait_gone(p, T_WAIT));
	}
	g_assert_cmpuint(count_haproxy_below(s.w->pid), ==, 1);
	g_assert_cmpint(wait_answering(s.port, s.pid), ==, s.pid);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

/* Long timeouts: a drain would outlast every bound of this test. A later
 * global section overrides the harness's hard-stop-after. */
#define LONG_DRAIN "    timeout client 120s\n" \
		   "    timeout http-request 120s\n" \
		   "global\n" \
		   "    hard-stop-after 120s\n"

static void test_sigterm_leaves_nothing(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *old_line = NULL;
	g_autofree gchar *relay = NULL;
	GPid old;
	int conn;

	if (!test_begin())
		return;
	site_init(&s, LONG_DRAIN);
	/* No SIGKILL within T_WAIT: only the relayed SIGTERM can end the
	 * draining generation in time. */
	site_start(&s, NULL, "--stop-timeout=120", "-f", s.cfg, "-p",
		   s.pidfile, NULL);
	old = s.pid;

	/* Make sure generation 1 accepted the idle connection. */
	conn = t_hold_connection(s.port);
	g_assert_cmpint(conn, >=, 0);
	for (gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;
	     !accepted_by(old, conn, s.port) && g_get_monotonic_time() < end;)
		g_usleep(10 * 1000);
	g_assert_true(accepted_by(old, conn, s.port));

	site_reload(&s, SIGUSR2, FALSE);
	/* Still draining its idle connection when the stop comes. */
	g_assert_true(t_pid_alive(old));
	old_line = g_strdup_printf("(pid %d)", old);
	g_assert_null(wrapper_find_log(s.w, old_line));

	assert_exit_code(site_stop(&s, SIGTERM), 0);
	g_assert_false(t_pid_alive(old));
	g_assert_false(t_pid_alive(s.pid));
	relay = g_strdup_printf("SIGTERM -> %d.", old);
	g_assert_nonnull(wrapper_find_log(s.w, relay));
	close(conn);
}

static void test_sigint_stops(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *relay = NULL;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);
	assert_exit_code(site_stop(&s, SIGINT), 0);
	relay = g_strdup_printf("SIGINT -> %d.", s.pid);
	g_assert_nonnull(wrapper_find_log(s.w, relay));
}

static void test_graceful_sigusr1(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *which = NULL;
	const char *line;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);
	assert_exit_code(site_stop(&s, SIGUSR1), 0);
	/* A soft stop: haproxy itself finished with 0, not killed. */
	which = g_strdup_printf("(pid %d)", s.pid);
	line = wrapper_find_log(s.w, which);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "exited with status 0"));
}

/* The serving haproxy dies without being asked: 128 + signal, for Restart=. */
static void test_external_kill(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_auto(Site) s = { 0 };
	int status;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);
	g_assert_cmpint(kill(s.pid, sig), ==, 0);
	status = wrapper_wait_exit(s.w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	assert_exit_code(status, 128 + sig);
	g_assert_nonnull(wrapper_find_log(s.w, "on its own"));
	assert_gone(s.pid);
}

static void test_no_pidfile(void)
{
	g_auto(Site) s = { 0 };

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, "-f", s.cfg, NULL);
	site_reload(&s, SIGUSR2, TRUE);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
}

/* A pidfile someone rewrote during the run is no longer ours: the wrapper
 * leaves it at exit, whether it names another pid or ours among others. */
static void test_pidfile_rewritten(void)
{
	for (guint i = 0; i < 2; i++) {
		g_auto(Site) s = { 0 };
		g_autofree gchar *text = NULL;
		g_autofree gchar *left = NULL;
		g_autofree gchar *ours = NULL;

		if (!test_begin())
			return;
		site_init(&s, NULL);
		site_start_default(&s);
		site_reload(&s, SIGUSR2, TRUE);
		ours = g_strdup_printf("%d\n", s.pid);
		g_assert_true(g_file_get_contents(s.pidfile, &left, NULL,
						  NULL));
		g_assert_cmpstr(left, ==, ours);
		g_clear_pointer(&left, g_free);
		text = i ? g_strdup_printf("%d\n999999\n", s.pid)
			 : g_strdup("999999\n");
		g_assert_true(g_file_set_contents(s.pidfile, text, -1, NULL));
		assert_exit_code(site_stop(&s, SIGTERM), 0);
		g_assert_true(g_file_get_contents(s.pidfile, &left, NULL,
						  NULL));
		g_assert_cmpstr(left, ==, text);
	}
}

/* Every "executing" line: the wrapper's flags before the user's "--". */
static void assert_flags_before_dashdash(Wrapper *w, const char *cfg)
{
	guint n = 0;

	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);
		const char *flags = strstr(line, " -db -sf ");
		const char *dashdash = strstr(line, " -- ");

		if (!strstr(line, "executing "))
			continue;
		n++;
		g_assert_nonnull(flags);
		g_assert_nonnull(dashdash);
		g_assert_true(flags < dashdash);
		g_assert_nonnull(strstr(dashdash, cfg));
	}
	g_assert_cmpuint(n, ==, 2);
}

static void test_user_dashdash(void)
{
	g_auto(Site) s = { 0 };

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, NULL, "-p", s.pidfile, "--", s.cfg, NULL);
	site_reload(&s, SIGUSR2, TRUE);
	assert_flags_before_dashdash(s.w, s.cfg);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

/* The harness runs a path; this runs a bare name, found in envp's PATH. */
static Wrapper *start_by_name(const char *name, const char *path,
			      const char *const *args)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_auto(GStrv) envp = g_environ_setenv(g_get_environ(), "PATH", path,
					      TRUE);
	g_autoptr(GError) error = NULL;
	Wrapper *w = g_new0(Wrapper, 1);

	g_ptr_array_add(argv, (char *)name);
	for (; *args; args++)
		g_ptr_array_add(argv, (char *)*args);
	g_ptr_array_add(argv, NULL);
	w->lines = g_ptr_array_new_with_free_func(g_free);
	w->partial = g_string_new(NULL);
	g_spawn_async_with_pipes(NULL, (char **)argv->pdata, envp,
				 G_SPAWN_DO_NOT_REAP_CHILD |
				 G_SPAWN_SEARCH_PATH_FROM_ENVP,
				 NULL, NULL, &w->pid, NULL, NULL, &w->err_fd,
				 &error);
	g_assert_no_error(error);
	fcntl(w->err_fd, F_SETFL, O_NONBLOCK);
	return w;
}

static void test_bare_name_in_path(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *bin = NULL;
	g_autofree gchar *link = NULL;
	g_autofree gchar *path = NULL;
	g_auto(GStrv) argv = NULL;
	GPid wpid;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	bin = g_build_filename(s.dir, "bin", NULL);
	g_assert_cmpint(g_mkdir(bin, 0755), ==, 0);
	link = g_build_filename(bin, "haproxy-systemd-wrapper", NULL);
	g_assert_cmpint(symlink(t_wrapper_path(), link), ==, 0);
	path = g_strconcat(bin, ":/usr/bin:/bin", NULL);
	{
		const char *args[] = { "-f", s.cfg, "-p", s.pidfile, NULL };

		s.has_pidfile = TRUE;
		site_serve(&s, start_by_name("haproxy-systemd-wrapper", path,
					     args));
	}
	wpid = s.w->pid;
	/* Really started by its bare name. */
	argv = proc_strings(wpid, "cmdline");
	g_assert_nonnull(argv);
	g_assert_cmpstr(argv[0], ==, "haproxy-systemd-wrapper");
	/* Nothing named haproxy beside the real binary: the fallback. */
	g_assert_nonnull(wrapper_find_log(s.w, "executing " HAPROXY " "));

	site_reload(&s, SIGUSR2, TRUE);
	site_reload(&s, SIGUSR2, TRUE);
	g_assert_cmpint(s.w->pid, ==, wpid);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

/* --haproxy=NAME without a slash is looked up in PATH, as a shell would. */
static void test_haproxy_option_bare_name(void)
{
	g_auto(Site) s = { 0 };
	const char *env[] = { "PATH=/nonexistent:/usr/sbin:/usr/bin:/bin",
			      NULL };

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, env, "--haproxy=haproxy", "-f", s.cfg, "-p", s.pidfile,
		   NULL);
	g_assert_nonnull(wrapper_find_log(s.w, "executing " HAPROXY " "));
	site_reload(&s, SIGUSR2, TRUE);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

static void test_stray_signals(void)
{
	static const int strays[] = { SIGQUIT, SIGTTOU, SIGTTIN, SIGWINCH };
	g_auto(Site) s = { 0 };
	GPid hap;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start_default(&s);
	hap = s.pid;

	/* Ignored outright, so it is never read: nothing to log. */
	wrapper_signal(s.w, SIGPIPE);
	for (guint i = 0; i < G_N_ELEMENTS(strays); i++) {
		g_autofree gchar *want = g_strdup_printf(
			"ignoring SIG%s from pid %d", sigabbrev_np(strays[i]),
			getpid());

		wrapper_signal(s.w, strays[i]);
		g_assert_nonnull(wrapper_wait_log(s.w, want, T_WAIT));
	}
	/* Neither the wrapper nor haproxy took any of them. */
	assert_running(&s);
	g_assert_true(is_haproxy(hap));
	g_assert_cmpint(t_http_pid(s.port), ==, hap);
	g_assert_cmpuint(count_haproxy_below(s.w->pid), ==, 1);

	site_reload(&s, SIGUSR2, TRUE);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

static gboolean wait_file_has(const char *path, const char *needle)
{
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;

	for (;;) {
		g_autofree gchar *text = NULL;

		if (g_file_get_contents(path, &text, NULL, NULL) &&
		    strstr(text, needle))
			return TRUE;
		if (g_get_monotonic_time() >= deadline)
			return FALSE;
		g_usleep(10 * 1000);
	}
}

static void test_stale_pidfile(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *rec_log = NULL;
	g_autofree gchar *helper = NULL;
	g_autofree gchar *recorded = NULL;
	g_autofree gchar *stale = NULL;
	g_autoptr(GError) error = NULL;
	gboolean rec_alive;
	GPid rec;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	helper = g_build_filename(t_dir(), "sigrecorder", NULL);
	rec_log = g_build_filename(s.dir, "signals.log", NULL);
	{
		char *argv[] = { helper, rec_log, NULL };

		g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
			      NULL, NULL, &rec, &error);
		g_assert_no_error(error);
	}
	g_assert_true(wait_file_has(rec_log, "ready pid="));

	/* A pidfile left over, naming a live process that is not ours. */
	stale = g_strdup_printf("%d\n", rec);
	g_free(t_write_file(s.dir, "haproxy.pid", stale));

	site_start_default(&s);
	site_reload(&s, SIGUSR2, TRUE);
	site_reload(&s, SIGUSR2, TRUE);
	assert_exit_code(site_stop(&s, SIGTERM), 0);

	g_assert_true(g_file_get_contents(rec_log, &recorded, NULL, NULL));
	rec_alive = t_pid_alive(rec);
	kill(rec, SIGKILL);
	waitpid(rec, NULL, 0);
	g_test_message("sigrecorder: %s", recorded);
	g_assert_true(rec_alive);
	g_assert_null(strstr(recorded, "signal="));
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

		if (g_str_has_prefix(link, "socket:") ||
		    g_str_has_prefix(link, "anon_inode:") ||
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
	const char *env[] = {
		"HAPROXY_MWORKER_REEXEC=1", "HAPROXY_PROCESSES=x",
		"HAPROXY_SYSTEMD_REEXEC=1", "HAPROXY_WRAPPER_FD=9",
		"NOTIFY_SOCKET=/nonexistent", "FOO_KEEP=1", NULL,
	};
	g_auto(Site) s = { 0 };
	g_auto(GStrv) environ_ = NULL;
	g_autofree gchar *status_path = NULL;
	g_autofree gchar *text = NULL;

	if (!test_begin())
		return;
	site_init(&s, NULL);
	site_start(&s, env, "-f", s.cfg, "-p", s.pidfile, NULL);
	environ_ = proc_strings(s.pid, "environ");
	g_assert_nonnull(environ_);
	for (guint i = 0; i < G_N_ELEMENTS(scrubbed); i++)
		if (env_has(environ_, scrubbed[i]))
			g_test_fail_printf("haproxy inherited %s",
					   scrubbed[i]);
	g_assert_true(g_strv_contains((const char *const *)environ_,
				      "FOO_KEEP=1"));

	/* No blocked signal inherited from the wrapper's signalfd mask. */
	status_path = g_strdup_printf("/proc/%d/status", s.pid);
	g_assert_true(g_file_get_contents(status_path, &text, NULL, NULL));
	if (!strstr(text, "\nSigBlk:\t0000000000000000\n"))
		g_test_fail_printf("haproxy starts with signals blocked:\n%s",
				   text);

	assert_clean_fds(s.pid, s.w->pid);
	assert_exit_code(site_stop(&s, SIGTERM), 0);
}

/* A wrapper that must give up before serving: its wait status. */
static int run_to_exit(Wrapper **out, const char *const *args)
{
	int status;

	*out = wrapper_start(args, NULL);
	status = wrapper_wait_exit(*out, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	return status;
}

static void test_missing_haproxy(void)
{
	g_autofree gchar *dir = NULL;
	g_autofree gchar *cfg = NULL;
	g_autofree gchar *noexec = NULL;
	g_autofree gchar *noexec_opt = NULL;
	struct {
		const char *opt;
		int code;
		const char *log;	/* NULL: must not even try */
	} cases[] = {
		{ "--haproxy=/nonexistent/haproxy", 127, "cannot start haproxy" },
		{ NULL, 126, "cannot start haproxy" },	/* not executable */
		{ "--no-such-option", 64, NULL },
		{ "--master-worker=sometimes", 64, NULL },
		{ "--format=prometheus", 64, NULL },
	};

	if (!test_begin())
		return;
	dir = t_tmpdir();
	cfg = t_write_config(dir, "haproxy.cfg", t_free_port(), NULL);
	noexec = t_write_file(dir, "haproxy", "#!/bin/sh\nexit 0\n");
	g_assert_cmpint(g_chmod(noexec, 0644), ==, 0);
	noexec_opt = g_strconcat("--haproxy=", noexec, NULL);
	cases[1].opt = noexec_opt;
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		const char *args[] = { cases[i].opt, "-f", cfg, NULL };
		g_autoptr(Wrapper) w = NULL;

		g_test_message("%s", cases[i].opt);
		assert_exit_code(run_to_exit(&w, args), cases[i].code);
		if (cases[i].log)
			g_assert_nonnull(wrapper_find_log(w, cases[i].log));
		else
			g_assert_null(wrapper_find_log(w, "executing "));
	}
	t_rmtree(dir);
}

static void test_config_error_at_start(void)
{
	g_autofree gchar *dir = NULL;
	g_autofree gchar *cfg = NULL;
	g_autoptr(Wrapper) w = NULL;

	if (!test_begin())
		return;
	dir = t_tmpdir();
	cfg = t_write_config(dir, "haproxy.cfg", t_free_port(),
			     "    no-such-keyword here\n");
	{
		const char *args[] = { "-f", cfg, NULL };

		assert_exit_code(run_to_exit(&w, args), 1);
	}
	g_assert_nonnull(wrapper_find_log(w, "cannot start haproxy"));
	g_assert_nonnull(wrapper_find_log(w, "exit, haproxy RC=1"));
	t_rmtree(dir);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_abort };

	g_test_init(&argc, &argv, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigaction(SIGABRT, &sa, NULL);

	g_test_add_func("/real/start-serve", test_start_serve);
	g_test_add_func("/real/serial-reloads", test_serial_reloads);
	g_test_add_func("/real/sighup-reloads", test_sighup_reloads);
	g_test_add_func("/real/bad-config-reload", test_bad_config_reload);
	g_test_add_func("/real/burst-coalesce", test_burst_coalesce);
	g_test_add_func("/real/sigterm-leaves-nothing",
			test_sigterm_leaves_nothing);
	g_test_add_func("/real/sigint-stops", test_sigint_stops);
	g_test_add_func("/real/graceful-sigusr1", test_graceful_sigusr1);
	g_test_add_data_func("/real/killed-haproxy", GINT_TO_POINTER(SIGKILL),
			     test_external_kill);
	g_test_add_data_func("/real/terminated-haproxy",
			     GINT_TO_POINTER(SIGTERM), test_external_kill);
	g_test_add_func("/real/no-pidfile", test_no_pidfile);
	g_test_add_func("/real/pidfile-rewritten", test_pidfile_rewritten);
	g_test_add_func("/real/user-dashdash", test_user_dashdash);
	g_test_add_func("/real/bare-name-in-path", test_bare_name_in_path);
	g_test_add_func("/real/haproxy-option-bare-name",
			test_haproxy_option_bare_name);
	g_test_add_func("/real/stray-signals", test_stray_signals);
	g_test_add_func("/real/stale-pidfile", test_stale_pidfile);
	g_test_add_func("/real/child-environment", test_child_environment);
	g_test_add_func("/real/missing-haproxy", test_missing_haproxy);
	g_test_add_func("/real/config-error-at-start",
			test_config_error_at_start);
	return g_test_run();
}
