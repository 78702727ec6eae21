/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Files: temporary directories (and the short ones unix sockets need),
 * configurations, pidfiles, lines awaited in a file.
 */
#include "t/lib/harness.h"
#include "t/lib/harness-priv.h"

#include <glib/gstdio.h>
#include <string.h>

#include "legacy/pidfile.h"
#include "wrapper/rundir.h"

/* The directories t_tmpdir() gave, not removed yet: a fixed table, read
 * from a signal handler (one full only leaves a directory untracked). */
static gchar *live_dirs[32];

static void live_dirs_add(const char *dir)
{
	for (guint i = 0; i < G_N_ELEMENTS(live_dirs); i++) {
		if (!live_dirs[i]) {
			live_dirs[i] = g_strdup(dir);
			return;
		}
	}
}

static void live_dirs_remove(const char *dir)
{
	for (guint i = 0; i < G_N_ELEMENTS(live_dirs); i++)
		if (g_strcmp0(live_dirs[i], dir) == 0)
			g_clear_pointer(&live_dirs[i], g_free);
}

gchar *t_tmpdir(void)
{
	g_autoptr(GError) error = NULL;
	gchar *dir = g_dir_make_tmp("hsw-test-XXXXXX", &error);

	g_assert_no_error(error);
	live_dirs_add(dir);
	return dir;
}

static void rmtree(const char *dir)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			rmtree(path);
		else
			g_unlink(path);
	}
	g_rmdir(dir);
}

/* dir -> the short directory standing in for it. */
static GHashTable *short_dirs;

const char *t_short_dir(const char *dir)
{
	gchar *tmp;

	if (strlen(dir) + strlen("/run") <= RUNDIR_PATH_MAX)
		return dir;
	if (!short_dirs)
		short_dirs = g_hash_table_new_full(g_str_hash, g_str_equal,
						   g_free, g_free);
	tmp = g_hash_table_lookup(short_dirs, dir);
	if (tmp)
		return tmp;
	tmp = g_strdup("/run/hsw-t-XXXXXX");
	if (!g_mkdtemp_full(tmp, 0700)) {
		/* Not root: /tmp is short too. */
		g_free(tmp);
		tmp = g_strdup("/tmp/hsw-t-XXXXXX");
		g_assert_nonnull(g_mkdtemp_full(tmp, 0700));
	}
	g_hash_table_insert(short_dirs, g_strdup(dir), tmp);
	return tmp;
}

gchar *t_runtime_dir(const char *dir)
{
	gchar *run = g_build_filename(t_short_dir(dir), "run", NULL);

	g_assert_cmpint(g_mkdir_with_parents(run, 0700), ==, 0);
	return run;
}

void t_rmtree(const char *dir)
{
	const char *other = short_dirs ? g_hash_table_lookup(short_dirs, dir)
				       : NULL;

	/* What still names them was started there and escaped its tree:
	 * ended before the files it may hold go. */
	t_end_haproxy_naming(dir);
	if (other) {
		t_end_haproxy_naming(other);
		rmtree(other);
		g_hash_table_remove(short_dirs, dir);
	}
	rmtree(dir);
	live_dirs_remove(dir);
}

void t_rmtree_all(void)
{
	for (guint i = 0; i < G_N_ELEMENTS(live_dirs); i++) {
		g_autofree gchar *dir = g_strdup(live_dirs[i]);

		if (dir)
			t_rmtree(dir);
	}
}

gchar *t_write_file(const char *dir, const char *name, const char *content)
{
	g_autoptr(GError) error = NULL;
	gchar *path = g_build_filename(dir, name, NULL);

	g_file_set_contents(path, content, -1, &error);
	g_assert_no_error(error);
	return path;
}

/* Is the haproxy under test older than major.minor? Debian's when there
 * is none: the text is then never run. */
static gboolean config_before(guint major, guint minor)
{
	return t_have_haproxy() && !t_haproxy_at_least(major, minor);
}

/* hard-stop-after came with 1.8: an older haproxy refuses the line, and
 * lets a drain run to its client timeout instead. */
static gchar *without_hard_stop(const char *text)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autoptr(GString) out = g_string_new(NULL);

	for (guint i = 0; lines[i]; i++) {
		if (strstr(lines[i], "hard-stop-after"))
			continue;
		g_string_append(out, lines[i]);
		if (lines[i + 1])
			g_string_append_c(out, '\n');
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

/* haproxy before 2.2 cannot make up a body: it redirects to "/pid=N"
 * instead, which the harness's HTTP probes read as the body "pid=N". */
static const char *pid_answer(void)
{
	if (config_before(2, 2))
		return "    http-request redirect location /pid=%pid code 302\n";
	return "    http-request return status 200 content-type text/plain "
	       "lf-string \"pid=%pid\\n\"\n";
}

gchar *t_config_text(guint16 port, const char *extra)
{
	g_autofree gchar *text = g_strdup_printf(
		"global\n"
		"    hard-stop-after 10s\n"
		"defaults\n"
		"    mode http\n"
		"    timeout connect 1s\n"
		"    timeout client 10s\n"
		"    timeout server 10s\n"
		"frontend fe\n"
		"    bind 127.0.0.1:%u\n"
		"%s"
		"%s",
		port, pid_answer(), extra ? extra : "");

	if (config_before(1, 8))
		return without_hard_stop(text);
	return g_steal_pointer(&text);
}

gchar *t_write_config(const char *dir, const char *name, guint16 port,
		      const char *extra)
{
	g_autofree gchar *cfg = t_config_text(port, extra);

	return t_write_file(dir, name, cfg);
}

GPid t_wait_pidfile(const char *pidfile)
{
	gint64 end = g_get_monotonic_time() + T_WAIT * 1000LL;

	do {
		g_autoptr(GArray) pids = NULL;

		if (pidfile_read(pidfile, &pids, NULL, NULL) && pids->len)
			return g_array_index(pids, GPid, 0);
		g_usleep(10 * 1000);
	} while (g_get_monotonic_time() < end);
	return 0;
}

void t_assert_pidfile_holds(const char *pidfile, GPid pid)
{
	g_autoptr(GArray) pids = NULL;
	guint invalid = 0;

	if (!pidfile_read(pidfile, &pids, &invalid, NULL))
		g_error("pidfile %s: unreadable, pid %d expected", pidfile,
			pid);
	g_assert_cmpuint(invalid, ==, 0);
	g_assert_cmpuint(pids->len, ==, 1);
	g_assert_cmpint(g_array_index(pids, GPid, 0), ==, pid);
}

gchar *t_wait_file_line(const char *file, const char *needle,
			const char *needle2, guint nth, guint timeout_ms)
{
	gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;

	for (;;) {
		g_autofree gchar *text = NULL;
		g_auto(GStrv) lines = NULL;
		guint seen = 0;

		if (g_file_get_contents(file, &text, NULL, NULL)) {
			lines = g_strsplit(text, "\n", -1);
			for (guint i = 0; lines[i]; i++) {
				if (!strstr(lines[i], needle) ||
				    (needle2 && !strstr(lines[i], needle2)))
					continue;
				if (++seen == nth)
					return g_strdup(lines[i]);
			}
		}
		if (g_get_monotonic_time() >= deadline)
			return NULL;
		g_usleep(5 * 1000);
	}
}
