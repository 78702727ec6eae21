/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: pidfile content, which may be stale, truncated or
 * hostile. Checks the contract of pidfile_parse() on any bytes, and that
 * what the wrapper writes (one pid a line) reads back unchanged.
 */
#include <limits.h>

#include "legacy/pidfile.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

static void check_pids(const GArray *pids)
{
	g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);

	FUZZ_CHECK(pids->len <= PIDFILE_MAX_PIDS);
	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);

		FUZZ_CHECK(pid >= 1 && pid <= INT_MAX);
		FUZZ_CHECK(!g_hash_table_contains(seen, GINT_TO_POINTER(pid)));
		g_hash_table_add(seen, GINT_TO_POINTER(pid));
	}
}

/* pidfile_write's format, parsed again: the same pids, nothing invalid. */
static void check_round_trip(const GArray *pids)
{
	g_autoptr(GString) text = g_string_new(NULL);
	g_autoptr(GArray) back = NULL;
	guint invalid = 1;

	for (guint i = 0; i < pids->len; i++)
		g_string_append_printf(text, "%d\n",
				       g_array_index(pids, GPid, i));
	back = pidfile_parse(text->str, text->len, &invalid);
	FUZZ_CHECK(invalid == 0);
	FUZZ_CHECK(fuzz_arrays_equal(back, pids, sizeof(GPid)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GArray) again = NULL;
	guint invalid = G_MAXUINT;

	/* Exactly size bytes: the parser must not read past them. */
	pids = pidfile_parse((const char *)data, size, &invalid);
	FUZZ_CHECK(pids != NULL);
	FUZZ_CHECK(invalid <= size);
	check_pids(pids);
	check_round_trip(pids);
	/* n_invalid may be NULL; the result does not depend on it. */
	again = pidfile_parse((const char *)data, size, NULL);
	FUZZ_CHECK(again->len == pids->len);
	return 0;
}
