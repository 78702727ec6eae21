/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for the pure parsers of base/procparse.c and migrate/cmdline.c:
 * PID/stat, the signal masks and ids of PID/status, PID/cmdline (huge and
 * random ones too), the configuration files of an argv.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "migrate/cmdline.h"
#include "t/lib/proctree.h"

static void test_parse_stat(void)
{
	struct proc_stat st;
	gsize start;
	static const char real[] =
		"6887 (haproxy) S 1 6887 6887 0 -1 4194304 867 0 0 0 0 0 0 0 "
		"20 0 1 0 152462 97755136 3124 18446744073709551615\n";
	static const char tricky[] =
		"12 (a) R 3 4 5 (b) ) Z 77 1 88 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
		"999 0\n";
	static const char with_nul[] = "5 (x\0y) S 9 1 1 0 -1 0 0 0 0 0 0 0 0 0 "
				       "20 0 1 0 42 0";
	static const char long_name[] = "5 (haproxy-systemd-wrapper) S 9 1 1 0 "
					"-1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0";

	g_assert_true(proc_parse_stat(real, sizeof(real) - 1, &st));
	g_assert_cmpint(st.state, ==, 'S');
	g_assert_cmpint(st.ppid, ==, 1);
	g_assert_cmpint(st.session, ==, 6887);
	g_assert_cmpuint(st.start_time, ==, 152462);
	g_assert_cmpstr(st.comm, ==, "haproxy");

	/* Only the last ")" ends the name. */
	g_assert_true(proc_parse_stat(tricky, sizeof(tricky) - 1, &st));
	g_assert_cmpint(st.state, ==, 'Z');
	g_assert_cmpint(st.ppid, ==, 77);
	g_assert_cmpint(st.session, ==, 88);
	g_assert_cmpuint(st.start_time, ==, 999);
	g_assert_cmpstr(st.comm, ==, "a) R 3 4 5 (b) ");

	g_assert_true(proc_parse_stat(with_nul, sizeof(with_nul) - 1, &st));
	g_assert_cmpint(st.ppid, ==, 9);
	g_assert_cmpuint(st.start_time, ==, 42);
	/* Up to its first NUL; never longer than the kernel's 15 bytes. */
	g_assert_cmpstr(st.comm, ==, "x");
	g_assert_true(proc_parse_stat(long_name, sizeof(long_name) - 1, &st));
	g_assert_cmpstr(st.comm, ==, "haproxy-systemd");

	/* Cut anywhere before the start time, it is no stat line. */
	start = (gsize)(strstr(real, "152462") - real);
	for (gsize len = 0; len <= start; len++)
		g_assert_false(proc_parse_stat(real, len, &st));

	g_assert_false(proc_parse_stat(NULL, 0, &st));
	g_assert_false(proc_parse_stat("", 0, &st));
#define BAD_FIELD(s) g_assert_false(proc_parse_stat(s, strlen(s), &st))
	BAD_FIELD("1 haproxy) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0");
	BAD_FIELD("1 (x) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0");
	BAD_FIELD("1 (x) S -1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0");
	BAD_FIELD("1 (x) S 1 1 99999999999 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5");
	BAD_FIELD("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0");
	BAD_FIELD("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
		  "99999999999999999999 0");
	BAD_FIELD("1 (x) S 0x1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0");
	BAD_FIELD("1 (x) 1 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0");
#undef BAD_FIELD
}

static void test_parse_sigmasks(void)
{
	struct proc_sigmasks m;
	static const char real[] =
		"Name:\thaproxy\nThreads:\t1\nSigQ:\t15/96365\n"
		"SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
		"SigBlk:\t0000000000310a01\nSigIgn:\t0000000004001800\n"
		"SigCgt:\t0000000100716a03\nCapInh:\t0000000000000000\n";
	static const char no_nl[] =
		"SigBlk:\t1\nSigIgn: 2\nSigCgt:\tffffffffffffffff";

	g_assert_true(proc_parse_sigmasks(real, sizeof(real) - 1, &m));
	g_assert_cmphex(m.blocked, ==, 0x310a01);
	g_assert_cmphex(m.ignored, ==, 0x4001800);
	g_assert_cmphex(m.caught, ==, 0x100716a03);
	g_assert_true(m.caught & PROC_SIGBIT(SIGUSR1));
	g_assert_true(m.blocked & PROC_SIGBIT(SIGHUP));

	/* Cut before the last mask, it is incomplete. */
	g_assert_false(proc_parse_sigmasks(real, strstr(real, "SigCgt") - real,
					   &m));
#define BAD_STATUS(s) g_assert_false(proc_parse_sigmasks(s, strlen(s), &m))
	BAD_STATUS("");
	BAD_STATUS("SigBlk:\t0\nSigIgn:\t0\n");
	BAD_STATUS("SigBlk:\t0\nSigIgn:\t0\nSigCgt:\tzz\n");
	BAD_STATUS("SigBlk:\t0\nSigIgn:\t0\nSigCgt:\t\n");
	BAD_STATUS("SigBlk:\t0\nSigIgn:\t0\nSigCgt:\t12345678901234567\n");
	BAD_STATUS("SigBlk:\t0\nSigIgn:\t0\nxSigCgt:\t1\n");
	BAD_STATUS("SigBlk:\t0\nSigIgn:\t0\nSigCgt:\t1 2\n");
#undef BAD_STATUS
	g_assert_false(proc_parse_sigmasks(NULL, 0, &m));
	/* No final newline is fine. */
	g_assert_true(proc_parse_sigmasks(no_nl, strlen(no_nl), &m));
	g_assert_cmphex(m.caught, ==, G_MAXUINT64);
}

static void assert_argv(GStrv got, const char *const *want)
{
	g_assert_nonnull(got);
	g_assert_cmpuint(g_strv_length(got), ==, g_strv_length((GStrv)want));
	for (guint i = 0; want[i]; i++)
		g_assert_cmpstr(got[i], ==, want[i]);
}

#define CMDLINE(data, ...)                                                   \
	do {                                                                 \
		static const char d_[] = data;                               \
		const char *const w_[] = { __VA_ARGS__ };                    \
		g_auto(GStrv) got_ = proc_parse_cmdline(d_, sizeof(d_) - 1); \
		assert_argv(got_, w_);                                       \
	} while (0)

static void test_parse_cmdline(void)
{
	CMDLINE("", NULL);
	CMDLINE("\0\0\0", NULL);
	CMDLINE("haproxy\0-f\0h.cfg\0", "haproxy", "-f", "h.cfg", NULL);
	/* No final NUL (a process that rewrote its arguments). */
	CMDLINE("haproxy\0-f\0h.cfg", "haproxy", "-f", "h.cfg", NULL);
	/* Empty arguments inside are kept, the padding after is not. */
	CMDLINE("a\0\0b\0\0\0\0", "a", "", "b", NULL);
	CMDLINE("/usr/sbin/haproxy-master\0\0\0\0\0\0\0\0",
		"/usr/sbin/haproxy-master", NULL);
	CMDLINE("\xff\xfe\0\x80", "\xff\xfe", "\x80", NULL);
}

static void test_parse_cmdline_huge(void)
{
	gsize len = 3u << 20;
	g_autofree gchar *data = g_malloc(len);
	g_auto(GStrv) argv = NULL;

	/* Two-byte arguments: more of them than are kept. */
	for (gsize i = 0; i < len; i++)
		data[i] = i % 2 ? '\0' : 'x';
	argv = proc_parse_cmdline(data, len);
	g_assert_cmpuint(g_strv_length(argv), ==, PROC_ARGV_MAX);
	g_assert_cmpstr(argv[PROC_ARGV_MAX - 1], ==, "x");

	/* One argument of megabytes. */
	memset(data, 'y', len);
	g_strfreev(argv);
	argv = proc_parse_cmdline(data, len);
	g_assert_cmpuint(g_strv_length(argv), ==, 1);
	g_assert_cmpuint(strlen(argv[0]), ==, len);
}

/* Whatever bytes come in, the parsers answer and stay in bounds. */
/* A command line is read to max bytes: one longer is not read on, and
 * says so without an error; a missing one is an error. */
static void test_cmdline_bounded(void)
{
	struct tree t = { 0 };
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) whole_argv = NULL, cut_argv = NULL, none = NULL;
	gboolean whole = FALSE;

	tree_setup(&t, NULL);
	put(&t, 7, "cmdline", "haproxy\0-f\0", 11);
	whole_argv = proc_cmdline_at(t.proc, 7, 11, &whole, &error);
	g_assert_no_error(error);
	g_assert_true(whole);
	g_assert_nonnull(whole_argv);
	g_assert_cmpstr(whole_argv[1], ==, "-f");
	cut_argv = proc_cmdline_at(t.proc, 7, 10, &whole, &error);
	g_assert_no_error(error);
	g_assert_false(whole);
	g_assert_null(cut_argv);
	none = proc_cmdline_at(t.proc, 8, 10, &whole, &error);
	g_assert_null(none);
	g_assert_true(whole);
	g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
	tree_teardown(&t, NULL);
}

static void test_parse_random(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(4);
	static const char alphabet[] = "0123456789 ()-SZ\n\0\xff";
	const gint32 n_alpha = sizeof(alphabet) - 1;

	for (guint round = 0; round < 20000; round++) {
		gsize len = g_rand_int_range(rand, 0, 120);
		g_autofree gchar *data = g_malloc(len + 1);
		g_auto(GStrv) argv = NULL;
		struct proc_sigmasks masks;
		struct proc_stat st;

		for (gsize i = 0; i < len; i++)
			data[i] = round % 2 ? (char)g_rand_int(rand) :
				alphabet[g_rand_int_range(rand, 0, n_alpha)];
		if (proc_parse_stat(data, len, &st))
			g_assert_true(st.ppid >= 0 && st.session >= 0);
		(void)proc_parse_sigmasks(data, len, &masks);
		argv = proc_parse_cmdline(data, len);
		g_assert_nonnull(argv);
		if (argv[0])
			g_assert_cmpint(argv[g_strv_length(argv) - 1][0], !=,
					'\0');
	}
}

/* argv (after "haproxy") as "a|b|c". */
static void assert_files(const char *bars, const char *cwd,
			 gboolean in_basedir, const char *const *want)
{
	g_autofree gchar *line = g_strconcat("haproxy|", bars, NULL);
	g_auto(GStrv) argv = g_strsplit(line, "|", -1);
	g_auto(GStrv) got = foreign_argv_config_files(
		(const char *const *)argv, cwd, in_basedir);

	assert_argv(got, want);
}

#define FILES(cwd, in_basedir, bars, ...)                                    \
	do {                                                                 \
		const char *const w_[] = { __VA_ARGS__ };                    \
		assert_files(bars, cwd, in_basedir, w_);                     \
	} while (0)

static void test_argv_config_files(void)
{
	const char *const only_argv0[] = { "haproxy", NULL };
	const char *const none[] = { NULL };
	g_auto(GStrv) got = NULL;

	FILES("/srv", FALSE, "-f|h.cfg", "/srv/h.cfg", NULL);
	FILES("/srv", FALSE, "-f|/etc/h.cfg|-f|./x/../h2.cfg",
	      "/etc/h.cfg", "/srv/h2.cfg", NULL);
	/* Relative -C is taken against cwd, or is cwd already. */
	FILES("/srv", FALSE, "-C|conf|-f|h.cfg", "/srv/conf/h.cfg", NULL);
	FILES("/srv/conf", TRUE, "-C|conf|-f|h.cfg", "/srv/conf/h.cfg", NULL);
	FILES("/srv", TRUE, "-C|/etc|-f|h.cfg", "/etc/h.cfg", NULL);
	/* The last -C wins, for every -f. */
	FILES("/", FALSE, "-f|a|-C|/x|-f|b|-C|/y", "/y/a", "/y/b", NULL);
	/* After "--", everything is a file; duplicates once. */
	FILES("/", FALSE, "-f|/a|--|/b|-f|/a", "/a", "/b", "/-f", NULL);
	/* Pids after -sf, values of other flags are no files. */
	FILES("/", FALSE, "-sf|1|2|-p|/run/h.pid|-x|sockpair@3|-L|x|-f|/h.cfg",
	      "/h.cfg", NULL);
	FILES("/", FALSE, "-S|-f|/other.cfg", NULL);
	FILES("/", FALSE, "-st|-f|/h.cfg|-Ws|-Ds", "/h.cfg", NULL);
	/* Without a cwd, relative names cannot be placed. */
	FILES(NULL, FALSE, "-f|h.cfg|-f|/abs.cfg", "/abs.cfg", NULL);
	FILES("relative", FALSE, "-f|h.cfg", NULL);
	FILES(NULL, FALSE, "-C|/etc|-f|h.cfg", "/etc/h.cfg", NULL);
	/* An empty name or a -f at the end is nothing. */
	FILES("/", FALSE, "-f||-f", NULL);

	got = foreign_argv_config_files(only_argv0, "/", FALSE);
	assert_argv(got, none);
	g_strfreev(got);
	got = foreign_argv_config_files(NULL, "/", FALSE);
	assert_argv(got, none);
}

/* ---- credentials: only what this wrapper could have started ---- */

static void test_parse_ids(void)
{
	static const char real[] = "Name:\thaproxy\nUmask:\t0022\n"
				   "Uid:\t0\t33\t0\t33\n"
				   "Gid:\t65534\t65534\t65534\t65534\n"
				   "FDSize:\t64\n";
	struct proc_ids ids;

	g_assert_true(proc_parse_ids(real, sizeof(real) - 1, &ids));
	g_assert_cmpuint(ids.uid[0], ==, 0);
	g_assert_cmpuint(ids.uid[1], ==, 33);
	g_assert_cmpuint(ids.uid[3], ==, 33);
	g_assert_cmpuint(ids.gid[2], ==, 65534);
#define BAD_IDS(s) g_assert_false(proc_parse_ids(s, strlen(s), &ids))
	BAD_IDS("");
	BAD_IDS("Uid:\t0\t0\t0\t0\n");
	BAD_IDS("Uid:\t0\t0\t0\nGid:\t0\t0\t0\t0\n");
	BAD_IDS("Uid:\t0\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n");
	BAD_IDS("Uid:\t0\t0\t-1\t0\nGid:\t0\t0\t0\t0\n");
	BAD_IDS("Uid:\t0\t0\t4294967296\t0\nGid:\t0\t0\t0\t0\n");
	BAD_IDS("Uid:\t0\tx\t0\t0\nGid:\t0\t0\t0\t0\n");
#undef BAD_IDS
	g_assert_false(proc_parse_ids(NULL, 0, &ids));
}


int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/proc/parse-stat", test_parse_stat);
	g_test_add_func("/proc/parse-cmdline", test_parse_cmdline);
	g_test_add_func("/proc/parse-cmdline-huge", test_parse_cmdline_huge);
	g_test_add_func("/proc/parse-random", test_parse_random);
	g_test_add_func("/proc/cmdline-bounded", test_cmdline_bounded);
	g_test_add_func("/proc/parse-sigmasks", test_parse_sigmasks);
	g_test_add_func("/find/argv-config-files", test_argv_config_files);
	g_test_add_func("/proc/parse-ids", test_parse_ids);
	return g_test_run();
}
