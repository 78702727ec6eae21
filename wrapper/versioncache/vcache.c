/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/versioncache/vcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/fdio.h"
#include "base/log.h"
#include "wrapper/rundir.h"

#define VCACHE_MAGIC "haproxy-systemd-wrapper version cache 1"
#define VCACHE_MAX 4096

/* The file's text for this identity; the version goes last. */
static gchar *key_text(const char *path, const struct stat *st)
{
	return g_strdup_printf(VCACHE_MAGIC "\npath=%s\ndev=%ju\nino=%ju\n"
			       "size=%jd\nmtime=%jd.%09ld\nctime=%jd.%09ld\n",
			       path, (uintmax_t)st->st_dev,
			       (uintmax_t)st->st_ino, (intmax_t)st->st_size,
			       (intmax_t)st->st_mtim.tv_sec,
			       st->st_mtim.tv_nsec,
			       (intmax_t)st->st_ctim.tv_sec,
			       st->st_ctim.tv_nsec);
}

/* Its content, if the file is one we wrote: ours, not a link, not
 * writable by anyone else, small. */
static gssize read_trusted(int dirfd, char *buf, gsize size)
{
	struct stat st;
	gssize total;
	int fd = openat(dirfd, VCACHE_FILE,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    st.st_size >= (off_t)size) {
		close(fd);
		return -1;
	}
	total = fd_read_upto(fd, buf, size - 1);
	close(fd);
	if (total >= 0)
		buf[total] = '\0';
	return total;
}

/* The version stored for path, if the file in the directory dirfd holds
 * one for exactly this identity (st: stat() of path). */
static gboolean vcache_read(int dirfd, const char *path,
			    const struct stat *st, struct haproxy_version *out)
{
	g_autofree gchar *key = key_text(path, st);
	g_autofree gchar *line = NULL;
	gsize klen = strlen(key);
	char buf[VCACHE_MAX];
	const char *version;
	gssize len = read_trusted(dirfd, buf, sizeof(buf));

	if (len < 0 || (gsize)len <= klen || memcmp(buf, key, klen) != 0 ||
	    !g_str_has_prefix(buf + klen, "version="))
		return FALSE;
	version = buf + klen + strlen("version=");
	/* One token and a newline, nothing after. */
	if (!*version || strcspn(version, " \t\n") != strlen(version) - 1 ||
	    version[strlen(version) - 1] != '\n')
		return FALSE;
	line = g_strdup_printf("HAProxy version %s", version);
	return haproxy_version_parse(line, out);
}

/* Stores it (atomically, mode 0600). */
static gboolean vcache_write(int dirfd, const char *path,
			     const struct stat *st,
			     const struct haproxy_version *v)
{
	g_autofree gchar *key = key_text(path, st);
	g_autofree gchar *text = NULL;

	/* A path with a newline would make a key that cannot match. */
	if (strchr(path, '\n') || !*v->full || strpbrk(v->full, " \t\n"))
		return FALSE;
	text = g_strdup_printf("%sversion=%s\n", key, v->full);
	return strlen(text) < VCACHE_MAX &&
	       rundir_write_file(dirfd, VCACHE_FILE, text, NULL);
}

/* The directory where the version is kept, verified anew, or -1 when
 * there is none. systemd's CacheDirectory= comes first when the unit has
 * one (the first of $CACHE_DIRECTORY), as RuntimeDirectory= is removed at
 * every stop and /run at every boot; else our runtime directory (rundir,
 * NULL when it is not ours). *dir gets its path, for the log. */
static int open_cache_dir(const char *rundir, gchar **dir)
{
	const char *env = g_getenv("CACHE_DIRECTORY");

	if (env && *env) {
		g_autofree gchar *first = g_strndup(env, strcspn(env, ":"));

		*dir = g_canonicalize_filename(first, "/");
	} else if (rundir) {
		*dir = g_strdup(rundir);
	} else {
		*dir = NULL;
		return -1;
	}
	/* It holds no socket: a long path is no reason to probe again. */
	return rundir_open_nosocket(*dir, RUNDIR_OWNER, NULL);
}

gboolean version_cache_load(struct version_cache *vc, const char *rundir,
			    const char *path, const struct stat *st)
{
	struct haproxy_version v;
	g_autofree gchar *dir = NULL;
	int dirfd = open_cache_dir(rundir, &dir);
	gboolean found;

	if (dirfd < 0)
		return FALSE;
	found = vcache_read(dirfd, path, st, &v);
	close(dirfd);
	if (!found)
		return FALSE;
	log_debug("haproxy %s: version from %s/%s", v.full, dir, VCACHE_FILE);
	g_free(vc->path);
	vc->path = g_strdup(path);
	vc->st = *st;
	vc->version = v;
	return TRUE;
}

void version_cache_store(const struct version_cache *vc, const char *rundir)
{
	g_autofree gchar *dir = NULL;
	int dirfd;

	if (!vc->path)
		return;
	dirfd = open_cache_dir(rundir, &dir);
	if (dirfd < 0)
		return;
	vcache_write(dirfd, vc->path, &vc->st, &vc->version);
	close(dirfd);
}
