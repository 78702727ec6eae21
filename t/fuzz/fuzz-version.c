/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the output of "haproxy -v", whatever a binary named
 * haproxy prints. A version found must be one the banner really holds, at
 * the start of a line, with bounded components and a terminated string.
 */
#include "legacy/version.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

/* "HA-Proxy version <full>" or "HAProxy version <full>" starts a line. */
static gboolean banner_present(const char *text, const char *full)
{
	static const char *const prefixes[] = {
		"HA-Proxy version ",
		"HAProxy version ",
	};

	for (guint i = 0; i < G_N_ELEMENTS(prefixes); i++) {
		g_autofree gchar *banner = g_strconcat(prefixes[i], full, NULL);
		const char *p = text;

		while ((p = strstr(p, banner))) {
			if (p == text || p[-1] == '\n')
				return TRUE;
			p++;
		}
	}
	return FALSE;
}

static void check_version(const char *text, const struct haproxy_version *v)
{
	gsize len = strnlen(v->full, sizeof(v->full));
	enum launch_mode mode = haproxy_version_launch_mode(v);

	FUZZ_CHECK(len > 0 && len < sizeof(v->full));
	FUZZ_CHECK(v->major <= 999 && v->minor <= 999 && v->patch <= 999);
	FUZZ_CHECK(banner_present(text, v->full));
	/* The numbers come from the start of the token. */
	FUZZ_CHECK(g_ascii_isdigit(v->full[0]));
	FUZZ_CHECK(haproxy_version_compare(v, v->major, v->minor,
					   v->patch) == 0);
	FUZZ_CHECK(mode == (haproxy_version_compare(v, 1, 8, 0) < 0
				    ? LAUNCH_DS : LAUNCH_DB));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree gchar *text = fuzz_cstring(data, size);
	struct haproxy_version v;

	memset(&v, 0xa5, sizeof(v));
	if (haproxy_version_parse(text, &v))
		check_version(text, &v);
	return 0;
}
