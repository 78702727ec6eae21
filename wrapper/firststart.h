/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first start: with --takeover, the haproxy instances already
 * serving this configuration or pidfile are found and waited for
 * (migrate/takeover.h), their queues handed to SO_REUSEPORT migration;
 * without it, a pidfile naming processes we did not start is only
 * noticed. Either way the reload machine gets SETTLED.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "migrate/takeover.h"
#include "wrapper/reloader.h"
#include "wrapper/reuseport.h"
#include "wrapper/supervisor.h"

struct first_start;
struct launcher;

/* The pointers are the owners', and outlive it. */
struct first_start *first_start_new(const struct wrapper_args *args,
				    const struct wrapper_options *opts,
				    struct reloader *reloader,
				    struct reuseport *reuseport,
				    struct launcher *launcher);
void first_start_free(struct first_start *f);

/* The first generation: after a takeover of what already runs, if any. */
void first_start_begin(struct first_start *f);
/* The takeover under way or done (NULL: none). */
struct takeover *first_start_takeover(const struct first_start *f);
