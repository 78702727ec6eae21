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

#include "wrapper/reloader.h"

struct selfupgrade;
struct supervisor;

/* sv: its owner (--self-upgrade, and what crosses the exec and is taken
 * back: the table, the waiting clients, a master's notify socket, the
 * counters, the life cycle the new image resumes); orig_argv: our
 * command line, for the exec. */
struct selfupgrade *selfupgrade_new(struct supervisor *sv, char **orig_argv);
void selfupgrade_free(struct selfupgrade *u);

/* The running wrapper's file (NULL if /proc/self/exe is unreadable). */
const char *selfupgrade_image_path(const struct selfupgrade *u);

/* Does this reload upgrade the wrapper first? */
enum upgrade_choice selfupgrade_wanted(struct supervisor *sv);
/* The new image's dry run, then its exec; RE_UPGRADE_REFUSED otherwise. */
void selfupgrade_begin(struct supervisor *sv);
/* A stop: a dry run under way is cancelled, unanswered. */
void selfupgrade_cancel(struct selfupgrade *u);

/* In the new image: take back what the old one handed over (FALSE:
 * nothing, or nothing serving: start anew). Generations that are our
 * children only, waiting clients that are sockets only; children of ours
 * it does not name are stopped; the reload goes on (RE_RESUME). */
gboolean selfupgrade_restore(struct selfupgrade *u);
