/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Master-worker mode behind the wrapper: haproxy runs as -Ws, the wrapper
 * keeps the stable pid and turns SIGUSR2 and --reload into a SIGUSR2 to
 * the master, whose verdict it reads on a private notify socket. Driven
 * against the real haproxy 2.6 under load, and against the fake one for
 * the notify sequences of the other versions, nbproc, and masters that
 * handle SIGUSR2 late.
 */
#include <glib.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/harness.h"

#define HAPROXY "/usr/sbin/haproxy"

typedef struct {
	gchar *dir;
	gchar *cfg;
	gchar *pidfile;
	gchar *rundir_opt;
	guint16 port;
	gboolean fake;
	Wrapper *w;
	GPid master;
} Site;

static void site_write_config(Site *s, const char *extra)
{
	g_autofree gchar *text = NULL;

	if (s->fake)
		text = g_strdup_printf("bind 127.0.0.1:%u\n%s", s->port,
				       extra ? extra : "");
	else
		text = t_config_text(s->port, extra);
	g_assert_true(g_file_set_contents(s->cfg, text, -1, NULL));
}

static void site_init(Site *s, gboolean fake, const char *extra)
{
	*s = (Site){ .fake = fake };
	s->dir = t_tmpdir();
	s->cfg = g_build_filename(s->dir, "haproxy.cfg", NULL);
	s->pidfile = g_build_filename(s->dir, "haproxy.pid", NULL);
	{
		g_autofree gchar *run = t_runtime_dir(s->dir);

		s->rundir_opt = g_strconcat("--runtime-dir=", run, NULL);
	}
	s->port = t_free_port();
	site_write_config(s, extra);
}

static void site_clear(Site *s)
{
	if (!s->dir)
		return;		/* skipped before it began */
	wrapper_free(s->w);
	t_rmtree(s->dir);
	g_free(s->dir);
	g_free(s->cfg);
	g_free(s->pidfile);
	g_free(s->rundir_opt);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Site, site_clear)

/*
 * Start the wrapper with opts (up to 3, NULL-terminated) and the fake
 * haproxy of version (NULL: the real one); the generation 1 line's pid
 * (the master's, in master-worker mode) once it is ready.
 */
static GPid site_start(Site *s, const char *version, const char *const *opts)
{
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s/fake-haproxy",
						    t_dir());
	g_autofree gchar *env_version = g_strdup_printf(
		"FAKE_HAPROXY_VERSION=%s", version ? version : "");
	g_autofree gchar *env_log = g_strdup_printf(
		"FAKE_HAPROXY_LOG=%s/fake.log", s->dir);
	const char *env[] = { env_version, env_log, NULL };
	const char *args[12];
	guint n = 0;

	args[n++] = s->rundir_opt;
	if (s->fake)
		args[n++] = haproxy;
	for (guint i = 0; opts && opts[i]; i++)
		args[n++] = opts[i];
	args[n++] = "-f";
	args[n++] = s->cfg;
	args[n++] = "-p";
	args[n++] = s->pidfile;
	args[n] = NULL;
	g_assert_cmpuint(n, <, G_N_ELEMENTS(args));
	s->w = wrapper_start(args, s->fake ? env : NULL);
	s->master = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(s->master, >, 0);
	return s->master;
}

/* A client command; its exit code and what it printed (answers on
 * stdout, errors on stderr). */
static int site_client(Site *s, const char *command, gchar **out)
{
	const char *argv[] = { t_wrapper_path(), command, s->rundir_opt,
			       NULL };
	g_autofree gchar *o = NULL;
	g_autofree gchar *e = NULL;
	int code = t_run_command(argv, T_WAIT, &o, &e);

	if (out)
		*out = g_strconcat(o, e, NULL);
	return code;
}

/* "... serving with workers 12 13" -> the first worker. */
static GPid worker_in(const char *text)
{
	return t_pid_in(text, "workers ");
}

/* --reload, which must succeed; the new worker, which must answer. */
static GPid site_reload(Site *s, GPid old_worker)
{
	g_autofree gchar *out = NULL;
	GPid worker;

	g_assert_cmpint(site_client(s, "--reload", &out), ==, 0);
	g_assert_true(g_str_has_prefix(out, "ok "));
	worker = worker_in(out);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(worker, !=, old_worker);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), >, 0);
	return worker;
}

static gchar *site_status(Site *s)
{
	gchar *out = NULL;

	g_assert_cmpint(site_client(s, "--status", &out), ==, 0);
	return out;
}

static GPid read_pidfile(const char *path)
{
	g_autofree gchar *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	return (GPid)strtol(text, NULL, 10);
}

static gboolean skip_without_haproxy(void)
{
	if (t_have_haproxy())
		return FALSE;
	g_test_skip("no haproxy at " HAPROXY);
	return TRUE;
}

/* ---- the real haproxy 2.6 ---- */

/* The real haproxy as a master behind the wrapper (-W); its worker, or 0
 * when there is no haproxy here (the test is then skipped). */
static GPid real_master_start(Site *s)
{
	const char *opts[] = { "-W", NULL };
	GPid worker;

	if (skip_without_haproxy())
		return 0;
	site_init(s, FALSE, NULL);
	site_start(s, NULL, opts);
	worker = t_wait_serving(s->port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	return worker;
}

/* Serial reloads, by signal and by request, under load: the master and
 * the wrapper stay, each reload brings a new worker, no request fails. */
static void test_real_serial_reloads(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-W", NULL };
	g_autoptr(GArray) retired = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autofree gchar *status = NULL;
	g_autofree gchar *master_line = NULL;
	struct t_load load;
	GPid worker;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	site_start(&s, NULL, opts);
	g_assert_nonnull(wrapper_find_log(s.w, " -Ws"));
	worker = t_pid_in(wrapper_find_log(s.w, "generation 1 ready"),
			  "workers ");
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, worker);
	g_assert_cmpint(read_pidfile(s.pidfile), ==, s.master);
	t_load_start(&load, s.port);
	g_assert_true(t_load_wait_answers(&load, worker, 1));
	for (guint i = 0; i < 8; i++) {
		GPid next;

		g_array_append_val(retired, worker);
		if (i % 2) {
			next = site_reload(&s, worker);
			/* Past its line, for the next signal's. */
			g_assert_nonnull(wrapper_wait_log(
				s.w, "generation 1 reloaded", T_WAIT));
		} else {
			wrapper_signal(s.w, SIGUSR2);
			next = t_pid_in(wrapper_wait_log(
				s.w, "generation 1 reloaded", T_WAIT),
				"workers ");
			g_assert_cmpint(next, >, 0);
			g_assert_cmpint(next, !=, worker);
		}
		g_assert_true(t_load_wait_answers(&load, next, 1));
		worker = next;
	}
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
	/* One master all along, the only pid in the pidfile. */
	status = site_status(&s);
	master_line = g_strdup_printf("generation 1 pid %d ", s.master);
	g_assert_nonnull(strstr(status, master_line));
	g_assert_nonnull(strstr(status, "reloads 8\n"));
	g_assert_cmpint(read_pidfile(s.pidfile), ==, s.master);
	for (guint i = 0; i < retired->len; i++)
		g_assert_true(t_wait_gone(g_array_index(retired, GPid, i),
					  T_WAIT));
	g_assert_true(t_pid_alive(worker));
}

/* A configuration the master refuses: --reload says so and exits 1, the
 * old worker keeps serving, and the next good reload works. */
static void test_real_bad_config_reload(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "--master-worker=on", NULL };
	g_autofree gchar *out = NULL;
	g_autofree gchar *status = NULL;
	struct t_load load;
	GPid worker, next;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	site_start(&s, NULL, opts);
	worker = t_wait_serving(s.port, T_WAIT);
	g_assert_cmpint(worker, >, 0);
	t_load_start(&load, s.port);
	site_write_config(&s, "    no-such-keyword here\n");
	g_assert_cmpint(site_client(&s, "--reload", &out), ==, 1);
	g_assert_nonnull(strstr(out, "did not load the new configuration"));
	g_assert_nonnull(wrapper_wait_log(s.w, "<3>", T_WAIT));
	status = site_status(&s);
	g_assert_nonnull(strstr(status, "last reload: failed"));
	/* Requests after the verdict still reach the old worker. */
	g_assert_true(t_load_wait_answers(&load, worker, 20));
	g_assert_cmpint(t_http_pid(s.port), ==, worker);
	g_assert_true(t_pid_alive(s.master));
	site_write_config(&s, NULL);
	next = site_reload(&s, worker);
	g_assert_true(t_load_wait_answers(&load, next, 1));
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
	g_assert_true(t_wait_gone(worker, T_WAIT));
}

/* SIGTERM stops the master and its workers; the wrapper exits 0 and
 * removes the pidfile the master wrote. */
static void test_real_stop(void)
{
	g_auto(Site) s = { 0 };
	GPid worker;

	worker = real_master_start(&s);
	if (!worker)
		return;
	wrapper_signal(s.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.w, T_WAIT), ==, 0);
	g_assert_true(t_wait_gone(s.master, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_false(g_file_test(s.pidfile, G_FILE_TEST_EXISTS));
	g_assert_nonnull(wrapper_find_log(s.w, "SIGTERM -> "));
}

/* The master killed: the service is down, the wrapper exits with its
 * status for Restart=, and no worker is left behind. */
static void test_real_master_killed(void)
{
	g_auto(Site) s = { 0 };
	int status;
	GPid worker;

	worker = real_master_start(&s);
	if (!worker)
		return;
	/* Our wrapper's child, alive: the pid is the master's. */
	g_assert_cmpint(kill(s.master, SIGKILL), ==, 0);
	status = wrapper_wait_exit(s.w, T_WAIT);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 128 + SIGKILL);
	g_assert_true(t_wait_gone(worker, T_WAIT));
}

/* A request left half-written keeps its worker busy through a soft stop
 * (until haproxy's client timeout, 10 s here). */
static int hold_half_request(guint16 port)
{
	static const char half[] = "GET / HTTP/1.1\r\nHost: t\r\n";
	int fd = t_hold_connection(port);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, half, sizeof(half) - 1), ==,
			sizeof(half) - 1);
	return fd;
}

/* --hard-reload: the old workers get SIGTERM once the new one serves. */
static void test_real_hard_reload(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *relay = NULL;
	GPid worker;
	int held;

	worker = real_master_start(&s);
	if (!worker)
		return;
	held = hold_half_request(s.port);
	g_assert_cmpint(site_client(&s, "--hard-reload", &out), ==, 0);
	relay = g_strdup_printf("SIGTERM -> %d.", worker);
	g_assert_nonnull(wrapper_wait_log(s.w, relay, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	g_assert_cmpint(t_http_pid(s.port), ==, worker_in(out));
	close(held);
}

/* The wrapper replaces itself on reload and keeps driving the master:
 * its notify socket comes over with it. */
static void test_real_self_upgrade(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-W", "--self-upgrade=always", NULL };
	GPid wrapper, worker;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	site_start(&s, NULL, opts);
	wrapper = s.w->pid;
	worker = t_wait_serving(s.port, T_WAIT);
	worker = site_reload(&s, worker);
	worker = site_reload(&s, worker);
	g_assert_cmpuint(wrapper_count_log(s.w, "adopted 1 generation(s)"),
			 ==, 2);
	g_assert_cmpint(s.w->pid, ==, wrapper);
	g_assert_true(t_pid_alive(s.master));
	g_assert_cmpint(t_http_pid(s.port), ==, worker);
}

/* Someone sends SIGUSR2 to the master itself: the wrapper follows, and
 * its status names the new worker. */
static void test_real_reload_behind_back(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *status = NULL;
	g_autofree gchar *current = NULL;
	GPid worker, next;

	worker = real_master_start(&s);
	if (!worker)
		return;
	/* Our wrapper's child, alive: the pid is the master's. */
	g_assert_true(t_master_settled(s.master, SIGUSR2));
	g_assert_cmpint(kill(s.master, SIGUSR2), ==, 0);
	next = t_pid_in(wrapper_wait_log(s.w, "reloaded without us", T_WAIT),
			"workers are now ");
	g_assert_cmpint(next, >, 0);
	g_assert_cmpint(next, !=, worker);
	status = site_status(&s);
	current = g_strdup_printf("generation 1 workers %d current", next);
	g_assert_nonnull(strstr(status, current));
	/* And the next reload of ours still works. */
	site_reload(&s, next);
}

/* The hand-off from master-worker mode: the wrapper becomes haproxy -Ws
 * (same pid), takes the listeners from the worker, soft-stops the old
 * master; not a request fails. */
static void test_real_handoff(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe_link = NULL;
	g_autofree gchar *exe = NULL;
	struct t_load load;
	GPid worker;

	worker = real_master_start(&s);
	if (!worker)
		return;
	t_load_start(&load, s.port);
	g_assert_true(t_load_wait_answers(&load, worker, 1));
	g_assert_cmpint(site_client(&s, "--handoff", &out), ==, 0);
	g_assert_true(t_wait_gone(s.master, T_WAIT));
	g_assert_true(t_wait_gone(worker, T_WAIT));
	exe_link = g_strdup_printf("/proc/%d/exe", s.w->pid);
	exe = g_file_read_link(exe_link, NULL);
	g_assert_cmpstr(exe, ==, HAPROXY);
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), >, 0);
	g_assert_cmpuint(t_load_finish(&load), ==, 0);
}

/* "auto" keeps the real 2.6 as one -db process a generation. */
static void test_real_auto_is_db(void)
{
	g_auto(Site) s = { 0 };
	GPid pid;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	pid = site_start(&s, NULL, NULL);
	g_assert_nonnull(wrapper_find_log(s.w, " -db"));
	g_assert_null(wrapper_find_log(s.w, " -Ws"));
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, pid);
}

/* ---- the fake haproxy: other versions ---- */

/* Every version's notify sequence gives the right verdicts: STATUS
 * from 2.7, the new worker before. */
static void test_fake_versions(void)
{
	static const char *const versions[] = {
		"1.8.30", "2.0.0", "2.4.0", "2.6.12", "2.7.1", "3.0.0",
		"3.1.0",
	};
	const char *opts[] = { "-Ws", NULL };

	for (guint i = 0; i < G_N_ELEMENTS(versions); i++) {
		g_auto(Site) s = { 0 };
		g_autofree gchar *out = NULL;
		gboolean has_status = !g_str_has_prefix(versions[i], "1.") &&
				      strcmp(versions[i], "2.7") >= 0;
		GPid worker;

		g_test_message("haproxy %s", versions[i]);
		site_init(&s, TRUE, NULL);
		site_start(&s, versions[i], opts);
		worker = t_wait_serving(s.port, T_WAIT);
		worker = site_reload(&s, worker);
		site_write_config(&s, "fake-config-error\n");
		g_assert_cmpint(site_client(&s, "--reload", &out), ==, 1);
		g_assert_nonnull(strstr(out, has_status ? "Reload failed!"
							: "no new worker"));
		g_assert_cmpint(t_http_pid(s.port), ==, worker);
		site_write_config(&s, NULL);
		site_reload(&s, worker);
		wrapper_signal(s.w, SIGTERM);
		g_assert_cmpint(wrapper_wait_exit(s.w, T_WAIT), ==, 0);
		g_assert_true(t_wait_gone(s.master, T_WAIT));
	}
}

/* nbproc > 1 on 1.8 needs master-worker mode, which "auto" picks, with
 * every worker; without nbproc the next reload goes back to -db. */
static void test_fake_nbproc_auto(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *status = NULL;
	g_autofree gchar *out = NULL;
	const char *workers;
	GPid second;

	site_init(&s, TRUE, "nbproc 2\n");
	site_start(&s, "1.8.30", NULL);
	g_assert_nonnull(wrapper_find_log(s.w, "nbproc > 1 needs "
					  "master-worker mode"));
	g_assert_nonnull(wrapper_find_log(s.w, " -Ws"));
	status = site_status(&s);
	workers = strstr(status, "generation 1 workers ");
	g_assert_nonnull(workers);
	/* Two pids on that line. */
	g_assert_cmpint(sscanf(workers, "generation 1 workers %*d %d",
			       &second), ==, 1);
	site_write_config(&s, NULL);
	g_assert_cmpint(site_client(&s, "--reload", &out), ==, 0);
	g_assert_nonnull(strstr(out, "generation 2 "));
	g_assert_nonnull(wrapper_find_log(s.w, " -db"));
	g_assert_true(t_wait_gone(s.master, T_WAIT));
	g_assert_true(t_wait_gone(second, T_WAIT));
}

/* When the mode is not what the policy alone says, a notice tells why. */
static void test_fake_mode_notices(void)
{
	/* settled: the fake's event after which it forks no more (a -Ds
	 * parent forks its workers after it is ready: ending the test
	 * earlier would leave one orphaned). */
	static const struct {
		const char *version, *config, *opt, *notice, *flag, *settled;
	} cases[] = {
		{ "1.8.30", "nbproc 2\n", "--master-worker=off",
		  "master-worker mode is off", " -db", NULL },
		{ "1.7.0", NULL, "-W", "needs haproxy >= 1.8", " -Ds",
		  " worker" },
		{ "2.6.12", "master-worker\n", NULL,
		  "the configuration asks for master-worker mode", " -Ws",
		  "master ready" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(Site) s = { 0 };
		const char *opts[] = { cases[i].opt, NULL };

		g_test_message("%s %s", cases[i].version, cases[i].notice);
		site_init(&s, TRUE, cases[i].config);
		site_start(&s, cases[i].version, opts);
		g_assert_nonnull(wrapper_find_log(s.w, cases[i].notice));
		g_assert_nonnull(wrapper_find_log(s.w, cases[i].flag));
		if (cases[i].settled) {
			g_autofree gchar *log = g_build_filename(s.dir,
								 "fake.log",
								 NULL);
			g_autofree gchar *line = t_wait_file_line(
				log, cases[i].settled, NULL, 1, T_WAIT);

			g_assert_nonnull(line);
		}
	}
}

/* A master that says READY before it handles SIGUSR2 (which would kill
 * it until then): the wrapper waits for the handler. */
static void test_fake_late_handler(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-Ws", NULL };
	GPid worker;

	g_autofree gchar *log_path = NULL;
	g_autofree gchar *log = NULL;
	const char *handles, *reload;

	site_init(&s, TRUE, "fake-master-late-handler-ms 500\n");
	site_start(&s, "2.6.12", opts);
	worker = t_wait_serving(s.port, T_WAIT);
	site_reload(&s, worker);
	g_assert_true(t_pid_alive(s.master));
	g_assert_null(wrapper_find_log(s.w, "<3>"));
	/* The reload was asked for while the handler was not there yet. */
	log_path = g_build_filename(s.dir, "fake.log", NULL);
	g_assert_true(g_file_get_contents(log_path, &log, NULL, NULL));
	handles = strstr(log, "master handles SIGUSR2");
	reload = strstr(log, "master reload");
	g_assert_nonnull(handles);
	g_assert_nonnull(reload);
	g_assert_true(handles < reload);
	g_assert_nonnull(wrapper_find_log(s.w, "reloading on request"));
}

/* Two wrappers on one runtime directory: the second gets no notify
 * socket (it would steal the first one's verdicts) and fails to start;
 * the first reloads as before. */
static void test_fake_runtime_dir_taken(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Site) other = { 0 };
	const char *opts[] = { "-Ws", NULL };
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s/fake-haproxy",
						    t_dir());
	const char *env[] = { "FAKE_HAPROXY_VERSION=2.6.12", NULL };
	const char *args[8];
	GPid worker;
	int status;

	site_init(&s, TRUE, NULL);
	site_start(&s, "2.6.12", opts);
	worker = t_wait_serving(s.port, T_WAIT);
	site_init(&other, TRUE, NULL);
	args[0] = s.rundir_opt;		/* the first one's */
	args[1] = haproxy;
	args[2] = "-Ws";
	args[3] = "-f";
	args[4] = other.cfg;
	args[5] = "--takeover=off";
	args[6] = NULL;
	other.w = wrapper_start(args, env);
	status = wrapper_wait_exit(other.w, T_WAIT);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), !=, 0);
	g_assert_nonnull(wrapper_find_log(other.w, "notify socket"));
	site_reload(&s, worker);
}

/* A replacement wrapper that does not say it takes master-worker state
 * (an older one) is not executed: the running one reloads the master. */
static void test_fake_upgrade_needs_master_support(void)
{
	static const char older[] =
		"#!/bin/sh\necho 'haproxy-systemd-wrapper 0.0.9 "
		"state-format 1'\n";
	g_auto(Site) s = { 0 };
	g_autofree gchar *copy = NULL;
	g_autofree gchar *data = NULL;
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s/fake-haproxy",
						    t_dir());
	g_autofree gchar *env_version = g_strdup("FAKE_HAPROXY_VERSION=2.6.12");
	const char *env[] = { env_version, NULL };
	const char *args[8];
	gsize len;
	GPid worker;

	site_init(&s, TRUE, NULL);
	copy = g_build_filename(s.dir, "haproxy-systemd-wrapper", NULL);
	g_assert_true(g_file_get_contents(t_wrapper_path(), &data, &len, NULL));
	g_assert_true(g_file_set_contents(copy, data, len, NULL));
	g_assert_cmpint(g_chmod(copy, 0755), ==, 0);
	args[0] = s.rundir_opt;
	args[1] = haproxy;
	args[2] = "-Ws";
	args[3] = "-f";
	args[4] = s.cfg;
	args[5] = NULL;
	s.w = wrapper_start_at(copy, args, env);
	s.master = wrapper_wait_ready(s.w, 1, T_WAIT);
	worker = t_wait_serving(s.port, T_WAIT);
	/* Replaced, not rewritten in place: the running image stays. */
	g_assert_cmpint(g_unlink(copy), ==, 0);
	g_assert_true(g_file_set_contents(copy, older, -1, NULL));
	g_assert_cmpint(g_chmod(copy, 0755), ==, 0);
	site_reload(&s, worker);
	g_assert_nonnull(wrapper_find_log(s.w, "not upgrading"));
	g_assert_null(wrapper_find_log(s.w, "re-executing"));
}

/* Old workers held by a client: --max-old-workers=0 ends them at the
 * reload, --drain-timeout after it. */
static void test_fake_bounded_draining(void)
{
	static const char *const bounds[] = { "--max-old-workers=0",
					      "--drain-timeout=1" };

	for (guint i = 0; i < G_N_ELEMENTS(bounds); i++) {
		g_auto(Site) s = { 0 };
		const char *opts[] = { "-Ws", bounds[i], NULL };
		g_autofree gchar *relay = NULL;
		GPid worker;
		int held;

		g_test_message("%s", bounds[i]);
		site_init(&s, TRUE, NULL);
		site_start(&s, "2.6.12", opts);
		worker = t_wait_serving(s.port, T_WAIT);
		held = t_hold_connection(s.port);
		g_assert_cmpint(held, >=, 0);
		site_reload(&s, worker);
		relay = g_strdup_printf("SIGTERM -> %d.", worker);
		g_assert_nonnull(wrapper_wait_log(s.w, relay, T_WAIT));
		g_assert_true(t_wait_gone(worker, T_WAIT));
		close(held);
	}
}

/* ---- a pidfile in a shared directory ---- */

/* dir/shared (mode 1777, like /tmp) holding "haproxy.pid", a symlink that
 * another user (nobody) planted, to dir/precious: its path. */
static gchar *plant_pidfile_symlink(const char *dir, struct stat *precious)
{
	g_autofree gchar *shared = g_build_filename(dir, "shared", NULL);
	g_autofree gchar *target = g_build_filename(dir, "precious", NULL);
	gchar *link = g_build_filename(shared, "haproxy.pid", NULL);
	const struct timespec old[2] = { { .tv_sec = 1000000000 },
					 { .tv_sec = 1000000000 } };

	g_assert_cmpint(g_mkdir(shared, 0755), ==, 0);
	g_assert_cmpint(chmod(shared, 01777), ==, 0);
	g_assert_true(g_file_set_contents(target, "precious\n", -1, NULL));
	g_assert_cmpint(utimensat(AT_FDCWD, target, old, 0), ==, 0);
	g_assert_cmpint(symlink(target, link), ==, 0);
	g_assert_cmpint(lchown(link, 65534, 65534), ==, 0);
	g_assert_cmpint(stat(target, precious), ==, 0);
	return link;
}

/* Every open, read or write of dir/precious from now on, queued. */
static int watch_precious(const char *dir)
{
	g_autofree gchar *target = g_build_filename(dir, "precious", NULL);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(inotify_add_watch(fd, target, IN_OPEN | IN_ACCESS |
					  IN_MODIFY | IN_ATTRIB), >=, 0);
	return fd;
}

/* inotify queues events as they happen: none so far means none. */
static void assert_never_opened(int fd)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n > 0)
		g_test_message("precious: event mask 0x%x",
			       ((struct inotify_event *)buf)->mask);
	g_assert_cmpint(n, ==, -1);
	g_assert_cmpint(errno, ==, EAGAIN);
}

static void assert_precious_untouched(const char *dir,
				      const struct stat *before)
{
	g_autofree gchar *target = g_build_filename(dir, "precious", NULL);
	g_autofree gchar *text = NULL;
	struct stat after;

	g_assert_true(g_file_get_contents(target, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "precious\n");
	g_assert_cmpint(stat(target, &after), ==, 0);
	g_assert_cmpint(after.st_mtim.tv_sec, ==, before->st_mtim.tv_sec);
	g_assert_cmpint(after.st_mtim.tv_nsec, ==, before->st_mtim.tv_nsec);
	g_assert_cmpint(after.st_size, ==, before->st_size);
}

/* The pidfile is replaced, never followed: -p names a sticky
 * world-writable directory where another user planted a symlink to a
 * file; through start, two reloads and stop, in -db and in master-worker
 * mode (where haproxy writes the pidfile itself), the file is never even
 * opened, the pidfile holds the pid to signal, and is ours to remove at
 * exit. */
static void test_real_pidfile_symlink(void)
{
	static const char *const modes[] = { NULL, "-W" };

	if (skip_without_haproxy())
		return;
	for (guint m = 0; m < G_N_ELEMENTS(modes); m++) {
		g_auto(Site) s = { 0 };
		const char *opts[] = { modes[m], NULL };
		gboolean mw = modes[m] != NULL;
		struct stat precious, st;
		GPid serving;

		int watch;

		g_test_message("mode %s", mw ? "-W" : "-db");
		site_init(&s, FALSE, NULL);
		g_free(s.pidfile);
		s.pidfile = plant_pidfile_symlink(s.dir, &precious);
		watch = watch_precious(s.dir);
		site_start(&s, NULL, opts);
		assert_never_opened(watch);
		serving = s.master;
		for (guint i = 0; i < 2; i++) {
			g_autofree gchar *line = mw ?
				g_strdup("generation 1 reloaded") :
				g_strdup_printf("generation %u ready", i + 2);

			const char *got;

			wrapper_signal(s.w, SIGUSR2);
			got = wrapper_wait_log(s.w, line, T_WAIT);
			g_assert_nonnull(got);
			if (!mw)
				serving = t_pid_in(got, "pid ");
			g_assert_cmpint(lstat(s.pidfile, &st), ==, 0);
			g_assert_true(S_ISREG(st.st_mode));
			g_assert_cmpint(read_pidfile(s.pidfile), ==, serving);
			assert_never_opened(watch);
		}
		wrapper_signal(s.w, SIGTERM);
		g_assert_cmpint(wrapper_wait_exit(s.w, T_WAIT), ==, 0);
		g_assert_cmpint(lstat(s.pidfile, &st), ==, -1);
		assert_never_opened(watch);
		close(watch);
		assert_precious_untouched(s.dir, &precious);
	}
}

/* ---- -S, the master CLI (Debian's unit passes -S /run/...sock) ---- */

/* One command on haproxy's master CLI at path; all it answered. */
static gchar *master_cli_ask(const char *path, const char *command)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	g_autofree gchar *line = g_strdup_printf("%s\n", command);
	GString *out = g_string_new(NULL);
	struct timeval tv = { .tv_sec = T_WAIT / 1000 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char buf[4096];
	ssize_t n;

	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpuint(strlen(path), <, sizeof(a.sun_path));
	strcpy(a.sun_path, path);
	g_assert_cmpint(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				   sizeof(tv)), ==, 0);
	g_assert_cmpint(connect(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
	g_assert_cmpint(write(fd, line, strlen(line)), ==, strlen(line));
	g_assert_cmpint(shutdown(fd, SHUT_WR), ==, 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(out, buf, n);
	g_assert_cmpint(n, ==, 0);
	close(fd);
	return g_string_free(out, FALSE);
}

/* "<pid> worker ..." on a line of show proc's answer. */
static gboolean show_proc_lists_worker(const char *text, GPid pid)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree gchar *want = g_strdup_printf("%d", pid);

	for (guint i = 0; lines[i]; i++) {
		g_auto(GStrv) f = g_strsplit_set(lines[i], " \t", -1);
		guint n = 0;
		const char *w[2] = { NULL, NULL };

		for (guint j = 0; f[j] && n < 2; j++)
			if (*f[j])
				w[n++] = f[j];
		if (n == 2 && g_str_equal(w[0], want) &&
		    g_str_equal(w[1], "worker"))
			return TRUE;
	}
	return FALSE;
}

/* pid ended and its parent reaped it: no /proc entry left. Bounded. */
static gboolean wait_reaped(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d", pid);
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;

	g_assert_true(t_wait_gone(pid, T_WAIT));
	while (g_file_test(path, G_FILE_TEST_EXISTS) &&
	       g_get_monotonic_time() < deadline)
		g_usleep(5 * 1000);
	return !g_file_test(path, G_FILE_TEST_EXISTS);
}

/* -S alone asks for master-worker mode: 2.6 runs as a master whose CLI
 * lists the current worker after two reloads, by signal and by request. */
static void test_real_master_cli(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *sock = NULL;
	g_autofree gchar *sock_arg = NULL;
	g_autofree gchar *proc = NULL;
	const char *opts[] = { "-S", NULL, NULL };
	GPid worker, next;

	if (skip_without_haproxy())
		return;
	site_init(&s, FALSE, NULL);
	sock = g_build_filename(t_short_dir(s.dir), "master.sock", NULL);
	sock_arg = g_strdup_printf("%s,mode,600", sock);
	opts[1] = sock_arg;
	site_start(&s, NULL, opts);
	g_assert_nonnull(wrapper_find_log(s.w, " -Ws"));
	worker = t_pid_in(wrapper_find_log(s.w, "generation 1 ready"),
			  "workers ");
	g_assert_cmpint(t_wait_serving(s.port, T_WAIT), ==, worker);
	wrapper_signal(s.w, SIGUSR2);
	next = t_pid_in(wrapper_wait_log(s.w, "generation 1 reloaded",
					 T_WAIT), "workers ");
	g_assert_cmpint(next, >, 0);
	g_assert_cmpint(next, !=, worker);
	worker = site_reload(&s, next);
	/* Draining, the old worker is still listed as one; no longer once
	 * the master reaped it (it updates its list as it reaps). */
	g_assert_true(wait_reaped(next));
	proc = master_cli_ask(sock, "show proc");
	g_test_message("show proc:\n%s", proc);
	g_assert_true(show_proc_lists_worker(proc, worker));
	g_assert_false(show_proc_lists_worker(proc, next));
	wrapper_signal(s.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.w, T_WAIT), ==, 0);
}

/* A wrapper for the fake haproxy of version at dir/haproxy, replaced
 * (not rewritten): the wrapper probes the new version at its next load. */
static gchar *fake_of_version(const char *dir, const char *version)
{
	g_autofree gchar *text = g_strdup_printf(
		"#!/bin/sh\nFAKE_HAPROXY_VERSION=%s exec %s/fake-haproxy "
		"\"$@\"\n", version, t_dir());
	g_autofree gchar *tmp = t_write_file(dir, "haproxy.tmp", text);
	gchar *path = g_build_filename(dir, "haproxy", NULL);

	g_assert_cmpint(g_chmod(tmp, 0755), ==, 0);
	g_assert_cmpint(g_rename(tmp, path), ==, 0);
	return path;
}

/* Before 1.9 there is no master CLI: -S is a usage error at start. */
static void test_fake_master_cli_too_old(void)
{
	static const char *const versions[] = { "1.5.18", "1.7.0", "1.8.30" };

	for (guint i = 0; i < G_N_ELEMENTS(versions); i++) {
		g_auto(Site) s = { 0 };
		g_autofree gchar *haproxy = NULL;
		g_autofree gchar *haproxy_opt = NULL;
		const char *args[8];
		int status;

		g_test_message("haproxy %s", versions[i]);
		site_init(&s, TRUE, NULL);
		haproxy = fake_of_version(s.dir, versions[i]);
		haproxy_opt = g_strdup_printf("--haproxy=%s", haproxy);
		args[0] = s.rundir_opt;
		args[1] = haproxy_opt;
		args[2] = "-S";
		args[3] = "/run/nowhere/master.sock";
		args[4] = "-f";
		args[5] = s.cfg;
		args[6] = NULL;
		s.w = wrapper_start(args, NULL);
		status = wrapper_wait_exit(s.w, T_WAIT);
		g_assert_true(WIFEXITED(status));
		g_assert_cmpint(WEXITSTATUS(status), ==, 64);
		g_assert_nonnull(wrapper_find_log(
			s.w, "-S asks for a master CLI, which needs haproxy "
			     ">= 1.9"));
		g_assert_null(wrapper_find_log(s.w, "executing"));
	}
}

/* -S asks for master-worker mode, which --master-worker=off refuses: a
 * usage error, before any haproxy runs. */
static void test_fake_master_cli_mode_off(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "--master-worker=off", "-S", "/run/x.sock",
			       NULL };
	const char *args[8];
	guint n = 0;
	int status;

	site_init(&s, TRUE, NULL);
	args[n++] = s.rundir_opt;
	for (guint i = 0; opts[i]; i++)
		args[n++] = opts[i];
	args[n++] = "-f";
	args[n++] = s.cfg;
	args[n] = NULL;
	s.w = wrapper_start(args, NULL);
	status = wrapper_wait_exit(s.w, T_WAIT);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, 64);
	g_assert_nonnull(wrapper_find_log(s.w, "-S ask for master-worker "
					       "mode, which --master-worker=off "
					       "refuses"));
	g_assert_null(wrapper_find_log(s.w, "executing"));
}

/* A reload into a haproxy too old for -S fails; the master serves on,
 * and a reload into a good one works again. */
static void test_fake_master_cli_reload_into_older(void)
{
	g_auto(Site) s = { 0 };
	g_autofree gchar *haproxy = NULL;
	g_autofree gchar *haproxy_opt = NULL;
	g_autofree gchar *sock = NULL;
	g_autofree gchar *out = NULL;
	const char *args[8];
	GPid worker;

	site_init(&s, TRUE, NULL);
	haproxy = fake_of_version(s.dir, "2.6.12");
	haproxy_opt = g_strdup_printf("--haproxy=%s", haproxy);
	sock = g_build_filename(t_short_dir(s.dir), "master.sock", NULL);
	args[0] = s.rundir_opt;
	args[1] = haproxy_opt;
	args[2] = "-S";
	args[3] = sock;
	args[4] = "-f";
	args[5] = s.cfg;
	args[6] = NULL;
	s.w = wrapper_start(args, NULL);
	s.master = wrapper_wait_ready(s.w, 1, T_WAIT);
	g_assert_cmpint(s.master, >, 0);
	g_assert_nonnull(wrapper_find_log(s.w, " -Ws"));
	worker = t_wait_serving(s.port, T_WAIT);
	g_free(fake_of_version(s.dir, "1.8.30"));
	g_assert_cmpint(site_client(&s, "--reload", &out), ==, 1);
	g_assert_nonnull(strstr(out, "needs haproxy >= 1.9"));
	g_assert_nonnull(wrapper_find_log(s.w, "keeps serving"));
	g_assert_cmpint(t_http_pid(s.port), ==, worker);
	g_assert_true(t_pid_alive(s.master));
	g_free(fake_of_version(s.dir, "2.6.12"));
	site_reload(&s, worker);
	wrapper_signal(s.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s.w, T_WAIT), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_end_started_on_abort();
	g_test_add_func("/mworker/real/serial-reloads", test_real_serial_reloads);
	g_test_add_func("/mworker/real/bad-config-reload",
			test_real_bad_config_reload);
	g_test_add_func("/mworker/real/stop", test_real_stop);
	g_test_add_func("/mworker/real/master-killed", test_real_master_killed);
	g_test_add_func("/mworker/real/hard-reload", test_real_hard_reload);
	g_test_add_func("/mworker/real/self-upgrade", test_real_self_upgrade);
	g_test_add_func("/mworker/real/reload-behind-back",
			test_real_reload_behind_back);
	g_test_add_func("/mworker/real/handoff", test_real_handoff);
	g_test_add_func("/mworker/real/auto-is-db", test_real_auto_is_db);
	g_test_add_func("/mworker/real/master-cli", test_real_master_cli);
	g_test_add_func("/mworker/real/pidfile-symlink",
			test_real_pidfile_symlink);
	g_test_add_func("/mworker/fake/versions", test_fake_versions);
	g_test_add_func("/mworker/fake/master-cli-too-old",
			test_fake_master_cli_too_old);
	g_test_add_func("/mworker/fake/master-cli-mode-off",
			test_fake_master_cli_mode_off);
	g_test_add_func("/mworker/fake/master-cli-reload-into-older",
			test_fake_master_cli_reload_into_older);
	g_test_add_func("/mworker/fake/nbproc-auto", test_fake_nbproc_auto);
	g_test_add_func("/mworker/fake/mode-notices", test_fake_mode_notices);
	g_test_add_func("/mworker/fake/late-handler", test_fake_late_handler);
	g_test_add_func("/mworker/fake/runtime-dir-taken",
			test_fake_runtime_dir_taken);
	g_test_add_func("/mworker/fake/upgrade-needs-master-support",
			test_fake_upgrade_needs_master_support);
	g_test_add_func("/mworker/fake/bounded-draining",
			test_fake_bounded_draining);
	return g_test_run();
}
