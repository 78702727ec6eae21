/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters the status shows that no other owner keeps: the
 * supervisor's, kept across our own exec (wrapper/selfupgrade/selfupgrade.h). The
 * reload counters are the reload machine's (wrapper/reloader.h).
 */
#pragma once

#include <glib.h>

struct metrics {
	guint takeovers;	/* instances taken over at the first start */
	guint restarts_adopted;	/* haproxy restarted by hand, adopted */
	guint adoptions;	/* generations taken back after our exec */
};
