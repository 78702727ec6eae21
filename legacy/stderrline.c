/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "legacy/stderrline.h"

#include <string.h>
#include <syslog.h>

static const struct {
	const char *tag;
	int priority;
} tags[] = {
	{ "[EMERG]", LOG_EMERG },
	{ "[ALERT]", LOG_ERR },
	{ "[ERR]", LOG_ERR },
	{ "[WARNING]", LOG_WARNING },
	{ "[DIAG]", LOG_WARNING },
	{ "[NOTICE]", LOG_NOTICE },
	{ "[INFO]", LOG_INFO },
	{ "[DEBUG]", LOG_DEBUG },
};

/* "<PRI>" of a syslog line: its severity, the rest after it. */
static gboolean syslog_priority(const char *line, struct ha_line *out)
{
	guint pri = 0, digits = 0;
	const char *p = line + 1;

	if (line[0] != '<')
		return FALSE;
	for (; g_ascii_isdigit(*p) && digits < 3; p++, digits++)
		pri = pri * 10 + (*p - '0');
	if (!digits || *p != '>' || pri > 191)
		return FALSE;
	out->priority = pri & 7;
	out->alert = out->priority <= LOG_ERR;
	out->words = p + 1;
	return TRUE;
}

/* After the tag: an optional "DDD/HHMMSS", then "(PID) : ". */
static void pid_and_words(const char *p, struct ha_line *out)
{
	const char *q;
	guint64 pid;

	while (*p == ' ')
		p++;
	if (g_ascii_isdigit(*p) && (q = strchr(p, ' ')) && q[-1] != ')' &&
	    strspn(p, "0123456789/") == (gsize)(q - p))
		p = q + 1;
	if (*p != '(' || !g_ascii_isdigit(p[1]))
		return;
	pid = g_ascii_strtoull(p + 1, (gchar **)&q, 10);
	if (*q != ')' || pid == 0 || pid > G_MAXINT)
		return;
	out->pid = (GPid)pid;
	q++;
	if (g_str_has_prefix(q, " : "))
		q += 3;
	else
		while (*q == ' ')
			q++;
	out->words = q;
}

void ha_line_parse(const char *line, struct ha_line *out)
{
	*out = (struct ha_line){ .priority = LOG_INFO, .words = line };
	if (syslog_priority(line, out))
		return;
	for (guint i = 0; i < G_N_ELEMENTS(tags); i++) {
		if (!g_str_has_prefix(line, tags[i].tag))
			continue;
		out->priority = tags[i].priority;
		out->alert = tags[i].priority <= LOG_ERR;
		out->words = line + strlen(tags[i].tag);
		while (*out->words == ' ')
			out->words++;
		pid_and_words(out->words, out);
		return;
	}
}
