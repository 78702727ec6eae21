/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate/identity.c on fake proc trees: what makes a running haproxy this
 * service's own. Each case is a haproxy that is ours but for one thing
 * (its namespace, its -p, its files, a wrapper above it, another unit's
 * cgroup, a pidfile others can write), found or refused with that reason
 * and nothing else changed.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "t/lib/proctree.h"

/* The one refused instance: its reason holds want. */
static void assert_refused(struct tree *t, GPid pid, const char *want)
{
	g_assert_cmpuint(t->found->len, ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, pid);
	g_assert_nonnull(strstr(skip(t, 0)->reason, want));
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not this service's own"));
}

/* A directory standing for another mount namespace's root: t->dir seen
 * there holds h.pid and h.cfg, each the real one (a symlink) or another
 * file. */
static gchar *other_root(struct tree *t, const char *name, gboolean pidfile,
			 gboolean cfg)
{
	gchar *root = tpath(t, name);
	g_autofree gchar *dir = g_strconcat(root, t->dir, NULL);
	g_autofree gchar *pid_there = g_build_filename(dir, "h.pid", NULL);
	g_autofree gchar *cfg_there = g_build_filename(dir, "h.cfg", NULL);
	g_autofree gchar *pid_here = tpath(t, "h.pid");
	g_autofree gchar *cfg_here = tpath(t, "h.cfg");

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	if (pidfile)
		g_assert_cmpint(symlink(pid_here, pid_there), ==, 0);
	else
		g_assert_true(g_file_set_contents(pid_there, "", 0, NULL));
	if (cfg)
		g_assert_cmpint(symlink(cfg_here, cfg_there), ==, 0);
	else
		g_assert_true(g_file_set_contents(cfg_there, "global\n", -1,
						  NULL));
	return root;
}

/*
 * Its sockets must be in our network namespace. In another mount
 * namespace (a unit's PrivateTmp=), names prove nothing: its files, seen
 * through its root, must be ours; a container's file at the same path is
 * another file.
 */
static void test_namespaces(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *same = other_root(t, "same", TRUE, TRUE);
	g_autofree gchar *other_cfg = other_root(t, "ocfg", TRUE, FALSE);
	g_autofree gchar *other_pid = other_root(t, "opid", FALSE, TRUE);

	fake_system(t);
	HAP(t, 500, 1, 500, argv);
	/* Its root unreadable: nothing can be proved. */
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .exe = HAPROXY,
	     .cwd = "/", .argv = argv, .mntns = "mnt:[1]");
	FAKE(t, .pid = 520, .ppid = 1, .sid = 520, .exe = HAPROXY,
	     .cwd = "/", .argv = argv, .netns = "net:[1]");
	FAKE(t, .pid = 530, .ppid = 1, .sid = 530, .exe = HAPROXY,
	     .cwd = "/", .argv = argv, .mntns = "mnt:[2]");
	link_to(t, 530, "root", same);
	FAKE(t, .pid = 540, .ppid = 1, .sid = 540, .exe = HAPROXY,
	     .cwd = "/", .argv = argv, .mntns = "mnt:[3]");
	link_to(t, 540, "root", other_cfg);
	FAKE(t, .pid = 550, .ppid = 1, .sid = 550, .exe = HAPROXY,
	     .cwd = "/", .argv = argv, .mntns = "mnt:[4]");
	link_to(t, 550, "root", other_pid);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 500);
	g_assert_cmpint(instance(t, 1)->pid, ==, 530);
	g_assert_cmpuint(t->skipped->len, ==, 4);
	g_assert_cmpint(skip(t, 0)->pid, ==, 510);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "another mnt namespace"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 520);
	g_assert_nonnull(strstr(skip(t, 1)->reason, "another net namespace"));
	g_assert_cmpint(skip(t, 2)->pid, ==, 540);
	g_assert_nonnull(strstr(skip(t, 2)->reason,
				"another mnt namespace, where its "
				"configuration files are not"));
	g_assert_cmpint(skip(t, 3)->pid, ==, 550);
	g_assert_nonnull(strstr(skip(t, 3)->reason,
				"another mnt namespace, where its pidfile"));
}

/* Its own -p decides, the last one, relative to its directory; a
 * symlinked name of the same file is the same pidfile. */
static void test_own_pidfile(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "");
	g_autofree gchar *link = tpath(t, "link.pid");
	g_autofree gchar *none = g_strdup_printf(HAPROXY "|-D|-f|%s", cfg);
	g_autofree gchar *other = g_strdup_printf(
		HAPROXY "|-D|-p|@P|-p|/run/other.pid|-f|%s", cfg);
	g_autofree gchar *relative = g_strdup_printf(
		HAPROXY "|-D|-p|h.pid|-f|%s", cfg);
	g_autofree gchar *linked = g_strdup_printf(
		HAPROXY "|-D|-p|%s|-f|%s", link, cfg);

	g_assert_cmpint(symlink(pidfile, link), ==, 0);
	fake_system(t);
	HAP(t, 500, 1, 500, none);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	assert_refused(t, 500, "names no pidfile");
	/* The wrapper has none: nothing can be its own. */
	g_assert_cmpuint(find(t, "", cfg, 9999), ==, 0);

	HAP(t, 510, 1, 510, other);
	FAKE(t, .pid = 520, .ppid = 1, .sid = 520, .exe = HAPROXY,
	     .cwd = t->dir, .argv = relative);
	HAP(t, 530, 1, 530, linked);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 520);
	g_assert_cmpint(instance(t, 1)->pid, ==, 530);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 500);
	g_assert_cmpint(skip(t, 1)->pid, ==, 510);
	g_assert_nonnull(strstr(skip(t, 1)->reason,
				"its pidfile is /run/other.pid, not ours"));
}

/* Sharing one file is not enough: the whole set, either way round. */
static void test_whole_config_set(struct tree *t, gconstpointer data)
{
	g_autofree gchar *common = write_config(t, "common.cfg");
	g_autofree gchar *a = write_config(t, "a.cfg");
	g_autofree gchar *b = write_config(t, "b.cfg");
	g_autofree gchar *ab = g_strdup_printf(
		HAPROXY "|-D|-p|@P|-f|%s|-f|%s", common, a);
	g_autofree gchar *cb = g_strdup_printf(
		HAPROXY "|-D|-p|@P|-f|%s|-f|%s", common, b);
	g_autofree gchar *c = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
					      common);
	g_autofree gchar *ba = g_strdup_printf(
		HAPROXY "|-D|-p|@P|-f|%s|-f|%s|-f|%s", a, common, a);
	g_autofree gchar *pidfile = tpath(t, "h.pid");
	const char *ours[] = { common, a, NULL };
	g_autoptr(GError) error = NULL;

	fake_system(t);
	HAP(t, 500, 1, 500, cb);
	HAP(t, 510, 1, 510, c);
	HAP(t, 520, 1, 520, ab);
	/* The same set in another order, one named twice. */
	HAP(t, 530, 1, 530, ba);

	g_clear_pointer(&t->found, g_ptr_array_unref);
	g_clear_pointer(&t->skipped, g_ptr_array_unref);
	g_assert_true(find_foreign(t->proc, pidfile, ours, NULL, 9999,
				   &t->found, &t->skipped, &error));
	g_assert_cmpuint(t->found->len, ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 520);
	g_assert_cmpint(instance(t, 1)->pid, ==, 530);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 500);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not exactly ours"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 510);
	g_assert_nonnull(strstr(skip(t, 1)->reason, "not exactly ours"));
}

/*
 * A generation of a wrapper killed on this command line loads the
 * wrapper's own fragment (RUNDIR/listeners.cfg) besides its files: it is
 * ours when the fragment it names is that very file, by path and inode;
 * not with another runtime directory's fragment, nor with another file
 * seen at that path in another mount namespace, nor the fragment alone.
 * Without the fragment given, the same haproxy is another's set.
 */
static void test_own_fragment(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *frag = write_config(t, "run/listeners.cfg");
	g_autofree gchar *other = write_config(t, "run2/listeners.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "520\n");
	g_autofree gchar *with = g_strdup_printf(
		HAPROXY "|-db|-p|@P|-f|%s|-f|%s", cfg, frag);
	g_autofree gchar *with_other = g_strdup_printf(
		HAPROXY "|-db|-p|@P|-f|%s|-f|%s", cfg, other);
	g_autofree gchar *alone = g_strdup_printf(HAPROXY "|-db|-p|@P|-f|%s",
						  frag);
	g_autofree gchar *root = other_root(t, "ns", TRUE, TRUE);
	g_autofree gchar *run_there = g_strconcat(root, t->dir, "/run", NULL);
	g_autofree gchar *frag_there = g_strconcat(root, frag, NULL);
	const char *ours[] = { cfg, NULL };
	g_autoptr(GError) error = NULL;

	g_assert_cmpint(g_mkdir_with_parents(run_there, 0755), ==, 0);
	g_assert_true(g_file_set_contents(frag_there, "global\n", -1, NULL));
	fake_system(t);
	HAP(t, 500, 1, 500, with);
	HAP(t, 510, 1, 510, with_other);
	HAP(t, 520, 1, 520, alone);
	FAKE(t, .pid = 530, .ppid = 1, .sid = 530, .exe = HAPROXY,
	     .cwd = "/", .argv = with, .mntns = "mnt:[5]");
	link_to(t, 530, "root", root);

	g_assert_true(find_foreign(t->proc, pidfile, ours, frag, 9999,
				   &t->found, &t->skipped, &error));
	g_assert_cmpuint(t->found->len, ==, 1);
	g_assert_cmpint(instance(t, 0)->pid, ==, 500);
	g_assert_cmpuint(t->skipped->len, ==, 3);
	g_assert_cmpint(skip(t, 0)->pid, ==, 510);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not exactly ours"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 520);
	g_assert_nonnull(strstr(skip(t, 1)->reason, "not exactly ours"));
	g_assert_cmpint(skip(t, 2)->pid, ==, 530);
	g_assert_nonnull(strstr(skip(t, 2)->reason,
				"another mnt namespace, where its "
				"configuration files are not"));

	/* The fragment is ours to claim only when we name it. */
	g_clear_pointer(&t->found, g_ptr_array_unref);
	g_clear_pointer(&t->skipped, g_ptr_array_unref);
	g_assert_true(find_foreign(t->proc, pidfile, ours, NULL, 9999,
				   &t->found, &t->skipped, &error));
	g_assert_cmpuint(t->found->len, ==, 0);
	g_assert_cmpint(skip(t, 0)->pid, ==, 500);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not exactly ours"));
}

/* Another wrapper's haproxy, however far below it, is that wrapper's;
 * the historic one calls itself the same, its comm cut to 15 bytes. */
static void test_under_other_wrapper(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-Ds|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *wrapper = g_strdup_printf(
		"/usr/sbin/haproxy-systemd-wrapper|-p|@P|-f|%s", cfg);

	fake_system(t);
	FAKE(t, .pid = 590, .ppid = 1, .sid = 590,
	     .exe = "/usr/sbin/haproxy-systemd-wrapper", .cwd = "/",
	     .argv = wrapper);
	FAKE(t, .pid = 595, .ppid = 590, .sid = 590, .exe = "/bin/sh",
	     .cwd = "/", .argv = "sh|-c|exec haproxy");
	HAP(t, 600, 595, 590, argv);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 590);
	g_assert_cmpint(skip(t, 1)->pid, ==, 600);
	g_assert_nonnull(strstr(skip(t, 1)->reason,
				"under another wrapper (pid 590)"));
	/* Under this wrapper it is ours, and not looked at at all. */
	g_assert_cmpuint(find(t, NULL, cfg, 590), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 0);
}

/* Another systemd service's haproxy is that unit's; a shell's scope, a
 * cgroup of no service, or our own are not another unit. */
static void test_cgroup(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	g_autofree gchar *own = NULL;

	g_assert_true(g_file_get_contents("/proc/self/cgroup", &own, NULL,
					  NULL));
	fake_system(t);
	FAKE(t, .pid = 500, .ppid = 1, .sid = 500, .exe = HAPROXY,
	     .cwd = "/", .argv = argv,
	     .cgroup = "0::/system.slice/haproxy-b.service\n");
	FAKE(t, .pid = 510, .ppid = 1, .sid = 510, .exe = HAPROXY,
	     .cwd = "/", .argv = argv,
	     .cgroup = "12:pids:/x\n1:name=systemd:/system.slice/"
		       "haproxy-c.service\n");
	FAKE(t, .pid = 520, .ppid = 1, .sid = 520, .exe = HAPROXY,
	     .cwd = "/", .argv = argv,
	     .cgroup = "0::/user.slice/user-0.slice/session-4.scope\n");
	FAKE(t, .pid = 530, .ppid = 1, .sid = 530, .exe = HAPROXY,
	     .cwd = "/", .argv = argv, .cgroup = own);

	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 2);
	g_assert_cmpint(instance(t, 0)->pid, ==, 520);
	g_assert_cmpint(instance(t, 1)->pid, ==, 530);
	g_assert_cmpuint(t->skipped->len, ==, 2);
	g_assert_cmpint(skip(t, 0)->pid, ==, 500);
	g_assert_nonnull(strstr(skip(t, 0)->reason,
				"another systemd service (haproxy-b.service)"));
	g_assert_cmpint(skip(t, 1)->pid, ==, 510);
	g_assert_nonnull(strstr(skip(t, 1)->reason, "haproxy-c.service"));
}

/*
 * A pidfile others can write names what they chose: one notice, and
 * nothing is a candidate, not even a haproxy ours in every other way.
 * The same file in a sticky directory is fine while it is ours.
 */
static void test_pidfile_trust(struct tree *t, gconstpointer data)
{
	g_autofree gchar *cfg = write_config(t, "h.cfg");
	g_autofree gchar *pidfile = write_pidfile(t, "500\n");
	g_autofree gchar *argv = g_strdup_printf(HAPROXY "|-D|-p|@P|-f|%s",
						 cfg);
	const char *configs[] = { cfg, NULL };
	g_autoptr(GPtrArray) skipped = NULL;

	if (geteuid() != 0) {
		g_test_skip("needs root: files of another owner");
		return;
	}
	g_assert_cmpint(chmod(pidfile, 0644), ==, 0);
	fake_system(t);
	HAP(t, 500, 1, 500, argv);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	g_assert_true(foreign_pidfile_check(t->proc, pidfile, configs, NULL, 9999,
					    &skipped));
	g_clear_pointer(&skipped, g_ptr_array_unref);

	/* Another user's file. */
	g_assert_cmpint(chown(pidfile, 65534, 65534), ==, 0);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_cmpuint(t->skipped->len, ==, 1);
	g_assert_cmpint(skip(t, 0)->pid, ==, 0);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "belongs to uid 65534"));
	g_assert_false(foreign_pidfile_check(t->proc, pidfile, configs, NULL, 9999,
					     &skipped));
	g_clear_pointer(&skipped, g_ptr_array_unref);
	g_assert_cmpint(chown(pidfile, 0, 0), ==, 0);

	/* Ours, but others may write it. */
	g_assert_cmpint(chmod(pidfile, 0664), ==, 0);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "written by other"));
	g_assert_cmpint(chmod(pidfile, 0644), ==, 0);

	/* In a directory others can write, not sticky: they could replace
	 * it; sticky, they cannot. */
	g_assert_cmpint(chmod(t->dir, 0777), ==, 0);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "not sticky"));
	g_assert_cmpint(chmod(t->dir, 01777), ==, 0);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
	/* A directory of another owner. */
	g_assert_cmpint(chown(t->dir, 65534, 65534), ==, 0);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 0);
	g_assert_nonnull(strstr(skip(t, 0)->reason, "directory"));
	g_assert_cmpint(chown(t->dir, 0, 0), ==, 0);
	g_assert_cmpint(chmod(t->dir, 0700), ==, 0);

	/* Missing in a trusted directory: its -p still names it. */
	g_assert_cmpint(g_unlink(pidfile), ==, 0);
	g_assert_cmpuint(find(t, NULL, cfg, 9999), ==, 1);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	add_tree_test("/identity/namespaces", test_namespaces);
	add_tree_test("/identity/own-pidfile", test_own_pidfile);
	add_tree_test("/identity/whole-config-set", test_whole_config_set);
	add_tree_test("/identity/own-fragment", test_own_fragment);
	add_tree_test("/identity/under-other-wrapper",
		      test_under_other_wrapper);
	add_tree_test("/identity/cgroup", test_cgroup);
	add_tree_test("/identity/pidfile-trust", test_pidfile_trust);
	return g_test_run();
}
