/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "legacy/config.h"

#include <string.h>

#include "legacy/cfgwords.h"
#include "legacy/launch.h"

/* Keywords that open a section: "user" is also a keyword of userlist
 * and program sections. */
static gboolean opens_section(const char *word)
{
	static const char *const names[] = {
		"global", "defaults", "frontend", "backend", "listen",
		"userlist", "peers", "resolvers", "mailers", "program",
		"http-errors", "ring", "cache", "log-forward", "fcgi-app",
		"crt-store", "traces", NULL,
	};

	return g_strv_contains(names, word);
}

static void take_name(gchar *dst, gsize size, const char *name)
{
	if (g_strlcpy(dst, name, size) >= size)
		dst[0] = '\0';
}

static gboolean take_id(const char *text, guint32 *id)
{
	guint64 n;

	if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT32 - 1, &n,
					NULL))
		return FALSE;
	*id = (guint32)n;
	return TRUE;
}

/* The global section's user/uid and group/gid: the last one wins. */
static void scan_identity(GStrv w, struct config_hints *hints)
{
	const char *first = w[0], *value = w[1];

	if (g_str_equal(first, "user")) {
		take_name(hints->user, sizeof(hints->user), value);
		hints->uid_set = FALSE;
	} else if (g_str_equal(first, "uid")) {
		hints->uid_set = take_id(value, &hints->uid);
		hints->user[0] = '\0';
	} else if (g_str_equal(first, "group")) {
		take_name(hints->group, sizeof(hints->group), value);
		hints->gid_set = FALSE;
	} else if (g_str_equal(first, "gid")) {
		hints->gid_set = take_id(value, &hints->gid);
		hints->group[0] = '\0';
	}
}

/* nbproc and master-worker exist only in the global section: no need to
 * know which section a line is in for them. The last nbproc wins, as in
 * haproxy. Words are read as haproxy reads them (a quoted user name is
 * that name), variables from env; a line haproxy would refuse says
 * nothing. */
/* setenv(3) refuses an empty name or one with '=', and so does haproxy's
 * config; GLib asserts on them. */
static gboolean env_name_valid(const char *name)
{
	return name[0] != '\0' && !strchr(name, '=');
}

/* The global section's setenv, presetenv, unsetenv and resetenv change
 * the variables that the lines after them read, as in haproxy. */
static void change_env(GStrv w, guint len, GStrv *env)
{
	const char *first = w[0];

	if ((g_str_equal(first, "setenv") || g_str_equal(first, "presetenv")) &&
	    len > 2 && env_name_valid(w[1])) {
		*env = g_environ_setenv(*env, w[1], w[2],
					g_str_equal(first, "setenv"));
	} else if (g_str_equal(first, "unsetenv")) {
		for (guint i = 1; i < len; i++)
			if (env_name_valid(w[i]))
				*env = g_environ_unsetenv(*env, w[i]);
	} else if (g_str_equal(first, "resetenv")) {
		GPtrArray *kept = g_ptr_array_new();

		for (guint i = 1; i < len; i++) {
			const char *v = env_name_valid(w[i]) ?
				g_environ_getenv(*env, w[i]) : NULL;

			if (v)
				g_ptr_array_add(kept,
						g_strconcat(w[i], "=", v, NULL));
		}
		g_ptr_array_add(kept, NULL);
		g_strfreev(*env);
		*env = (GStrv)g_ptr_array_free(kept, FALSE);
	}
}

static void scan_line(const char *line, GStrv *env, gboolean *in_global,
		      struct config_hints *hints)
{
	g_auto(GStrv) w = config_line_words(line, strlen(line),
					    (const char *const *)*env, NULL);
	guint len = w ? g_strv_length(w) : 0;
	const char *first = len > 0 ? w[0] : "";
	guint64 n;

	if (opens_section(first))
		*in_global = g_str_equal(first, "global");
	else if (*in_global && len > 1)
		scan_identity(w, hints);
	if (*in_global && len > 0)
		change_env(w, len, env);
	if (g_str_equal(first, "nbproc") && len > 1 &&
	    g_ascii_string_to_unsigned(w[1], 10, 1, G_MAXUINT, &n, NULL))
		hints->nbproc = n;
	else if (g_str_equal(first, "master-worker"))
		hints->master_worker = TRUE;
	else if (g_str_equal(first, "noreuseport"))
		hints->noreuseport = TRUE;
}

/* text's lines in order, env changed by those that change it. */
static void scan_text(const char *text, gsize len, GStrv *env,
		      struct config_hints *hints)
{
	g_autofree gchar *copy = g_strndup(text, len);
	g_auto(GStrv) lines = g_strsplit(copy, "\n", -1);
	gboolean in_global = FALSE;

	for (guint i = 0; lines[i]; i++)
		scan_line(lines[i], env, &in_global, hints);
}

/* Files are read in haproxy's order: a variable one sets is seen by the
 * next ones. */
static void scan_file(const char *path, GStrv *env,
		      struct config_hints *hints)
{
	g_autofree gchar *text = NULL;
	gsize len;

	if (g_file_get_contents(path, &text, &len, NULL))
		scan_text(text, len, env, hints);
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void scan_path(const char *path, GStrv *env,
		      struct config_hints *hints)
{
	g_autoptr(GDir) dir = NULL;
	g_autoptr(GPtrArray) names = NULL;
	const char *name;

	if (!g_file_test(path, G_FILE_TEST_IS_DIR)) {
		scan_file(path, env, hints);
		return;
	}
	dir = g_dir_open(path, 0, NULL);
	if (!dir)
		return;
	names = g_ptr_array_new_with_free_func(g_free);
	while ((name = g_dir_read_name(dir)))
		if (g_str_has_suffix(name, ".cfg"))
			g_ptr_array_add(names, g_build_filename(path, name,
								NULL));
	g_ptr_array_sort(names, compare_names);
	for (guint i = 0; i < names->len; i++)
		if (g_file_test(g_ptr_array_index(names, i),
				G_FILE_TEST_IS_REGULAR))
			scan_file(g_ptr_array_index(names, i), env, hints);
}

static gchar *resolve(const char *path, const char *basedir, const char *cwd)
{
	g_autofree gchar *base = NULL;

	if (g_path_is_absolute(path))
		return g_strdup(path);
	if (!basedir)
		return g_build_filename(cwd, path, NULL);
	base = g_path_is_absolute(basedir) ? g_strdup(basedir)
					   : g_build_filename(cwd, basedir, NULL);
	return g_build_filename(base, path, NULL);
}

void config_hints_read(const struct wrapper_args *a, const char *cwd,
		       struct config_hints *hints)
{
	char *const *args = a->haproxy_args;
	const char *basedir = NULL;
	g_auto(GStrv) env = haproxy_environ();

	*hints = (struct config_hints){ 0 };
	/* haproxy changes to -C before it loads anything. */
	for (guint i = 0; args && args[i] && args[i + 1]; i++)
		if (haproxy_flag_takes_value(args[i]) && args[i][1] == 'C')
			basedir = args[++i];
		else if (haproxy_flag_takes_value(args[i]))
			i++;
	/* The parser left every value-taking flag paired with its value. */
	for (guint i = 0; args && args[i] && args[i + 1]; i++) {
		if (!haproxy_flag_takes_value(args[i]))
			continue;
		if (args[i][1] == 'f') {
			g_autofree gchar *p = resolve(args[i + 1], basedir, cwd);

			scan_path(p, &env, hints);
		}
		i++;
	}
	for (guint i = 0; a->config_tail && a->config_tail[i]; i++) {
		g_autofree gchar *p = resolve(a->config_tail[i], basedir, cwd);

		scan_path(p, &env, hints);
	}
}

void config_hints_read_paths(const char *const *paths,
			     struct config_hints *hints)
{
	g_auto(GStrv) env = haproxy_environ();

	*hints = (struct config_hints){ 0 };
	for (; paths && *paths; paths++)
		scan_path(*paths, &env, hints);
}
