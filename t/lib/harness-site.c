/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The test fixture: a site (directory, port, configuration, pidfile,
 * runtime directory, wrapper) and the one cleanup a failed assertion runs,
 * registered once for the whole test program.
 */
#include "t/lib/harness.h"
#include "wrapper/rundir.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>

/* Sites between t_site_init() and t_site_clear(): a fixed table, read
 * from a signal handler. */
static struct t_site *sites[8];

static void sites_add(struct t_site *s)
{
	for (guint i = 0; i < G_N_ELEMENTS(sites); i++) {
		if (!sites[i]) {
			sites[i] = s;
			return;
		}
	}
	g_error("more than %zu sites at once", G_N_ELEMENTS(sites));
}

static void sites_remove(struct t_site *s)
{
	for (guint i = 0; i < G_N_ELEMENTS(sites); i++)
		if (sites[i] == s)
			sites[i] = NULL;
}

const char *t_fake_path(void)
{
	static gchar *path;

	if (!path)
		path = g_build_filename(t_dir(), "fake/fake-haproxy", NULL);
	return path;
}

GArray *t_pids_in_file(const char *path)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) tok = NULL;
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));

	if (!path || !g_file_get_contents(path, &text, NULL, NULL))
		return pids;
	tok = g_strsplit_set(text, " \n", -1);
	for (guint i = 0; tok[i]; i++) {
		GPid pid = t_pid_in(tok[i], "pid=");

		if (!pid && g_ascii_isdigit(tok[i][0]))
			pid = atoi(tok[i]);
		if (pid > 0)
			g_array_append_val(pids, pid);
	}
	return pids;
}

/* A fake that escaped (a -D daemon is setsid, no one's descendant): any
 * live fake-haproxy named in the site's fake log or pidfile, verified
 * then killed. */
static void kill_strays(struct t_site *s)
{
	g_autoptr(GArray) logged = t_pids_in_file(s->fake_log);
	g_autoptr(GArray) listed = t_pids_in_file(s->pidfile);
	GArray *sets[] = { logged, listed };

	for (guint i = 0; i < G_N_ELEMENTS(sets); i++) {
		for (guint j = 0; j < sets[i]->len; j++) {
			GPid pid = g_array_index(sets[i], GPid, j);

			if (t_kill_if_exe(pid, t_fake_path()))
				t_wait_gone(pid, T_WAIT);
		}
	}
}

static gboolean subreaper(void)
{
	int on = 0;

	return prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on;
}

/* The signals the cleanup runs on: a failed assertion's, and SIGTERM,
 * what `timeout` sends a test that ran too long (make mutation's bound);
 * the handlers that were there before ours. */
static const int cleanup_signals[] = { SIGABRT, SIGTRAP, SIGTERM };
static struct sigaction previous[G_N_ELEMENTS(cleanup_signals)];

/* Every wrapper (and what is below it), every registered process, our
 * own children, escaped fakes, then the sites' directories; then what
 * was there before us (a test program's own handler, or the default). */
static void cleanup_now(int sig)
{
	t_kill_live_wrappers();
	t_kill_started();
	t_kill_own_children(FALSE);
	for (guint i = 0; i < G_N_ELEMENTS(sites); i++) {
		if (!sites[i])
			continue;
		kill_strays(sites[i]);
		if (sites[i]->dir)
			t_rmtree(sites[i]->dir);
	}
	t_rmtree_all();
	for (guint i = 0; i < G_N_ELEMENTS(cleanup_signals); i++)
		if (cleanup_signals[i] == sig)
			sigaction(sig, &previous[i], NULL);
	raise(sig);
}

void t_cleanup_on_abort(void)
{
	static gboolean installed;
	struct sigaction sa = { .sa_handler = cleanup_now };

	if (installed)
		return;
	installed = TRUE;
	/* g_assert aborts; g_error may trap; a bound that ran out
	 * terminates. */
	for (guint i = 0; i < G_N_ELEMENTS(cleanup_signals); i++)
		sigaction(cleanup_signals[i], &sa, &previous[i]);
}

void t_site_init(struct t_site *s)
{
	*s = (struct t_site){ 0 };
	t_cleanup_on_abort();
	s->dir = t_tmpdir();
	s->port = t_free_port();
	s->cfg = g_build_filename(s->dir, "haproxy.cfg", NULL);
	s->pidfile = g_build_filename(s->dir, "haproxy.pid", NULL);
	s->rundir = t_runtime_dir(s->dir);
	s->rundir_opt = g_strconcat("--runtime-dir=", s->rundir, NULL);
	s->env = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(s->env, NULL);
	sites_add(s);
}

gboolean t_site_init_real(struct t_site *s, const char *extra)
{
	if (!t_have_haproxy()) {
		g_autofree gchar *why = g_strconcat("no ", t_haproxy_path(),
						    NULL);

		g_test_skip(why);
		return FALSE;
	}
	t_site_init(s);
	/* Debian's is where the wrapper looks by itself; any other is
	 * named. */
	if (t_haproxy_switched())
		s->haproxy = g_strdup(t_haproxy_path());
	t_site_config(s, extra);
	return TRUE;
}

void t_site_init_fake(struct t_site *s, const char *extra)
{
	t_site_init(s);
	s->haproxy = g_strdup(t_fake_path());
	s->fake_log = g_build_filename(s->dir, "fake.log", NULL);
	t_site_setenv(s, "FAKE_HAPROXY_LOG", s->fake_log);
	t_site_config(s, extra);
}

void t_site_config(struct t_site *s, const char *extra)
{
	g_autofree gchar *text = NULL;
	g_autofree gchar *name = g_path_get_basename(s->cfg);

	if (s->fake_log)
		text = g_strdup_printf("bind 127.0.0.1:%u\n%s", s->port,
				       extra ? extra : "");
	else
		text = t_config_text(s->port, extra);
	/* t_write_file renames into place: a starting haproxy never reads
	 * half of it. */
	g_free(t_write_file(s->dir, name, text));
}

void t_site_setenv(struct t_site *s, const char *key, const char *value)
{
	g_ptr_array_insert(s->env, s->env->len - 1,
			   g_strdup_printf("%s=%s", key, value));
}

void t_site_putenv(struct t_site *s, const char *key, const char *value)
{
	g_autofree gchar *prefix = g_strconcat(key, "=", NULL);

	for (guint i = 0; i + 1 < s->env->len; i++) {
		gchar **entry = (gchar **)&g_ptr_array_index(s->env, i);

		if (g_str_has_prefix(*entry, prefix)) {
			g_free(*entry);
			*entry = g_strconcat(prefix, value, NULL);
			return;
		}
	}
	t_site_setenv(s, key, value);
}

GPtrArray *t_site_args(struct t_site *s, const char *const *opts)
{
	GPtrArray *args = g_ptr_array_new_with_free_func(g_free);

	if (s->haproxy)
		g_ptr_array_add(args, g_strdup_printf("--haproxy=%s",
						      s->haproxy));
	if (s->with_runtime_dir)
		g_ptr_array_add(args, g_strdup(s->rundir_opt));
	for (; opts && *opts; opts++)
		g_ptr_array_add(args, g_strdup(*opts));
	if (!s->cfg_after_dashdash) {
		g_ptr_array_add(args, g_strdup("-f"));
		g_ptr_array_add(args, g_strdup(s->cfg));
	}
	if (!s->no_pidfile) {
		g_ptr_array_add(args, g_strdup("-p"));
		g_ptr_array_add(args, g_strdup(s->pidfile));
	}
	if (s->cfg_after_dashdash) {
		g_ptr_array_add(args, g_strdup("--"));
		g_ptr_array_add(args, g_strdup(s->cfg));
	}
	g_ptr_array_add(args, NULL);
	return args;
}

Wrapper *t_site_start_wrapper(struct t_site *s, const char *path,
			      const char *const *opts)
{
	g_autoptr(GPtrArray) args = t_site_args(s, opts);

	g_assert_null(s->w);
	s->w = wrapper_start_at(path, (const char *const *)args->pdata,
				(const char *const *)s->env->pdata);
	return s->w;
}

GPid t_site_start_serving(struct t_site *s, const char *const *opts)
{
	t_site_start_wrapper(s, NULL, opts);
	s->pid = wrapper_wait_ready(s->w, 1, T_WAIT);
	g_assert_cmpint(s->pid, >, 0);
	g_assert_cmpint(t_wait_serving(s->port, T_WAIT), ==, s->pid);
	return s->pid;
}

void t_site_stop(struct t_site *s)
{
	g_autoptr(GArray) below = t_descendants(s->w->pid);

	wrapper_signal(s->w, SIGTERM);
	t_assert_exit_code(wrapper_wait_exit(s->w, T_WAIT), 0);
	for (guint i = 0; i < below->len; i++)
		g_assert_true(t_wait_gone(g_array_index(below, GPid, i),
					  T_WAIT));
}

/* The wrapper's own runtime directory, named after the site's pidfile
 * (never $RUNTIME_DIRECTORY: that one is not the site's): a wrapper that
 * a test killed, or that failed, leaves it in /run, and nobody else
 * would remove it. Without a pidfile the name ("haproxy") is every such
 * site's: left alone. */
static void remove_default_rundir(struct t_site *s)
{
	g_autofree gchar *name = NULL;
	g_autofree gchar *dir = NULL;

	if (!s->pidfile || s->no_pidfile)
		return;
	name = rundir_instance_name(s->pidfile);
	dir = g_build_filename(RUNDIR_BASE, name, NULL);
	t_rmtree(dir);
}

void t_site_clear(struct t_site *s)
{
	if (!s->dir)
		return;		/* skipped before it began */
	g_clear_pointer(&s->w, wrapper_free);
	/* What the wrapper orphaned comes back to a subreaper test. */
	if (subreaper())
		t_kill_own_children(TRUE);
	kill_strays(s);
	sites_remove(s);
	remove_default_rundir(s);
	t_rmtree(s->dir);
	g_free(s->dir);
	g_free(s->cfg);
	g_free(s->pidfile);
	g_free(s->rundir);
	g_free(s->rundir_opt);
	g_free(s->haproxy);
	g_free(s->fake_log);
	g_ptr_array_unref(s->env);
	*s = (struct t_site){ 0 };
}

const char *t_site_wait_log(struct t_site *s, const char *needle)
{
	const char *line = wrapper_wait_log(s->w, needle, T_WAIT);

	if (!line)
		g_test_message("no log line with \"%s\"", needle);
	g_assert_nonnull(line);
	return line;
}

int t_site_client(struct t_site *s, const char *command, gchar **out,
		  gchar **err)
{
	/* Without --runtime-dir the wrapper's is the one its -p names, as
	 * a user's client finds it. */
	if (!s->with_runtime_dir && !s->no_pidfile)
		return t_client(command, "-p", s->pidfile, out, err);
	return t_client(command, s->rundir_opt, NULL, out, err);
}
