/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Naming and opening an instance's runtime directory, which holds the
 * control socket, the stats socket through which a new haproxy takes the
 * listening sockets of the old one (-x), and a master-worker haproxy's
 * notify socket; wrapper/rundir-use.h sets up what the running supervisor
 * serves there. One directory per instance, so that several wrappers can
 * share a host. The wrapper and its client commands derive
 * the same path from the same command line:
 *   --runtime-dir=DIR, else $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=),
 *   else /run/haproxy-systemd-wrapper/NAME (see rundir_instance_name()).
 *
 * Every path in it must fit haproxy's limit for the unix sockets it binds
 * (RUNDIR_HAPROXY_SOCKET_MAX), and the directory must be one that no other
 * user can change (rundir_open()).
 */
#pragma once

#include <glib.h>

#define RUNDIR_BASE "/run/haproxy-systemd-wrapper"

/* The names inside it. */
#define RUNDIR_CONTROL_SOCKET "control.sock"
#define RUNDIR_EXPOSE_SOCKET "listeners.sock"
#define RUNDIR_EXPOSE_CONFIG "listeners.cfg"
#define RUNDIR_NOTIFY_SOCKET "notify.sock"

/* haproxy binds "<path>.<pid>.tmp" first, in a sun_path of 108 bytes:
 * with a 7-digit pid (pid_max up to 4194304) that leaves 95; 2.x and
 * later also refuse more than 97 when they parse the path. */
#define RUNDIR_HAPROXY_SOCKET_MAX 95
/* The longest name inside (listeners.sock) must fit: at most 80. */
#define RUNDIR_PATH_MAX \
	(RUNDIR_HAPROXY_SOCKET_MAX - (int)sizeof("/" RUNDIR_EXPOSE_SOCKET) + 1)

#define RUNDIR_ERROR (rundir_error_quark())
GQuark rundir_error_quark(void);

enum rundir_error {
	RUNDIR_ERROR_TOO_LONG,	/* its sockets would not fit */
	RUNDIR_ERROR_UNTRUSTED,	/* another user could change it */
	RUNDIR_ERROR_OS,	/* cannot be created or opened */
	RUNDIR_ERROR_UNUSABLE,	/* haproxy cannot take a socket path in it */
};

/*
 * The name under RUNDIR_BASE, from the pidfile path made absolute and
 * lexically normal ("//", ".", ".." resolved, symlinks not): that path
 * without its "/" and ".pid", "/" made "-" ("/run/haproxy.pid" gives
 * "run-haproxy") when it ends in ".pid", holds only letters, digits, "_",
 * "." and "/", and fits; otherwise the end of that readable form, "@" and
 * 12 hex digits of the SHA-256 of the normal path. No pidfile: "haproxy".
 */
gchar *rundir_instance_name(const char *pidfile);

/* The directory's path, lexically normal. */
gchar *rundir_path(const char *option, const char *pidfile);
/* It is the one named after the pidfile under RUNDIR_BASE: neither
 * option (--runtime-dir) nor systemd's $RUNTIME_DIRECTORY names one. */
gboolean rundir_is_default(const char *option);

/* The pidfile of the packaged unit (contrib/systemd/haproxy.service), whose
 * RuntimeDirectory= is rundir_path(NULL, RUNDIR_PACKAGED_PIDFILE). */
#define RUNDIR_PACKAGED_PIDFILE "/run/haproxy.pid"

/*
 * The directories a client command (--status, --reload...) looks in, in
 * order: rundir_path()'s alone when --runtime-dir, $RUNTIME_DIRECTORY or
 * -p says which; with none of them, the packaged unit's (that of -p
 * RUNDIR_PACKAGED_PIDFILE), then that of a wrapper started without -p.
 */
gchar **rundir_client_paths(const char *option, const char *pidfile);

enum rundir_role {
	RUNDIR_OWNER,	/* the wrapper: creates it, must own it */
	RUNDIR_CLIENT,	/* a client: root or itself must own it */
};

/*
 * Opens dir (O_DIRECTORY), walking from "/" one component at a time
 * without following a symlink except one found in a directory already
 * trusted: every directory on the way must be owned by root or the
 * effective user and not writable by group or others unless sticky; dir
 * itself must be owned by the effective user (RUNDIR_OWNER; root too for
 * RUNDIR_CLIENT) and not writable by group or others. The owner creates
 * what is missing (0755, dir itself 0700). Its descriptor, or -1.
 */
int rundir_open(const char *dir, enum rundir_role role, GError **error);
/* The same checks for a directory that holds no socket (the version
 * cache in $CACHE_DIRECTORY): no limit on the length of its path. */
int rundir_open_nosocket(const char *dir, enum rundir_role role,
			 GError **error);

/* Writes name in the directory dirfd atomically (a new file, then
 * renamed over it), mode 0600; a symlink planted there is replaced. */
gboolean rundir_write_file(int dirfd, const char *name, const char *text,
			   GError **error);

/* Is name in dirfd a unix socket, owned by root or the effective user
 * (not a symlink)? */
gboolean rundir_socket_trusted(int dirfd, const char *name, GError **error);

/* The socket path as one haproxy configuration word, for every haproxy
 * 1.5 to 3.x: anything but letters, digits and "/._@-" as \xHH. NULL
 * (RUNDIR_ERROR_UNUSABLE) if it holds ",": an address separator there. */
gchar *rundir_config_word(const char *path, GError **error);

gchar *rundir_control_socket(const char *dir);
gchar *rundir_expose_socket(const char *dir);
gchar *rundir_expose_config(const char *dir);
/* The NOTIFY_SOCKET of a master-worker haproxy (-Ws). */
gchar *rundir_notify_socket(const char *dir);
/* The note a hand-off into haproxy -Ws leaves in place of the control
 * socket, for the clients; removed by the next wrapper's start. */
gchar *rundir_handoff_note(const char *dir);
