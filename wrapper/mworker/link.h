/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link to a master-worker haproxy (-Ws): its private NOTIFY_SOCKET,
 * and a reload of the serving master, which reloads itself in place on
 * SIGUSR2. The link owns the socket and the reload's evidence (the
 * master's children before the signal, the wait until it can take it);
 * what a master is to it comes from the generation table and the reload
 * machine, what happened goes to the machine.
 */
#pragma once

#include <glib.h>

#include "wrapper/gentable.h"
#include "wrapper/generation.h"
#include "wrapper/hastderr.h"
#include "wrapper/reloader.h"
#include "wrapper/rundir-use.h"

struct master_link;

enum master_link_report {
	MASTER_SERVES,		/* a master's first load: g serves */
	MASTER_RELOADED,	/* the serving master g loaded again */
};

typedef void (*master_link_report_fn)(enum master_link_report what,
				      struct generation *g, gpointer data);

/* gt, rl: the masters and the machine it posts to; rt: the runtime
 * directory for the socket; hastderr: haproxy's stderr, for a failed
 * load's alert; max_old_workers, drain_timeout_s: the drain's bounds. */
struct master_link *master_link_new(struct gen_table *gt, struct reloader *rl,
				    const struct rundir_use *rt,
				    struct ha_stderr *hastderr,
				    gint max_old_workers,
				    guint drain_timeout_s,
				    master_link_report_fn report,
				    gpointer data);
void master_link_free(struct master_link *m);

/* The notify socket's path, bound under the runtime directory on first
 * use (NULL: no runtime directory of our own). */
const char *master_link_socket(struct master_link *m, GError **error);
/* The socket handed over by our previous image, bound at path. */
gboolean master_link_adopt(struct master_link *m, int fd, const char *path);
/* The socket, inheritable for our exec (-1: none); private again. */
int master_link_upgrade_fd(struct master_link *m);
void master_link_reclaim_fd(struct master_link *m);

/* Reload the serving master g (SIGUSR2) into haproxy version; hard: its
 * old workers get SIGTERM once the new ones serve. */
void master_link_reload(struct master_link *m, struct generation *g,
			const char *version, gboolean hard);
/* The reload ended another way (timeout, stop, the master's exit). */
void master_link_abandon(struct master_link *m);

