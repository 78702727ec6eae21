/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A generation's life with t/fake/fake-haproxy: what haproxy inherits (signals,
 * descriptors, environment), signals while it loads, the old generation's
 * exit read before the new one's report, the user's own -sf pids. Every check rests on an
 * event: a wrapper log line, a line in the fake's event log
 * (FAKE_HAPROXY_LOG), an exit status, an HTTP answer.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <glib.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "t/lib/fake.h"
#include "t/lib/faults.h"

static const char *const leaked_env[] = {
	"HAPROXY_MWORKER_REEXEC=1",
	"HAPROXY_PROCESSES=|type=worker;fd=4;pid=1;",
	"HAPROXY_SYSTEMD_REEXEC=1",
	"HAPROXY_WRAPPER_FD=7",
	"NOTIFY_SOCKET=/run/systemd/notify",
};

/* The soft descriptor limit systemd starts a service with. */
#define UNIT_SOFT_NOFILE 1024

/* What a careless parent leaves to the wrapper, and systemd's soft
 * descriptor limit. */
static void dirty_child_setup(gpointer unused)
{
	struct rlimit nofile;
	sigset_t set;

	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
		nofile.rlim_cur = MIN(nofile.rlim_max, UNIT_SOFT_NOFILE);
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/* The soft limit and the hard one of pid, as "SOFT:HARD". */
static gchar *nofile_of(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/limits", pid);
	g_autofree gchar *text = NULL;
	const char *p;
	guint64 soft, hard;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	p = strstr(text, "Max open files");
	g_assert_nonnull(p);
	g_assert_cmpint(sscanf(p, "Max open files %" G_GUINT64_FORMAT
			       " %" G_GUINT64_FORMAT, &soft, &hard), ==, 2);
	return g_strdup_printf("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
			       soft, hard);
}

static guint64 status_mask(GPid pid, const char *key)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/status", pid);
	g_autofree gchar *text = NULL;
	const char *p;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	p = strstr(text, key);
	g_assert_nonnull(p);
	return g_ascii_strtoull(p + strlen(key), NULL, 16);
}

/* nofile: the limits the wrapper was started with, which haproxy
 * inherits whatever the wrapper raised for itself. */
static void assert_clean_start(const char *line, const char *nofile)
{
	g_autofree gchar *blk = field(line, " sigblk=");
	g_autofree gchar *ign = field(line, " sigign=");
	g_autofree gchar *fds = field(line, " fds=");
	g_autofree gchar *limits = field(line, " nofile=");
	const char *env = strstr(line, " env=");

	g_assert_cmpstr(limits, ==, nofile);
	g_assert_cmpstr(blk, ==, NO_SIGNALS);
	g_assert_cmpstr(ign, ==, NO_SIGNALS);
	g_assert_cmpstr(fds, ==, "0,1,2");
	g_assert_nonnull(env);
	g_assert_cmpstr(env, ==, " env=");
}

static void test_child_hygiene(void)
{
	g_autoptr(GPtrArray) argv = NULL;
	g_autoptr(GPtrArray) env = NULL;
	struct t_site f;
	Wrapper *w;
	guint64 ign;
	struct rlimit own;
	g_autofree gchar *nofile = NULL;
	g_autofree gchar *raised = NULL;
	g_autofree gchar *wrapper_limits = NULL;

	t_site_init_fake(&f, NULL);
	argv = t_site_args(&f, NULL);
	env = fx_env(&f, NULL);
	g_ptr_array_remove_index(env, env->len - 1);
	for (guint i = 0; i < G_N_ELEMENTS(leaked_env); i++)
		g_ptr_array_add(env, g_strdup(leaked_env[i]));
	g_ptr_array_add(env, NULL);
	w = wrapper_start_setup((const char *const *)argv->pdata,
			     (const char *const *)env->pdata,
			     dirty_child_setup, NULL);

	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);
	/* The premise: the wrapper itself did inherit all that. */
	ign = status_mask(w->pid, "SigIgn:");
	g_assert_true(ign & (1ULL << (SIGINT - 1)));
	g_assert_true(ign & (1ULL << (SIGQUIT - 1)));
	g_assert_true(status_mask(w->pid, "SigBlk:") & (1ULL << (SIGUSR1 - 1)));
	/* The wrapper raised its own soft descriptor limit to the hard
	 * one; haproxy gets the one it was started with. */
	g_assert_no_errno(getrlimit(RLIMIT_NOFILE, &own));
	nofile = g_strdup_printf("%llu:%llu",
				 (unsigned long long)MIN(own.rlim_max,
							 UNIT_SOFT_NOFILE),
				 (unsigned long long)own.rlim_max);
	raised = g_strdup_printf("%llu:%llu",
				 (unsigned long long)own.rlim_max,
				 (unsigned long long)own.rlim_max);
	wrapper_limits = nofile_of(w->pid);
	g_assert_cmpstr(wrapper_limits, ==, raised);

	wrapper_signal(w, SIGUSR2);
	g_assert_cmpint(wrapper_wait_ready(w, 2, T_WAIT), >, 0);
	/* The version probe, generation 1, generation 2. */
	for (guint n = 1; n <= 3; n++) {
		g_autofree gchar *start = t_wait_file_line(f.fake_log, " start ", NULL,
							 n, T_WAIT);

		g_assert_nonnull(start);
		assert_clean_start(start, nofile);
	}
	g_assert_cmpuint(fake_count(&f, " start "), ==, 3);

	/* An ignored SIGINT still stops the wrapper. */
	t_assert_exit_code(stop_wrapper(w, SIGINT), 0);
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_stop_while_loading(void)
{
	g_autofree gchar *start = NULL;
	g_autofree gchar *rc0 = g_strdup_printf(LOG_EXIT_RC_FMT, 0);
	struct t_site f;
	Wrapper *w;
	GPid gen1;

	t_site_init_fake(&f, "fake-load-delay-ms 2000\n");
	w = fx_start(&f, NULL, NULL);
	g_assert_nonnull(wrapper_wait_log(w, LOG_EXECUTING, T_WAIT));
	start = fake_wait(&f, " -db ", T_WAIT);
	g_assert_nonnull(start);
	gen1 = t_pid_in(start, "pid=");

	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_null(wrapper_find_log(w, LOG_READY_ANY));
	g_assert_nonnull(wrapper_find_log(w, rc0));
	/* Ended while loading, not after: it never bound. */
	g_assert_false(t_pid_alive(gen1));
	g_assert_cmpuint(fake_count(&f, " bound"), ==, 0);
	wrapper_free(w);
	t_site_clear(&f);
}

static guint line_index(Wrapper *w, const char *needle)
{
	for (guint i = 0; i < w->lines->len; i++)
		if (strstr(g_ptr_array_index(w->lines, i), needle))
			return i;
	g_error("no line with '%s'", needle);
}

/* Process-directed signals of pid not yet taken (its signalfd). */
static guint64 shared_pending(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/status", pid);
	g_autofree gchar *text = NULL;
	const char *line;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	line = strstr(text, "\nShdPnd:");
	g_assert_nonnull(line);
	return g_ascii_strtoull(line + strlen("\nShdPnd:"), NULL, 16);
}

/* Until pid has read every sig sent to it; bounded. */
static gboolean wait_taken(GPid pid, int sig)
{
	gint64 deadline = g_get_monotonic_time() + T_WAIT * 1000LL;

	while (shared_pending(pid) & (G_GUINT64_CONSTANT(1) << (sig - 1))) {
		if (g_get_monotonic_time() >= deadline)
			return FALSE;
		g_usleep(2 * 1000);
	}
	return TRUE;
}

static void test_reloads_while_loading(void)
{
	g_autofree gchar *soft2 = NULL, *stopped = NULL;
	g_autofree gchar *ready2 = g_strdup_printf(LOG_READY_FMT, 2);
	g_autofree gchar *on_usr2 = g_strdup_printf(LOG_RELOADING_ON_FMT,
						    "SIGUSR2");
	struct t_site f;
	Wrapper *w;
	GPid gen2, gen3;

	t_site_init_fake(&f, NULL);
	w = fx_start(&f, NULL, NULL);
	g_assert_cmpint(wrapper_wait_ready(w, 1, T_WAIT), >, 0);

	t_site_config(&f, "fake-load-delay-ms 2000\n");
	wrapper_signal(w, SIGUSR2);
	/* Held loading until the wrapper has read them all: they arrive
	 * while generation 2 loads, however slow the wrapper is. */
	gen2 = fake_freeze_loading(&f, 2);
	for (int i = 0; i < 10; i++)
		wrapper_signal(w, SIGUSR2);
	g_assert_nonnull(wrapper_wait_log(w, LOG_RELOAD_QUEUED, T_WAIT));
	g_assert_true(wait_taken(w->pid, SIGUSR2));
	g_assert_cmpint(kill(gen2, SIGCONT), ==, 0);
	g_assert_cmpint(wrapper_wait_ready(w, 2, T_WAIT), ==, gen2);
	gen3 = wrapper_wait_ready(w, 3, T_WAIT);
	g_assert_cmpint(gen3, >, 0);
	g_assert_cmpuint(line_index(w, LOG_RELOAD_QUEUED), <,
			 line_index(w, ready2));
	/* Generation 2 closes its listeners on generation 3's -sf, maybe
	 * after the wrapper said generation 3 was ready. */
	soft2 = g_strdup_printf("pid=%d soft-stop", gen2);
	stopped = fake_wait_nth(&f, soft2, NULL, 1);
	g_assert_nonnull(stopped);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen3);

	/* A fourth reload would start before the stop is even read. */
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	g_assert_cmpuint(wrapper_count_log(w, LOG_EXECUTING), ==, 3);
	g_assert_cmpuint(wrapper_count_log(w, on_usr2), ==, 2);
	wrapper_free(w);
	t_site_clear(&f);
}

/* The witness names itself just after its fork: wait for the name. */
static gboolean wait_comm(GPid pid, const char *want)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/comm", pid);

	for (int i = 0; i < T_WAIT / 10; i++) {
		g_autofree gchar *comm = NULL;

		if (!g_file_get_contents(path, &comm, NULL, NULL))
			return FALSE;
		if (g_str_equal(g_strchomp(comm), want))
			return TRUE;
		g_usleep(10 * 1000);
	}
	return FALSE;
}

/*
 * A reload's old generation leaves on the new one's -sf SIGUSR1, sent just
 * before the witness's: which of the exit and the readiness report the
 * wrapper reads first is up to the scheduler. A witness held stopped until
 * the old generation is gone makes the "exit first" order certain.
 */
static void test_old_exits_before_ready_report(void)
{
	g_autofree gchar *exec2 = NULL, *gone = NULL;
	g_autofree gchar *needle = NULL, *line = NULL;
	g_autoptr(GArray) sf = NULL;
	struct t_site f;
	Wrapper *w;
	GPid gen1, gen2, witness;

	/* Without SO_REUSEPORT the old generation stays on -sf. */
	t_site_init_fake(&f, "noreuseport\n");
	gen1 = fx_start_serving(&f, &w);

	/* Time to stop the witness before haproxy binds and signals. */
	t_site_config(&f, "noreuseport\nfake-load-delay-ms 1000\n");
	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, LOG_EXECUTING);
	sf = sf_pids(exec2);
	g_assert_cmpuint(sf->len, ==, 2);
	witness = g_array_index(sf, GPid, 1);
	g_assert_true(wait_comm(witness, "hsw-witness"));
	kill(witness, SIGSTOP);
	g_assert_true(t_wait_stopped(witness));
	g_assert_cmpuint(fake_count(&f, "signalled-old SIGUSR1"), ==, 1);

	needle = g_strdup_printf("pid=%d exit 0", gen1);
	gone = fake_wait(&f, needle, T_WAIT);
	g_assert_nonnull(gone);
	g_free(needle);
	needle = g_strdup_printf(LOG_GENERATION_PID_FMT, 1, gen1);
	line = dup_wait_log(w, needle);
	kill(witness, SIGCONT);

	/* Superseded, not crashed: the reload goes on. */
	g_assert_null(strstr(line, LOG_SERVING_LOST));
	gen2 = wrapper_wait_ready(w, 2, T_WAIT);
	g_assert_cmpint(gen2, >, 0);
	g_assert_cmpint(wrapper_wait_exit(w, 0), ==, -1);
	g_assert_cmpint(t_wait_serving(f.port, T_WAIT), ==, gen2);
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);
	wrapper_free(w);
	t_site_clear(&f);
}

static void test_user_sf_pids(void)
{
	g_autofree gchar *out = NULL, *exec2 = NULL;
	g_autofree gchar *pidarg = NULL;
	g_autofree gchar *want = NULL;
	gchar *got;
	const char *opts[3];
	struct t_started *recorder;
	struct t_site f;
	Wrapper *w;
	GPid gen1;

	t_site_init_fake(&f, NULL);
	out = g_build_filename(f.dir, "recorder.log", NULL);
	recorder = t_start_recorder(out);
	pidarg = g_strdup_printf("%d", recorder->pid);
	opts[0] = "-sf";
	opts[1] = pidarg;
	opts[2] = NULL;
	w = fx_start(&f, NULL, opts);
	gen1 = wait_ready_version(w, 1, "2.6.12");

	/* Exactly one signal: the soft stop from generation 1. */
	got = t_signals_before_marker(out, recorder);
	want = g_strdup_printf("signal=%d name=SIGUSR1 from=%d\n", SIGUSR1,
			       gen1);
	g_assert_cmpstr(got, ==, want);
	g_free(got);

	wrapper_signal(w, SIGUSR2);
	exec2 = dup_wait_log(w, LOG_EXECUTING);
	g_assert_false(has_arg(exec2, pidarg));
	g_assert_cmpint(wrapper_wait_ready(w, 2, T_WAIT), >, 0);
	t_assert_exit_code(stop_wrapper(w, SIGTERM), 0);

	/* And nothing since. */
	got = t_signals_before_marker(out, recorder);
	g_assert_cmpstr(got, ==, want);
	g_free(got);
	g_assert_true(t_pid_alive(recorder->pid));
	t_stop_recorder(recorder);
	wrapper_free(w);
	t_site_clear(&f);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/fake/child-hygiene", test_child_hygiene);
	g_test_add_func("/fake/stop-while-loading", test_stop_while_loading);
	g_test_add_func("/fake/reloads-while-loading",
			test_reloads_while_loading);
	g_test_add_func("/fake/old-exits-before-ready-report",
			test_old_exits_before_ready_report);
	g_test_add_func("/fake/user-sf-pids", test_user_sf_pids);
	return g_test_run();
}
