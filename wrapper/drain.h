/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Generations that no longer serve: how they are let go (the old one's
 * listeners released, its drain deadline, a lost stop signal sent again)
 * and the bound on how many may drain at once (--max-old-workers).
 */
#pragma once

#include <glib.h>

#include "wrapper/gentable.h"

/* g serves now and old, which served until then, drains. hard tells that
 * the reload used -st. drain_timeout_s bounds the drain (0: no bound). */
void drain_begin(struct generation *old, struct generation *g, gboolean hard,
		 guint drain_timeout_s);

/* When more than max_old generations drain (a master's retired workers
 * count too), the oldest get SIGTERM. max_old < 0 sets no bound. */
void drain_bound(struct gen_table *t, gint max_old);
