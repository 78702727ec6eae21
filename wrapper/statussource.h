/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What "status" shows, gathered from the owners of the state (the
 * generation table, the life cycle, the reload machine, the counters,
 * the takeover and the adopted instances, the SO_REUSEPORT migration):
 * the view wrapper/status.h formats, and systemd's STATUS= line. The
 * core names the owners (struct status_owners); the view's list of
 * foreign instances is kept in the array it gives (foreign_view).
 */
#pragma once

#include <glib.h>

#include "migrate/adopt.h"
#include "migrate/takeover.h"
#include "wrapper/gentable.h"
#include "wrapper/metrics.h"
#include "wrapper/reloader.h"
#include "wrapper/status.h"

struct reuseport;

struct status_owners {
	struct gen_table *gt;
	const char *phase;
	struct reloader *reloader;
	const struct metrics *metrics;
	struct takeover *takeover;	/* the first start's, or NULL */
	struct adopt *adopt;		/* the replacement's, or NULL */
	struct reuseport *reuseport;
	GPtrArray *foreign_view;	/* filled in by the view */
};

/* Valid until the next call, or a change of the owners'. */
struct status_view status_source_view(const struct status_owners *o);
/* One line for systemd's STATUS=. */
gchar *status_source_summary(const struct status_owners *o);
