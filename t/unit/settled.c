/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * foreign_settled(): whether a haproxy found at takeover takes its -sf
 * signal (SIGUSR1) through a handler now, over a fake proc tree. A -Ds
 * parent never handles it itself: its workers do, so one without workers
 * yet is not settled.
 */
#include <glib.h>
#include <signal.h>

#include "t/lib/proctree.h"

#define MASTER	4200
#define WORKER	4201

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

static void test_standalone(struct tree *t, gconstpointer data)
{
	g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(
		(GDestroyNotify)foreign_free);
	struct foreign *f = found(FOREIGN_STANDALONE);

	g_ptr_array_add(keep, f);
	/* Still at SIGUSR1's default action (a master re-executing). */
	put_status(t, MASTER, 0, PROC_SIGBIT(SIGUSR2));
	g_assert_false(foreign_settled(t->proc, f));
	/* A handler, but the signal blocked: not yet. */
	put_status(t, MASTER, PROC_SIGBIT(SIGUSR1), PROC_SIGBIT(SIGUSR1));
	g_assert_false(foreign_settled(t->proc, f));
	put_status(t, MASTER, 0, PROC_SIGBIT(SIGUSR1));
	g_assert_true(foreign_settled(t->proc, f));
}

static void test_ds_parent(struct tree *t, gconstpointer data)
{
	g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func(
		(GDestroyNotify)foreign_free);
	struct foreign *f = found(FOREIGN_DS_PARENT);

	g_ptr_array_add(keep, f);
	/* The parent swallows signals; nothing of it is asked. */
	put_status(t, MASTER, 0, 0);
	/* No worker forked yet: nobody would take the -sf signal. */
	g_assert_false(foreign_settled(t->proc, f));
	add_worker(f, WORKER);
	put_status(t, WORKER, 0, 0);
	g_assert_false(foreign_settled(t->proc, f));
	put_status(t, WORKER, 0, PROC_SIGBIT(SIGUSR1));
	g_assert_true(foreign_settled(t->proc, f));
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	add_tree_test("/settled/standalone", test_standalone);
	add_tree_test("/settled/ds-parent", test_ds_parent);
	return g_test_run();
}
