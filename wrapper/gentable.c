/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/gentable.h"

#include "base/log.h"
#include "legacy/pidfile.h"

void gen_table_init(struct gen_table *t)
{
	*t = (struct gen_table){
		.gens = g_ptr_array_new_with_free_func(
			(GDestroyNotify)generation_free),
		.next_number = 1,
	};
}

void gen_table_clear(struct gen_table *t)
{
	g_clear_pointer(&t->gens, g_ptr_array_unref);
	failed_generation_clear(&t->failed);
	t->current = t->starting = NULL;
}

void gen_table_add_starting(struct gen_table *t, struct generation *g)
{
	t->next_number++;
	g_ptr_array_add(t->gens, g);
	t->starting = g;
}

void gen_table_add_adopted(struct gen_table *t, struct generation *g)
{
	g_ptr_array_add(t->gens, g);
	if (g->state == GEN_CURRENT)
		t->current = g;
}

void gen_table_set_serving(struct gen_table *t, struct generation *g)
{
	t->current = g;
	t->starting = NULL;
}

void gen_table_forget(struct gen_table *t, struct generation *g)
{
	if (t->current == g)
		t->current = NULL;
	if (t->starting == g)
		t->starting = NULL;
	g_ptr_array_remove(t->gens, g);
}

struct generation *gen_table_find(const struct gen_table *t, GPid pid)
{
	for (guint i = 0; i < t->gens->len; i++) {
		struct generation *g = g_ptr_array_index(t->gens, i);

		if (g->pid == pid)
			return g;
	}
	return NULL;
}

struct generation *gen_table_find_master(const struct gen_table *t, GPid pid)
{
	for (guint i = 0; i < t->gens->len; i++) {
		struct generation *g = g_ptr_array_index(t->gens, i);

		if (g->mode == LAUNCH_MW && !g->exited && (!pid || g->pid == pid))
			return g;
	}
	return NULL;
}

/* ---- the pidfile, for scripts that read it (-db writes none) ---- */

void gen_table_publish(struct gen_table *t, const char *pidfile,
		       struct generation *g)
{
	g_autoptr(GError) error = NULL;

	if (!pidfile || g->mode == LAUNCH_DS)
		return;
	/* A master writes its own pid there (-p), as upstream's unit has
	 * it: ours to remove at exit all the same. */
	if (g->mode == LAUNCH_MW) {
		t->pidfile_pid = g->pid;
		return;
	}
	if (!pidfile_write(pidfile, &g->pid, 1, &error)) {
		log_warn("cannot write pidfile: %s", error->message);
		return;
	}
	t->pidfile_pid = g->pid;
}

void gen_table_restore(struct gen_table *t, guint next_number,
		       GPid pidfile_pid)
{
	t->next_number = next_number;
	if (pidfile_pid > 0 && gen_table_find(t, pidfile_pid))
		t->pidfile_pid = pidfile_pid;
}

void gen_table_fail(struct gen_table *t, const struct generation *g,
		    const char *how, guint attempt)
{
	failed_generation_clear(&t->failed);
	t->failed = (struct failed_generation){
		.valid = TRUE,
		.number = g->number,
		.pid = g->pid,
		.started_us = g->started_us,
		.how = g_strdup(how),
		.attempt = attempt,
	};
	g_strlcpy(t->failed.version, g->version, sizeof(t->failed.version));
}

void gen_table_clear_failed(struct gen_table *t)
{
	failed_generation_clear(&t->failed);
}

void gen_table_retract(struct gen_table *t, const char *pidfile)
{
	if (t->pidfile_pid)
		pidfile_remove_if_ours(pidfile, t->pidfile_pid);
}
