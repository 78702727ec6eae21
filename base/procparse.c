/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The parsers of untrusted /proc content (stat, cmdline, status): bytes in,
 * no I/O. */
#include "base/proc.h"

#include <string.h>

/* The next run of non-space bytes in [*p, end), advancing *p past it. */
static gboolean next_token(const char **p, const char *end, const char **tok,
			   gsize *len)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	*tok = s;
	while (s < end && *s != ' ' && *s != '\n')
		s++;
	*len = (gsize)(s - *tok);
	*p = s;
	return *len > 0;
}

/* A decimal token, optionally negative, fitting a gint64. */
static gboolean token_to_int64(const char *tok, gsize len, gint64 *v)
{
	gboolean neg = len > 0 && tok[0] == '-';
	guint64 acc = 0;

	if (neg) {
		tok++;
		len--;
	}
	/* 19 digits always fit a gint64: no overflow check needed. */
	if (len == 0 || len > 19)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isdigit(tok[i]))
			return FALSE;
		acc = acc * 10 + (guint64)(tok[i] - '0');
	}
	if (acc > G_MAXINT64)
		return FALSE;
	*v = neg ? -(gint64)acc : (gint64)acc;
	return TRUE;
}

static gboolean token_to_pid(const char *tok, gsize len, GPid *pid)
{
	gint64 v;

	if (!token_to_int64(tok, len, &v) || v < 0 || v > G_MAXINT)
		return FALSE;
	*pid = (GPid)v;
	return TRUE;
}

/* Fields after the command name, numbered as in proc(5). */
enum {
	STAT_STATE = 3,
	STAT_PPID = 4,
	STAT_SESSION = 6,
	STAT_START_TIME = 22,
};

gboolean proc_parse_stat(const char *text, gsize len, struct proc_stat *out)
{
	const char *close, *p, *end, *tok;
	struct proc_stat st = { 0 };
	gint64 v;
	gsize n;

	if (!text)
		return FALSE;
	close = memrchr(text, ')', len);
	end = text + len;
	/* The name may hold ")" itself: only the last one closes it. */
	if (!close || !memchr(text, '(', (gsize)(close - text)))
		return FALSE;
	p = memchr(text, '(', (gsize)(close - text)) + 1;
	n = MIN((gsize)(close - p), sizeof(st.comm) - 1);
	memcpy(st.comm, p, n);
	p = close + 1;
	if (!next_token(&p, end, &tok, &n) || n != 1 || !g_ascii_isalpha(*tok))
		return FALSE;
	st.state = *tok;
	for (int field = STAT_STATE + 1; field <= STAT_START_TIME; field++) {
		if (!next_token(&p, end, &tok, &n))
			return FALSE;
		if (field == STAT_PPID && !token_to_pid(tok, n, &st.ppid))
			return FALSE;
		if (field == STAT_SESSION && !token_to_pid(tok, n, &st.session))
			return FALSE;
		if (field == STAT_START_TIME) {
			if (!token_to_int64(tok, n, &v) || v < 0)
				return FALSE;
			st.start_time = (guint64)v;
		}
	}
	*out = st;
	return TRUE;
}

GStrv proc_parse_cmdline(const char *data, gsize len)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	gsize start = 0;

	/* What follows the last argument is padding, not empty arguments. */
	while (len > 0 && data[len - 1] == '\0')
		len--;
	while (start < len && argv->len < PROC_ARGV_MAX) {
		const char *nul = memchr(data + start, '\0', len - start);
		gsize stop = nul ? (gsize)(nul - data) : len;

		g_ptr_array_add(argv, g_strndup(data + start, stop - start));
		start = stop + 1;
	}
	g_ptr_array_add(argv, NULL);
	return (GStrv)g_ptr_array_free(g_steal_pointer(&argv), FALSE);
}

/* The rest of the first line of [text, text + len) that starts with key,
 * as [*value, *stop). */
static gboolean find_line(const char *text, gsize len, const char *key,
			  const char **value, const char **stop)
{
	gsize klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (gsize)(end - p));

		*stop = eol ? eol : end;
		if ((gsize)(*stop - p) > klen && memcmp(p, key, klen) == 0) {
			*value = p + klen;
			return TRUE;
		}
		p = *stop + 1;
	}
	return FALSE;
}

/* "Key:\t<16 hex digits>" at the start of a line of [text, text + len). */
static gboolean find_mask(const char *text, gsize len, const char *key,
			  guint64 *mask)
{
	const char *v, *stop;
	guint64 acc = 0;
	gsize n = 0;

	if (!find_line(text, len, key, &v, &stop))
		return FALSE;
	while (v < stop && (*v == '\t' || *v == ' '))
		v++;
	for (; v < stop && n <= 16; v++, n++) {
		if (!g_ascii_isxdigit(*v))
			break;
		acc = acc << 4 | (guint64)g_ascii_xdigit_value(*v);
	}
	if (v != stop || n == 0 || n > 16)
		return FALSE;
	*mask = acc;
	return TRUE;
}

gboolean proc_parse_sigmasks(const char *text, gsize len,
			     struct proc_sigmasks *out)
{
	struct proc_sigmasks m;

	if (!text || !find_mask(text, len, "SigBlk:", &m.blocked) ||
	    !find_mask(text, len, "SigIgn:", &m.ignored) ||
	    !find_mask(text, len, "SigCgt:", &m.caught))
		return FALSE;
	*out = m;
	return TRUE;
}

/* "Key:\t<4 decimal ids>" at the start of a line of [text, text + len). */
static gboolean find_ids(const char *text, gsize len, const char *key,
			 guint32 ids[4])
{
	const char *v, *stop;
	g_autofree gchar *line = NULL;
	g_auto(GStrv) f = NULL;
	guint n = 0;

	if (!find_line(text, len, key, &v, &stop))
		return FALSE;
	line = g_strndup(v, (gsize)(stop - v));
	f = g_strsplit_set(g_strstrip(line), "\t ", -1);
	for (guint i = 0; f[i]; i++) {
		guint64 id;

		if (!*f[i])
			continue;
		if (n == 4 || !g_ascii_string_to_unsigned(f[i], 10, 0,
							   G_MAXUINT32, &id,
							   NULL))
			return FALSE;
		ids[n++] = (guint32)id;
	}
	return n == 4;
}

gboolean proc_parse_ids(const char *text, gsize len, struct proc_ids *out)
{
	struct proc_ids ids;

	if (!text || !find_ids(text, len, "Uid:", ids.uid) ||
	    !find_ids(text, len, "Gid:", ids.gid))
		return FALSE;
	*out = ids;
	return TRUE;
}
