/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The instance's runtime directory: the control socket, the stats
 * socket through which a new haproxy takes the listening sockets of the
 * old one (-x), and a master-worker haproxy's notify socket. One per instance, so that several wrappers can share a
 * host. The wrapper and its client commands derive the same path from the
 * same command line:
 *   --runtime-dir=DIR, else $RUNTIME_DIRECTORY (systemd's RuntimeDirectory=),
 *   else /run/haproxy-systemd-wrapper/NAME, NAME being the -p pidfile's
 *   path without its leading "/" and its ".pid", "/" made "-"
 *   ("/run/haproxy.pid" gives "run-haproxy"), or "haproxy" without -p.
 */
#pragma once

#include <glib.h>

#define RUNDIR_BASE "/run/haproxy-systemd-wrapper"

gchar *rundir_path(const char *option, const char *pidfile);

/* Create it (mode 0700, parents 0755) unless it exists as a directory. */
gboolean rundir_create(const char *dir, GError **error);

/* Does path fit in a unix socket address? */
gboolean rundir_socket_path_fits(const char *path);

gchar *rundir_control_socket(const char *dir);
gchar *rundir_expose_socket(const char *dir);
gchar *rundir_expose_config(const char *dir);
/* The NOTIFY_SOCKET of a master-worker haproxy (-Ws). */
gchar *rundir_notify_socket(const char *dir);
