/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runtime directory: names that fit haproxy's socket paths and never
 * collide, the trust checks, the writes inside, the configuration word. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "t/lib/harness.h"
#include "wrapper/rundir.h"

/* haproxy's limits, stated independently of rundir.h: it binds
 * "<path>.<pid>.tmp" in a sun_path (108 bytes with its NUL), pids up to
 * 4194303 (PID_MAX_LIMIT - 1), and 2.x+ refuse paths over 97 at parse. */
#define SUN_PATH	((int)sizeof(((struct sockaddr_un *)0)->sun_path))
#define TMP_SUFFIX	".4194303.tmp"
#define PARSE_MAX	97

static void assert_sockets_fit(const char *dir)
{
	g_autofree gchar *listeners = rundir_expose_socket(dir);
	g_autofree gchar *control = rundir_control_socket(dir);
	g_autofree gchar *notify = rundir_notify_socket(dir);

	/* haproxy binds this one. */
	g_assert_cmpint(strlen(listeners) + strlen(TMP_SUFFIX), <, SUN_PATH);
	g_assert_cmpint(strlen(listeners), <=, PARSE_MAX);
	/* The wrapper binds these. */
	g_assert_cmpint(strlen(control), <, SUN_PATH);
	g_assert_cmpint(strlen(notify), <, SUN_PATH);
}

/* A pidfile path of exactly len characters, of one of a few shapes. */
static gchar *pidfile_of(guint len, guint shape)
{
	static const char *const fill[] = { "abc/", "a-b/", "my lb/", "x.y/" };
	GString *s = g_string_new("/");

	while (s->len + 4 < len)
		g_string_append(s, fill[shape]);
	g_string_truncate(s, len >= 4 ? len - 4 : 1);
	/* No "//" and no component ending in the shape's separator. */
	while (s->len > 1 && s->str[s->len - 1] == '/')
		g_string_truncate(s, s->len - 1);
	if (len >= 5) {
		g_string_append(s, ".pid");
		while (s->len < len)
			g_string_insert_c(s, 1, 'p');
	}
	return g_string_free(s, FALSE);
}

static void test_sweep(void)
{
	g_autoptr(GHashTable) seen =
		g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

	g_unsetenv("RUNTIME_DIRECTORY");
	for (guint shape = 0; shape < 4; shape++) {
		for (guint len = 1; len <= 320; len++) {
			g_autofree gchar *pid = pidfile_of(len, shape);
			g_autofree gchar *dir = rundir_path(NULL, pid);
			g_autofree gchar *again = rundir_path(NULL, pid);
			const char *other;

			assert_sockets_fit(dir);
			g_assert_cmpstr(dir, ==, again);
			other = g_hash_table_lookup(seen, dir);
			if (other)
				g_assert_cmpstr(other, ==, pid);
			g_hash_table_insert(seen, g_strdup(dir),
					    g_strdup(pid));
		}
	}
	g_assert_cmpuint(g_hash_table_size(seen), >, 300);
}

static void assert_name(const char *pidfile, const char *name)
{
	g_autofree gchar *got = rundir_instance_name(pidfile);

	g_assert_cmpstr(got, ==, name);
}

static void assert_differ(const char *a, const char *b)
{
	g_autofree gchar *na = rundir_instance_name(a);
	g_autofree gchar *nb = rundir_instance_name(b);

	g_assert_cmpstr(na, !=, nb);
}

static void test_names(void)
{
	g_autofree gchar *hashed = NULL;

	/* Today's readable names where they are unambiguous. */
	assert_name("/run/haproxy.pid", "run-haproxy");
	assert_name("/var/run/haproxy.pid", "var-run-haproxy");
	assert_name(NULL, "haproxy");
	/* The same file however it is spelled. */
	assert_name("/run//./x/../haproxy.pid", "run-haproxy");
	/* A 61-character path: readable end, hash. */
	hashed = rundir_instance_name(
		"/srv/haproxy/instances/blue-eu-west-1a/run/haproxy-public.pid");
	g_assert_true(g_str_has_prefix(hashed,
				       "blue-eu-west-1a-run-haproxy-public@"));
	g_assert_cmpuint(strlen(hashed), ==, strlen("blue-eu-west-1a-run-"
						    "haproxy-public@") + 12);
	/* What "/" made "-" would confuse stays apart. */
	assert_differ("/run/a-b.pid", "/run/a/b.pid");
	assert_differ("/run/haproxy.pid", "/run/haproxy");
	assert_differ("/run/a b.pid", "/run/a_b.pid");
	/* Without -p the name is "haproxy": no pidfile may take it. */
	assert_differ(NULL, "/haproxy.pid");
	/* Never "." or "..": the name is a directory below RUNDIR_BASE. */
	for (guint i = 0; i < 3; i++) {
		static const char *const odd[] = { "/..pid", "/...pid",
						   "/.pid" };
		g_autofree gchar *n = rundir_instance_name(odd[i]);

		g_assert_cmpstr(n, !=, ".");
		g_assert_cmpstr(n, !=, "..");
		g_assert_null(strchr(n, '/'));
	}
}

static void test_runtime_dir_env(void)
{
	g_autofree gchar *a = NULL;
	g_autofree gchar *b = NULL;

	g_setenv("RUNTIME_DIRECTORY", "/run/unit//x:/run/other", TRUE);
	a = rundir_path(NULL, "/run/haproxy.pid");
	g_assert_cmpstr(a, ==, "/run/unit/x");
	b = rundir_path("/tmp/./opt/", "/run/haproxy.pid");
	g_assert_cmpstr(b, ==, "/tmp/opt");
	g_free(b);
	/* Relative to the working directory, as -p is. */
	b = rundir_path("rt", NULL);
	g_assert_true(g_path_is_absolute(b));
	g_assert_true(g_str_has_suffix(b, "/rt"));
	g_unsetenv("RUNTIME_DIRECTORY");
}

/* Clients: one directory when anything names it; with nothing, the
 * packaged unit's, then that of a wrapper without -p. */
static void test_client_paths(void)
{
	g_auto(GStrv) bare = NULL;
	g_auto(GStrv) pid = NULL;
	g_auto(GStrv) opt = NULL;
	g_auto(GStrv) env = NULL;

	g_unsetenv("RUNTIME_DIRECTORY");
	bare = rundir_client_paths(NULL, NULL);
	g_assert_cmpuint(g_strv_length(bare), ==, 2);
	g_assert_cmpstr(bare[0], ==, RUNDIR_BASE "/run-haproxy");
	g_assert_cmpstr(bare[1], ==, RUNDIR_BASE "/haproxy");
	pid = rundir_client_paths(NULL, "/run/other.pid");
	g_assert_cmpuint(g_strv_length(pid), ==, 1);
	g_assert_cmpstr(pid[0], ==, RUNDIR_BASE "/run-other");
	opt = rundir_client_paths("/tmp/rt", NULL);
	g_assert_cmpuint(g_strv_length(opt), ==, 1);
	g_assert_cmpstr(opt[0], ==, "/tmp/rt");
	g_setenv("RUNTIME_DIRECTORY", "/run/unit", TRUE);
	env = rundir_client_paths(NULL, NULL);
	g_assert_cmpuint(g_strv_length(env), ==, 1);
	g_assert_cmpstr(env[0], ==, "/run/unit");
	g_unsetenv("RUNTIME_DIRECTORY");
}

/* ---- trust ---- */

struct tree {
	gchar *tmp;
	const char *root;
};

/* Runtime directories must be short: below /run when the temp root is
 * long (t_short_dir()). */
static void tree_setup(struct tree *t, gconstpointer data)
{
	t->tmp = t_tmpdir();
	t->root = t_short_dir(t->tmp);
}

static void tree_teardown(struct tree *t, gconstpointer data)
{
	t_rmtree(t->tmp);
	g_free(t->tmp);
}

static gchar *mkdir_in(const char *parent, const char *name, mode_t mode,
		       uid_t uid)
{
	gchar *path = g_build_filename(parent, name, NULL);

	g_assert_cmpint(g_mkdir(path, 0700), ==, 0);
	g_assert_cmpint(chmod(path, mode), ==, 0);
	g_assert_cmpint(chown(path, uid, (gid_t)-1), ==, 0);
	return path;
}

static int open_expect(const char *dir, enum rundir_role role, int code)
{
	g_autoptr(GError) error = NULL;
	int fd = rundir_open(dir, role, &error);

	if (code < 0) {
		g_assert_no_error(error);
		g_assert_cmpint(fd, >=, 0);
		return fd;
	}
	g_assert_error(error, RUNDIR_ERROR, code);
	g_assert_cmpint(fd, ==, -1);
	return -1;
}

static gboolean need_root(void)
{
	if (geteuid() == 0)
		return TRUE;
	g_test_skip("needs root to chown");
	return FALSE;
}

/* A /tmp/evil: another user's, mode 777. */
static void test_evil(struct tree *t, gconstpointer data)
{
	g_autofree gchar *evil = NULL;
	g_autofree gchar *mine = NULL;

	if (!need_root())
		return;
	evil = mkdir_in(t->root, "evil", 0777, 65534);
	open_expect(evil, RUNDIR_OWNER, RUNDIR_ERROR_UNTRUSTED);
	g_assert_cmpint(chmod(evil, 0700), ==, 0);
	open_expect(evil, RUNDIR_OWNER, RUNDIR_ERROR_UNTRUSTED);
	open_expect(evil, RUNDIR_CLIENT, RUNDIR_ERROR_UNTRUSTED);
	mine = mkdir_in(t->root, "mine", 0770, 0);
	open_expect(mine, RUNDIR_OWNER, RUNDIR_ERROR_UNTRUSTED);
	open_expect(mine, RUNDIR_CLIENT, RUNDIR_ERROR_UNTRUSTED);
	g_assert_cmpint(chmod(mine, 0755), ==, 0);
	close(open_expect(mine, RUNDIR_OWNER, -1));
	close(open_expect(mine, RUNDIR_CLIENT, -1));
}

/* A safe directory in one that others may write can be renamed away. */
static void test_ancestors(struct tree *t, gconstpointer data)
{
	g_autofree gchar *shared = NULL;
	g_autofree gchar *sticky = NULL;
	g_autofree gchar *below = NULL;
	g_autofree gchar *below_sticky = NULL;
	g_autofree gchar *created = NULL;
	struct stat st;

	if (!need_root())
		return;
	shared = mkdir_in(t->root, "shared", 0777, 0);
	below = mkdir_in(shared, "run", 0700, 0);
	open_expect(below, RUNDIR_OWNER, RUNDIR_ERROR_UNTRUSTED);
	open_expect(below, RUNDIR_CLIENT, RUNDIR_ERROR_UNTRUSTED);
	sticky = mkdir_in(t->root, "sticky", 01777, 0);
	below_sticky = mkdir_in(sticky, "run", 0700, 0);
	close(open_expect(below_sticky, RUNDIR_OWNER, -1));
	/* Another user's directory on the way, even a safe one. */
	g_assert_cmpint(chown(sticky, 65534, (gid_t)-1), ==, 0);
	open_expect(below_sticky, RUNDIR_OWNER, RUNDIR_ERROR_UNTRUSTED);
	/* The owner creates what is missing, private. */
	created = g_build_filename(t->root, "a", "b", "run", NULL);
	close(open_expect(created, RUNDIR_OWNER, -1));
	g_assert_cmpint(stat(created, &st), ==, 0);
	g_assert_cmpint(st.st_mode & 07777, ==, 0700);
	/* A client creates nothing. */
	g_free(created);
	created = g_build_filename(t->root, "c", NULL);
	open_expect(created, RUNDIR_CLIENT, RUNDIR_ERROR_OS);
	g_assert_false(g_file_test(created, G_FILE_TEST_EXISTS));
}

static void test_symlinks(struct tree *t, gconstpointer data)
{
	g_autofree gchar *real = NULL;
	g_autofree gchar *link = g_build_filename(t->root, "link", NULL);
	g_autofree gchar *shared = NULL;
	g_autofree gchar *planted = NULL;

	if (!need_root())
		return;
	/* A symlink in a trusted directory: put there by a trusted user. */
	real = mkdir_in(t->root, "real", 0700, 0);
	g_assert_cmpint(symlink("real", link), ==, 0);
	close(open_expect(link, RUNDIR_OWNER, -1));
	/* In a sticky directory, one that another user owns: its owner
	 * may replace it. */
	shared = mkdir_in(t->root, "shared", 01777, 0);
	planted = g_build_filename(shared, "run", NULL);
	g_assert_cmpint(symlink(real, planted), ==, 0);
	close(open_expect(planted, RUNDIR_OWNER, -1));
	g_assert_cmpint(lchown(planted, 65534, (gid_t)-1), ==, 0);
	open_expect(planted, RUNDIR_OWNER, RUNDIR_ERROR_UNTRUSTED);
	open_expect(planted, RUNDIR_CLIENT, RUNDIR_ERROR_UNTRUSTED);
}

static gchar *read_file(const char *path)
{
	gchar *text = NULL;

	g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
	return text;
}

static void test_write_file(struct tree *t, gconstpointer data)
{
	g_autofree gchar *dir = g_build_filename(t->root, "run", NULL);
	g_autofree gchar *victim = g_build_filename(t->root, "victim", NULL);
	g_autofree gchar *cfg = g_build_filename(dir, "listeners.cfg", NULL);
	g_autofree gchar *sock = g_build_filename(dir, "control.sock", NULL);
	g_autofree gchar *text = NULL;
	g_autoptr(GError) error = NULL;
	struct stat st;
	int fd;

	fd = open_expect(dir, RUNDIR_OWNER, -1);
	g_assert_true(g_file_set_contents(victim, "untouched\n", -1, NULL));
	g_assert_cmpint(symlink(victim, cfg), ==, 0);
	g_assert_true(rundir_write_file(fd, "listeners.cfg", "global\n",
					&error));
	g_assert_no_error(error);
	text = read_file(victim);
	g_assert_cmpstr(text, ==, "untouched\n");
	g_assert_cmpint(lstat(cfg, &st), ==, 0);
	g_assert_true(S_ISREG(st.st_mode));
	g_assert_cmpint(st.st_mode & 0777, ==, 0600);
	g_free(text);
	text = read_file(cfg);
	g_assert_cmpstr(text, ==, "global\n");
	/* A symlink is not the socket a client may talk to. */
	g_assert_cmpint(symlink("/run/systemd/notify", sock), ==, 0);
	g_assert_false(rundir_socket_trusted(fd, "control.sock", &error));
	g_assert_error(error, RUNDIR_ERROR, RUNDIR_ERROR_UNTRUSTED);
	close(fd);
}

static void test_too_long(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *dir = g_strnfill(RUNDIR_PATH_MAX + 1, 'd');

	dir[0] = '/';
	g_assert_cmpint(rundir_open(dir, RUNDIR_OWNER, &error), ==, -1);
	g_assert_error(error, RUNDIR_ERROR, RUNDIR_ERROR_TOO_LONG);
	g_clear_error(&error);
	g_assert_cmpint(rundir_open(dir, RUNDIR_CLIENT, &error), ==, -1);
	g_assert_error(error, RUNDIR_ERROR, RUNDIR_ERROR_TOO_LONG);
	/* The longest that is accepted fits haproxy. */
	dir[RUNDIR_PATH_MAX] = '\0';
	assert_sockets_fit(dir);
}

static void test_config_word(void)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *plain = rundir_config_word("/run/a-b_c.d@1/x.sock",
						     NULL);
	g_autofree gchar *odd = rundir_config_word("/my lb/#1\"'$\\\t\xc3\xa9",
						   NULL);

	g_assert_cmpstr(plain, ==, "/run/a-b_c.d@1/x.sock");
	g_assert_cmpstr(odd, ==,
			"/my\\x20lb/\\x231\\x22\\x27\\x24\\x5c\\x09\\xc3\\xa9");
	/* haproxy splits a socket address at ",", even written \x2c
	 * (str2listener(), 1.5 to 3.x): no word for it. */
	g_assert_null(rundir_config_word("/run/a,b/x.sock", &error));
	g_assert_error(error, RUNDIR_ERROR, RUNDIR_ERROR_UNUSABLE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/rundir/sweep", test_sweep);
	g_test_add_func("/rundir/names", test_names);
	g_test_add_func("/rundir/runtime-directory", test_runtime_dir_env);
	g_test_add_func("/rundir/client-paths", test_client_paths);
	g_test_add_func("/rundir/too-long", test_too_long);
	g_test_add_func("/rundir/config-word", test_config_word);
	g_test_add("/rundir/trust/evil", struct tree, NULL, tree_setup,
		   test_evil, tree_teardown);
	g_test_add("/rundir/trust/ancestors", struct tree, NULL, tree_setup,
		   test_ancestors, tree_teardown);
	g_test_add("/rundir/trust/symlinks", struct tree, NULL, tree_setup,
		   test_symlinks, tree_teardown);
	g_test_add("/rundir/write-file", struct tree, NULL, tree_setup,
		   test_write_file, tree_teardown);
	return g_test_run();
}
