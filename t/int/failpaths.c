/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hand-offs, upgrades and probes failing: a hand-off refused
 * or stopped while a reload or a client waits, a self-upgrade into an
 * image that cannot run the command line, a client gone while it waits,
 * a probe that never answers, requests while a reload is held, a
 * handed-over state that cannot be read: haproxy still serving, the
 * wrapper still supervising, every waiting client answered, nothing
 * pending lost. In each case: a clear error in the log, the serving
 * generation keeps serving (the same pid answers HTTP), nothing is
 * orphaned, and the wrapper goes on unless the case is fatal by design.
 * The test process is a child subreaper: whatever the wrapper leaves
 * behind is reparented to it, where "nothing orphaned" is checked. Waits
 * are on events (log lines, exits, sockets, /proc), all bounded.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/faults.h"

/*
 * A reload asked for while a hand-off is checked runs once the hand-off
 * is refused (haproxy 1.7 has no master-worker mode), without another
 * request.
 */
static void test_handoff_refused_runs_pending(void)
{
	struct t_command handoff = { 0 };
	struct t_site f;

	fx_init_gated(&f, "1.7.14", "-v");
	t_site_start_wrapper(&f, NULL, NULL);
	/* A -Ds parent is ready; its worker answers. */
	g_assert_cmpint(wrapper_wait_ready(f.w, 1, T_WAIT), >, 0);
	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	wrapper_signal(f.w, SIGHUP);
	t_site_wait_log(&f, "SIGHUP: " LOG_RELOAD_QUEUED);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "no master-worker mode"));
	t_site_wait_log(&f, LOG_NOT_HANDING_OFF);
	t_site_wait_log(&f, LOG_RELOADING_ON "SIGHUP");
	g_assert_cmpint(wrapper_wait_ready(f.w, 2, T_WAIT), >, 0);
	t_command_clear(&handoff);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

/*
 * A stop while the hand-off checks haproxy: the --handoff client hears
 * "stopping" at once, and no reload that never happened is recorded.
 */
static void test_stop_during_handoff(void)
{
	struct t_command handoff = { 0 };
	g_autofree gchar *status = NULL;
	int conn;
	struct t_site f;
	GPid gen2;

	fx_init_gated(&f, "2.6.12", "-v");
	t_site_start_wrapper(&f, NULL, NULL);
	fx_serving(&f, 1);
	wrapper_signal(f.w, SIGUSR2);
	gen2 = fx_serving(&f, 2);
	/* Held open: the graceful stop lasts while we look. */
	conn = t_hold_connection(f.port);
	g_assert_cmpint(conn, >=, 0);
	g_assert_cmpint(t_http_pid(f.port), ==, gen2);

	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	wrapper_signal(f.w, SIGUSR1);
	t_site_wait_log(&f, LOG_STOPPING_GRACEFULLY);
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "error: stopping"));

	/* The state, as --status --json tells it. */
	g_assert_cmpint(t_client("--status", f.rundir_opt, "--json", &status,
				 NULL), ==, 0);
	g_test_message("%s", status);
	/* No failed generation, no failed reload: a stop is neither. */
	g_assert_null(strstr(status, "\"failed\""));
	g_assert_nonnull(strstr(status, "\"reloads_failed\":0,"));
	g_assert_nonnull(strstr(status, "\"last_reload\":{\"result\":\"ok\""));
	fx_open_gate(&f);
	close(conn);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	t_command_clear(&handoff);
	t_site_clear(&f);
}

/*
 * A new image that cannot run today's command line (it rejects one of
 * its options), or that has no dry run: the reload goes on with the
 * running image, says why, and the client that asked hears it.
 */
static void upgrade_refused(const char *image, int code)
{
	g_autofree gchar *why = g_strdup_printf(LOG_EXITED_FMT, code);
	const char *const opts[] = { "--drain-timeout=30", NULL };
	struct t_command reload = { 0 };
	g_autofree gchar *bin = NULL;
	const char *line;
	struct stat orig;
	struct t_site f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	bin = wrapper_copy(&f);
	g_assert_cmpint(stat(bin, &orig), ==, 0);
	t_site_start_wrapper(&f, bin, opts);
	gen1 = fx_serving(&f, 1);
	install_file(image, bin);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(reload.out->str, "not upgraded"));
	line = t_site_wait_log(&f, LOG_UPGRADE_REFUSED);
	g_test_message("%s", line);
	g_assert_true(g_str_has_prefix(line, LOG_PRIO_ERR));
	g_assert_nonnull(strstr(line, why));
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_REEXECUTING_ANY), ==, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_serving(&f, 2);
	assert_runs_inode(f.w->pid, &orig);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

static void test_upgrade_rejects_argv(void)
{
	upgrade_refused(fx_helper("haproxy-systemd-wrapper-next-rejecting"),
			64);
}

static void test_upgrade_without_dry_run(void)
{
	static const char script[] =
		"#!/bin/sh\n"
		"if [ \"$1\" = --upgrade-check ]; then\n"
		"	echo 'haproxy-systemd-wrapper 9.9 handover master-worker "
		"state-format 1'\n"
		"	exit 0\n"
		"fi\n"
		"echo \"unknown option $1\" >&2\n"
		"exit 64\n";
	g_autofree gchar *dir = t_tmpdir();
	g_autofree gchar *path = t_write_file(dir, "old-image", script);

	g_assert_cmpint(g_chmod(path, 0755), ==, 0);
	upgrade_refused(path, 64);
	t_rmtree(dir);
}

/* The upgrade's execv fails: the waiting client's descriptor, made
 * inheritable for the exec, is close-on-exec again. */
static void test_upgrade_exec_fails(void)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	struct t_command reload = { 0 };
	struct shim shim;
	struct t_site f;

	fx_init_gated(&f, "2.6.12", "-sf");
	shim_setup(&f, &shim, "");
	t_site_start_wrapper(&f, NULL, opts);
	fx_serving(&f, 1);
	shim_set(&shim, "self-execv");
	fx_close_gate(&f);
	fx_client(&f, &reload, "--reload");
	t_site_wait_log(&f, LOG_REEXEC_FAILED);
	fx_wait_gate_entered(&f);
	/* Between two events: GLib's spawn holds an inheritable pipe until
	 * the child's exec is seen, which a loaded host can stretch past
	 * the gate. */
	g_assert_cmpint(t_site_client(&f, "--status", NULL, NULL), ==, 0);
	g_assert_cmpint(inheritable_fd(f.w->pid), ==, -1);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 2);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	shim_clear(&shim);
	t_site_clear(&f);
}

/*
 * A --reload client gone while its reload runs (and one gone while the
 * upgrade's dry run runs): the wrapper answers into nothing and goes on.
 */
static void test_client_vanishes(void)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	struct t_command reload = { 0 };
	int gone;
	struct t_site f;

	fx_init_gated(&f, "2.6.12", "-sf");
	t_site_start_wrapper(&f, NULL, opts);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_gate_entered(&f);
	close(gone);
	fx_open_gate(&f);
	fx_serving(&f, 2);

	/* Gone while the upgrade runs (dry run or exec): the re-executed
	 * image serves, and answers the next client. */
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	t_site_wait_log(&f, LOG_RELOADING_ON "request");
	close(gone);
	fx_serving(&f, 3);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 4);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

/*
 * The version probe of a reload hangs: after its time limit the reload
 * fails, the --reload client hears why, the old generation serves on, the
 * probe is killed and reaped, and the reload asked for meanwhile runs.
 * The shim makes that probe's 10 s limit 1.5 s (the product has no such
 * knob); the next probe gets the full limit.
 */
static void test_probe_timeout(void)
{
	struct t_command reload = { 0 };
	g_autoptr(GArray) gens = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autofree gchar *shortened = NULL;
	struct shim shim;
	struct t_site f;
	GPid gen1, probe;

	fx_init_gated(&f, "2.6.12", "-v");
	shim_setup(&f, &shim, "");
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);
	g_array_append_val(gens, gen1);
	fx_close_gate(&f);
	fx_touch_haproxy(&f);
	shim_set(&shim, "short-10s-timer");
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);
	probe = fx_gate_pid(&f);
	shortened = t_wait_file_line(shim.log, "short-10s-timer", NULL, 1,
				     T_WAIT);
	g_assert_nonnull(shortened);
	shim_set(&shim, "");
	wrapper_signal(f.w, SIGHUP);
	t_site_wait_log(&f, "SIGHUP: " LOG_RELOAD_QUEUED);

	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
	g_test_message("%s", reload.err->str);
	g_assert_nonnull(strstr(reload.err->str, "-v: no answer within the "
						 "time limit"));
	g_assert_true(t_wait_gone(probe, T_WAIT));
	/* The pending reload's probe may be held at the gate by now. */
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);
	fx_open_gate(&f);
	t_site_wait_log(&f, LOG_RELOADING_ON "SIGHUP");
	g_array_index(gens, GPid, 0) = fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	assert_children_only(f.w->pid, gens);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	shim_clear(&shim);
	t_site_clear(&f);
}

/* A --reload client gone while the version probe runs: the reload
 * completes, and the next client is served. */
static void test_probe_client_vanishes(void)
{
	struct t_command reload = { 0 };
	struct t_site f;
	int gone;

	fx_init_gated(&f, "2.6.12", "-v");
	t_site_start_wrapper(&f, NULL, NULL);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_touch_haproxy(&f);
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_gate_entered(&f);
	close(gone);
	fx_open_gate(&f);
	fx_serving(&f, 2);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 3);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

/*
 * While a reload is held (its haproxy loading): a hand-off is refused at
 * once, a stop answers the waiting --reload client, and nothing runs
 * after the stop.
 */
static void test_requests_during_reload(void)
{
	struct t_command reload = { 0 }, handoff = { 0 };
	struct t_site f;
	GPid gen1;

	gen1 = fx_hold_request(&f, "-sf", &reload, "--reload");

	fx_client(&f, &handoff, "--handoff");
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "in progress"));
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);

	wrapper_signal(f.w, SIGTERM);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(reload.err->str, "error: stopping"));
	fx_open_gate(&f);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	{
		g_autofree gchar *ready2 = g_strdup_printf(
			LOG_GENERATION_READY_FMT, 2);

		g_assert_null(wrapper_find_log(f.w, ready2));
	}
	t_command_clear(&reload);
	t_command_clear(&handoff);
	t_site_clear(&f);
}

/*
 * The old image's generations are the new image's children whatever the
 * state says: those it names (and are ours) are adopted, a child it does
 * not name is stopped, and the log says so. Modelled by a shell that
 * starts them, then execs the wrapper with a state one token of which is
 * garbage.
 */
static void test_handover_malformed(void)
{
	g_autofree gchar *script = NULL, *cfg = NULL, *text = NULL;
	g_autofree gchar *fake_log = NULL, *started = NULL;
	const char *prefix[] = { "/bin/sh", "-c", NULL, NULL };
	const char *args[8];
	struct t_site f;
	GPid gen1, stray;

	t_site_init(&f);
	f.with_runtime_dir = TRUE;
	fake_log = g_build_filename(f.dir, "fake.log", NULL);
	t_site_setenv(&f, "FAKE_HAPROXY_LOG", fake_log);
	text = g_strdup_printf("bind 127.0.0.1:%u\n", f.port);
	g_free(t_write_file(f.dir, "haproxy.cfg", text));
	script = g_strdup_printf(
		"%s -f %s -db & gen=$!\n"
		"sleep 600 & stray=$!\n"
		"echo \"$gen $stray\" > %s/started.tmp\n"
		"mv %s/started.tmp %s/started\n"
		"export HAPROXY_WRAPPER_STATE=\"1 2 0 12 0 1 0 0 "
		"1:$gen:1:1:0:2.6.12 w:garbage\"\n"
		"exec \"$0\" \"$@\"\n",
		t_fake_path(), f.cfg, f.dir, f.dir, f.dir);
	prefix[2] = script;
	args[0] = g_strdup_printf("--haproxy=%s", t_fake_path());
	args[1] = f.rundir_opt;
	args[2] = "-f";
	args[3] = f.cfg;
	args[4] = "-p";
	args[5] = f.pidfile;
	args[6] = NULL;
	f.w = wrapper_start_prefixed(prefix, args,
		(const char *const *)f.env->pdata);
	g_free((gchar *)args[0]);
	started = g_build_filename(f.dir, "started", NULL);
	g_assert_true(wait_file(started));
	{
		g_autofree gchar *pids = NULL;

		g_assert_true(g_file_get_contents(started, &pids, NULL, NULL));
		g_assert_cmpint(sscanf(pids, "%d %d", &gen1, &stray), ==, 2);
	}
	g_assert_true(t_wait_gone(stray, T_WAIT));
	t_site_wait_log(&f, LOG_STATE_UNREADABLE);
	{
		g_autofree gchar *adopted = g_strdup_printf(
			LOG_RUNNING_ADOPTED_FMT, 1);

		t_site_wait_log(&f, adopted);
	}
	/* The reload the state was about: gen1 soft-stops, gen2 serves. */
	fx_serving(&f, 2);
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	fx_stop_ok(&f);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_test_add_func("/failpaths/handoff/refused-runs-pending",
			test_handoff_refused_runs_pending);
	g_test_add_func("/failpaths/handoff/stop-during-check",
			test_stop_during_handoff);
	g_test_add_func("/failpaths/upgrade/rejects-argv",
			test_upgrade_rejects_argv);
	g_test_add_func("/failpaths/upgrade/without-dry-run",
			test_upgrade_without_dry_run);
	g_test_add_func("/failpaths/upgrade/exec-fails",
			test_upgrade_exec_fails);
	g_test_add_func("/failpaths/client-vanishes", test_client_vanishes);
	g_test_add_func("/failpaths/probe-timeout", test_probe_timeout);
	g_test_add_func("/failpaths/probe-client-vanishes",
			test_probe_client_vanishes);
	g_test_add_func("/failpaths/requests-during-reload",
			test_requests_during_reload);
	g_test_add_func("/failpaths/handover-malformed",
			test_handover_malformed);
	return g_test_run();
}
