/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: what /proc says of processes the wrapper did not
 * start, whose names and arguments anyone may choose: stat (a command
 * name holding ")" and spaces), cmdline (any bytes) and status masks.
 */
#include "base/proc.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

static void check_cmdline(const char *buf, size_t size)
{
	g_auto(GStrv) argv = proc_parse_cmdline(buf, size);
	gsize total = 0;
	guint n = g_strv_length(argv);

	FUZZ_CHECK(n <= PROC_ARGV_MAX);
	/* Every argument is a piece of the input, in order. */
	for (guint i = 0; i < n; i++) {
		gsize len = strlen(argv[i]);

		FUZZ_CHECK(total + len <= size);
		FUZZ_CHECK(memcmp(buf + total, argv[i], len) == 0);
		total += len + 1;
	}
	/* Trailing empty strings (padding) are dropped. */
	if (n)
		FUZZ_CHECK(argv[n - 1][0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct proc_stat st;
	struct proc_sigmasks masks;

	if (proc_parse_stat(buf, size, &st))
		FUZZ_CHECK(st.ppid >= 0 && st.session >= 0);
	check_cmdline(buf, size);
	proc_parse_sigmasks(buf, size, &masks);
	return 0;
}
