/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/protocol.h"

#include <string.h>

static const struct {
	const char *word;
	enum control_command command;
} commands[] = {
	{ "reload", CMD_RELOAD },
	{ "hard-reload", CMD_HARD_RELOAD },
	{ "status", CMD_STATUS },
	{ "status json", CMD_STATUS_JSON },
	{ "status openmetrics", CMD_STATUS_OPENMETRICS },
	{ "handoff", CMD_HANDOFF },
};

static enum control_command invalid(const char **error, const char *why)
{
	*error = why;
	return CMD_INVALID;
}

enum control_command control_parse(const char *buf, gsize len,
				   const char **error)
{
	const char *nl = memchr(buf, '\n', len);
	gsize line_len;

	*error = NULL;
	if (memchr(buf, '\0', nl ? (gsize)(nl - buf) : len))
		return invalid(error, "binary data");
	if (!nl)
		return len > CONTROL_MAX_LINE ? invalid(error, "line too long")
					       : CMD_INCOMPLETE;
	line_len = nl - buf;
	if (line_len > CONTROL_MAX_LINE)
		return invalid(error, "line too long");
	while (line_len && (buf[line_len - 1] == '\r' ||
			    buf[line_len - 1] == ' '))
		line_len--;
	for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
		if (strlen(commands[i].word) == line_len &&
		    memcmp(commands[i].word, buf, line_len) == 0)
			return commands[i].command;
	return invalid(error, "unknown command (reload, hard-reload, status, "
			      "status json, status openmetrics, handoff)");
}
