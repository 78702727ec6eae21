/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signals reach the wrapper through a signalfd, never through a handler:
 * they are blocked from the first line of main(), so a signal that arrives
 * while the wrapper is busy, or while it re-executes itself, stays pending
 * in the kernel until it is read. Nothing is lost and nothing runs in a
 * signal context.
 */
#pragma once

#include <glib.h>
#include <sys/signalfd.h>

typedef void (*signal_fn)(const struct signalfd_siginfo *si, gpointer data);

/* Block the signals the wrapper handles, ignore SIGPIPE. Call before any
 * thread exists (GLib starts one lazily). */
void signals_block(void);

/* Undo signals_block()'s mask (SIGPIPE stays ignored): for the client
 * commands, which Ctrl-C and timeout(1) must be able to stop. */
void signals_unblock(void);

/* Deliver blocked signals to fn from the main loop. */
gboolean signals_watch(signal_fn fn, gpointer data, GError **error);
