/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fork, pipe, exec and signalfd failing in the wrapper (t/fake/failshim.so,
 * preloaded): at start, at a reload, at a hand-off, at a self-upgrade. In each case: a clear error in the log, the serving
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

static const struct shim_case shim_cases[] = {
	{ "fork", "Resource temporarily unavailable" },
	{ "spawn-fork", "Resource temporarily unavailable" },
	{ "pipe2", "Too many open files" },
	{ "spawn-pipe2", "Too many open files" },
	{ "execve", "Permission denied" },
};

static void test_shim(gconstpointer data)
{
	const struct shim_case *c = data;
	const char *line;
	struct shim s;
	struct t_site f;
	GPid gen1;
	guint fds;

	if (!t_site_init_real(&f, NULL))
		return;
	shim_setup(&f, &s, "");
	t_site_start_wrapper(&f, NULL, NULL);
	gen1 = fx_serving(&f, 1);
	g_assert_false(shim_injected(&s, c->token));
	fds = settled_fds(&f, gen1);

	shim_set(&s, c->token);
	line = fx_reload_fails(&f, gen1);
	g_assert_nonnull(strstr(line, c->message));
	g_assert_true(shim_injected(&s, c->token));
	assert_fds(&f, fds);

	shim_set(&s, "");
	fx_reload_works(&f, 2);
	t_assert_exit_code(fx_stop(&f, SIGTERM), 0);
	shim_clear(&s);
	t_site_clear(&f);
}

/* No signalfd, no wrapper: fatal by design, before any haproxy. */
static void test_shim_signalfd_at_start(void)
{
	struct shim s;
	struct t_site f;

	if (!t_site_init_real(&f, NULL))
		return;
	shim_setup(&f, &s, "signalfd");
	t_site_start_wrapper(&f, NULL, NULL);
	t_assert_exit_code(fx_stop(&f, 0), 71);
	g_assert_true(shim_injected(&s, "signalfd"));
	g_assert_nonnull(wrapper_find_log(f.w, LOG_SIGNALFD_FAILED
					 "Too many open files"));
	g_assert_null(wrapper_find_log(f.w, LOG_EXECUTING_WORD));
	g_assert_false(g_file_test(f.pidfile, G_FILE_TEST_EXISTS));
	shim_clear(&s);
	t_site_clear(&f);
}

/*
 * No fork at all from the start: the first "haproxy -v" cannot run. An
 * operating system failure, exit 71 by the man page; nothing left behind.
 */
static void test_shim_fork_at_start(void)
{
	const char *line;
	struct shim s;
	struct t_site f;
	int status;

	if (!t_site_init_real(&f, NULL))
		return;
	shim_setup(&f, &s, "fork");
	t_site_start_wrapper(&f, NULL, NULL);
	status = fx_stop(&f, 0);
	g_assert_true(shim_injected(&s, "fork"));
	line = wrapper_find_log(f.w, LOG_CANNOT_START);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "Resource temporarily unavailable"));
	g_assert_null(wrapper_find_log(f.w, LOG_EXECUTING_WORD));
	g_assert_true(WIFEXITED(status));
	t_assert_exit_code(status, 71);
	shim_clear(&s);
	t_site_clear(&f);
}

/*
 * The hand-off's execve fails after every check passed: the client hears
 * the failure, never "ok", and the wrapper goes on.
 */
static void test_handoff_exec_fails(void)
{
	struct t_command handoff = { 0 };
	struct shim shim;
	struct t_site f;

	fx_init_gated(&f, "2.6.12", "-c");
	shim_setup(&f, &shim, "");
	t_site_start_wrapper(&f, NULL, NULL);
	fx_serving(&f, 1);
	fx_close_gate(&f);
	fx_client(&f, &handoff, "--handoff");
	fx_wait_gate_entered(&f);
	shim_set(&shim, "execve");
	fx_open_gate(&f);
	t_site_wait_log(&f, LOG_HANDOFF_FAILED);
	g_assert_cmpint(t_command_finish(&handoff, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(handoff.err->str, "error: "));
	shim_set(&shim, "");
	wrapper_signal(f.w, SIGUSR2);
	fx_serving(&f, 2);
	t_command_clear(&handoff);
	fx_stop_ok(&f);
	shim_clear(&shim);
	t_site_clear(&f);
}

/*
 * No fork during a reload that upgrades: the dry run cannot run, so no
 * exec; the reload fails too; the client hears both; haproxy serves on,
 * and once forks work the upgrade happens.
 */
static void test_fork_fails_at_upgrade(void)
{
	const char *const opts[] = { "--self-upgrade=always", NULL };
	struct t_command reload = { 0 };
	struct shim shim;
	struct t_site f;
	GPid gen1;

	if (!fx_init_real(&f))
		return;
	shim_setup(&f, &shim, "");
	t_site_start_wrapper(&f, NULL, opts);
	gen1 = fx_serving(&f, 1);
	shim_set(&shim, "spawn-fork");
	fx_client(&f, &reload, "--reload");
	g_assert_cmpint(t_command_finish(&reload, T_WAIT), ==, 1);
	g_assert_nonnull(strstr(reload.err->str, "not upgraded"));
	g_assert_null(wrapper_find_log(f.w, LOG_REEXECUTING_ANY));
	g_assert_cmpint(t_http_pid(f.port), ==, gen1);
	g_assert_cmpint(wrapper_wait_exit(f.w, 0), ==, -1);
	t_command_clear(&reload);

	shim_set(&shim, "");
	wrapper_signal(f.w, SIGUSR2);
	t_site_wait_log(&f, LOG_REEXECUTING "SIGUSR2.");
	fx_serving(&f, 2);
	fx_stop_ok(&f);
	shim_clear(&shim);
	t_site_clear(&f);
}

/* A reload asked for by a client, which hears "ok": the reload's
 * RELOADING=1 and READY=1 have been sent, or tried. */
static void reload_told_ok(struct t_site *f)
{
	g_autofree gchar *out = NULL;

	g_assert_cmpint(t_site_client(f, "--reload", &out, NULL), ==, 0);
	g_assert_true(g_str_has_prefix(out, "ok"));
}

/*
 * libsystemd cannot be loaded when READY=1 first needs it (no descriptor
 * to spare at that moment): nothing is sent, and that is said once,
 * however many notifications fail for the same reason. Once it can be
 * loaded, the next reload's RELOADING=1 and READY=1 reach systemd: a
 * failed load is not kept for the wrapper's life, or a unit with
 * WatchdogSec= would be killed for the WATCHDOG=1 never sent.
 */
static void test_libsystemd_load_retried(void)
{
	struct t_notify n = { .fd = -1 };
	struct shim s;
	struct t_site f;

	if (!fx_init_real(&f))
		return;
	t_notify_open(&n, f.dir);
	t_site_setenv(&f, "NOTIFY_SOCKET", n.path);
	shim_setup(&f, &s, "dlopen-libsystemd");
	t_site_start_wrapper(&f, NULL, NULL);
	fx_serving(&f, 1);
	t_site_wait_log(&f, LOG_LIBSYSTEMD_NOT_LOADED);
	g_assert_true(shim_injected(&s, "dlopen-libsystemd"));
	reload_told_ok(&f);
	g_assert_null(t_notify_recv(&n, 0));

	shim_set(&s, "");
	reload_told_ok(&f);
	g_free(t_notify_expect(&n, "RELOADING=1", "MONOTONIC_USEC=", "STATUS=",
			       NULL));
	g_free(t_notify_expect(&n, "READY=1", "STATUS=", NULL));
	g_assert_cmpuint(wrapper_count_log(f.w, LOG_LIBSYSTEMD_NOT_LOADED), ==,
			 1);
	fx_stop_ok(&f);
	g_free(t_notify_expect(&n, "STOPPING=1", "STATUS=", NULL));
	t_notify_clear(&n);
	shim_clear(&s);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* What the wrapper leaves behind becomes ours, to be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (guint i = 0; i < G_N_ELEMENTS(shim_cases); i++) {
		g_autofree gchar *path = g_strdup_printf("/faults/shim/%s",
							 shim_cases[i].token);

		g_test_add_data_func(path, &shim_cases[i], test_shim);
	}
	g_test_add_func("/faults/shim/signalfd-at-start",
			test_shim_signalfd_at_start);
	g_test_add_func("/faults/shim/fork-at-start", test_shim_fork_at_start);
	g_test_add_func("/failpaths/handoff/exec-fails",
			test_handoff_exec_fails);
	g_test_add_func("/failpaths/upgrade/fork-fails",
			test_fork_fails_at_upgrade);
	g_test_add_func("/faults/shim/libsystemd-load-retried",
			test_libsystemd_load_retried);
	return g_test_run();
}
