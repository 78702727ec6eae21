/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * haproxy's version kept in the runtime directory (wrapper/versioncache/vcache.h): a
 * restart with the same binary does not run "haproxy -v" again; a binary
 * replaced or changed in place is probed anew; a cache file that another
 * user owns, that others may write, or that is not ours in form is
 * ignored. On the fake haproxy, which logs every start (the probe's
 * "args=-v" included) and prints the version FAKE_HAPROXY_VERSION says:
 * a stale version would show as the wrong launch mode (-Ds for < 1.8).
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t/lib/harness.h"

#define NOBODY 65534
#define CACHE "haproxy-version"

static void copy_fake(const char *to)
{
	g_autofree gchar *tmp = g_strconcat(to, ".new", NULL);
	g_autofree gchar *data = NULL;
	gsize len;

	g_assert_true(g_file_get_contents(t_fake_path(), &data, &len, NULL));
	g_assert_true(g_file_set_contents(tmp, data, len, NULL));
	g_assert_cmpint(chmod(tmp, 0755), ==, 0);
	/* A new file renamed in, as a package upgrade does: a new inode. */
	g_assert_cmpint(rename(tmp, to), ==, 0);
}

/* The fake's site, its haproxy a copy of the fake (ours to replace), its
 * runtime directory (where the version is kept) the same at every start. */
static void site_init(struct t_site *s)
{
	t_site_init_fake(s, NULL);
	s->with_runtime_dir = TRUE;
	g_free(s->haproxy);
	s->haproxy = g_build_filename(s->dir, "haproxy", NULL);
	copy_fake(s->haproxy);
}

/* The wrapper on the copy, as the given version, until generation 1 is
 * ready, then stopped: its "executing" line. */
static gchar *run_once(struct t_site *s, const char *version)
{
	gchar *executing;

	t_site_putenv(s, "FAKE_HAPROXY_VERSION", version);
	t_site_start_wrapper(s, NULL, NULL);
	g_assert_cmpint(wrapper_wait_ready(s->w, 1, T_WAIT), >, 0);
	executing = g_strdup(wrapper_executing_line(s->w, 1));
	g_assert_nonnull(executing);
	wrapper_signal(s->w, SIGTERM);
	g_assert_cmpint(wrapper_wait_exit(s->w, T_WAIT), ==, 0);
	g_clear_pointer(&s->w, wrapper_free);
	return executing;
}

/* How many times the fake was run as "haproxy -v". */
static guint probes(struct t_site *s)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	guint n = 0;

	if (!g_file_get_contents(s->fake_log, &text, NULL, NULL))
		return 0;
	lines = g_strsplit(text, "\n", -1);
	for (guint i = 0; lines[i]; i++)
		if (strstr(lines[i], " start ") && strstr(lines[i], " args=-v "))
			n++;
	return n;
}

static gchar *cache_path(struct t_site *s)
{
	return g_build_filename(s->rundir, CACHE, NULL);
}

static gboolean runs_as(const char *executing, const char *flag)
{
	g_autofree gchar *spaced = g_strdup_printf(" %s ", flag);
	g_autofree gchar *line = g_strconcat(executing, " ", NULL);

	return strstr(line, spaced) != NULL;
}

/* The same binary twice: probed once. */
static void test_restart_same_binary(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *first = NULL, *second = NULL;

	site_init(&s);
	first = run_once(&s, "2.6.12");
	g_assert_cmpuint(probes(&s), ==, 1);
	second = run_once(&s, "2.6.12");
	g_assert_cmpuint(probes(&s), ==, 1);
	g_assert_true(runs_as(second, "-db"));
}

/* Replaced (a new inode) or changed in place (mtime, ctime): probed anew,
 * and the new version is the one used. */
static void test_binary_replaced(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *first = NULL, *second = NULL, *third = NULL;
	g_autofree gchar *data = NULL;
	struct timespec later[2] = { { 0, UTIME_OMIT }, { 0, 0 } };
	struct stat st;
	gsize len;

	site_init(&s);
	first = run_once(&s, "2.6.12");
	g_assert_true(runs_as(first, "-db"));
	g_assert_cmpuint(probes(&s), ==, 1);

	copy_fake(s.haproxy);
	second = run_once(&s, "1.7.0");
	g_assert_cmpuint(probes(&s), ==, 2);
	g_assert_true(runs_as(second, "-Ds"));

	/* Rewritten in place, same inode, size, and even the old mtime: the
	 * ctime still tells. */
	g_assert_cmpint(stat(s.haproxy, &st), ==, 0);
	g_assert_true(g_file_get_contents(s.haproxy, &data, &len, NULL));
	{
		int fd = open(s.haproxy, O_WRONLY | O_TRUNC);

		g_assert_cmpint(fd, >=, 0);
		g_assert_cmpint(write(fd, data, len), ==, (gssize)len);
		later[1] = st.st_mtim;
		g_assert_cmpint(futimens(fd, later), ==, 0);
		close(fd);
	}
	third = run_once(&s, "2.6.12");
	g_assert_cmpuint(probes(&s), ==, 3);
	g_assert_true(runs_as(third, "-db"));
}

/* The cache written by a first run of a 1.7.0, made to say 2.6.12 for
 * this very binary, then spoiled by how: if believed, the wrapper would
 * run the 1.7.0 with -db instead of -Ds. */
static void assert_ignored(const char *how)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *first = NULL, *second = NULL, *path = NULL;
	g_autofree gchar *text = NULL, *edited = NULL;
	gchar *at;

	site_init(&s);
	first = run_once(&s, "1.7.0");
	g_assert_true(runs_as(first, "-Ds"));
	path = cache_path(&s);
	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	at = strstr(text, "version=1.7.0");
	g_assert_nonnull(at);
	*at = '\0';
	edited = g_strconcat(text, "version=2.6.12\n", NULL);
	g_assert_true(g_file_set_contents(path, edited, -1, NULL));
	g_assert_cmpint(chmod(path, 0600), ==, 0);

	if (g_str_equal(how, "other-user")) {
		g_assert_cmpint(chown(path, NOBODY, NOBODY), ==, 0);
	} else if (g_str_equal(how, "group-writable")) {
		g_assert_cmpint(chmod(path, 0620), ==, 0);
	} else if (g_str_equal(how, "symlink")) {
		g_autofree gchar *elsewhere = g_build_filename(s.dir, "planted",
							       NULL);

		g_assert_cmpint(rename(path, elsewhere), ==, 0);
		g_assert_cmpint(symlink(elsewhere, path), ==, 0);
	} else if (g_str_equal(how, "corrupt")) {
		g_assert_true(g_file_set_contents(path, "version=2.6.12\n\xff",
						  -1, NULL));
	} else {
		/* "trusted": the control, this one is believed. */
		g_assert_true(g_str_equal(how, "trusted"));
	}
	second = run_once(&s, "1.7.0");
	if (g_str_equal(how, "trusted")) {
		g_assert_cmpuint(probes(&s), ==, 1);
		g_assert_true(runs_as(second, "-db"));
	} else {
		g_assert_cmpuint(probes(&s), ==, 2);
		g_assert_true(runs_as(second, "-Ds"));
	}
}

/* A binary replaced while "haproxy -v" runs (here by the probe itself,
 * a script that renames a copy of itself in): the version read is not
 * kept for the new file, whose version it may not be. */
static void test_replaced_during_probe(void)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *script = NULL, *cache = NULL, *first = NULL;
	g_autofree gchar *second = NULL;

	site_init(&s);
	script = g_strdup_printf("#!/bin/sh\n"
				 "if [ \"$1\" = -v ]; then\n"
				 "    cp \"$0\" \"$0.new\" && mv \"$0.new\" \"$0\"\n"
				 "fi\n"
				 "exec %s \"$@\"\n", t_fake_path());
	g_assert_true(g_file_set_contents(s.haproxy, script, -1, NULL));
	g_assert_cmpint(chmod(s.haproxy, 0755), ==, 0);
	cache = cache_path(&s);

	first = run_once(&s, "2.6.12");
	g_assert_cmpuint(probes(&s), ==, 1);
	g_assert_false(g_file_test(cache, G_FILE_TEST_EXISTS));
	second = run_once(&s, "2.6.12");
	g_assert_cmpuint(probes(&s), ==, 2);
	g_assert_true(runs_as(second, "-db"));
}

/*
 * systemd's RuntimeDirectory= is removed at every stop (and /run at every
 * boot): with CacheDirectory= ($CACHE_DIRECTORY) the version is kept there
 * instead, so a start after the wipe does not probe. A cache directory that
 * others may write is not used (nor written): each start probes.
 */
static void assert_cache_directory(gboolean trusted)
{
	g_auto(TSite) s = { 0 };
	g_autofree gchar *cache = NULL, *env = NULL, *in_cache = NULL;
	g_autofree gchar *in_rundir = NULL, *first = NULL, *second = NULL;

	site_init(&s);
	/* Longer than a runtime directory may be (its sockets): a cache
	 * directory holds none, its length does not matter. */
	cache = g_build_filename(s.dir, "var/cache/a-cache-directory-as-long-"
				 "as-a-socket-path-could-never-be-on-linux",
				 "haproxy-systemd-wrapper", NULL);
	g_assert_cmpuint(strlen(cache), >, 108);
	g_assert_cmpint(g_mkdir_with_parents(cache, 0755), ==, 0);
	if (!trusted)
		g_assert_cmpint(chmod(cache, 0777), ==, 0);
	/* systemd lists one directory per CacheDirectory= entry. */
	env = g_strdup_printf("%s:%s/other", cache, s.dir);
	t_site_setenv(&s, "CACHE_DIRECTORY", env);
	in_cache = g_build_filename(cache, CACHE, NULL);
	in_rundir = cache_path(&s);

	first = run_once(&s, "1.7.0");
	g_assert_cmpuint(probes(&s), ==, 1);
	g_assert_cmpint(g_file_test(in_cache, G_FILE_TEST_EXISTS), ==, trusted);
	g_assert_false(g_file_test(in_rundir, G_FILE_TEST_EXISTS));
	t_rmtree(s.rundir);
	second = run_once(&s, "1.7.0");
	g_assert_cmpuint(probes(&s), ==, trusted ? 1 : 2);
	g_assert_true(runs_as(second, "-Ds"));
}

static void test_cache_directory(void) { assert_cache_directory(TRUE); }
static void test_cache_directory_untrusted(void)
{
	assert_cache_directory(FALSE);
}

static void test_trusted(void) { assert_ignored("trusted"); }
static void test_other_user(void) { assert_ignored("other-user"); }
static void test_group_writable(void) { assert_ignored("group-writable"); }
static void test_symlink(void) { assert_ignored("symlink"); }
static void test_corrupt(void) { assert_ignored("corrupt"); }

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/vcache/restart-same-binary", test_restart_same_binary);
	g_test_add_func("/vcache/binary-replaced", test_binary_replaced);
	g_test_add_func("/vcache/trusted-file-believed", test_trusted);
	g_test_add_func("/vcache/other-user-ignored", test_other_user);
	g_test_add_func("/vcache/group-writable-ignored", test_group_writable);
	g_test_add_func("/vcache/symlink-ignored", test_symlink);
	g_test_add_func("/vcache/corrupt-ignored", test_corrupt);
	g_test_add_func("/vcache/replaced-during-probe-not-kept",
			test_replaced_during_probe);
	g_test_add_func("/vcache/cache-directory-survives-rundir-wipe",
			test_cache_directory);
	g_test_add_func("/vcache/cache-directory-untrusted-ignored",
			test_cache_directory_untrusted);
	return g_test_run();
}
