/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Files in a booted container, put through /proc/PID1/root: see
 * t/container/container.h. */
#include "t/container/container.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "t/lib/harness.h"

/* A path of the container, seen from the host. */
gboolean exists_in(struct container *c, const char *path)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);

	return g_file_test(full, G_FILE_TEST_EXISTS);
}

void put_file(struct container *c, const char *path,
	      const char *content, gsize len, mode_t mode)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);
	g_autofree gchar *dir = g_path_get_dirname(full);
	g_autoptr(GError) error = NULL;

	g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
	g_file_set_contents(full, content, len, &error);
	g_assert_no_error(error);
	g_assert_cmpint(chmod(full, mode), ==, 0);
}

void put_text(struct container *c, const char *path, const char *text)
{
	put_file(c, path, text, strlen(text), 0644);
}

void copy_in(struct container *c, const char *src, const char *dst,
	     mode_t mode)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *data = NULL;
	gsize len;

	g_file_get_contents(src, &data, &len, &error);
	g_assert_no_error(error);
	put_file(c, dst, data, len, mode);
}

/* The built wrapper where the units name it. */
void install_wrapper(struct container *c)
{
	copy_in(c, "./" PROG, SBIN_WRAPPER, 0755);
}

/* A shipped unit, byte for byte, and a drop-in lifting the start limit
 * (tests restart often). */
void install_unit(struct container *c, const char *src,
		  const char *name)
{
	g_autofree gchar *from = g_build_filename(CONTRIB, src, NULL);
	g_autofree gchar *to = g_build_filename(UNIT_DIR, name, NULL);
	g_autofree gchar *dropin = g_strdup_printf("%s/%s.d/test.conf",
						   UNIT_DIR, name);

	copy_in(c, from, to, 0644);
	put_text(c, dropin, "[Unit]\nStartLimitIntervalSec=0\n");
}

void put_config(struct container *c, const char *path, guint16 port,
		const char *extra)
{
	g_autofree gchar *cfg = t_config_text(port, extra);

	put_text(c, path, cfg);
}

void mkdir_in(struct container *c, const char *path, mode_t mode, uid_t uid,
	      gid_t gid)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);

	g_assert_cmpint(g_mkdir_with_parents(full, 0755), ==, 0);
	g_assert_cmpint(chown(full, uid, gid), ==, 0);
	g_assert_cmpint(chmod(full, mode), ==, 0);
}

uid_t owner_in(struct container *c, const char *path)
{
	g_autofree gchar *full = g_strconcat(c->root, path, NULL);
	struct stat st;

	g_assert_cmpint(lstat(full, &st), ==, 0);
	return st.st_uid;
}
