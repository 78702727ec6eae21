/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtime directory this supervisor uses, and what it serves there:
 * the control socket, and the listeners fragment with which every
 * generation exposes its listening sockets to the next (-x). How such a
 * directory is named and opened safely is wrapper/rundir.h, which the
 * client commands share. Neither socket is vital: without them the
 * wrapper runs as the 1.x one did, and says so.
 */
#pragma once

#include <glib.h>

#include "wrapper/control.h"

/* The runtime directory in use, and what the supervisor serves there. */
struct rundir_use {
	gchar *dir;
	gboolean ours;		/* no other live wrapper uses it */
	gboolean derived;	/* named after the pidfile under RUNDIR_BASE,
				 * neither --runtime-dir nor systemd's */
	struct control *control;
	gchar *expose_cfg;	/* our -f fragment; NULL: no -x */
	gchar *expose_sock;
	/* Listeners kept in systemd's fd store (the supervisor's). */
	struct fdstore *fdstore;
};

/* 0, or the wrapper's exit status (a directory that is too long or that
 * another user could change is refused). on_control: the control
 * socket's requests. */
int rundir_use_setup(struct rundir_use *rt, const char *runtime_dir,
		  const char *pidfile, gboolean seamless,
		  control_fn on_control, gpointer data);
/* Every haproxy of ours is gone: the sockets and the directory go (with
 * the version cache, if the directory is the one named after the
 * pidfile). */
void rundir_use_teardown(struct rundir_use *rt);
void rundir_use_clear(struct rundir_use *rt);
