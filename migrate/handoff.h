/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off to upstream's unit: the wrapper replaces itself, same pid,
 * by "haproxy -Ws <args> -sf <live pids>", once the haproxy is known to
 * have master-worker mode and to accept the configuration. Not the
 * self-upgrade (wrapper/selfupgrade/selfupgrade.h). It takes what it needs from the owners'
 * handles.
 */
#pragma once

#include <glib.h>

#include "wrapper/fdstore/fdstore.h"

#include "legacy/args.h"
#include "wrapper/control.h"
#include "wrapper/lifecycle.h"
#include "wrapper/reloader.h"
#include "migrate/replacement.h"
#include "wrapper/launcher.h"
#include "wrapper/supervisor.h"

struct handoff;
struct status_source;

/* The pointers are the owners', outliving it: the command line of -Ws
 * (the launcher), whether it may run now (the life cycle, the machine,
 * an adopted haproxy), the clients of reloads asked for meanwhile, the
 * STATUS= told again when the exec fails; image_path: our own file,
 * beside which haproxy may be. */
struct handoff *handoff_new(const struct wrapper_args *args,
			    const struct wrapper_options *opts,
			    const struct lifecycle *life,
			    struct reloader *reloader,
			    const struct replacement *replacement,
			    struct launcher *launcher,
			    struct status_source *status,
			    struct fdstore *fdstore,
			    const char *image_path);
void handoff_free(struct handoff *h);

/* --handoff: refused while anything else runs, else checked, then the
 * exec; client hears how it went. */
void handoff_request(struct handoff *h, struct control_client *client);
/* A stop: a hand-off under way is abandoned, its client told. */
void handoff_abandon(struct handoff *h);
