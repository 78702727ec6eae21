/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for migrate/find.c on odd fake proc trees: zombies,
 * processes vanishing, our own excluded, deleted executables, garbage,
 * trees still settling, reused pids, no proc root, and credentials: only
 * what this wrapper could have started.
 */
#include <signal.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "migrate/scan.h"
#include "t/lib/proctree.h"

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
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|%s|-f|%s",
						 pidfile, cfg);
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
	put_identity(t, &(struct fake){ .pid = 922 });

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
	g_autofree gchar *ours = g_strdup_printf(HAPROXY "|-p|@P|-f|%s|-db", cfg);
	g_autofree gchar *ds = g_strdup_printf(HAPROXY "|-p|@P|-f|%s|-Ds", cfg);
	g_autofree gchar *wrapper = g_strdup_printf(
		"/usr/sbin/haproxy-systemd-wrapper|-f|%s", cfg);

	fake_system(t);
	FAKE(t, .pid = 950, .ppid = 1, .sid = 950,
				.exe = "/usr/sbin/haproxy-systemd-wrapper",
				.cwd = "/", .argv = wrapper);
	HAP(t, 951, 950, 950, ours);
	/* A 1.x generation: -Ds parent and its worker. */
	HAP(t, 955, 950, 950, ds);
	HAP(t, 952, 955, 952, ds);
	/* A daemon someone else started is foreign. */
	HAP(t, 960, 1, 960, ours);

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
				.exe = HAPROXY " (deleted)", .comm = "lb",
				.cwd = "/",
				.argv = "haproxy|-D|-p|@P|-f|/etc/h.cfg");

	g_assert_cmpuint(find(t, pidfile, "/etc/h.cfg", 9999), ==, 1);
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
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-W|-p|@P|-f|%s", cfg);
	g_autofree gchar *line = NULL;

	fake_system(t);
	HAP(t, 980, 1, 980, argv);
	HAP(t, 981, 980, 980, argv);
	HAP(t, 982, 980, 980, argv);

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
	g_autofree gchar *argv = g_strdup_printf("haproxy\xff\xfe|-p|@P|-f|%s", cfg);
	g_autofree gchar *nasty = g_strdup_printf("haproxy|-p|@P|-f|%s|-f", cfg);
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
	put_identity(t, &(struct fake){ .pid = 994 });
	/* A cwd that is no absolute path, a trailing -f with no value. */
	put_stat(t, 995, "haproxy", 'S', 1, 995, 10);
	put_cmdline(t, 995, nasty);
	link_to(t, 995, "exe", HAPROXY);
	link_to(t, 995, "cwd", "(unreachable)/x");
	put_status(t, 995, 0, 0);
	put_identity(t, &(struct fake){ .pid = 995 });
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
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-W|-p|@P|-f|%s", cfg);
	g_autofree gchar *dsargv = g_strdup_printf(HAPROXY "|-Ds|-p|@P|-f|%s", cfg);
	/* What a settled 2.6 master shows, and one in the middle of its
	 * re-execution. */
	const guint64 master = 0x100716a03, execing = 0x310a01;
	const struct foreign *f;

	fake_system(t);
	HAP(t, 700, 1, 700, argv, .start = 1);
	HAP(t, 701, 700, 700, argv, .start = 2);
	HAP(t, 710, 40, 40, dsargv, .start = 3);
	HAP(t, 711, 710, 711, dsargv, .start = 4);
	HAP(t, 712, 710, 712, dsargv, .start = 5);
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
	g_autofree gchar *daemon = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s", cfg);
	g_autofree gchar *mw = g_strdup_printf(HAPROXY "|-W|-p|@P|-f|%s", cfg);
	g_autoptr(GArray) before = NULL;
	g_autoptr(GArray) after = NULL;

	fake_system(t);
	HAP(t, 500, 1, 500, daemon, .start = 77);
	HAP(t, 700, 1, 700, mw, .start = 50);
	HAP(t, 701, 700, 700, mw, .start = 60);
	HAP(t, 702, 700, 700, mw, .start = 61);
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

	g_assert_false(find_foreign(none, NULL, NULL, NULL, 1, &found, &skipped,
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

/* Same configuration, same pidfile: the instance of another user that
 * the pidfile names is named and left alone; one found by its
 * configuration alone is passed over unread, as is a master of another
 * user whatever its workers; our own master's workers may have switched
 * user. */
static void test_credentials(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "510\n");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|@P|-f|%s", cfg);
	g_autofree gchar *mw = g_strdup_printf(HAPROXY "|-W|-p|@P|-f|%s", cfg);
	const struct foreign *f;

	fake_system(t);
	HAP(t, 500, 1, 500, argv, .start = 1);
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .start = 2,
				.exe = HAPROXY, .cwd = "/", .argv = argv,
				.uid = 65534, .gid = 65534);
	HAP(t, 520, 1, 520, mw, .start = 3);
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
	/* One notice for what the pidfile names, its top named. */
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 510);
	g_assert_cmpuint(skip(t, 0)->found_by, ==, FOREIGN_BY_PIDFILE);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "uid 65534"));
	g_assert_nonnull(strstr(skip(t, 0)->reason, "left alone"));

	/* Named by the pidfile, the others are refused as such. */
	g_free(write_pidfile(t, "530\n540\n"));
	g_assert_cmpuint(find(t, pidfile, cfg, 9999), ==, 2);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 530);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "uid 1000"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 540);
	g_assert_nonnull(strstr(skip(t, 1)->reason, "real 1001"));
}

#define WATCHES 8

/* The inotify queue fd read now: opens[wd] counts the IN_OPEN events of
 * each watch (wd below WATCHES). */
static void count_opens(int fd, guint opens[WATCHES])
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	gssize len;

	while ((len = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const void *)p;

			g_assert_cmpint(e->wd, <, WATCHES);
			if (e->wd >= 0 && (e->mask & IN_OPEN))
				opens[e->wd]++;
			p += sizeof(*e) + e->len;
		}
}

/*
 * Any local user can start processes named haproxy that load our file,
 * with megabytes of arguments each: their owner is looked at first (the
 * owner of PID/ when it is not root, else the uids in PID/status), and
 * the command line of one that cannot be ours is never opened. Ours is
 * (the watch works); one of ours too long to be a haproxy of this
 * service is not read on, and says so.
 */
static void test_foreign_cmdline_unread(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-db|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *ours = NULL, *theirs = NULL, *status_only = NULL;
	g_autofree gchar *their_dir = NULL;
	g_autoptr(GString) longer = g_string_new(argv);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	int wd_ours, wd_theirs, wd_status_only;
	guint opens[WATCHES] = { 0 };

	g_assert_cmpint(fd, >=, 0);
	while (longer->len <= SCAN_CMDLINE_MAX)
		g_string_append(longer, "|-sf|123456");
	fake_system(t);
	HAP(t, 500, 1, 500, argv);
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .exe = HAPROXY,
				.cwd = "/", .argv = argv, .uid = 65534,
				.gid = 65534);
	FAKE(t, .pid = 511, .ppid = 1, .sid = 511, .exe = HAPROXY,
				.cwd = "/", .argv = argv, .uid = 65534,
				.gid = 65534);
	HAP(t, 520, 1, 520, longer->str);
	/* As the kernel shows a dumpable process of that user. */
	their_dir = g_build_filename(t->proc, "510", NULL);
	if (geteuid() == 0)
		g_assert_cmpint(chown(their_dir, 65534, 65534), ==, 0);
	ours = g_build_filename(t->proc, "500", "cmdline", NULL);
	theirs = g_build_filename(t->proc, "510", "cmdline", NULL);
	status_only = g_build_filename(t->proc, "511", "cmdline", NULL);
	wd_ours = inotify_add_watch(fd, ours, IN_OPEN);
	wd_theirs = inotify_add_watch(fd, theirs, IN_OPEN);
	wd_status_only = inotify_add_watch(fd, status_only, IN_OPEN);
	g_assert_cmpint(wd_ours, >=, 0);
	g_assert_cmpint(wd_theirs, >=, 0);
	g_assert_cmpint(wd_status_only, >=, 0);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 500);
	g_assert_cmpuint(t->skipped->len, ==, 0);
	count_opens(fd, opens);
	g_assert_cmpuint(opens[wd_theirs], ==, 0);
	g_assert_cmpuint(opens[wd_status_only], ==, 0);
	/* The watches see the opens of ours. */
	g_assert_cmpuint(opens[wd_ours], >, 0);

	/* Named by the pidfile: looked at, not read on, and said so. */
	g_free(write_pidfile(t, "520\n"));
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 520);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "longer than 64 KiB"));
	count_opens(fd, opens);
	g_assert_cmpuint(opens[wd_theirs], ==, 0);
	g_assert_cmpuint(opens[wd_status_only], ==, 0);
	close(fd);
}

/* A status without ids: refused, not guessed; found by its
 * configuration alone, passed over. */
static void test_credentials_unreadable(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|@P|-f|%s", cfg);

	fake_system(t);
	HAP(t, 540, 1, 540, argv);
	put(t, 540, "status", "Name:\thaproxy\n", -1);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 0);
	g_free(write_pidfile(t, "540\n"));
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
		g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|@P|-f|%s",
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

/*
 * As root, the user our configuration names is read as haproxy reads it:
 * quoted, escaped, from the environment haproxy gets. One that cannot be
 * resolved is named in the refusal.
 */
static void test_credentials_quoted_user(struct tree *t, gconstpointer data)
{
	static const struct {
		const char *config;
		gboolean ours;
	} cases[] = {
		{ "global\n  user \"nobody\"\n", TRUE },
		{ "global\n  user 'nobody' # quoted\n", TRUE },
		{ "global\n  user no\\x62ody\n", TRUE },
		{ "global\n  user \"${HSW_TEST_USER}\"\n", TRUE },
		{ "global\n  user ${HSW_TEST_USER}\n", FALSE },
		{ "global\n  user \"hsw-no-such-user\"\n", FALSE },
	};

	if (geteuid() != 0) {
		g_test_skip("needs root: only root can have dropped root");
		return;
	}
	g_setenv("HSW_TEST_USER", "nobody", TRUE);
	fake_system(t);
	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *name = g_strdup_printf("q%u.cfg", i);
		g_autofree gchar *cfg = write_config_text(t, name,
							  cases[i].config);
		g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-p|@P|-f|%s",
							 cfg);
		g_autofree gchar *pidfile = NULL;
		GPid pid = 600 + (GPid)i;

		g_test_message("case %u: %s", i, cases[i].config);
		FAKE(t, .pid = pid, .ppid = 1, .sid = pid, .exe = HAPROXY,
					.cwd = "/", .argv = argv, .uid = 65534);
		/* Named by the pidfile: refused with why. */
		pidfile = g_strdup_printf("%d\n", pid);
		g_free(write_pidfile(t, pidfile));
		g_assert_cmpuint(find(t, NULL, cfg, 9999), ==,
				 cases[i].ours ? 1 : 0);
	}
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_nonnull(strstr(skip(t, 0)->reason,
				"the configuration's user "
				"\"hsw-no-such-user\" is unknown here"));
	g_unsetenv("HSW_TEST_USER");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	add_tree_test("/proc/same-process", test_same_process);
	add_tree_test("/find/zombie", test_zombie);
	add_tree_test("/find/vanishing", test_vanishing);
	add_tree_test("/find/ours-excluded", test_ours_excluded);
	add_tree_test("/find/deleted-exe", test_deleted_exe);
	add_tree_test("/find/describe", test_describe);
	add_tree_test("/find/garbage-tree", test_garbage_tree);
	add_tree_test("/find/settled", test_settled);
	add_tree_test("/takeover/sf-pid-reused", test_sf_pid_reused);
	add_tree_test("/find/no-proc-root", test_no_proc_root);
	add_tree_test("/find/credentials", test_credentials);
	add_tree_test("/find/credentials-unreadable",
		      test_credentials_unreadable);
	add_tree_test("/find/credentials-dropped", test_credentials_dropped);
	add_tree_test("/find/credentials-quoted-user",
		      test_credentials_quoted_user);
	add_tree_test("/find/foreign-cmdline-unread",
		      test_foreign_cmdline_unread);
	return g_test_run();
}
