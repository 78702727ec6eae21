/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for migrate/find.c and the proc-tree parsers of
 * migrate/proc.c, on fake proc trees: PID/stat, PID/cmdline, and PID/exe,
 * PID/cwd as symlinks, in a temporary directory.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "base/proc.h"
#include "migrate/find.h"
#include "migrate/takeover.h"

#define HAPROXY "/usr/sbin/haproxy"
#define BOTH (FOREIGN_BY_PIDFILE | FOREIGN_BY_CONFIG)

struct tree {
	gchar *dir;	/* holds proc/ and the configuration files */
	gchar *proc;
	GPtrArray *found;	/* struct foreign */
	GPtrArray *skipped;	/* struct foreign_skip */
};

static void tree_setup(struct tree *t, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	t->dir = g_dir_make_tmp("unit-migrate-XXXXXX", &error);
	g_assert_no_error(error);
	t->proc = g_build_filename(t->dir, "proc", NULL);
	g_assert_cmpint(g_mkdir(t->proc, 0755), ==, 0);
}

static void remove_tree(const char *path)
{
	g_autoptr(GDir) dir = NULL;
	const char *name;

	if (g_file_test(path, G_FILE_TEST_IS_SYMLINK) ||
	    !g_file_test(path, G_FILE_TEST_IS_DIR)) {
		g_assert_cmpint(g_unlink(path), ==, 0);
		return;
	}
	dir = g_dir_open(path, 0, NULL);
	while (dir && (name = g_dir_read_name(dir))) {
		g_autofree gchar *child = g_build_filename(path, name, NULL);

		remove_tree(child);
	}
	g_assert_cmpint(g_rmdir(path), ==, 0);
}

static void tree_teardown(struct tree *t, gconstpointer data)
{
	remove_tree(t->dir);
	g_free(t->dir);
	g_free(t->proc);
	g_clear_pointer(&t->found, g_ptr_array_unref);
	g_clear_pointer(&t->skipped, g_ptr_array_unref);
}

/* ---- building the tree ---- */

static gchar *tpath(struct tree *t, const char *name)
{
	return g_build_filename(t->dir, name, NULL);
}

static void put(struct tree *t, GPid pid, const char *what, const char *data,
		gssize len)
{
	g_autofree gchar *name = g_strdup_printf("%d", pid);
	g_autofree gchar *dir = g_build_filename(t->proc, name, NULL);
	g_autofree gchar *path = g_build_filename(dir, what, NULL);
	g_autoptr(GError) error = NULL;

	g_mkdir_with_parents(dir, 0755);
	g_file_set_contents(path, data, len, &error);
	g_assert_no_error(error);
}

static void link_to(struct tree *t, GPid pid, const char *what,
		    const char *target)
{
	g_autofree gchar *name = g_strdup_printf("%d", pid);
	g_autofree gchar *dir = g_build_filename(t->proc, name, NULL);
	g_autofree gchar *path = g_build_filename(dir, what, NULL);

	g_mkdir_with_parents(dir, 0755);
	g_assert_cmpint(symlink(target, path), ==, 0);
}

static void put_stat(struct tree *t, GPid pid, const char *comm, char state,
		     GPid ppid, GPid sid, guint64 start)
{
	g_autofree gchar *stat = g_strdup_printf(
		"%d (%s) %c %d %d %d 0 -1 4194368 466 0 0 0 0 0 0 0 20 0 1 0 "
		"%" G_GUINT64_FORMAT " 102289408 1822 18446744073709551615\n",
		pid, comm, state, ppid, sid, sid, start);

	put(t, pid, "stat", stat, -1);
}

/* argv as "a|b|c": every "|" becomes the NUL that ends an argument. */
static void put_cmdline(struct tree *t, GPid pid, const char *bars)
{
	g_autofree gchar *data = g_strconcat(bars, "|", NULL);
	gsize len = strlen(data);

	g_strdelimit(data, "|", '\0');
	put(t, pid, "cmdline", data, len);
}

struct fake {
	GPid pid, ppid, sid;
	guint64 start;
	const char *exe;	/* NULL: no exe link */
	const char *cwd;	/* NULL: no cwd link */
	const char *argv;	/* "a|b|c"; NULL: empty cmdline */
	char state;		/* 0: 'S' */
	guint32 uid, gid;	/* 0: the test's own euid, egid */
	guint32 ruid;		/* real uid; 0: uid */
};

/* FAKE(t, .pid = 1, .exe = ...) */
#define FAKE(t, ...) fake(t, &(struct fake){ __VA_ARGS__ })

static gchar *status_text_ruid(guint32 ruid, guint32 uid, guint32 gid,
			       guint64 blocked, guint64 caught)
{
	return g_strdup_printf(
		"Name:\thaproxy\nState:\tS (sleeping)\n"
		"Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\n"
		"SigQ:\t0/96365\n"
		"SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
		"SigBlk:\t%016" G_GINT64_MODIFIER "x\n"
		"SigIgn:\t0000000004001004\n"
		"SigCgt:\t%016" G_GINT64_MODIFIER "x\n"
		"CapInh:\t0000000000000000\n", ruid, uid, uid, uid, gid, gid,
		gid, gid, blocked, caught);
}

static gchar *status_text(guint32 uid, guint32 gid, guint64 blocked,
			  guint64 caught)
{
	return status_text_ruid(uid, uid, gid, blocked, caught);
}

static void fake(struct tree *t, const struct fake *f)
{
	guint32 uid = f->uid ? f->uid : geteuid();
	g_autofree gchar *status = status_text_ruid(f->ruid ? f->ruid : uid,
						    uid,
						    f->gid ? f->gid : getegid(),
						    0, 0);

	g_autofree gchar *comm = g_path_get_basename(f->exe ? : "kthread");

	put_stat(t, f->pid, comm, f->state ? f->state : 'S', f->ppid, f->sid,
		 f->start ? f->start : 1000 + (guint64)f->pid);
	if (f->argv)
		put_cmdline(t, f->pid, f->argv);
	else
		put(t, f->pid, "cmdline", "", 0);
	if (f->exe)
		link_to(t, f->pid, "exe", f->exe);
	if (f->cwd)
		link_to(t, f->pid, "cwd", f->cwd);
	put(t, f->pid, "status", status, -1);
}

/* A status of the test's own ids, with these signal masks. */
static void put_status(struct tree *t, GPid pid, guint64 blocked,
		       guint64 caught)
{
	g_autofree gchar *status = status_text(geteuid(), getegid(), blocked,
					       caught);

	put(t, pid, "status", status, -1);
}

/* Processes every tree has: init, a shell, a kernel thread. */
static void fake_system(struct tree *t)
{
	FAKE(t, .pid = 1, .sid = 1, .exe = "/usr/lib/systemd/systemd",
				.cwd = "/", .argv = "/sbin/init");
	FAKE(t, .pid = 2, .sid = 0, .argv = NULL);
	FAKE(t, .pid = 40, .ppid = 1, .sid = 40, .exe = "/usr/bin/bash",
				.cwd = "/root", .argv = "-bash");
}

static gchar *write_config(struct tree *t, const char *name)
{
	gchar *path = tpath(t, name);
	g_autofree gchar *dir = g_path_get_dirname(path);
	g_autoptr(GError) error = NULL;

	g_mkdir_with_parents(dir, 0755);
	g_file_set_contents(path, "global\n", -1, &error);
	g_assert_no_error(error);
	return path;
}

static gchar *write_pidfile(struct tree *t, const char *content)
{
	gchar *path = tpath(t, "h.pid");
	g_autoptr(GError) error = NULL;

	g_file_set_contents(path, content, -1, &error);
	g_assert_no_error(error);
	return path;
}

/* Runs find_foreign, keeps the results in t; the number of instances. */
static guint find(struct tree *t, const char *pidfile, const char *config,
		  GPid self)
{
	const char *configs[] = { config, NULL };
	g_autoptr(GError) error = NULL;

	g_clear_pointer(&t->found, g_ptr_array_unref);
	g_clear_pointer(&t->skipped, g_ptr_array_unref);
	g_assert_true(find_foreign(t->proc, pidfile, configs, self, &t->found,
				   &t->skipped, &error));
	g_assert_no_error(error);
	g_assert_nonnull(t->found);
	g_assert_nonnull(t->skipped);
	for (guint i = 0; i < t->found->len; i++) {
		g_autofree gchar *line = foreign_describe(
			g_ptr_array_index(t->found, i));

		g_test_message("found: %s", line);
	}
	for (guint i = 0; i < t->skipped->len; i++) {
		const struct foreign_skip *s = g_ptr_array_index(t->skipped, i);

		g_assert_true(g_utf8_validate(s->reason, -1, NULL));
		g_test_message("skipped %d: %s", s->pid, s->reason);
	}
	return t->found->len;
}

static const struct foreign *instance(struct tree *t, guint i)
{
	g_assert_cmpuint(i, <, t->found->len);
	return g_ptr_array_index(t->found, i);
}

static const struct foreign_skip *skip(struct tree *t, guint i)
{
	g_assert_cmpuint(i, <, t->skipped->len);
	return g_ptr_array_index(t->skipped, i);
}

static void assert_workers(const struct foreign *f, const GPid *want, guint n)
{
	g_assert_cmpuint(f->workers->len, ==, n);
	g_assert_cmpuint(f->worker_start_times->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpint(g_array_index(f->workers, GPid, i), ==,
				want[i]);
}

static void assert_configs(const struct foreign *f, const char *want)
{
	g_assert_nonnull(f->config_files);
	g_assert_cmpstr(f->config_files[0], ==, want);
	g_assert_null(f->config_files[1]);
}

/* ---- finding and classifying ---- */

static void test_daemon_by_pidfile(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "500\n");
	g_autofree gchar *argv = g_strdup_printf(
		HAPROXY "|-D|-p|%s|-f|%s", pidfile, cfg);
	const struct foreign *f;

	fake_system(t);
	FAKE(t, .pid = 500, .ppid = 1, .sid = 500, .start = 77,
				.exe = HAPROXY, .cwd = "/", .argv = argv);

	g_assert_cmpuint(find(t, pidfile, NULL, 9999), ==, 1);
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

	/* Found both ways, it is still one instance. */
	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	g_assert_cmpuint(instance(t, 0)->found_by, ==,
			 BOTH);
}

static void test_daemon_by_config_relative(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "etc/h.cfg");
	g_autofree gchar *other = write_config(t, "etc/other.cfg");
	g_autofree gchar *etc = tpath(t, "etc");

	fake_system(t);
	/* Started from etc/ as "haproxy -D -f h.cfg". */
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .exe = HAPROXY,
				.cwd = etc, .argv = "haproxy|-D|-f|h.cfg");
	/* Another service on the same host. */
	FAKE(t, .pid = 520, .ppid = 1, .sid = 520, .exe = HAPROXY,
				.cwd = etc, .argv = "haproxy|-D|-f|other.cfg");
	/* The same name from elsewhere is another file. */
	FAKE(t, .pid = 530, .ppid = 1, .sid = 530, .exe = HAPROXY,
				.cwd = "/", .argv = "haproxy|-D|-f|h.cfg");

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
		"haproxy|-C|%s|-D|-f|h.cfg", conf);

	fake_system(t);
	/* "-C conf" relative: haproxy has changed into it, cwd shows it. */
	FAKE(t, .pid = 540, .ppid = 1, .sid = 540, .exe = HAPROXY,
				.cwd = conf,
				.argv = "haproxy|-C|conf|-D|-f|h.cfg");
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
	g_autofree gchar *argv1 = g_strdup_printf("haproxy|-D|-f|%s", link);
	g_autofree gchar *argv2 = g_strdup_printf("haproxy|-D|--|%s/h.cfg",
						  dirlink);

	g_assert_cmpint(symlink(cfg, link), ==, 0);
	g_assert_cmpint(symlink(real, dirlink), ==, 0);
	fake_system(t);
	FAKE(t, .pid = 560, .ppid = 1, .sid = 560, .exe = HAPROXY,
				.cwd = "/", .argv = argv1);
	FAKE(t, .pid = 570, .ppid = 1, .sid = 570, .exe = HAPROXY,
				.cwd = "/", .argv = argv2);

	/* The paths differ; device and inode are the same. */
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 560);
	g_assert_cmpint(instance(t, 1)->pid, ==, 570);
	/* Reported as the process names them. */
	assert_configs(instance(t, 0), link);
	/* And the other way round. */
	g_assert_cmpuint(find(t, NULL, link, 9999), ==, 2);
}

/* The 1.7 -Ds parent, under the historic wrapper. */
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
	FAKE(t, .pid = 600, .ppid = 590, .sid = 590,
				.exe = HAPROXY, .cwd = "/");
	put(t, 600, "cmdline", renamed, sizeof(renamed));
	/* The workers called setsid(). */
	FAKE(t, .pid = 601, .ppid = 600, .sid = 601,
				.exe = HAPROXY, .cwd = "/",
				.argv = worker_argv);
	FAKE(t, .pid = 602, .ppid = 600, .sid = 602,
				.exe = HAPROXY, .cwd = "/",
				.argv = worker_argv);

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

	/* From the pidfile alone, the same. */
	g_assert_cmpuint(find(t, pidfile, NULL, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 600);
	g_assert_cmpuint(instance(t, 0)->found_by, ==, FOREIGN_BY_PIDFILE);
}

/* 1.5 does not rename its -Ds parent; a 1.8+ -Ds master-worker is no -Ds
 * parent. */
static void test_ds_parent_15(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-f|%s|-Ds", cfg);
	static const GPid ds_workers[] = { 611 };
	static const GPid mw_workers[] = { 621 };

	fake_system(t);
	FAKE(t, .pid = 610, .ppid = 40, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 611, .ppid = 610, .sid = 611, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	/* -Ds = -D on 2.x with "master-worker" in the configuration: the
	 * master daemonised, its worker stayed in its session. */
	FAKE(t, .pid = 620, .ppid = 1, .sid = 620, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 621, .ppid = 620, .sid = 620, .exe = HAPROXY,
				.cwd = "/", .argv = argv);

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
	FAKE(t, .pid = 700, .ppid = 1, .sid = 700, .start = 50,
				.exe = HAPROXY, .cwd = "/", .argv = argv);
	/* The old worker, still draining, started first. */
	FAKE(t, .pid = 710, .ppid = 700, .sid = 700, .start = 60,
				.exe = HAPROXY, .cwd = "/", .argv = argv);
	FAKE(t, .pid = 701, .ppid = 700, .sid = 700, .start = 90,
				.exe = HAPROXY, .cwd = "/", .argv = reloaded);
	FAKE(t, .pid = 702, .ppid = 700, .sid = 700, .start = 91,
				.exe = HAPROXY, .cwd = "/", .argv = reloaded);
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
	g_assert_cmpuint(find(t, pidfile, NULL, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 700);
	assert_workers(instance(t, 0), workers, 3);
}

/* "master-worker" in the configuration: no -W, only the children tell. */
static void test_mw_by_config_keyword(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-f|%s", cfg);
	static const GPid workers[] = { 801 };

	fake_system(t);
	FAKE(t, .pid = 800, .ppid = 40, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 801, .ppid = 800, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	/* A standalone haproxy running an external check is no master. */
	FAKE(t, .pid = 810, .ppid = 40, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
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
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-W|-D|-f|%s", cfg);
	g_autofree gchar *dargv = g_strdup_printf(HAPROXY "|-D|-f|%s", cfg);
	static const GPid workers[] = { 852 };

	fake_system(t);
	FAKE(t, .pid = 850, .ppid = 40, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 851, .ppid = 850, .sid = 851, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 852, .ppid = 851, .sid = 851, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	/* And a plain -D one (3.1+ launchers wait for their daemon). */
	FAKE(t, .pid = 860, .ppid = 40, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = dargv);
	FAKE(t, .pid = 861, .ppid = 860, .sid = 861, .exe = HAPROXY,
				.cwd = "/", .argv = dargv);

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

/* Two -D processes across an "-sf" restart are two instances. */
static void test_sf_restart(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *old = g_strdup_printf(HAPROXY "|-D|-f|%s", cfg);
	g_autofree gchar *new = g_strdup_printf(HAPROXY "|-D|-f|%s|-sf|870",
						cfg);

	fake_system(t);
	FAKE(t, .pid = 880, .ppid = 1, .sid = 880, .start = 20,
				.exe = HAPROXY, .cwd = "/", .argv = new);
	FAKE(t, .pid = 870, .ppid = 1, .sid = 870, .start = 10,
				.exe = HAPROXY, .cwd = "/", .argv = old);

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
	/* Named haproxy, runs something else. */
	FAKE(t, .pid = 901, .ppid = 40, .sid = 40,
				.exe = "/usr/bin/python3", .cwd = "/",
				.argv = named);
	/* Runs haproxy, calls itself something else. */
	FAKE(t, .pid = 902, .ppid = 40, .sid = 40, .exe = HAPROXY,
				.cwd = "/", .argv = "nginx|-g|daemon off;");

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

static void test_zombie(struct tree *t, gconstpointer data)
{
	g_autofree gchar *pidfile = write_pidfile(t, "910\n");

	fake_system(t);
	FAKE(t, .pid = 910, .ppid = 1, .sid = 910, .state = 'Z');

	g_assert_cmpuint(find(t, pidfile, NULL, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 910);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "zombie"));
}

/* Processes that end while they are read leave holes in the tree. */
static void test_vanishing(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "920\n921\n922\n");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-f|%s", cfg);
	g_autofree gchar *gone = g_build_filename(t->proc, "920", NULL);

	fake_system(t);
	/* Listed, then every file gone. */
	g_assert_cmpint(g_mkdir(gone, 0755), ==, 0);
	/* stat read, then the rest gone. */
	put_stat(t, 921, "haproxy", 'S', 1, 921, 5);
	/* Its cwd went away; exe and cmdline are there. */
	put_stat(t, 922, "haproxy", 'S', 1, 922, 6);
	put_cmdline(t, 922, argv);
	link_to(t, 922, "exe", HAPROXY);
	put_status(t, 922, 0, 0);

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 922);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 920);
	g_assert_cmpstr(skip(t, 0)->reason, ==, "no such process");
	g_assert_cmpint(skip(t, 1)->pid, ==, 921);
	g_assert_cmpstr(skip(t, 1)->reason, ==,
			"exited while it was looked at");
}

static void test_ours_excluded(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "951\n952\n960\n");
	g_autofree gchar *ours = g_strdup_printf(HAPROXY "|-f|%s|-db", cfg);
	g_autofree gchar *ds = g_strdup_printf(HAPROXY "|-f|%s|-Ds", cfg);
	g_autofree gchar *wrapper = g_strdup_printf(
		"/usr/sbin/haproxy-systemd-wrapper|-f|%s", cfg);

	fake_system(t);
	FAKE(t, .pid = 950, .ppid = 1, .sid = 950,
				.exe = "/usr/sbin/haproxy-systemd-wrapper",
				.cwd = "/", .argv = wrapper);
	FAKE(t, .pid = 951, .ppid = 950, .sid = 950,
				.exe = HAPROXY, .cwd = "/", .argv = ours);
	/* A 1.x generation: -Ds parent and its worker. */
	FAKE(t, .pid = 955, .ppid = 950, .sid = 950,
				.exe = HAPROXY, .cwd = "/", .argv = ds);
	FAKE(t, .pid = 952, .ppid = 955, .sid = 952,
				.exe = HAPROXY, .cwd = "/", .argv = ds);
	/* A daemon someone else started is foreign. */
	FAKE(t, .pid = 960, .ppid = 1, .sid = 960,
				.exe = HAPROXY, .cwd = "/", .argv = ours);

	g_assert_cmpuint(find(t, pidfile, cfg, 950), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 960);
	g_assert_cmpuint(t->skipped->len, ==, 0);
}

static void test_deleted_exe(struct tree *t, gconstpointer data)
{
	g_autofree gchar *pidfile = write_pidfile(t, "970\n");
	g_autofree gchar *line = NULL;
	const struct foreign *f;

	fake_system(t);
	FAKE(t, .pid = 970, .ppid = 1, .sid = 970,
				.exe = HAPROXY " (deleted)", .cwd = "/",
				.argv = "haproxy|-D|-f|/etc/h.cfg");

	g_assert_cmpuint(find(t, pidfile, NULL, 9999), ==, 1);
	f = instance(t, 0);
	g_assert_cmpstr(f->exe, ==, HAPROXY);
	g_assert_true(f->exe_deleted);
	assert_configs(f, "/etc/h.cfg");
	line = foreign_describe(f);
	g_assert_cmpstr(line, ==, "standalone pid 970, " HAPROXY
			" (deleted), found by pidfile");
}

static void test_describe(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-W|-f|%s", cfg);
	g_autofree gchar *line = NULL;

	fake_system(t);
	FAKE(t, .pid = 980, .ppid = 1, .sid = 980, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 981, .ppid = 980, .sid = 980, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	FAKE(t, .pid = 982, .ppid = 980, .sid = 980, .exe = HAPROXY,
				.cwd = "/", .argv = argv);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	line = foreign_describe(instance(t, 0));
	g_assert_cmpstr(line, ==, "master-worker master pid 980 (workers 981, "
			"982), " HAPROXY ", found by configuration");
	g_assert_cmpstr(foreign_kind_name(FOREIGN_DS_PARENT), ==, "-Ds parent");
}

/* Names and contents an attacker or a race can produce. */
static void test_garbage_tree(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "990 991 992 993 994 995");
	g_autofree gchar *argv = g_strdup_printf("haproxy\xff\xfe|-f|%s", cfg);
	g_autofree gchar *nasty = g_strdup_printf("haproxy|-f|%s|-f", cfg);
	static const char binary[] = "\0\1\2)\xff (\0 S";

	fake_system(t);
	put(t, 990, "stat", "garbage", -1);
	put(t, 991, "stat", "991 (haproxy", -1);
	put(t, 992, "stat", binary, sizeof(binary));
	put(t, 993, "stat", "", 0);
	/* A command name made to look like more fields. */
	put_stat(t, 994, "ha) Z 1 2 (x", 'S', 1, 994, 9);
	put_cmdline(t, 994, argv);
	link_to(t, 994, "exe", HAPROXY);
	link_to(t, 994, "cwd", "/");
	put_status(t, 994, 0, 0);
	/* A cwd that is no absolute path, a trailing -f with no value. */
	put_stat(t, 995, "haproxy", 'S', 1, 995, 10);
	put_cmdline(t, 995, nasty);
	link_to(t, 995, "exe", HAPROXY);
	link_to(t, 995, "cwd", "(unreachable)/x");
	put_status(t, 995, 0, 0);
	/* Entries that are no pids. */
	put(t, 0, "stat", "0 (x) S 0 0 0", -1);
	g_free(write_config(t, "proc/self/stat"));
	g_free(write_config(t, "proc/12abc/stat"));

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 994);
	g_assert_cmpstr(instance(t, 0)->argv[0], ==, "haproxy\xff\xfe");
	g_assert_cmpint(instance(t, 1)->pid, ==, 995);
	g_assert_cmpuint(t->skipped->len, ==, 4);
	for (guint i = 0; i < 4; i++) {
		g_assert_cmpint(skip(t, i)->pid, ==, 990 + (GPid)i);
		g_assert_cmpuint(skip(t, i)->found_by, ==, FOREIGN_BY_PIDFILE);
	}
}

static void test_settled(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-W|-f|%s", cfg);
	g_autofree gchar *dsargv = g_strdup_printf(HAPROXY "|-Ds|-f|%s", cfg);
	/* What a settled 2.6 master shows, and one in the middle of its
	 * re-execution. */
	const guint64 master = 0x100716a03, execing = 0x310a01;
	const struct foreign *f;

	fake_system(t);
	FAKE(t, .pid = 700, .ppid = 1, .sid = 700, .start = 1,
				.exe = HAPROXY, .cwd = "/", .argv = argv);
	FAKE(t, .pid = 701, .ppid = 700, .sid = 700, .start = 2,
				.exe = HAPROXY, .cwd = "/", .argv = argv);
	FAKE(t, .pid = 710, .ppid = 40, .sid = 40, .start = 3,
				.exe = HAPROXY, .cwd = "/", .argv = dsargv);
	FAKE(t, .pid = 711, .ppid = 710, .sid = 711, .start = 4,
				.exe = HAPROXY, .cwd = "/", .argv = dsargv);
	FAKE(t, .pid = 712, .ppid = 710, .sid = 712, .start = 5,
				.exe = HAPROXY, .cwd = "/", .argv = dsargv);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);

	/* No SIGUSR1 handler in its status: not settled. */
	f = instance(t, 0);
	g_assert_cmpint(f->kind, ==, FOREIGN_MW_MASTER);
	g_assert_false(foreign_settled(t->proc, f));
	put_status(t, 700, execing, 0);
	g_assert_false(foreign_settled(t->proc, f));
	put_status(t, 700, PROC_SIGBIT(SIGUSR1), master);
	g_assert_false(foreign_settled(t->proc, f));
	put_status(t, 700, 0, master);
	g_assert_true(foreign_settled(t->proc, f));
	g_assert_true(proc_catches_signal_at(t->proc, 700, SIGUSR2));
	g_assert_true(proc_catches_signal_at(t->proc, 700, SIGTTOU));
	g_assert_false(proc_catches_signal_at(t->proc, 700, SIGQUIT));
	g_assert_false(proc_catches_signal_at(t->proc, 700, 0));
	g_assert_false(proc_catches_signal_at(t->proc, 700, 65));

	/* A -Ds parent swallows signals: its workers are what count. */
	f = instance(t, 1);
	g_assert_cmpint(f->kind, ==, FOREIGN_DS_PARENT);
	put_status(t, 710, 0, 0);
	put_status(t, 711, 0, master);
	g_assert_false(foreign_settled(t->proc, f));
	put_status(t, 712, 0, master);
	g_assert_true(foreign_settled(t->proc, f));
}

static gboolean pids_have(GArray *pids, GPid pid)
{
	for (guint i = 0; i < pids->len; i++)
		if (g_array_index(pids, GPid, i) == pid)
			return TRUE;
	return FALSE;
}

/*
 * Between the scan and the first generation's spawn, a found process
 * exits and its pid goes to another process (another start time): that
 * pid must not be on haproxy's -sf list, whose signals would reach it.
 */
static void test_sf_pid_reused(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *daemon = g_strdup_printf(HAPROXY "|-D|-f|%s", cfg);
	g_autofree gchar *mw = g_strdup_printf(HAPROXY "|-W|-f|%s", cfg);
	g_autoptr(GArray) before = NULL;
	g_autoptr(GArray) after = NULL;

	fake_system(t);
	FAKE(t, .pid = 500, .ppid = 1, .sid = 500, .start = 77,
				.exe = HAPROXY, .cwd = "/", .argv = daemon);
	FAKE(t, .pid = 700, .ppid = 1, .sid = 700, .start = 50,
				.exe = HAPROXY, .cwd = "/", .argv = mw);
	FAKE(t, .pid = 701, .ppid = 700, .sid = 700, .start = 60,
				.exe = HAPROXY, .cwd = "/", .argv = mw);
	FAKE(t, .pid = 702, .ppid = 700, .sid = 700, .start = 61,
				.exe = HAPROXY, .cwd = "/", .argv = mw);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	before = foreign_sf_targets_at(t->proc, t->found);
	g_assert_cmpuint(before->len, ==, 4);
	g_assert_true(pids_have(before, 500));
	g_assert_true(pids_have(before, 701));

	/* The daemon and one worker exit; their pids are reused, by a
	 * shell and by another haproxy alike. */
	put_stat(t, 500, "bash", 'S', 40, 40, 9000);
	put_stat(t, 701, "haproxy", 'S', 1, 701, 9001);
	after = foreign_sf_targets_at(t->proc, t->found);
	g_assert_false(pids_have(after, 500));
	g_assert_false(pids_have(after, 701));
	g_assert_true(pids_have(after, 700));
	g_assert_true(pids_have(after, 702));
	g_assert_cmpuint(after->len, ==, 2);
}

static void test_no_proc_root(struct tree *t, gconstpointer data)
{
	g_autofree gchar *none = tpath(t, "nowhere");
	g_autoptr(GPtrArray) found = NULL, skipped = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_false(find_foreign(none, NULL, NULL, 1, &found, &skipped,
				    &error));
	g_assert_nonnull(error);
	g_assert_null(found);
	g_assert_null(skipped);
}

static void test_same_process(struct tree *t, gconstpointer data)
{
	struct proc_stat st;

	fake_system(t);
	FAKE(t, .pid = 700, .ppid = 1, .sid = 700, .start = 123,
				.exe = HAPROXY, .argv = "haproxy");
	FAKE(t, .pid = 701, .ppid = 1, .sid = 701, .start = 124,
				.state = 'Z');

	g_assert_true(proc_same_process_at(t->proc, 700, 123));
	g_assert_false(proc_same_process_at(t->proc, 700, 124));
	g_assert_false(proc_same_process_at(t->proc, 701, 124));
	g_assert_false(proc_same_process_at(t->proc, 702, 124));
	g_assert_true(proc_stat_at("/proc", getpid(), &st, NULL));
	g_assert_true(proc_same_process_at("/proc", getpid(), st.start_time));
	g_assert_cmpint(st.ppid, ==, getppid());
}

/* ---- the pure parsers ---- */

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

	g_assert_true(proc_parse_stat(real, sizeof(real) - 1, &st));
	g_assert_cmpint(st.state, ==, 'S');
	g_assert_cmpint(st.ppid, ==, 1);
	g_assert_cmpint(st.session, ==, 6887);
	g_assert_cmpuint(st.start_time, ==, 152462);

	/* Only the last ")" ends the name. */
	g_assert_true(proc_parse_stat(tricky, sizeof(tricky) - 1, &st));
	g_assert_cmpint(st.state, ==, 'Z');
	g_assert_cmpint(st.ppid, ==, 77);
	g_assert_cmpint(st.session, ==, 88);
	g_assert_cmpuint(st.start_time, ==, 999);

	g_assert_true(proc_parse_stat(with_nul, sizeof(with_nul) - 1, &st));
	g_assert_cmpint(st.ppid, ==, 9);
	g_assert_cmpuint(st.start_time, ==, 42);

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

static gchar *write_config_text(struct tree *t, const char *name,
				const char *text)
{
	gchar *path = tpath(t, name);

	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

/* Same configuration, same pidfile: the instance of another user is
 * named and left alone, and so is a master of another user whatever its
 * workers; our own master's workers may have switched user. */
static void test_credentials(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "510\n");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-f|%s", cfg);
	g_autofree gchar *mw = g_strdup_printf(HAPROXY "|-W|-f|%s", cfg);
	const struct foreign *f;

	fake_system(t);
	FAKE(t, .pid = 500, .ppid = 1, .sid = 500, .start = 1,
				.exe = HAPROXY, .cwd = "/", .argv = argv);
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .start = 2,
				.exe = HAPROXY, .cwd = "/", .argv = argv,
				.uid = 65534, .gid = 65534);
	FAKE(t, .pid = 520, .ppid = 1, .sid = 520, .start = 3,
				.exe = HAPROXY, .cwd = "/", .argv = mw);
	FAKE(t, .pid = 521, .ppid = 520, .sid = 520, .start = 4,
				.exe = HAPROXY, .cwd = "/", .argv = mw,
				.uid = 65534, .gid = 65534);
	FAKE(t, .pid = 530, .ppid = 1, .sid = 530, .start = 5,
				.exe = HAPROXY, .cwd = "/", .argv = mw,
				.uid = 1000, .gid = 1000);
	FAKE(t, .pid = 531, .ppid = 530, .sid = 530, .start = 6,
				.exe = HAPROXY, .cwd = "/", .argv = mw,
				.uid = 1000, .gid = 1000);
	/* A set-user-id copy run by uid 1001: its real uid tells. */
	FAKE(t, .pid = 540, .ppid = 1, .sid = 540, .start = 7,
				.exe = HAPROXY, .cwd = "/", .argv = argv,
				.ruid = 1001);

	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 500);
	f = instance(t, 1);
	g_assert_cmpint(f->pid, ==, 520);
	g_assert_cmpint(f->kind, ==, FOREIGN_MW_MASTER);
	g_assert_cmpuint(f->workers->len, ==, 1);
	g_assert_cmpint(g_array_index(f->workers, GPid, 0), ==, 521);
	/* One notice an instance, its top named. */
	g_assert_cmpuint(t->skipped->len, ==, 3);
	g_assert_cmpint(skip(t, 0)->pid, ==, 510);
	g_assert_cmpuint(skip(t, 0)->found_by, ==, BOTH);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "uid 65534"));
	g_assert_nonnull(strstr(skip(t, 0)->reason, "left alone"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 530);
	g_assert_nonnull(strstr(skip(t, 1)->reason, "uid 1000"));
	g_assert_cmpint(skip(t, 2)->pid, ==, 540);
	g_assert_nonnull(strstr(skip(t, 2)->reason, "real 1001"));
}

/* A status without ids: refused, not guessed. */
static void test_credentials_unreadable(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-f|%s", cfg);

	fake_system(t);
	FAKE(t, .pid = 540, .ppid = 1, .sid = 540, .exe = HAPROXY,
				.cwd = "/", .argv = argv);
	put(t, 540, "status", "Name:\thaproxy\n", -1);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_nonnull(strstr(skip(t, 0)->reason,
				"credentials cannot be read"));
}

/* As root: a haproxy that dropped root as our configuration says (global
 * uid/gid, or user without group: gid stays ours) could be ours; the
 * same ids named only in a userlist or program section could not. */
static void test_credentials_dropped(struct tree *t, gconstpointer data)
{
	static const struct {
		const char *config;
		guint32 uid, gid;
		gboolean ours;
	} cases[] = {
		{ "global\n  uid 33\n  gid 34\n", 33, 34, TRUE },
		{ "global\n  uid 33\n", 33, 0, TRUE },
		{ "global\n  uid 33\n", 33, 34, FALSE },
		{ "global\n  uid 33\n  gid 34\n", 35, 34, FALSE },
		{ "global\n  user nobody\n  group nogroup\n", 65534, 65534,
		  TRUE },
		{ "global\nuserlist l\n  user nobody insecure-password x\n",
		  65534, 0, FALSE },
		{ "global\n  uid 33\nprogram p\n  user nobody\n", 65534,
		  0, FALSE },
		{ "global\n  user nobody\n  uid 33\n", 65534, 0, FALSE },
	};

	if (geteuid() != 0) {
		g_test_skip("needs root: only root can have dropped root");
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *name = g_strdup_printf("c%u.cfg", i);
		g_autofree gchar *cfg = write_config_text(t, name,
							  cases[i].config);
		g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-f|%s",
							 cfg);
		GPid pid = 600 + (GPid)i;

		g_test_message("case %u", i);
		FAKE(t, .pid = pid, .ppid = 1, .sid = pid, .exe = HAPROXY,
					.cwd = "/", .argv = argv,
					.uid = cases[i].uid,
					.gid = cases[i].gid ? cases[i].gid
							    : getegid());
		g_assert_cmpuint(find(t, NULL, cfg, 9999), ==,
				 cases[i].ours ? 1 : 0);
	}
}

static void add_tree_test(const char *name,
			  void (*fn)(struct tree *, gconstpointer))
{
	g_test_add(name, struct tree, NULL, tree_setup, fn, tree_teardown);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/proc/parse-stat", test_parse_stat);
	g_test_add_func("/proc/parse-cmdline", test_parse_cmdline);
	g_test_add_func("/proc/parse-cmdline-huge", test_parse_cmdline_huge);
	g_test_add_func("/proc/parse-random", test_parse_random);
	g_test_add_func("/proc/parse-sigmasks", test_parse_sigmasks);
	add_tree_test("/proc/same-process", test_same_process);
	g_test_add_func("/find/argv-config-files", test_argv_config_files);
	add_tree_test("/find/daemon-by-pidfile", test_daemon_by_pidfile);
	add_tree_test("/find/daemon-by-config-relative",
		      test_daemon_by_config_relative);
	add_tree_test("/find/basedir", test_basedir);
	add_tree_test("/find/symlinked-config", test_symlinked_config);
	add_tree_test("/find/ds-parent-renamed", test_ds_parent_renamed);
	add_tree_test("/find/ds-parent-15", test_ds_parent_15);
	add_tree_test("/find/mw-master", test_mw_master);
	add_tree_test("/find/mw-by-config-keyword", test_mw_by_config_keyword);
	add_tree_test("/find/launcher", test_launcher);
	add_tree_test("/find/sf-restart", test_sf_restart);
	add_tree_test("/find/stale-pidfile", test_stale_pidfile);
	add_tree_test("/find/pidfile-problems", test_pidfile_problems);
	add_tree_test("/find/zombie", test_zombie);
	add_tree_test("/find/vanishing", test_vanishing);
	add_tree_test("/find/ours-excluded", test_ours_excluded);
	add_tree_test("/find/deleted-exe", test_deleted_exe);
	add_tree_test("/find/describe", test_describe);
	add_tree_test("/find/garbage-tree", test_garbage_tree);
	add_tree_test("/find/settled", test_settled);
	add_tree_test("/takeover/sf-pid-reused", test_sf_pid_reused);
	add_tree_test("/find/no-proc-root", test_no_proc_root);
	g_test_add_func("/proc/parse-ids", test_parse_ids);
	add_tree_test("/find/credentials", test_credentials);
	add_tree_test("/find/credentials-unreadable",
		      test_credentials_unreadable);
	add_tree_test("/find/credentials-dropped", test_credentials_dropped);
	return g_test_run();
}
