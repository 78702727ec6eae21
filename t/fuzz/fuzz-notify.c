/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: what a local process may send to the notify socket of
 * a master-worker haproxy, and configuration text scanned for nbproc. A
 * message is refused exactly when it holds a NUL or a line without '=';
 * only READY=1 ends a load; a status is valid UTF-8.
 */
#include <string.h>

#include "legacy/mworker.h"
#include "t/fuzz/fuzz.h"
#include "t/lib/cfgtext.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

static gboolean has_line_without_equals(const char *buf, size_t size)
{
	const char *p = buf, *end = buf + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;

		if (eol > p && !memchr(p, '=', eol - p))
			return TRUE;
		p = eol + 1;
	}
	return FALSE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	gboolean want = size > 0 && !memchr(buf, '\0', size) &&
			!has_line_without_equals(buf, size);
	g_autoptr(GString) cfg = g_string_new("nbproc 7\n");
	struct config_hints hints;
	struct mw_message m;
	enum mw_verdict v;

	FUZZ_CHECK(mw_message_parse(buf, size, &m) == want);
	v = mw_message_verdict(&m);
	FUZZ_CHECK((v == MW_VERDICT_NONE) == !m.ready);
	FUZZ_CHECK(m.mainpid >= 0);
	FUZZ_CHECK(!m.status || g_utf8_validate(m.status, -1, NULL));
	if (m.ready)
		FUZZ_CHECK((v == MW_VERDICT_ASK_WORKERS) == !m.status);
	mw_message_clear(&m);

	/* No line sets an nbproc below 1. */
	g_string_append_len(cfg, buf, size);
	hints = t_config_hints(cfg->str, cfg->len);
	FUZZ_CHECK(hints.nbproc >= 1);
	return 0;
}
