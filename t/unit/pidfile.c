/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for legacy/pidfile.c: strict parsing, safe reads, atomic writes. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "legacy/pidfile.h"

struct tmpdir {
	gchar *path;
};

static void tmpdir_setup(struct tmpdir *t, gconstpointer data)
{
	g_autoptr(GError) error = NULL;

	t->path = g_dir_make_tmp("unit-pidfile-XXXXXX", &error);
	g_assert_no_error(error);
}

static void remove_tree(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	const char *name;

	if (dir == NULL) {
		g_assert_cmpint(g_unlink(path), ==, 0);
		return;
	}
	while ((name = g_dir_read_name(dir)) != NULL) {
		g_autofree gchar *child = g_build_filename(path, name, NULL);

		remove_tree(child);
	}
	g_assert_cmpint(g_rmdir(path), ==, 0);
}

static void tmpdir_teardown(struct tmpdir *t, gconstpointer data)
{
	remove_tree(t->path);
	g_clear_pointer(&t->path, g_free);
}

static guint count_entries(const char *path)
{
	g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
	guint n = 0;

	g_assert_nonnull(dir);
	while (g_dir_read_name(dir) != NULL)
		n++;
	return n;
}

static void assert_pids(const GArray *got, const GPid *want, guint n)
{
	g_assert_nonnull(got);
	g_assert_cmpuint(got->len, ==, n);
	for (guint i = 0; i < n; i++)
		g_assert_cmpint(g_array_index(got, GPid, i), ==, want[i]);
}

/* Parses len bytes of content: every test states its length explicitly. */
static void check_parse(const char *content, gsize len, const GPid *want,
			guint n_want, guint invalid_want)
{
	g_autoptr(GArray) pids = NULL;
	guint invalid = 12345;

	pids = pidfile_parse(content, len, &invalid);
	assert_pids(pids, want, n_want);
	g_assert_cmpuint(invalid, ==, invalid_want);
}

#define CHECK_PARSE(str, invalid, ...)                                       \
	do {                                                                 \
		static const GPid want_[] = { __VA_ARGS__ };                 \
		check_parse(str, sizeof(str) - 1, want_,                     \
			    G_N_ELEMENTS(want_), invalid);                   \
	} while (0)

static void test_parse_normal(void)
{
	CHECK_PARSE("1234\n", 0, 1234);
	CHECK_PARSE("1234\n5678\n", 0, 1234, 5678);
	CHECK_PARSE("42", 0, 42);
}

static void test_parse_whitespace(void)
{
	CHECK_PARSE("12\r\n34\r\n", 0, 12, 34);
	CHECK_PARSE("\t12\t\t34   56\n\n\n78 \v9\f", 0, 12, 34, 56, 78, 9);
}

static void test_parse_empty(void)
{
	g_autoptr(GArray) none = pidfile_parse("", 0, NULL);

	g_assert_nonnull(none);
	g_assert_cmpuint(none->len, ==, 0);
	check_parse("", 0, NULL, 0, 0);
	check_parse(" \n\t\r\n", 5, NULL, 0, 0);
	/* len is what counts, not a terminator */
	check_parse("123", 0, NULL, 0, 0);
	check_parse("123 456", 3, (const GPid[]){ 123 }, 1, 0);
}

static void test_parse_garbage(void)
{
	CHECK_PARSE("abc 12x -5 +7 0 007 42", 6, 42);
	CHECK_PARSE("1.5 0x10 \xd9\xa1\xd9\xa2 3", 3, 3);
	check_parse("abc", 3, NULL, 0, 1);
}

static void test_parse_limits(void)
{
	CHECK_PARSE("1234567890 2147483647", 0, 1234567890, 2147483647);
	CHECK_PARSE("2147483648 9999999999 5", 2, 5);
	check_parse("1234567890123456789012345678901234567890\n", 41, NULL, 0,
		    1);
	check_parse("18446744073709551617 4294967297", 31, NULL, 0, 2);
}

static void test_parse_nul_bytes(void)
{
	static const char content[] = "12\0" "34\n56\n\0\n78";

	/* "12\0" "34" is one token, and not a pid; a lone NUL neither */
	check_parse(content, sizeof(content) - 1, (const GPid[]){ 56, 78 }, 2,
		    2);
	check_parse("\0", 1, NULL, 0, 1);
	check_parse("7\0", 2, NULL, 0, 1);
}

static void test_parse_duplicates(void)
{
	CHECK_PARSE("5 5 6 5\n6\n7", 0, 5, 6, 7);
}

static void test_parse_bounded(void)
{
	g_autoptr(GString) s = g_string_new(NULL);
	g_autoptr(GArray) pids = NULL;
	guint invalid = 0;

	for (guint i = 1; i <= PIDFILE_MAX_PIDS + 6; i++)
		g_string_append_printf(s, "%u\n", i);
	/* a duplicate of a kept pid is not invalid, even once full */
	g_string_append(s, "1\n");
	pids = pidfile_parse(s->str, s->len, &invalid);
	g_assert_cmpuint(pids->len, ==, PIDFILE_MAX_PIDS);
	for (guint i = 0; i < pids->len; i++)
		g_assert_cmpint(g_array_index(pids, GPid, i), ==, (GPid)i + 1);
	g_assert_cmpuint(invalid, ==, 6);
}

static gchar *read_whole(const char *path)
{
	g_autoptr(GError) error = NULL;
	gchar *content = NULL;

	g_assert_true(g_file_get_contents(path, &content, NULL, &error));
	g_assert_no_error(error);
	return content;
}

static void test_write_read(struct tmpdir *t, gconstpointer data)
{
	static const GPid pids[] = { 4242, 1, 2147483647 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autofree gchar *content = NULL;
	g_autoptr(GArray) back = NULL;
	g_autoptr(GError) error = NULL;
	guint invalid = 99;
	struct stat st;
	mode_t old_umask;

	old_umask = umask(077);
	g_assert_true(pidfile_write(path, pids, G_N_ELEMENTS(pids), &error));
	umask(old_umask);
	g_assert_no_error(error);

	content = read_whole(path);
	g_assert_cmpstr(content, ==, "4242\n1\n2147483647\n");
	g_assert_cmpint(g_stat(path, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0644);
	g_assert_cmpuint(count_entries(t->path), ==, 1);

	g_assert_true(pidfile_read(path, &back, &invalid, &error));
	g_assert_no_error(error);
	assert_pids(back, pids, G_N_ELEMENTS(pids));
	g_assert_cmpuint(invalid, ==, 0);
}

static void test_write_replaces(struct tmpdir *t, gconstpointer data)
{
	static const GPid pids[] = { 77 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autofree gchar *content = NULL;
	g_autofree gchar *empty = NULL;
	g_autoptr(GError) error = NULL;
	struct stat before, after;

	g_assert_true(g_file_set_contents(path, "1\n2\n3\n", -1, &error));
	g_assert_no_error(error);
	g_assert_cmpint(g_stat(path, &before), ==, 0);
	g_assert_true(pidfile_write(path, pids, 1, &error));
	g_assert_no_error(error);
	content = read_whole(path);
	g_assert_cmpstr(content, ==, "77\n");
	/* renamed over, not rewritten in place */
	g_assert_cmpint(g_stat(path, &after), ==, 0);
	g_assert_cmpuint(before.st_ino, !=, after.st_ino);

	g_assert_true(pidfile_write(path, NULL, 0, &error));
	g_assert_no_error(error);
	empty = read_whole(path);
	g_assert_cmpstr(empty, ==, "");
	g_assert_cmpuint(count_entries(t->path), ==, 1);
}

static void test_write_missing_dir(struct tmpdir *t, gconstpointer data)
{
	static const GPid pids[] = { 1 };
	g_autofree gchar *path = g_build_filename(t->path, "nodir", "h.pid",
						  NULL);
	g_autoptr(GError) error = NULL;

	g_assert_false(pidfile_write(path, pids, 1, &error));
	g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
	g_assert_nonnull(strstr(error->message, path));
	g_assert_cmpuint(count_entries(t->path), ==, 0);
}

/* The rename fails after the temporary file was written: it must go. */
static void test_write_rename_fails(struct tmpdir *t, gconstpointer data)
{
	static const GPid pids[] = { 1 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autofree gchar *inside = g_build_filename(path, "keep", NULL);
	g_autoptr(GError) error = NULL;

	g_assert_cmpint(g_mkdir(path, 0755), ==, 0);
	g_assert_true(g_file_set_contents(inside, "x", -1, &error));
	g_assert_false(pidfile_write(path, pids, 1, &error));
	g_assert_nonnull(error);
	g_assert_true(error->domain == G_FILE_ERROR);
	g_assert_nonnull(strstr(error->message, path));
	g_assert_cmpuint(count_entries(t->path), ==, 1);
	g_assert_true(g_file_test(path, G_FILE_TEST_IS_DIR));
}

static void test_read_missing(struct tmpdir *t, gconstpointer data)
{
	g_autofree gchar *path = g_build_filename(t->path, "none.pid", NULL);
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;
	guint invalid = 99;

	g_assert_true(pidfile_read(path, &pids, &invalid, &error));
	g_assert_no_error(error);
	assert_pids(pids, NULL, 0);
	g_assert_cmpuint(invalid, ==, 0);
}

static void test_read_garbage(struct tmpdir *t, gconstpointer data)
{
	static const GPid want[] = { 10, 20 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;
	guint invalid = 0;

	g_assert_true(g_file_set_contents(path, "10\nzz\n20\n0\n10\n", -1,
					  &error));
	g_assert_true(pidfile_read(path, &pids, &invalid, &error));
	g_assert_no_error(error);
	assert_pids(pids, want, G_N_ELEMENTS(want));
	g_assert_cmpuint(invalid, ==, 2);
}

static void write_sized(const char *path, gsize size)
{
	g_autofree gchar *buf = g_malloc(size);
	g_autoptr(GError) error = NULL;

	/* a valid pid first, then padding */
	memset(buf, ' ', size);
	memcpy(buf, "31\n", 3);
	g_assert_true(g_file_set_contents(path, buf, (gssize)size, &error));
	g_assert_no_error(error);
}

static void test_read_size_limit(struct tmpdir *t, gconstpointer data)
{
	static const GPid want[] = { 31 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;

	write_sized(path, PIDFILE_MAX_BYTES);
	g_assert_true(pidfile_read(path, &pids, NULL, &error));
	g_assert_no_error(error);
	assert_pids(pids, want, G_N_ELEMENTS(want));
	g_clear_pointer(&pids, g_array_unref);

	write_sized(path, PIDFILE_MAX_BYTES + 1);
	g_assert_false(pidfile_read(path, &pids, NULL, &error));
	g_assert_nonnull(error);
	g_assert_true(error->domain == G_FILE_ERROR);
	g_assert_nonnull(strstr(error->message, path));
	g_assert_null(pids);
}

static void test_read_directory(struct tmpdir *t, gconstpointer data)
{
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_false(pidfile_read(t->path, &pids, NULL, &error));
	g_assert_nonnull(error);
	g_assert_true(error->domain == G_FILE_ERROR);
	g_assert_null(pids);
}

static void test_read_fifo(struct tmpdir *t, gconstpointer data)
{
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_cmpint(mkfifo(path, 0644), ==, 0);
	/* SIGALRM kills the test rather than letting it hang */
	alarm(10);
	g_assert_false(pidfile_read(path, &pids, NULL, &error));
	alarm(0);
	g_assert_nonnull(error);
	g_assert_true(error->domain == G_FILE_ERROR);
	g_assert_nonnull(strstr(error->message, path));
	g_assert_null(pids);
}

/* ---- symlinks and files that are not ours: never followed ---- */

/* dir/target holding text, and dir/name a symlink to it, with its stat. */
static gchar *plant_symlink(const char *dir, const char *name,
			    const char *text, struct stat *target_st)
{
	g_autofree gchar *target = g_build_filename(dir, "target", NULL);
	gchar *link = g_build_filename(dir, name, NULL);

	g_assert_true(g_file_set_contents(target, text, -1, NULL));
	g_assert_cmpint(symlink(target, link), ==, 0);
	g_assert_cmpint(g_stat(target, target_st), ==, 0);
	return link;
}

static void assert_target_untouched(const char *dir, const char *text,
				    const struct stat *before)
{
	g_autofree gchar *target = g_build_filename(dir, "target", NULL);
	g_autofree gchar *content = read_whole(target);
	struct stat after;

	g_assert_cmpstr(content, ==, text);
	g_assert_cmpint(g_stat(target, &after), ==, 0);
	g_assert_cmpuint(after.st_ino, ==, before->st_ino);
	g_assert_cmpint(after.st_mtim.tv_sec, ==, before->st_mtim.tv_sec);
	g_assert_cmpint(after.st_mtim.tv_nsec, ==, before->st_mtim.tv_nsec);
}

static gboolean is_symlink(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static void test_read_symlink(struct tmpdir *t, gconstpointer data)
{
	struct stat st;
	g_autofree gchar *link = plant_symlink(t->path, "h.pid", "4242\n",
					       &st);
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;

	g_assert_false(pidfile_read(link, &pids, NULL, &error));
	g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_LOOP);
	g_assert_nonnull(strstr(error->message, link));
	g_assert_nonnull(strstr(error->message, "symlink, not followed"));
	g_assert_null(pids);
}

/* Removed only when it is our regular file and holds our pid alone. */
static void test_remove_if_ours(struct tmpdir *t, gconstpointer data)
{
	static const GPid ours[] = { 4242 };
	static const GPid theirs[] = { 4242, 17 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);

	g_assert_false(pidfile_remove_if_ours(path, 4242));
	g_assert_true(pidfile_write(path, ours, 1, NULL));
	g_assert_false(pidfile_remove_if_ours(path, 4243));
	g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
	g_assert_true(pidfile_write(path, theirs, 2, NULL));
	g_assert_false(pidfile_remove_if_ours(path, 4242));
	g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
	g_assert_true(pidfile_write(path, ours, 1, NULL));
	g_assert_true(pidfile_remove_if_ours(path, 4242));
	g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
}

/* A symlink to a file that holds our pid: neither removed nor followed. */
static void test_remove_symlink(struct tmpdir *t, gconstpointer data)
{
	struct stat st;
	g_autofree gchar *link = plant_symlink(t->path, "h.pid", "4242\n",
					       &st);

	g_assert_false(pidfile_remove_if_ours(link, 4242));
	g_assert_true(is_symlink(link));
	assert_target_untouched(t->path, "4242\n", &st);
}

/* A second hard link means someone else holds the file too. */
static void test_remove_hardlinked(struct tmpdir *t, gconstpointer data)
{
	static const GPid ours[] = { 4242 };
	g_autofree gchar *path = g_build_filename(t->path, "h.pid", NULL);
	g_autofree gchar *other = g_build_filename(t->path, "other", NULL);

	g_assert_true(pidfile_write(path, ours, 1, NULL));
	g_assert_cmpint(link(path, other), ==, 0);
	g_assert_false(pidfile_remove_if_ours(path, 4242));
	g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
}

static void add_tmpdir_test(const char *name,
			    void (*fn)(struct tmpdir *, gconstpointer))
{
	g_test_add(name, struct tmpdir, NULL, tmpdir_setup, fn,
		   tmpdir_teardown);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/pidfile/parse/normal", test_parse_normal);
	g_test_add_func("/pidfile/parse/whitespace", test_parse_whitespace);
	g_test_add_func("/pidfile/parse/empty", test_parse_empty);
	g_test_add_func("/pidfile/parse/garbage", test_parse_garbage);
	g_test_add_func("/pidfile/parse/limits", test_parse_limits);
	g_test_add_func("/pidfile/parse/nul-bytes", test_parse_nul_bytes);
	g_test_add_func("/pidfile/parse/duplicates", test_parse_duplicates);
	g_test_add_func("/pidfile/parse/bounded", test_parse_bounded);
	add_tmpdir_test("/pidfile/write-read", test_write_read);
	add_tmpdir_test("/pidfile/write-replaces", test_write_replaces);
	add_tmpdir_test("/pidfile/write-missing-dir", test_write_missing_dir);
	add_tmpdir_test("/pidfile/write-rename-fails", test_write_rename_fails);
	add_tmpdir_test("/pidfile/read-missing", test_read_missing);
	add_tmpdir_test("/pidfile/read-garbage", test_read_garbage);
	add_tmpdir_test("/pidfile/read-size-limit", test_read_size_limit);
	add_tmpdir_test("/pidfile/read-directory", test_read_directory);
	add_tmpdir_test("/pidfile/read-fifo", test_read_fifo);
	add_tmpdir_test("/pidfile/read-symlink", test_read_symlink);
	add_tmpdir_test("/pidfile/remove-if-ours", test_remove_if_ours);
	add_tmpdir_test("/pidfile/remove-symlink", test_remove_symlink);
	add_tmpdir_test("/pidfile/remove-hardlinked", test_remove_hardlinked);

	return g_test_run();
}
