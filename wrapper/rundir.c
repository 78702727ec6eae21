/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/rundir.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

/* The whole pidfile path, so that two instances never share a directory:
 * "/run/haproxy.pid" gives "run-haproxy". */
static gchar *instance_name(const char *pidfile)
{
	g_autofree gchar *name = NULL;

	if (!pidfile)
		return g_strdup("haproxy");
	while (*pidfile == '/')
		pidfile++;
	name = g_strdup(pidfile);
	if (g_str_has_suffix(name, ".pid") && strlen(name) > 4)
		name[strlen(name) - 4] = '\0';
	g_strdelimit(name, "/", '-');
	return g_steal_pointer(&name);
}

gchar *rundir_path(const char *option, const char *pidfile)
{
	const char *env = g_getenv("RUNTIME_DIRECTORY");
	g_autofree gchar *name = NULL;

	if (option)
		return g_strdup(option);
	/* systemd lists several directories separated by colons. */
	if (env && *env)
		return g_strndup(env, strcspn(env, ":"));
	name = instance_name(pidfile);
	return g_build_filename(RUNDIR_BASE, name, NULL);
}

gboolean rundir_create(const char *dir, GError **error)
{
	g_autofree gchar *parent = g_path_get_dirname(dir);

	if (g_file_test(dir, G_FILE_TEST_IS_DIR))
		return TRUE;
	if (g_mkdir_with_parents(parent, 0755) < 0 ||
	    (g_mkdir(dir, 0700) < 0 && errno != EEXIST)) {
		int saved = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
			    "cannot create %s: %s", dir, g_strerror(saved));
		return FALSE;
	}
	return TRUE;
}

gboolean rundir_socket_path_fits(const char *path)
{
	return strlen(path) < sizeof(((struct sockaddr_un *)0)->sun_path);
}

gchar *rundir_control_socket(const char *dir)
{
	return g_build_filename(dir, "control.sock", NULL);
}

gchar *rundir_expose_socket(const char *dir)
{
	return g_build_filename(dir, "listeners.sock", NULL);
}

gchar *rundir_expose_config(const char *dir)
{
	return g_build_filename(dir, "listeners.cfg", NULL);
}

gchar *rundir_notify_socket(const char *dir)
{
	return g_build_filename(dir, "notify.sock", NULL);
}
