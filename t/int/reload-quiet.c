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
#include <sys/stat.h>
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

/* JOURNAL_STREAM naming the file at path, as systemd names the stream
 * it gives a unit's stdout and stderr. */
static gchar *journal_stream_of(const char *path)
{
	struct stat st;

	g_assert_cmpint(stat(path, &st), ==, 0);
	return g_strdup_printf("%llu:%llu", (unsigned long long)st.st_dev,
			       (unsigned long long)st.st_ino);
}

/* `wrapper COMMAND` with stdout to out, stderr to err; JOURNAL_STREAM
 * naming stream (NULL: unset), as ExecReload= runs it. Its exit code. */
static int client_to_files(struct t_site *s, const char *command,
			   const char *out, const char *err,
			   const char *stream)
{
	const char *argv[] = { "/bin/sh", "-c",
			       "exec \"$0\" \"$1\" \"$2\" >\"$3\" 2>\"$4\"",
			       t_wrapper_path(), command, s->rundir_opt, out,
			       err, NULL };
	int code;

	if (stream)
		g_setenv("JOURNAL_STREAM", stream, TRUE);
	code = t_run_command(argv, T_WAIT, NULL, NULL);
	g_unsetenv("JOURNAL_STREAM");
	return code;
}

static gchar *file_text(const char *path)
{
	gchar *text = NULL;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

/*
 * ExecReload='s client (its stdout and stderr the journal): quiet when
 * the reload went well (the wrapper's own line says it), its error at
 * <3>; at a terminal or in a script, the "ok" line as before.
 */
static void test_reload_client_in_journal(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *out = NULL, *err = NULL, *stream = NULL;
	g_autofree gchar *text = NULL, *etext = NULL, *ready2 = NULL;

	if (!reload_site_init(&s, NULL))
		return;
	t_site_start_serving(&s, NULL);
	out = g_build_filename(s.dir, "client.out", NULL);
	err = g_build_filename(s.dir, "client.err", NULL);
	g_assert_true(g_file_set_contents(out, "", 0, NULL));
	g_assert_true(g_file_set_contents(err, "", 0, NULL));

	stream = journal_stream_of(out);
	g_assert_cmpint(client_to_files(&s, "--reload", out, err, stream), ==,
			CLIENT_OK);
	ready2 = g_strdup_printf(LOG_READY_FMT, 2u);
	g_assert_nonnull(wrapper_wait_log(s.w, ready2, T_WAIT));
	text = file_text(out);
	g_assert_cmpstr(text, ==, "");

	/* Not the journal: the line is there. */
	g_assert_cmpint(client_to_files(&s, "--reload", out, err, NULL), ==,
			CLIENT_OK);
	g_free(text);
	text = file_text(out);
	g_assert_true(g_str_has_prefix(text, "ok generation 3 "));

	/* A failure, its stderr the journal: at <3>. */
	t_site_config(&s, BROKEN);
	g_free(stream);
	stream = journal_stream_of(err);
	g_assert_cmpint(client_to_files(&s, "--reload", out, err, stream), ==,
			CLIENT_FAILED);
	etext = file_text(err);
	g_assert_true(g_str_has_prefix(etext, "<3>error: "));
	t_site_stop(&s);
}

int main(int argc, char **argv)
{
	reload_tests_init(&argc, &argv);

	g_test_add_func("/quiet/stale-pidfile", test_stale_pidfile);
	g_test_add_func("/quiet/reload-client-in-journal",
			test_reload_client_in_journal);
	g_test_add_func("/quiet/cap-bpf-notice-without-x",
			test_cap_bpf_notice_without_x);
	g_test_add_func("/quiet/cap-bpf-no-notice-with-x",
			test_cap_bpf_no_notice_with_x);
	return g_test_run();
}
