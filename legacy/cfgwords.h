/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The words of a line of haproxy's configuration, read as haproxy 1.6 and
 * later read them, from black-box runs of 1.7.0, 1.8.30, 2.0.0, 2.6, 2.8.0,
 * 3.0.0 and 3.4.0 (haproxy 1.5 knows the backslash alone: a quote is a
 * character there, and a line quoted in a way that matters would not have
 * started it):
 *  - blanks (space, tab, CR) separate words; '#' outside quotes ends the
 *    line, even inside a word;
 *  - a backslash outside single quotes: "\t", "\r", "\n" for those
 *    controls, "\xHH" for that byte, a backslash, a quote, '#' or a blank
 *    for itself; "\$" for "$" inside double quotes only; before any other
 *    character (or at the end) it stays;
 *  - double quotes, anywhere in a word, group what is between them:
 *    there, "$NAME" and "${NAME}" are NAME's value ('_' or a letter, then
 *    letters, digits, '_'; unset: empty), "${NAME-DEFAULT}" its value or
 *    DEFAULT when unset, "${NAME[*]}" its value split into words at
 *    blanks (2.6 and later read these two; 2.0 and older refuse the line);
 *  - single quotes group what is between them as it is.
 * haproxy refuses a line with a quote left open, a '$' without a name, a
 * brace left open or a bad "\x": so does this.
 */
#pragma once

#include <glib.h>

#define CONFIG_WORDS_ERROR (config_words_error_quark())
GQuark config_words_error_quark(void);

/*
 * line's words (bytes, not necessarily UTF-8; len bytes, up to its first
 * newline), variables taken from env ("NAME=value" strings, as
 * g_environ_getenv() reads them; NULL: none set). NULL with error when
 * haproxy would refuse the line.
 */
GStrv config_line_words(const char *line, gsize len, const char *const *env,
			GError **error);
