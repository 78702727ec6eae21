/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The self-upgrade: whether a reload upgrades the wrapper first, the new
 * image's dry run and exec (wrapper/selfupgrade/image.c), and the upgrade state
 * (wrapper/selfupgrade/state.c) read back by the new image with suspicion. Not the
 * hand-off (migrate/handoff.c: exec into -Ws). It takes what it needs from the
 * owners' handles. The log lines still say "handover": users grep them.
 */
#pragma once

#include <glib.h>

#include "wrapper/genexit.h"
#include "wrapper/gentable.h"
#include "wrapper/lifecycle.h"
#include "wrapper/mworker/link.h"
#include "wrapper/metrics.h"
#include "wrapper/reloader.h"
#include "migrate/replacement.h"
#include "wrapper/rundir-use.h"
#include "wrapper/selfupgrade/state.h"
#include "wrapper/supervisor.h"

struct selfupgrade;

/* policy: --self-upgrade; orig_argv: our command line, for the exec;
 * the pointers are the owners' and outlive the self-upgrade: what crosses
 * the exec and is taken back (the table, the waiting clients, a master's
 * notify socket, the counters), whether an adopted haproxy runs, the
 * ends of generations taken back, the life cycle the new image resumes. */
struct selfupgrade *selfupgrade_new(enum self_upgrade policy,
				    char **orig_argv, struct gen_table *gt,
				    const struct runtime *rt,
				    struct reloader *reloader,
				    struct master_link *master,
				    struct metrics *metrics,
				    const struct replacement *replacement,
				    struct gen_exits *exits,
				    struct lifecycle *life);
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
