/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding haproxy and starting it as a direct child of the wrapper, the way
 * the 1.x wrapper located it, with a clean slate: default signal handling,
 * empty signal mask, stdio only, and none of the variables that would make
 * a fresh haproxy believe it is a reload or a master-worker child.
 */
#pragma once

#include <glib.h>

/* Exit statuses, as a shell reports a command it could not run. */
#define EXIT_HAPROXY_NOT_EXECUTABLE 126
#define EXIT_HAPROXY_NOT_FOUND      127

/*
 * Which haproxy to run. override (--haproxy=) wins: a path, or a bare name
 * looked up in PATH. Else the historic rule on self_path (the wrapper's own
 * executable): "<X>-systemd-wrapper" runs "<X>", else "haproxy" beside it,
 * else HAPROXY_FALLBACK. The first candidate that exists is taken; when none
 * does, the error names every path tried. Called for every generation, so a
 * package upgrade followed by a reload runs the new haproxy.
 */
gchar *haproxy_locate(const char *override, const char *self_path,
		      GError **error);

/* The environment of every haproxy child: ours minus the scrubbed names. */
GStrv haproxy_environ(void);
/* The same, but keeping NOTIFY_SOCKET: for the haproxy -Ws that replaces
 * the wrapper and becomes the service's main process. */
GStrv haproxy_environ_for_handoff(void);

/* Spawn argv[0] with argv, not reaped (the caller adds a child watch).
 * notify_socket, when not NULL, is the child's NOTIFY_SOCKET (-Ws);
 * stderr_fd, when not -1, its stderr (else ours). */
gboolean haproxy_spawn(char *const *argv, const char *notify_socket,
		       int stderr_fd, GPid *pid, GError **error);

/* Replace the wrapper by haproxy (one-shot commands like -c, -v); only
 * returns on failure, with the exit status to use. */
int haproxy_exec(char *const *argv);
