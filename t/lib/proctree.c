/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fake proc trees: see t/lib/proctree.h. */
#include "t/lib/proctree.h"

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

void tree_setup(struct tree *t, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	t->dir = g_dir_make_tmp("unit-migrate-XXXXXX", &error);
	g_assert_no_error(error);
	t->proc = g_build_filename(t->dir, "proc", NULL);
	g_assert_cmpint(g_mkdir(t->proc, 0755), ==, 0);
}

void remove_tree(const char *path)
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

void tree_teardown(struct tree *t, gconstpointer data)
{
	remove_tree(t->dir);
	g_free(t->dir);
	g_free(t->proc);
	g_clear_pointer(&t->found, g_ptr_array_unref);
	g_clear_pointer(&t->skipped, g_ptr_array_unref);
}

gchar *tpath(struct tree *t, const char *name)
{
	return g_build_filename(t->dir, name, NULL);
}

void put(struct tree *t, GPid pid, const char *what, const char *data,
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

void link_to(struct tree *t, GPid pid, const char *what,
		    const char *target)
{
	g_autofree gchar *name = g_strdup_printf("%d", pid);
	g_autofree gchar *dir = g_build_filename(t->proc, name, NULL);
	g_autofree gchar *path = g_build_filename(dir, what, NULL);

	g_mkdir_with_parents(dir, 0755);
	g_assert_cmpint(symlink(target, path), ==, 0);
}

void put_stat(struct tree *t, GPid pid, const char *comm, char state,
		     GPid ppid, GPid sid, guint64 start)
{
	g_autofree gchar *stat = g_strdup_printf(
		"%d (%s) %c %d %d %d 0 -1 4194368 466 0 0 0 0 0 0 0 20 0 1 0 "
		"%" G_GUINT64_FORMAT " 102289408 1822 18446744073709551615\n",
		pid, comm, state, ppid, sid, sid, start);

	put(t, pid, "stat", stat, -1);
}

/* argv as "a|b|c": every "|" becomes the NUL that ends an argument, and
 * "@P" the tree's h.pid. */
void put_cmdline(struct tree *t, GPid pid, const char *bars)
{
	g_autofree gchar *pidfile = tpath(t, "h.pid");
	g_auto(GStrv) parts = g_strsplit(bars, "@P", -1);
	g_autofree gchar *argv = g_strjoinv(pidfile, parts);
	g_autofree gchar *data = g_strconcat(argv, "|", NULL);
	gsize len = strlen(data);

	g_strdelimit(data, "|", '\0');
	put(t, pid, "cmdline", data, len);
}

gchar *status_text_ruid(guint32 ruid, guint32 uid, guint32 gid,
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

gchar *status_text(guint32 uid, guint32 gid, guint64 blocked,
			  guint64 caught)
{
	return status_text_ruid(uid, uid, gid, blocked, caught);
}

/* A status of the test's own ids, with these signal masks. */
void put_status(struct tree *t, GPid pid, guint64 blocked,
		       guint64 caught)
{
	g_autofree gchar *status = status_text(geteuid(), getegid(), blocked,
					       caught);

	put(t, pid, "status", status, -1);
}

/* Processes every tree has: init, a shell, a kernel thread. */
void fake_system(struct tree *t)
{
	FAKE(t, .pid = 1, .sid = 1, .exe = "/usr/lib/systemd/systemd",
				.cwd = "/", .argv = "/sbin/init");
	FAKE(t, .pid = 2, .sid = 0, .argv = NULL);
	FAKE(t, .pid = 40, .ppid = 1, .sid = 40, .exe = "/usr/bin/bash",
				.cwd = "/root", .argv = "-bash");
}

gchar *write_config(struct tree *t, const char *name)
{
	gchar *path = tpath(t, name);
	g_autofree gchar *dir = g_path_get_dirname(path);
	g_autoptr(GError) error = NULL;

	g_mkdir_with_parents(dir, 0755);
	g_file_set_contents(path, "global\n", -1, &error);
	g_assert_no_error(error);
	return path;
}

gchar *write_pidfile(struct tree *t, const char *content)
{
	gchar *path = tpath(t, "h.pid");
	g_autoptr(GError) error = NULL;

	g_file_set_contents(path, content, -1, &error);
	g_assert_no_error(error);
	return path;
}

/* Runs find_foreign, keeps the results in t; the number of instances.
 * A NULL pidfile is the tree's h.pid, written or not ("@P" in a fake's
 * command line). */
guint find(struct tree *t, const char *pidfile, const char *config,
		  GPid self)
{
	const char *configs[] = { config, NULL };
	g_autoptr(GError) error = NULL;
	g_autofree gchar *own = tpath(t, "h.pid");

	if (!pidfile)
		pidfile = own;
	g_clear_pointer(&t->found, g_ptr_array_unref);
	g_clear_pointer(&t->skipped, g_ptr_array_unref);
	g_assert_true(find_foreign(t->proc, pidfile, configs, NULL, self, &t->found,
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

const struct foreign *instance(struct tree *t, guint i)
{
	g_assert_cmpuint(i, <, t->found->len);
	return g_ptr_array_index(t->found, i);
}

const struct foreign_skip *skip(struct tree *t, guint i)
{
	g_assert_cmpuint(i, <, t->skipped->len);
	return g_ptr_array_index(t->skipped, i);
}

void assert_workers(const struct foreign *f, const GPid *want, guint n)
{
	g_assert_cmpuint(f->workers->len, ==, n);
	g_assert_cmpuint(f->worker_start_times->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpint(g_array_index(f->workers, GPid, i), ==,
				want[i]);
}

void assert_configs(const struct foreign *f, const char *want)
{
	g_assert_nonnull(f->config_files);
	g_assert_cmpstr(f->config_files[0], ==, want);
	g_assert_null(f->config_files[1]);
}

gchar *write_config_text(struct tree *t, const char *name,
				const char *text)
{
	gchar *path = tpath(t, name);

	g_assert_true(g_file_set_contents(path, text, -1, NULL));
	return path;
}

void add_tree_test(const char *name,
			  void (*fn)(struct tree *, gconstpointer))
{
	g_test_add(name, struct tree, NULL, tree_setup, fn, tree_teardown);
}

/* The namespaces and cgroup migrate/identity.c compares with the
 * test's own (the wrapper's): the same unless the fake says otherwise. */
void put_identity(struct tree *t, const struct fake *f)
{
	g_autofree gchar *mnt = g_file_read_link("/proc/self/ns/mnt", NULL);
	g_autofree gchar *net = g_file_read_link("/proc/self/ns/net", NULL);
	g_autofree gchar *cgroup = NULL;
	g_autofree gchar *name = g_strdup_printf("%d/ns", f->pid);
	g_autofree gchar *ns = g_build_filename(t->proc, name, NULL);

	g_assert_nonnull(mnt);
	g_assert_nonnull(net);
	g_assert_true(g_file_get_contents("/proc/self/cgroup", &cgroup, NULL,
					  NULL));
	g_mkdir_with_parents(ns, 0755);
	link_to(t, f->pid, "ns/mnt", f->mntns ? f->mntns : mnt);
	link_to(t, f->pid, "ns/net", f->netns ? f->netns : net);
	put(t, f->pid, "cgroup", f->cgroup ? f->cgroup : cgroup, -1);
}

void fake(struct tree *t, const struct fake *f)
{
	guint32 uid = f->uid ? f->uid : geteuid();
	g_autofree gchar *status = status_text_ruid(f->ruid ? f->ruid : uid,
						    uid,
						    f->gid ? f->gid : getegid(),
						    0, 0);

	g_autofree gchar *comm = g_path_get_basename(f->comm ? : f->exe ? :
						     "kthread");

	/* The kernel keeps 15 bytes of the executed file's name. */
	if (strlen(comm) > 15)
		comm[15] = '\0';
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
	put_identity(t, f);
}
