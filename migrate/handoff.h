/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off to upstream's unit: the wrapper replaces itself, same pid,
 * by "haproxy -Ws <args> -sf <live pids>", once the haproxy is known to
 * have master-worker mode and to accept the configuration. Not the
 * self-upgrade (wrapper/selfupgrade/selfupgrade.h).
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "wrapper/control.h"
#include "wrapper/gentable.h"
#include "wrapper/options.h"
#include "wrapper/reloader.h"
#include "wrapper/rundir-use.h"

struct handoff;
struct launcher;
struct replacement;

enum handoff_report {
	HANDOFF_EXEC_FAILED,	/* the wrapper goes on: STATUS= again */
};

typedef void (*handoff_report_fn)(enum handoff_report what, gpointer data);

/* args, opts: haproxy's command line and where it is; gt: the serving
 * generation (its listeners to the fd store again if the exec fails);
 * rl: the machine (the clients of reloads asked for meanwhile); rt: the
 * runtime directory, control socket and fd store; launcher: the command
 * line of -Ws; replacement: an adopted haproxy refuses it; image_path:
 * our own file, beside which haproxy may be. */
struct handoff *handoff_new(const struct wrapper_args *args,
			    const struct wrapper_options *opts,
			    struct gen_table *gt, struct reloader *rl,
			    const struct rundir_use *rt,
			    struct launcher *launcher,
			    struct replacement *replacement,
			    const char *image_path,
			    handoff_report_fn report, gpointer data);
void handoff_free(struct handoff *h);

/* --handoff: refused while anything else runs (running: the wrapper
 * neither starts nor stops), else checked, then the exec; client hears
 * how it went. */
void handoff_request(struct handoff *h, struct control_client *client,
		     gboolean running);
/* A stop: a hand-off under way is abandoned, its client told. */
void handoff_abandon(struct handoff *h);
