/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for legacy/args.c: splitting the 1.x wrapper command line;
 * and legacy/launch.c: which haproxy the 1.x rule finds. */
#include <glib/gstdio.h>
#include <string.h>

#include "legacy/args.h"
#include "legacy/launch.h"
#include "legacy/version.h"

#define CWD "/srv/cwd"

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_ARGS ((const char *const[]){ NULL })

static void assert_strv(char *const *got, const char *const *want)
{
	guint i;

	g_assert_nonnull(got);
	for (i = 0; want[i] != NULL; i++) {
		g_assert_nonnull(got[i]);
		g_assert_cmpstr(got[i], ==, want[i]);
	}
	g_assert_null(got[i]);
}

static void assert_pids(const GArray *got, const GPid *want, guint n)
{
	g_assert_nonnull(got);
	g_assert_cmpuint(got->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpint(g_array_index(got, GPid, i), ==, want[i]);
}

static void assert_cleared(const struct wrapper_args *a)
{
	g_assert_null(a->wrapper_opts);
	g_assert_null(a->haproxy_args);
	g_assert_null(a->config_tail);
	g_assert_null(a->pidfile);
	g_assert_null(a->user_old_pids);
	g_assert_false(a->user_old_hard);
	g_assert_cmpint(a->oneshot, ==, ONESHOT_NONE);
}

static void parse_ok(const char *const *argv, struct wrapper_args *a)
{
	g_autoptr(GError) error = NULL;

	g_assert_true(wrapper_args_parse((int)g_strv_length((GStrv)argv),
					 (char *const *)argv, CWD, a, &error));
	g_assert_no_error(error);
	g_assert_nonnull(a->wrapper_opts);
	g_assert_nonnull(a->haproxy_args);
	g_assert_nonnull(a->user_old_pids);
}

/* Fails, and the message names needle. */
static void parse_fails(const char *const *argv, const char *needle)
{
	struct wrapper_args a = { 0 };
	g_autoptr(GError) error = NULL;

	g_assert_false(wrapper_args_parse((int)g_strv_length((GStrv)argv),
					  (char *const *)argv, CWD, &a,
					  &error));
	g_assert_error(error, WRAPPER_ARGS_ERROR, WRAPPER_ARGS_ERROR_USAGE);
	g_assert_nonnull(strstr(error->message, needle));
	g_assert_null(strchr(error->message, '\n'));
	assert_cleared(&a);
	wrapper_args_clear(&a);
}

static void test_plain_15_line(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "/etc/haproxy/haproxy.cfg", "-p",
		      "/run/haproxy.pid"), &a);
	assert_strv(a.wrapper_opts, NO_ARGS);
	assert_strv(a.haproxy_args, ARGV("-f", "/etc/haproxy/haproxy.cfg",
					 "-p", "/run/haproxy.pid"));
	g_assert_null(a.config_tail);
	g_assert_cmpstr(a.pidfile, ==, "/run/haproxy.pid");
	assert_pids(a.user_old_pids, NULL, 0);
	g_assert_false(a.user_old_hard);
	g_assert_cmpint(a.oneshot, ==, ONESHOT_NONE);
	wrapper_args_clear(&a);
}

static void test_empty(void)
{
	struct wrapper_args a;

	parse_ok(NO_ARGS, &a);
	assert_strv(a.wrapper_opts, NO_ARGS);
	assert_strv(a.haproxy_args, NO_ARGS);
	g_assert_null(a.config_tail);
	g_assert_null(a.pidfile);
	wrapper_args_clear(&a);
}

static void test_ds_removed(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg", "-Ds", "-p", "/run/h.pid"), &a);
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg", "-p", "/run/h.pid"));
	wrapper_args_clear(&a);
}

static void test_mode_flags(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-D", "-d", "-Dfoo", "-dR", "-db", "-dW", "-dM0x50",
		      "-dbx", "-f", "a.cfg"), &a);
	assert_strv(a.haproxy_args, ARGV("-d", "-dR", "-dW", "-dM0x50",
					 "-dbx", "-f", "a.cfg"));
	wrapper_args_clear(&a);
}

static void test_wrapper_options(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("--haproxy=/x", "-f", "a.cfg", "--verbose", "-q",
		      "--haproxy=/y"), &a);
	assert_strv(a.wrapper_opts, ARGV("--haproxy=/x", "--verbose",
					 "--haproxy=/y"));
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg", "-q"));
	g_assert_null(a.config_tail);
	wrapper_args_clear(&a);
}

static void test_config_tail(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("--haproxy=/x", "-f", "a.cfg", "--", "b.cfg",
		      "--haproxy=x", "-Ds", "-p", "/t.pid", "--", "-W"), &a);
	assert_strv(a.wrapper_opts, ARGV("--haproxy=/x"));
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg"));
	assert_strv(a.config_tail, ARGV("b.cfg", "--haproxy=x", "-Ds", "-p",
					"/t.pid", "--", "-W"));
	/* a -p after "--" is a config file name, not a pidfile */
	g_assert_null(a.pidfile);
	wrapper_args_clear(&a);
}

static void test_config_tail_empty(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg", "--"), &a);
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg"));
	g_assert_nonnull(a.config_tail);
	assert_strv(a.config_tail, NO_ARGS);
	wrapper_args_clear(&a);
}

static void test_pidfile_last_wins(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-p", "/run/a.pid", "-f", "x", "-p", "/run/b.pid"), &a);
	g_assert_cmpstr(a.pidfile, ==, "/run/b.pid");
	assert_strv(a.haproxy_args, ARGV("-p", "/run/a.pid", "-f", "x", "-p",
					 "/run/b.pid"));
	wrapper_args_clear(&a);
}

static void check_pidfile(const char *const *argv, const char *want)
{
	struct wrapper_args a;

	parse_ok(argv, &a);
	g_assert_cmpstr(a.pidfile, ==, want);
	wrapper_args_clear(&a);
}

static void test_pidfile_relative(void)
{
	check_pidfile(ARGV("-p", "h.pid"), CWD "/h.pid");
	check_pidfile(ARGV("-p", "run/h.pid"), CWD "/run/h.pid");
	check_pidfile(ARGV("-C", "/etc/haproxy", "-p", "run/h.pid"),
		      "/etc/haproxy/run/h.pid");
	check_pidfile(ARGV("-C", "conf", "-p", "h.pid"), CWD "/conf/h.pid");
	/* haproxy changes directory before it opens the pidfile */
	check_pidfile(ARGV("-p", "h.pid", "-C", "/d"), "/d/h.pid");
	check_pidfile(ARGV("-C", "/a", "-C", "/b", "-p", "h.pid"),
		      "/b/h.pid");
	check_pidfile(ARGV("-C", "/d", "-p", "/run/h.pid"), "/run/h.pid");
	check_pidfile(ARGV("-C", "/d"), NULL);
}

static void test_value_looks_like_flag(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "--weird", "-f", "-Ds", "-L", "-W", "-p", "--",
		      "-S", "-sf", "-cc", "-v", "-x", "--"), &a);
	assert_strv(a.wrapper_opts, NO_ARGS);
	assert_strv(a.haproxy_args, ARGV("-f", "--weird", "-f", "-Ds", "-L",
					 "-W", "-p", "--", "-S", "-sf", "-cc",
					 "-v", "-x", "--"));
	g_assert_null(a.config_tail);
	g_assert_cmpstr(a.pidfile, ==, CWD "/--");
	assert_pids(a.user_old_pids, NULL, 0);
	g_assert_cmpint(a.oneshot, ==, ONESHOT_CHECK);
	wrapper_args_clear(&a);
}

static void test_value_missing(void)
{
	parse_fails(ARGV("-f"), "option '-f' needs a value");
	parse_fails(ARGV("-f", "a.cfg", "-p"), "option '-p' needs a value");
	parse_fails(ARGV("-fx"), "'-fx'");
	parse_fails(ARGV("-cc"), "'-cc'");
	parse_fails(ARGV("-q", "-S"), "'-S'");
	parse_fails(ARGV("--haproxy=/x", "-C"), "'-C'");
}

static void test_old_pids(void)
{
	static const GPid soft[] = { 12, 34 };
	static const GPid hard[] = { 5 };
	static const GPid both[] = { 1, 2, 2147483647 };
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg", "-sf", "12", "34", "-p", "/p"), &a);
	assert_pids(a.user_old_pids, soft, G_N_ELEMENTS(soft));
	g_assert_false(a.user_old_hard);
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg", "-p", "/p"));
	wrapper_args_clear(&a);

	parse_ok(ARGV("-st", "5"), &a);
	assert_pids(a.user_old_pids, hard, G_N_ELEMENTS(hard));
	g_assert_true(a.user_old_hard);
	assert_strv(a.haproxy_args, NO_ARGS);
	wrapper_args_clear(&a);

	parse_ok(ARGV("-sf", "1", "-st", "2", "2147483647", "--", "c"), &a);
	assert_pids(a.user_old_pids, both, G_N_ELEMENTS(both));
	g_assert_true(a.user_old_hard);
	assert_strv(a.haproxy_args, NO_ARGS);
	assert_strv(a.config_tail, ARGV("c"));
	wrapper_args_clear(&a);

	/* an empty list is allowed, as by haproxy */
	parse_ok(ARGV("-sf", "-f", "a.cfg"), &a);
	assert_pids(a.user_old_pids, NULL, 0);
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg"));
	wrapper_args_clear(&a);
}

static void test_old_pids_dash_ends_list(void)
{
	static const GPid want[] = { 7 };
	struct wrapper_args a;

	parse_ok(ARGV("-sf", "7", "-3"), &a);
	assert_pids(a.user_old_pids, want, G_N_ELEMENTS(want));
	assert_strv(a.haproxy_args, ARGV("-3"));
	wrapper_args_clear(&a);
}

static void test_old_pids_invalid(void)
{
	parse_fails(ARGV("-sf", "0"), "'0'");
	parse_fails(ARGV("-sf", "1x"), "'1x'");
	parse_fails(ARGV("-sf", "99999999999"), "'99999999999'");
	parse_fails(ARGV("-st", "2147483648"), "'2147483648'");
	parse_fails(ARGV("-sf", "12", "007"), "'007'");
	parse_fails(ARGV("-sf", "+7"), "'+7'");
	parse_fails(ARGV("-sf", ""), "''");
	parse_fails(ARGV("-f", "a", "-st", " 5"), "-st");
}

/* -W/-Ws ask for master-worker mode; the wrapper adds -Ws itself. */
static void test_master_worker_asked(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg"), &a);
	g_assert_false(a.master_worker);
	wrapper_args_clear(&a);
	parse_ok(ARGV("-W", "-f", "a.cfg", "-Ws"), &a);
	g_assert_true(a.master_worker);
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg"));
	wrapper_args_clear(&a);
	/* After "--", a file name. */
	parse_ok(ARGV("-f", "a.cfg", "--", "-W"), &a);
	g_assert_false(a.master_worker);
	wrapper_args_clear(&a);
}

/* A document's words, one space between them, without roff's font
 * macros and escapes or the "#" of a unit file's comments. */
static gchar *doc_words(const char *path)
{
	g_autofree gchar *text = NULL;
	g_auto(GStrv) lines = NULL;
	GString *out = g_string_new(NULL);

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		const char *p = *l;

		if (*p == '.' || *p == '#')
			p = strchr(p, ' ') ? strchr(p, ' ') + 1 : "";
		for (; *p; p++) {
			if (p[0] == '\\' && p[1])
				p++;
			else if (*p == '"')
				continue;
			if (g_ascii_isspace(*p) && out->len &&
			    out->str[out->len - 1] == ' ')
				continue;
			g_string_append_c(out, g_ascii_isspace(*p) ? ' ' : *p);
		}
		if (out->len && out->str[out->len - 1] != ' ')
			g_string_append_c(out, ' ');
	}
	return g_string_free(out, FALSE);
}

/*
 * -W, -Ws and -S (in the units' EXTRAOPTS, say) select master-worker mode
 * behind the wrapper, and no document an operator reads says otherwise
 * (that the wrapper refuses them, that they must stay out of EXTRAOPTS).
 */
static void test_master_worker_flags_documented(void)
{
	static const char *const docs[] = {
		"README.wrapper", "doc/haproxy-systemd-wrapper.8",
		"doc/migration.md", "debian/README.Debian",
		"contrib/systemd/haproxy.service",
		"contrib/systemd/haproxy@.service",
		"contrib/systemd/haproxy-notify-reload.service",
		"contrib/systemd/haproxy.service.d/wrapper.conf", NULL,
	};
	static const char *const untrue[] = {
		"refuses -W", "Do not put -S", "do not put -S", "not put -W",
		"remove -Ws and -S", NULL,
	};
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg", "-W"), &a);
	g_assert_true(a.master_worker);
	wrapper_args_clear(&a);
	parse_ok(ARGV("-f", "a.cfg", "-Ws"), &a);
	g_assert_true(a.master_worker);
	wrapper_args_clear(&a);
	parse_ok(ARGV("-f", "a.cfg", "-S", "/run/haproxy-master.sock"), &a);
	g_assert_true(a.master_worker);
	wrapper_args_clear(&a);
	for (const char *const *d = docs; *d; d++) {
		g_autofree gchar *words = doc_words(*d);

		for (const char *const *u = untrue; *u; u++)
			if (strstr(words, *u))
				g_error("%s says \"%s\", but -W, -Ws and -S "
					"select master-worker mode", *d, *u);
	}
}

/* -S <bind>[,<option>...] is haproxy's master CLI: master-worker mode,
 * with -S and its one value left for haproxy. */
static void test_master_cli(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg", "-W"), &a);
	g_assert_false(a.master_cli);
	wrapper_args_clear(&a);
	parse_ok(ARGV("-f", "a.cfg", "-S", "/run/haproxy-master.sock"), &a);
	g_assert_true(a.master_worker);
	g_assert_true(a.master_cli);
	assert_strv(a.haproxy_args, ARGV("-f", "a.cfg", "-S",
					 "/run/haproxy-master.sock"));
	wrapper_args_clear(&a);
	parse_ok(ARGV("-S", "/run/m.sock,mode,600,level,admin", "-f", "a"),
		 &a);
	g_assert_true(a.master_cli);
	assert_strv(a.haproxy_args, ARGV("-S",
					 "/run/m.sock,mode,600,level,admin",
					 "-f", "a"));
	wrapper_args_clear(&a);
	/* a value that looks like a flag is still -S's */
	parse_ok(ARGV("-S", "-W", "-f", "a"), &a);
	g_assert_true(a.master_cli);
	assert_strv(a.haproxy_args, ARGV("-S", "-W", "-f", "a"));
	wrapper_args_clear(&a);
	/* after "--", a file name */
	parse_ok(ARGV("-f", "a.cfg", "--", "-S", "x"), &a);
	g_assert_false(a.master_cli);
	g_assert_false(a.master_worker);
	wrapper_args_clear(&a);
	parse_fails(ARGV("-f", "a.cfg", "-S"), "-S");
}

static void check_oneshot(const char *const *argv, enum oneshot want)
{
	struct wrapper_args a;

	parse_ok(argv, &a);
	g_assert_cmpint(a.oneshot, ==, want);
	/* one-shot flags stay for haproxy */
	assert_strv(a.haproxy_args, argv);
	wrapper_args_clear(&a);
}

static void test_oneshot(void)
{
	check_oneshot(ARGV("-c", "-f", "a.cfg"), ONESHOT_CHECK);
	check_oneshot(ARGV("-f", "a.cfg", "-cc", "defined(X)"), ONESHOT_CHECK);
	check_oneshot(ARGV("-v"), ONESHOT_VERSION);
	check_oneshot(ARGV("-f", "a.cfg", "-vv"), ONESHOT_VERSION);
	check_oneshot(ARGV("-vqs"), ONESHOT_VERSION);
	check_oneshot(ARGV("-c", "-v"), ONESHOT_VERSION);
	check_oneshot(ARGV("-v", "-c"), ONESHOT_VERSION);
	check_oneshot(ARGV("-f", "-c"), ONESHOT_NONE);
	check_oneshot(ARGV("-f", "-v"), ONESHOT_NONE);
	check_oneshot(ARGV("-cx", "-V", "-q"), ONESHOT_NONE);
	check_oneshot(ARGV("-", "", "word"), ONESHOT_NONE);
}

static void test_oneshot_after_dashdash(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("-f", "a.cfg", "--", "-c", "-v"), &a);
	g_assert_cmpint(a.oneshot, ==, ONESHOT_NONE);
	wrapper_args_clear(&a);
}

static void test_clear_twice(void)
{
	struct wrapper_args a;

	parse_ok(ARGV("--x=1", "-p", "p", "-sf", "3", "--", "t"), &a);
	wrapper_args_clear(&a);
	assert_cleared(&a);
	wrapper_args_clear(&a);
	assert_cleared(&a);
}

static void check_build(const char *const *argv, enum launch_mode mode,
			const GPid *old, guint n_old, GPid witness,
			gboolean hard, const char *const *want)
{
	struct wrapper_args a;
	g_auto(GStrv) got = NULL;

	parse_ok(argv, &a);
	got = haproxy_argv_build("/usr/sbin/haproxy", mode, NULL, &a, NULL,
				 old, n_old, witness, hard);
	assert_strv(got, want);
	wrapper_args_clear(&a);
}

/* The wrapper's own -f and -x go before the mode flag and any "--". */
static void test_argv_build_extra(void)
{
	static const char *const extra[] = { "-f", "/run/l.cfg", "-x",
					     "/run/l.sock", NULL };
	static const GPid old[] = { 10 };
	struct wrapper_args a;
	g_auto(GStrv) got = NULL;

	parse_ok(ARGV("-f", "a.cfg", "--", "b.cfg"), &a);
	got = haproxy_argv_build("/usr/sbin/haproxy", LAUNCH_DB, NULL, &a,
				 extra, old, 1, 99, FALSE);
	assert_strv(got, ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-f",
			      "/run/l.cfg", "-x", "/run/l.sock", "-db", "-sf",
			      "10", "99", "--", "b.cfg"));
	wrapper_args_clear(&a);
}

/* The hand-off's master: -Ws in the mode flag's place, no witness. */
static void test_argv_build_master(void)
{
	static const char *const extra[] = { "-x", "/run/l.sock", NULL };
	static const GPid old[] = { 10, 20 };
	struct wrapper_args a;
	g_auto(GStrv) got = NULL;

	parse_ok(ARGV("-f", "a.cfg", "-p", "/run/h.pid", "--", "b.cfg"), &a);
	got = haproxy_argv_build("/usr/sbin/haproxy", LAUNCH_MW, NULL, &a,
				 extra, old, 2, 0, FALSE);
	assert_strv(got, ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-p",
			      "/run/h.pid", "-x", "/run/l.sock", "-Ws", "-sf",
			      "10", "20", "--", "b.cfg"));
	wrapper_args_clear(&a);
}

static void test_argv_build(void)
{
	static const GPid old[] = { 10, 20 };

	check_build(ARGV("-f", "a.cfg", "--", "b.cfg"), LAUNCH_DB, old, 2, 99,
		    FALSE,
		    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-db", "-sf", "10",
			 "20", "99", "--", "b.cfg"));
	check_build(ARGV("-f", "a.cfg", "-Ds", "-p", "/run/h.pid"), LAUNCH_DS,
		    NULL, 0, 0, FALSE,
		    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-p",
			 "/run/h.pid", "-Ds"));
	check_build(ARGV("-f", "a.cfg", "-db"), LAUNCH_DB, NULL, 0, 0, TRUE,
		    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-db"));
	check_build(ARGV("-f", "a.cfg"), LAUNCH_DS, NULL, 0, 4242, TRUE,
		    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-Ds", "-st",
			 "4242"));
	check_build(ARGV("-f", "a.cfg"), LAUNCH_DS, old, 2, 0, FALSE,
		    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-Ds", "-sf",
			 "10", "20"));
	check_build(ARGV("-f", "a.cfg"), LAUNCH_DB, old, 1, -1, TRUE,
		    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-db", "-st",
			 "10"));
	check_build(ARGV("--"), LAUNCH_DB, NULL, 0, 0, FALSE,
		    ARGV("/usr/sbin/haproxy", "-db", "--"));
	/* the user's -sf pids are not the build's business */
	check_build(ARGV("-sf", "7", "-f", "a.cfg"), LAUNCH_DB, NULL, 0, 0,
		    FALSE, ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-db"));
}

static struct haproxy_version version(const char *text)
{
	g_autofree gchar *banner = g_strdup_printf("HA-Proxy version %s "
						   "2017/01/01\n", text);
	struct haproxy_version v;

	g_assert_true(haproxy_version_parse(banner, &v));
	return v;
}

static void check_build_version(const char *ver, enum launch_mode mode,
				const char *const *argv,
				const char *const *want)
{
	struct haproxy_version v = version(ver);
	struct wrapper_args a;
	g_auto(GStrv) got = NULL;

	g_test_message("haproxy %s", ver);
	parse_ok(argv, &a);
	got = haproxy_argv_build("/usr/sbin/haproxy", mode, &v, &a, NULL,
				 NULL, 0, 7, FALSE);
	assert_strv(got, want);
	wrapper_args_clear(&a);
}

/* haproxy 1.5 has no "--" (1.6 added it): each file becomes -f FILE,
 * before the flags, since 1.5 takes -sf/-st only last. */
static void test_argv_build_no_double_dash(void)
{
	check_build_version("1.5.18", LAUNCH_DS,
			    ARGV("-f", "a.cfg", "--", "b.cfg", "-c.cfg"),
			    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-f",
				 "b.cfg", "-f", "-c.cfg", "-Ds", "-sf", "7"));
	check_build_version("1.5.0", LAUNCH_DS, ARGV("-f", "a.cfg", "--"),
			    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-Ds",
				 "-sf", "7"));
	check_build_version("1.6.0", LAUNCH_DS,
			    ARGV("-f", "a.cfg", "--", "b.cfg"),
			    ARGV("/usr/sbin/haproxy", "-f", "a.cfg", "-Ds",
				 "-sf", "7", "--", "b.cfg"));
	check_build_version("2.6.12", LAUNCH_DB,
			    ARGV("--", "b.cfg", "c.cfg"),
			    ARGV("/usr/sbin/haproxy", "-db", "-sf", "7", "--",
				 "b.cfg", "c.cfg"));
}

static void test_argv_oneshot(void)
{
	struct wrapper_args a;
	g_auto(GStrv) got = NULL;
	g_auto(GStrv) got2 = NULL;

	parse_ok(ARGV("-c", "-f", "a.cfg", "-Ds", "--", "b.cfg"), &a);
	got = haproxy_argv_oneshot("/opt/haproxy", &a);
	assert_strv(got, ARGV("/opt/haproxy", "-c", "-f", "a.cfg", "--",
			      "b.cfg"));
	wrapper_args_clear(&a);

	parse_ok(ARGV("-vv", "--haproxy=/opt/haproxy"), &a);
	got2 = haproxy_argv_oneshot("/opt/haproxy", &a);
	assert_strv(got2, ARGV("/opt/haproxy", "-vv"));
	wrapper_args_clear(&a);
}

/* The 1.x wrapper's rule: <name>-systemd-wrapper runs <name> from its own
 * directory first, then the directory's haproxy. */
static void test_locate_historic(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dir = g_dir_make_tmp("hsw-locate-XXXXXX", &error);
	g_autofree gchar *self = NULL, *named = NULL, *plain = NULL;
	g_autofree gchar *found = NULL, *fallback = NULL;

	g_assert_no_error(error);
	self = g_build_filename(dir, "haproxy26-systemd-wrapper", NULL);
	named = g_build_filename(dir, "haproxy26", NULL);
	plain = g_build_filename(dir, "haproxy", NULL);
	g_assert_true(g_file_set_contents(named, "", 0, NULL));
	g_assert_true(g_file_set_contents(plain, "", 0, NULL));

	found = haproxy_locate(NULL, self, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(found, ==, named);

	/* Without its own name's haproxy: the directory's. */
	g_assert_cmpint(g_unlink(named), ==, 0);
	fallback = haproxy_locate(NULL, self, &error);
	g_assert_no_error(error);
	g_assert_cmpstr(fallback, ==, plain);

	g_assert_cmpint(g_unlink(plain), ==, 0);
	g_assert_cmpint(g_rmdir(dir), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/args/plain-1.5-line", test_plain_15_line);
	g_test_add_func("/args/empty", test_empty);
	g_test_add_func("/args/ds-removed", test_ds_removed);
	g_test_add_func("/args/mode-flags", test_mode_flags);
	g_test_add_func("/args/wrapper-options", test_wrapper_options);
	g_test_add_func("/args/config-tail", test_config_tail);
	g_test_add_func("/args/config-tail-empty", test_config_tail_empty);
	g_test_add_func("/args/pidfile-last-wins", test_pidfile_last_wins);
	g_test_add_func("/args/pidfile-relative", test_pidfile_relative);
	g_test_add_func("/args/value-looks-like-flag",
			test_value_looks_like_flag);
	g_test_add_func("/args/value-missing", test_value_missing);
	g_test_add_func("/args/old-pids", test_old_pids);
	g_test_add_func("/args/old-pids-dash-ends-list",
			test_old_pids_dash_ends_list);
	g_test_add_func("/args/old-pids-invalid", test_old_pids_invalid);
	g_test_add_func("/args/master-worker-asked",
			test_master_worker_asked);
	g_test_add_func("/args/master-worker-flags-documented",
			test_master_worker_flags_documented);
	g_test_add_func("/args/master-cli", test_master_cli);
	g_test_add_func("/args/oneshot", test_oneshot);
	g_test_add_func("/args/oneshot-after-dashdash",
			test_oneshot_after_dashdash);
	g_test_add_func("/args/clear-twice", test_clear_twice);
	g_test_add_func("/args/argv-build", test_argv_build);
	g_test_add_func("/args/argv-build-extra", test_argv_build_extra);
	g_test_add_func("/args/argv-build-master", test_argv_build_master);
	g_test_add_func("/args/argv-build-no-double-dash",
			test_argv_build_no_double_dash);
	g_test_add_func("/args/argv-oneshot", test_argv_oneshot);
	g_test_add_func("/args/locate-historic", test_locate_historic);

	return g_test_run();
}
