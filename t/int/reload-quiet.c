/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Log lines say what happened: a start over a stale pidfile tells no
 * skipped pid and no search that found nothing (steps, told with --debug
 * at <7> only); the SO_REUSEPORT migration notice (the wrapper without
 * CAP_BPF) comes once, short, and only where a listener closes with its
 * queue (a reload without -x), not where -x hands every listener over.
 * The real haproxy, 127.0.0.1 only; every wait is bounded.
 */
#include "t/lib/reload.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIGRATION_UNAVAILABLE "SO_REUSEPORT migration unavailable"

/* Every line of w holding needle starts with prefix (and there is one). */
static void assert_only_at(Wrapper *w, const char *needle,
			   const char *prefix)
{
	guint seen = 0;

	wrapper_pump(w, 0);
	for (guint i = 0; i < w->lines->len; i++) {
		const char *line = g_ptr_array_index(w->lines, i);

		if (!strstr(line, needle))
			continue;
		if (!g_str_has_prefix(line, prefix))
			fail("told above %s: %s", prefix, line);
		seen++;
	}
	g_assert_cmpuint(seen, >, 0);
}

/* A pid that names no process now: a child of ours, reaped. */
static GPid dead_pid(void)
{
	GPid pid = fork();

	g_assert_cmpint(pid, >=, 0);
	if (pid == 0)
		_exit(0);
	g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
	return pid;
}

/*
 * The pidfile names a pid that is gone (the wrapper was killed, say): no
 * "not taking over", and the search that finds nothing is a step.
 */
static void test_stale_pidfile(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *pidtext = NULL, *none = NULL;
	GPid stale;

	if (!reload_site_init(&s, NULL))
		return;
	stale = dead_pid();
	pidtext = g_strdup_printf("%d\n", stale);
	g_assert_true(g_file_set_contents(s.pidfile, pidtext, -1, NULL));
	t_site_start_serving(&s, OPTS("--debug"));
	none = g_strdup_printf(LOG_LATE_SEARCH_FOUND_FMT, 0u);
	g_assert_nonnull(wrapper_wait_log(s.w, none, T_WAIT));
	g_assert_null(wrapper_find_log(s.w, LOG_NOT_TAKING_OVER));
	assert_only_at(s.w, none, "<7>");
	assert_only_at(s.w, LOG_SEARCH_DEFERRED, "<7>");
	t_site_stop(&s);
}

/* The wrapper without CAP_BPF (nor CAP_SYS_ADMIN), two reloads. */
static void reload_twice_without_cap_bpf(struct t_site *s,
					 const char *seamless)
{
	static const char *const prefix[] = {
		"setpriv", "--bounding-set=-bpf,-sys_admin",
		"--inh-caps=-bpf,-sys_admin", NULL
	};
	const char *const opts[] = { seamless, NULL };
	g_autoptr(GPtrArray) args = t_site_args(s, opts);
	GPid gen;

	s->w = wrapper_start_prefixed(prefix,
				      (const char *const *)args->pdata,
				      (const char *const *)s->env->pdata);
	s->pid = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(s->pid, >, 0);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, s->pid);
	gen = reload_serving(s, "--reload", 2);
	g_assert_cmpint(gen, >, 0);
	gen = reload_serving(s, "--reload", 3);
	g_assert_cmpint(gen, >, 0);
}

/* Without -x a listener closes at every reload: told once, short. */
static void test_cap_bpf_notice_without_x(void)
{
	g_auto(TSite) s = { 0 };
	const char *line;

	if (!reload_site_init(&s, NULL) || t_host_migrates())
		return;
	reload_twice_without_cap_bpf(&s, "--seamless-reload=off");
	g_assert_cmpuint(wrapper_count_log(s.w, MIGRATION_UNAVAILABLE), ==,
			 1);
	line = wrapper_find_log(s.w, MIGRATION_UNAVAILABLE);
	g_assert_nonnull(strstr(line, "CAP_BPF"));
	/* Short: the cause and its cost, no lecture. */
	g_assert_cmpuint(strlen(line), <, 160);
	t_site_stop(&s);
}

/* With -x nothing closes: nothing to tell. */
static void test_cap_bpf_no_notice_with_x(void)
{
	g_auto(TSite) s = { 0 };

	if (!reload_site_init(&s, NULL) || t_host_migrates())
		return;
	reload_twice_without_cap_bpf(&s, "--seamless-reload=auto");
	g_assert_nonnull(wrapper_find_log(s.w, "-x "));
	g_assert_null(wrapper_find_log(s.w, MIGRATION_UNAVAILABLE));
	t_site_stop(&s);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);

	g_test_add_func("/quiet/stale-pidfile", test_stale_pidfile);
	g_test_add_func("/quiet/cap-bpf-notice-without-x",
			test_cap_bpf_notice_without_x);
	g_test_add_func("/quiet/cap-bpf-no-notice-with-x",
			test_cap_bpf_no_notice_with_x);
	return g_test_run();
}
