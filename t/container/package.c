/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Debian package as an administrator lives with it, under a real
 * systemd 252 (t/container/container.c, the host's root with its dpkg
 * database under a writable overlay): installed, enabled and started, then
 * upgraded to a higher version (build/deb-next/, the same tree as version
 * VERSION+next, its wrapper saying so), downgraded back, removed and
 * purged, all while a load of HTTP requests runs on 127.0.0.1.
 *
 * An upgrade must not take the service down: the maintainer scripts leave
 * the unit running, make systemd read the new unit files and reload every
 * service whose main process runs the wrapper (by the binary's identity,
 * whatever path ExecStart= gives), whose self-upgrade moves it onto the
 * new binary with the same MainPID; not one request fails. The same for
 * Debian's own haproxy.service run through the wrapper by the drop-in,
 * which installing the package does not touch: the administrator links
 * the drop-in in. A removal hands that one back to haproxy -Ws, serving
 * on with the same MainPID, its reloads and restarts haproxy's own unit's;
 * it stops the other services that run the wrapper and leaves nothing in
 * /run; a purge leaves nothing at all, the metrics file for node_exporter,
 * an enabled instance and the drop-in included. The units stay disabled
 * under the package's preset, and a burst of restarts and a crash do not
 * fail them. The version of debian/changelog is the package's and the
 * wrapper's, after a bump too (`make deb` in a copy of the tree).
 *
 * Skipped, with the reason, where no container can run or where the two
 * packages are not built (make deb, make tests). With HSW_MEASURE set,
 * /package/measure/units measures the units side by side for make
 * bench-units.
 */
#include <glib.h>
#include <string.h>

#include "t/container/container.h"
#include "t/lib/harness.h"

#define UNIT		PROG ".service"
#define DEBIAN_UNIT	"haproxy.service"
#define PIDFILE		"/run/haproxy.pid"
#define RUNDIR		"/run/" PROG "/run-haproxy"
#define METRICS_TIMER	PROG "-metrics.timer"
#define METRICS_SVC	PROG "-metrics.service"
#define METRICS_DIR	"/var/lib/prometheus/node-exporter"
#define METRICS_FILE	METRICS_DIR "/haproxy_wrapper.prom"
#define DROPIN_SHIPPED	"/usr/share/" PROG "/haproxy.service.d/wrapper.conf"
#define DROPIN_DIR	UNIT_DIR "/" DEBIAN_UNIT ".d"
#define DROPIN_LINK	DROPIN_DIR "/wrapper.conf"
#define NEXT_VERSION	WRAPPER_VERSION "+next"
/* Where the packages are copied in the container. */
#define DEB_N		"/tmp/hsw-n.deb"
#define DEB_NEXT	"/tmp/hsw-next.deb"

static const struct boot with_dpkg = { .tag = "pkg", .dpkg = TRUE };

/* The higher version's .deb (or $HSW_DEB_NEXT), or NULL. */
static gchar *next_deb_path(void)
{
	const char *env = g_getenv("HSW_DEB_NEXT");
	g_autoptr(GDir) d = NULL;
	const char *name;

	if (env)
		return g_strdup(env);
	d = g_dir_open("build/deb-next", 0, NULL);
	while (d && (name = g_dir_read_name(d)))
		if (g_str_has_prefix(name, PROG "_") &&
		    g_str_has_suffix(name, ".deb"))
			return g_build_filename("build/deb-next", name, NULL);
	return NULL;
}

/* Both packages copied in; FALSE (the test skipped) without them. */
static gboolean packages_in(struct fixture *f)
{
	g_autofree gchar *deb = deb_path();
	g_autofree gchar *next = next_deb_path();

	if (!fx_ready(f))
		return FALSE;
	if (!deb || !next || !g_file_test(deb, G_FILE_TEST_EXISTS) ||
	    !g_file_test(next, G_FILE_TEST_EXISTS)) {
		g_test_skip("no build/deb/" PROG "_*.deb or build/deb-next/"
			    PROG "_*.deb: run make tests");
		return FALSE;
	}
	copy_in(f->c, deb, DEB_N, 0644);
	copy_in(f->c, next, DEB_NEXT, 0644);
	/* A build machine's policy-rc.d (a container image's "exit 101")
	 * forbids every deb-systemd-invoke: not what an administrator's
	 * host has. The container's /usr is an overlay: the host keeps it. */
	g_assert_cmpint(cexec(f->c, NULL, "rm", "-f", "/usr/sbin/policy-rc.d",
			      NULL), ==, 0);
	return TRUE;
}

/* dpkg with these arguments, which must succeed; its output, stdout and
 * stderr together. */
static gchar *dpkg_output(struct container *c, const char *action,
			  const char *what)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	const char *const argv[] = { "dpkg", action, what, NULL };
	int code = cexecv(c, CMD_TIMEOUT_S, &out, &err, argv);

	g_test_message("dpkg %s %s: %s%s", action, what, out, err);
	g_assert_cmpint(code, ==, 0);
	return g_strconcat(out ? out : "", err ? err : "", NULL);
}

static void dpkg(struct container *c, const char *action, const char *what)
{
	g_free(dpkg_output(c, action, what));
}

/* The paths under dir whose name contains PROG (links included, followed
 * or not), one a line; "" when there are none. */
static gchar *ours_under(struct container *c, const char *dir)
{
	g_autofree gchar *out = NULL;

	cexec(c, &out, "find", dir, "-name", "*" PROG "*", NULL);
	return g_strdup(g_strstrip(out ? out : (gchar *)""));
}

/* What the running wrapper says of itself (--status), through the
 * installed client. */
static gchar *wrapper_status(struct container *c)
{
	g_autofree gchar *out = NULL;

	g_assert_cmpint(cexec(c, &out, SBIN_WRAPPER, "--status", "-p",
			      PIDFILE, NULL), ==, 0);
	return g_strdup(out);
}

/* The running wrapper is this version, exactly. */
static void assert_wrapper_version(struct container *c, const char *version)
{
	g_autofree gchar *status = wrapper_status(c);
	g_autofree gchar *word = g_strdup_printf(" %s ", version);
	g_autofree gchar *spaced = g_strdup_printf(" %s ", status);
	g_strdelimit(spaced, "\n\t,;:()\"{}", ' ');

	if (!strstr(spaced, word))
		g_error("the running wrapper is not version %s: %s", version,
			status);
}

/* The unit serves on, with the same main process, now on the installed
 * binary (not the deleted one of the previous package). */
static void assert_same_service(struct container *c, const char *unit,
				GPid main_pid)
{
	g_autofree gchar *exe = NULL;

	assert_prop(c, unit, "ActiveState", "active");
	assert_prop(c, unit, "SubState", "running");
	assert_prop(c, unit, "NRestarts", "0");
	g_assert_cmpint(prop_int(c, unit, "MainPID"), ==, main_pid);
	exe = exe_of(c, main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	/* systemd read the new unit files: no "changed on disk". */
	assert_prop(c, unit, "NeedDaemonReload", "no");
}

/* Installs the package of path over what is there, under the load: the
 * service stays up and ends on that package's wrapper. dpkg's output. */
static gchar *install_under_load(struct container *c, const char *unit,
				 guint16 port, GPid main_pid, const char *path,
				 const char *version)
{
	struct t_load l;
	gchar *out;

	t_load_start_paced(&l, port, 1000);
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 5));
	out = dpkg_output(c, "-i", path);
	assert_same_service(c, unit, main_pid);
	assert_wrapper_version(c, version);
	/* Answers after the upgrade too, then not one failed. */
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 5));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_test_message("%s: %u requests while installing %s, 0 failed",
		       unit, l.requests, version);
	return out;
}

/* Nothing of the removed package left in /run: the units'
 * RuntimeDirectory= (systemd removes it, or the package with the drop-in
 * that made it) and its parent (the package). */
static void assert_run_clean_but_pidfile(struct container *c)
{
	g_assert_false(exists_in(c, RUNDIR));
	g_assert_false(exists_in(c, "/run/" PROG));
}

/* ... and nor of a stopped wrapper: the pidfile (the wrapper removes it). */
static void assert_run_clean(struct container *c)
{
	g_assert_false(exists_in(c, PIDFILE));
	assert_run_clean_but_pidfile(c);
}

/* The package's units are disabled, and stay so under its preset: no
 * `systemctl preset-all` enables them beside haproxy.service. */
static void assert_preset_disabled(struct container *c)
{
	const char *const units[] = { UNIT, PROG "@.service", METRICS_TIMER,
				      NULL };

	for (const char *const *u = units; *u; u++) {
		g_autofree gchar *line = NULL;
		g_auto(GStrv) cols = NULL;

		g_assert_cmpint(cexec(c, &line, "systemctl", "list-unit-files",
				      "--no-legend", *u, NULL), ==, 0);
		cols = g_strsplit_set(g_strstrip(line), " \t", -1);
		/* NAME STATE PRESET, the blanks between them repeated. */
		g_assert_cmpstr(cols[g_strv_length(cols) - 1], ==, "disabled");
	}
	g_assert_cmpint(cexec(c, NULL, "systemctl", "preset-all", NULL), ==, 0);
	for (const char *const *u = units; *u; u++) {
		g_autofree gchar *state = NULL;

		cexec(c, &state, "systemctl", "is-enabled", *u, NULL);
		g_assert_cmpstr(g_strstrip(state), ==, "disabled");
	}
}

/* Version N enabled and started, N+1 over it, N again, removed, purged. */
static void test_upgrade_downgrade_remove(struct fixture *f,
					  gconstpointer data)
{
	g_autofree gchar *left = NULL;
	struct svc s = {
		.unit = UNIT,
		.pidfile = PIDFILE,
		.port = t_free_port(),
		.notify = TRUE,
	};

	if (!packages_in(f))
		return;
	dpkg(f->c, "-i", DEB_N);
	assert_preset_disabled(f->c);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	/* An instance of the template enabled too: its link goes with the
	 * purge. */
	g_assert_cmpint(cexec(f->c, NULL, "systemctl", "enable",
			      PROG "@web.service", NULL), ==, 0);
	g_assert_cmpint(cexec(f->c, NULL, "systemctl", "enable", UNIT, NULL),
			==, 0);
	check_start(f->c, &s);
	assert_wrapper_version(f->c, WRAPPER_VERSION);

	g_free(install_under_load(f->c, UNIT, s.port, s.main_pid, DEB_NEXT,
				  NEXT_VERSION));
	/* A downgrade is an upgrade to an older version: the same. */
	g_free(install_under_load(f->c, UNIT, s.port, s.main_pid, DEB_N,
				  WRAPPER_VERSION));

	/* Removed: the service stops with its binary, and cleanly. */
	dpkg(f->c, "-r", PROG);
	assert_prop(f->c, UNIT, "ActiveState", "inactive");
	assert_prop(f->c, UNIT, "Result", "success");
	g_assert_cmpuint(processes_in(f->c, s.cgroup), ==, 0);
	g_assert_cmpint(t_http_pid(s.port), ==, 0);
	assert_run_clean(f->c);
	dpkg(f->c, "--purge", PROG);
	g_assert_false(exists_in(f->c, SBIN_WRAPPER));
	g_assert_false(exists_in(f->c, "/var/cache/" PROG));
	assert_run_clean(f->c);
	left = ours_under(f->c, UNIT_DIR);
	g_assert_cmpstr(left, ==, "");
	svc_clear(&s);
}

/* Debian's haproxy.service as its package ships it: no drop-in. */
static void assert_debian_unit_alone(struct container *c)
{
	g_autofree gchar *start = prop(c, DEBIAN_UNIT, "ExecStart");

	assert_prop(c, DEBIAN_UNIT, "DropInPaths", "");
	g_assert_nonnull(strstr(start, "path=" HAPROXY " ;"));
}

/* The administrator's opt-in: the shipped drop-in linked in. */
static void link_dropin(struct container *c)
{
	g_assert_cmpint(cexec(c, NULL, "mkdir", "-p", DROPIN_DIR, NULL), ==,
			0);
	g_assert_cmpint(cexec(c, NULL, "ln", "-s", DROPIN_SHIPPED, DROPIN_LINK,
			      NULL), ==, 0);
	g_assert_cmpint(sctl(c, "daemon-reload", NULL), ==, 0);
}

/* Five `systemctl restart` and a crash (SIGKILL to the main process)
 * within a few seconds, under a load: the unit ends active, restarted
 * once by Restart=, never failed by the start limit. The stored sockets
 * (how many before the crash) returned. */
static guint restart_burst(struct container *c, const char *unit,
			   guint16 port, struct t_load *l)
{
	const char *const restarted[] = {
		"NRestarts", "1", "ActiveState", "active", "SubState", "running",
		NULL,
	};
	g_autofree gchar *main_pid = NULL;
	guint stored;
	GPid serving = t_http_pid(port);
	gint64 begin = g_get_monotonic_time();

	g_assert_true(t_load_wait_answers(l, serving, 1));
	/* As fast as systemd takes them: the load sees whether anything
	 * was refused meanwhile. */
	for (guint i = 0; i < 5; i++) {
		g_assert_cmpint(sctl(c, "restart", unit), ==, 0);
		assert_prop(c, unit, "ActiveState", "active");
	}
	stored = prop_int(c, unit, "NFileDescriptorStore");
	main_pid = g_strdup_printf("%d", prop_int(c, unit, "MainPID"));
	g_assert_cmpint(cexec(c, NULL, "kill", "-KILL", main_pid, NULL), ==, 0);
	if (!wait_props(c, unit, restarted))
		g_error("%s after 5 restarts and a crash: %s, %s", unit,
			prop(c, unit, "ActiveState"), prop(c, unit, "Result"));
	serving = t_http_pid(port);
	g_assert_cmpint(serving, >, 0);
	g_assert_true(t_load_wait_answers(l, serving, 1));
	g_test_message("%s: 5 restarts and a crash in %" G_GINT64_FORMAT
		       " ms", unit, (g_get_monotonic_time() - begin) / 1000);
	return stored;
}

/* The package's unit as installed: 5 restarts and a crash, the start
 * limit not hit, its sockets kept in the store throughout (nothing
 * refused). */
static void test_restart_burst(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = UNIT,
		.pidfile = PIDFILE,
		.port = t_free_port(),
		.notify = TRUE,
	};
	struct t_load l;
	guint stored;

	if (!packages_in(f))
		return;
	dpkg(f->c, "-i", DEB_N);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	check_start(f->c, &s);
	t_load_start_paced(&l, s.port, 1000);
	stored = restart_burst(f->c, UNIT, s.port, &l);
	g_assert_cmpuint(stored, >, 0);
	g_assert_cmpint(prop_int(f->c, UNIT, "NFileDescriptorStore"), >, 0);
	t_load_finish(&l);
	g_test_message("5 restarts and a crash: %u requests, %u refused, %u "
		       "sockets stored", l.requests, l.refused, stored);
	g_assert_cmpuint(l.refused, ==, 0);
	s.main_pid = prop_int(f->c, UNIT, "MainPID");
	check_stop(f->c, &s);
	svc_clear(&s);
}

/* Debian's haproxy.service through the drop-in, its whole life: the
 * package installed leaves it alone; linked in, it takes a burst of
 * restarts and a crash, an upgrade under load; the package removed under
 * load, it serves on as haproxy -Ws (same MainPID, not one request
 * failed), and reloads and restarts as haproxy's own unit; purged,
 * nothing of the wrapper is left. */
static void test_debian_unit(struct fixture *f, gconstpointer data)
{
	guint16 port = t_free_port();
	g_autofree gchar *exe = NULL;
	g_autofree gchar *left = NULL;
	g_autofree gchar *out = NULL;
	struct t_load l;
	GPid main_pid, worker;

	if (!packages_in(f))
		return;
	/* The chroot's log socket of BindReadOnlyPaths= (the host's root
	 * booted --volatile=yes has no /var). */
	put_text(f->c, "/var/lib/haproxy/dev/.keep", "");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", port, NULL);
	dpkg(f->c, "-i", DEB_N);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	assert_debian_unit_alone(f->c);

	link_dropin(f->c);
	g_assert_cmpint(sctl(f->c, "start", DEBIAN_UNIT), ==, 0);
	main_pid = prop_int(f->c, DEBIAN_UNIT, "MainPID");
	g_assert_cmpint(main_pid, >, 0);
	assert_same_service(f->c, DEBIAN_UNIT, main_pid);
	g_assert_cmpint(t_http_pid(port), >, 0);
	assert_wrapper_version(f->c, WRAPPER_VERSION);

	/* Its start limit lets a burst through too. */
	t_load_start_paced(&l, port, 1000);
	restart_burst(f->c, DEBIAN_UNIT, port, &l);
	t_load_finish(&l);
	g_test_message("%s: 5 restarts and a crash: %u requests, %u refused",
		       DEBIAN_UNIT, l.requests, l.refused);
	g_assert_cmpuint(l.refused, ==, 0);
	/* A restart asked for sets NRestarts back to 0, which the checks of
	 * the upgrade and the removal below count from. */
	g_assert_cmpint(sctl(f->c, "restart", DEBIAN_UNIT), ==, 0);
	main_pid = prop_int(f->c, DEBIAN_UNIT, "MainPID");
	g_assert_cmpint(wait_serving(port, 0), >, 0);

	g_free(install_under_load(f->c, DEBIAN_UNIT, port, main_pid, DEB_NEXT,
				  NEXT_VERSION));

	/* Removed under load: handed back, the same main process now
	 * haproxy -Ws, its unit haproxy's own again. */
	t_load_start_paced(&l, port, 1000);
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 5));
	out = dpkg_output(f->c, "-r", PROG);
	assert_prop(f->c, DEBIAN_UNIT, "ActiveState", "active");
	assert_prop(f->c, DEBIAN_UNIT, "SubState", "running");
	assert_prop(f->c, DEBIAN_UNIT, "NRestarts", "0");
	g_assert_cmpint(prop_int(f->c, DEBIAN_UNIT, "MainPID"), ==, main_pid);
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, HAPROXY);
	assert_debian_unit_alone(f->c);
	assert_prop(f->c, DEBIAN_UNIT, "NeedDaemonReload", "no");
	g_assert_false(exists_in(f->c, DROPIN_LINK));
	/* The administrator is told. */
	g_assert_nonnull(strstr(out, DEBIAN_UNIT " runs haproxy -Ws now"));
	worker = t_http_pid(port);
	g_assert_true(t_load_wait_answers(&l, worker, 5));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_test_message("%s: %u requests while the package was removed, 0 "
		       "failed", DEBIAN_UNIT, l.requests);

	/* haproxy's own reload: a new worker, the same master. */
	g_assert_cmpint(sctl(f->c, "reload", DEBIAN_UNIT), ==, 0);
	g_assert_cmpint(wait_serving(port, worker), >, 0);
	g_assert_cmpint(prop_int(f->c, DEBIAN_UNIT, "MainPID"), ==, main_pid);
	/* And its restart: a new master, haproxy's. */
	g_assert_cmpint(sctl(f->c, "restart", DEBIAN_UNIT), ==, 0);
	assert_prop(f->c, DEBIAN_UNIT, "ActiveState", "active");
	main_pid = prop_int(f->c, DEBIAN_UNIT, "MainPID");
	g_clear_pointer(&exe, g_free);
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, HAPROXY);
	g_assert_cmpint(wait_serving(port, 0), >, 0);
	assert_run_clean_but_pidfile(f->c);

	dpkg(f->c, "--purge", PROG);
	left = ours_under(f->c, UNIT_DIR);
	g_assert_cmpstr(left, ==, "");
	g_assert_false(exists_in(f->c, DROPIN_DIR));
	g_assert_false(exists_in(f->c, "/usr/share/" PROG));
	assert_prop(f->c, DEBIAN_UNIT, "ActiveState", "active");
	g_assert_cmpint(sctl(f->c, "stop", DEBIAN_UNIT), ==, 0);
}

/* A unit of the administrator's that starts the wrapper by another path
 * to the same file (/sbin on merged-/usr), and a oneshot that runs only
 * the client (--status): upgrades reload the first (it ends on the new
 * binary), removal stops it; the oneshot is neither reloaded nor
 * stopped. */
static void test_identity(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = "hsw-sbin.service",
		.pidfile = PIDFILE,
		.port = t_free_port(),
		.notify = TRUE,
	};
	const char *oneshot = "hsw-status.service";
	g_autofree gchar *out = NULL;
	g_autofree gchar *start = NULL;
	g_autofree gchar *sbin = NULL;

	if (!packages_in(f))
		return;
	sbin = g_file_read_link("/sbin", NULL);
	if (!sbin || !g_str_equal(sbin, "usr/sbin")) {
		g_test_skip("/sbin is not a link to usr/sbin here (merged-/usr)");
		return;
	}
	dpkg(f->c, "-i", DEB_N);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	g_assert_cmpint(cexec(f->c, NULL, "sh", "-c",
			      "mkdir -p " UNIT_DIR " && "
			      "sed 's|^ExecStart=/usr/sbin/|ExecStart=/sbin/|' "
			      "/lib/systemd/system/" UNIT " > " UNIT_DIR
			      "/hsw-sbin.service", NULL), ==, 0);
	put_text(f->c, UNIT_DIR "/hsw-status.service",
		 "[Service]\nType=oneshot\nRemainAfterExit=yes\n"
		 "ExecStart=" SBIN_WRAPPER " --status -p " PIDFILE "\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	start = prop(f->c, s.unit, "ExecStart");
	g_assert_nonnull(strstr(start, "path=/sbin/" PROG " ;"));
	check_start(f->c, &s);
	g_assert_cmpint(sctl(f->c, "start", oneshot), ==, 0);
	assert_prop(f->c, oneshot, "ActiveState", "active");

	out = install_under_load(f->c, s.unit, s.port, s.main_pid, DEB_NEXT,
				 NEXT_VERSION);
	assert_prop(f->c, oneshot, "ActiveState", "active");
	g_assert_null(strstr(out, oneshot));

	g_free(out);
	out = dpkg_output(f->c, "-r", PROG);
	assert_prop(f->c, s.unit, "ActiveState", "inactive");
	g_assert_cmpint(t_http_pid(s.port), ==, 0);
	assert_prop(f->c, oneshot, "ActiveState", "active");
	g_assert_null(strstr(out, oneshot));
	dpkg(f->c, "--purge", PROG);
	svc_clear(&s);
}

/* The timer has started its service, and that run is over (the service
 * went inactive after the trigger); bounded. */
static void wait_timer_run(struct container *c)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
	guint pause = 0;

	for (;;) {
		g_autofree gchar *t = prop(c, METRICS_TIMER,
					   "LastTriggerUSecMonotonic");
		g_autofree gchar *end = prop(c, METRICS_SVC,
					     "InactiveEnterTimestampMonotonic");
		g_autofree gchar *state = prop(c, METRICS_SVC, "ActiveState");
		guint64 trigger = g_ascii_strtoull(t ? t : "", NULL, 10);

		if (trigger && g_ascii_strtoull(end ? end : "", NULL, 10) > trigger &&
		    g_strcmp0(state, "inactive") == 0)
			return;
		g_assert_cmpint(g_get_monotonic_time(), <, deadline);
		poll_pause(&pause);
	}
}

/* The metrics timer is installed (not only an example); its file goes
 * when the wrapper stops, and with the package. */
static void test_metrics_timer(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = UNIT,
		.pidfile = PIDFILE,
		.port = t_free_port(),
		.notify = TRUE,
	};
	g_autofree gchar *enabled = NULL;
	g_autofree gchar *file = NULL;
	g_autofree gchar *om = NULL;

	if (!packages_in(f))
		return;
	dpkg(f->c, "-i", DEB_N);
	cexec(f->c, &enabled, "systemctl", "is-enabled", METRICS_TIMER, NULL);
	g_assert_cmpstr(g_strstrip(enabled), ==, "disabled");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	check_start(f->c, &s);
	/* The timer's first run is at its start (OnActiveSec=0); the
	 * service, a oneshot, has written the file when start returns. */
	g_assert_cmpint(sctl(f->c, "start", METRICS_SVC), ==, 0);
	file = g_strconcat(f->c->root, METRICS_FILE, NULL);
	g_assert_true(g_file_get_contents(file, &om, NULL, NULL));
	g_assert_true(g_str_has_suffix(om, "# EOF\n"));
	g_assert_cmpint(cexec(f->c, NULL, "systemctl", "enable", "--now",
			      METRICS_TIMER, NULL), ==, 0);
	assert_prop(f->c, METRICS_TIMER, "ActiveState", "active");
	/* Enabling it ran the service once more (OnActiveSec=0), on its
	 * own time: a run still writing when the wrapper stops would put the
	 * file back after the unit removed it. Its end first. */
	wait_timer_run(f->c);

	/* The wrapper stopped: the unit removes the file with it, rather
	 * than leave the last figures standing as if they were current,
	 * and so does the timer's next run. */
	check_stop(f->c, &s);
	g_assert_false(exists_in(f->c, METRICS_FILE));
	/* One left standing all the same (an administrator's own unit
	 * without the ExecStopPost=): the timer's next run removes it. */
	put_text(f->c, METRICS_FILE, "# EOF\n");
	g_assert_cmpint(sctl(f->c, "start", METRICS_SVC), ==, 0);
	assert_prop(f->c, METRICS_SVC, "Result", "success");
	g_assert_false(exists_in(f->c, METRICS_FILE));

	/* Started again and written again; then removed with the package,
	 * the timer stopped, the file gone. */
	check_start(f->c, &s);
	g_assert_cmpint(sctl(f->c, "start", METRICS_SVC), ==, 0);
	g_assert_true(exists_in(f->c, METRICS_FILE));
	dpkg(f->c, "-r", PROG);
	assert_prop(f->c, METRICS_TIMER, "ActiveState", "inactive");
	assert_prop(f->c, UNIT, "ActiveState", "inactive");
	g_assert_false(exists_in(f->c, METRICS_FILE));
	assert_run_clean(f->c);
	/* The directory the metrics service made goes with the purge (no
	 * package has it here). */
	g_assert_true(exists_in(f->c, METRICS_DIR));
	dpkg(f->c, "--purge", PROG);
	g_assert_false(exists_in(f->c, METRICS_DIR));
	g_assert_false(exists_in(f->c, "/var/lib/prometheus"));
	svc_clear(&s);
}

/* A command on the host, in dir, without the make jobserver of a make
 * that runs the tests; its output logged. Its exit code. */
static int run_in(const char *dir, const char *script, guint timeout_s)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	g_autofree gchar *cd = g_strdup_printf("cd '%s' && %s", dir, script);
	const char *const argv[] = { "env", "-u", "MAKEFLAGS", "-u", "MFLAGS",
				     "-u", "MAKELEVEL", "sh", "-c", cd, NULL };
	int code = run_argv(argv, timeout_s, &out, &err);

	g_test_message("%s: exit %d\n%s%s", script, code, out ? out : "",
		       err ? err : "");
	return code;
}

/* A changelog entry of version on top, as `dch -v` adds. */
static void bump(const char *dir, const char *version)
{
	g_autofree gchar *script = g_strdup_printf(
		"{ printf '%%s (%%s) unstable; urgency=medium\\n\\n  * A bump.\\n\\n' "
		"%s %s; sed -n '/^ -- /{p;q}' debian/changelog; echo; "
		"cat debian/changelog; } > changelog.new && "
		"mv changelog.new debian/changelog", PROG, version);

	g_assert_cmpint(run_in(dir, script, 10), ==, 0);
}

/* The version of debian/changelog is everyone's: after a bump, `make deb`
 * builds the package of that version under its name, in a fresh copy of
 * the tree and in one already built, and the wrapper inside says it
 * (--version, --status). */
static void test_version_bump(struct fixture *f, gconstpointer data)
{
	struct svc s = {
		.unit = UNIT,
		.pidfile = PIDFILE,
		.port = t_free_port(),
		.notify = TRUE,
	};
	g_autofree gchar *tree = NULL;
	g_autofree gchar *copy = NULL;
	g_autofree gchar *arch = NULL;
	g_autofree gchar *deb = NULL;
	g_autofree gchar *version = NULL;
	g_autofree gchar *status = NULL;
	const char *const dpkg_arch[] = { "dpkg", "--print-architecture", NULL };

	if (!fx_ready(f))
		return;
	if (run_argv(dpkg_arch, 10, &arch, NULL) != 0) {
		g_test_skip("no dpkg here to build a package");
		return;
	}
	g_strstrip(arch);
	/* In the container's scratch directory: removed with it, whatever
	 * the test's end. */
	tree = g_build_filename(f->c->tmp, "bump", NULL);
	/* What a clone has: the tracked files, and the new ones not ignored
	 * (the change under test); without git (a copy of the tree), all
	 * but what a build makes. */
	copy = g_strdup_printf(
		"mkdir '%s' && if [ -e .git ]; then git ls-files -z -co "
		"--exclude-standard | tar --null -T - -cf -; else tar "
		"--exclude=./build --exclude='*.o' --exclude='*.a' -cf - .; "
		"fi | tar -xf - -C '%s'", tree, tree);
	g_assert_cmpint(run_in(".", copy, 60), ==, 0);

	bump(tree, "9.8.7");
	g_assert_cmpint(run_in(tree, "make deb", 900), ==, 0);
	deb = g_strdup_printf("%s/build/deb/" PROG "_9.8.7_%s.deb", tree, arch);
	g_assert_true(g_file_test(deb, G_FILE_TEST_EXISTS));
	g_assert_cmpint(run_in(tree, "make -j2 all", 900), ==, 0);

	/* Built (objects, the wrapper, a package): bumped again. */
	bump(tree, "9.8.8");
	g_assert_cmpint(run_in(tree, "make deb && make -j2 all && "
			       "./" PROG " --version | grep -qx '" PROG
			       " 9.8.8'", 900), ==, 0);
	g_free(deb);
	deb = g_strdup_printf("%s/build/deb/" PROG "_9.8.8_%s.deb", tree, arch);
	g_assert_true(g_file_test(deb, G_FILE_TEST_EXISTS));

	copy_in(f->c, deb, DEB_N, 0644);
	g_assert_cmpint(cexec(f->c, NULL, "rm", "-f", "/usr/sbin/policy-rc.d",
			      NULL), ==, 0);
	dpkg(f->c, "-i", DEB_N);
	g_assert_cmpint(cexec(f->c, &version, SBIN_WRAPPER, "--version", NULL),
			==, 0);
	g_assert_cmpstr(g_strstrip(version), ==, PROG " 9.8.8");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	check_start(f->c, &s);
	assert_wrapper_version(f->c, "9.8.8");
	check_stop(f->c, &s);
	dpkg(f->c, "--purge", PROG);
	svc_clear(&s);
}

/* ---- the units side by side (make bench-units) ---- */

/* The load of one step stopped, its counts reported; how many refused. */
static guint measured(const char *label, const char *step, struct t_load *l)
{
	guint failed = t_load_finish(l);

	g_test_message("measured: %-28s %-30s requests %u, refused %u, "
		       "other failures %u", label, step, l->requests,
		       l->refused, failed - l->refused);
	return l->refused;
}

/* A load started that the server on port answers. */
static GPid load_answered(struct t_load *l, guint16 port)
{
	GPid serving = wait_serving(port, 0);

	g_assert_cmpint(serving, >, 0);
	t_load_start_paced(l, port, 1000);
	g_assert_true(t_load_wait_answers(l, serving, 1));
	return serving;
}

/* The step's end: a new server answers the load too. */
static void load_answered_by_new(struct t_load *l, guint16 port, GPid old)
{
	GPid serving = wait_serving(port, old);

	g_assert_cmpint(serving, >, 0);
	g_assert_true(t_load_wait_answers(l, serving, 1));
}

/* Five `systemctl restart`, two kills of the main process, haproxy's
 * binary replaced then a restart (what its package's upgrade does), each
 * under a load of its own; how many refused in all. */
static guint measure_restarts(struct container *c, const char *unit,
			     guint16 port, const char *label)
{
	struct t_load l;
	GPid serving;
	guint refused;

	serving = load_answered(&l, port);
	for (guint i = 0; i < 5; i++) {
		g_assert_cmpint(sctl(c, "restart", unit), ==, 0);
		serving = wait_serving(port, serving);
		g_assert_cmpint(serving, >, 0);
	}
	g_assert_true(t_load_wait_answers(&l, serving, 1));
	refused = measured(label, "5 x systemctl restart", &l);

	serving = load_answered(&l, port);
	for (guint i = 0; i < 2; i++) {
		g_autofree gchar *main_pid = g_strdup_printf(
			"%d", prop_int(c, unit, "MainPID"));
		g_autofree gchar *n = g_strdup_printf(
			"%d", prop_int(c, unit, "NRestarts") + 1);
		const char *const restarted[] = {
			"NRestarts", n, "ActiveState", "active",
			"SubState", "running", NULL,
		};

		g_assert_cmpint(cexec(c, NULL, "kill", "-KILL", main_pid,
				      NULL), ==, 0);
		g_assert_true(wait_props(c, unit, restarted));
		serving = wait_serving(port, serving);
		g_assert_cmpint(serving, >, 0);
	}
	g_assert_true(t_load_wait_answers(&l, serving, 1));
	refused += measured(label, "2 x kill -9 MainPID", &l);

	serving = load_answered(&l, port);
	g_assert_cmpint(cexec(c, NULL, "sh", "-c",
			      "cp /usr/sbin/haproxy /usr/sbin/haproxy.dpkg-new"
			      " && mv -f /usr/sbin/haproxy.dpkg-new "
			      "/usr/sbin/haproxy", NULL), ==, 0);
	g_assert_cmpint(sctl(c, "restart", unit), ==, 0);
	load_answered_by_new(&l, port, serving);
	return refused + measured(label, "haproxy upgraded (restart)", &l);
}

/* The wrapper's package upgraded (N to N+next) under a load; how many
 * refused. */
static guint measure_upgrade(struct container *c, guint16 port,
			    const char *label)
{
	struct t_load l;

	load_answered(&l, port);
	dpkg(c, "-i", DEB_NEXT);
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 1));
	return measured(label, "wrapper upgraded (dpkg -i)", &l);
}

/*
 * A measurement for make bench-units, not a check (only with
 * HSW_MEASURE set): in one container, Debian's haproxy.service alone
 * (haproxy -Ws), then through the drop-in, then the package's unit, each
 * through the same restarts and kills, haproxy's upgrade, the wrapper's
 * upgrade and its removal, each step under a load of its own. The two
 * that run the wrapper refuse nothing but at the package's unit's stop.
 */
static void test_measure_units(struct fixture *f, gconstpointer data)
{
	const char *alone = "Debian's unit (haproxy -Ws)";
	const char *dropin = "Debian's unit + drop-in";
	const char *ours = "the package's unit";
	guint16 port = t_free_port();
	struct t_load l;

	if (!packages_in(f))
		return;
	put_text(f->c, "/var/lib/haproxy/dev/.keep", "");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", port, NULL);
	/* Debian's own start limit (5 in 10 s) would fail the unit within
	 * the burst: lifted, the refusals are the restarts' own. */
	put_text(f->c, DROPIN_DIR "/limit.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	g_assert_cmpint(sctl(f->c, "start", DEBIAN_UNIT), ==, 0);
	measure_restarts(f->c, DEBIAN_UNIT, port, alone);
	g_assert_cmpint(cexec(f->c, NULL, "rm", DROPIN_DIR "/limit.conf",
			      NULL), ==, 0);

	/* The drop-in as shipped, its own limits. */
	dpkg(f->c, "-i", DEB_N);
	link_dropin(f->c);
	g_assert_cmpint(sctl(f->c, "restart", DEBIAN_UNIT), ==, 0);
	assert_same_service(f->c, DEBIAN_UNIT,
			    prop_int(f->c, DEBIAN_UNIT, "MainPID"));
	g_assert_cmpuint(measure_restarts(f->c, DEBIAN_UNIT, port, dropin), ==,
			 0);
	g_assert_cmpuint(measure_upgrade(f->c, port, dropin), ==, 0);
	/* Removed: handed back to haproxy -Ws, serving on. */
	load_answered(&l, port);
	dpkg(f->c, "-r", PROG);
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 1));
	g_assert_cmpuint(measured(dropin, "wrapper removed (dpkg -r)", &l), ==,
			 0);
	g_assert_cmpint(sctl(f->c, "stop", DEBIAN_UNIT), ==, 0);

	dpkg(f->c, "-i", DEB_N);
	g_assert_cmpint(sctl(f->c, "start", UNIT), ==, 0);
	g_assert_cmpuint(measure_restarts(f->c, UNIT, port, ours), ==, 0);
	g_assert_cmpuint(measure_upgrade(f->c, port, ours), ==, 0);
	/* Removed: the package stops its unit; what the load saw until
	 * dpkg returned. */
	load_answered(&l, port);
	dpkg(f->c, "-r", PROG);
	measured(ours, "wrapper removed (dpkg -r)", &l);
	assert_prop(f->c, UNIT, "ActiveState", "inactive");
	dpkg(f->c, "--purge", PROG);
}

#define ADD(path, fn) \
	g_test_add("/package/" path, struct fixture, &with_dpkg, fx_setup, \
		   fn, fx_teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();

	ADD("upgrade-downgrade-remove", test_upgrade_downgrade_remove);
	ADD("debian-unit", test_debian_unit);
	ADD("restart-burst", test_restart_burst);
	ADD("identity", test_identity);
	ADD("metrics-timer", test_metrics_timer);
	ADD("version-bump", test_version_bump);
	/* A measurement, only when asked. */
	if (g_getenv("HSW_MEASURE"))
		ADD("measure/units", test_measure_units);
	return g_test_run();
}
