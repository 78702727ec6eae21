/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first start: with --takeover, the haproxy instances already
 * serving this configuration or pidfile are found and waited for
 * (migrate/takeover.h), their queues handed to SO_REUSEPORT migration;
 * without it, a pidfile naming processes we did not start is only
 * noticed. Either way the reload machine gets SETTLED.
 *
 * The search reads every process on the host. It runs first only when
 * the pidfile names a live haproxy (a -D sharing it: haproxy's -sf takes
 * it over). Otherwise generation 1 starts at once, and the search runs
 * once it serves: what it finds is soft-stopped by us (SIGUSR1 through
 * verified pidfds); if generation 1 fails instead (a foreign instance
 * holds a port without SO_REUSEPORT), the search runs then, and the
 * first start is tried once more with what it found on -sf.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "migrate/replacement.h"
#include "migrate/takeover.h"
#include "wrapper/gentable.h"
#include "wrapper/generation.h"
#include "wrapper/metrics.h"
#include "wrapper/reloader.h"
#include "wrapper/rundir-use.h"

struct first_start;
struct reuseport;

enum first_start_report {
	/* The search runs first, and long on a busy host: haproxy -v may
	 * run meanwhile. */
	FIRST_START_SEARCHING,
};

typedef void (*first_start_report_fn)(enum first_start_report what,
				      gpointer data);

/* args: what to look for; takeover: --takeover; gt, rl: the generations
 * and the machine it posts to; rt: where -x's fragment is, read at each
 * search; rp: the steering; m: the takeovers counter; rep: where the
 * instances go once told to leave (rows of the adopted). */
struct first_start *first_start_new(const struct wrapper_args *args,
				    gboolean takeover, struct gen_table *gt,
				    struct reloader *rl,
				    const struct rundir_use *rt,
				    struct reuseport *rp, struct metrics *m,
				    struct replacement *rep,
				    first_start_report_fn report,
				    gpointer data);
void first_start_free(struct first_start *f);

/* The first generation: after a takeover of what already runs, if any. */
void first_start_begin(struct first_start *f);
/* Generation 1 serves: the search that waited runs now, if any; those
 * taken over before it (its -sf, or held back and soft-stopped by
 * first_start_stop_foreign) leave, rows of the adopted from now on. */
void first_start_serving(struct first_start *f);
/* Generation 1 ended before it was ready (exit_code, msg: the failure).
 * TRUE: the search that waited runs, and RE_SETTLED (a second try, their
 * pids on its -sf) or RE_FAILED (this failure, nothing found) follows. */
gboolean first_start_retry(struct first_start *f, int exit_code,
			   const char *msg);
/* A stop: the search's wait ends, what it found is left alone. */
void first_start_cancel(struct first_start *f);
/* The pids of the instances taken over, for generation 1's -sf list.
 * may_hold_back: its binds need no -sf. *held_back: then every group of
 * theirs got its steering program too, so they stay off the list, and
 * get their soft stop once it serves (first_start_stop_foreign). */
GArray *first_start_sf_pids(struct first_start *f, gboolean may_hold_back,
			    gboolean *held_back);
/* Generation 1 (g) serves: their groups steer to it, then they get the
 * soft stop -sf would have sent. */
void first_start_stop_foreign(struct first_start *f,
			      const struct generation *g);
/* The takeover under way or done (NULL: none). */
struct takeover *first_start_takeover(const struct first_start *f);
