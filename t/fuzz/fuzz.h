/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the libFuzzer targets: a GLib critical or warning is a bug in
 * the code under test (a g_return_if_fail that fired), so it must crash
 * the run like any sanitizer report, and an invariant that does not hold
 * aborts with a message saying which.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_glib_fatal(void)
{
	g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

/* g_assert() may be compiled out with G_DISABLE_ASSERT; this may not. */
#define FUZZ_CHECK(cond)						\
	do {								\
		if (G_UNLIKELY(!(cond))) {				\
			g_printerr("%s:%d: invariant failed: %s\n",	\
				   __FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* memcmp() of two GArrays of the same element type; data may be NULL. */
static inline gboolean fuzz_arrays_equal(const GArray *a, const GArray *b,
					 gsize elt)
{
	return a->len == b->len &&
	       (a->len == 0 || memcmp(a->data, b->data, a->len * elt) == 0);
}

/* The input as a C string: what a parser reading text would get. */
static inline gchar *fuzz_cstring(const uint8_t *data, size_t size)
{
	gchar *s = g_malloc(size + 1);

	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
