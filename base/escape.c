/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/escape.h"

#include <string.h>

/* The next character of [p, end): its code point, or -1 for a byte that
 * does not start valid UTF-8; *len its length in bytes. */
static gint32 next_char(const char *p, const char *end, gsize *len)
{
	gunichar c = g_utf8_get_char_validated(p, end - p);

	if (c == (gunichar)-1 || c == (gunichar)-2) {
		*len = 1;
		return -1;
	}
	*len = (gsize)(g_utf8_next_char(p) - p);
	return (gint32)c;
}

static gboolean is_control(gint32 c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

static void append_log_char(GString *out, const char *p, gsize len,
			    gint32 c)
{
	if (c < 0)
		g_string_append_printf(out, "\\x%02x", (guint8)*p);
	else if (c == '\\')
		g_string_append(out, "\\\\");
	else if (c == '\n')
		g_string_append(out, "\\n");
	else if (c == '\r')
		g_string_append(out, "\\r");
	else if (c == '\t')
		g_string_append(out, "\\t");
	else if (c < 0x80 && is_control(c))
		g_string_append_printf(out, "\\x%02x", (guint)c);
	else if (is_control(c))
		g_string_append_printf(out, "\\u%04x", (guint)c);
	else
		g_string_append_len(out, p, (gssize)len);
}

gchar *escape_untrusted(const char *text, gsize max_chars)
{
	const char *p = text, *end = text + strlen(text);
	GString *out = g_string_sized_new(end - p);
	gsize n = 0;

	/* A line that starts with "<N>" sets its journald priority. */
	if (*p == '<') {
		g_string_append(out, "\\x3c");
		p++;
		n++;
	}
	while (p < end) {
		gsize len;
		gint32 c;

		if (max_chars && n == max_chars) {
			g_string_append(out, "...");
			break;
		}
		c = next_char(p, end, &len);
		append_log_char(out, p, len, c);
		p += len;
		n++;
	}
	return g_string_free(out, FALSE);
}

gchar *escape_json_controls(const char *json)
{
	const char *p = json, *end = json + strlen(json);
	GString *out = g_string_sized_new(end - p);

	while (p < end) {
		gsize len;
		gint32 c = next_char(p, end, &len);

		if (c >= 0 && is_control(c))
			g_string_append_printf(out, "\\u%04x", (guint)c);
		else
			g_string_append_len(out, p, (gssize)len);
		p += len;
	}
	return g_string_free(out, FALSE);
}
