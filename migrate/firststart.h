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
#include "migrate/takeover.h"
#include "wrapper/gentable.h"
#include "wrapper/reloader.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/supervisor.h"

struct first_start;
struct launcher;

/* The pointers are the owners', and outlive it; takeovers counts the
 * instances taken over. */
struct first_start *first_start_new(const struct wrapper_args *args,
				    const struct wrapper_options *opts,
				    struct reloader *reloader,
				    struct reuseport *reuseport,
				    struct launcher *launcher,
				    const struct gen_table *gt,
				    guint *takeovers);
void first_start_free(struct first_start *f);

/* The first generation: after a takeover of what already runs, if any. */
void first_start_begin(struct first_start *f);
/* Generation 1 serves: the search that waited runs now, if any. */
void first_start_serving(struct first_start *f);
/* Generation 1 ended before it was ready (exit_code, msg: the failure).
 * TRUE: the search that waited runs, and RE_SETTLED (a second try, their
 * pids on its -sf) or RE_FAILED (this failure, nothing found) follows. */
gboolean first_start_retry(struct first_start *f, int exit_code,
			   const char *msg);
/* A stop: the search's wait ends, what it found is left alone. */
void first_start_cancel(struct first_start *f);
/* Did every group of the instances found get its steering program? Then
 * generation 1 may start without them on its -sf list. */
gboolean first_start_foreign_steerable(const struct first_start *f);
/* Generation 1 (g) serves: their groups steer to it, then they get the
 * soft stop -sf would have sent. */
void first_start_stop_foreign(struct first_start *f,
			      const struct generation *g);
/* The takeover under way or done (NULL: none). */
struct takeover *first_start_takeover(const struct first_start *f);
