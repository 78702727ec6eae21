/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The self-upgrade: whether a reload upgrades the wrapper first, the new
 * image's dry run and exec (wrapper/selfupgrade/image.c), and the upgrade state
 * (wrapper/selfupgrade/state.c) read back by the new image with suspicion. Not the
 * hand-off (migrate/handoff.c: exec into -Ws). The log lines still say
 * "handover": users grep them.
 */
#pragma once

#include <glib.h>

#include "wrapper/generation.h"
#include "wrapper/reloader.h"

struct gen_table;
struct ha_stderr;
struct master_link;
struct metrics;
struct replacement;
struct rundir_use;
struct selfupgrade;
struct wrapper_options;

enum selfupgrade_report {
	SELFUPGRADE_ADOPTED,	/* g, handed over: its end to be watched */
};

typedef void (*selfupgrade_report_fn)(enum selfupgrade_report what,
				      struct generation *g, gpointer data);

/* What crosses the exec and is taken back, its owners': the table, the
 * waiting clients (the machine), a master's notify socket, haproxy's
 * stderr, the counters, the runtime directory; --self-upgrade (opts);
 * the haproxy adopted after a restart by hand (replacement). */
struct selfupgrade_uses {
	const struct wrapper_options *opts;
	struct gen_table *gt;
	struct reloader *reloader;
	const struct rundir_use *rt;
	struct master_link *master;
	struct replacement *replacement;
	struct ha_stderr *hastderr;
	struct metrics *metrics;
};

/* orig_argv: our command line, for the exec. */
struct selfupgrade *selfupgrade_new(const struct selfupgrade_uses *uses,
				    char **orig_argv,
				    selfupgrade_report_fn report,
				    gpointer data);
void selfupgrade_free(struct selfupgrade *u);

/* The running wrapper's file (NULL if /proc/self/exe is unreadable). */
const char *selfupgrade_image_path(const struct selfupgrade *u);

/* Does this reload upgrade the wrapper first? */
enum upgrade_choice selfupgrade_wanted(struct selfupgrade *u);
/* The new image's dry run, then its exec; RE_UPGRADE_REFUSED otherwise. */
void selfupgrade_begin(struct selfupgrade *u);
/* A stop: a dry run under way is cancelled, unanswered. */
void selfupgrade_cancel(struct selfupgrade *u);

/* In the new image: take back what the old one handed over (FALSE:
 * nothing, or nothing serving: start anew). Generations that are our
 * children only, waiting clients that are sockets only; children of ours
 * it does not name are stopped; the reload goes on (RE_RESUME). */
gboolean selfupgrade_restore(struct selfupgrade *u);
