/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a line haproxy writes on its stderr says: its level tag
 * ("[ALERT]", "[WARNING]", "[NOTICE]", ...), the pid it names, and the
 * words after them. Every series writes "[TAG] ... (PID) : words": 1.x
 * with a day/time between ("[ALERT] 332/055613 (1591) : parsing ..."),
 * 2.x and 3.x padded ("[ALERT]    (1591) : config : parsing ..."). A
 * "log stderr" target writes syslog lines ("<134>..."), whose priority
 * is their own.
 */
#pragma once

#include <glib.h>

struct ha_line {
	int priority;		/* LOG_ERR for [ALERT], ...; LOG_INFO untagged */
	gboolean alert;		/* an [ALERT] (or [EMERG]) line */
	GPid pid;		/* 0: the line names none */
	const char *words;	/* into the line: after the tag and the pid */
};

/* Never fails: a line it does not know is LOG_INFO, its words all of it. */
void ha_line_parse(const char *line, struct ha_line *out);
