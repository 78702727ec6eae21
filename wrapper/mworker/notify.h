/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The private NOTIFY_SOCKET a master-worker haproxy (-Ws) reports to: a
 * datagram socket in the runtime directory, each message handed on with
 * the sender's pid as the kernel vouches for it (SCM_CREDENTIALS).
 */
#pragma once

#include <glib.h>

#include "legacy/mworker.h"

typedef void (*mw_notify_fn)(const struct mw_message *m, GPid sender,
			     gpointer data);

struct mw_notify;

struct mw_notify *mw_notify_listen(const char *path, mw_notify_fn fn,
				   gpointer data, GError **error);

/* A socket handed over by the previous image of the wrapper (its state,
 * wrapper/selfupgrade/state.h, names it). NULL when fd is not a datagram
 * socket bound to path. */
struct mw_notify *mw_notify_adopt(int fd, const char *path, mw_notify_fn fn,
				  gpointer data);

const char *mw_notify_path(const struct mw_notify *n);

/* The descriptor, made inheritable for the self upgrade's exec; and
 * private again when that exec failed. */
int mw_notify_upgrade_fd(struct mw_notify *n);
void mw_notify_reclaim_fd(struct mw_notify *n);

/* Is fd a datagram socket bound to path (one a previous image had)? */
gboolean mw_notify_fd_is(int fd, const char *path);

void mw_notify_free(struct mw_notify *n);
