/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The words of a configuration line: see legacy/cfgwords.h. */
#include "legacy/cfgwords.h"

#include <string.h>

G_DEFINE_QUARK(config-words-error-quark, config_words_error)

enum quoting { UNQUOTED, DOUBLE, SINGLE };

/* A line being cut into words. */
struct reader {
	const char *p, *end;
	const char *const *env;
	GPtrArray *words;	/* gchar * */
	GString *word;		/* NULL: between words */
	GError **error;
};

static gboolean is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static gboolean fail(struct reader *r, const char *what)
{
	g_set_error(r->error, CONFIG_WORDS_ERROR, 0, "%s", what);
	return FALSE;
}

/* The word in progress, begun if it was not. */
static GString *word(struct reader *r)
{
	if (!r->word)
		r->word = g_string_new(NULL);
	return r->word;
}

static void end_word(struct reader *r)
{
	if (r->word)
		g_ptr_array_add(r->words, g_string_free(r->word, FALSE));
	r->word = NULL;
}

/* After a backslash (r->p past it), in q: appends what it stands for. */
static gboolean escape(struct reader *r, enum quoting q)
{
	static const char itself[] = "\\\"'# \t";
	char c;
	gint hi, lo;

	if (r->p == r->end) {
		g_string_append_c(word(r), '\\');
		return TRUE;
	}
	c = *r->p++;
	if (c == 't' || c == 'r' || c == 'n') {
		g_string_append_c(word(r), c == 't' ? '\t' : c == 'r' ? '\r'
								 : '\n');
	} else if (c == 'x') {
		hi = r->end - r->p >= 2 ? g_ascii_xdigit_value(r->p[0]) : -1;
		lo = hi >= 0 ? g_ascii_xdigit_value(r->p[1]) : -1;
		if (lo < 0)
			return fail(r, "an incomplete \\x sequence");
		g_string_append_c(word(r), (char)(hi << 4 | lo));
		r->p += 2;
	} else if ((c && strchr(itself, c)) || (c == '$' && q == DOUBLE)) {
		g_string_append_c(word(r), c);
	} else {
		g_string_append_c(word(r), '\\');
		g_string_append_c(word(r), c);
	}
	return TRUE;
}

static gboolean name_start(char c)
{
	return g_ascii_isalpha(c) || c == '_';
}

static gboolean name_char(char c)
{
	return g_ascii_isalnum(c) || c == '_';
}

/* value split at blanks: its first piece ends the word in progress, the
 * last one begins the next. */
static void append_split(struct reader *r, const char *value)
{
	g_auto(GStrv) pieces = g_strsplit_set(value, " \t", -1);
	gboolean first = TRUE;

	for (guint i = 0; pieces[i]; i++) {
		if (!*pieces[i])
			continue;
		if (!first)
			end_word(r);
		g_string_append(word(r), pieces[i]);
		first = FALSE;
	}
}

/* After a '$' in double quotes (r->p past it): appends the variable's
 * value. */
static gboolean variable(struct reader *r)
{
	gboolean braced = r->p < r->end && *r->p == '{';
	const char *name, *def = NULL, *close = NULL;
	g_autofree gchar *key = NULL;
	const char *value;
	gboolean split = FALSE;

	if (braced)
		r->p++;
	name = r->p;
	if (r->p == r->end || !name_start(*r->p))
		return fail(r, "a variable without a name");
	while (r->p < r->end && name_char(*r->p))
		r->p++;
	key = g_strndup(name, r->p - name);
	if (braced) {
		close = memchr(r->p, '}', r->end - r->p);
		if (!close)
			return fail(r, "a variable's brace left open");
		if (*r->p == '-')
			def = r->p + 1;
		else if (close - r->p == 3 && memcmp(r->p, "[*]", 3) == 0)
			split = TRUE;
		else if (r->p != close)
			return fail(r, "a variable's brace left open");
		r->p = close + 1;
	}
	value = g_environ_getenv((gchar **)r->env, key);
	if (!value && def) {
		g_string_append_len(word(r), def, close - def);
		return TRUE;
	}
	if (split && value)
		append_split(r, value);
	else
		g_string_append(word(r), value ? value : "");
	return TRUE;
}

/* One byte (or sequence) of the line in q; FALSE on an error. */
static gboolean step(struct reader *r, enum quoting *q)
{
	char c = *r->p++;

	if (*q == SINGLE) {
		if (c == '\'')
			*q = UNQUOTED;
		else
			g_string_append_c(word(r), c);
		return TRUE;
	}
	if (c == '\\')
		return escape(r, *q);
	if (*q == DOUBLE) {
		if (c == '"')
			*q = UNQUOTED;
		else if (c == '$')
			return variable(r);
		else
			g_string_append_c(word(r), c);
		return TRUE;
	}
	if (is_blank(c))
		end_word(r);
	else if (c == '"' || c == '\'') {
		*q = c == '"' ? DOUBLE : SINGLE;
		word(r);	/* "" is a word, an empty one */
	} else
		g_string_append_c(word(r), c);
	return TRUE;
}

GStrv config_line_words(const char *line, gsize len, const char *const *env,
			GError **error)
{
	const char *nl = memchr(line, '\n', len);
	struct reader r = {
		.p = line,
		.end = nl ? nl : line + len,
		.env = env,
		.words = g_ptr_array_new_with_free_func(g_free),
		.error = error,
	};
	enum quoting q = UNQUOTED;
	gboolean ok = TRUE;

	while (ok && r.p < r.end && !(q == UNQUOTED && *r.p == '#'))
		ok = step(&r, &q);
	if (ok && q != UNQUOTED)
		ok = fail(&r, "a quote left open");
	end_word(&r);
	if (!ok) {
		g_ptr_array_unref(r.words);
		return NULL;
	}
	g_ptr_array_add(r.words, NULL);
	return (GStrv)g_ptr_array_free(r.words, FALSE);
}
