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

#include "wrapper/reloader.h"
#include "wrapper/state.h"
#include "wrapper/supervisor.h"

struct selfupgrade;

struct selfupgrade_ops {
	/* What crosses the exec, as it is now: the generations, the
	 * counters, the reload under way, its waiters' descriptors and a
	 * master's notify socket (waiters: the caller's to free). */
	struct upgrade_state (*state)(void *ctx);
	/* Those descriptors inheritable for the exec, or private again. */
	void (*fds_inheritable)(void *ctx, gboolean yes);
	/* Does a master of ours run (the new image must take masters)? */
	gboolean (*masters)(void *ctx);
	/* Does a haproxy adopted after a restart by hand run? */
	gboolean (*adopted_running)(void *ctx);
	/* The signal of the reload under way (0: a control request). */
	int (*reload_signal)(void *ctx);
	/* No upgrade on this reload: told is what its clients are told. */
	void (*refused)(void *ctx, const char *told);
};

/* policy: --self-upgrade; orig_argv: our command line, for the exec. */
struct selfupgrade *selfupgrade_new(enum self_upgrade policy,
				    char **orig_argv,
				    const struct selfupgrade_ops *ops,
				    void *ctx);
void selfupgrade_free(struct selfupgrade *u);

/* The running wrapper's file (NULL if /proc/self/exe is unreadable). */
const char *selfupgrade_image_path(const struct selfupgrade *u);

/* Does this reload upgrade the wrapper first? */
enum upgrade_choice selfupgrade_wanted(struct selfupgrade *u);
/* The new image's dry run, then its exec; ops->refused otherwise. */
void selfupgrade_begin(struct selfupgrade *u);
/* A stop: a dry run under way is cancelled, unanswered. */
void selfupgrade_cancel(struct selfupgrade *u);

/*
 * In the new image: the upgrade state the old one left in the
 * environment (FALSE: none; the variable is gone either way). Kept only
 * what a leaked variable cannot abuse: generations that are our children,
 * waiters that are sockets, a notify socket bound at notify_path (NULL:
 * none is ours). Children of ours it does not name are stopped.
 */
gboolean selfupgrade_take_state(struct upgrade_state *h,
				const char *notify_path);
/* A waiting client this image cannot answer (no control socket): told
 * at once, closed. */
void selfupgrade_refuse_waiter(int fd);
