/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text that another process chose (its command name, executable path,
 * command line, a path read from /proc) made safe to print. An
 * unprivileged user names a binary "t\n<0>haproxy-systemd-wrapper: ..."
 * and, printed raw, it becomes a line of ours at emergency priority in the
 * journal. The base layer: no dependency on legacy/, migrate/ or wrapper/.
 */
#pragma once

#include <glib.h>

/* Longest piece of untrusted text quoted in a log line's reason: enough
 * to recognise it, short enough to keep the line readable. */
#define ESCAPE_QUOTE_MAX 200

/*
 * For a log line or status text: valid UTF-8 with no control character.
 * A backslash becomes "\\", \n \r \t their C escapes, any other control
 * character (C0, DEL, C1) "\xNN" or "\uNNNN", a byte that is not UTF-8
 * "\xNN", and a leading '<' "\x3c" (no journald priority). At most
 * max_chars characters of text are kept (0: all), "..." marking a cut.
 */
gchar *escape_untrusted(const char *text, gsize max_chars);

/*
 * A compact JSON document (no newline or other whitespace between its
 * tokens) with every control character still raw in it (C0, DEL, C1) as
 * \uNNNN. Outside its strings such a document has none, so only strings
 * change: json-glib 1.6 writes U+001F and the C1 controls as they are,
 * and a strict parser rejects a raw U+001F.
 */
gchar *escape_json_controls(const char *json);
