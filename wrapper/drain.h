/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Generations that no longer serve: how they are let go (the old one's
 * listeners released, its drain deadline, a lost stop signal sent again)
 * and the bound on how many may drain at once (--max-old-workers).
 */
#pragma once

#include <glib.h>

#include "wrapper/gentable.h"

/* g serves now, old served until then: old drains. hard: the reload
 * used -st; drain_timeout_s: 0, no deadline. */
void drain_begin(struct generation *old, struct generation *g, gboolean hard,
		 guint drain_timeout_s);

/* More than max_old generations (a master's retired workers count too)
 * draining: the oldest get SIGTERM. max_old < 0: no bound. */
void drain_bound(struct gen_table *t, gint max_old);
