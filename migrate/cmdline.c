/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/cmdline.h"

#include <sys/stat.h>

/* haproxy's flags that take the next argument, whatever it looks like. */
static gboolean takes_value(const char *arg)
{
	if (arg[1] == '\0')
		return FALSE;
	if (g_str_has_prefix(arg, "-cc"))
		return TRUE;
	return strchr("fpCLNnmxS", arg[1]) != NULL;
}

void hap_cmdline_parse(const char *const *argv, struct hap_cmdline *c)
{
	*c = (struct hap_cmdline){ .files = g_ptr_array_new() };
	if (!argv || !argv[0])
		return;
	c->renamed = g_str_has_suffix(base_name(argv[0]), "-master");
	for (guint i = 1; argv[i]; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			while (argv[++i])
				g_ptr_array_add(c->files, (gpointer)argv[i]);
			break;
		}
		if (a[0] != '-')
			continue;
		if (g_str_has_prefix(a, "-sf") || g_str_has_prefix(a, "-st")) {
			while (argv[i + 1] && argv[i + 1][0] != '-')
				i++;
		} else if (takes_value(a)) {
			if (!argv[i + 1])
				break;
			i++;
			if (a[1] == 'f')
				g_ptr_array_add(c->files, (gpointer)argv[i]);
			else if (strcmp(a, "-p") == 0)
				c->pidfile = argv[i];
			else if (a[1] == 'C')
				c->basedir = argv[i];
		} else if (g_str_has_prefix(a, "-W")) {
			c->mworker = TRUE;
		} else if (g_str_has_prefix(a, "-Ds")) {
			c->ds = TRUE;
		}
	}
}

void hap_cmdline_clear(struct hap_cmdline *c)
{
	g_clear_pointer(&c->files, g_ptr_array_unref);
}

/* Where relative names are taken, or NULL when that is unknown. */
static gchar *files_base(const struct hap_cmdline *c, const char *cwd,
			 gboolean in_basedir)
{
	gboolean cwd_ok = cwd && g_path_is_absolute(cwd);

	if (!c->basedir || !*c->basedir)
		return cwd_ok ? g_strdup(cwd) : NULL;
	if (g_path_is_absolute(c->basedir))
		return g_strdup(c->basedir);
	if (!cwd_ok)
		return NULL;
	return in_basedir ? g_strdup(cwd)
			  : g_build_filename(cwd, c->basedir, NULL);
}

GStrv hap_cmdline_files(const struct hap_cmdline *c, const char *cwd,
			gboolean in_basedir)
{
	g_autofree gchar *base = files_base(c, cwd, in_basedir);
	g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < c->files->len; i++) {
		const char *name = g_ptr_array_index(c->files, i);
		gchar *path;

		if (!*name || (!g_path_is_absolute(name) && !base))
			continue;
		path = g_canonicalize_filename(name, base);
		if (g_ptr_array_find_with_equal_func(out, path, g_str_equal,
						     NULL))
			g_free(path);
		else
			g_ptr_array_add(out, path);
	}
	g_ptr_array_add(out, NULL);
	return (GStrv)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

gchar *hap_cmdline_pidfile(const struct hap_cmdline *c, const char *cwd,
			   gboolean in_basedir)
{
	g_autofree gchar *base = NULL;

	if (!c->pidfile || !*c->pidfile)
		return NULL;
	if (g_path_is_absolute(c->pidfile))
		return g_canonicalize_filename(c->pidfile, NULL);
	base = files_base(c, cwd, in_basedir);
	return base ? g_canonicalize_filename(c->pidfile, base) : NULL;
}

GStrv foreign_argv_config_files(const char *const *argv, const char *cwd,
				gboolean in_basedir)
{
	struct hap_cmdline c;
	GStrv files;

	hap_cmdline_parse(argv, &c);
	files = hap_cmdline_files(&c, cwd, in_basedir);
	hap_cmdline_clear(&c);
	return files;
}

/* ---- the files we look for ---- */

struct config_target {
	gchar *path;
	/* The wrapper's own fragment: the same path leading to the same
	 * file, never required. */
	gboolean own;
	gboolean have_id;
	dev_t dev;
	ino_t ino;
};

static void config_target_free(gpointer p)
{
	struct config_target *t = p;

	g_free(t->path);
	g_free(t);
}

static struct config_target *config_target_new(const char *file,
					       gboolean own)
{
	struct config_target *t = g_new0(struct config_target, 1);
	struct stat st;

	t->path = g_canonicalize_filename(file, NULL);
	t->own = own;
	if (stat(t->path, &st) == 0) {
		t->have_id = TRUE;
		t->dev = st.st_dev;
		t->ino = st.st_ino;
	}
	return t;
}

GPtrArray *config_targets_new(const char *const *files)
{
	GPtrArray *targets = g_ptr_array_new_with_free_func(config_target_free);

	for (; files && *files; files++)
		if (**files)
			g_ptr_array_add(targets, config_target_new(*files,
								   FALSE));
	return targets;
}

void config_targets_add_own(GPtrArray *targets, const char *path)
{
	if (path && *path)
		g_ptr_array_add(targets, config_target_new(path, TRUE));
}

static gboolean same_id(const struct config_target *t, gboolean have_id,
			const struct stat *st)
{
	return have_id && t->have_id && t->dev == st->st_dev &&
	       t->ino == st->st_ino;
}

/* The index of the target that path is, or -1. Seen through root (a
 * process's root in another mount namespace), a name proves nothing: only
 * the file it leads to there counts. */
static gint target_index(GPtrArray *targets, const char *path,
			 const char *root)
{
	g_autofree gchar *seen = root ? g_strconcat(root, path, NULL) : NULL;
	struct stat st;
	gboolean have_id = stat(seen ? seen : path, &st) == 0;

	for (guint i = 0; i < targets->len; i++) {
		const struct config_target *t = g_ptr_array_index(targets, i);

		/* Another file at our fragment's path (a container's, one
		 * put back since) is not ours. */
		if (t->own) {
			if (strcmp(t->path, path) == 0 &&
			    same_id(t, have_id, &st))
				return i;
			continue;
		}
		if (!root && strcmp(t->path, path) == 0)
			return i;
		if (same_id(t, have_id, &st))
			return i;
	}
	return -1;
}

gboolean config_matches(GPtrArray *targets, const char *path)
{
	gint i = target_index(targets, path, NULL);

	return i >= 0 && !((struct config_target *)targets->pdata[i])->own;
}

gboolean config_set_equal(GPtrArray *targets, const char *const *files,
			  const char *root)
{
	g_autofree gboolean *seen = g_new0(gboolean, targets->len + 1);
	guint matched = 0, wanted = 0;

	/* A file named twice by the wrapper is wanted once. */
	for (guint i = 0; i < targets->len; i++) {
		const struct config_target *t = g_ptr_array_index(targets, i);

		if (!t->own && target_index(targets, t->path, NULL) == (gint)i)
			wanted++;
	}

	for (; files && *files; files++) {
		gint i = target_index(targets, *files, root);
		const struct config_target *t;

		/* One of its files is not ours: another service's set. */
		if (i < 0)
			return FALSE;
		t = g_ptr_array_index(targets, i);
		if (!seen[i] && !t->own)
			matched++;
		seen[i] = TRUE;
	}
	return wanted > 0 && matched == wanted;
}
