/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for migrate/find.c on fake proc trees: finding and
 * classifying haproxy instances by pidfile and configuration (daemons,
 * -Ds parents, master-worker, launchers, restarts, stale pidfiles).
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "t/lib/proctree.h"

static void test_daemon_by_pidfile(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "500\n");
	g_autofree gchar *argv = g_strdup_printf(
		HAPROXY "|-D|-p|%s|-f|%s", pidfile, cfg);
	const struct foreign *f;

	fake_system(t);
	/* Run through a link of another name: not found by configuration. */
	FAKE(t, .pid = 500, .ppid = 1, .sid = 500, .start = 77,
				.exe = HAPROXY, .comm = "hap", .cwd = "/",
				.argv = argv);

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	f = instance(t, 0);
	g_assert_cmpint(f->kind, ==, FOREIGN_STANDALONE);
	g_assert_cmpint(f->pid, ==, 500);
	g_assert_cmpuint(f->start_time, ==, 77);
	assert_workers(f, NULL, 0);
	g_assert_cmpstr(f->exe, ==, HAPROXY);
	g_assert_false(f->exe_deleted);
	g_assert_cmpstr(f->argv[0], ==, HAPROXY);
	g_assert_cmpstr(f->argv[5], ==, cfg);
	g_assert_null(f->argv[6]);
	assert_configs(f, cfg);
	g_assert_cmpuint(f->found_by, ==, FOREIGN_BY_PIDFILE);
	g_assert_cmpuint(t->skipped->len, ==, 0);
}

static void test_daemon_by_config_relative(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "etc/h.cfg");
	g_autofree gchar *other = write_config(t, "etc/other.cfg");
	g_autofree gchar *etc = tpath(t, "etc");

	fake_system(t);
	/* Started from etc/ as "haproxy -D -f h.cfg". */
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .exe = HAPROXY,
				.cwd = etc, .argv = "haproxy|-D|-p|@P|-f|h.cfg");
	/* Another service on the same host. */
	FAKE(t, .pid = 520, .ppid = 1, .sid = 520, .exe = HAPROXY,
				.cwd = etc, .argv = "haproxy|-D|-p|@P|-f|other.cfg");
	/* The same name from elsewhere is another file. */
	HAP(t, 530, 1, 530, "haproxy|-D|-p|@P|-f|h.cfg");

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 510);
	g_assert_cmpuint(instance(t, 0)->found_by, ==, FOREIGN_BY_CONFIG);
	assert_configs(instance(t, 0), cfg);
	g_assert_cmpuint(t->skipped->len, ==, 0);

	g_assert_cmpuint(find(t, NULL, other, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 520);

	/* Nothing to look for, nothing found. */
	g_assert_cmpuint(find(t, NULL, NULL, 9999), ==, 0);
}

static void test_basedir(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "conf/h.cfg");
	g_autofree gchar *conf = tpath(t, "conf");
	g_autofree gchar *abs_argv = g_strdup_printf(
		"haproxy|-C|%s|-D|-p|@P|-f|h.cfg", conf);

	fake_system(t);
	/* "-C conf" relative: haproxy has changed into it, cwd shows it. */
	FAKE(t, .pid = 540, .ppid = 1, .sid = 540, .exe = HAPROXY,
				.cwd = conf,
				.argv = "haproxy|-C|conf|-D|-p|@P|-f|h.cfg");
	/* An absolute -C wins over a cwd that moved (a chroot). */
	FAKE(t, .pid = 550, .ppid = 1, .sid = 550, .exe = HAPROXY,
				.cwd = "/var/lib/haproxy", .argv = abs_argv);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 540);
	g_assert_cmpint(instance(t, 1)->pid, ==, 550);
	assert_configs(instance(t, 0), cfg);
	assert_configs(instance(t, 1), cfg);
}

static void test_symlinked_config(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "real/h.cfg");
	g_autofree gchar *link = tpath(t, "h-link.cfg");
	g_autofree gchar *dirlink = tpath(t, "etc-link");
	g_autofree gchar *real = tpath(t, "real");
	g_autofree gchar *argv1 = g_strdup_printf("haproxy|-D|-p|@P|-f|%s", link);
	g_autofree gchar *argv2 = g_strdup_printf("haproxy|-D|-p|@P|--|%s/h.cfg",
						  dirlink);

	g_assert_cmpint(symlink(cfg, link), ==, 0);
	g_assert_cmpint(symlink(real, dirlink), ==, 0);
	fake_system(t);
	HAP(t, 560, 1, 560, argv1);
	HAP(t, 570, 1, 570, argv2);

	/* The paths differ; device and inode are the same. */
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 560);
	g_assert_cmpint(instance(t, 1)->pid, ==, 570);
	/* Reported as the process names them. */
	assert_configs(instance(t, 0), link);
	/* And the other way round. */
	g_assert_cmpuint(find(t, NULL, link, 9999), ==, 2);
}

/*
 * Only a process whose command name (stat's comm: the executed file's
 * name) says haproxy has its command line read in the search by
 * configuration: one run through a link of another name is found by its
 * pidfile only. A wrapper (comm cut to "haproxy-systemd") is looked at.
 */
static void test_config_needs_comm(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf("haproxy|-D|-p|@P|-f|%s", cfg);
	g_autofree gchar *wrapper = g_strdup_printf(
		"/usr/sbin/haproxy-systemd-wrapper|-f|%s", cfg);
	g_autofree gchar *pidfile = NULL;

	fake_system(t);
	FAKE(t, .pid = 580, .ppid = 1, .sid = 580, .exe = HAPROXY,
				.comm = "lb", .cwd = "/", .argv = argv);
	HAP(t, 590, 1, 590, argv);
	FAKE(t, .pid = 600, .ppid = 1, .sid = 600,
				.exe = "/usr/sbin/haproxy-systemd-wrapper",
				.cwd = "/", .argv = wrapper);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 590);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 600);

	pidfile = write_pidfile(t, "580\n");
	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 580);
	g_assert_cmpuint(instance(t, 0)->found_by, ==, FOREIGN_BY_PIDFILE);
}

/* Executed through a descriptor (fexecve, execveat), a process's comm is
 * the descriptor's number on kernels before 6.14: argv[0] decides. */
static void test_config_fexecve_comm(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf("haproxy|-D|-p|@P|-f|%s", cfg);

	fake_system(t);
	FAKE(t, .pid = 580, .ppid = 1, .sid = 580, .exe = HAPROXY,
				.comm = "3", .cwd = "/", .argv = argv);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 580);
}

/* The 1.7 -Ds parent, its historic wrapper gone (killed, or its unit
 * stopped another way), and another one that runs the same files. */
static void test_ds_parent_renamed(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "601\n602\n");
	g_autofree gchar *wrapper_argv = g_strdup_printf(
		"/usr/sbin/haproxy-systemd-wrapper|-f|%s|-p|%s", cfg, pidfile);
	g_autofree gchar *worker_argv = g_strdup_printf(
		HAPROXY "|-f|%s|-p|%s|-Ds", cfg, pidfile);
	static const char renamed[] = HAPROXY "-master\0\0\0\0\0\0\0\0\0\0";
	static const GPid workers[] = { 601, 602 };
	const struct foreign *f;

	fake_system(t);
	FAKE(t, .pid = 590, .ppid = 1, .sid = 590,
				.exe = "/usr/sbin/haproxy-systemd-wrapper",
				.cwd = "/", .argv = wrapper_argv);
	FAKE(t, .pid = 600, .ppid = 1, .sid = 590,
				.exe = HAPROXY, .cwd = "/");
	put(t, 600, "cmdline", renamed, sizeof(renamed));
	/* The workers called setsid(). */
	HAP(t, 601, 600, 601, worker_argv);
	HAP(t, 602, 600, 602, worker_argv);

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	f = instance(t, 0);
	g_assert_cmpint(f->kind, ==, FOREIGN_DS_PARENT);
	g_assert_cmpint(f->pid, ==, 600);
	assert_workers(f, workers, 2);
	g_assert_cmpstr(f->argv[0], ==, HAPROXY "-master");
	g_assert_null(f->argv[1]);
	/* Its own arguments are blank: the files come from a worker. */
	assert_configs(f, cfg);
	g_assert_cmpuint(f->found_by, ==, BOTH);
	/* The old wrapper runs the same configuration: said, not taken. */
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 590);
	g_assert_cmpuint(skip(t, 0)->found_by, ==, FOREIGN_BY_CONFIG);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not haproxy"));
}

/* 1.5 does not rename its -Ds parent; a 1.8+ -Ds master-worker is no -Ds
 * parent. */
static void test_ds_parent_15(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|@P|-f|%s|-Ds", cfg);
	static const GPid ds_workers[] = { 611 };
	static const GPid mw_workers[] = { 621 };

	fake_system(t);
	HAP(t, 610, 40, 40, argv);
	HAP(t, 611, 610, 611, argv);
	/* -Ds = -D on 2.x with "master-worker" in the configuration: the
	 * master daemonised, its worker stayed in its session. */
	HAP(t, 620, 1, 620, argv);
	HAP(t, 621, 620, 620, argv);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 610);
	g_assert_cmpint(instance(t, 0)->kind, ==, FOREIGN_DS_PARENT);
	assert_workers(instance(t, 0), ds_workers, 1);
	g_assert_cmpint(instance(t, 1)->pid, ==, 620);
	g_assert_cmpint(instance(t, 1)->kind, ==, FOREIGN_MW_MASTER);
	assert_workers(instance(t, 1), mw_workers, 1);
}

static void test_mw_master(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "700\n");
	g_autofree gchar *argv = g_strdup_printf(
		HAPROXY "|-W|-D|-p|%s|-f|%s", pidfile, cfg);
	g_autofree gchar *reloaded = g_strdup_printf(
		HAPROXY "|-sf|710|-x|sockpair@3|-W|-D|-p|%s|-f|%s", pidfile,
		cfg);
	static const GPid workers[] = { 710, 701, 702 };
	const struct foreign *f;

	fake_system(t);
	HAP(t, 700, 1, 700, argv, .start = 50);
	/* The old worker, still draining, started first. */
	HAP(t, 710, 700, 700, argv, .start = 60);
	HAP(t, 701, 700, 700, reloaded, .start = 90);
	HAP(t, 702, 700, 700, reloaded, .start = 91);
	/* A worker that exited and is not reaped yet is none. */
	FAKE(t, .pid = 703, .ppid = 700, .sid = 700, .start = 55,
				.state = 'Z');

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	f = instance(t, 0);
	g_assert_cmpint(f->kind, ==, FOREIGN_MW_MASTER);
	g_assert_cmpint(f->pid, ==, 700);
	assert_workers(f, workers, 3);
	g_assert_cmpuint(g_array_index(f->worker_start_times, guint64, 0), ==,
			 60);
	g_assert_cmpuint(f->found_by, ==, BOTH);
	g_assert_cmpuint(t->skipped->len, ==, 0);

	/* A worker alone in the pidfile leads to its master too. */
	g_clear_pointer(&pidfile, g_free);
	pidfile = write_pidfile(t, "702\n");
	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 700);
	assert_workers(instance(t, 0), workers, 3);
}

/* "master-worker" in the configuration: no -W, only the children tell. */
static void test_mw_by_config_keyword(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|@P|-f|%s", cfg);
	static const GPid workers[] = { 801 };

	fake_system(t);
	HAP(t, 800, 40, 40, argv);
	HAP(t, 801, 800, 40, argv);
	/* A standalone haproxy running an external check is no master. */
	HAP(t, 810, 40, 40, argv);
	FAKE(t, .pid = 811, .ppid = 810, .sid = 40,
				.exe = "/usr/bin/true", .cwd = "/",
				.argv = "/usr/bin/true");

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 800);
	g_assert_cmpint(instance(t, 0)->kind, ==, FOREIGN_MW_MASTER);
	assert_workers(instance(t, 0), workers, 1);
	g_assert_cmpint(instance(t, 1)->pid, ==, 810);
	g_assert_cmpint(instance(t, 1)->kind, ==, FOREIGN_STANDALONE);
}

/* "haproxy -W -D" caught while its launcher has not exited yet. */
static void test_launcher(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-W|-D|-p|@P|-f|%s", cfg);
	g_autofree gchar *dargv = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s", cfg);
	static const GPid workers[] = { 852 };

	fake_system(t);
	HAP(t, 850, 40, 40, argv);
	HAP(t, 851, 850, 851, argv);
	HAP(t, 852, 851, 851, argv);
	/* And a plain -D one (3.1+ launchers wait for their daemon). */
	HAP(t, 860, 40, 40, dargv);
	HAP(t, 861, 860, 861, dargv);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 851);
	g_assert_cmpint(instance(t, 0)->kind, ==, FOREIGN_MW_MASTER);
	assert_workers(instance(t, 0), workers, 1);
	g_assert_cmpint(instance(t, 1)->pid, ==, 861);
	g_assert_cmpint(instance(t, 1)->kind, ==, FOREIGN_STANDALONE);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 850);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "launcher"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 860);
}

/* 1.8's "haproxy -W -D": the master and each worker call setsid(); the
 * pidfile names the master, whose launcher may not have exited yet. */
static void test_mw_master_18(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "871\n");
	g_autofree gchar *argv = g_strdup_printf(
		HAPROXY "|-W|-D|-p|%s|-f|%s", pidfile, cfg);
	static const GPid workers[] = { 872, 873 };
	const struct foreign *f;

	fake_system(t);
	HAP(t, 870, 40, 40, argv, .start = 50);
	HAP(t, 871, 870, 871, argv, .start = 51);
	HAP(t, 872, 871, 872, argv, .start = 52);
	HAP(t, 873, 871, 873, argv, .start = 53);

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	f = instance(t, 0);
	g_assert_cmpint(f->pid, ==, 871);
	g_assert_cmpint(f->kind, ==, FOREIGN_MW_MASTER);
	assert_workers(f, workers, 2);
	g_assert_cmpuint(f->found_by, ==, BOTH);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 870);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "launcher"));
}

/* Two -D processes across an "-sf" restart are two instances. */
static void test_sf_restart(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *old = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s", cfg);
	g_autofree gchar *new = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s|-sf|870",
						cfg);

	fake_system(t);
	HAP(t, 880, 1, 880, new, .start = 20);
	HAP(t, 870, 1, 870, old, .start = 10);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	/* Oldest first. */
	g_assert_cmpint(instance(t, 0)->pid, ==, 870);
	g_assert_cmpint(instance(t, 1)->pid, ==, 880);
	g_assert_cmpint(instance(t, 1)->kind, ==, FOREIGN_STANDALONE);
}

static void test_stale_pidfile(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t,
						  "900 901 902 4242 x1 40\n");
	g_autofree gchar *named = g_strdup_printf("haproxy|-f|%s", cfg);

	fake_system(t);
	FAKE(t, .pid = 900, .ppid = 40, .sid = 40,
				.exe = "/usr/bin/sleep", .cwd = "/",
				.argv = "sleep|1000");
	/* Named haproxy, runs something else: a script called haproxy. */
	FAKE(t, .pid = 901, .ppid = 40, .sid = 40,
				.exe = "/usr/bin/python3", .comm = "haproxy",
				.cwd = "/", .argv = named);
	/* Runs haproxy, calls itself something else. */
	HAP(t, 902, 40, 40, "nginx|-g|daemon off;");

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 0);
	/* The bad token first, then by pid. */
	g_assert_cmpuint(t->skipped->len, ==, 6);
	g_assert_cmpint(skip(t, 0)->pid, ==, 0);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "1 token(s)"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 40);
	g_assert_nonnull(strstr(skip(t, 1)->reason,
				"/usr/bin/bash, not haproxy"));
	g_assert_cmpint(skip(t, 2)->pid, ==, 900);
	g_assert_cmpuint(skip(t, 2)->found_by, ==, FOREIGN_BY_PIDFILE);
	g_assert_nonnull(strstr(skip(t, 2)->reason,
				"/usr/bin/sleep, not haproxy"));
	g_assert_cmpint(skip(t, 3)->pid, ==, 901);
	g_assert_cmpuint(skip(t, 3)->found_by, ==,
			 BOTH);
	g_assert_nonnull(strstr(skip(t, 3)->reason, "python3"));
	g_assert_cmpint(skip(t, 4)->pid, ==, 902);
	g_assert_nonnull(strstr(skip(t, 4)->reason, "\"nginx\""));
	g_assert_cmpint(skip(t, 5)->pid, ==, 4242);
	g_assert_cmpstr(skip(t, 5)->reason, ==, "no such process");

	/* A kernel thread: no executable, no command line. */
	g_clear_pointer(&pidfile, g_free);
	pidfile = write_pidfile(t, "2\n");
	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 2);
	g_assert_cmpstr(skip(t, 0)->reason, ==, "a kernel thread");
	g_assert_cmpint(skip(t, 1)->pid, ==, 901);
}

static void test_pidfile_problems(struct tree *t, gconstpointer data)
{
	g_autofree gchar *missing = tpath(t, "none.pid");
	g_autofree gchar *dir = tpath(t, "dir.pid");

	fake_system(t);
	g_assert_cmpuint(find(t, missing, NULL, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 0);

	g_assert_cmpint(g_mkdir(dir, 0755), ==, 0);
	g_assert_cmpuint(find(t, dir, NULL, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 0);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not a regular file"));
}

/* faststart: the pidfile alone, read without a scan: a live haproxy in
 * it; or, with why not, a program that is not haproxy, a dead pid, and
 * ourselves (no word). */
static void test_pidfile_check(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s", cfg);
	const char *configs[] = { cfg, NULL };
	g_autofree gchar *with = write_pidfile(t, "510\n500\n");
	g_autoptr(GPtrArray) skipped = NULL;
	g_autofree gchar *without = NULL;
	const struct foreign_skip *k;

	fake_system(t);
	HAP(t, 500, 1, 500, argv, .start = 77);
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .start = 78,
				.exe = "/usr/bin/sleep", .argv = "sleep|60");
	g_assert_true(foreign_pidfile_check(t->proc, with, configs, NULL, 9999,
					    &skipped));
	g_clear_pointer(&skipped, g_ptr_array_unref);

	without = write_pidfile(t, "510\n520\n9999\n");
	g_assert_false(foreign_pidfile_check(t->proc, without, configs, NULL, 9999,
					     &skipped));
	g_assert_cmpuint(skipped->len, ==, 2);
	k = g_ptr_array_index(skipped, 0);
	g_assert_cmpint(k->pid, ==, 510);
	g_assert_nonnull(strstr(k->reason, "not haproxy"));
	k = g_ptr_array_index(skipped, 1);
	g_assert_cmpint(k->pid, ==, 520);
	g_assert_cmpstr(k->reason, ==, "no such process");
	g_clear_pointer(&skipped, g_ptr_array_unref);

	g_assert_false(foreign_pidfile_check(t->proc, NULL, configs, NULL, 9999,
					     &skipped));
	g_assert_cmpuint(skipped->len, ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	add_tree_test("/find/daemon-by-pidfile", test_daemon_by_pidfile);
	add_tree_test("/find/daemon-by-config-relative",
		      test_daemon_by_config_relative);
	add_tree_test("/find/basedir", test_basedir);
	add_tree_test("/find/symlinked-config", test_symlinked_config);
	add_tree_test("/find/config-needs-comm", test_config_needs_comm);
	add_tree_test("/find/config-fexecve-comm", test_config_fexecve_comm);
	add_tree_test("/find/ds-parent-renamed", test_ds_parent_renamed);
	add_tree_test("/find/ds-parent-15", test_ds_parent_15);
	add_tree_test("/find/mw-master", test_mw_master);
	add_tree_test("/find/mw-by-config-keyword", test_mw_by_config_keyword);
	add_tree_test("/find/launcher", test_launcher);
	add_tree_test("/find/mw-master-18", test_mw_master_18);
	add_tree_test("/find/sf-restart", test_sf_restart);
	add_tree_test("/find/stale-pidfile", test_stale_pidfile);
	add_tree_test("/find/pidfile-problems", test_pidfile_problems);
	add_tree_test("/find/pidfile-check", test_pidfile_check);
	return g_test_run();
}
