/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "legacy/launch.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/sigreset.h"

#ifndef HAPROXY_FALLBACK
#define HAPROXY_FALLBACK "/usr/sbin/haproxy"
#endif

#define WRAPPER_SUFFIX "-systemd-wrapper"

/* Variables that change what a fresh haproxy does, or that belong to us. */
static const char *const scrubbed_prefixes[] = {
	/* haproxy 1.8+ sets these before it re-executes its master; a new
	 * haproxy that inherited them would believe it was that master. */
	"HAPROXY_MWORKER",
};
static const char *const scrubbed_names[] = {
	"HAPROXY_PROCESSES",
	"HAPROXY_SYSTEMD_REEXEC",
	"HAPROXY_WRAPPER_FD",
	"HAPROXY_WRAPPER_STATE",
	"NOTIFY_SOCKET",
	/* systemd's watchdog pings are the wrapper's to send. */
	"WATCHDOG_PID",
	"WATCHDOG_USEC",
};

static gboolean is_scrubbed(const char *entry)
{
	gsize name_len = strcspn(entry, "=");

	for (guint i = 0; i < G_N_ELEMENTS(scrubbed_prefixes); i++)
		if (g_str_has_prefix(entry, scrubbed_prefixes[i]))
			return TRUE;
	for (guint i = 0; i < G_N_ELEMENTS(scrubbed_names); i++)
		if (strlen(scrubbed_names[i]) == name_len &&
		    strncmp(entry, scrubbed_names[i], name_len) == 0)
			return TRUE;
	return FALSE;
}

GStrv haproxy_environ(void)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();

	for (char **e = environ; *e; e++)
		if (!is_scrubbed(*e))
			g_strv_builder_add(b, *e);
	return g_strv_builder_end(b);
}

GStrv haproxy_environ_for_handoff(void)
{
	const char *notify = g_getenv("NOTIFY_SOCKET");
	GStrv envp = haproxy_environ();

	return notify ? g_environ_setenv(envp, "NOTIFY_SOCKET", notify, TRUE)
		      : envp;
}

gboolean haproxy_spawn(char *const *argv, const char *notify_socket,
		       int stderr_fd, GPid *pid, GError **error)
{
	g_auto(GStrv) envp = haproxy_environ();

	if (notify_socket)
		envp = g_environ_setenv(envp, "NOTIFY_SOCKET", notify_socket,
					TRUE);

	log_executing(argv);
	/* GLib closes every descriptor above stderr in the child; stdin is
	 * /dev/null, stdout ours. */
	return g_spawn_async_with_fds(NULL, (char **)argv, envp,
				      G_SPAWN_DO_NOT_REAP_CHILD,
				      signals_reset_for_exec, NULL, pid, -1,
				      -1, stderr_fd, error);
}

int haproxy_exec(char *const *argv)
{
	g_auto(GStrv) envp = haproxy_environ();
	int saved;

	log_executing(argv);
	signals_reset_for_exec(NULL);
	execve(argv[0], argv, envp);
	saved = errno;
	log_err("execv(%s) failed: %s", argv[0], g_strerror(saved));
	return saved == ENOENT ? EXIT_HAPROXY_NOT_FOUND
			       : EXIT_HAPROXY_NOT_EXECUTABLE;
}

static gboolean usable(const char *path)
{
	return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

/* The historic candidates, in order, from the wrapper's own path. */
static GPtrArray *historic_candidates(const char *self_path)
{
	GPtrArray *c = g_ptr_array_new_with_free_func(g_free);

	if (self_path && strchr(self_path, '/')) {
		g_autofree gchar *dir = g_path_get_dirname(self_path);
		g_autofree gchar *base = g_path_get_basename(self_path);

		if (g_str_has_suffix(base, WRAPPER_SUFFIX) &&
		    strlen(base) > strlen(WRAPPER_SUFFIX))
			g_ptr_array_add(c, g_strndup(self_path,
				strlen(self_path) - strlen(WRAPPER_SUFFIX)));
		g_ptr_array_add(c, g_build_filename(dir, "haproxy", NULL));
	}
	g_ptr_array_add(c, g_strdup(HAPROXY_FALLBACK));
	return c;
}

gchar *haproxy_locate(const char *override, const char *self_path,
		      GError **error)
{
	g_autoptr(GPtrArray) candidates = NULL;
	g_autoptr(GString) tried = NULL;

	if (override && !strchr(override, '/')) {
		gchar *found = g_find_program_in_path(override);

		if (!found)
			g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
				    "haproxy '%s' not found in PATH", override);
		return found;
	}
	if (override) {
		if (usable(override))
			return g_strdup(override);
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			    "haproxy not found at %s (--haproxy)", override);
		return NULL;
	}
	candidates = historic_candidates(self_path);
	tried = g_string_new(NULL);
	for (guint i = 0; i < candidates->len; i++) {
		const char *path = g_ptr_array_index(candidates, i);

		if (usable(path))
			return g_strdup(path);
		g_string_append_printf(tried, "%s%s", i ? ", " : "", path);
	}
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
		    "haproxy not found (tried %s)", tried->str);
	return NULL;
}
