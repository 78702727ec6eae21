/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fake haproxy (t/fake/fake-haproxy) against the real ones: the same
 * command lines through each real build of ../shared/haproxy (and
 * Debian's /usr/sbin/haproxy) and through the fake set to that build's
 * version, compared by exit status. The command lines are the ones the
 * wrapper builds or passes on: argument order, -sf/-st last on 1.5, "--",
 * -x, -W/-Ws, -S, and usage errors. Each runs in check mode (-c), so
 * that nothing binds or serves: the answer is haproxy's command line
 * parser and its verdict alone.
 *
 * What the fake cannot follow is the kernel's part: a listener closed by
 * a reload without -x (before 1.8) drops the connections in its accept
 * queue; the fake's listeners are the kernel's too, so a fake reload
 * resets them the same way, but how many wait there depends on load and
 * timing, not on anything a fake could state. /conformance/kernel says
 * so, skipped.
 *
 * $HSW_SERIES_DIR names the builds' directory (default ../shared/haproxy,
 * from the source tree); a build that is absent is skipped.
 */
#include "t/lib/harness.h"

#include <string.h>
#include <sys/wait.h>

#include "legacy/version.h"

#define SERIES_DIR_DEFAULT "../shared/haproxy"
#define RUN_BOUND_S "20"

static const char *const series[] = {
	"1.5.18", "1.7.0", "1.8.30", "2.0.0", "2.8.0", "3.0.0", "3.4.0",
};

/* A command line: "%A" and "%B" are two configurations (distinct
 * frontends and ports), "%S" a socket path under the test's directory. */
static const char *const lines[] = {
	"-c -f %A",
	"-c -f %A -f %B",
	"-c -f %A -sf 1",
	"-c -f %A -sf",
	"-c -f %A -Ds -sf 1 2",
	"-c -f %A -db -st 1",
	/* 1.5 takes -sf/-st only as its last arguments. */
	"-c -f %A -sf 1 -f %B",
	"-c -f %A -st 1 -f %B",
	"-c -sf 1 -f %A",
	"-c -f %A -sf 1 2 -st 3",
	"-c -f %A -sf 1 -Ds",
	"-c -f %A -sf x",
	/* "--" came with 1.6. */
	"-c -- %A",
	"-c -f %A -- %B",
	"-c -f %A -Ds -sf 1 -- %B",
	/* -x and -W/-Ws came with 1.8, -S with 1.9. */
	"-c -f %A -x %S",
	"-c -f %A -W",
	"-c -f %A -Ws",
	"-c -f %A -W -S %S",
	/* 3.0 refuses a master CLI without master-worker mode. */
	"-c -f %A -S %S",
	/* Usage errors. */
	"-c -f %A -Z",
	"-c",
	"",
	"-c -f",
};

struct conformance {
	gchar *dir;
	gchar *a;
	gchar *b;
	gchar *sock;
};

static gchar *config(struct conformance *c, const char *name,
		     const char *frontend)
{
	g_autofree gchar *text = g_strdup_printf(
		"defaults\n"
		"    mode http\n"
		"    timeout connect 1s\n"
		"    timeout client 10s\n"
		"    timeout server 10s\n"
		"frontend %s\n"
		"    bind 127.0.0.1:%u\n",
		frontend, t_free_port());

	return t_write_file(c->dir, name, text);
}

static void conformance_init(struct conformance *c)
{
	c->dir = t_tmpdir();
	c->a = config(c, "a.cfg", "fa");
	c->b = config(c, "b.cfg", "fb");
	c->sock = g_build_filename(t_short_dir(c->dir), "m.sock", NULL);
}

static void conformance_clear(struct conformance *c)
{
	t_rmtree(c->dir);
	g_free(c->dir);
	g_free(c->a);
	g_free(c->b);
	g_free(c->sock);
}

static GPtrArray *expand(struct conformance *c, const char *exe,
			 const char *line)
{
	g_auto(GStrv) words = g_strsplit(line, " ", -1);
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);

	/* Bounded, whatever a build makes of the line. */
	g_ptr_array_add(argv, g_strdup("timeout"));
	g_ptr_array_add(argv, g_strdup(RUN_BOUND_S));
	g_ptr_array_add(argv, g_strdup(exe));
	for (guint i = 0; words[i]; i++) {
		const char *w = words[i];

		if (!*w)
			continue;
		g_ptr_array_add(argv, g_strdup(g_str_equal(w, "%A") ? c->a :
					       g_str_equal(w, "%B") ? c->b :
					       g_str_equal(w, "%S") ? c->sock :
					       w));
	}
	g_ptr_array_add(argv, NULL);
	return argv;
}

/* The exit status of exe with line; version set for the fake. */
static int run(struct conformance *c, const char *exe, const char *version,
	       const char *line)
{
	g_autoptr(GPtrArray) argv = expand(c, exe, line);
	g_auto(GStrv) env = g_get_environ();
	g_autoptr(GError) error = NULL;
	int status;

	env = g_environ_setenv(env, "FAKE_HAPROXY_VERSION", version, TRUE);
	env = g_environ_unsetenv(env, "FAKE_HAPROXY_LOG");
	if (!g_spawn_sync(c->dir, (gchar **)argv->pdata, env,
			  G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
			  G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
			  &status, &error))
		g_error("%s: %s", exe, error->message);
	g_assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The version token of exe's banner ("1.8.30-c248dabed"). */
static gchar *version_of(const char *exe)
{
	const char *argv[] = { exe, "-v", NULL };
	g_autofree gchar *out = NULL;
	struct haproxy_version v;

	g_assert_true(g_spawn_sync(NULL, (gchar **)argv, NULL,
				   G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				   &out, NULL, NULL, NULL));
	g_assert_true(haproxy_version_parse(out, &v));
	return g_strdup(v.full);
}

/* Every line through exe and through the fake as its version: a test
 * failure names each line where they differ. */
static void compare(const char *exe)
{
	g_autofree gchar *fake = g_build_filename(t_dir(), "fake/fake-haproxy",
						  NULL);
	g_autofree gchar *version = NULL;
	struct conformance c = { 0 };
	guint differ = 0;

	if (!g_file_test(exe, G_FILE_TEST_IS_EXECUTABLE)) {
		g_autofree gchar *why = g_strdup_printf("no %s", exe);

		g_test_skip(why);
		return;
	}
	version = version_of(exe);
	conformance_init(&c);
	for (guint i = 0; i < G_N_ELEMENTS(lines); i++) {
		int real = run(&c, exe, version, lines[i]);
		int faked = run(&c, fake, version, lines[i]);

		g_test_message("haproxy %s \"%s\": real %d, fake %d", version,
			       lines[i], real, faked);
		if (real == faked)
			continue;
		differ++;
		g_test_fail_printf("haproxy %s, \"%s\": the real one exits "
				   "%d, the fake %d", version, lines[i], real,
				   faked);
	}
	conformance_clear(&c);
	g_assert_cmpuint(differ, ==, 0);
}

static void test_series(gconstpointer data)
{
	const char *env = g_getenv("HSW_SERIES_DIR");
	g_autofree gchar *exe = g_strdup_printf(
		"%s/haproxy-%s", env && *env ? env : SERIES_DIR_DEFAULT,
		(const char *)data);
	g_autofree gchar *abs = g_canonicalize_filename(exe, NULL);

	compare(abs);
}

static void test_debian(void)
{
	compare("/usr/sbin/haproxy");
}

static void test_kernel(void)
{
	g_test_skip("kernel behaviour, not the fake's: before 1.8 (no -x) "
		    "a reload closes the listeners and the kernel resets the "
		    "connections waiting in their accept queues; how many "
		    "depends on load and timing");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	for (guint i = 0; i < G_N_ELEMENTS(series); i++) {
		g_autofree gchar *path = g_strconcat("/conformance/",
						     series[i], NULL);

		g_test_add_data_func(path, series[i], test_series);
	}
	g_test_add_func("/conformance/debian", test_debian);
	g_test_add_func("/conformance/kernel", test_kernel);
	return g_test_run();
}
