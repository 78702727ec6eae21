/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A haproxy started by hand replaced the one serving: what ended (our
 * generation, or the adopted ones), the search for its replacement
 * (migrate/adopt.h) and what its outcome means. It posts the reload
 * machine's events (SERVING_LOST, REPLACED, SEARCH_OVER) itself, and
 * tells the rest of the supervisor (wrapper/supervisor.h) directly.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "migrate/adopt.h"
#include "wrapper/gentable.h"
#include "wrapper/reloader.h"

struct replacement;
struct supervisor;

struct replacement *replacement_new(struct supervisor *sv);
void replacement_free(struct replacement *r);

/* The adopted instances and the search (NULL before the first search;
 * every adopt_* call takes NULL). */
struct adopt *replacement_adopt(const struct replacement *r);

/* How a replaced haproxy ends: exit 0, or SIGTERM. */
gboolean ended_as_replaced(int status);
/* The status a serving generation's unasked-for end gives the wrapper. */
int lost_exit_code(enum launch_mode mode, int status);

/* g, the one serving, ended as a replaced one does while the next
 * generation loads: remembered, the reload decides (and searches). */
void replacement_remember(struct replacement *r, struct generation *g,
			  int status);
/* g, the one serving, ended as a replaced one does: look for what
 * replaced it. */
void replacement_look_for(struct replacement *r, struct generation *g,
			  int status);
/* The search (the reload machine's effect); quick: look once now. */
void replacement_search(struct supervisor *sv, gboolean quick);
/* The generation remembered (for the log of a failed reload). */
guint replacement_number(const struct replacement *r);
/* Ours serves: an adopted haproxy found during its reload leaves. */
void replacement_retire_adopted(struct replacement *r);
