/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fdio.h"
#include "migrate/trust.h"

G_DEFINE_QUARK(rundir-error-quark, rundir_error)

/* Under RUNDIR_BASE "/", so that every socket fits. */
#define NAME_MAX_LEN	(RUNDIR_PATH_MAX - (int)sizeof(RUNDIR_BASE "/") + 1)
#define HASH_LEN	12
#define MAX_SYMLINKS	40

/* Letters, digits, "_", "." and "/" only: "/" made "-" is then
 * reversible, and the name never holds the "@" of a hashed one. */
static gboolean plain_path(const char *body)
{
	if (!g_ascii_isalnum(*body) && *body != '_')
		return FALSE;	/* never "." or ".." or hidden */
	for (const char *p = body; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("_./", *p))
			return FALSE;
	return g_str_has_suffix(body, ".pid") && strlen(body) > 4;
}

/* body without ".pid", "/" made "-", anything unusual made "_". */
static gchar *readable(const char *body)
{
	gchar *name = g_strdup(body);

	if (g_str_has_suffix(name, ".pid") && strlen(name) > 4)
		name[strlen(name) - 4] = '\0';
	for (char *p = name; *p; p++) {
		if (*p == '/')
			*p = '-';
		else if (!g_ascii_isalnum(*p) && !strchr("_.-", *p))
			*p = '_';
	}
	return name;
}

gchar *rundir_instance_name(const char *pidfile)
{
	g_autofree gchar *path = NULL;
	g_autofree gchar *name = NULL;
	g_autofree gchar *hash = NULL;
	const char *tail;

	if (!pidfile || !*pidfile)
		return g_strdup("haproxy");
	path = g_canonicalize_filename(pidfile, "/");
	name = readable(path + 1);
	/* "haproxy" is the name without a pidfile: hashed, so no pidfile
	 * ("/haproxy.pid") shares its directory. */
	if (plain_path(path + 1) && strlen(name) <= NAME_MAX_LEN &&
	    strcmp(name, "haproxy") != 0)
		return g_steal_pointer(&name);
	hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, path, -1);
	hash[HASH_LEN] = '\0';
	/* The end of the path tells instances apart best. */
	tail = name;
	if (strlen(tail) > NAME_MAX_LEN - 1 - HASH_LEN) {
		tail += strlen(tail) - (NAME_MAX_LEN - 1 - HASH_LEN);
		/* From a whole component on, if there is one. */
		if (tail[-1] != '-' && strchr(tail, '-'))
			tail = strchr(tail, '-');
	}
	while (*tail == '.' || *tail == '-')
		tail++;
	return g_strdup_printf("%s@%s", *tail ? tail : "haproxy", hash);
}

gboolean rundir_is_default(const char *option)
{
	const char *env = g_getenv("RUNTIME_DIRECTORY");

	return !(option && *option) && !(env && *env);
}

gchar *rundir_path(const char *option, const char *pidfile)
{
	const char *env = g_getenv("RUNTIME_DIRECTORY");
	g_autofree gchar *dir = NULL;
	g_autofree gchar *name = NULL;

	/* A relative one is relative to the working directory, as -p is. */
	if (option && *option)
		return g_canonicalize_filename(option, NULL);
	/* systemd lists several directories separated by colons. */
	if (env && *env) {
		dir = g_strndup(env, strcspn(env, ":"));
		return g_canonicalize_filename(dir, "/");
	}
	name = rundir_instance_name(pidfile);
	return g_build_filename(RUNDIR_BASE, name, NULL);
}

gchar **rundir_client_paths(const char *option, const char *pidfile)
{
	g_autoptr(GPtrArray) dirs = g_ptr_array_new();

	if (!rundir_is_default(option) || (pidfile && *pidfile)) {
		g_ptr_array_add(dirs, rundir_path(option, pidfile));
	} else {
		/* Nothing says which: the packaged unit's service first,
		 * then a wrapper started without -p. */
		g_ptr_array_add(dirs, rundir_path(NULL,
						  RUNDIR_PACKAGED_PIDFILE));
		g_ptr_array_add(dirs, rundir_path(NULL, NULL));
	}
	g_ptr_array_add(dirs, NULL);
	return (gchar **)g_ptr_array_free(g_steal_pointer(&dirs), FALSE);
}

/* ---- opening it, trusted ---- */

/* A directory on the way must not let anybody else rename or replace
 * what it holds: it is not writable by others, or sticky (then only an
 * entry's owner may). */
static gboolean ancestor_ok(const struct stat *st)
{
	return trusted_owner(st->st_uid) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) ||
		(st->st_mode & S_ISVTX));
}

static gboolean final_ok(const struct stat *st, enum rundir_role role)
{
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return FALSE;
	return role == RUNDIR_CLIENT ? trusted_owner(st->st_uid)
				     : st->st_uid == geteuid();
}

static gboolean refuse(const char *dir, const char *what,
		       const struct stat *st, enum rundir_role role,
		       gboolean last, GError **error)
{
	g_set_error(error, RUNDIR_ERROR, RUNDIR_ERROR_UNTRUSTED,
		    "runtime directory %s: %s is owned by uid %u with mode "
		    "%04o; it must be owned by %suid %u and writable by no "
		    "one else%s", dir, what, (unsigned)st->st_uid,
		    (unsigned)(st->st_mode & 07777),
		    last && role == RUNDIR_OWNER ? "" : "root or ",
		    (unsigned)geteuid(), last ? "" : " (unless sticky)");
	return FALSE;
}

static gboolean os_error(const char *dir, const char *what, int err,
			 GError **error)
{
	g_set_error(error, RUNDIR_ERROR, RUNDIR_ERROR_OS,
		    "runtime directory %s: cannot open %s: %s", dir, what,
		    g_strerror(err));
	return FALSE;
}

/* Push the components of path in front of the queue, in order. */
static void push_components(GQueue *q, const char *path)
{
	g_auto(GStrv) parts = g_strsplit(path, "/", -1);

	for (int i = g_strv_length(parts) - 1; i >= 0; i--)
		if (*parts[i])
			g_queue_push_head(q, g_strdup(parts[i]));
}

/* A symlink in a trusted directory, and owned by a trusted user (in a
 * sticky directory its owner may replace it): its target is walked. */
static gboolean follow_link(int fd, const char *name, GQueue *q, int *hops,
			    gboolean *absolute)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(fd, name, target, sizeof(target) - 1);

	if (n < 0)
		return FALSE;
	if (++*hops > MAX_SYMLINKS) {
		errno = ELOOP;
		return FALSE;
	}
	target[n] = '\0';
	push_components(q, target);
	*absolute = target[0] == '/';
	return TRUE;
}

/* openat() one level down, creating it if asked to. */
static int open_below(int fd, const char *name, gboolean create,
		      gboolean last)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int sub = openat(fd, name, flags);

	if (sub < 0 && errno == ENOENT && create) {
		if (mkdirat(fd, name, last ? 0700 : 0755) < 0 &&
		    errno != EEXIST)
			return -1;
		sub = openat(fd, name, flags);
	}
	return sub;
}

static void queue_free_ptr(GQueue **q)
{
	g_queue_free_full(*q, g_free);
}

static int walk(const char *dir, enum rundir_role role, GError **error)
{
	/* What is left to walk: freed with what it holds on every path. */
	__attribute__((cleanup(queue_free_ptr))) GQueue *q = g_queue_new();
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int hops = 0;
	struct stat st;

	push_components(q, dir);
	if (fd < 0 || fstat(fd, &st) < 0) {
		os_error(dir, "/", errno, error);
		goto fail;
	}
	if (!ancestor_ok(&st)) {
		refuse(dir, "/", &st, role, FALSE, error);
		goto fail;
	}
	while (!g_queue_is_empty(q)) {
		g_autofree gchar *name = g_queue_pop_head(q);
		gboolean last = g_queue_is_empty(q);
		gboolean absolute = FALSE;
		int sub = open_below(fd, name, role == RUNDIR_OWNER, last);

		if (sub < 0 && (errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			if (!trusted_owner(st.st_uid)) {
				refuse(dir, name, &st, role, FALSE, error);
				goto fail;
			}
			if (!follow_link(fd, name, q, &hops, &absolute)) {
				os_error(dir, name, errno, error);
				goto fail;
			}
			if (absolute) {
				close(fd);
				fd = open("/", O_RDONLY | O_DIRECTORY |
						       O_CLOEXEC);
			}
			continue;
		}
		if (sub < 0 || fstat(sub, &st) < 0) {
			os_error(dir, name, errno, error);
			if (sub >= 0)
				close(sub);
			goto fail;
		}
		close(fd);
		fd = sub;
		if (last ? !final_ok(&st, role) : !ancestor_ok(&st)) {
			refuse(dir, last ? "it" : name, &st, role, last, error);
			goto fail;
		}
	}
	if (!S_ISDIR(st.st_mode) || !final_ok(&st, role)) {
		refuse(dir, "it", &st, role, TRUE, error);
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int rundir_open_nosocket(const char *dir, enum rundir_role role,
			 GError **error)
{
	if (!g_path_is_absolute(dir)) {
		g_set_error(error, RUNDIR_ERROR, RUNDIR_ERROR_UNTRUSTED,
			    "runtime directory %s: not an absolute path", dir);
		return -1;
	}
	return walk(dir, role, error);
}

int rundir_open(const char *dir, enum rundir_role role, GError **error)
{
	if (g_path_is_absolute(dir) && strlen(dir) > RUNDIR_PATH_MAX) {
		g_set_error(error, RUNDIR_ERROR, RUNDIR_ERROR_TOO_LONG,
			    "runtime directory %s: %zu characters, at most %d "
			    "fit haproxy's socket paths", dir, strlen(dir),
			    RUNDIR_PATH_MAX);
		return -1;
	}
	return rundir_open_nosocket(dir, role, error);
}

/* ---- inside it ---- */

gboolean rundir_write_file(int dirfd, const char *name, const char *text,
			   GError **error)
{
	g_autofree gchar *tmp = g_strdup_printf(".%s.tmp", name);
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dirfd, tmp, flags, 0600);
	gboolean ok;

	if (fd < 0 && errno == EEXIST) {
		/* Left by a wrapper that died writing it. */
		unlinkat(dirfd, tmp, 0);
		fd = openat(dirfd, tmp, flags, 0600);
	}
	if (fd < 0)
		goto fail;
	/* No fsync: it cost 0.4 to 3 ms on a disk before the first haproxy
	 * could start, and these files are rebuilt when lost or torn (the
	 * fragment at every start, the version cache, checked when read,
	 * by a new probe). */
	ok = fd_write_all(fd, text, strlen(text));
	if (close(fd) < 0 || !ok ||
	    renameat(dirfd, tmp, dirfd, name) < 0) {
		int saved = errno;

		unlinkat(dirfd, tmp, 0);
		errno = saved;
		goto fail;
	}
	return TRUE;
fail:
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
		    "cannot write %s: %s", name, g_strerror(errno));
	return FALSE;
}

gboolean rundir_socket_trusted(int dirfd, const char *name, GError **error)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
			    "%s: %s", name, g_strerror(errno));
		return FALSE;
	}
	if (!S_ISSOCK(st.st_mode) || !trusted_owner(st.st_uid)) {
		g_set_error(error, RUNDIR_ERROR, RUNDIR_ERROR_UNTRUSTED,
			    "%s is not a socket owned by root or uid %u", name,
			    (unsigned)geteuid());
		return FALSE;
	}
	return TRUE;
}

gchar *rundir_config_word(const char *path, GError **error)
{
	GString *word;

	/* haproxy splits a socket address at "," (even written \x2c). */
	if (strchr(path, ',')) {
		g_set_error(error, RUNDIR_ERROR, RUNDIR_ERROR_UNUSABLE,
			    "%s: haproxy reads \",\" in a socket path as a "
			    "separator", path);
		return NULL;
	}
	word = g_string_new(NULL);

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (g_ascii_isalnum(*p) || strchr("/._@-", *p))
			g_string_append_c(word, *p);
		else
			g_string_append_printf(word, "\\x%02x", *p);
	}
	return g_string_free(word, FALSE);
}

gchar *rundir_control_socket(const char *dir)
{
	return g_build_filename(dir, RUNDIR_CONTROL_SOCKET, NULL);
}

gchar *rundir_expose_socket(const char *dir)
{
	return g_build_filename(dir, RUNDIR_EXPOSE_SOCKET, NULL);
}

gchar *rundir_expose_config(const char *dir)
{
	return g_build_filename(dir, RUNDIR_EXPOSE_CONFIG, NULL);
}

gchar *rundir_notify_socket(const char *dir)
{
	return g_build_filename(dir, RUNDIR_NOTIFY_SOCKET, NULL);
}

gchar *rundir_handoff_note(const char *dir)
{
	return g_build_filename(dir, "handed-off", NULL);
}
