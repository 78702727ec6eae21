/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The generation table: every haproxy generation of ours, which one
 * serves, which one loads, their numbering, the last one that failed and
 * what the pidfile says. Only these functions add, promote or forget a
 * generation, or write the pidfile; the supervisor reads the fields.
 */
#pragma once

#include <glib.h>

#include "wrapper/generation.h"
#include "wrapper/status.h"

struct gen_table {
	GPtrArray *gens;		/* oldest first; owns them */
	struct generation *current;	/* serving */
	struct generation *starting;	/* loading */
	guint next_number;
	struct failed_generation failed;	/* the last one that failed */
	GPid pidfile_pid;		/* what we wrote there, 0 if nothing */
};

void gen_table_init(struct gen_table *t);
void gen_table_clear(struct gen_table *t);
/* g was just spawned: it loads, and takes the next number. */
void gen_table_add_starting(struct gen_table *t, struct generation *g);
/* g comes from our previous image: serving if it was. */
void gen_table_add_adopted(struct gen_table *t, struct generation *g);
/* g serves now; no generation loads. */
void gen_table_set_serving(struct gen_table *t, struct generation *g);
/* g ended: out of the table, freed. */
void gen_table_forget(struct gen_table *t, struct generation *g);
/* g ended before it served (how: "exited with status 1", say), at the
 * machine's attempt: the last one that failed, until another serves. */
void gen_table_fail(struct gen_table *t, const struct generation *g,
		    const char *how, guint attempt);
/* One serves again: no failure to show. */
void gen_table_clear_failed(struct gen_table *t);

/* The generation with that pid, or NULL. */
struct generation *gen_table_find(const struct gen_table *t, GPid pid);
/* A live master with that pid (0: any), or NULL. */
struct generation *gen_table_find_master(const struct gen_table *t, GPid pid);

/* g serves now, so pidfile (NULL: none) is made to name it. A -Ds parent
 * is never written there, and a master writes its own pid itself. */
void gen_table_publish(struct gen_table *t, const char *pidfile,
		       struct generation *g);
/* After our own exec: the old image's numbering goes on, and it says it
 * wrote pidfile_pid in the pidfile. That is believed only if the pid is
 * one of the generations it handed over, since a state that leaked could
 * name any process. */
void gen_table_restore(struct gen_table *t, guint next_number,
		       GPid pidfile_pid);
/* At exit: removed if it still names what we wrote. */
void gen_table_retract(struct gen_table *t, const char *pidfile);
