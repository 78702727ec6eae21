/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A client of haproxy's master CLI (-S, a unix socket), for the tests
 * on the host and through a container's root alike.
 */
#pragma once
#include <glib.h>

/* command (one line, "\n" added) asked at path; all the master answered
 * before it closed, within bound_ms. A refused connection, a read error
 * or no end by then fails the test. */
gchar *t_master_cli(const char *path, const char *command, guint bound_ms);

/* Every connection tried at path during ms is accepted, none refused
 * (as one is while a 2.5-3.0 master executes itself again after a load).
 * FALSE at the first refusal, which the test log says. */
gboolean t_master_cli_accepts_for(const char *path, guint ms);
