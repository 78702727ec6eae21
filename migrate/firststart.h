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

#include "migrate/takeover.h"
#include "wrapper/generation.h"

struct first_start;
struct supervisor;

/* sv: its owner (the table, the launcher's early probe, the machine's
 * events, the steering, the takeovers counter). */
struct first_start *first_start_new(struct supervisor *sv);
void first_start_free(struct first_start *f);

/* The first generation: after a takeover of what already runs, if any. */
void first_start_begin(struct first_start *f);
/* Generation 1 serves: the search that waited runs now, if any. */
void first_start_serving(struct first_start *f);
/* Generation 1 ended before it was ready (exit_code, msg: the failure).
 * TRUE: the search that waited runs, and RE_SETTLED (a second try, their
 * pids on its -sf) or RE_FAILED (this failure, nothing found) follows. */
gboolean first_start_retry(struct supervisor *sv, int exit_code,
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
