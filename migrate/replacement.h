/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A haproxy started by hand replaced the one serving: what ended (our
 * generation, or the adopted ones), the search for its replacement
 * (migrate/adopt.h) and what its outcome means. It posts the reload
 * machine's events (SERVING_LOST, REPLACED) itself; what a search that
 * found nothing, or instances that are gone, mean is the core's: it is
 * told through one callback.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "migrate/adopt.h"
#include "wrapper/gentable.h"
#include "wrapper/metrics.h"
#include "wrapper/reloader.h"
#include "wrapper/rundir-use.h"

struct replacement;
struct reuseport;

enum replacement_report {
	REPLACEMENT_FOUND,	/* an adopted haproxy serves now */
	REPLACEMENT_NONE,	/* the search found nothing */
	REPLACEMENT_GONE,	/* the adopted instances have all ended */
};

typedef void (*replacement_report_fn)(enum replacement_report what,
				      gpointer data);

/* args: what to search for; gt, rl: the generations and the machine it
 * posts to; rt: where -x's fragment is, read at each search; rp: the
 * SO_REUSEPORT steering; m: the counter of restarts adopted. */
struct replacement *replacement_new(const struct wrapper_args *args,
				    struct gen_table *gt, struct reloader *rl,
				    const struct rundir_use *rt,
				    struct reuseport *rp, struct metrics *m,
				    replacement_report_fn report,
				    gpointer data);
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
void replacement_search(struct replacement *r, gboolean quick);
/* Nothing replaced the one serving: said in the log; the exit code the
 * service stops with. */
int replacement_not_found(struct replacement *r);
/* The generation remembered (for the log of a failed reload). */
guint replacement_number(const struct replacement *r);
/* The new image after our own exec: the adopted instances the old one
 * handed over (struct adopt_row), proven again and watched. */
void replacement_restore(struct replacement *r, const GArray *rows);
/* An instance taken over at the first start, told to leave: a row of
 * the adopted (adopt_taken_over), f and pidfd now theirs. */
void replacement_taken_over(struct replacement *r, struct foreign *f,
			    int pidfd);
/* Ours serves: an adopted haproxy found during its reload leaves. */
void replacement_retire_adopted(struct replacement *r);
