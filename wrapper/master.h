/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link to a master-worker haproxy (-Ws): its private NOTIFY_SOCKET,
 * and a reload of the serving master, which reloads itself in place on
 * SIGUSR2. The link owns the socket and the reload's evidence (the
 * master's children before the signal, the wait until it can take it);
 * the supervisor says what a master is to it and hears what happened
 * through struct master_link_ops.
 */
#pragma once

#include <glib.h>

#include "wrapper/generation.h"

struct master_link;

/* What a master of ours is to the supervisor, when it speaks. */
enum master_role {
	MASTER_OTHER,		/* draining: its words change nothing */
	MASTER_STARTING,	/* its first load decides its start */
	MASTER_SERVING,		/* serving; a load now is not ours */
	MASTER_RELOADING,	/* serving, our SIGUSR2 sent: its verdict */
};

struct master_link_ops {
	/* A live master of ours with that pid, or NULL. */
	struct generation *(*find)(void *ctx, GPid pid);
	enum master_role (*role)(void *ctx, const struct generation *g);
	/* A starting master loaded: g serves (its workers counted). */
	void (*ready)(void *ctx, struct generation *g);
	/* Our SIGUSR2 went out: its verdict is awaited. */
	void (*signalled)(void *ctx);
	/* The reload loaded: fresh workers serve, the others retired. */
	void (*loaded)(void *ctx, struct generation *g, const GArray *fresh);
	/* The reload failed: the old workers serve on. */
	void (*failed)(void *ctx, const char *msg);
	/* Workers were retired: the bound on draining ones applies. */
	void (*retired)(void *ctx);
};

/* drain_timeout_s: how long retired workers may drain (0: no bound). */
struct master_link *master_link_new(const struct master_link_ops *ops,
				    void *ctx, guint drain_timeout_s);
void master_link_free(struct master_link *m);

/* The notify socket's path, bound under rundir on first use (NULL: no
 * runtime directory of our own). */
const char *master_link_socket(struct master_link *m, const char *rundir,
			       GError **error);
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

/* "1 2 3", for the log. */
gchar *pids_text(const GArray *pids);
