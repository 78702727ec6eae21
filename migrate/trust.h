/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which foreign haproxy processes this wrapper may treat as its service's
 * (take over, adopt): only those it could have started itself. Another
 * local user can run a haproxy that loads the same configuration path, or
 * write its pid into a pidfile; that process is named and left alone.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "base/proc.h"

/* May a file, directory or socket owned by uid be trusted: is uid root or
 * the wrapper's effective user, so that nobody else can have changed it? */
gboolean trusted_owner(uid_t uid);

/*
 * Could this wrapper have started a process (the top of a foreign
 * instance: a standalone haproxy, a master, a -Ds parent)? Every path
 * that finds foreign instances asks this (migrate/identity.h) before it
 * touches one.
 *
 * The rule, on the real, effective and saved ids of /proc/PID/status:
 *  - its uids are all the wrapper's effective uid: the same user started
 *    it. A master's workers may run as another user (they switched after
 *    binding): only the top is asked, and they are its children.
 *  - or the wrapper runs as root and the process dropped root as the
 *    wrapper's own configuration (config_files) tells haproxy to: its uids
 *    are all the user it names ("user"/"uid"), its gids all the group it
 *    names ("group"/"gid") or, when it names none, the wrapper's egid.
 * Anything else, or ids that cannot be read, is refused. A user or group
 * the configuration names that cannot be resolved here is named in the
 * refusal.
 */

/* Who a haproxy started by this wrapper runs as: the rule above, read
 * once from the configuration files (launch_ids_init). */
struct launch_ids {
	guint32 uid;		/* our euid: what haproxy starts as */
	guint32 gid;
	gboolean drops;		/* as root, to the configured user: */
	guint32 drop_uid;
	gboolean drop_gid_set;
	guint32 drop_gid;
	/* The configuration's user or group that cannot be resolved, as a
	 * phrase for a refusal; NULL: none. */
	gchar *unresolved;
};

void launch_ids_init(struct launch_ids *l, const char *const *config_files);
void launch_ids_clear(struct launch_ids *l);
/* Why a top with ids p is not one this wrapper could have started, for a
 * notice, or NULL. */
gchar *launch_ids_refusal(const struct launch_ids *l,
			  const struct proc_ids *p);
/*
 * Could a process with ids p belong to a haproxy this wrapper started,
 * as its top or one of its workers: are its real, effective and saved
 * uids each ours or the user the configuration drops to? A look at the
 * owner that costs no allocation, before a command line is read.
 */
gboolean launch_ids_may_own(const struct launch_ids *l,
			    const struct proc_ids *p);
/* Is uid ours, or the user the configuration drops to? */
gboolean launch_ids_may_be(const struct launch_ids *l, guint32 uid);
