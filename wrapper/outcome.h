/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a generation's start and end mean. It serves: it is the table's
 * serving one, the instances it replaced (adopted, taken over) leave,
 * its predecessor drains, the pidfile names it, the first start is over,
 * the reload machine hears SERVING then READY, its listeners join the
 * SO_REUSEPORT migration, systemd's fd store keeps them. It ends: the
 * one loading failed (or is started again without -x), the one serving
 * ended on its own (a crash: the wrapper stops with its status; or
 * replaced by hand: a search, migrate/replacement.h), an old one
 * finished draining; the reload machine hears RETRY, CHILD_EXIT or
 * SERVING_LOST, and the life cycle may end.
 */
#pragma once

#include <glib.h>

#include "migrate/replacement.h"
#include "wrapper/generation.h"

struct supervisor;

/* g (started, or a master's first load) is ready: it serves. */
void outcome_serve(struct supervisor *sv, struct generation *g);

/* The serving master g loaded again (ours or someone else's SIGUSR2):
 * its new workers' listeners are what systemd's fd store keeps. */
void outcome_master_reloaded(struct supervisor *sv, struct generation *g);

/* g was spawned, or adopted across our exec: its end is watched. */
void outcome_watch(struct supervisor *sv, struct generation *g);

/* What the search for a haproxy started by hand found, or that the
 * adopted instances ended (data: the supervisor). */
void outcome_replacement(enum replacement_report what, gpointer data);

/* The wrapper's exit code for a generation that ended unready (a wait
 * status): never 0. */
int unready_exit_code(int wait_status);
