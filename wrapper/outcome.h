/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The end of a generation, and what it means: the one loading failed
 * (or is started again without -x), the one serving ended on its own (a
 * crash: the wrapper stops with its status; or replaced by hand: a
 * search, migrate/replacement.h), an old one finished draining. It
 * posts the reload machine's events (RETRY, CHILD_EXIT, SERVING_LOST)
 * and ends the life cycle.
 */
#pragma once

#include <glib.h>

#include "base/log.h"
#include "wrapper/gentable.h"
#include "wrapper/lifecycle.h"
#include "wrapper/reloader.h"
#include "migrate/replacement.h"
#include "wrapper/supervisor.h"

struct gen_exits;

/* The pointers are the owners', and outlive it. */
struct gen_exits *gen_exits_new(struct gen_table *gt, struct lifecycle *life,
				struct reloader *reloader,
				struct replacement *replacement,
				const struct wrapper_options *opts);
void gen_exits_free(struct gen_exits *e);

/* g was spawned, or adopted across our exec: its end is watched. */
void gen_exits_watch(struct gen_exits *e, struct generation *g);

/* The wrapper's exit code for a generation that ended unready (a wait
 * status): never 0. */
int unready_exit_code(int wait_status);
