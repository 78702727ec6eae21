/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off to upstream's unit: the wrapper replaces itself, same pid,
 * by "haproxy -Ws <args> -sf <live pids>", once the haproxy is known to
 * have master-worker mode and to accept the configuration. Not the
 * self-upgrade (wrapper/selfupgrade/selfupgrade.h).
 */
#pragma once

#include <glib.h>

#include "wrapper/control.h"

struct handoff;
struct supervisor;

/* sv: its owner (the command line of -Ws from the launcher, whether it
 * may run now, the clients of reloads asked for meanwhile, the STATUS=
 * told again when the exec fails); image_path: our own file, beside
 * which haproxy may be. */
struct handoff *handoff_new(struct supervisor *sv, const char *image_path);
void handoff_free(struct handoff *h);

/* --handoff: refused while anything else runs, else checked, then the
 * exec; client hears how it went. */
void handoff_request(struct handoff *h, struct control_client *client);
/* A stop: a hand-off under way is abandoned, its client told. */
void handoff_abandon(struct supervisor *sv);
