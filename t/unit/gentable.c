/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The generation table's own fields, written only by its functions: the
 * last generation that failed, and the numbering and pidfile pid that
 * cross our exec.
 */
#include <glib.h>

#include "wrapper/gentable.h"

/* A generation of number and pid, loading in t. */
static struct generation *starting(struct gen_table *t, GPid pid)
{
	struct generation *g = generation_new(t->next_number, LAUNCH_DB,
					      "2.6.12");

	g->pid = pid;
	g->started_us = 1000;
	gen_table_add_starting(t, g);
	return g;
}

/* One that failed is remembered until another serves. */
static void test_failed(void)
{
	struct gen_table t;
	struct generation *g;

	gen_table_init(&t);
	g = starting(&t, 4100);
	gen_table_fail(&t, g, "exited with status 1", 2);
	gen_table_forget(&t, g);
	g_assert_true(t.failed.valid);
	g_assert_cmpuint(t.failed.number, ==, 1);
	g_assert_cmpint(t.failed.pid, ==, 4100);
	g_assert_cmpint(t.failed.started_us, ==, 1000);
	g_assert_cmpstr(t.failed.how, ==, "exited with status 1");
	g_assert_cmpstr(t.failed.version, ==, "2.6.12");
	g_assert_cmpuint(t.failed.attempt, ==, 2);

	/* The next one that fails replaces it. */
	g = starting(&t, 4200);
	gen_table_fail(&t, g, "killed by signal 9", 3);
	gen_table_forget(&t, g);
	g_assert_cmpuint(t.failed.number, ==, 2);
	g_assert_cmpstr(t.failed.how, ==, "killed by signal 9");

	g = starting(&t, 4300);
	gen_table_set_serving(&t, g);
	gen_table_clear_failed(&t);
	g_assert_false(t.failed.valid);
	g_assert_null(t.failed.how);
	gen_table_clear(&t);
}

/* After our exec: the numbering goes on; the pidfile pid only if it is
 * one of the generations handed over. */
static void test_restore(void)
{
	struct gen_table t;
	struct generation *g;

	gen_table_init(&t);
	g = starting(&t, 4100);
	gen_table_set_serving(&t, g);
	gen_table_restore(&t, 7, 4999);
	g_assert_cmpuint(t.next_number, ==, 7);
	g_assert_cmpint(t.pidfile_pid, ==, 0);
	gen_table_restore(&t, 8, 4100);
	g_assert_cmpint(t.pidfile_pid, ==, 4100);
	g_assert_cmpuint(starting(&t, 4200)->number, ==, 8);
	gen_table_clear(&t);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/gentable/failed", test_failed);
	g_test_add_func("/gentable/restore", test_restore);
	return g_test_run();
}
