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

/*
 * For a log line or status text: valid UTF-8 with no control character.
 * A backslash becomes "\\", \n \r \t their C escapes, any other control
 * character (C0, DEL, C1) "\xNN" or "\uNNNN", a byte that is not UTF-8
 * "\xNN", and a leading '<' "\x3c" (no journald priority). At most
 * max_chars characters of text are kept (0: all), "..." marking a cut.
 */
gchar *escape_untrusted(const char *text, gsize max_chars);

/* text as a JSON string, quotes included, appended to out: '"' and '\\'
 * escaped, control characters (C0, DEL, C1) as \uNNNN, bytes that are not
 * UTF-8 as \ufffd. Always valid JSON, whatever text holds. */
void escape_json_append(GString *out, const char *text);
