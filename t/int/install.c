/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `make install` and `make uninstall` into a temporary DESTDIR: every file
 * where it belongs, with its mode, the units' paths substituted; and
 * nothing but directories left after uninstall. Runs make in the current
 * directory (the project's root, as prove runs it).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define PROG "haproxy-systemd-wrapper"

static const char *const examples[] = {
	"haproxy.service", "haproxy@.service", "haproxy-historic.service",
	"haproxy-notify-reload.service", NULL,
};

/* Beside README.wrapper, under the paths it gives them. */
static const char *const docs[] = {
	"README.wrapper", "NEWS", "doc/migration.md", "doc/figures.md", NULL,
};

/* Installed as they are named in contrib/, not only as examples. */
static const char *const units_as_is[] = {
	PROG "-metrics.service", PROG "-metrics.timer", NULL,
};

/* make TARGET VAR=VALUE..., without the outer make's jobserver. */
static void run_make(const char *target, const char *destdir,
		     const char *const *vars)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	g_auto(GStrv) env = g_get_environ();
	g_autoptr(GError) error = NULL;
	g_autofree gchar *out = NULL;
	g_autofree gchar *err = NULL;
	int status;

	g_ptr_array_add(argv, g_strdup("make"));
	g_ptr_array_add(argv, g_strdup("--no-print-directory"));
	g_ptr_array_add(argv, g_strdup(target));
	g_ptr_array_add(argv, g_strdup_printf("DESTDIR=%s", destdir));
	for (; vars && *vars; vars++)
		g_ptr_array_add(argv, g_strdup(*vars));
	g_ptr_array_add(argv, NULL);
	env = g_environ_unsetenv(env, "MAKEFLAGS");
	env = g_environ_unsetenv(env, "MFLAGS");
	env = g_environ_unsetenv(env, "MAKELEVEL");
	g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_SEARCH_PATH,
		     NULL, NULL, &out, &err, &status, &error);
	g_assert_no_error(error);
	if (!g_spawn_check_wait_status(status, NULL))
		g_error("make %s failed:\n%s%s", target, out, err);
}

static gchar *slurp(const char *path)
{
	g_autoptr(GError) error = NULL;
	gchar *text = NULL;

	g_file_get_contents(path, &text, NULL, &error);
	g_assert_no_error(error);
	return text;
}

static void assert_file(const char *root, const char *path, mode_t mode)
{
	g_autofree gchar *full = g_build_filename(root, path, NULL);
	struct stat st;

	if (lstat(full, &st) < 0)
		g_error("not installed: %s", path);
	g_assert_true(S_ISREG(st.st_mode));
	g_assert_cmpint(st.st_mode & 07777, ==, mode);
}

static void assert_same(const char *root, const char *path, const char *src)
{
	g_autofree gchar *full = g_build_filename(root, path, NULL);
	g_autofree gchar *a = NULL;
	g_autofree gchar *b = NULL;
	gsize la, lb;

	g_assert_true(g_file_get_contents(full, &a, &la, NULL));
	g_assert_true(g_file_get_contents(src, &b, &lb, NULL));
	g_assert_cmpmem(a, la, b, lb);
}

/* A unit installed from contrib/systemd/src, its paths made sbindir's. */
static void assert_unit(const char *root, const char *path, const char *src,
			const char *sbindir)
{
	g_autofree gchar *full = g_build_filename(root, path, NULL);
	g_autofree gchar *text = slurp(full);
	g_autofree gchar *orig_path = g_build_filename("contrib/systemd", src,
						       NULL);
	g_autofree gchar *orig = slurp(orig_path);
	g_autofree gchar *wrapper = g_strdup_printf("%s/" PROG, sbindir);
	g_autoptr(GString) want = g_string_new(orig);

	assert_file(root, path, 0644);
	/* The timer names no program. */
	if (strstr(orig, "/usr/sbin/" PROG))
		g_assert_nonnull(strstr(text, wrapper));
	g_string_replace(want, "/usr/sbin/" PROG, wrapper, 0);
	g_assert_cmpstr(text, ==, want->str);
	g_assert_null(strstr(text, "@"  "WRAPPER@"));
}

/* Every entry below dir that is not a directory. */
static void collect_files(const char *dir, GPtrArray *found)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
	const char *name;

	while (d && (name = g_dir_read_name(d))) {
		g_autofree gchar *path = g_build_filename(dir, name, NULL);

		if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
		    !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
			collect_files(path, found);
		else
			g_ptr_array_add(found, g_steal_pointer(&path));
	}
}

static void rmtree(const char *dir)
{
	const char *argv[] = { "rm", "-rf", "--one-file-system", dir, NULL };

	g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH |
		     G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, NULL,
		     NULL);
}

static void assert_uninstalled(const char *destdir, const char *docdir)
{
	g_autoptr(GPtrArray) left = g_ptr_array_new_with_free_func(g_free);
	g_autofree gchar *doc = g_build_filename(destdir, docdir, NULL);

	collect_files(destdir, left);
	for (guint i = 0; i < left->len; i++)
		g_test_message("left behind: %s",
			       (char *)g_ptr_array_index(left, i));
	g_assert_cmpuint(left->len, ==, 0);
	g_assert_false(g_file_test(doc, G_FILE_TEST_EXISTS));
}

/* pkg-config's variable of systemd, else fallback. */
static gchar *systemd_dir(const char *variable, const char *fallback)
{
	g_autofree gchar *option = g_strdup_printf("--variable=%s", variable);
	gchar *out = NULL;
	const char *argv[] = { "pkg-config", option, "systemd", NULL };

	if (g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH |
			 G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
			 NULL, NULL) && out && *g_strstrip(out))
		return out;
	g_free(out);
	return g_strdup(fallback);
}

struct dirs {
	const char *sbin, *man, *unit, *doc, *preset, *data;
};

static void check_tree(const char *destdir, const struct dirs *d)
{
	const char *sbindir = d->sbin, *mandir = d->man, *unitdir = d->unit;
	const char *docdir = d->doc;
	g_autofree gchar *dropin = g_build_filename(
		d->data, "haproxy.service.d", "wrapper.conf", NULL);
	g_autofree gchar *preset = g_build_filename(
		d->preset, "80-" PROG ".preset", NULL);
	g_autofree gchar *bin = g_build_filename(sbindir, PROG, NULL);
	g_autofree gchar *man = g_build_filename(mandir, "man8", PROG ".8",
						 NULL);
	g_autofree gchar *svc = g_build_filename(unitdir, PROG ".service",
						 NULL);
	g_autofree gchar *tpl = g_build_filename(unitdir, PROG "@.service",
						 NULL);

	assert_file(destdir, bin, 0755);
	assert_same(destdir, bin, "./" PROG);
	assert_file(destdir, man, 0644);
	assert_same(destdir, man, "doc/" PROG ".8");
	assert_unit(destdir, svc, "haproxy.service", sbindir);
	assert_unit(destdir, tpl, "haproxy@.service", sbindir);
	for (const char *const *u = units_as_is; *u; u++) {
		g_autofree gchar *path = g_build_filename(unitdir, *u, NULL);

		assert_unit(destdir, path, *u, sbindir);
	}
	for (const char *const *e = examples; *e; e++) {
		g_autofree gchar *path = g_build_filename(docdir, "examples",
							  *e, NULL);

		assert_unit(destdir, path, *e, sbindir);
	}
	/* Not under doc/, which minimal images strip: needed to run. */
	assert_unit(destdir, dropin, "haproxy.service.d/wrapper.conf", sbindir);
	assert_file(destdir, preset, 0644);
	assert_same(destdir, preset, "contrib/systemd/" PROG ".preset");
	for (const char *const *e = docs; *e; e++) {
		g_autofree gchar *path = g_build_filename(docdir, *e, NULL);

		assert_file(destdir, path, 0644);
		assert_same(destdir, path, *e);
	}
}

static void test_defaults(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *destdir = g_dir_make_tmp("hsw-install-XXXXXX",
						   &error);
	g_autofree gchar *unitdir = systemd_dir("systemdsystemunitdir",
						"/lib/systemd/system");
	g_autofree gchar *presetdir = systemd_dir("systemdsystempresetdir",
						  "/lib/systemd/system-preset");
	const char *docdir = "/usr/share/doc/" PROG;
	const struct dirs dirs = {
		"/usr/sbin", "/usr/share/man", unitdir, docdir, presetdir,
		"/usr/share/" PROG,
	};

	g_assert_no_error(error);
	run_make("install", destdir, NULL);
	check_tree(destdir, &dirs);
	run_make("uninstall", destdir, NULL);
	assert_uninstalled(destdir, docdir);
	rmtree(destdir);
}

static void test_every_variable(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *destdir = g_dir_make_tmp("hsw-install-XXXXXX",
						   &error);
	const char *const vars[] = {
		"PREFIX=/opt/hsw", "SBINDIR=/opt/hsw/bin",
		"MANDIR=/opt/hsw/man", "UNITDIR=/opt/hsw/units",
		"DOCDIR=/opt/hsw/doc", "PRESETDIR=/opt/hsw/preset",
		"DATADIR=/opt/hsw/share", NULL,
	};
	const struct dirs dirs = {
		"/opt/hsw/bin", "/opt/hsw/man", "/opt/hsw/units", "/opt/hsw/doc",
		"/opt/hsw/preset", "/opt/hsw/share",
	};
	g_autofree gchar *historic = NULL;
	g_autofree gchar *text = NULL;

	g_assert_no_error(error);
	run_make("install", destdir, vars);
	check_tree(destdir, &dirs);
	/* The historic unit's ExecStart and its ExecStartPre's haproxy. */
	historic = g_build_filename(destdir, "/opt/hsw/doc/examples",
				    "haproxy-historic.service", NULL);
	text = slurp(historic);
	g_assert_nonnull(strstr(text, "\nExecStart=/opt/hsw/bin/" PROG " -f "
				"/etc/haproxy/haproxy.cfg -p /run/haproxy.pid\n"));
	g_assert_nonnull(strstr(text, "\nExecStartPre=/usr/sbin/haproxy -f"));
	g_assert_nonnull(strstr(text, "\nExecReload=/bin/kill -USR2 $MAINPID\n"));
	run_make("uninstall", destdir, vars);
	assert_uninstalled(destdir, "/opt/hsw/doc");
	rmtree(destdir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/install/defaults", test_defaults);
	g_test_add_func("/install/every-variable", test_every_variable);
	return g_test_run();
}
