/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Debian package as an administrator lives with it, under a real
 * systemd 252 (t/container/container.c, the host's root with a writable
 * copy of its dpkg database): installed, enabled and started, then
 * upgraded to a higher version (build/deb-next/, the same tree as version
 * VERSION+next, its wrapper saying so), downgraded back, removed and
 * purged, all while a load of HTTP requests runs on 127.0.0.1.
 *
 * An upgrade must not take the service down: the maintainer scripts leave
 * the unit running, make systemd read the new unit files and reload the
 * running wrapper, whose self-upgrade moves it onto the new binary with
 * the same MainPID; not one request fails. The same for Debian's own
 * haproxy.service run through the wrapper by the drop-in. A removal stops
 * what runs the wrapper and leaves nothing in /run; a purge leaves
 * nothing at all, the metrics file for node_exporter included.
 *
 * Skipped, with the reason, where no container can run or where the two
 * packages are not built (make deb, make tests).
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
#define METRICS_FILE	"/var/lib/prometheus/node-exporter/haproxy_wrapper.prom"
#define EXAMPLES	"/usr/share/doc/" PROG "/examples"
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

/* dpkg with these arguments, which must succeed; its output logged. */
static void dpkg(struct container *c, const char *action, const char *what)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	const char *const argv[] = { "dpkg", action, what, NULL };
	int code = cexecv(c, CMD_TIMEOUT_S, &out, &err, argv);

	g_test_message("dpkg %s %s: %s%s", action, what, out, err);
	g_assert_cmpint(code, ==, 0);
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
 * service stays up and ends on that package's wrapper. */
static void install_under_load(struct container *c, const char *unit,
			       guint16 port, GPid main_pid, const char *path,
			       const char *version)
{
	struct t_load l;

	t_load_start_paced(&l, port, 1000);
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 5));
	dpkg(c, "-i", path);
	assert_same_service(c, unit, main_pid);
	assert_wrapper_version(c, version);
	/* Answers after the upgrade too, then not one failed. */
	g_assert_true(t_load_wait_answers(&l, t_http_pid(port), 5));
	g_assert_cmpuint(t_load_finish(&l), ==, 0);
	g_test_message("%s: %u requests while installing %s, 0 failed",
		       unit, l.requests, version);
}

/* Nothing of a stopped wrapper, or of the removed package, left in /run:
 * the units' RuntimeDirectory= (systemd removes it) and its parent (the
 * package does), the pidfile (the wrapper does). */
static void assert_run_clean(struct container *c)
{
	g_assert_false(exists_in(c, PIDFILE));
	g_assert_false(exists_in(c, RUNDIR));
	g_assert_false(exists_in(c, "/run/" PROG));
}

/* Version N enabled and started, N+1 over it, N again, removed, purged. */
static void test_upgrade_downgrade_remove(struct fixture *f,
					  gconstpointer data)
{
	struct svc s = {
		.unit = UNIT,
		.pidfile = PIDFILE,
		.port = t_free_port(),
		.notify = TRUE,
	};

	if (!packages_in(f))
		return;
	dpkg(f->c, "-i", DEB_N);
	put_config(f->c, "/etc/haproxy/haproxy.cfg", s.port, NULL);
	g_assert_cmpint(cexec(f->c, NULL, "systemctl", "enable", UNIT, NULL),
			==, 0);
	check_start(f->c, &s);
	assert_wrapper_version(f->c, WRAPPER_VERSION);

	install_under_load(f->c, UNIT, s.port, s.main_pid, DEB_NEXT,
			   NEXT_VERSION);
	/* A downgrade is an upgrade to an older version: the same. */
	install_under_load(f->c, UNIT, s.port, s.main_pid, DEB_N,
			   WRAPPER_VERSION);

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
	svc_clear(&s);
}

/* Debian's haproxy.service through the drop-in the package ships as an
 * example: upgraded under load the same way. */
static void test_debian_unit_upgrade(struct fixture *f, gconstpointer data)
{
	guint16 port = t_free_port();
	GPid main_pid;

	if (!packages_in(f))
		return;
	dpkg(f->c, "-i", DEB_N);
	g_assert_cmpint(cexec(f->c, NULL, "mkdir", "-p",
			      UNIT_DIR "/" DEBIAN_UNIT ".d", NULL), ==, 0);
	g_assert_cmpint(cexec(f->c, NULL, "cp",
			      EXAMPLES "/haproxy.service.d/wrapper.conf",
			      UNIT_DIR "/" DEBIAN_UNIT ".d/", NULL), ==, 0);
	/* The chroot's log socket of BindReadOnlyPaths= (the host's root
	 * booted --volatile=yes has no /var). */
	put_text(f->c, "/var/lib/haproxy/dev/.keep", "");
	put_config(f->c, "/etc/haproxy/haproxy.cfg", port, NULL);
	g_assert_cmpint(sctl(f->c, "daemon-reload", NULL), ==, 0);
	g_assert_cmpint(sctl(f->c, "start", DEBIAN_UNIT), ==, 0);
	main_pid = prop_int(f->c, DEBIAN_UNIT, "MainPID");
	g_assert_cmpint(main_pid, >, 0);
	assert_same_service(f->c, DEBIAN_UNIT, main_pid);
	g_assert_cmpint(t_http_pid(port), >, 0);
	assert_wrapper_version(f->c, WRAPPER_VERSION);

	install_under_load(f->c, DEBIAN_UNIT, port, main_pid, DEB_NEXT,
			   NEXT_VERSION);

	/* Removed: haproxy.service would run a binary that is gone; it is
	 * stopped, not left to fail at its next reload or restart. */
	dpkg(f->c, "-r", PROG);
	assert_prop(f->c, DEBIAN_UNIT, "ActiveState", "inactive");
	g_assert_cmpint(t_http_pid(port), ==, 0);
	assert_run_clean(f->c);
}

/* The timer has started its service, and that run is over (the service
 * went inactive after the trigger); bounded. */
static void wait_timer_run(struct container *c)
{
	gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

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
		g_usleep(50 * 1000);
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
	dpkg(f->c, "--purge", PROG);
	svc_clear(&s);
}

#define ADD(path, fn) \
	g_test_add("/package/" path, struct fixture, &with_dpkg, fx_setup, \
		   fn, fx_teardown)

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();

	ADD("upgrade-downgrade-remove", test_upgrade_downgrade_remove);
	ADD("debian-unit-upgrade", test_debian_unit_upgrade);
	ADD("metrics-timer", test_metrics_timer);
	return g_test_run();
}
