/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What today's distributions run, under a real systemd
 * (t/container/container.c):
 *
 * - Debian's own haproxy.service, as the haproxy package ships it, run
 *   through the wrapper by contrib's drop-in (haproxy.service.d/
 *   wrapper.conf): on the host's Debian 12 (systemd 252, haproxy 2.6) and
 *   in a Debian 13 tree (systemd 257, haproxy 3.0);
 * - the wrapper's journal events (MESSAGE_ID= and their fields), read back
 *   with journalctl -o json;
 * - the metrics service writing the OpenMetrics file for node_exporter;
 * - Type=notify-reload (contrib/systemd/haproxy-notify-reload.service),
 *   which needs systemd >= 253: Debian 13 only.
 *
 * The Debian 13 tree is built once a week by t/container/trixie-tree
 * (debootstrap, about 225 MB, outside the repository) and booted with
 * --volatile=overlay, every write going to a tmpfs. Where it cannot be
 * built (no network to the mirror, no debootstrap, not root) its tests
 * are skipped with the reason.
 * The wrapper installed there is the one built on the host (glibc 2.36
 * runs on trixie's newer one; the tree includes libglib and libsystemd).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "t/container/container.h"
#include "t/lib/harness.h"
#include "t/lib/mastercli.h"

#define DEBIAN_UNIT	"haproxy.service"
#define MASTER_SOCK	"/run/haproxy-master.sock"
#define BROKEN		"    no-such-keyword here\n"
/* What haproxy says of it. */
#define ALERT_WORDS	"unknown keyword 'no-such-keyword'"

static const struct boot bookworm = { .tag = "d12" };
static const struct boot trixie = { .tag = "d13", .tree = trixie_tree };

/* ---- the master CLI, from the host through /proc/PID1/root ---- */

static gchar *master_cli(struct container *c, const char *command)
{
	g_autofree gchar *path = g_strconcat(c->root, MASTER_SOCK, NULL);

	return t_master_cli(path, command, WAIT_MS);
}

/*
 * The master CLI takes every connection tried during ms, from the moment
 * the unit's job returned: a 2.5-3.0 master executes itself again after
 * each load and refuses meanwhile, which the wrapper waits out before it
 * says ready (Debian 13 has 3.0).
 */
static void assert_cli_accepts_throughout(struct container *c, guint ms)
{
	g_autofree gchar *path = g_strconcat(c->root, MASTER_SOCK, NULL);

	g_assert_true(t_master_cli_accepts_for(path, ms));
}

/* ---- Debian's haproxy.service through the drop-in ---- */

static void dropin_install(struct container *c, guint16 port)
{
	install_wrapper(c);
	copy_in(c, CONTRIB "/haproxy.service.d/wrapper.conf",
		UNIT_DIR "/" DEBIAN_UNIT ".d/wrapper.conf", 0644);
	put_text(c, UNIT_DIR "/" DEBIAN_UNIT ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	/* BindReadOnlyPaths= of the package's unit: the chroot's log socket
	 * (the host's root booted --volatile=yes has no /var). */
	put_text(c, "/var/lib/haproxy/dev/.keep", "");
	put_config(c, "/etc/haproxy/haproxy.cfg", port, NULL);
	g_assert_cmpint(sctl(c, "daemon-reload", NULL), ==, 0);
}

/* The unit is the package's, unmodified, with our drop-in. */
static void assert_debian_unit(struct container *c)
{
	g_autofree gchar *fragment = prop(c, DEBIAN_UNIT, "FragmentPath");
	g_autofree gchar *dropins = prop(c, DEBIAN_UNIT, "DropInPaths");
	g_autofree gchar *env = prop(c, DEBIAN_UNIT, "Environment");
	g_autofree gchar *reload = prop(c, DEBIAN_UNIT, "ExecReload");

	g_assert_true(g_str_has_suffix(fragment, "/lib/systemd/system/"
					      DEBIAN_UNIT));
	g_assert_nonnull(strstr(dropins, "/wrapper.conf"));
	g_assert_nonnull(strstr(env, "EXTRAOPTS=-S " MASTER_SOCK));
	/* Both of the package's ExecReload= lines replaced by one. */
	g_assert_nonnull(strstr(reload, SBIN_WRAPPER " --reload"));
	g_assert_null(strstr(reload, "/bin/kill"));
	g_test_message("%s: %s + %s", DEBIAN_UNIT, fragment, dropins);
}

static void test_debian_unit(struct fixture *f, gconstpointer data)
{
	guint16 port = t_free_port();
	g_autofree gchar *exe = NULL;
	g_autofree gchar *cli = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *cgroup = NULL;
	GPid main_pid, master, worker, status_pid = 0;
	guint gen = 0;
	struct t_load l;

	if (!fx_ready(f))
		return;
	dropin_install(f->c, port);
	assert_debian_unit(f->c);
	g_assert_cmpint(sctl(f->c, "start", DEBIAN_UNIT), ==, 0);
	assert_cli_accepts_throughout(f->c, 300);
	main_pid = prop_int(f->c, DEBIAN_UNIT, "MainPID");
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	cgroup = prop(f->c, DEBIAN_UNIT, "ControlGroup");
	/* -S asks for master-worker mode: a master, our child, and its
	 * worker serving. */
	worker = t_http_pid(port);
	g_assert_cmpint(worker, >, 0);
	master = parent_of(f->c, worker);
	g_assert_cmpint(parent_of(f->c, master), ==, main_pid);
	cli = master_cli(f->c, "show proc");
	g_test_message("master CLI, show proc: %s", cli);
	g_assert_nonnull(strstr(cli, "master"));

	/* Reloads under load: every one returns once a new worker serves. */
	t_load_start_paced(&l, port, 1000);
	for (guint i = 0; i < 10; i++) {
		GPid now;

		g_assert_cmpint(sctl(f->c, "reload", DEBIAN_UNIT), ==, 0);
		if (i == 0)
			assert_cli_accepts_throughout(f->c, 300);
		now = t_http_pid(port);
		g_assert_cmpint(now, >, 0);
		g_assert_cmpint(now, !=, worker);
		g_assert_cmpint(parent_of(f->c, now), ==, master);
		worker = now;
	}
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_assert_cmpuint(l.requests - l.failures, >=, 10);
	g_assert_cmpint(prop_int(f->c, DEBIAN_UNIT, "MainPID"), ==, main_pid);
	g_assert_true(unit_status_text(f->c, DEBIAN_UNIT, &gen, &status_pid,
				       &text));
	g_test_message("StatusText: %s", text);
	g_assert_cmpint(status_pid, ==, master);
	g_assert_nonnull(strstr(text, "last reload ok"));

	/* A bad configuration: `systemctl reload` fails, the worker serves. */
	put_config(f->c, "/etc/haproxy/haproxy.cfg", port, BROKEN);
	g_assert_cmpint(sctl(f->c, "reload", DEBIAN_UNIT), !=, 0);
	assert_cli_accepts_throughout(f->c, 300);
	g_assert_cmpint(t_http_pid(port), ==, worker);
	assert_prop(f->c, DEBIAN_UNIT, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, DEBIAN_UNIT, "MainPID"), ==, main_pid);
	g_clear_pointer(&cli, g_free);
	cli = master_cli(f->c, "show proc");
	g_assert_nonnull(strstr(cli, "master"));

	g_assert_cmpint(sctl(f->c, "stop", DEBIAN_UNIT), ==, 0);
	assert_prop(f->c, DEBIAN_UNIT, "ActiveState", "inactive");
	assert_prop(f->c, DEBIAN_UNIT, "Result", "success");
	g_assert_cmpuint(processes_in(f->c, cgroup), ==, 0);
	g_assert_null(t_http_get(port, 200));
}

/*
 * Restarts and kills through the drop-in refuse nothing, as with the
 * recommended unit: -S selects master-worker mode, whose workers'
 * listening socket is kept in systemd's fd store; the next wrapper's first
 * master takes it over (-x), and the master CLI answers again on -S.
 */
static void test_debian_unit_restarts(struct fixture *f, gconstpointer data)
{
	guint16 port = t_free_port();
	g_autofree gchar *cli = NULL;
	GPid worker;
	guint failures;
	struct t_load l;

	if (!fx_ready(f))
		return;
	dropin_install(f->c, port);
	g_assert_cmpint(sctl(f->c, "start", DEBIAN_UNIT), ==, 0);
	worker = t_http_pid(port);
	g_assert_cmpint(worker, >, 0);
	g_assert_cmpint(prop_int(f->c, DEBIAN_UNIT, "NFileDescriptorStore"),
			==, 1);
	t_load_start_paced(&l, port, 1000);
	g_assert_true(t_load_wait_answers(&l, worker, 1));
	for (guint i = 0; i < 5; i++) {
		GPid old = worker;

		g_assert_cmpint(sctl(f->c, "restart", DEBIAN_UNIT), ==, 0);
		if (i == 0)
			assert_cli_accepts_throughout(f->c, 300);
		worker = t_http_pid(port);
		g_assert_cmpint(worker, >, 0);
		g_assert_cmpint(worker, !=, old);
		g_assert_true(t_load_wait_answers(&l, worker, 1));
	}
	for (guint i = 1; i <= 2; i++) {
		g_autofree gchar *main_pid = g_strdup_printf(
			"%d", prop_int(f->c, DEBIAN_UNIT, "MainPID"));
		g_autofree gchar *n = g_strdup_printf("%u", i);
		const char *const restarted[] = {
			"NRestarts", n, "ActiveState", "active",
			"SubState", "running", NULL,
		};
		GPid old = worker;

		g_assert_cmpint(cexec(f->c, NULL, "kill", "-KILL", main_pid,
				      NULL), ==, 0);
		g_assert_true(wait_props(f->c, DEBIAN_UNIT, restarted));
		worker = t_http_pid(port);
		g_assert_cmpint(worker, >, 0);
		g_assert_cmpint(worker, !=, old);
		g_assert_true(t_load_wait_answers(&l, worker, 1));
	}
	failures = t_load_finish(&l);
	g_test_message("%s through the drop-in, 5 restarts and 2 kills of the "
		       "main pid: %u requests, %u failed, %u refused",
		       DEBIAN_UNIT, l.requests, failures, l.refused);
	g_assert_cmpuint(l.refused, ==, 0);
	g_assert_cmpint(prop_int(f->c, DEBIAN_UNIT, "NFileDescriptorStore"),
			==, 1);
	cli = master_cli(f->c, "show proc");
	g_assert_nonnull(strstr(cli, "master"));
	g_assert_cmpint(sctl(f->c, "stop", DEBIAN_UNIT), ==, 0);
	g_assert_null(t_http_get(port, 200));
}

/* ---- journal events ---- */

/* The unit's entries with this MESSAGE_ID, as journalctl -o json lines. */
static gchar **journal_events(struct container *c, const char *unit,
			      const char *id)
{
	g_autofree gchar *match = g_strdup_printf("MESSAGE_ID=%s", id);
	g_autofree gchar *out = NULL;

	cexec(c, &out, "journalctl", "--no-pager", "-o", "json", "-u", unit,
	      match, NULL);
	return g_strsplit(g_strstrip(out ? out : g_strdup("")), "\n", -1);
}

/* Polled: journald takes native and stream messages asynchronously. */
static gchar **wait_events(struct container *c, const char *unit,
			   const char *id, guint n)
{
	gint64 deadline = g_get_monotonic_time() + WAIT_MS * 1000LL;
	guint pause = 0;

	for (;;) {
		gchar **lines = journal_events(c, unit, id);
		guint have = 0;

		for (char **l = lines; *l; l++)
			have += **l == '{';
		if (have >= n || g_get_monotonic_time() > deadline)
			return lines;
		g_strfreev(lines);
		poll_pause(&pause);
	}
}

static void assert_field(const char *json, const char *name,
			 const char *value)
{
	g_autofree gchar *pair = g_strdup_printf("\"%s\":\"%s\"", name, value);

	if (!strstr(json, pair))
		g_error("no %s in %s", pair, json);
}

/* Started, reloaded once, then a reload that fails. */
static void good_and_bad_reload(struct container *c, struct svc *s)
{
	check_start(c, s);
	check_reload(c, s);
	put_config(c, "/etc/haproxy/haproxy.cfg", s->port, BROKEN);
	g_assert_cmpint(sctl(c, "reload", s->unit), !=, 0);
}

static void test_journal(struct fixture *f, gconstpointer data)
{
	g_auto(GStrv) ok = NULL;
	g_auto(GStrv) failed = NULL;
	g_auto(GStrv) stop = NULL;
	g_autofree gchar *text = NULL;
	g_autofree gchar *gen2 = NULL;
	g_autofree gchar *gen3 = NULL;
	g_autofree gchar *alerts = NULL;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	good_and_bad_reload(f->c, &s);
	check_stop(f->c, &s);

	/* The start and the reload. */
	ok = wait_events(f->c, s.unit, MSGID_RELOAD_OK, 2);
	g_assert_cmpuint(g_strv_length(ok), ==, 2);
	gen2 = g_strdup_printf("%d", s.haproxy);
	assert_field(ok[1], "HAPROXY_GENERATION", "2");
	assert_field(ok[1], "HAPROXY_PID", gen2);
	assert_field(ok[1], "RELOAD_RESULT", "ok");
	assert_field(ok[1], "PRIORITY", "5");
	g_assert_nonnull(strstr(ok[1], "\"RELOAD_DURATION_USEC\":\""));
	g_assert_nonnull(strstr(ok[1], "\"MESSAGE\":\"" PROG ": generation 2 "
				"ready: pid "));

	/* The failed reload: its historic text, priority <3>, once. */
	failed = wait_events(f->c, s.unit, MSGID_RELOAD_FAILED, 1);
	g_assert_cmpuint(g_strv_length(failed), ==, 1);
	assert_field(failed[0], "RELOAD_RESULT", "failed");
	assert_field(failed[0], "PRIORITY", "3");
	assert_field(failed[0], "SYSLOG_IDENTIFIER", PROG);
	g_assert_nonnull(strstr(failed[0], "\"MESSAGE\":\"" PROG ": reload "
				"failed: generation 3 (pid "));
	g_assert_nonnull(strstr(failed[0], "keeps serving\""));
	/* Its fields are the failed generation's, not the serving one's
	 * (the message names that one). */
	gen3 = g_strdup_printf("%d", t_pid_in(failed[0], "failed: generation 3 "
					      "(pid "));
	assert_field(failed[0], "HAPROXY_GENERATION", "3");
	assert_field(failed[0], "HAPROXY_PID", gen3);
	cexec(f->c, &text, "journalctl", "--no-pager", "-o", "cat", "-u",
	      s.unit, NULL);
	g_assert_nonnull(strstr(text, PROG ": reload failed: "));
	g_assert_null(strstr(strstr(text, PROG ": reload failed: ") + 1,
			     PROG ": reload failed: "));
	/* The ExecReload= client's "ok" is the wrapper's line's twin: not
	 * there. */
	g_assert_null(strstr(text, "ok generation"));

	/* What haproxy said: in the failure's entry, and haproxy's own
	 * line, at <3>, as haproxy's. */
	g_assert_nonnull(strstr(failed[0], "[ALERT]"));
	g_assert_nonnull(strstr(failed[0], ALERT_WORDS));
	cexec(f->c, &alerts, "journalctl", "--no-pager", "-o", "cat", "-u",
	      s.unit, "-p", "err", "SYSLOG_IDENTIFIER=haproxy", NULL);
	g_assert_nonnull(alerts);
	g_assert_nonnull(strstr(alerts, "[ALERT]"));
	g_assert_nonnull(strstr(alerts, ALERT_WORDS));

	stop = wait_events(f->c, s.unit, MSGID_STOP, 1);
	g_assert_cmpuint(g_strv_length(stop), ==, 1);
	assert_field(stop[0], "EXIT_STATUS", "0");
	g_assert_nonnull(strstr(stop[0], "\"MESSAGE\":\"" PROG ": exit, "
				"haproxy RC=0\""));
	svc_clear(&s);
}

/* ---- metrics for node_exporter ---- */

static void test_metrics_file(struct fixture *f, gconstpointer data)
{
	const char *file = "/var/lib/prometheus/node-exporter/"
			   "haproxy_wrapper.prom";
	g_autofree gchar *full = NULL;
	g_autofree gchar *om = NULL;
	g_autofree gchar *parsed = NULL;
	struct svc s;

	if (!fx_ready(f))
		return;
	recommended(f->c, &s);
	install_unit(f->c, "haproxy-systemd-wrapper-metrics.service",
		     "haproxy-systemd-wrapper-metrics.service");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	good_and_bad_reload(f->c, &s);
	g_assert_cmpint(sctl(f->c, "start",
			     "haproxy-systemd-wrapper-metrics.service"), ==, 0);
	full = g_strconcat(f->c->root, file, NULL);
	g_assert_true(g_file_get_contents(full, &om, NULL, NULL));
	parsed = t_openmetrics_parsed(om);
	if (parsed) {
		t_assert_sample(parsed, "haproxy_wrapper_reloads_total"
				"{result=\"ok\"} 1");
		t_assert_sample(parsed, "haproxy_wrapper_reloads_total"
				"{result=\"failed\"} 1");
		t_assert_sample(parsed, "haproxy_wrapper_generations"
				"{state=\"current\"} 1");
	} else {
		g_test_message("no python3-prometheus-client: not parsed");
	}
	g_assert_true(g_str_has_suffix(om, "# EOF\n"));
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* ---- Type=notify-reload (systemd >= 253) ---- */

static void test_notify_reload(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = "haproxy-notify-reload.service",
		.pidfile = "/run/haproxy.pid",
		.port = t_free_port(),
		.notify = TRUE,
	};
	g_autofree gchar *type = NULL;
	g_autofree gchar *text = NULL;
	GPid serving, status_pid = 0;
	guint gen = 0;

	if (!fx_ready(f))
		return;
	install_wrapper(f->c);
	install_unit(f->c, s.unit, s.unit);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	type = prop(f->c, s.unit, "Type");
	g_assert_cmpstr(type, ==, "notify-reload");
	check_start(f->c, &s);
	/* ReloadSignal=SIGUSR2, done at RELOADING=1 then READY=1: the
	 * new haproxy serves when systemctl returns, same MainPID. */
	check_reloads(f->c, &s, 10);
	g_assert_cmpuint(g_hash_table_size(s.seen), ==, 11);
	assert_prop(f->c, s.unit, "NRestarts", "0");

	/* A bad one: systemd's reload itself succeeds (READY=1 follows a
	 * failure too); the old haproxy serves, StatusText says FAILED. */
	serving = s.haproxy;
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, BROKEN);
	g_assert_cmpint(sctl(f->c, "reload", s.unit), ==, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, serving);
	g_assert_cmpint(prop_int(f->c, s.unit, "MainPID"), ==, s.main_pid);
	assert_prop(f->c, s.unit, "ActiveState", "active");
	g_assert_true(unit_status_text(f->c, s.unit, &gen, &status_pid,
				       &text));
	g_test_message("StatusText after a bad reload: %s", text);
	g_assert_cmpint(status_pid, ==, serving);
	g_assert_nonnull(strstr(text, "last reload FAILED ("));
	g_assert_nonnull(strstr(text, " ms): generation "));
	g_assert_true(journal_has(f->c, s.unit, "err", "reload failed: "));
	check_stop(f->c, &s);
	svc_clear(&s);
}

#define ADD(path, fn, boot) \
	g_test_add("/distro/" path, struct fixture, &boot, fx_setup, fn, \
		   fx_teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();

	ADD("debian12/journal", test_journal, bookworm);
	ADD("debian12/metrics-file", test_metrics_file, bookworm);
	ADD("debian13/journal", test_journal, trixie);
	ADD("debian13/notify-reload", test_notify_reload, trixie);
	ADD("debian-unit/debian12", test_debian_unit, bookworm);
	ADD("debian-unit/debian13", test_debian_unit, trixie);
	ADD("debian-unit/restarts-debian12", test_debian_unit_restarts,
	    bookworm);
	ADD("debian-unit/restarts-debian13", test_debian_unit_restarts,
	    trixie);
	return g_test_run();
}
