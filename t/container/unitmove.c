/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * doc/migration.md, "Moving to upstream's unit, one host at a time", run as
 * written under a real systemd 252 (t/container/container.c) with the .deb
 * installed, and again in a Debian 13 tree (systemd 257, haproxy 3.0),
 * under a load from the host that counts every refused or failed request:
 *
 *   1. the historic unit (haproxy.service from contrib's
 *      haproxy-historic.service) -> the packaged
 *      haproxy-systemd-wrapper.service;
 *   2. that unit -> the same unit with --master-worker=on;
 *   3. the hand-off to haproxy -Ws in place, and a reload after it;
 *   4. that unit -> Debian's own haproxy.service (haproxy -Ws).
 *
 * Each switch of units goes through a bridge: a plain haproxy -Ws in a
 * transient unit, on a copy of the configuration and a pidfile of its
 * own, which shares the listening ports through SO_REUSEPORT while one
 * unit stops gracefully (KillSignal=SIGUSR1 in a runtime drop-in, then
 * `systemctl stop`) and the next one starts. No unit's wrapper ever meets
 * another unit's haproxy on its pidfile or configuration, so nothing here
 * depends on whether a wrapper takes over or adopts across units.
 *
 * Asserted: no request failed in any step, every reload succeeds, a unit
 * left behind is never started again (NRestarts=0, inactive), and no unit
 * is failed at the end. The commands and what they print are in the test's
 * messages (prove -v): doc/migration.md quotes them.
 */
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/container/container.h"
#include "t/lib/harness.h"

#define OLD		"haproxy.service"	/* historic, then Debian's */
#define NEW		PROG ".service"
#define BRIDGE		"haproxy-bridge.service"
#define CFG		"/etc/haproxy/haproxy.cfg"
#define PIDFILE		"/run/haproxy.pid"
/* A request every 2 ms: light beside the container, dense enough that
 * a closed listener in any step would be met by many requests. */
#define PACE_US		2000

/* A command as the administrator types it, run by sh in the container;
 * what it prints is logged. Returns its exit code. */
static int G_GNUC_PRINTF(3, 4) shell(struct container *c, gchar **out,
				     const char *fmt, ...)
{
	g_autofree gchar *cmd = NULL;
	g_autofree gchar *o = NULL;
	g_autofree gchar *e = NULL;
	const char *argv[] = { "sh", "-c", NULL, NULL };
	va_list ap;
	int code;

	va_start(ap, fmt);
	cmd = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	argv[2] = cmd;
	code = cexecv(c, CMD_TIMEOUT_S, &o, &e, argv);
	g_test_message("# %s\n%s%s[exit %d]", cmd, o ? o : "", e ? e : "",
		       code);
	if (out)
		*out = g_strconcat(o ? o : "", e ? e : "", NULL);
	return code;
}

#define RUN(c, ...) g_assert_cmpint(shell(c, NULL, __VA_ARGS__), ==, 0)

/* Failures of the load since the last mark, and the requests. */
struct mark {
	guint requests;
	guint failures;
};

static struct mark load_since(struct t_load *l, struct mark *last)
{
	struct mark now, d;

	g_mutex_lock(&l->lock);
	now = (struct mark){ l->requests, l->failures };
	g_mutex_unlock(&l->lock);
	d = (struct mark){ now.requests - last->requests,
			   now.failures - last->failures };
	*last = now;
	return d;
}

static void step_done(struct t_load *l, struct mark *m, const char *step)
{
	struct mark d = load_since(l, m);

	g_test_message("step %s: %u requests, %u failed", step, d.requests,
		       d.failures);
	if (d.failures)
		g_test_message("first failures:\n%s", l->errors->str);
	g_assert_cmpuint(d.failures, ==, 0);
	/* The load ran through the step. */
	g_assert_cmpuint(d.requests, >, 0);
}

/* The bridge: haproxy -Ws on a copy of the configuration, beside the
 * unit that serves (SO_REUSEPORT); systemd-run returns once it serves
 * (Type=notify). */
static void bridge_start(struct container *c)
{
	/* The copy leaves out the stats sockets: they are paths, which the
	 * bridge would take from the serving unit (and remove at its end). */
	RUN(c, "sed '/^[[:space:]]*stats socket/d' " CFG
	       " > /run/haproxy-bridge.cfg");
	RUN(c, "systemd-run --unit=" BRIDGE " -p Type=notify "
	       "-p KillSignal=SIGUSR1 -p KillMode=mixed "
	       "-p SuccessExitStatus=143 "
	       "-p BindReadOnlyPaths=-/dev/log:/var/lib/haproxy/dev/log "
	       HAPROXY " -Ws -f /run/haproxy-bridge.cfg "
	       "-p /run/haproxy-bridge.pid");
	assert_prop(c, BRIDGE, "ActiveState", "active");
}

static void bridge_stop(struct container *c)
{
	RUN(c, "systemctl stop " BRIDGE);
	shell(c, NULL, "systemctl show -p LoadState,ActiveState,Result,"
		  "ExecMainStatus,ExecMainCode " BRIDGE);
	RUN(c, "rm -f /run/haproxy-bridge.cfg /run/haproxy-bridge.pid");
	/* A transient unit that stopped cleanly is collected (soon after
	 * systemctl returns): not failed, and its name free again. */
	g_assert_true(wait_props(c, BRIDGE, (const char *const[]){
		"LoadState", "not-found", "Result", "success", NULL }));
}

/* A graceful stop: SIGUSR1 to the unit's main process (the wrapper, or
 * a haproxy -Ws master), which ends once its haproxy has drained. A stop
 * by hand is never restarted (Restart=). */
static void graceful_stop(struct container *c, const char *unit)
{
	RUN(c, "mkdir -p /run/systemd/system/%s.d && "
	       "printf '[Service]\\nKillSignal=SIGUSR1\\n' "
	       "> /run/systemd/system/%s.d/graceful.conf && "
	       "systemctl daemon-reload", unit, unit);
	RUN(c, "systemctl stop %s", unit);
	RUN(c, "rm -r /run/systemd/system/%s.d && systemctl daemon-reload",
	    unit);
	assert_prop(c, unit, "ActiveState", "inactive");
	assert_prop(c, unit, "Result", "success");
	assert_prop(c, unit, "MainPID", "0");
}

/* The unit is what the steps left it: inactive, never restarted. */
static void assert_left_alone(struct container *c, const char *unit)
{
	assert_prop(c, unit, "ActiveState", "inactive");
	assert_prop(c, unit, "NRestarts", "0");
}

/* Bounded: until a haproxy other than not answers on port. */
static GPid wait_new_answer(guint16 port, GPid not)
{
	GPid pid = wait_serving(port, not);

	g_assert_cmpint(pid, >, 0);
	return pid;
}

static void test_unitmove(struct fixture *f, gconstpointer data)
{
	g_autofree gchar *out = NULL;
	g_autofree gchar *exe = NULL;
	guint16 port = t_free_port();
	struct mark m = { 0 };
	struct t_load l;
	GPid main_pid, worker, master;

	if (!fx_deb_copied(f))
		return;
	RUN(f->c, "dpkg -i /tmp/hsw.deb >/dev/null");
	put_config(f->c, CFG, port, NULL);
	/* Debian's haproxy.service binds /dev/log into haproxy's chroot. */
	put_text(f->c, "/var/lib/haproxy/dev/.keep", "");

	/* Where the host starts: the 1.5-era unit as haproxy.service. */
	install_unit(f->c, "haproxy-historic.service", OLD);
	put_text(f->c, UNIT_DIR "/" NEW ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(f->c, "systemctl daemon-reload && systemctl start " OLD);
	worker = wait_new_answer(port, 0);
	t_load_start_paced(&l, port, PACE_US);
	g_assert_true(t_load_wait_answers(&l, worker, 10));
	load_since(&l, &m);

	/* 1. historic unit -> the packaged unit. */
	bridge_start(f->c);
	graceful_stop(f->c, OLD);
	RUN(f->c, "systemctl disable " OLD);
	RUN(f->c, "systemctl enable --now " NEW);
	bridge_stop(f->c);
	main_pid = prop_int(f->c, NEW, "MainPID");
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, SBIN_WRAPPER);
	worker = wait_new_answer(port, 0);
	g_assert_cmpint(parent_of(f->c, worker), ==, main_pid);
	RUN(f->c, "systemctl reload " NEW);
	RUN(f->c, SBIN_WRAPPER " --status --json -p " PIDFILE);
	step_done(&l, &m, "1 historic -> " NEW);
	assert_left_alone(f->c, OLD);

	/* 2. the same unit, haproxy in master-worker mode under the
	 * wrapper: a changed command line, so a new start of the unit. */
	bridge_start(f->c);
	graceful_stop(f->c, NEW);
	RUN(f->c, "mkdir -p " UNIT_DIR "/" NEW ".d && printf '[Service]\\n"
		  "ExecStart=\\nExecStart=" SBIN_WRAPPER " --master-worker=on"
		  " -f $CONFIG -p $PIDFILE $EXTRAOPTS\\n' > " UNIT_DIR "/"
		  NEW ".d/master-worker.conf && systemctl daemon-reload");
	RUN(f->c, "systemctl start " NEW);
	bridge_stop(f->c);
	main_pid = prop_int(f->c, NEW, "MainPID");
	worker = wait_new_answer(port, 0);
	master = parent_of(f->c, worker);
	g_assert_cmpint(parent_of(f->c, master), ==, main_pid);
	RUN(f->c, "systemctl reload " NEW);
	worker = wait_new_answer(port, worker);
	step_done(&l, &m, "2 " NEW " -> --master-worker=on");
	assert_left_alone(f->c, OLD);

	/* 3. the hand-off: same unit, same MainPID, now haproxy -Ws. */
	RUN(f->c, SBIN_WRAPPER " --handoff -p " PIDFILE);
	worker = wait_new_answer(port, worker);
	g_clear_pointer(&exe, g_free);
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, HAPROXY);
	g_assert_cmpint(prop_int(f->c, NEW, "MainPID"), ==, main_pid);
	g_assert_cmpint(parent_of(f->c, worker), ==, main_pid);
	/* The unit's reload works after the hand-off too. */
	RUN(f->c, "systemctl reload " NEW);
	worker = wait_new_answer(port, worker);
	g_assert_cmpint(parent_of(f->c, worker), ==, main_pid);
	/* ... and still fails on a configuration haproxy refuses, the
	 * worker serving on. */
	put_config(f->c, CFG, port, "    no-such-keyword here\n");
	g_assert_cmpint(shell(f->c, NULL, "systemctl reload " NEW), !=, 0);
	g_assert_cmpint(t_http_pid(port), ==, worker);
	put_config(f->c, CFG, port, NULL);
	assert_prop(f->c, NEW, "ActiveState", "active");
	g_assert_cmpint(prop_int(f->c, NEW, "MainPID"), ==, main_pid);
	step_done(&l, &m, "3 hand-off, reload");

	/* 4. -> Debian's haproxy.service: the historic override goes. */
	bridge_start(f->c);
	graceful_stop(f->c, NEW);
	RUN(f->c, "systemctl disable " NEW);
	RUN(f->c, "rm -rf " UNIT_DIR "/" NEW ".d " UNIT_DIR "/" OLD " "
		  UNIT_DIR "/" OLD ".d");
	RUN(f->c, "systemctl daemon-reload");
	put_text(f->c, UNIT_DIR "/" OLD ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(f->c, "systemctl daemon-reload && systemctl enable --now " OLD);
	bridge_stop(f->c);
	g_clear_pointer(&out, g_free);
	out = prop(f->c, OLD, "FragmentPath");
	g_assert_true(g_str_has_suffix(out, "/lib/systemd/system/" OLD));
	main_pid = prop_int(f->c, OLD, "MainPID");
	g_clear_pointer(&exe, g_free);
	exe = exe_of(f->c, main_pid);
	g_assert_cmpstr(exe, ==, HAPROXY);
	worker = wait_new_answer(port, 0);
	RUN(f->c, "systemctl reload " OLD);
	wait_new_answer(port, worker);
	step_done(&l, &m, "4 " NEW " -> Debian's " OLD);
	g_assert_cmpuint(t_load_finish(&l), ==, 0);

	assert_left_alone(f->c, NEW);
	assert_prop(f->c, OLD, "NRestarts", "0");
	g_clear_pointer(&out, g_free);
	g_assert_cmpint(shell(f->c, &out, "systemctl list-units --failed "
				       "--no-legend --plain"), ==, 0);
	g_assert_cmpstr(g_strstrip(out), ==, "");
	RUN(f->c, "systemctl stop " OLD);
}

/*
 * What the shortcuts cost, measured for doc/migration.md rather than
 * promised: run with HSW_UNITMOVE_MEASURE=1 (prove -v shows the counts).
 * Asserted is only what does not depend on timing: a unit whose main
 * process is signalled by hand comes back through Restart=always, masked
 * at runtime or not.
 */
static guint load_step(struct t_load *l, struct mark *m, const char *what)
{
	struct mark d = load_since(l, m);

	g_test_message("measured: %s: %u requests, %u failed", what,
		       d.requests, d.failures);
	return d.failures;
}

static void test_shortcuts(struct fixture *f, gconstpointer data)
{
	guint16 port = t_free_port();
	struct mark m = { 0 };
	struct t_load l;
	GPid main_pid;

	if (!g_getenv("HSW_UNITMOVE_MEASURE")) {
		g_test_skip("a measurement: HSW_UNITMOVE_MEASURE=1 runs it");
		return;
	}
	if (!fx_deb_copied(f))
		return;
	RUN(f->c, "dpkg -i /tmp/hsw.deb >/dev/null");
	put_config(f->c, CFG, port, NULL);
	put_text(f->c, UNIT_DIR "/" NEW ".d/test.conf",
		 "[Unit]\nStartLimitIntervalSec=0\n");
	RUN(f->c, "systemctl daemon-reload && systemctl start " NEW);
	t_load_start_paced(&l, port, PACE_US);
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_since(&l, &m);

	for (guint i = 0; i < 3; i++) {
		RUN(f->c, "systemctl restart " NEW);
		g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0),
						  10));
		load_step(&l, &m, "systemctl restart");
	}
	RUN(f->c, "systemctl reload " NEW);
	load_step(&l, &m, "systemctl reload");

	/* SIGUSR1 by hand, Restart=always: started again. */
	main_pid = prop_int(f->c, NEW, "MainPID");
	RUN(f->c, "systemctl kill -s SIGUSR1 --kill-who=main " NEW);
	g_assert_true(wait_gone_in(f->c, main_pid));
	g_assert_true(wait_props(f->c, NEW, (const char *const[]){
		"NRestarts", "1", "ActiveState", "active", NULL }));
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_step(&l, &m, "kill -s SIGUSR1, Restart=always");

	/* The same, masked at runtime first: not started again, and
	 * nothing serves until it is unmasked and started. */
	main_pid = prop_int(f->c, NEW, "MainPID");
	RUN(f->c, "systemctl mask --runtime " NEW);
	RUN(f->c, "systemctl kill -s SIGUSR1 --kill-who=main " NEW);
	g_assert_true(wait_gone_in(f->c, main_pid));
	g_assert_true(wait_props(f->c, NEW, (const char *const[]){
		"MainPID", "0", NULL }));
	shell(f->c, NULL, "systemctl show -p ActiveState,SubState,Result,"
		  "NRestarts,LoadState " NEW);
	RUN(f->c, "systemctl unmask --runtime " NEW);
	shell(f->c, NULL, "systemctl reset-failed " NEW "; systemctl start "
		  NEW);
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_step(&l, &m, "mask --runtime, kill -s SIGUSR1, unmask, start");

	/* A stop with nothing else serving: refused until the next start. */
	RUN(f->c, "systemctl disable --now " NEW);
	RUN(f->c, "systemctl start " NEW);
	g_assert_true(t_load_wait_answers(&l, wait_new_answer(port, 0), 10));
	load_step(&l, &m, "disable --now, then start");
	t_load_finish(&l);
	RUN(f->c, "systemctl stop " NEW);
}

static const struct boot with_dpkg = { .tag = "mv", .dpkg = TRUE };
/* Debian 13: systemd 257, haproxy 3.0, its own dpkg database. */
static const struct boot trixie = { .tag = "mv13", .tree = trixie_tree };

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	container_handlers_install();
	g_test_add("/unitmove/historic-to-upstream", struct fixture,
		   &with_dpkg, fx_setup, test_unitmove, fx_teardown);
	g_test_add("/unitmove/debian13/historic-to-upstream", struct fixture,
		   &trixie, fx_setup, test_unitmove, fx_teardown);
	g_test_add("/unitmove/shortcuts-measured", struct fixture, &with_dpkg,
		   fx_setup, test_shortcuts, fx_teardown);
	return g_test_run();
}
