/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Master-worker mode: when it is chosen, what a master's notify messages
 * mean, and the configuration keywords that decide. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "legacy/config.h"
#include "legacy/mworker.h"
#include "t/lib/cfgtext.h"

static struct haproxy_version version(const char *text)
{
	g_autofree gchar *banner = g_strdup_printf("HAProxy version %s "
						   "2024/01/01\n", text);
	struct haproxy_version v;

	g_assert_true(haproxy_version_parse(banner, &v));
	return v;
}

static void check_mode(const char *ver, enum mw_policy policy, guint nbproc,
		       gboolean keyword, enum launch_mode want,
		       const char *why_part)
{
	struct haproxy_version v = version(ver);
	struct config_hints hints = { .nbproc = nbproc,
				      .master_worker = keyword };
	const char *why = NULL;

	g_test_message("%s policy %d nbproc %u keyword %d", ver, policy,
		       nbproc, keyword);
	g_assert_cmpint(mw_choose_mode(&v, policy, &hints, &why), ==, want);
	if (why_part)
		g_assert_nonnull(strstr(why, why_part));
	else
		g_assert_cmpstr(why, ==, "");
}

/* -S needs a master CLI: 1.9 and later; -W alone does not. */
static void test_version_refusal(void)
{
	static const char *const refused[] = { "1.5.18", "1.7.0", "1.8.30" };
	static const char *const taken[] = { "1.9.0", "2.6.12", "3.2.0" };
	struct wrapper_args cli = { .master_worker = TRUE,
				    .master_cli = TRUE };
	struct wrapper_args w = { .master_worker = TRUE };

	for (guint i = 0; i < G_N_ELEMENTS(refused); i++) {
		struct haproxy_version v = version(refused[i]);
		const char *why = mw_version_refusal(&v, &cli);

		g_assert_nonnull(why);
		g_assert_nonnull(strstr(why, ">= 1.9"));
		g_assert_null(mw_version_refusal(&v, &w));
	}
	for (guint i = 0; i < G_N_ELEMENTS(taken); i++) {
		struct haproxy_version v = version(taken[i]);

		g_assert_null(mw_version_refusal(&v, &cli));
	}
}

static void test_choose_mode(void)
{
	check_mode("1.7.0", MW_POLICY_AUTO, 4, FALSE, LAUNCH_DS, NULL);
	check_mode("1.7.0", MW_POLICY_ON, 0, FALSE, LAUNCH_DS, ">= 1.8");
	check_mode("1.8.30", MW_POLICY_AUTO, 0, FALSE, LAUNCH_DB, NULL);
	check_mode("1.8.30", MW_POLICY_AUTO, 1, FALSE, LAUNCH_DB, NULL);
	check_mode("1.8.30", MW_POLICY_AUTO, 2, FALSE, LAUNCH_MW, "nbproc");
	check_mode("2.4.22", MW_POLICY_AUTO, 8, FALSE, LAUNCH_MW, "nbproc");
	/* nbproc is gone from 2.5. */
	check_mode("2.6.12", MW_POLICY_AUTO, 2, FALSE, LAUNCH_DB, NULL);
	check_mode("2.6.12", MW_POLICY_AUTO, 0, TRUE, LAUNCH_MW,
		   "configuration asks");
	check_mode("2.6.12", MW_POLICY_ON, 0, FALSE, LAUNCH_MW, NULL);
	check_mode("3.2.0", MW_POLICY_ON, 0, FALSE, LAUNCH_MW, NULL);
	check_mode("2.0.0", MW_POLICY_OFF, 2, FALSE, LAUNCH_DB, "single");
	check_mode("2.6.12", MW_POLICY_OFF, 0, TRUE, LAUNCH_DB, "is off");
	check_mode("2.6.12", MW_POLICY_OFF, 0, FALSE, LAUNCH_DB, NULL);
}

static enum mw_verdict verdict_of(const char *text)
{
	struct mw_message m;
	enum mw_verdict v;

	g_assert_true(mw_message_parse(text, strlen(text), &m));
	v = mw_message_verdict(&m);
	mw_message_clear(&m);
	return v;
}

/* The messages of haproxy-behavior section 9, version by version. */
static void test_verdicts(void)
{
	/* 1.8 - 2.6: READY alone, good or bad. */
	g_assert_cmpint(verdict_of("RELOADING=1"), ==, MW_VERDICT_NONE);
	g_assert_cmpint(verdict_of("READY=1\nMAINPID=12"), ==,
			MW_VERDICT_ASK_WORKERS);
	/* 2.7+ */
	g_assert_cmpint(verdict_of("RELOADING=1\nSTATUS=Reloading "
				   "Configuration."), ==, MW_VERDICT_NONE);
	g_assert_cmpint(verdict_of("READY=1\nMAINPID=12\nSTATUS=Ready."), ==,
			MW_VERDICT_LOADED);
	g_assert_cmpint(verdict_of("READY=1\nMAINPID=12\nSTATUS=Reload "
				   "failed!"), ==, MW_VERDICT_FAILED);
	/* 3.0: a timestamp with RELOADING. */
	g_assert_cmpint(verdict_of("RELOADING=1\nSTATUS=Reloading "
				   "Configuration.\nMONOTONIC_USEC=1234"), ==,
			MW_VERDICT_NONE);
	/* 3.1+: a reason after the failure. */
	g_assert_cmpint(verdict_of("READY=1\nSTATUS=Reload failed (master "
				   "failed to load or to parse new "
				   "configuration)!"), ==, MW_VERDICT_FAILED);
	g_assert_cmpint(verdict_of("STOPPING=1"), ==, MW_VERDICT_NONE);
	g_assert_cmpint(verdict_of("READY=0"), ==, MW_VERDICT_NONE);
}

static void test_parse(void)
{
	static const char *const bad[] = { "", "READY", "READY=1\nnoise",
					   "READY=1\n\n=\nx" };
	struct mw_message m;

	g_assert_true(mw_message_parse("READY=1\nMAINPID=4242\nSTATUS=Ready."
				       "\n", 34, &m));
	g_assert_true(m.ready);
	g_assert_false(m.reloading);
	g_assert_cmpint(m.mainpid, ==, 4242);
	g_assert_cmpstr(m.status, ==, "Ready.");
	mw_message_clear(&m);
	g_assert_true(mw_message_parse("MAINPID=-3\nSTOPPING=1", 21, &m));
	g_assert_cmpint(m.mainpid, ==, 0);
	g_assert_true(m.stopping);
	mw_message_clear(&m);
	g_assert_false(mw_message_parse("READY=1\0x", 9, &m));
	g_assert_false(m.ready);
	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_test_message("'%s'", bad[i]);
		g_assert_false(mw_message_parse(bad[i], strlen(bad[i]), &m));
	}
	/* Invalid UTF-8 in a status is made valid. */
	g_assert_true(mw_message_parse("STATUS=a\xffz", 10, &m));
	g_assert_true(g_utf8_validate(m.status, -1, NULL));
	mw_message_clear(&m);
}

static struct config_hints scan(const char *text)
{
	return t_config_hints(text, strlen(text));
}

static void test_config_scan(void)
{
	struct config_hints h;

	h = scan("global\n    nbproc 4\n    master-worker\n");
	g_assert_cmpuint(h.nbproc, ==, 4);
	g_assert_true(h.master_worker);
	h = scan("global\n\tnbproc 2 # two\n\tnbproc\t3\n");
	g_assert_cmpuint(h.nbproc, ==, 3);	/* the last one wins */
	h = scan("# nbproc 4\nglobal\n  #master-worker\n  nbproc x\n"
		 "  nbproc 0\n  nbprocs 5\n");
	g_assert_cmpuint(h.nbproc, ==, 0);
	g_assert_false(h.master_worker);
}

/* The files haproxy would load: -f files and directories, relative to
 * -C, and the ones after "--". */
static void test_config_files(void)
{
	g_autofree gchar *dir = g_dir_make_tmp("unit-mworker-XXXXXX", NULL);
	g_autofree gchar *sub = g_build_filename(dir, "conf.d", NULL);
	g_autofree gchar *a = g_build_filename(dir, "a.cfg", NULL);
	g_autofree gchar *b = g_build_filename(sub, "b.cfg", NULL);
	g_autofree gchar *skip = g_build_filename(sub, "b.cfg.bak", NULL);
	g_autofree gchar *c = g_build_filename(dir, "c.cfg", NULL);
	struct wrapper_args args = { 0 };
	struct config_hints h;
	char *const hargs[] = { "-C", dir, "-f", "a.cfg", "-p", "-f", "-f",
				"conf.d", NULL };
	char *const tail[] = { c, NULL };

	g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
	g_assert_true(g_file_set_contents(a, "nbproc 2\n", -1, NULL));
	g_assert_true(g_file_set_contents(b, "nbproc 3\n", -1, NULL));
	g_assert_true(g_file_set_contents(skip, "nbproc 9\n", -1, NULL));
	g_assert_true(g_file_set_contents(c, "master-worker\n", -1, NULL));
	args.haproxy_args = (GStrv)hargs;
	config_hints_read(&args, "/nonexistent", &h);
	g_assert_cmpuint(h.nbproc, ==, 3);
	g_assert_false(h.master_worker);
	args.config_tail = (GStrv)tail;
	config_hints_read(&args, "/nonexistent", &h);
	g_assert_true(h.master_worker);
	g_unlink(a);
	g_unlink(b);
	g_unlink(skip);
	g_unlink(c);
	g_rmdir(sub);
	g_rmdir(dir);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/mworker/choose-mode", test_choose_mode);
	g_test_add_func("/mworker/version-refusal", test_version_refusal);
	g_test_add_func("/mworker/verdicts", test_verdicts);
	g_test_add_func("/mworker/parse", test_parse);
	g_test_add_func("/mworker/config-scan", test_config_scan);
	g_test_add_func("/mworker/config-files", test_config_files);
	return g_test_run();
}
