/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A generation that serves, and what it means: it is the table's serving
 * one, the instances it replaced (adopted, taken over) leave, its
 * predecessor drains, the pidfile names it, the first start is over,
 * the reload machine hears SERVING then READY, its listeners join the
 * SO_REUSEPORT migration, systemd's fd store keeps them. The counterpart of wrapper/genexit.h.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "migrate/firststart.h"
#include "wrapper/gentable.h"
#include "wrapper/lifecycle.h"
#include "wrapper/metrics.h"
#include "wrapper/reloader.h"
#include "migrate/replacement.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/supervisor.h"

/* The owners' handles, set by whoever composes them, outliving it. */
struct gen_ready {
	const struct wrapper_args *args;
	const struct wrapper_options *opts;
	struct gen_table *gt;
	struct reloader *reloader;
	struct replacement *replacement;
	struct lifecycle *life;
	struct metrics *metrics;
	struct first_start *first;
	struct reuseport *reuseport;
	struct fdstore *fdstore;
};

/* g (started, or a master's first load) is ready: it serves. */
void gen_ready_serve(const struct gen_ready *r, struct generation *g);
