/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading haproxy's version from "haproxy -v". The banner changed spelling
 * in 2.4 (HA-Proxy -> HAProxy) and may be preceded by warnings, so every
 * line is tried until one parses.
 */
#include <string.h>

#include "legacy/version.h"

/* Larger components are garbage, and capping them rules out overflow. */
#define VERSION_COMPONENT_MAX 999

static const char *const banner_prefixes[] = {
	"HA-Proxy version ",
	"HAProxy version ",
};

static gboolean is_token_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Reads a decimal component at *p, advancing past it. */
static gboolean parse_component(const char **p, const char *end, guint *out)
{
	const char *s = *p;
	guint v = 0;

	if (s >= end || !g_ascii_isdigit(*s))
		return FALSE;
	for (; s < end && g_ascii_isdigit(*s); s++) {
		v = v * 10 + (guint)(*s - '0');
		if (v > VERSION_COMPONENT_MAX)
			return FALSE;
	}
	*p = s;
	*out = v;
	return TRUE;
}

/* "<major>.<minor>[.<patch>]" at the start of the token; the rest is free. */
static gboolean parse_numbers(const char *tok, gsize len,
			      struct haproxy_version *v)
{
	const char *p = tok;
	const char *end = tok + len;

	if (!parse_component(&p, end, &v->major))
		return FALSE;
	if (p >= end || *p != '.')
		return FALSE;
	p++;
	if (!parse_component(&p, end, &v->minor))
		return FALSE;
	v->patch = 0;
	if (p < end && *p == '.' && p + 1 < end && g_ascii_isdigit(p[1])) {
		p++;
		if (!parse_component(&p, end, &v->patch))
			return FALSE;
	}
	return TRUE;
}

static const char *skip_banner_prefix(const char *line)
{
	for (gsize i = 0; i < G_N_ELEMENTS(banner_prefixes); i++) {
		if (g_str_has_prefix(line, banner_prefixes[i]))
			return line + strlen(banner_prefixes[i]);
	}
	return NULL;
}

static gboolean parse_line(const char *line, struct haproxy_version *v)
{
	const char *tok = skip_banner_prefix(line);
	gsize len = 0;

	if (tok == NULL)
		return FALSE;
	while (!is_token_end(tok[len]))
		len++;
	if (len == 0 || !parse_numbers(tok, len, v))
		return FALSE;
	/* The token runs on into the line: copy at most what fits. */
	len = MIN(len, sizeof(v->full) - 1);
	memcpy(v->full, tok, len);
	v->full[len] = '\0';
	return TRUE;
}

gboolean haproxy_version_parse(const char *output, struct haproxy_version *out)
{
	const char *line = output;

	g_return_val_if_fail(out != NULL, FALSE);

	while (line != NULL && *line != '\0') {
		struct haproxy_version v = { 0 };
		const char *nl;

		if (parse_line(line, &v)) {
			*out = v;
			return TRUE;
		}
		nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	return FALSE;
}

enum launch_mode haproxy_version_launch_mode(const struct haproxy_version *v)
{
	return haproxy_version_compare(v, 1, 8, 0) < 0 ? LAUNCH_DS : LAUNCH_DB;
}

static int compare_uint(guint a, guint b)
{
	return (a > b) - (a < b);
}

int haproxy_version_compare(const struct haproxy_version *v, guint major,
			    guint minor, guint patch)
{
	int c = compare_uint(v->major, major);

	if (c == 0)
		c = compare_uint(v->minor, minor);
	if (c == 0)
		c = compare_uint(v->patch, patch);
	return c;
}
