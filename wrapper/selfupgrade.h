/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The self-upgrade: whether a reload upgrades the wrapper first, the new
 * image's dry run and exec (wrapper/upgrade.c), and the upgrade state
 * (wrapper/state.c) read back by the new image with suspicion. Not the
 * hand-off (handoff.c: exec into -Ws). What it needs of the supervisor
 * comes through struct selfupgrade_ops. The log lines still say
 * "handover": users grep them.
 */
#pragma once

#include <glib.h>

#include "wrapper/gentable.h"
#include "wrapper/reloader.h"
#include "wrapper/runtime.h"
#include "wrapper/state.h"
#include "wrapper/supervisor.h"

struct selfupgrade;

struct selfupgrade_ops {
	/* Does a master of ours run (the new image must take masters)? */
	gboolean (*masters)(void *ctx);
	/* Does a haproxy adopted after a restart by hand run? */
	gboolean (*adopted_running)(void *ctx);
	/* A master's notify socket, inheritable for the exec (-1: none);
	 * private again. */
	int (*notify_fd)(void *ctx);
	void (*notify_private)(void *ctx);
	/* The counters that cross the exec (takeovers, adoptions), saved
	 * into h, or restored from it. */
	void (*save_counters)(void *ctx, struct upgrade_state *h);
	void (*restore_counters)(void *ctx, const struct upgrade_state *h);
	/* The new image: g, added to the table, is ours again: watched. */
	void (*adopted)(void *ctx, struct generation *g);
	/* The new image: the old one's notify socket (-1: none, or not
	 * ours), kept or closed; bound anew if a master needs it. */
	void (*adopt_notify)(void *ctx, int fd);
	/* The new image serves with what it adopted. */
	void (*resumed)(void *ctx);
};

/* policy: --self-upgrade; orig_argv: our command line, for the exec;
 * gt, rt, reloader: the owners' (what crosses the exec, the waiting
 * clients), outliving the self-upgrade. */
struct selfupgrade *selfupgrade_new(enum self_upgrade policy,
				    char **orig_argv, struct gen_table *gt,
				    const struct runtime *rt,
				    struct reloader *reloader,
				    const struct selfupgrade_ops *ops,
				    void *ctx);
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
