/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pidfiles. Whatever is in one may be stale, truncated or hostile, so the
 * parser is strict and bounded, and reading never blocks or follows a FIFO.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "legacy/pidfile.h"

#include "base/fdio.h"

/* INT_MAX has 10 digits: longer tokens are rejected before any arithmetic. */
#define PID_MAX_DIGITS 10

static gboolean parse_pid_token(const char *tok, gsize len, GPid *pid)
{
	guint64 v = 0;

	if (len == 0 || len > PID_MAX_DIGITS || tok[0] < '1' || tok[0] > '9')
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isdigit(tok[i]))
			return FALSE;
		v = v * 10 + (guint64)(tok[i] - '0');
	}
	if (v > INT_MAX)
		return FALSE;
	*pid = (GPid)v;
	return TRUE;
}

/* isspace() in the C locale; g_ascii_isspace() leaves out '\v'. */
static gboolean is_separator(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* NUL is not whitespace: a token holding one is garbage, not a separator. */
static gsize token_length(const char *s, gsize len)
{
	gsize n = 0;

	while (n < len && !is_separator(s[n]))
		n++;
	return n;
}

GArray *pidfile_parse(const char *content, gsize len, guint *n_invalid)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
	guint invalid = 0;
	gsize i = 0;

	while (i < len) {
		gsize tok_len;
		GPid pid;

		if (is_separator(content[i])) {
			i++;
			continue;
		}
		tok_len = token_length(content + i, len - i);
		if (!parse_pid_token(content + i, tok_len, &pid)) {
			invalid++;
		} else if (g_hash_table_contains(seen, GINT_TO_POINTER(pid))) {
			/* a duplicate is harmless: keep the first */
		} else if (pids->len >= PIDFILE_MAX_PIDS) {
			invalid++;
		} else {
			g_hash_table_add(seen, GINT_TO_POINTER(pid));
			g_array_append_val(pids, pid);
		}
		i += tok_len;
	}
	if (n_invalid != NULL)
		*n_invalid = invalid;
	return pids;
}

static void set_errno_error(GError **error, int errsv, const char *what,
			    const char *path)
{
	g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errsv),
		    "%s '%s': %s", what, path, g_strerror(errsv));
}

static void set_size_error(GError **error, const char *path)
{
	g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
		    "pidfile '%s' is larger than %d bytes", path,
		    PIDFILE_MAX_BYTES);
}

/*
 * Reads all of fd, a regular file of at most PIDFILE_MAX_BYTES. The size is
 * checked again while reading since the file may grow after fstat().
 */
static gboolean read_bounded(int fd, const char *path, gchar **content,
			     gsize *len, GError **error)
{
	g_autofree gchar *buf = NULL;
	struct stat st;
	gssize total;

	if (fstat(fd, &st) < 0) {
		set_errno_error(error, errno, "cannot stat pidfile", path);
		return FALSE;
	}
	if (!S_ISREG(st.st_mode)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			    "pidfile '%s' is not a regular file", path);
		return FALSE;
	}
	if (st.st_size > PIDFILE_MAX_BYTES) {
		set_size_error(error, path);
		return FALSE;
	}
	buf = g_malloc(PIDFILE_MAX_BYTES + 1);
	total = fd_read_upto(fd, buf, PIDFILE_MAX_BYTES + 1);
	if (total < 0) {
		set_errno_error(error, errno, "cannot read pidfile", path);
		return FALSE;
	}
	if (total > PIDFILE_MAX_BYTES) {
		set_size_error(error, path);
		return FALSE;
	}
	*content = g_steal_pointer(&buf);
	*len = total;
	return TRUE;
}

/* O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: a
 * symlink is refused (ELOOP), never followed. */
static int open_no_follow(const char *path)
{
	return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
			  O_NOFOLLOW);
}

gboolean pidfile_read(const char *path, GArray **pids, guint *n_invalid,
		      GError **error)
{
	g_autofree gchar *content = NULL;
	gsize len = 0;
	gboolean ok;
	int fd;

	*pids = NULL;
	if (n_invalid != NULL)
		*n_invalid = 0;
	fd = open_no_follow(path);
	if (fd < 0 && errno == ENOENT) {
		*pids = g_array_new(FALSE, FALSE, sizeof(GPid));
		return TRUE;
	}
	if (fd < 0 && errno == ELOOP) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_LOOP,
			    "pidfile '%s' is a symlink, not followed", path);
		return FALSE;
	}
	if (fd < 0) {
		set_errno_error(error, errno, "cannot open pidfile", path);
		return FALSE;
	}
	ok = read_bounded(fd, path, &content, &len, error);
	close(fd);
	if (!ok)
		return FALSE;
	*pids = pidfile_parse(content, len, n_invalid);
	return TRUE;
}

/* Returns 0 or the errno of the first failure. */
static int fill_temp_file(int fd, const GString *content)
{
	/* haproxy's pidfiles are 0644 whatever the umask; so are ours. */
	if (fchmod(fd, 0644) < 0)
		return errno;
	if (!fd_write_all(fd, content->str, content->len))
		return errno;
	return 0;
}

gboolean pidfile_write(const char *path, const GPid *pids, guint n,
		       GError **error)
{
	g_autofree gchar *tmp = g_strconcat(path, ".XXXXXX", NULL);
	g_autoptr(GString) content = g_string_new(NULL);
	int errsv;
	int fd;

	for (guint i = 0; i < n; i++)
		g_string_append_printf(content, "%d\n", pids[i]);

	fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		set_errno_error(error, errno,
				"cannot create a temporary file for pidfile",
				path);
		return FALSE;
	}
	errsv = fill_temp_file(fd, content);
	if (close(fd) < 0 && errsv == 0)
		errsv = errno;
	if (errsv == 0 && rename(tmp, path) < 0)
		errsv = errno;
	if (errsv != 0) {
		unlink(tmp);
		set_errno_error(error, errsv, "cannot write pidfile", path);
		return FALSE;
	}
	return TRUE;
}

/* Our own regular file, which nobody else can write or link elsewhere. */
static gboolean is_ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	       st->st_nlink == 1;
}

gboolean pidfile_remove_if_ours(const char *path, GPid pid)
{
	g_autofree gchar *content = NULL;
	g_autoptr(GArray) pids = NULL;
	struct stat st, now;
	gsize len = 0;
	gboolean ok;
	int fd = open_no_follow(path);

	if (fd < 0)
		return FALSE;
	ok = fstat(fd, &st) == 0 && is_ours(&st) &&
	     read_bounded(fd, path, &content, &len, NULL);
	close(fd);
	if (!ok)
		return FALSE;
	pids = pidfile_parse(content, len, NULL);
	if (pids->len != 1 || g_array_index(pids, GPid, 0) != pid)
		return FALSE;
	/* Still the file we read, not one renamed there since. */
	if (lstat(path, &now) < 0 || now.st_dev != st.st_dev ||
	    now.st_ino != st.st_ino)
		return FALSE;
	return unlink(path) == 0;
}
