/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The witness: a tiny child of the wrapper whose pid is appended to the
 * "-sf" list of every new haproxy generation. haproxy's own protocol then
 * tells us, on every version from 1.5 to 3.x, what happened to the start:
 * after all listeners are bound it sends SIGUSR1 (SIGTERM with -st) to the
 * listed pids; while an address is in use it sends SIGTTOU, and when it
 * gives up SIGTTIN. The witness forwards each signal and its sender's pid
 * over a pipe. No sleeping, no pidfile polling, no HAPROXY_WRAPPER_FD.
 */
#pragma once

#include <glib.h>

typedef void (*witness_fn)(int signo, GPid sender, gpointer data);

struct witness {
	GPid pid;		/* 0 when not running */
	int fd;			/* read end of the report pipe */
	guint fd_source;
	guint child_source;
	witness_fn report;
	gpointer data;
};

/* Fork a witness. The control signals must be blocked in the calling
 * thread (they are, from the start of main). */
gboolean witness_start(struct witness *w, witness_fn report, gpointer data,
		       GError **error);

/* Deliver the reports already in the pipe, now. */
void witness_flush(struct witness *w);

/* Kill and forget the witness (it is reaped by its child watch). */
void witness_stop(struct witness *w);
