/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integration tests of the wrapper's self-upgrade, with the real haproxy:
 * a copy of the wrapper runs from a private bin/ directory, a package-
 * manager-style install (write a temporary file, rename it over) replaces
 * it, and a reload must re-execute the new binary in the same pid and carry
 * the haproxy generations across.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/harness.h"
#include "t/lib/foreign.h"

#define NEXT_VERSION "0.1.0+next"

/* ---- installing a binary the way a package manager does ---- */

/* Same directory, temporary name, rename(): the running file is never
 * written to (that would fail with ETXTBSY), only unlinked. */
static void install_content(const char *dst, const char *data, gsize len)
{
	g_autofree gchar *tmp = g_strdup_printf("%s.dpkg-new", dst);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, data, len), ==, (gssize)len);
	g_assert_cmpint(fchmod(fd, 0755), ==, 0);
	g_assert_cmpint(close(fd), ==, 0);
	g_assert_cmpint(rename(tmp, dst), ==, 0);
}

static void install_file(const char *src, const char *dst)
{
	g_autofree gchar *data = NULL;
	gsize len;

	g_assert_true(g_file_get_contents(src, &data, &len, NULL));
	install_content(dst, data, len);
}

static const char *next_wrapper_path(void)
{
	static gchar *path;

	if (!path)
		path = g_build_filename(t_dir(), "haproxy-systemd-wrapper-next",
					NULL);
	return path;
}

/* ---- the fixture: a wrapper copy in <tmp>/bin serving one port ---- */

struct up {
	struct t_site site;	/* its dir, cfg, port, wrapper */
	gchar *bin;
	gchar *rundir;		/* set before up_start(): --runtime-dir */
	gboolean foreign;	/* set before up_start(): a daemon to take over */
	GPid daemon;
	gchar *pidfile;		/* the daemon's, the wrapper's -p */
	struct stat orig;	/* the binary first started */
	GPid gen1;
};

static gboolean up_start(struct up *u, const char *opt)
{
	g_autofree gchar *bindir = NULL;
	g_autofree gchar *rundir_opt = NULL;
	const char *args[7];
	guint n = 0;

	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return FALSE;
	}
	t_site_init(&u->site);
	bindir = g_build_filename(u->site.dir, "bin", NULL);
	g_assert_cmpint(g_mkdir(bindir, 0755), ==, 0);
	u->bin = g_build_filename(bindir, "haproxy-systemd-wrapper", NULL);
	install_file(t_wrapper_path(), u->bin);
	g_assert_cmpint(stat(u->bin, &u->orig), ==, 0);
	t_site_config(&u->site, NULL);

	if (u->foreign) {
		u->pidfile = g_build_filename(u->site.dir, "h.pid", NULL);
		u->daemon = t_foreign_daemon(u->site.dir, "/usr/sbin/haproxy",
					     u->pidfile, u->site.cfg);
		g_assert_cmpint(t_wait_serving(u->site.port, T_WAIT), ==, u->daemon);
		args[n++] = "-p";
		args[n++] = u->pidfile;
	}
	if (opt)
		args[n++] = opt;
	if (u->rundir) {
		g_free(u->rundir);
		u->rundir = t_runtime_dir(u->site.dir);
		rundir_opt = g_strconcat("--runtime-dir=", u->rundir, NULL);
		args[n++] = rundir_opt;
	}
	args[n++] = "-f";
	args[n++] = u->site.cfg;
	args[n] = NULL;
	u->site.w = wrapper_start_at(u->bin, args, NULL);
	/* Nothing beside the copy: it falls back to /usr/sbin/haproxy. */
	g_assert_nonnull(wrapper_wait_log(u->site.w, LOG_EXECUTING_WORD
					  "/usr/sbin/haproxy ", T_WAIT));
	u->gen1 = wrapper_wait_ready(u->site.w, 1, T_WAIT);
	g_assert_cmpint(u->gen1, >, 0);
	/* The daemon taken over finishes before ours alone answers. */
	if (u->foreign)
		g_assert_true(t_wait_gone(u->daemon, T_WAIT));
	g_assert_cmpint(t_wait_serving(u->site.port, T_WAIT), ==, u->gen1);
	return TRUE;
}

static void up_clear(struct up *u)
{
	g_clear_pointer(&u->site.w, wrapper_free);
	if (u->foreign)
		t_end_all_started();
	t_site_clear(&u->site);
	g_free(u->bin);
	g_free(u->rundir);
	g_free(u->pidfile);
}

/* ---- checks ---- */

static void assert_same_file(const char *a, const struct stat *b)
{
	struct stat st;

	g_assert_cmpint(stat(a, &st), ==, 0);
	g_assert_cmpuint(st.st_dev, ==, b->st_dev);
	g_assert_cmpuint(st.st_ino, ==, b->st_ino);
}

/* /proc/<pid>/exe names the inode the process runs, even unlinked. */
static void assert_runs(GPid pid, const struct stat *file)
{
	g_autofree gchar *exe = g_strdup_printf("/proc/%d/exe", pid);

	assert_same_file(exe, file);
}

static void assert_running(Wrapper *w)
{
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_true(t_pid_alive(w->pid));
}

/* Generation n ready; the old ones gone; n answers. */
static GPid wait_takeover(struct up *u, guint n, GPid old)
{
	GPid pid = wrapper_wait_ready(u->site.w, n, T_WAIT);

	g_assert_cmpint(pid, >, 0);
	g_assert_true(t_wait_gone(old, T_WAIT));
	g_assert_cmpint(t_wait_serving(u->site.port, T_WAIT), ==, pid);
	return pid;
}

/* SIGTERM: exit 0, nothing left below the wrapper. */
static void stop_cleanly(Wrapper *w)
{
	g_autoptr(GArray) below = t_descendants(w->pid);
	int status;

	wrapper_signal(w, SIGTERM);
	status = wrapper_wait_exit(w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 0);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(g_array_index(below, GPid, i),
					  T_WAIT));
}

/* The metrics count the generations the new image adopted. */
static void assert_adoptions(struct up *u, guint n)
{
	const char *argv[] = { u->bin, "--status", "--format=openmetrics",
			       NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *want = g_strdup_printf(
		"\nhaproxy_wrapper_adoptions_total %u\n", n);

	g_assert_cmpint(t_run_command(argv, T_WAIT, &out, NULL), ==, 0);
	g_assert_nonnull(strstr(out, want));
}

/* The instance is named after the pidfile: the same -p. */
static gchar *openmetrics(struct up *u)
{
	const char *argv[] = { u->bin, "--status", "--format=openmetrics",
			       "-p", u->pidfile, NULL };
	gchar *out = NULL;

	g_assert_cmpint(t_run_command(argv, T_WAIT, &out, NULL), ==, 0);
	return out;
}

/* The value of the sample "name" (labels included) in an exposition. */
static guint64 om_sample(const char *om, const char *name)
{
	g_autofree gchar *key = g_strdup_printf("\n%s ", name);
	const char *at = strstr(om, key);
	g_autofree gchar *value = NULL;
	guint64 v;

	g_assert_nonnull(at);
	at += strlen(key);
	value = g_strndup(at, strcspn(at, "\n"));
	g_assert_true(g_ascii_string_to_unsigned(value, 10, 0, G_MAXUINT64,
						 &v, NULL));
	return v;
}

/* The new image's first line: NEXT_VERSION, n generations adopted. */
static void assert_upgraded(struct up *u, guint n)
{
	g_autofree gchar *want = g_strdup_printf(LOG_WRAPPER_RUNNING_FMT,
						 NEXT_VERSION, n);

	g_assert_nonnull(wrapper_wait_log(u->site.w, want, T_WAIT));
}

/* line is generation n's "ready" line. */
static void assert_ready_line(const char *line, guint n)
{
	g_autofree gchar *want = g_strdup_printf(": " LOG_READY_FMT, n);

	g_assert_nonnull(strstr(line, want));
}

/* ---- 1: a replaced binary is re-executed on reload ---- */

static void test_upgrade(void)
{
	struct up u = { 0 };
	struct stat next;
	GPid gen2, gen3;

	if (!up_start(&u, NULL))
		return;
	install_file(next_wrapper_path(), u.bin);
	g_assert_cmpint(stat(u.bin, &next), ==, 0);
	g_assert_cmpuint(next.st_ino, !=, u.orig.st_ino);

	wrapper_signal(u.site.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_REEXECUTING "SIGUSR2.",
					  T_WAIT));
	assert_upgraded(&u, 1);
	gen2 = wait_takeover(&u, 2, u.gen1);
	/* Same pid, new image. */
	assert_running(u.site.w);
	assert_runs(u.site.w->pid, &next);
	assert_adoptions(&u, 1);

	/* Nothing changed since: a plain reload. */
	wrapper_signal(u.site.w, SIGUSR2);
	gen3 = wait_takeover(&u, 3, gen2);
	g_assert_cmpint(gen3, !=, gen2);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_REEXECUTING_ANY),
			 ==, 1);
	assert_runs(u.site.w->pid, &next);

	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 1b: the metrics' counters survive the exec ---- */

static void test_counters_kept(void)
{
	static const char *const kept[] = {
		"haproxy_wrapper_reloads_total{result=\"failed\"}",
		"haproxy_wrapper_takeovers_total",
	};
	struct up u = { .foreign = TRUE };
	g_autofree gchar *before = NULL, *after = NULL, *gone = NULL;

	if (!up_start(&u, NULL))
		return;
	/* The daemon taken over is gone: only our generation to adopt. */
	gone = g_strdup_printf(LOG_FOREIGN_EXITED_FMT, u.daemon, "standalone");
	/* Its -sf may end it before our generation is ready: the line can
	 * come before the "ready" one up_start() waited for. */
	if (!wrapper_find_log(u.site.w, gone))
		g_assert_nonnull(wrapper_wait_log(u.site.w, gone, T_WAIT));
	/* One failed reload. */
	g_free(t_write_file(u.site.dir, "haproxy.cfg", "global\n\tno-such\n"));
	wrapper_signal(u.site.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_RELOAD_FAILED, T_WAIT));
	g_free(t_write_config(u.site.dir, "haproxy.cfg", u.site.port, NULL));

	before = openmetrics(&u);
	g_assert_cmpuint(om_sample(before, kept[0]), ==, 1);
	g_assert_cmpuint(om_sample(before, kept[1]), ==, 1);
	g_assert_cmpuint(om_sample(before, "haproxy_wrapper_adoptions_total"),
			 ==, 0);

	install_file(next_wrapper_path(), u.bin);
	wrapper_signal(u.site.w, SIGUSR2);
	assert_upgraded(&u, 1);
	/* Generation 2 was the failed one. */
	wait_takeover(&u, 3, u.gen1);
	after = openmetrics(&u);
	for (guint i = 0; i < G_N_ELEMENTS(kept); i++)
		g_assert_cmpuint(om_sample(after, kept[i]), ==,
				 om_sample(before, kept[i]));
	g_assert_cmpuint(om_sample(after, "haproxy_wrapper_adoptions_total"),
			 ==, 1);
	g_assert_cmpuint(om_sample(after, "haproxy_wrapper_reloads_total"
					  "{result=\"ok\"}"), ==,
			 om_sample(before, "haproxy_wrapper_reloads_total"
					   "{result=\"ok\"}") + 1);

	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 2: reloads asked for around the exec are not lost ---- */

static void test_reload_signals_not_lost(void)
{
	struct up u = { 0 };
	GPid gen2, gen3;

	if (!up_start(&u, NULL))
		return;
	install_file(next_wrapper_path(), u.bin);

	wrapper_signal(u.site.w, SIGUSR2);
	/* Once the first is taken: the next ones land during the upgrade
	 * check, the exec, or the new image's first reload. */
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_RELOADING_ON "SIGUSR2.",
					  T_WAIT));
	for (int i = 0; i < 3; i++)
		wrapper_signal(u.site.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(u.site.w, NEXT_VERSION
					  LOG_RUNNING_ADOPTED, T_WAIT));
	gen2 = wrapper_wait_ready(u.site.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	gen3 = wait_takeover(&u, 3, gen2);
	g_assert_true(t_wait_gone(u.gen1, T_WAIT));
	assert_running(u.site.w);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_REEXECUTING_ANY),
			 ==, 1);
	g_assert_cmpint(t_http_pid(u.site.port), ==, gen3);

	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 2b: a hard reload stays hard across the exec ---- */

/* pid's command line has -st (its predecessors killed at once), not -sf. */
static void assert_hard_launch(GPid pid)
{
	g_auto(GStrv) argv = t_proc_strings(pid, "cmdline");
	g_autofree gchar *shown = NULL;

	g_assert_nonnull(argv);
	shown = g_strjoinv(" ", argv);
	g_test_message("pid %d runs: %s", pid, shown);
	g_assert_true(g_strv_contains((const char *const *)argv, "-st"));
	g_assert_false(g_strv_contains((const char *const *)argv, "-sf"));
}

/* The client c of command ends with exit 0, "ok generation number (pid
 * P) serving"; P. */
static GPid client_reload_ok(const char *command, guint number,
			     struct t_command *c)
{
	g_assert_cmpint(t_command_finish(c, T_WAIT), ==, 0);
	g_test_message("%s: %s", command, c->out->str);
	g_assert_cmpint(t_pid_in(c->out->str, "ok generation "), ==, number);
	return t_pid_in(c->out->str, "(pid ");
}

/* `bin COMMAND --runtime-dir=...`, started. */
static void client_start(struct up *u, const char *command,
			 struct t_command *c)
{
	g_autofree gchar *opt = g_strconcat("--runtime-dir=", u->rundir, NULL);
	const char *argv[] = { u->bin, command, opt, NULL };

	t_command_spawn(c, argv);
}

/* A --hard-reload that finds a new wrapper binary: the new image runs
 * it, and runs it hard. */
static void test_hard_reload_upgrade(void)
{
	struct up u = { .rundir = g_strdup("") };
	struct t_command hard = { 0 };
	struct stat next;
	GPid gen2;

	if (!up_start(&u, NULL))
		return;
	install_file(next_wrapper_path(), u.bin);
	g_assert_cmpint(stat(u.bin, &next), ==, 0);

	client_start(&u, "--hard-reload", &hard);
	gen2 = client_reload_ok("--hard-reload", 2, &hard);
	g_assert_nonnull(wrapper_find_log(u.site.w, LOG_REEXECUTING));
	assert_upgraded(&u, 1);
	assert_runs(u.site.w->pid, &next);
	assert_hard_launch(gen2);
	g_assert_true(t_wait_gone(u.gen1, T_WAIT));
	g_assert_cmpint(t_wait_serving(u.site.port, T_WAIT), ==, gen2);

	t_command_clear(&hard);
	stop_cleanly(u.site.w);
	up_clear(&u);
}

/*
 * A --hard-reload asked while a SIGUSR2's reload checks the new wrapper
 * binary (its dry run held at a gate): it is pending at the exec, and
 * the new image, once it has carried out the SIGUSR2's reload (-sf),
 * runs it hard (-st). The binary installed is a script that holds the
 * dry run while dir/gate exists, then runs the next wrapper.
 */
static void test_pending_hard_across_upgrade(void)
{
	struct up u = { .rundir = g_strdup("") };
	struct t_command hard = { 0 };
	g_autofree gchar *gate = NULL, *entered = NULL, *script = NULL;
	g_autofree gchar *seen = NULL;
	const char *line;
	GPid gen3;

	if (!up_start(&u, NULL))
		return;
	gate = g_build_filename(u.site.dir, "gate", NULL);
	entered = g_strconcat(gate, ".entered", NULL);
	script = g_strdup_printf(
		"#!/bin/sh\n"
		"if [ \"$1\" = --upgrade-dry-run ] && [ -e %s ]; then\n"
		"	echo $$ > %s\n"
		"	while [ -e %s ]; do sleep 0.01; done\n"
		"fi\n"
		"exec %s \"$@\"\n",
		gate, entered, gate, next_wrapper_path());
	install_content(u.bin, script, strlen(script));
	g_free(t_write_file(u.site.dir, "gate", ""));

	wrapper_signal(u.site.w, SIGUSR2);
	/* The dry run waits at the gate: the SIGUSR2's reload checks. */
	seen = t_wait_file_line(entered, "", NULL, 1, T_WAIT);
	g_assert_nonnull(seen);
	client_start(&u, "--hard-reload", &hard);
	g_assert_nonnull(wrapper_wait_log(u.site.w,
					  LOG_RELOAD_QUEUED_BY_CLIENT, T_WAIT));
	g_assert_cmpint(g_unlink(gate), ==, 0);

	assert_upgraded(&u, 1);
	gen3 = client_reload_ok("--hard-reload", 3, &hard);
	/* The SIGUSR2's reload, soft; then the pending one, hard. */
	line = wrapper_executing_line(u.site.w, 2);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, " -sf "));
	line = wrapper_executing_line(u.site.w, 3);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, " -st "));
	assert_hard_launch(gen3);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_REEXECUTING_ANY),
			 ==, 1);
	g_assert_cmpint(t_wait_serving(u.site.port, T_WAIT), ==, gen3);

	t_command_clear(&hard);
	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 3: a replacement that does not work is not executed ---- */

static void test_broken_replacement(void)
{
	static const char script[] = "#!/bin/sh\nexit 1\n";
	struct up u = { 0 };

	if (!up_start(&u, NULL))
		return;
	install_content(u.bin, script, sizeof(script) - 1);

	wrapper_signal(u.site.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_NOT_UPGRADING, T_WAIT));
	wait_takeover(&u, 2, u.gen1);
	assert_running(u.site.w);
	assert_runs(u.site.w->pid, &u.orig);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_REEXECUTING_ANY),
			 ==, 0);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_RUNNING_ADOPTED),
			 ==, 0);

	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 3b: a runtime directory no longer trusted after the exec ---- */

static void empty_dir(const char *path)
{
	g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
	const char *name;

	g_assert_nonnull(d);
	while ((name = g_dir_read_name(d))) {
		g_autofree gchar *p = g_build_filename(path, name, NULL);

		g_assert_cmpint(g_unlink(p), ==, 0);
	}
}

/* At start it is a usage error (64); the new image of a self-upgrade only
 * warns: exiting would orphan the haproxy it adopted. */
static void test_untrusted_rundir(void)
{
	struct up u = { .rundir = g_strdup("") };

	if (!up_start(&u, NULL))
		return;
	install_file(next_wrapper_path(), u.bin);
	g_assert_cmpint(chmod(u.rundir, 0770), ==, 0);

	wrapper_signal(u.site.w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_REEXECUTING "SIGUSR2.",
					  T_WAIT));
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_RUNDIR_UNTRUSTED,
					  T_WAIT));
	assert_upgraded(&u, 1);
	/* The reload goes on, without the control socket. */
	wait_takeover(&u, 2, u.gen1);
	assert_running(u.site.w);
	g_assert_null(wrapper_find_log(u.site.w, LOG_EXIT_RC));

	/* Emptied by whoever may write it: not ours to remove either. */
	empty_dir(u.rundir);
	stop_cleanly(u.site.w);
	g_assert_true(g_file_test(u.rundir, G_FILE_TEST_IS_DIR));
	up_clear(&u);
}

/* A --reload client that waited through the exec, into an image that has
 * no control socket (its directory untrusted now): told so and closed,
 * not left waiting as long as the wrapper runs. The client of the wrapper
 * refuses such a directory: the socket is spoken to directly. */
static void test_untrusted_rundir_client(void)
{
	struct up u = { .rundir = g_strdup("") };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = T_WAIT / 1000 };
	g_autoptr(GString) got = g_string_new(NULL);
	char buf[512];
	ssize_t n;
	int fd;

	if (!up_start(&u, NULL))
		return;
	install_file(next_wrapper_path(), u.bin);
	g_assert_cmpint(chmod(u.rundir, 0770), ==, 0);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	g_snprintf(a.sun_path, sizeof(a.sun_path), "%s/control.sock",
		   u.rundir);
	g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(send(fd, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_REEXECUTING_ON_REQUEST,
					  T_WAIT));
	assert_upgraded(&u, 1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		g_string_append_len(got, buf, n);
	g_assert_cmpint(n, ==, 0);
	g_assert_true(g_str_has_prefix(got->str, "error: "));
	g_assert_nonnull(strstr(got->str, "no control socket"));
	close(fd);
	/* The reload goes on all the same. */
	wait_takeover(&u, 2, u.gen1);
	assert_running(u.site.w);

	empty_dir(u.rundir);
	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 4: --self-upgrade=never ---- */

static void test_never(void)
{
	struct up u = { 0 };

	if (!up_start(&u, "--self-upgrade=never"))
		return;
	install_file(next_wrapper_path(), u.bin);

	wrapper_signal(u.site.w, SIGUSR2);
	wait_takeover(&u, 2, u.gen1);
	assert_running(u.site.w);
	assert_runs(u.site.w->pid, &u.orig);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_REEXECUTING_ANY),
			 ==, 0);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_RUNNING_ADOPTED),
			 ==, 0);
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_NOT_UPGRADING), ==, 0);

	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 5: --self-upgrade=always re-executes the same binary ---- */

/* Until the only process below the wrapper is pid. */
static gboolean wait_only_descendant(GPid root, GPid pid)
{
	for (int i = 0; i < T_WAIT / 10; i++) {
		g_autoptr(GArray) below = t_descendants(root);

		if (below->len == 1 && g_array_index(below, GPid, 0) == pid)
			return TRUE;
		g_usleep(10 * 1000);
	}
	return FALSE;
}

static void test_always(void)
{
	struct up u = { 0 };
	GPid current;

	if (!up_start(&u, "--self-upgrade=always"))
		return;
	current = u.gen1;
	for (guint n = 2; n <= 4; n++) {
		wrapper_signal(u.site.w, SIGUSR2);
		g_assert_nonnull(wrapper_wait_log(u.site.w, LOG_REEXECUTING
						  "SIGUSR2.", T_WAIT));
		g_assert_nonnull(wrapper_wait_log(u.site.w, " 0.1.0"
						  LOG_RUNNING_ADOPTED " ",
						  T_WAIT));
		current = wait_takeover(&u, n, current);
		assert_running(u.site.w);
		assert_runs(u.site.w->pid, &u.orig);
	}
	g_assert_cmpuint(wrapper_count_log(u.site.w, LOG_REEXECUTING_ANY),
			 ==, 3);
	g_assert_true(wait_only_descendant(u.site.w->pid, current));

	stop_cleanly(u.site.w);
	up_clear(&u);
}

/* ---- 6: a leaked handover variable names no one we signal ---- */

/* Does any "executing" line hand this pid to haproxy? */
static gboolean executing_names(Wrapper *w, const char *pid)
{
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);
		g_auto(GStrv) tok = g_strsplit(line, " ", -1);

		if (strstr(line, LOG_EXECUTING_WORD) &&
		    g_strv_contains((const char *const *)tok, pid))
			return TRUE;
	}
	return FALSE;
}

static void test_leaked_state(void)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *state = NULL, *pidstr = NULL, *warn = NULL;
	g_autofree gchar *ready1 = NULL, *ready2 = NULL;
	const char *args[3];
	const char *env[2];
	struct t_site site;
	Wrapper *w;
	struct t_started *recorder;
	g_autofree gchar *recorded = NULL;
	GPid gen1, gen2;

	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return;
	}
	t_site_init(&site);
	t_site_config(&site, NULL);
	out = g_build_filename(site.dir, "recorder.log", NULL);
	recorder = t_start_recorder(out);
	pidstr = g_strdup_printf("%d", recorder->pid);
	state = g_strdup_printf("HAPROXY_WRAPPER_STATE=1 5 0 12 0 1 0 0 "
				"1:%d:1:1:0:2.6", recorder->pid);
	args[0] = "-f";
	args[1] = site.cfg;
	args[2] = NULL;
	env[0] = state;
	env[1] = NULL;
	w = site.w = wrapper_start(args, env);

	warn = g_strdup_printf(LOG_HANDOVER_NOT_CHILD_FMT, recorder->pid);
	g_assert_nonnull(wrapper_wait_log(w, warn, T_WAIT));
	/* A fresh start, as if the variable were not there. */
	ready1 = g_strdup(wrapper_wait_log(w, LOG_READY, T_WAIT));
	gen1 = t_pid_in(ready1, "pid ");
	g_assert_cmpint(gen1, >, 0);
	g_assert_cmpint(t_wait_serving(site.port, T_WAIT), ==, gen1);
	wrapper_signal(w, SIGUSR2);
	ready2 = g_strdup(wrapper_wait_log(w, LOG_READY, T_WAIT));
	gen2 = t_pid_in(ready2, "pid ");
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_false(executing_names(w, pidstr));
	g_assert_cmpuint(wrapper_count_log(w, LOG_RUNNING_ADOPTED), ==, 0);
	stop_cleanly(w);

	recorded = t_signals_before_marker(out, recorder);
	g_assert_cmpstr(recorded, ==, "");
	g_assert_true(t_pid_alive(recorder->pid));
	t_stop_recorder(recorder);
	/* Nothing of the variable was taken, the numbering neither. */
	assert_ready_line(ready1, 1);
	assert_ready_line(ready2, 2);
	t_site_clear(&site);
}

/* A copy of sleep(1) at path: a program a stray child runs. */
static void copy_sleep(const char *path)
{
	g_autofree gchar *data = NULL;
	gsize len;

	g_assert_true(g_file_get_contents("/bin/sleep", &data, &len, NULL));
	g_assert_true(g_file_set_contents(path, data, len, NULL));
	g_assert_cmpint(chmod(path, 0755), ==, 0);
}

/*
 * A child of ours the handed-over state does not name is killed and
 * named in the log by its executable's path, which anyone who can write
 * a file chose: escaped there, as every path read from /proc. Raw, its
 * newline would start a line of ours at emergency priority ("<0>").
 * Modelled by a shell that starts the real haproxy and the stray, then
 * execs the wrapper with a state naming haproxy only.
 */
static void test_stray_path_escaped(void)
{
	g_autofree gchar *script = NULL, *stray_exe = NULL;
	g_autofree gchar *started = NULL, *pids = NULL, *want = NULL;
	const char *prefix[] = { "/bin/sh", "-c", NULL, NULL };
	const char *args[4];
	struct t_site site;
	GPid gen1, stray, gen2;

	if (!t_have_haproxy()) {
		g_test_skip("no /usr/sbin/haproxy");
		return;
	}
	t_site_init(&site);
	t_site_config(&site, NULL);
	stray_exe = g_build_filename(site.dir, "<0>x\n<0>stray\001", NULL);
	copy_sleep(stray_exe);
	started = g_build_filename(site.dir, "started", NULL);
	/* The path holds no single quote. */
	script = g_strdup_printf(
		"/usr/sbin/haproxy -f %s -db & gen=$!\n"
		"'%s' 600 & stray=$!\n"
		"echo \"$gen $stray\" > %s.tmp\n"
		"mv %s.tmp %s\n"
		"export HAPROXY_WRAPPER_STATE=\"1 2 0 12 0 1 0 0 "
		"1:$gen:1:1:0:2.6\"\n"
		"exec \"$0\" \"$@\"\n",
		site.cfg, stray_exe, started, started, started);
	prefix[2] = script;
	/* A runtime directory of its own: nothing cached by another run. */
	args[0] = site.rundir_opt;
	args[1] = "-f";
	args[2] = site.cfg;
	args[3] = NULL;
	site.w = wrapper_start_prefixed(prefix, args, NULL);
	/* Written whole, then renamed: both pids in its one line. */
	pids = t_wait_file_line(started, " ", NULL, 1, T_WAIT);
	g_assert_nonnull(pids);
	g_assert_cmpint(sscanf(pids, "%d %d", &gen1, &stray), ==, 2);

	g_assert_true(t_wait_gone(stray, T_WAIT));
	want = g_strdup_printf("pid %d (%s/<0>x\\n<0>stray\\x01), a child "
			       "the handover does not name: killed", stray,
			       site.dir);
	g_assert_nonnull(wrapper_wait_log(site.w, want, T_WAIT));
	for (guint i = 0; i < site.w->lines->len; i++)
		g_assert_false(g_str_has_prefix(
			g_ptr_array_index(site.w->lines, i), "<0>stray"));
	/* The reload the state was about: generation 2 serves. */
	gen2 = wrapper_wait_ready(site.w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_cmpint(t_wait_serving(site.port, T_WAIT), ==, gen2);
	stop_cleanly(site.w);
	t_site_clear(&site);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/upgrade/upgrade", test_upgrade);
	g_test_add_func("/upgrade/counters-kept", test_counters_kept);
	g_test_add_func("/upgrade/reload-signals-not-lost-across-exec",
			test_reload_signals_not_lost);
	g_test_add_func("/upgrade/hard-reload-upgrade",
			test_hard_reload_upgrade);
	g_test_add_func("/upgrade/pending-hard-across-upgrade",
			test_pending_hard_across_upgrade);
	g_test_add_func("/upgrade/broken-replacement", test_broken_replacement);
	g_test_add_func("/upgrade/untrusted-rundir", test_untrusted_rundir);
	g_test_add_func("/upgrade/untrusted-rundir-client",
			test_untrusted_rundir_client);
	g_test_add_func("/upgrade/never", test_never);
	g_test_add_func("/upgrade/always", test_always);
	g_test_add_func("/upgrade/leaked-state", test_leaked_state);
	g_test_add_func("/upgrade/stray-path-escaped", test_stray_path_escaped);
	return g_test_run();
}
