/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The supervisor: the one context of the running wrapper. It owns every
 * part of the state (below); only the core (supervisor.c, outcome.c,
 * lifecycle.c) sees it. Each part is built with what it uses and reports
 * through one callback, which supervisor.c routes. The reload machine
 * (wrapper/reloader.h) stays apart: it decides without processes, and
 * wrapper/supervisor.c performs its effects. supervisor.c is the
 * composition root: the parts' creation order, signals, control
 * requests, the run and the teardown. See doc/internals.md.
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "wrapper/gentable.h"
#include "wrapper/lifecycle.h"
#include "wrapper/metrics.h"
#include "wrapper/options.h"
#include "wrapper/rundir-use.h"
#include "wrapper/status.h"

struct supervisor {
	GMainLoop *loop;
	const struct wrapper_args *args;
	const struct wrapper_options *opts;

	struct gen_table gt;		/* the generations (gentable.h) */
	struct metrics metrics;		/* kept across our own exec */
	struct lifecycle life;		/* starting, running, stopping */
	struct rundir_use rt;		/* rundir, control, the fd store */

	/* Starts, reloads and the hand-off: which step, the requests
	 * meanwhile, the clients waiting (wrapper/reloader.h). */
	struct reloader *reloader;
	guint pending_idle;		/* its RUN_PENDING, from the loop */
	struct launcher *launcher;	/* probe and spawn (launcher.h) */
	struct master_link *master;	/* a -Ws master (mworker/link.h) */
	struct first_start *first;	/* a takeover, first (firststart.h) */
	/* A haproxy started by hand replaced ours (replacement.h). */
	struct replacement *replacement;
	struct reuseport *reuseport;	/* queue migration (steering/) */
	struct selfupgrade *up;		/* our own exec (selfupgrade/) */
	struct handoff *handoff;	/* exec into -Ws (handoff.h) */
	struct ha_stderr *hastderr;	/* haproxy's stderr (hastderr.h) */

	GPtrArray *foreign_view;	/* the status's (statussource.h) */
	guint watchdog_timer;
};

struct supervisor *supervisor_new(const struct wrapper_args *args,
				  const struct wrapper_options *opts,
				  char **orig_argv);

/* Start (or adopt a handed-over state), run until the end; the exit code. */
int supervisor_run(struct supervisor *s);

void supervisor_free(struct supervisor *s);

/* One line for systemd's STATUS=. */
gchar *supervisor_status_summary(struct supervisor *s);
/* STATUS= for systemd, outside a reload or a stop that say it anyway. */
void supervisor_status_tell(struct supervisor *s);
