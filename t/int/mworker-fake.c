/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Master-worker mode behind the wrapper, on the fake haproxy: the notify
 * sequences of the other versions, nbproc, mode notices, masters that
 * handle SIGUSR2 late, a runtime directory taken, an upgrade that needs
 * the master's support, bounded draining.
 */
#include <glib.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/mworker.h"

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
		worker = t_wait_serving(s.t.port, T_WAIT);
		worker = site_reload(&s, worker);
		site_write_config(&s, "fake-config-error\n");
		g_assert_cmpint(site_client(&s, "--reload", &out), ==, 1);
		g_assert_nonnull(strstr(out, has_status ? "Reload failed!"
							: "no new worker"));
		g_assert_cmpint(t_http_pid(s.t.port), ==, worker);
		site_write_config(&s, NULL);
		site_reload(&s, worker);
		wrapper_signal(s.t.w, SIGTERM);
		g_assert_cmpint(wrapper_wait_exit(s.t.w, T_WAIT), ==, 0);
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
	g_assert_nonnull(wrapper_find_log(s.t.w, LOG_NBPROC_NEEDS_MW));
	g_assert_nonnull(wrapper_find_log(s.t.w, " -Ws"));
	status = site_status(&s);
	workers = strstr(status, "generation 1 workers ");
	g_assert_nonnull(workers);
	/* Two pids on that line. */
	g_assert_cmpint(sscanf(workers, "generation 1 workers %*d %d",
			       &second), ==, 1);
	site_write_config(&s, NULL);
	g_assert_cmpint(site_client(&s, "--reload", &out), ==, 0);
	g_assert_nonnull(strstr(out, "generation 2 "));
	g_assert_nonnull(wrapper_find_log(s.t.w, " -db"));
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
		  LOG_MW_MODE_OFF, " -db", NULL },
		{ "1.7.0", NULL, "-W", LOG_MW_NEEDS_18, " -Ds",
		  " worker" },
		{ "2.6.12", "master-worker\n", NULL,
		  LOG_CONFIG_ASKS_MW, " -Ws",
		  "master ready" },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_auto(Site) s = { 0 };
		const char *opts[] = { cases[i].opt, NULL };

		g_test_message("%s %s", cases[i].version, cases[i].notice);
		site_init(&s, TRUE, cases[i].config);
		site_start(&s, cases[i].version, opts);
		g_assert_nonnull(wrapper_find_log(s.t.w, cases[i].notice));
		g_assert_nonnull(wrapper_find_log(s.t.w, cases[i].flag));
		if (cases[i].settled) {
			g_autofree gchar *log = g_build_filename(s.t.dir,
								 "fake.log",
								 NULL);
			g_autofree gchar *line = t_wait_file_line(
				log, cases[i].settled, NULL, 1, T_WAIT);

			g_assert_nonnull(line);
		}
	}
}

/* A master that says READY before it handles SIGUSR2 (which would kill
 * it until then), as a 2.8-3.0 master does while it executes itself again:
 * the wrapper says ready once the handler is there, and its reload is
 * safe at once. */
static void test_fake_late_handler(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-Ws", NULL };
	GPid worker;
	g_autofree gchar *log_path = NULL;
	g_autofree gchar *log = NULL;

	site_init(&s, TRUE, "fake-master-late-handler-ms 500\n");
	site_start(&s, "2.8.0", opts);
	/* Ready: the handler was there already. */
	log_path = g_build_filename(s.t.dir, "fake.log", NULL);
	g_assert_true(g_file_get_contents(log_path, &log, NULL, NULL));
	g_assert_nonnull(strstr(log, "master ready"));
	g_assert_nonnull(strstr(log, "master handles SIGUSR2"));
	worker = t_wait_serving(s.t.port, T_WAIT);
	site_reload(&s, worker);
	g_assert_true(t_pid_alive(s.master));
	g_assert_null(wrapper_find_log(s.t.w, LOG_PRIO_ERR));
}

/* A reload asked for just after the master reloaded behind our back
 * (kill -USR2 to it), while it executes itself again and SIGUSR2 would
 * kill it: the wrapper waits for the handler before it signals. */
static void test_fake_reload_after_one_behind_our_back(void)
{
	g_auto(Site) s = { 0 };
	const char *opts[] = { "-Ws", NULL };
	GPid worker;

	site_init(&s, TRUE, "fake-master-late-handler-ms 500\n");
	site_start(&s, "2.8.0", opts);
	worker = t_wait_serving(s.t.port, T_WAIT);
	g_assert_cmpint(kill(s.master, SIGUSR2), ==, 0);
	g_assert_nonnull(wrapper_wait_log(s.t.w, LOG_RELOADED_WITHOUT_US,
					  T_WAIT));
	worker = t_wait_serving(s.t.port, T_WAIT);
	site_reload(&s, worker);
	g_assert_true(t_pid_alive(s.master));
	g_assert_null(wrapper_find_log(s.t.w, LOG_PRIO_ERR));
}

/* Two wrappers on one runtime directory: the second gets no notify
 * socket (it would steal the first one's verdicts) and fails to start;
 * the first reloads as before. */
static void test_fake_runtime_dir_taken(void)
{
	g_auto(Site) s = { 0 };
	g_auto(Site) other = { 0 };
	const char *opts[] = { "-Ws", NULL };
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s/fake/fake-haproxy",
						    t_dir());
	const char *env[] = { "FAKE_HAPROXY_VERSION=2.6.12", NULL };
	const char *args[8];
	GPid worker;
	int status;

	site_init(&s, TRUE, NULL);
	site_start(&s, "2.6.12", opts);
	worker = t_wait_serving(s.t.port, T_WAIT);
	site_init(&other, TRUE, NULL);
	args[0] = s.t.rundir_opt;		/* the first one's */
	args[1] = haproxy;
	args[2] = "-Ws";
	args[3] = "-f";
	args[4] = other.t.cfg;
	args[5] = "--takeover=off";
	args[6] = NULL;
	other.t.w = wrapper_start(args, env);
	status = wrapper_wait_exit(other.t.w, T_WAIT);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), !=, 0);
	g_assert_nonnull(wrapper_find_log(other.t.w, LOG_NOTIFY_SOCKET));
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
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s/fake/fake-haproxy",
						    t_dir());
	g_autofree gchar *env_version = g_strdup("FAKE_HAPROXY_VERSION=2.6.12");
	const char *env[] = { env_version, NULL };
	const char *args[8];
	gsize len;
	GPid worker;

	site_init(&s, TRUE, NULL);
	copy = g_build_filename(s.t.dir, "haproxy-systemd-wrapper", NULL);
	g_assert_true(g_file_get_contents(t_wrapper_path(), &data, &len, NULL));
	g_assert_true(g_file_set_contents(copy, data, len, NULL));
	g_assert_cmpint(g_chmod(copy, 0755), ==, 0);
	args[0] = s.t.rundir_opt;
	args[1] = haproxy;
	args[2] = "-Ws";
	args[3] = "-f";
	args[4] = s.t.cfg;
	args[5] = NULL;
	s.t.w = wrapper_start_at(copy, args, env);
	s.master = wrapper_wait_ready(s.t.w, 1, T_WAIT);
	worker = t_wait_serving(s.t.port, T_WAIT);
	/* Replaced, not rewritten in place: the running image stays. */
	g_assert_cmpint(g_unlink(copy), ==, 0);
	g_assert_true(g_file_set_contents(copy, older, -1, NULL));
	g_assert_cmpint(g_chmod(copy, 0755), ==, 0);
	site_reload(&s, worker);
	g_assert_nonnull(wrapper_find_log(s.t.w, LOG_NOT_UPGRADING));
	g_assert_null(wrapper_find_log(s.t.w, LOG_REEXECUTING));
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
		worker = t_wait_serving(s.t.port, T_WAIT);
		held = t_hold_connection(s.t.port);
		g_assert_cmpint(held, >=, 0);
		site_reload(&s, worker);
		relay = g_strdup_printf(LOG_RELAYED_FMT, "SIGTERM", worker);
		g_assert_nonnull(wrapper_wait_log(s.t.w, relay, T_WAIT));
		g_assert_true(t_wait_gone(worker, T_WAIT));
		close(held);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	t_cleanup_on_abort();

	g_test_add_func("/mworker/fake/versions", test_fake_versions);
	g_test_add_func("/mworker/fake/nbproc-auto", test_fake_nbproc_auto);
	g_test_add_func("/mworker/fake/mode-notices", test_fake_mode_notices);
	g_test_add_func("/mworker/fake/late-handler", test_fake_late_handler);
	g_test_add_func("/mworker/fake/reload-after-one-behind-our-back",
			test_fake_reload_after_one_behind_our_back);
	g_test_add_func("/mworker/fake/runtime-dir-taken",
			test_fake_runtime_dir_taken);
	g_test_add_func("/mworker/fake/upgrade-needs-master-support",
			test_fake_upgrade_needs_master_support);
	g_test_add_func("/mworker/fake/bounded-draining",
			test_fake_bounded_draining);
	return g_test_run();
}
