/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * foreign_settled(): whether a haproxy found at takeover takes its -sf
 * signal (SIGUSR1) through a handler now, over a fake proc tree. A -Ds
 * parent never handles it itself: its workers do, so one without workers
 * yet is not settled.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>

#include "migrate/find.h"
#include "base/proc.h"

#define MASTER	4200
#define WORKER	4201

typedef struct {
	gchar *root;
} Tree;

static void tree_init(Tree *t)
{
	t->root = g_dir_make_tmp("hsw-settled-XXXXXX", NULL);
	g_assert_nonnull(t->root);
}

/* PID/status with these masks (SigBlk, SigCgt: bit n-1 for signal n). */
static void tree_status(Tree *t, GPid pid, guint64 blocked, guint64 caught)
{
	g_autofree gchar *dir = g_strdup_printf("%s/%d", t->root, pid);
	g_autofree gchar *path = g_build_filename(dir, "status", NULL);
	g_autofree gchar *text = g_strdup_printf(
		"Name:\thaproxy\nSigBlk:\t%016" G_GINT64_MODIFIER "x\n"
		"SigIgn:\t0000000000000000\nSigCgt:\t%016" G_GINT64_MODIFIER
		"x\n", blocked, caught);

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static void tree_clear(Tree *t)
{
	g_autofree gchar *cmd = g_strdup_printf("rm -rf '%s'", t->root);

	g_assert_true(g_spawn_command_line_sync(cmd, NULL, NULL, NULL, NULL));
	g_free(t->root);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Tree, tree_clear)

static struct foreign *found(enum foreign_kind kind)
{
	struct foreign *f = g_new0(struct foreign, 1);

	f->kind = kind;
	f->pid = MASTER;
	f->workers = g_array_new(FALSE, FALSE, sizeof(GPid));
	f->worker_start_times = g_array_new(FALSE, FALSE, sizeof(guint64));
	return f;
}

static void add_worker(struct foreign *f, GPid pid)
{
	guint64 start = 1;

	g_array_append_val(f->workers, pid);
	g_array_append_val(f->worker_start_times, start);
}

static void test_standalone(void)
{
	g_auto(Tree) t = { 0 };
	g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(
		(GDestroyNotify)foreign_free);
	struct foreign *f = found(FOREIGN_STANDALONE);

	g_ptr_array_add(keep, f);
	tree_init(&t);
	/* Still at SIGUSR1's default action (a master re-executing). */
	tree_status(&t, MASTER, 0, PROC_SIGBIT(SIGUSR2));
	g_assert_false(foreign_settled(t.root, f));
	/* A handler, but the signal blocked: not yet. */
	tree_status(&t, MASTER, PROC_SIGBIT(SIGUSR1), PROC_SIGBIT(SIGUSR1));
	g_assert_false(foreign_settled(t.root, f));
	tree_status(&t, MASTER, 0, PROC_SIGBIT(SIGUSR1));
	g_assert_true(foreign_settled(t.root, f));
}

static void test_ds_parent(void)
{
	g_auto(Tree) t = { 0 };
	g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(
		(GDestroyNotify)foreign_free);
	struct foreign *f = found(FOREIGN_DS_PARENT);

	g_ptr_array_add(keep, f);
	tree_init(&t);
	/* The parent swallows signals; nothing of it is asked. */
	tree_status(&t, MASTER, 0, 0);
	/* No worker forked yet: nobody would take the -sf signal. */
	g_assert_false(foreign_settled(t.root, f));
	add_worker(f, WORKER);
	tree_status(&t, WORKER, 0, 0);
	g_assert_false(foreign_settled(t.root, f));
	tree_status(&t, WORKER, 0, PROC_SIGBIT(SIGUSR1));
	g_assert_true(foreign_settled(t.root, f));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/settled/standalone", test_standalone);
	g_test_add_func("/settled/ds-parent", test_ds_parent);
	return g_test_run();
}
