/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The haproxy versions the real haproxy 2.6 of the test machine cannot
 * show, with t/fake/fake-haproxy: 1.5 and 1.7 run as -Ds (their workers take
 * -sf), 1.8 and later as -db whatever the banner's spelling, a "-v" that
 * names no version. Every check rests on an
 * event: a wrapper log line, a line in the fake's event log
 * (FAKE_HAPROXY_LOG), an exit status, an HTTP answer.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "legacy/pidfile.h"
#include "t/lib/fake.h"

static void check_ds_family(const char *version, guint nbproc)
{
	g_autofree gchar *extra = g_strdup_printf("fake-nbproc %u\n", nbproc);
	g_autofree gchar *exec1 = NULL, *exec2 = NULL, *signalled = NULL;
	g_autofree gchar *on_usr2 = g_strdup_printf(LOG_RELOADING_ON_FMT,
						    "SIGUSR2");
	g_autoptr(GArray) old_workers = NULL, new_workers = NULL, sf = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, gen2, witness, pid;

	t_site_init_fake(&f, extra);
	w = fx_start(&f, version, NULL);

	exec1 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_true(has_arg(exec1, "-Ds"));
	g_assert_false(has_arg(exec1, "-db"));
	gen1 = wait_ready_version(w, 1, version);
	old_workers = wait_workers(&f, gen1, nbproc);
	pid = t_wait_serving(f.port, T_WAIT);
	g_assert_true(pids_contain(old_workers, pid));

	wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, on_usr2, T_WAIT));
	exec2 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_true(has_arg(exec2, "-Ds"));
	g_assert_false(has_arg(exec2, "-db"));
	/* The witness alone: the old workers get their soft stop from the
	 * wrapper once their groups steer to generation 2. */
	sf = sf_pids(exec2);
	g_assert_cmpuint(sf->len, ==, 1);
	witness = g_array_index(sf, GPid, 0);
	g_assert_false(pids_contain(old_workers, witness));
	g_assert_cmpint(witness, !=, gen1);

	gen2 = wait_ready_version(w, 2, version);
	{
		g_autofree gchar *needle = g_strdup_printf(
			"pid=%d signalled-old SIGUSR1 %d", gen2, witness);

		signalled = fake_wait(&f, needle, T_WAIT);
		g_assert_nonnull(signalled);
	}
	{
		g_autofree gchar *stop = g_strdup_printf(
			"SIGUSR1 -> generation 1 (pid %d)", gen1);

		g_assert_nonnull(wrapper_find_log(w, stop));
	}
	assert_all_gone(old_workers);
	g_assert_true(t_wait_gone(gen1, T_WAIT));

	new_workers = wait_workers(&f, gen2, nbproc);
	pid = t_wait_serving(f.port, T_WAIT);
	g_assert_true(pids_contain(new_workers, pid));
	g_assert_cmpint(proc_parent(pid), ==, gen2);

	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "-db"), ==, 0);
	wrapper_free(w);
	t_site_clear(&f);
}

/* Right at generation n's ready line: its -Ds parent has forked all
 * nbproc workers and the pidfile names exactly them. */
static void assert_forked_at_ready(struct t_site *f, Wrapper *w, guint n,
				   guint nbproc)
{
	GPid gen = wait_ready_version(w, n, "1.7.0");
	g_autoptr(GArray) workers = proc_children(gen);
	g_autoptr(GArray) written = NULL;

	g_assert_cmpuint(workers->len, ==, nbproc);
	g_assert_true(pidfile_read(f->pidfile, &written, NULL, NULL));
	g_assert_cmpuint(written->len, ==, nbproc);
	for (guint i = 0; i < nbproc; i++)
		g_assert_true(pids_contain(workers,
					   g_array_index(written, GPid, i)));
}

/* Bytes pid has written so far (/proc/PID/io's wchar); 0 if unreadable. */
static guint64 bytes_written(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/io", pid);
	g_autofree gchar *text = NULL;
	const char *p;

	if (!g_file_get_contents(path, &text, NULL, NULL) ||
	    !(p = strstr(text, "wchar: ")))
		return 0;
	return g_ascii_strtoull(p + strlen("wchar: "), NULL, 10);
}

/*
 * Generation n's -Ds parent has signalled its -sf pids and waits at the
 * fork gate: once the wrapper has heard its witness (the witness wrote
 * its report, and two requests of a client were answered after it), it
 * has not called it ready. The gate then opens.
 */
static void assert_not_ready_before_fork(struct t_site *f, Wrapper *w,
					 guint n, const char *gate)
{
	g_autofree gchar *exec = dup_wait_log(w, LOG_EXECUTING);
	g_autofree gchar *ready = g_strdup_printf(LOG_READY_FMT, n);
	g_autoptr(GArray) sf = sf_pids(exec);
	gint64 deadline = t_deadline(T_WAIT);
	g_autofree gchar *waits = NULL;
	GPid witness;

	g_assert_cmpuint(sf->len, >=, 1);
	witness = g_array_index(sf, GPid, sf->len - 1);
	waits = t_wait_file_line(f->fake_log, "parent waits to fork", NULL,
				 n, T_WAIT);
	g_assert_nonnull(waits);
	while (bytes_written(witness) == 0 && t_ms_left(deadline) > 0)
		t_wait_gone(witness, 5);
	g_assert_cmpuint(bytes_written(witness), >, 0);
	/* Each answer comes from a later turn of the wrapper's loop than
	 * the report's: whatever the report made it log is written. */
	for (guint i = 0; i < 2; i++)
		g_assert_cmpint(t_site_client(f, "--status", NULL, NULL), ==, 0);
	wrapper_pump(w, 0);
	g_assert_null(wrapper_find_log(w, ready));
	g_free(t_write_file(f->dir, gate, ""));
}

/* haproxy 1.5 and 1.7 (the fake as they do) signal their -sf pids, the
 * witness among them, before the -Ds parent forks: ready waits for the
 * workers (t/int/real-reload shows it on the real 1.5.18 and 1.7.0). The
 * parent waits at a gate between the two, so that a wrapper that called
 * it ready on the witness's word alone is seen doing it, every time. */
static void test_ds_ready_after_fork(void)
{
	g_autofree gchar *gate = NULL;
	g_autofree gchar *extra = NULL;
	struct t_site f;
	Wrapper *w;

	t_site_init_fake(&f, NULL);
	gate = g_build_filename(f.dir, "fork-gate", NULL);
	extra = g_strdup_printf("fake-nbproc 2\nfake-fork-gate %s\n", gate);
	t_site_config(&f, extra);
	w = fx_start(&f, "1.7.0", NULL);
	assert_not_ready_before_fork(&f, w, 1, "fork-gate");
	assert_forked_at_ready(&f, w, 1, 2);
	for (guint i = 2; i <= 11; i++) {
		g_assert_cmpint(g_unlink(gate), ==, 0);
		wrapper_signal(w, SIGUSR2);
		assert_not_ready_before_fork(&f, w, i, "fork-gate");
		assert_forked_at_ready(&f, w, i, 2);
	}
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	wrapper_free(w);
	t_site_clear(&f);
}

/* A unit with a store (--fd-store=on under a NOTIFY_SOCKET) and a
 * haproxy that cannot take sockets over (1.7): one notice says why, not
 * one a reload (t/int/real-fdstore checks the same on the real 1.5 and
 * 1.7 builds). */
static void test_fdstore_unused_told_once(void)
{
	const char *const opts[] = { "--fd-store=on", NULL };
	g_auto(TNotify) n = { 0 };
	struct t_site f;
	Wrapper *w;
	const char *line;

	t_site_init_fake(&f, NULL);
	t_notify_open(&n, f.dir);
	t_site_setenv(&f, "NOTIFY_SOCKET", n.path);
	w = fx_start(&f, "1.7.0", opts);
	wait_ready_version(w, 1, "1.7.0");
	for (guint i = 2; i <= 3; i++) {
		wrapper_signal(w, SIGUSR2);
		wait_ready_version(w, i, "1.7.0");
	}
	line = wrapper_find_log(w, LOG_FDSTORE_UNUSED);
	g_assert_nonnull(line);
	g_assert_nonnull(strstr(line, "haproxy 1.7.0 cannot take"));
	g_assert_cmpuint(wrapper_count_log(w, LOG_FDSTORE_UNUSED), ==, 1);
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_version_15(void)
{
	check_ds_family("1.5.18", 2);
}

static void test_version_17(void)
{
	check_ds_family("1.7.0", 1);
}

/* "-- FILES" (Debian's old units, scripts) on 1.5, which has no "--":
 * each file goes to haproxy as -f FILE, at start and at reloads. */
static void test_double_dash_15(void)
{
	g_autofree gchar *haproxy = g_strdup_printf("--haproxy=%s",
						    t_fake_path());
	g_autofree gchar *exec1 = NULL, *exec2 = NULL, *file = NULL;
	g_autoptr(GPtrArray) env = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, gen2;

	t_site_init_fake(&f, "fake-nbproc 1\n");
	env = fx_env(&f, "1.5.18");
	/* before the flags: 1.5 takes -sf/-st only last */
	file = g_strdup_printf(" -f %s -Ds ", f.cfg);
	{
		const char *args[] = { haproxy, "-p", f.pidfile, "--", f.cfg,
				       NULL };

		w = wrapper_start(
			args, (const char *const *)env->pdata);
	}
	exec1 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_nonnull(strstr(exec1, file));
	g_assert_false(has_arg(exec1, "--"));
	gen1 = wait_ready_version(w, 1, "1.5.18");
	g_array_unref(wait_workers(&f, gen1, 1));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), >, 0);
	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_nonnull(strstr(exec2, file));
	gen2 = wait_ready_version(w, 2, "1.5.18");
	g_array_unref(wait_workers(&f, gen2, 1));
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	wrapper_free(w);
	t_site_clear(&f);
}

static gchar *fake_banner(const char *version)
{
	char *argv[] = { (char *)t_fake_path(), (char *)"-v", NULL };
	g_auto(GStrv) envp = g_environ_setenv(g_get_environ(),
					      "FAKE_HAPROXY_VERSION", version,
					      TRUE);
	g_autoptr(GError) error = NULL;
	gchar *out = NULL;

	g_assert_true(g_spawn_sync(NULL, argv, envp, G_SPAWN_STDERR_TO_DEV_NULL,
				   NULL, NULL, &out, NULL, NULL, &error));
	g_assert_no_error(error);
	return out;
}

static void check_db_version(const char *version, const char *banner)
{
	g_autofree gchar *out = fake_banner(version);
	g_autofree gchar *exec1 = NULL, *exec2 = NULL, *start2 = NULL;
	g_autoptr(GArray) sf = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, gen2;

	/* The fixture really prints the spelling this case is about. */
	g_assert_true(g_str_has_prefix(out, banner));

	t_site_init_fake(&f, NULL);
	w = fx_start(&f, version, NULL);
	exec1 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_true(has_arg(exec1, "-db"));
	g_assert_false(has_daemon_flag(exec1));
	gen1 = wait_ready_version(w, 1, version);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen1);

	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_true(has_arg(exec2, "-db"));
	g_assert_false(has_daemon_flag(exec2));
	/* The witness alone: generation 1 gets its soft stop from the
	 * wrapper once its group steers to generation 2. */
	sf = sf_pids(exec2);
	g_assert_cmpuint(sf->len, ==, 1);
	g_assert_cmpint(g_array_index(sf, GPid, 0), !=, gen1);
	gen2 = wait_ready_version(w, 2, version);
	{
		g_autofree gchar *stop = g_strdup_printf(
			"SIGUSR1 -> generation 1 (pid %d)", gen1);

		g_assert_nonnull(wrapper_find_log(w, stop));
	}
	g_assert_true(t_wait_gone(gen1, T_WAIT));
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);

	/* What the fake itself was given: no daemon flag either. */
	start2 = t_wait_file_line(f.fake_log, "start ", "-db", 2, T_WAIT);
	g_assert_nonnull(start2);
	g_assert_false(has_daemon_flag(start2));
	g_assert_cmpuint(fake_count(&f, "-Ds"), ==, 0);

	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, "-Ds"), ==, 0);
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_version_18_and_later(void)
{
	static const struct {
		const char *version;
		const char *banner;
	} cases[] = {
		{ "1.8.30", "HA-Proxy version 1.8.30 " },
		{ "2.0.0", "HA-Proxy version 2.0.0 " },
		{ "3.2.0", "HAProxy version 3.2.0 " },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
		check_db_version(cases[i].version, cases[i].banner);
}

static void test_version_unparseable(void)
{
	g_autofree gchar *rc65 = g_strdup_printf(LOG_EXIT_RC_FMT, 65);
	struct t_site f;
	Wrapper *w;

	t_site_init_fake(&f, NULL);
	w = fx_start(&f, "garbage", NULL);
	t_assert_exit_code(stop_wrapper(w, 0), 65);
	g_assert_nonnull(wrapper_find_log(w, LOG_CANNOT_START));
	g_assert_nonnull(wrapper_find_log(w, LOG_NO_VERSION));
	g_assert_nonnull(wrapper_find_log(w, rc65));
	/* Only "-v" ran: no generation was started on a guess. */
	g_assert_cmpuint(wrapper_count_log(w, LOG_EXECUTING), ==, 0);
	g_assert_cmpuint(fake_count(&f, " start "), ==, 1);
	g_assert_cmpuint(fake_count(&f, " args=-v "), ==, 1);
	wrapper_free(w);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/fake/version-1.5", test_version_15);
	g_test_add_func("/fake/version-1.7", test_version_17);
	g_test_add_func("/fake/double-dash-1.5", test_double_dash_15);
	g_test_add_func("/fake/ds-ready-after-fork", test_ds_ready_after_fork);
	g_test_add_func("/fake/version-1.8-and-later",
			test_version_18_and_later);
	g_test_add_func("/fake/version-unparseable", test_version_unparseable);
	g_test_add_func("/fake/fdstore-unused-told-once",
			test_fdstore_unused_told_once);
	return g_test_run();
}
