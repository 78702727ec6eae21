/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * haproxy's master-worker mode (-Ws, haproxy >= 1.8) as the wrapper drives
 * it: when to choose it, and what a master says on the NOTIFY_SOCKET we
 * give it. Pure: no I/O.
 *
 * Every version ends a load, good or bad, with READY=1. Only from 2.7 does
 * a STATUS= line tell a failed reload from a good one; before that, the
 * caller must look at the master's workers (a new one means it loaded).
 */
#pragma once

#include <glib.h>

#include "legacy/args.h"
#include "legacy/version.h"

enum mw_policy {
	MW_POLICY_AUTO,	/* when the configuration needs it */
	MW_POLICY_ON,
	MW_POLICY_OFF,
};

/* What a configuration says that bears on the launch mode. */
struct config_hints {
	guint nbproc;		/* 0: not set */
	gboolean master_worker;	/* the "master-worker" keyword */
	gboolean noreuseport;	/* the "noreuseport" keyword */
	/* Who haproxy becomes once bound: the global section's "user NAME"
	 * or "uid N" (the last one wins), "group NAME" or "gid N". */
	gchar user[33];		/* "" when not set, or too long a name */
	gboolean uid_set;
	guint32 uid;
	gchar group[33];
	gboolean gid_set;
	guint32 gid;
};

/*
 * The launch mode for this haproxy: -Ds below 1.8; then -Ws when asked, or
 * under "auto" when the configuration needs it (nbproc > 1 before 2.5,
 * since -db forces one process; or the master-worker keyword); -db
 * otherwise. *why, when not NULL, says why the choice is not the one the
 * policy names alone ("" when there is nothing to say).
 */
enum launch_mode mw_choose_mode(const struct haproxy_version *v,
				enum mw_policy policy,
				const struct config_hints *hints,
				const char **why);

/*
 * Why this haproxy cannot run what the command line asks, or NULL: -S (a
 * master CLI) needs haproxy >= 1.9, where masters have one.
 */
const char *mw_version_refusal(const struct haproxy_version *v,
			       const struct wrapper_args *a);

/* One datagram, "KEY=value" lines. */
struct mw_message {
	gboolean ready;
	gboolean reloading;
	gboolean stopping;
	GPid mainpid;		/* 0: not given */
	gchar *status;		/* NULL: not given */
};

/* FALSE on anything that is not a notify message (NUL, no '='). */
gboolean mw_message_parse(const char *data, gsize len, struct mw_message *out);
void mw_message_clear(struct mw_message *m);

enum mw_verdict {
	MW_VERDICT_NONE,	/* not the end of a load */
	MW_VERDICT_LOADED,
	MW_VERDICT_FAILED,
	MW_VERDICT_ASK_WORKERS,	/* the end of a load, but which end: only
				 * a new worker tells (haproxy < 2.7) */
};

enum mw_verdict mw_message_verdict(const struct mw_message *m);
