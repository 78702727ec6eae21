/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control protocol's grammar, apart from any socket, so that it can be
 * tested and fuzzed on its own: one command line per connection.
 */
#pragma once

#include <glib.h>

#define CONTROL_MAX_LINE 256

enum control_command {
	CMD_INCOMPLETE,		/* no whole line yet: read more */
	CMD_RELOAD,		/* "reload" */
	CMD_HARD_RELOAD,	/* "hard-reload" */
	CMD_STATUS,		/* "status" */
	CMD_STATUS_JSON,	/* "status json" */
	CMD_STATUS_OPENMETRICS,	/* "status openmetrics" */
	CMD_HANDOFF,		/* "handoff" */
	CMD_INVALID,		/* *error says why */
};

/*
 * What a client has sent so far, len bytes, not NUL-terminated. The line
 * ends at the first "\n"; a "\r" and spaces before it are ignored. A NUL
 * byte, more than CONTROL_MAX_LINE bytes without a newline, or a line that
 * is no command is CMD_INVALID with a static message in *error.
 */
enum control_command control_parse(const char *buf, gsize len,
				   const char **error);
