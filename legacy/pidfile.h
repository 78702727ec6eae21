/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pidfiles: haproxy's format is one decimal pid per line. Content is never
 * trusted: a pid read here is only a candidate, to be verified before use.
 */
#pragma once

#include <glib.h>

/* More pids than this in one pidfile is garbage, not a haproxy. */
#define PIDFILE_MAX_PIDS 1024
/* Larger files are not read at all. */
#define PIDFILE_MAX_BYTES 65536

/*
 * Parse pidfile content (not NUL-terminated: len bytes). Tokens are
 * separated by whitespace; a token is a pid when it is all decimal digits,
 * without sign or leading zero, and 1 <= value <= INT_MAX (pid_t). Anything
 * else is counted in *n_invalid (may be NULL) and skipped. Duplicates are
 * kept once. At most PIDFILE_MAX_PIDS pids are returned, the rest counted
 * invalid. Returns a GArray of GPid, never NULL.
 */
GArray *pidfile_parse(const char *content, gsize len, guint *n_invalid);

/*
 * Read and parse path. A missing file gives an empty array and TRUE;
 * unreadable, oversized or non-regular files give FALSE, an error and
 * *pids NULL; so does a symlink, never followed (another user may have
 * planted it in a shared directory).
 */
gboolean pidfile_read(const char *path, GArray **pids, guint *n_invalid,
		      GError **error);

/* Replace path atomically (temporary file in the same directory, rename)
 * with one pid per line, mode 0644. A symlink at path is replaced, never
 * followed. */
gboolean pidfile_write(const char *path, const GPid *pids, guint n,
		       GError **error);

/*
 * Remove path only if it is still what we wrote: our own regular file
 * (our euid, one link, not a symlink) holding pid and nothing else. TRUE
 * when it was removed.
 */
gboolean pidfile_remove_if_ours(const char *path, GPid pid);
