/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper under a real systemd (252, Debian 12): each test boots
 * systemd as PID 1 of a container (systemd-nspawn -D / --volatile=yes, in a
 * cgroup of its own, see shared/docs/real-systemd.md), installs the built
 * wrapper and the shipped units of contrib/systemd (or the .deb), drives
 * them with `nsenter -t PID1 -a systemctl ...` and checks what a user of
 * systemd sees: states, MainPID, reloads that finish when systemctl
 * returns, restarts, clean stops, no process left behind.
 *
 * The container shares the host's network namespace: haproxy listens on a
 * free port of 127.0.0.1 and the test's load client connects from here.
 * The container's /usr is the host's under a writable overlay whose upper
 * layer is a temporary directory, so that the wrapper is installed where
 * the units name it, /usr/sbin, and `dpkg -i` works.
 *
 * Every wait is on a real event (systemctl returning, a property polled
 * with a bound, a socket answering) and bounded. The container machinery
 * is t/container/container.c's. Where a container cannot run (not root, no
 * systemd-nspawn, no usable cgroup hierarchy), each test is skipped with
 * the reason.
 */
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t/container/container.h"
#include "t/lib/harness.h"

#define RELOADS		20


/* ---- tests ---- */

/* An operator's shell (no $RUNTIME_DIRECTORY) reaches the packaged
 * service with no argument at all; --status --json is JSON alone, which
 * python3's parser takes. */
static void assert_client_finds(struct container *c, GPid main_pid)
{
	g_autofree gchar *text = NULL;
	g_autofree gchar *json = NULL;
	g_autofree gchar *head = g_strdup_printf("wrapper pid %d ", main_pid);
	g_autofree gchar *pid = NULL;
	g_autofree gchar *python = g_find_program_in_path("python3");
	const char *parse[] = {
		NULL, "-c",
		"import json, sys\n"
		"print(json.loads(sys.argv[1])['wrapper_pid'])",
		NULL, NULL,
	};

	g_assert_cmpint(cexec(c, &text, "env", "-u", "RUNTIME_DIRECTORY",
			      SBIN_WRAPPER, "--status", NULL), ==, 0);
	if (!g_str_has_prefix(text, head))
		g_error("--status without arguments: %s", text);
	g_assert_cmpint(cexec(c, &json, "env", "-u", "RUNTIME_DIRECTORY",
			      SBIN_WRAPPER, "--status", "--json", NULL), ==, 0);
	/* Parsed here: a minimal tree (Debian 13's) has no python3. */
	parse[0] = python;
	parse[3] = json;
	g_assert_nonnull(python);
	g_assert_cmpint(t_run_command(parse, T_WAIT, &pid, NULL), ==, 0);
	g_assert_cmpint(atoi(pid), ==, main_pid);
}

/*
 * The recommended unit's start, reloads and stop. "Reload finished when
 * systemctl returns" taken strictly: the first request after it is served
 * by the new haproxy. The old haproxy gets its soft stop together with the
 * readiness signal and, until it has acted on it, still accepts on the
 * listening socket it shares with the new one (-x); the wrapper answers
 * --reload only once it has let go.
 */
static void test_recommended(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *out = NULL;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	/* RuntimeDirectory= is the one the wrapper derives from -p: a
	 * client without $RUNTIME_DIRECTORY finds the service. */
	g_assert_true(exists_in(f->c, "/run/" PROG "/run-haproxy/control.sock"));
	g_assert_cmpint(cexec(f->c, &out, SBIN_WRAPPER, "--status", "-p",
			      "/run/haproxy.pid", NULL), ==, 0);
	g_test_message("--status: %s", out);
	assert_client_finds(f->c, s.main_pid);
	check_reloads(f->c, &s, RELOADS);
	if (s.stale)
		g_test_message("in %u of %u reloads an old haproxy answered the "
			       "first request after `systemctl reload` returned "
			       "(new one %.1f ms later at most): %s", s.stale,
			       s.reloads, s.stale_us_max / 1000.0,
			       s.stale_log->str);
	g_assert_cmpuint(s.stale, ==, 0);
	g_assert_cmpuint(g_hash_table_size(s.seen), ==, RELOADS + 1);
	assert_prop(f->c, s.unit, "NRestarts", "0");
	/* The <N> prefixes of the wrapper's lines are journald priorities. */
	g_assert_true(journal_has(f->c, s.unit, "notice",
				  "reloading on request."));
	check_stop(f->c, &s);
	g_assert_false(exists_in(f->c, "/run/" PROG "/run-haproxy"));
	svc_clear(&s);
}

static void test_bad_config(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *text = NULL;
	g_autofree gchar *err = NULL;
	GPid before, pid = 0;
	guint gen = 0;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	before = s.haproxy;
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port,
		   "    no-such-keyword\n");
	/* The reload fails, and says so; the old haproxy keeps serving. */
	g_assert_cmpint(sctl(f->c, "reload", s.unit), !=, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, before);
	assert_prop(f->c, s.unit, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, s.main_pid);
	g_assert_true(unit_status_text(f->c, s.unit, &gen, &pid, &text));
	g_test_message("StatusText after a failed reload: %s", text);
	g_assert_cmpint(pid, ==, before);
	g_assert_nonnull(strstr(text, "last reload FAILED"));
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, before);
	g_assert_true(journal_has(f->c, s.unit, "err", "reload failed: "));
	/* Fixed, it reloads again. */
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	check_reload(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

static void test_restart(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *p = NULL;
	const char *const restarted[] = {
		"NRestarts", "1", "ActiveState", "active", "SubState", "running",
		NULL,
	};
	GPid main_pid, killed;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	main_pid = s.main_pid;
	killed = s.haproxy;
	p = g_strdup_printf("%d", killed);
	g_assert_cmpint(cexec(f->c, NULL, "kill", "-KILL", p, NULL), ==, 0);
	/* The wrapper exits 137, Restart=always brings the service back. */
	g_assert_true(wait_props(f->c, s.unit, restarted));
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	g_assert_cmpint(s.main_pid, >, 0);
	g_assert_cmpint(s.main_pid, !=, main_pid);
	s.haproxy = t_http_pid(s.port);
	g_assert_cmpint(s.haproxy, >, 0);
	g_assert_cmpint(s.haproxy, !=, killed);
	g_assert_cmpint(parent_of(f->c, s.haproxy), ==, s.main_pid);
	g_assert_true(journal_has(f->c, s.unit, "info",
				  "status=137/n/a"));
	check_reload(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/*
 * Restarts that refuse nothing: the shipped unit keeps the listening
 * socket in systemd's fd store, so that between the old haproxy's end and
 * the new one's start the kernel queues new connections instead of
 * refusing them, through `systemctl restart` and a kill of the main pid
 * followed by Restart=always. Requests haproxy was serving when it got
 * its hard stop may fail (resets, reported); none may be refused.
 */
static void test_restart_refuses_nothing(struct fixture *f,
					 gconstpointer data)
{
	struct t_load load;
	guint failures;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	check_start(f->c, &s);
	t_load_start_paced(&load, s.port, 1000);
	g_assert_true(t_load_wait_answers(&load, s.haproxy, 1));
	for (guint i = 0; i < 5; i++) {
		GPid old = s.haproxy;

		g_assert_cmpint(sctl(f->c, "restart", s.unit), ==, 0);
		s.haproxy = t_http_pid(s.port);
		g_assert_cmpint(s.haproxy, >, 0);
		g_assert_cmpint(s.haproxy, !=, old);
		g_assert_true(t_load_wait_answers(&load, s.haproxy, 1));
	}
	for (guint i = 1; i <= 2; i++) {
		g_autofree gchar *main_pid = g_strdup_printf(
			"%d", prop_int(f->c, s.unit, "MainPID"));
		g_autofree gchar *n = g_strdup_printf("%u", i);
		const char *const restarted[] = {
			"NRestarts", n, "ActiveState", "active",
			"SubState", "running", NULL,
		};
		GPid old = s.haproxy;

		g_assert_cmpint(cexec(f->c, NULL, "kill", "-KILL", main_pid,
				      NULL), ==, 0);
		g_assert_true(wait_props(f->c, s.unit, restarted));
		s.haproxy = t_http_pid(s.port);
		g_assert_cmpint(s.haproxy, >, 0);
		g_assert_cmpint(s.haproxy, !=, old);
		g_assert_true(t_load_wait_answers(&load, s.haproxy, 1));
	}
	failures = t_load_finish(&load);
	g_test_message("5 restarts and 2 kills of the main pid: %u requests, "
		       "%u failed, %u refused", load.requests, failures,
		       load.refused);
	g_assert_cmpuint(load.refused, ==, 0);
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* The pid in the answer to what was sent on fd (bounded: SO_RCVTIMEO). */
static GPid answer_on(int fd, const char *rest)
{
	g_autoptr(GString) resp = g_string_new(NULL);
	char buf[512];
	ssize_t n;

	g_assert_cmpint(write(fd, rest, strlen(rest)), ==, strlen(rest));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		g_string_append_len(resp, buf, n);
	close(fd);
	return t_pid_in(resp->str, "pid=");
}

/*
 * A graceful restart (RestartKillSignal=SIGUSR1 in a drop-in): the old
 * haproxy finishes the request it was reading, new connections wait in
 * the kept socket's backlog for the next generation: nothing refused,
 * nothing reset.
 */
static void test_graceful_restart(struct fixture *f, gconstpointer data)
{
	struct t_load load;
	struct timeval tv = { .tv_sec = 10 };
	guint failures, before;
	GPid old;
	int slow;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, "/etc/systemd/system/haproxy.service.d/graceful.conf",
		 "[Service]\nRestartKillSignal=SIGUSR1\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &s);
	old = s.haproxy;
	t_load_start_paced(&load, s.port, 1000);
	g_assert_true(t_load_wait_answers(&load, old, 1));
	/* A request half sent: the old haproxy is reading it. Accepted
	 * before any connection the load makes after it (the accept queue is
	 * first in, first out). */
	slow = t_hold_connection(s.port);
	g_assert_cmpint(slow, >=, 0);
	setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	g_assert_cmpint(write(slow, "GET / HTTP/1.0\r\n", 16), ==, 16);
	/* The request in flight as it connected may have come first; the
	 * one after it came after. */
	before = t_load_answers(&load, old);
	g_assert_true(t_load_wait_answers(&load, old, before + 2));
	g_assert_cmpint(cexec(f->c, NULL, "systemctl", "--no-block", "restart",
			      s.unit, NULL), ==, 0);
	g_assert_true(journal_has(f->c, s.unit, "info", "stopping gracefully"));
	/* The rest of the request: the old haproxy answers it. */
	g_assert_cmpint(answer_on(slow, "\r\n"), ==, old);
	s.haproxy = wait_serving(s.port, old);
	g_assert_cmpint(s.haproxy, >, 0);
	g_assert_true(t_load_wait_answers(&load, s.haproxy, 1));
	failures = t_load_finish(&load);
	g_test_message("graceful restart: %u requests, %u failed, %u refused",
		       load.requests, failures, load.refused);
	g_assert_cmpuint(load.refused, ==, 0);
	g_assert_cmpuint(failures, ==, 0);
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* ---- the restart measurement (make bench-restarts) ---- */

#define MEASURE_RESTARTS	20
#define MEASURE_KILLS		10
#define MEASURE_CLIENTS		"64"

/* bench/loadclient, 64 connections at a time, a new one a request, from
 * the host (the container shares its network), until stop exists. */
struct loadrun {
	GPid pid;
	gchar *stop;
	gchar *summary;
};

static void loadrun_start(struct loadrun *r, const char *dir, guint16 port,
			  const char *name)
{
	g_autofree gchar *p = g_strdup_printf("%u", port);
	const char *client = g_getenv("HSW_LOADCLIENT");
	g_autoptr(GError) error = NULL;

	r->stop = g_strdup_printf("%s/%s.stop", dir, name);
	r->summary = g_strdup_printf("%s/%s.summary", dir, name);
	{
		const char *argv[] = { client, "-p", p, "-c", MEASURE_CLIENTS,
				       "-d", "900", "-s", r->stop, "-o",
				       r->summary, NULL };

		g_spawn_async(NULL, (char **)argv, NULL,
			      G_SPAWN_DO_NOT_REAP_CHILD |
			      G_SPAWN_STDOUT_TO_DEV_NULL,
			      NULL, NULL, &r->pid, &error);
	}
	g_assert_no_error(error);
	t_remember(r->pid, "loadclient");
}

/* Its summary's value for key ("refused", "reset", "ok"...). */
static guint64 summary_value(const char *text, const char *key)
{
	g_autofree gchar *needle = g_strdup_printf("\n%s=", key);
	g_autofree gchar *padded = g_strconcat("\n", text, NULL);
	const char *at = strstr(padded, needle);

	return at ? g_ascii_strtoull(at + strlen(needle), NULL, 10) : 0;
}

static gchar *loadrun_finish(struct loadrun *r)
{
	g_autofree gchar *text = NULL;

	g_assert_true(g_file_set_contents(r->stop, "", 0, NULL));
	g_assert_cmpint(t_wait_child(r->pid, 60000), ==, 0);
	g_assert_true(g_file_get_contents(r->summary, &text, NULL, NULL));
	g_free(r->stop);
	g_free(r->summary);
	return g_steal_pointer(&text);
}

static void report(const char *unit, const char *what, const char *text)
{
	g_test_message("measured: %-34s %-28s ok %" G_GUINT64_FORMAT
		       ", refused %" G_GUINT64_FORMAT ", reset %"
		       G_GUINT64_FORMAT ", other failures %" G_GUINT64_FORMAT,
		       unit, what, summary_value(text, "ok"),
		       summary_value(text, "refused"),
		       summary_value(text, "reset"),
		       summary_value(text, "short") +
			       summary_value(text, "timeout") +
			       summary_value(text, "non200") +
			       summary_value(text, "other"));
}

/* Restarts, kills of the main pid, a haproxy binary replaced then a
 * restart, each under its own load; the refused counts. */
static guint measure_unit(struct fixture *f, const char *unit, guint16 port,
			  const char *label)
{
	g_autofree gchar *dir = t_tmpdir();
	struct loadrun r;
	guint refused = 0;
	GPid serving = wait_serving(port, 0);

	g_assert_cmpint(serving, >, 0);
	loadrun_start(&r, dir, port, "restarts");
	for (guint i = 0; i < MEASURE_RESTARTS; i++) {
		g_assert_cmpint(sctl(f->c, "restart", unit), ==, 0);
		serving = wait_serving(port, serving);
		g_assert_cmpint(serving, >, 0);
	}
	{
		g_autofree gchar *text = loadrun_finish(&r);

		report(label, "20 x systemctl restart", text);
		refused += summary_value(text, "refused");
	}
	loadrun_start(&r, dir, port, "kills");
	for (guint i = 1; i <= MEASURE_KILLS; i++) {
		g_autofree gchar *main_pid = g_strdup_printf(
			"%d", prop_int(f->c, unit, "MainPID"));
		g_autofree gchar *n = g_strdup_printf(
			"%d", prop_int(f->c, unit, "NRestarts") + 1);
		const char *const restarted[] = {
			"NRestarts", n, "ActiveState", "active",
			"SubState", "running", NULL,
		};

		g_assert_cmpint(cexec(f->c, NULL, "kill", "-KILL", main_pid,
				      NULL), ==, 0);
		g_assert_true(wait_props(f->c, unit, restarted));
		serving = wait_serving(port, serving);
		g_assert_cmpint(serving, >, 0);
	}
	{
		g_autofree gchar *text = loadrun_finish(&r);

		report(label, "10 x kill -9 MainPID", text);
		refused += summary_value(text, "refused");
	}
	/* What a package upgrade does: the binary replaced, a restart. */
	loadrun_start(&r, dir, port, "upgrade");
	g_assert_cmpint(cexec(f->c, NULL, "sh", "-c",
			      "cp /usr/sbin/haproxy /usr/sbin/haproxy.dpkg-new"
			      " && mv -f /usr/sbin/haproxy.dpkg-new "
			      "/usr/sbin/haproxy", NULL), ==, 0);
	g_assert_cmpint(sctl(f->c, "restart", unit), ==, 0);
	serving = wait_serving(port, serving);
	g_assert_cmpint(serving, >, 0);
	{
		g_autofree gchar *text = loadrun_finish(&r);

		report(label, "haproxy replaced, restart", text);
		refused += summary_value(text, "refused");
	}
	t_rmtree(dir);
	return refused;
}

/*
 * A measurement for make bench-restarts, not a check (HSW_LOADCLIENT
 * names bench/loadclient): the shipped unit beside Debian's own
 * haproxy.service (haproxy -Ws, as upstream's), the same restarts and
 * kills under the same load, one after the other in one container.
 */
static void test_measure_restarts(struct fixture *f, gconstpointer data)
{
	guint16 port;
	guint refused;
	struct svc s;

	if (!fx_ready(f))
		return;
	/* Debian's unit, as the package ships it (its /dev/log bind needs
	 * the chroot's dev/). */
	port = t_free_port();
	put_config(f->c, "/etc/haproxy/haproxy.cfg", port, NULL);
	put_text(f->c, "/var/lib/haproxy/dev/.keep", "");
	put_text(f->c, UNIT_DIR "/haproxy.service.d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	g_assert_cmpint(sctl(f->c, "start", "haproxy.service"), ==, 0);
	measure_unit(f, "haproxy.service", port,
		     "Debian's unit (haproxy -Ws)");
	g_assert_cmpint(sctl(f->c, "stop", "haproxy.service"), ==, 0);

	recommended(f->c, &s);
	check_start(f->c, &s);
	refused = measure_unit(f, s.unit, s.port,
			       "the wrapper's unit (fd store)");
	g_assert_cmpuint(refused, ==, 0);
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* WatchdogSec=: the wrapper pings while haproxy serves, through reloads;
 * a frozen wrapper is killed and the service restarted. */
static void test_watchdog(struct fixture *f, gconstpointer data)
{
	const char *const restarted[] = {
		"NRestarts", "1", "ActiveState", "active", "SubState", "running",
		NULL,
	};
	g_autofree gchar *p = NULL;
	GPid frozen;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, UNIT_DIR "/haproxy.service.d/watchdog.conf",
		 "[Service]\nWatchdogSec=2s\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &s);
	/* Three pings seen by systemd, a reload between each. */
	for (guint i = 0; i < 3; i++) {
		g_autofree gchar *t0 = prop(f->c, s.unit,
					    "WatchdogTimestampMonotonic");
		gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;

		for (;;) {
			g_autofree gchar *t = prop(f->c, s.unit,
						   "WatchdogTimestampMonotonic");

			if (!g_str_equal(t, t0))
				break;
			g_assert_cmpint(g_get_monotonic_time(), <, deadline);
			g_usleep(100 * 1000);
		}
		check_reload(f->c, &s);
	}
	assert_prop(f->c, s.unit, "NRestarts", "0");
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, s.main_pid);
	/* Frozen: no more pings; systemd aborts it and restarts. */
	frozen = s.main_pid;
	p = g_strdup_printf("%d", frozen);
	g_assert_cmpint(cexec(f->c, NULL, "kill", "-STOP", p, NULL), ==, 0);
	g_assert_true(wait_props(f->c, s.unit, restarted));
	g_assert_true(journal_has(f->c, s.unit, "info", "Watchdog timeout"));
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	g_assert_cmpint(s.main_pid, !=, frozen);
	s.haproxy = wait_serving(s.port, 0);
	g_assert_cmpint(parent_of(f->c, s.haproxy), ==, s.main_pid);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* haproxy not found (127): RestartPreventExitStatus= keeps it down.
 * EXTRAOPTS comes from /etc/default/haproxy. */
static void test_restart_prevented(struct fixture *f, gconstpointer data)
{
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, "/etc/default/haproxy",
		 "EXTRAOPTS=\"--haproxy=/nonexistent/haproxy\"\n");
	g_assert_cmpint(sctl(f->c, "start", s.unit), !=, 0);
	assert_prop(f->c, s.unit, "ActiveState", "failed");
	assert_prop(f->c, s.unit, "Result", "exit-code");
	assert_prop(f->c, s.unit, "ExecMainStatus", "127");
	assert_prop(f->c, s.unit, "NRestarts", "0");
	g_assert_true(journal_has(f->c, s.unit, "err", "/nonexistent/haproxy"));
	/* /etc/sysconfig/haproxy, read after it, wins. */
	put_text(f->c, "/etc/sysconfig/haproxy", "EXTRAOPTS=\n");
	g_assert_cmpint(sctl(f->c, "reset-failed", s.unit), ==, 0);
	check_start(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/*
 * The wrapper in master-worker mode (-W from EXTRAOPTS) under the
 * recommended unit: the wrapper stays MainPID, one master below it
 * reloads in place, `systemctl reload` waits and fails like with -db, and
 * the master's own notifications never reach systemd.
 */
static void test_master_worker(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *text = NULL;
	GPid main_pid, master, worker, status_pid = 0;
	guint gen = 0;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	put_text(f->c, "/etc/default/haproxy", "EXTRAOPTS=\"-W\"\n");
	g_assert_cmpint(sctl(f->c, "start", s.unit), ==, 0);
	main_pid = prop_int(f->c, s.unit, "MainPID");
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	worker = t_http_pid(s.port);
	g_assert_cmpint(worker, >, 0);
	master = parent_of(f->c, worker);
	g_assert_cmpint(parent_of(f->c, master), ==, main_pid);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, master);
	for (guint i = 0; i < 5; i++) {
		GPid now;

		g_assert_cmpint(sctl(f->c, "reload", s.unit), ==, 0);
		now = t_http_pid(s.port);
		g_assert_cmpint(now, >, 0);
		g_assert_cmpint(now, !=, worker);
		g_assert_cmpint(parent_of(f->c, now), ==, master);
		worker = now;
	}
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, main_pid);
	g_assert_true(unit_status_text(f->c, s.unit, &gen, &status_pid, &text));
	g_test_message("StatusText: %s", text);
	g_assert_cmpint(status_pid, ==, master);
	g_assert_nonnull(strstr(text, "last reload ok"));
	/* A configuration the master refuses: the reload fails, the worker
	 * serves on. */
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port,
		   "    no-such-keyword\n");
	g_assert_cmpint(sctl(f->c, "reload", s.unit), !=, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, worker);
	assert_prop(f->c, s.unit, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, main_pid);
	g_assert_true(journal_has(f->c, s.unit, "err", "reload failed: "));
	g_assert_cmpint(sctl(f->c, "stop", s.unit), ==, 0);
	assert_prop(f->c, s.unit, "ActiveState", "inactive");
	g_assert_null(t_http_get(s.port, 200));
	svc_clear(&s);
}

/*
 * The recommended unit's sandbox against a configuration shaped like
 * Debian's: a chroot, a switch to an unprivileged user, a stats socket in
 * a directory root does not own (Debian's /run/haproxy is haproxy:haproxy
 * 2775), one chowned to that user and a regex (compiled by PCRE2's JIT).
 * Reloads under load signal a haproxy that switched user (CAP_KILL: the
 * old one would keep answering), the stats sockets need CAP_DAC_OVERRIDE,
 * CAP_CHOWN and CAP_FOWNER, and MemoryDenyWriteExecute= would refuse the
 * regex. (CAP_SYS_RESOURCE cannot be tried: the test machines' own
 * bounding set lacks it.)
 */
#define NOBODY 65534
#define SANDBOX_CONFIG \
	"backend be_regex\n" \
	"    acl numbered path_reg ^/item/[0-9]+$\n" \
	"    http-request deny if numbered\n" \
	"global\n" \
	"    chroot /var/lib/haproxy\n" \
	"    uid 65534\n" \
	"    gid 65534\n" \
	"    stats socket /run/haproxy/admin.sock mode 660 level admin\n" \
	"    stats socket /run/haproxy/user.sock mode 600 uid 65534 " \
	"gid 65534 level user\n"

static void test_sandbox(struct fixture *f, gconstpointer data)
{
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	mkdir_in(f->c, "/var/lib/haproxy", 0755, 0, 0);
	mkdir_in(f->c, "/run/haproxy", 02775, NOBODY, NOBODY);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, SANDBOX_CONFIG);
	check_start(f->c, &s);
	g_assert_cmpint(uid_of(f->c, s.haproxy), ==, NOBODY);
	g_assert_cmpint(owner_in(f->c, "/run/haproxy/admin.sock"), ==, 0);
	g_assert_cmpint(owner_in(f->c, "/run/haproxy/user.sock"), ==, NOBODY);
	check_reloads(f->c, &s, RELOADS);
	/* The container refuses pidfd_getfd() (nspawn's seccomp filter):
	 * the wait for the old haproxy's release must not be skipped. */
	g_assert_cmpuint(s.stale, ==, 0);
	g_assert_cmpint(uid_of(f->c, s.haproxy), ==, NOBODY);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/*
 * A haproxy started outside the unit (an init script's -D run from a
 * shell: a scope, not a service), with all of root's capabilities, taken
 * over by the recommended unit's wrapper, whose bounding set is smaller:
 * reading that haproxy's /proc/PID/exe and fd/ takes CAP_SYS_PTRACE. The
 * unit has a mount namespace of its own (PrivateTmp=): the files are
 * compared through the haproxy's root.
 */
static void test_takeover(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *exe = NULL;
	g_autofree gchar *line = NULL;
	GPid foreign;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	g_assert_cmpint(cexec(f->c, NULL, "systemd-run", "--scope",
			      "--unit=foreign", HAPROXY, "-D", "-p",
			      "/run/haproxy.pid", "-f",
			      "/etc/haproxy/haproxy.cfg", NULL), ==, 0);
	foreign = wait_serving(s.port, 0);
	g_assert_cmpint(foreign, >, 0);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, foreign);

	s.seen = g_hash_table_new(NULL, NULL);
	g_assert_cmpint(sctl(f->c, "start", s.unit), ==, 0);
	line = g_strdup_printf("taking over standalone pid %d, " HAPROXY,
			       foreign);
	g_assert_true(journal_has(f->c, s.unit, "notice", line));
	/* Soft-stopped by the new haproxy. */
	g_assert_true(wait_gone_in(f->c, foreign));
	s.haproxy = wait_serving(s.port, foreign);
	g_assert_cmpint(s.haproxy, >, 0);
	s.main_pid = prop_int(f->c, s.unit, "MainPID");
	exe = exe_of(f->c, s.main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	g_assert_cmpint(parent_of(f->c, s.haproxy), ==, s.main_pid);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, s.haproxy);
	s.cgroup = prop(f->c, s.unit, "ControlGroup");
	g_hash_table_add(s.seen, GINT_TO_POINTER(s.haproxy));
	g_assert_true(unit_status_text(f->c, s.unit, &s.generation, &(GPid){ 0 },
				  NULL));
	check_reload(f->c, &s);
	check_stop(f->c, &s);
	svc_clear(&s);
}

/*
 * The same haproxy, the same files and pidfile, but started as another
 * systemd service: that unit's, left alone. The recommended unit serves
 * beside it (SO_REUSEPORT), and its stop leaves it serving.
 */
static void test_other_unit_left_alone(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *refused = NULL, *pid_text = NULL;
	GPid foreign, ours;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	g_assert_cmpint(cexec(f->c, NULL, "systemd-run", "--unit=foreign",
			      "-p", "Type=forking", "-p",
			      "PIDFile=/run/haproxy.pid", HAPROXY, "-D", "-p",
			      "/run/haproxy.pid", "-f",
			      "/etc/haproxy/haproxy.cfg", NULL), ==, 0);
	foreign = wait_serving(s.port, 0);
	g_assert_cmpint(foreign, >, 0);
	pid_text = g_strdup_printf("%d", foreign);

	g_assert_cmpint(sctl(f->c, "start", s.unit), ==, 0);
	refused = g_strdup_printf("not taking over pid %d: it belongs to "
				  "another systemd service (foreign.service)",
				  foreign);
	/* Told as the search ends. */
	g_assert_true(journal_has(f->c, s.unit, "notice", refused));
	ours = wait_serving(s.port, foreign);
	g_assert_cmpint(ours, >, 0);
	g_assert_cmpint(cexec(f->c, NULL, "kill", "-0", pid_text, NULL), ==,
			0);

	g_assert_cmpint(sctl(f->c, "stop", s.unit), ==, 0);
	assert_prop(f->c, s.unit, "Result", "success");
	/* Not taken over, in its whole life. */
	g_assert_true(journal_lacks(f->c, s.unit, "notice",
				    "taking over standalone"));
	g_assert_cmpint(cexec(f->c, NULL, "kill", "-0", pid_text, NULL), ==,
			0);
	g_assert_cmpint(wait_serving(s.port, 0), ==, foreign);
	assert_prop(f->c, "foreign.service", "ActiveState", "active");
	g_assert_cmpint(sctl(f->c, "stop", "foreign.service"), ==, 0);
	g_assert_true(wait_gone_in(f->c, foreign));
	svc_clear(&s);
}

/* The shipped template's instance "alpha" or "beta": its unit, its
 * pidfile, a port of its own. */
static struct svc template_svc(gboolean alpha)
{
	return (struct svc){
		.unit = alpha ? "haproxy@alpha.service" : "haproxy@beta.service",
		.pidfile = alpha ? "/run/haproxy-alpha.pid"
				 : "/run/haproxy-beta.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
}

/*
 * Two instances of the shipped template sharing one file
 * (/etc/haproxy/common.cfg, through EXTRAOPTS), each its own: started and
 * stopped in both orders, neither disturbs the other.
 */
static void check_template_shared(struct fixture *f, gboolean alpha_first,
				  gboolean stop_first)
{
	struct svc a = template_svc(TRUE);
	struct svc b = template_svc(FALSE);
	struct svc *one = alpha_first ? &a : &b, *two = alpha_first ? &b : &a;
	struct svc *gone = stop_first ? one : two;
	struct svc *stays = stop_first ? two : one;
	static const char extra[] = "EXTRAOPTS=\"-f /etc/haproxy/common.cfg\"\n";

	if (!fx_ready(f))
		return;
	install_wrapper(f->c);
	install_unit(f->c, "haproxy@.service", "haproxy@.service");
	put_config(f->c, "/etc/haproxy/alpha.cfg", a.port, NULL);
	put_config(f->c, "/etc/haproxy/beta.cfg", b.port, NULL);
	put_text(f->c, "/etc/haproxy/common.cfg", "global\n    maxconn 4000\n");
	put_text(f->c, "/etc/default/haproxy-alpha", extra);
	put_text(f->c, "/etc/default/haproxy-beta", extra);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, one);
	check_start(f->c, two);
	g_assert_cmpint(t_http_pid(one->port), ==, one->haproxy);
	g_assert_cmpint(prop_int(f->c, one->unit, "MainPID"), ==,
			one->main_pid);

	check_stop(f->c, gone);
	g_assert_cmpint(t_http_pid(stays->port), ==, stays->haproxy);
	assert_prop(f->c, stays->unit, "ActiveState", "active");
	check_stop(f->c, stays);
	/* In their whole lives: a search that finds nothing is not told
	 * (--debug aside), nothing taken over, nothing adopted. */
	g_assert_true(journal_lacks(f->c, two->unit, "info",
				    "looked for foreign haproxy instances"));
	g_assert_true(journal_lacks(f->c, two->unit, "notice",
				    "taking over standalone"));
	g_assert_true(journal_lacks(f->c, stays->unit, "notice",
				    "adopting"));
	svc_clear(&a);
	svc_clear(&b);
}

static void test_template_shared_alpha_first(struct fixture *f,
					     gconstpointer data)
{
	check_template_shared(f, TRUE, TRUE);
}

static void test_template_shared_beta_first(struct fixture *f,
					    gconstpointer data)
{
	check_template_shared(f, FALSE, FALSE);
}

static void test_historic(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = "haproxy-historic.service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = FALSE,
	};
	g_autofree gchar *type = NULL;

	if (!fx_ready(f))
		return;
	install_wrapper(f->c);
	install_unit(f->c, "haproxy-historic.service", s.unit);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	type = prop(f->c, s.unit, "Type");
	g_assert_cmpstr(type, ==, "simple");
	check_start(f->c, &s);
	check_reloads(f->c, &s, RELOADS);
	g_assert_cmpuint(g_hash_table_size(s.seen), ==, RELOADS + 1);
	g_assert_cmpint(pidfile_pid(f->c, s.pidfile), ==, s.haproxy);
	assert_prop(f->c, s.unit, "NRestarts", "0");
	check_stop(f->c, &s);
	svc_clear(&s);
}

static void test_template(struct fixture *f, gconstpointer data)
{
	struct svc a = template_svc(TRUE);
	struct svc b = template_svc(FALSE);
	g_autofree gchar *out = NULL;
	GPid b_before;

	if (!fx_ready(f))
		return;
	g_assert_cmpint(a.port, !=, b.port);
	install_wrapper(f->c);
	install_unit(f->c, "haproxy@.service", "haproxy@.service");
	put_config(f->c, "/etc/haproxy/alpha.cfg", a.port, NULL);
	put_config(f->c, "/etc/haproxy/beta.cfg", b.port, NULL);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &a);
	check_start(f->c, &b);
	g_assert_cmpint(a.main_pid, !=, b.main_pid);
	g_assert_cmpstr(a.cgroup, !=, b.cgroup);
	/* Each its own runtime directory, reachable by its pidfile. */
	g_assert_cmpint(cexec(f->c, &out, SBIN_WRAPPER, "--status", "-p",
			      "/run/haproxy-beta.pid", NULL), ==, 0);
	g_assert_nonnull(strstr(out, " current"));
	/* Reloading one leaves the other alone. */
	b_before = b.haproxy;
	check_reloads(f->c, &a, 5);
	g_assert_cmpuint(a.stale, ==, 0);
	g_assert_cmpint(t_http_pid(b.port), ==, b_before);
	g_assert_cmpint(prop_int(f->c, b.unit, "MainPID"), ==, b.main_pid);
	check_reloads(f->c, &b, 5);
	g_assert_cmpuint(b.stale, ==, 0);
	check_stop(f->c, &a);
	g_assert_cmpint(t_http_pid(b.port), ==, b.haproxy);
	assert_prop(f->c, b.unit, "ActiveState", "active");
	check_stop(f->c, &b);
	svc_clear(&a);
	svc_clear(&b);
}

/* systemd-analyze verify on every shipped unit. systemd 252 knows neither
 * Type=notify-reload nor ReloadSignal=: those two lines, and no other, are
 * allowed for that unit (it cannot run here). */
static void test_units_verify(struct fixture *f, gconstpointer data)
{
	static const char *const units[][2] = {
		{ "haproxy.service", "haproxy.service" },
		{ "haproxy@.service", "haproxy@lint.service" },
		{ "haproxy-historic.service", "haproxy-historic.service" },
		{ "haproxy-notify-reload.service",
		  "haproxy-notify-reload.service" },
	};

	if (!fx_ready(f))
		return;
	install_wrapper(f->c);
	for (guint i = 0; i < G_N_ELEMENTS(units); i++)
		install_unit(f->c, units[i][0], units[i][0]);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
		const char *const args[] = { "systemd-analyze", "verify",
					     "--man=no", units[i][1], NULL };
		gboolean nr = g_str_equal(units[i][0],
					  "haproxy-notify-reload.service");
		g_autofree gchar *out = NULL;
		g_autofree gchar *err = NULL;
		g_auto(GStrv) lines = NULL;
		guint n = 0;

		g_assert_cmpint(cexecv(f->c, 60, &out, &err, args), ==, 0);
		lines = g_strsplit(g_strstrip(err), "\n", -1);
		for (char **l = lines; *l && **l; l++, n++) {
			g_test_message("%s: %s", units[i][1], *l);
			g_assert_true(nr);
			g_assert_true(strstr(*l, "Failed to parse service "
					     "type, ignoring: notify-reload") ||
				      strstr(*l, "Unknown key 'ReloadSignal'"));
		}
		g_assert_cmpuint(n, ==, nr ? 2 : 0);
	}
	/* 252 takes it as Type=simple. */
	assert_prop(f->c, "haproxy-notify-reload.service", "Type", "simple");
}


/* The version cache of the packaged unit (CacheDirectory=). */
#define VERSION_CACHE "/var/cache/" PROG "/haproxy-version"

/* The .deb, installed by dpkg in the container, through its own unit. */
static void test_deb(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *enabled = NULL;
	struct svc s = {
		.unit = PROG ".service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	const char *const gone[] = {
		SBIN_WRAPPER, "/lib/systemd/system/" PROG ".service",
		"/usr/share/man/man8/" PROG ".8.gz",
		"/usr/share/" PROG "/haproxy.service.d/wrapper.conf",
		"/lib/systemd/system-preset/80-" PROG ".preset",
		NULL,
	};

	if (!fx_deb_copied(f))
		return;
	g_assert_cmpint(cexec(f->c, &out, "dpkg", "-i", "/tmp/hsw.deb", NULL),
			==, 0);
	g_test_message("dpkg -i: %s", out);
	for (const char *const *p = gone; *p; p++)
		g_assert_true(exists_in(f->c, *p));
	/* Installed, neither enabled nor started: haproxy.service clashes. */
	cexec(f->c, &enabled, "systemctl", "is-enabled", s.unit, NULL);
	g_assert_cmpstr(g_strstrip(enabled), ==, "disabled");
	assert_prop(f->c, s.unit, "ActiveState", "inactive");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	/* The test's start limit only; the unit is the package's. */
	put_text(f->c, UNIT_DIR "/" PROG ".service.d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	check_start(f->c, &s);
	assert_client_finds(f->c, s.main_pid);
	check_reloads(f->c, &s, 5);
	g_assert_cmpuint(s.stale, ==, 0);
	check_stop(f->c, &s);
	svc_clear(&s);
	/* haproxy's version outlives RuntimeDirectory=, in CacheDirectory=. */
	g_assert_true(exists_in(f->c, VERSION_CACHE));
	g_assert_cmpint(cexec(f->c, NULL, "dpkg", "--purge", PROG, NULL), ==,
			0);
	for (const char *const *p = gone; *p; p++)
		g_assert_false(exists_in(f->c, *p));
	/* The purge leaves nothing of ours behind, the cache included. */
	g_assert_false(exists_in(f->c, "/var/cache/" PROG));
}

static const struct boot plain = { .tag = "u" };
static const struct boot with_dpkg = { .tag = "deb", .dpkg = TRUE };
/* Debian 13: systemd 257, haproxy 3.0, its own dpkg database. */
static const struct boot trixie = { .tag = "d13", .tree = trixie_tree };

#define ADD(path, fn, boot) \
	g_test_add("/systemd/" path, struct fixture, &boot, fx_setup, fn, \
		   fx_teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();

	ADD("units-verify", test_units_verify, plain);
	ADD("recommended/start-reload-stop", test_recommended, plain);
	ADD("recommended/bad-config-reload", test_bad_config, plain);
	ADD("recommended/restart-after-sigkill", test_restart, plain);
	ADD("recommended/restart-refuses-nothing",
	    test_restart_refuses_nothing, plain);
	ADD("recommended/graceful-restart", test_graceful_restart, plain);
	/* A measurement boots a container of its own: only when asked. */
	if (g_getenv("HSW_LOADCLIENT")) {
		ADD("measure/restarts", test_measure_restarts, plain);
		ADD("debian13/measure/restarts", test_measure_restarts,
		    trixie);
	}
	ADD("recommended/restart-prevented", test_restart_prevented, plain);
	ADD("recommended/watchdog", test_watchdog, plain);
	ADD("recommended/master-worker", test_master_worker, plain);
	ADD("recommended/sandbox", test_sandbox, plain);
	ADD("recommended/takeover", test_takeover, plain);
	ADD("recommended/other-unit-left-alone", test_other_unit_left_alone,
	    plain);
	ADD("template/shared-file-alpha-first",
	    test_template_shared_alpha_first, plain);
	ADD("template/shared-file-beta-first",
	    test_template_shared_beta_first, plain);
	ADD("historic/start-reload-stop", test_historic, plain);
	ADD("template/two-instances", test_template, plain);
	ADD("deb/start-reload-stop", test_deb, with_dpkg);
	ADD("debian13/recommended/start-reload-stop", test_recommended,
	    trixie);
	ADD("debian13/recommended/bad-config-reload", test_bad_config, trixie);
	ADD("debian13/recommended/restart-refuses-nothing",
	    test_restart_refuses_nothing, trixie);
	ADD("debian13/historic/start-reload-stop", test_historic, trixie);
	ADD("debian13/template/two-instances", test_template, trixie);
	ADD("debian13/deb/start-reload-stop", test_deb, trixie);
	return g_test_run();
}
