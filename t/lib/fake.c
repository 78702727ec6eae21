/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the fake-haproxy tests share: see t/lib/fake.h. */
#include "t/lib/fake.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/proc.h"

GPtrArray *fx_env(struct t_site *f, const char *version)
{
	GPtrArray *env = g_ptr_array_new_with_free_func(g_free);

	if (version)
		g_ptr_array_add(env, g_strdup_printf("FAKE_HAPROXY_VERSION=%s",
						     version));
	for (guint i = 0; i + 1 < f->env->len; i++)
		g_ptr_array_add(env, g_strdup(g_ptr_array_index(f->env, i)));
	g_ptr_array_add(env, NULL);
	return env;
}

Wrapper *fx_start(struct t_site *f, const char *version,
		  const char *const *extra)
{
	g_autoptr(GPtrArray) argv = t_site_args(f, extra);
	g_autoptr(GPtrArray) env = fx_env(f, version);

	return wrapper_start((const char *const *)argv->pdata,
			     (const char *const *)env->pdata);
}

gchar *fake_wait(struct t_site *f, const char *needle, guint timeout_ms)
{
	return t_wait_file_line(f->fake_log, needle, NULL, 1, timeout_ms);
}

guint fake_count(struct t_site *f, const char *needle)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	guint n = 0;

	if (!g_file_get_contents(f->fake_log, &text, NULL, NULL))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++)
		if (strstr(lines[i], needle))
			n++;
	return n;
}

/* "key=value ..." -> value. */
gchar *field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	if (!p)
		return NULL;
	p += strlen(key);
	return g_strndup(p, strcspn(p, " "));
}

gboolean has_arg(const char *line, const char *arg)
{
	g_auto(GStrv) tok = g_strsplit(line, " ", -1);

	return g_strv_contains((const char *const *)tok, arg);
}

/* Any daemon flag: -D, -Ds, -Dxyz (haproxy reads the first letters). */
gboolean has_daemon_flag(const char *line)
{
	g_auto(GStrv) tok = g_strsplit(line, " ", -1);

	for (guint i = 0; tok[i]; i++)
		if (g_str_has_prefix(tok[i], "-D"))
			return TRUE;
	return FALSE;
}

/* The pids after -sf (or -st) in an "executing" line. */
GArray *sf_pids(const char *line)
{
	g_auto(GStrv) tok = g_strsplit(line, " ", -1);
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	gboolean in = FALSE;

	for (guint i = 0; tok[i]; i++) {
		if (!*tok[i])
			continue;
		if (g_str_equal(tok[i], "-sf") || g_str_equal(tok[i], "-st")) {
			in = TRUE;
		} else if (in) {
			GPid pid;

			if (tok[i][0] == '-')
				break;
			pid = atoi(tok[i]);
			g_array_append_val(pids, pid);
		}
	}
	return pids;
}

gboolean pids_contain(GArray *pids, GPid pid)
{
	for (guint i = 0; i < pids->len; i++)
		if (g_array_index(pids, GPid, i) == pid)
			return TRUE;
	return FALSE;
}

/* The -Ds parent's n workers, from the pidfile it writes. */
GArray *wait_workers(struct t_site *f, GPid parent, guint n)
{
	gint64 deadline = t_deadline(T_WAIT);

	for (;;) {
		GArray *pids = t_pids_in_file(f->pidfile);
		guint ours = 0;

		for (guint i = 0; i < pids->len; i++)
			if (proc_parent(g_array_index(pids, GPid, i)) == parent)
				ours++;
		if (pids->len == n && ours == n)
			return pids;
		g_array_unref(pids);
		if (g_get_monotonic_time() >= deadline)
			g_error("no %u workers of pid %d in %s", n, parent,
				f->pidfile);
		g_usleep(10 * 1000);
	}
}

void assert_all_gone(GArray *pids)
{
	for (guint i = 0; i < pids->len; i++)
		g_assert_true(t_wait_gone(g_array_index(pids, GPid, i),
					  T_WAIT));
}

/* Signal the wrapper (sig 0: it ends on its own), wait for its end;
 * everything below it must end too. */
int stop_wrapper(Wrapper *w, int sig)
{
	g_autoptr(GArray) below = t_descendants(w->pid);
	int status;

	if (sig)
		wrapper_signal(w, sig);
	status = wrapper_wait_exit(w, T_WAIT);
	g_assert_cmpint(status, !=, -1);
	assert_all_gone(below);
	return status;
}

/* Generation n's pid, checking the version it was detected as. */
GPid wait_ready_version(Wrapper *w, guint n, const char *version)
{
	g_autofree gchar *needle = g_strdup_printf(LOG_READY_FMT, n);
	g_autofree gchar *want = g_strdup_printf(", haproxy %s", version);
	const char *line = wrapper_wait_log(w, needle, T_WAIT);

	g_assert_nonnull(line);
	g_assert_true(g_str_has_suffix(line, want));
	return t_pid_in(line, "pid ");
}

GPid fx_start_serving(struct t_site *f, Wrapper **w)
{
	GPid gen1;

	*w = fx_start(f, NULL, NULL);
	gen1 = wait_ready_version(*w, 1, "2.6.12");
	g_assert_cmpint(t_wait_serving(f->port, T_WAIT), ==, gen1);
	return gen1;
}

gchar *dup_wait_log(Wrapper *w, const char *needle)
{
	const char *line = wrapper_wait_log(w, needle, T_WAIT);

	g_assert_nonnull(line);
	return g_strdup(line);
}
