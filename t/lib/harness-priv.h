/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the harness's own files, not by tests. */
#pragma once

#include <glib.h>

static inline gint64 deadline_of(guint timeout_ms)
{
	return g_get_monotonic_time() + (gint64)timeout_ms * 1000;
}

/* What is left of deadline, in ms, rounded up (poll's timeout). */
static inline int ms_left(gint64 deadline)
{
	gint64 left = deadline - g_get_monotonic_time();

	return left <= 0 ? 0 : (int)(left / 1000) + 1;
}
