/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The self-upgrade's dry run and the hand-off's version check held open
 * (a gated image, a gated fake): a client gone, the image replaced, every
 * control signal, a --reload client, meanwhile. In each case: a clear error in the log, the serving
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
 * The wrapper runs from a copy that a script replaces: its dry runs wait
 * while dir/gate exists (after writing their pid to dir/gate.entered), then
 * every run goes on as the wrapper built here.
 */
static void fx_start_dry_run_gated(struct t_site *f)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	g_autofree gchar *bin = wrapper_copy(f);
	g_autofree gchar *gate = g_build_filename(f->dir, "gate", NULL);
	g_autofree gchar *script = NULL, *path = NULL;

	t_site_start_wrapper(f, bin, opts);
	fx_serving(f, 1);
	script = g_strdup_printf(
		"#!/bin/sh\n"
		"case \" $* \" in *\" --upgrade-dry-run \"*) [ -e %s ] && {\n"
		"	echo $$ > %s.entered\n"
		"	while [ -e %s ]; do sleep 0.01; done\n"
		"	} ;;\nesac\n"
		"exec %s \"$@\"\n",
		gate, gate, gate, t_wrapper_path());
	path = t_write_file(f->dir, "gated-image", script);
	install_file(path, bin);
	fx_close_gate(f);
}

/*
 * A --reload client gone while the dry run runs: the wrapper answers into
 * nothing, upgrades, serves, and answers the next client.
 */
static void test_dry_run_client_vanishes(void)
{
	struct t_command reload = { 0 };
	int gone;
	struct t_site f;
	GPid wrapper;

	if (!fx_init_real(&f))
		return;
	fx_start_dry_run_gated(&f);
	wrapper = f.w->pid;
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	fx_wait_gate_entered(&f);
	close(gone);
	fx_open_gate(&f);
	t_site_wait_log(&f, LOG_REEXECUTING "request");
	fx_serving(&f, 2);
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	fx_serving(&f, 3);
	g_assert_cmpint(f.w->pid, ==, wrapper);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

/*
 * The image replaced again while its dry run runs (a second install):
 * the file an exec would run now is not the one that passed. It is not
 * executed; the reload goes on with the running image and says why.
 */
static void test_dry_run_image_replaced(void)
{
	struct t_command reload = { 0 };
	g_autofree gchar *bin = NULL, *broken = NULL;
	struct t_site f;
	GPid wrapper;

	if (!fx_init_real(&f))
		return;
	fx_start_dry_run_gated(&f);
	wrapper = f.w->pid;
	bin = g_build_filename(f.dir, "bin", "haproxy-systemd-wrapper", NULL);
	broken = t_write_file(f.dir, "broken-image", "#!/bin/sh\nexit 70\n");
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);
	install_file(broken, bin);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(reload.out->str, "not upgraded"));
	t_site_wait_log(&f, LOG_REPLACED_IN_DRY_RUN);
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_REEXECUTING_ANY), ==, 0);
	fx_serving(&f, 2);
	g_assert_cmpint(f.w->pid, ==, wrapper);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);
	fx_stop_ok(&f);
	t_site_clear(&f);
}

static const int control_signals[] = { SIGUSR2, SIGHUP, SIGTERM, SIGUSR1 };

/*
 * A control signal while the dry run is held. A reload (SIGUSR2, SIGHUP)
 * waits and runs after the upgrade, in the new image; a stop (SIGTERM,
 * SIGUSR1) answers the waiting client, ends the dry run, and no exec
 * follows.
 */
static void test_signal_in_dry_run(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_autofree gchar *queued = g_strdup_printf(
		"SIG%s: " LOG_RELOAD_QUEUED, sigabbrev_np(sig));
	struct t_command reload = { 0 };
	struct t_site f;
	GPid gen1, dry_run;

	if (!fx_init_real(&f))
		return;
	fx_start_dry_run_gated(&f);
	gen1 = t_http_pid(f.port);
	fx_client(&f, &reload, "--reload");
	fx_wait_gate_entered(&f);
	dry_run = fx_gate_pid(&f);
	wrapper_signal(f.w, sig);
	if (sig == SIGUSR2 || sig == SIGHUP) {
		t_site_wait_log(&f, queued);
		fx_open_gate(&f);
		g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
		fx_serving(&f, 2);
		fx_serving(&f, 3);
		/* --self-upgrade=always: the reload that waited upgrades
		 * too (the new image knows it as pending, not by its
		 * signal). */
		g_assert_cmpuint(wrapper_count_log(f.w, LOG_REEXECUTING),
				 ==, 2);
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		fx_stop_ok(&f);
	} else {
		g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
		g_assert_nonnull(strstr(reload.err->str, "error: stopping"));
		g_assert_true(t_wait_gone(dry_run, T_WAIT));
		g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		g_assert_cmpuint(wrapper_count_log(f.w, LOG_REEXECUTING_ANY),
				 ==, 0);
		fx_open_gate(&f);
	}
	t_command_clear(&reload);
	t_site_clear(&f);
}

/*
 * A control signal while the hand-off checks haproxy's version. A stop
 * (SIGTERM, SIGUSR1) abandons the hand-off, tells its client, ends the
 * check; the wrapper stops. A reload (SIGUSR2, SIGHUP) waits for the
 * hand-off: haproxy -Ws reads the configuration after the request, which
 * is what the reload was for; it serves, and takes its reloads itself.
 */
static void test_signal_in_handoff(gconstpointer data)
{
	int sig = GPOINTER_TO_INT(data);
	g_autofree gchar *queued = g_strdup_printf(
		"SIG%s: " LOG_RELOAD_QUEUED, sigabbrev_np(sig));
	struct t_command handoff = { 0 };
	struct t_site f;
	GPid gen1, check;

	gen1 = fx_hold_request(&f, "-v", &handoff, "--handoff");
	check = fx_gate_pid(&f);
	wrapper_signal(f.w, sig);
	if (sig == SIGUSR2 || sig == SIGHUP) {
		t_site_wait_log(&f, queued);
		g_assert_cmpint(t_http_pid(f.port), ==, gen1);
		fx_open_gate(&f);
		g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 0);
		g_assert_nonnull(strstr(handoff.out->str,
					"is now haproxy -Ws"));
		g_assert_true(wait_exe(f.w->pid, t_fake_path()));
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		g_assert_cmpint(t_wait_serving(f.port, T_WAIT), >, 0);
		/* Verified above: the pid is haproxy's master now. */
		wrapper_signal(f.w, SIGTERM);
		g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	} else {
		g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
		g_assert_nonnull(strstr(handoff.err->str, "error: stopping"));
		g_assert_true(t_wait_gone(check, T_WAIT));
		g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
		g_assert_true(t_wait_gone(gen1, T_WAIT));
		g_assert_null(wrapper_find_log(f.w, LOG_HANDING_OFF));
		fx_open_gate(&f);
	}
	t_command_clear(&handoff);
	t_site_clear(&f);
}

/*
 * A --reload client that waits while the hand-off checks haproxy, and
 * one that is gone by then: the waiting one is answered, not left with
 * an end of file, and the gone one costs nothing.
 */
static void test_reload_client_in_handoff(void)
{
	struct t_command handoff = { 0 }, reload = { 0 }, status = { 0 };
	struct t_site f;
	int gone;

	fx_hold_request(&f, "-v", &handoff, "--handoff");
	/* The --reload client first, alone: the queued line is its own (a
	 * client that connected only after the exec would find no wrapper). */
	fx_client(&f, &reload, "--reload");
	g_assert_true(wrapper_wait_log(f.w, LOG_RELOAD_QUEUED_BY_CLIENT,
				       T_WAIT) != NULL);
	gone = connect_control(&f);
	g_assert_cmpint(send(gone, "reload\n", 7, MSG_NOSIGNAL), ==, 7);
	/* A status answer comes after the loop has read what was sent
	 * before it asked. */
	fx_client(&f, &status, "--status");
	g_assert_cmpint(t_command_finish(&status, T_WAIT), ==, 0);
	close(gone);
	fx_open_gate(&f);
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 0);
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 0);
	g_assert_nonnull(strstr(reload.out->str, "haproxy -Ws"));
	g_assert_true(wait_exe(f.w->pid, t_fake_path()));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), >, 0);
	wrapper_signal(f.w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(f.w, T_WAIT), ==, 0);
	t_command_clear(&handoff);
	t_command_clear(&reload);
	t_command_clear(&status);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	g_test_add_func("/failpaths/dry-run/client-vanishes",
			test_dry_run_client_vanishes);
	g_test_add_func("/failpaths/dry-run/image-replaced",
			test_dry_run_image_replaced);
	for (guint i = 0; i < G_N_ELEMENTS(control_signals); i++) {
		g_autofree gchar *path = g_strdup_printf(
			"/failpaths/dry-run/SIG%s",
			sigabbrev_np(control_signals[i]));

		g_test_add_data_func(path, GINT_TO_POINTER(control_signals[i]),
				     test_signal_in_dry_run);
	}
	for (guint i = 0; i < G_N_ELEMENTS(control_signals); i++) {
		g_autofree gchar *path = g_strdup_printf(
			"/failpaths/handoff/version-check/SIG%s",
			sigabbrev_np(control_signals[i]));

		g_test_add_data_func(path, GINT_TO_POINTER(control_signals[i]),
				     test_signal_in_handoff);
	}
	g_test_add_func("/failpaths/handoff/reload-client",
			test_reload_client_in_handoff);
	return g_test_run();
}
