/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "base/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sockdiag.h"

#define DELETED_SUFFIX " (deleted)"

/* Field 4 of /proc/pid/stat; the command name before it may hold any
 * character, ")" included, so parse from the last ")". */
GPid proc_parent(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/stat", pid);
	g_autofree gchar *stat = NULL;
	const char *p;
	char state;
	int ppid;

	if (pid <= 0 || !g_file_get_contents(path, &stat, NULL, NULL))
		return 0;
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
		return 0;
	return ppid;
}

gboolean proc_parse_pid(const char *name, GPid *pid)
{
	guint64 v;

	if (!g_ascii_string_to_unsigned(name, 10, 1, G_MAXINT, &v, NULL))
		return FALSE;
	*pid = (GPid)v;
	return TRUE;
}

gboolean proc_pids_contain(const GArray *pids, GPid pid)
{
	for (guint i = 0; i < pids->len; i++)
		if (g_array_index(pids, GPid, i) == pid)
			return TRUE;
	return FALSE;
}

static gint by_pid(gconstpointer a, gconstpointer b)
{
	GPid x = *(const GPid *)a, y = *(const GPid *)b;

	return x < y ? -1 : x > y;
}

static gchar *read_at_most(const char *path, gsize max, gsize *len,
			   GError **error);

/* Most children one task's list is read for: far above pid_max's use. */
#define CHILDREN_MAX (8u << 20)

/* Does this kernel list children (CONFIG_PROC_CHILDREN)? */
static gboolean kernel_lists_children(void)
{
	static int known = -1;

	if (known < 0) {
		g_autofree gchar *path = g_strdup_printf(
			"/proc/self/task/%d/children", (int)gettid());

		known = access(path, R_OK) == 0;
	}
	return known;
}

/* Reads of a children list before it is taken as unstable. */
#define CHILDREN_READS 8

/*
 * A children list read twice the same. A child reaped while the kernel
 * walks the list makes it skip the children after it (a master reaps
 * its old worker as the reload verdict looks for the new one); the
 * reaped one is then on no later read, so two equal reads skipped none
 * alive throughout. NULL: gone, or *unstable when it never held still.
 */
static gchar *read_children(const char *path, gboolean *unstable)
{
	g_autofree gchar *last = NULL;
	gsize len;

	last = read_at_most(path, CHILDREN_MAX, &len, NULL);
	for (guint i = 1; last && i < CHILDREN_READS; i++) {
		g_autofree gchar *again = read_at_most(path, CHILDREN_MAX,
						       &len, NULL);

		if (!again || strcmp(again, last) == 0)
			return g_steal_pointer(&again);
		g_free(last);
		last = g_steal_pointer(&again);
	}
	*unstable = last != NULL;
	return NULL;
}

/*
 * The kernel's own lists, PID/task/TID/children (a child is on the list
 * of the thread that forked it): a cost that does not grow with the
 * host, where a scan reads every process. FALSE without such lists, or
 * when one kept changing.
 */
static gboolean children_of_tasks(GPid parent, GArray *pids)
{
	g_autofree gchar *task_dir = g_strdup_printf("/proc/%d/task", parent);
	g_autoptr(GDir) dir = NULL;
	const char *tid;

	if (!kernel_lists_children())
		return FALSE;
	/* Gone: no children, as a scan would find. */
	dir = g_dir_open(task_dir, 0, NULL);
	while (dir && (tid = g_dir_read_name(dir))) {
		g_autofree gchar *path = g_build_filename(task_dir, tid,
							  "children", NULL);
		g_autofree gchar *text = NULL;
		g_auto(GStrv) words = NULL;
		gboolean unstable = FALSE;

		/* A thread that ended meanwhile left its children to another. */
		text = read_children(path, &unstable);
		if (unstable)
			return FALSE;
		if (!text)
			continue;
		words = g_strsplit(text, " ", -1);
		for (guint i = 0; words[i]; i++) {
			GPid pid;

			if (proc_parse_pid(g_strstrip(words[i]), &pid))
				g_array_append_val(pids, pid);
		}
	}
	return TRUE;
}

GArray *proc_children(GPid parent)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	g_autoptr(GDir) dir = NULL;
	const char *name;

	if (parent > 0 && children_of_tasks(parent, pids)) {
		/* In pid order, as the scan gives them. */
		g_array_sort(pids, by_pid);
		return pids;
	}
	g_array_set_size(pids, 0);
	dir = g_dir_open("/proc", 0, NULL);
	while (dir && (name = g_dir_read_name(dir))) {
		GPid pid;

		if (proc_parse_pid(name, &pid) && proc_parent(pid) == parent)
			g_array_append_val(pids, pid);
	}
	return pids;
}

gchar *proc_exe(GPid pid)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/exe", pid);
	gchar *target = g_file_read_link(link, NULL);

	if (target && g_str_has_suffix(target, DELETED_SUFFIX))
		target[strlen(target) - strlen(DELETED_SUFFIX)] = '\0';
	return target;
}

int proc_open_if_child_of(GPid pid, GPid expected_parent)
{
	int fd;

	if (pid <= 0)
		return -1;
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return -1;
	/* Checked after the open: the pidfd pins the process we verified. */
	if (proc_parent(pid) != expected_parent) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

guint64 proc_socket_inode(GPid pid, const char *fd_name)
{
	g_autofree gchar *link = g_strdup_printf("/proc/%d/fd/%s", pid, fd_name);
	g_autofree gchar *target = g_file_read_link(link, NULL);

	if (!target || !g_str_has_prefix(target, "socket:["))
		return 0;
	return g_ascii_strtoull(target + 8, NULL, 10);
}

/* 1 listening, 0 not, -1 when it cannot be told (pidfd_getfd refused). */
static int fd_listens(int pidfd, int fd)
{
	int dup = pidfd_getfd(pidfd, fd, 0);
	int listening = 0;
	socklen_t len = sizeof(listening);

	if (dup < 0)
		return -1;
	if (getsockopt(dup, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0)
		listening = 0;
	close(dup);
	return listening ? 1 : 0;
}

static GHashTable *inode_set_new(void)
{
	return g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

/* The LISTEN (0A) entries of a tcp or tcp6 table: the kernel lists the
 * listening sockets first, so the read stops at the first other one. */
static void add_tcp_listeners(GHashTable *inodes, const char *path)
{
	FILE *f = fopen(path, "re");
	g_autofree char *line = NULL;
	size_t size = 0;
	char st[3];
	guint64 ino;

	if (!f)
		return;
	/* After the header: sl local rem st queues tr retrnsmt uid timeout
	 * inode ... */
	if (getline(&line, &size, f) > 0)
		while (getline(&line, &size, f) > 0 &&
		       sscanf(line, "%*s %*s %*s %2s %*s %*s %*s %*s %*s %"
			      G_GUINT64_FORMAT, st, &ino) == 2 &&
		       strcmp(st, "0A") == 0)
			if (ino)
				g_hash_table_add(inodes,
						 g_memdup2(&ino, sizeof(ino)));
	fclose(f);
}

GHashTable *proc_net_tcp_listeners(const char *net_dir)
{
	GHashTable *inodes = inode_set_new();
	g_autofree gchar *tcp = g_build_filename(net_dir, "tcp", NULL);
	g_autofree gchar *tcp6 = g_build_filename(net_dir, "tcp6", NULL);

	add_tcp_listeners(inodes, tcp);
	add_tcp_listeners(inodes, tcp6);
	return inodes;
}

gboolean proc_same_netns(GPid pid)
{
	g_autofree gchar *path = g_strdup_printf("/proc/%d/ns/net", pid);
	struct stat self, other;

	/* Another user's process: ns/net needs ptrace access. */
	return stat("/proc/self/ns/net", &self) == 0 &&
	       stat(path, &other) == 0 && self.st_dev == other.st_dev &&
	       self.st_ino == other.st_ino;
}

GHashTable *proc_tcp_listeners(GPid pid)
{
	g_autofree gchar *net_dir = NULL;

	/* sock_diag answers for our namespace only. */
	if (proc_same_netns(pid)) {
		GHashTable *inodes = sockdiag_tcp_listeners(NULL);

		if (inodes)
			return inodes;
	}
	net_dir = g_strdup_printf("/proc/%d/net", pid);
	return proc_net_tcp_listeners(net_dir);
}

GHashTable *proc_listening_inodes(GPid pid)
{
	g_autofree gchar *dir_path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	g_autoptr(GHashTable) net = NULL;
	GHashTable *inodes;
	const char *name;
	int pidfd = pidfd_open(pid, 0);

	if (pidfd < 0 || !dir) {
		if (pidfd >= 0)
			close(pidfd);
		return NULL;
	}
	inodes = inode_set_new();
	while ((name = g_dir_read_name(dir))) {
		guint64 ino = proc_socket_inode(pid, name);
		int listens = ino ? fd_listens(pidfd, atoi(name)) : 0;

		if (listens < 0 && !net)
			net = proc_tcp_listeners(pid);
		if (listens > 0 ||
		    (listens < 0 && g_hash_table_contains(net, &ino)))
			g_hash_table_add(inodes, g_memdup2(&ino, sizeof(ino)));
	}
	close(pidfd);
	return inodes;
}

gboolean proc_holds_any_socket(GPid pid, GHashTable *inodes)
{
	g_autofree gchar *dir_path = g_strdup_printf("/proc/%d/fd", pid);
	g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
	const char *name;

	while (dir && (name = g_dir_read_name(dir))) {
		guint64 ino = proc_socket_inode(pid, name);

		if (ino && g_hash_table_contains(inodes, &ino))
			return TRUE;
	}
	return FALSE;
}

gint64 proc_start_time_us(guint64 ticks)
{
	g_autofree gchar *stat = NULL;
	const char *btime;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || !g_file_get_contents("/proc/stat", &stat, NULL, NULL))
		return 0;
	btime = strstr(stat, "\nbtime ");
	if (!btime)
		return 0;
	return g_ascii_strtoll(btime + 7, NULL, 10) * G_USEC_PER_SEC +
	       (gint64)(ticks * G_USEC_PER_SEC / hz);
}

gboolean proc_pidfd_signal(int pidfd, int sig)
{
	return pidfd_send_signal(pidfd, sig, NULL, 0) == 0;
}

/* ---- proc trees under any root, and their untrusted content ---- */

/* The next run of non-space bytes in [*p, end), advancing *p past it. */
static gboolean next_token(const char **p, const char *end, const char **tok,
			   gsize *len)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	*tok = s;
	while (s < end && *s != ' ' && *s != '\n')
		s++;
	*len = (gsize)(s - *tok);
	*p = s;
	return *len > 0;
}

/* A decimal token, optionally negative, fitting a gint64. */
static gboolean token_to_int64(const char *tok, gsize len, gint64 *v)
{
	gboolean neg = len > 0 && tok[0] == '-';
	guint64 acc = 0;

	if (neg) {
		tok++;
		len--;
	}
	/* 19 digits always fit a gint64: no overflow check needed. */
	if (len == 0 || len > 19)
		return FALSE;
	for (gsize i = 0; i < len; i++) {
		if (!g_ascii_isdigit(tok[i]))
			return FALSE;
		acc = acc * 10 + (guint64)(tok[i] - '0');
	}
	if (acc > G_MAXINT64)
		return FALSE;
	*v = neg ? -(gint64)acc : (gint64)acc;
	return TRUE;
}

static gboolean token_to_pid(const char *tok, gsize len, GPid *pid)
{
	gint64 v;

	if (!token_to_int64(tok, len, &v) || v < 0 || v > G_MAXINT)
		return FALSE;
	*pid = (GPid)v;
	return TRUE;
}

/* Fields after the command name, numbered as in proc(5). */
enum {
	STAT_STATE = 3,
	STAT_PPID = 4,
	STAT_SESSION = 6,
	STAT_START_TIME = 22,
};

gboolean proc_parse_stat(const char *text, gsize len, struct proc_stat *out)
{
	const char *close, *p, *end, *tok;
	struct proc_stat st = { 0 };
	gint64 v;
	gsize n;

	if (!text)
		return FALSE;
	close = memrchr(text, ')', len);
	end = text + len;
	/* The name may hold ")" itself: only the last one closes it. */
	if (!close || !memchr(text, '(', (gsize)(close - text)))
		return FALSE;
	p = memchr(text, '(', (gsize)(close - text)) + 1;
	n = MIN((gsize)(close - p), sizeof(st.comm) - 1);
	memcpy(st.comm, p, n);
	p = close + 1;
	if (!next_token(&p, end, &tok, &n) || n != 1 || !g_ascii_isalpha(*tok))
		return FALSE;
	st.state = *tok;
	for (int field = STAT_STATE + 1; field <= STAT_START_TIME; field++) {
		if (!next_token(&p, end, &tok, &n))
			return FALSE;
		if (field == STAT_PPID && !token_to_pid(tok, n, &st.ppid))
			return FALSE;
		if (field == STAT_SESSION && !token_to_pid(tok, n, &st.session))
			return FALSE;
		if (field == STAT_START_TIME) {
			if (!token_to_int64(tok, n, &v) || v < 0)
				return FALSE;
			st.start_time = (guint64)v;
		}
	}
	*out = st;
	return TRUE;
}

GStrv proc_parse_cmdline(const char *data, gsize len)
{
	g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
	gsize start = 0;

	/* What follows the last argument is padding, not empty arguments. */
	while (len > 0 && data[len - 1] == '\0')
		len--;
	while (start < len && argv->len < PROC_ARGV_MAX) {
		const char *nul = memchr(data + start, '\0', len - start);
		gsize stop = nul ? (gsize)(nul - data) : len;

		g_ptr_array_add(argv, g_strndup(data + start, stop - start));
		start = stop + 1;
	}
	g_ptr_array_add(argv, NULL);
	return (GStrv)g_ptr_array_free(g_steal_pointer(&argv), FALSE);
}

GArray *proc_list_pids_at(const char *root, GError **error)
{
	g_autoptr(GDir) dir = g_dir_open(root, 0, error);
	GArray *pids;
	const char *name;

	if (!dir)
		return NULL;
	pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	while ((name = g_dir_read_name(dir))) {
		GPid pid;

		if (proc_parse_pid(name, &pid))
			g_array_append_val(pids, pid);
	}
	return pids;
}

static gchar *pid_path(const char *root, GPid pid, const char *what)
{
	g_autofree gchar *dir = g_strdup_printf("%d", pid);

	return g_build_filename(root, dir, what, NULL);
}

/* All of a small file, at most max bytes (the rest is dropped). */
static gchar *read_at_most(const char *path, gsize max, gsize *len,
			   GError **error)
{
	g_autofree gchar *buf = NULL;
	gsize total = 0, size = MIN(4096, max);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0) {
		int errsv = errno;

		g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errsv),
			    "%s: %s", path, g_strerror(errsv));
		return NULL;
	}
	buf = g_malloc(size + 1);
	for (;;) {
		ssize_t r;

		if (total == size && size < max) {
			size = MIN(size * 2, max);
			buf = g_realloc(buf, size + 1);
		}
		if (total == size)
			break;
		r = read(fd, buf + total, size - total);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int errsv = errno;

			g_set_error(error, G_FILE_ERROR,
				    g_file_error_from_errno(errsv), "%s: %s",
				    path, g_strerror(errsv));
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		total += (gsize)r;
	}
	close(fd);
	buf[total] = '\0';
	*len = total;
	return g_steal_pointer(&buf);
}

/* A stat line is a few hundred bytes; a name cannot make it reach this. */
gssize proc_read_head_at(int dirfd, GPid pid, const char *name, char *buf,
			 gsize size)
{
	char path[64];
	gsize total = 0;
	int fd;

	g_return_val_if_fail(size > 1, -1);
	g_snprintf(path, sizeof(path), "%d/%s", pid, name);
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	while (total < size - 1) {
		ssize_t r = read(fd, buf + total, size - 1 - total);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int errsv = errno;

			close(fd);
			errno = errsv;
			return -1;
		}
		if (r == 0)
			break;
		total += (gsize)r;
	}
	close(fd);
	buf[total] = '\0';
	return (gssize)total;
}

#define STAT_MAX 4096

/* status is a few kB; the groups line alone can make it longer. */
#define STATUS_MAX (256u << 10)

/* The files of PID read whole and parsed by one of the proc_parse_*. */
enum pid_file { PID_STAT, PID_SIGMASKS, PID_IDS };

static const struct {
	const char *name;
	gsize max;
	const char *lacking;	/* the error when it does not parse */
} pid_files[] = {
	[PID_STAT] = { "stat", STAT_MAX, "not a stat line" },
	[PID_SIGMASKS] = { "status", STATUS_MAX, "no signal masks" },
	[PID_IDS] = { "status", STATUS_MAX, "no Uid: and Gid: lines" },
};

static gboolean parse_as(enum pid_file f, const char *text, gsize len,
			 gpointer out)
{
	switch (f) {
	case PID_STAT:
		return proc_parse_stat(text, len, out);
	case PID_SIGMASKS:
		return proc_parse_sigmasks(text, len, out);
	case PID_IDS:
		return proc_parse_ids(text, len, out);
	}
	return FALSE;
}

static gboolean parse_pid_file(const char *root, GPid pid, enum pid_file f,
			       gpointer out, GError **error)
{
	g_autofree gchar *path = pid_path(root, pid, pid_files[f].name);
	g_autofree gchar *text = NULL;
	gsize len = 0;

	text = read_at_most(path, pid_files[f].max, &len, error);
	if (!text)
		return FALSE;
	if (!parse_as(f, text, len, out)) {
		g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s",
			    path, pid_files[f].lacking);
		return FALSE;
	}
	return TRUE;
}

gboolean proc_stat_at(const char *root, GPid pid, struct proc_stat *out,
		      GError **error)
{
	return parse_pid_file(root, pid, PID_STAT, out, error);
}

GStrv proc_cmdline_at(const char *root, GPid pid, GError **error)
{
	g_autofree gchar *path = pid_path(root, pid, "cmdline");
	g_autofree gchar *data = NULL;
	gsize len = 0;

	data = read_at_most(path, PROC_CMDLINE_MAX, &len, error);
	return data ? proc_parse_cmdline(data, len) : NULL;
}

gchar *proc_exe_at(const char *root, GPid pid, gboolean *deleted,
		   GError **error)
{
	g_autofree gchar *path = pid_path(root, pid, "exe");
	gchar *target = g_file_read_link(path, error);
	gboolean gone = target && g_str_has_suffix(target, DELETED_SUFFIX);

	if (gone)
		target[strlen(target) - strlen(DELETED_SUFFIX)] = '\0';
	if (deleted)
		*deleted = gone;
	return target;
}

gchar *proc_cwd_at(const char *root, GPid pid)
{
	g_autofree gchar *path = pid_path(root, pid, "cwd");

	return g_file_read_link(path, NULL);
}

gboolean proc_same_process_at(const char *root, GPid pid, guint64 start_time)
{
	struct proc_stat st;

	return proc_stat_at(root, pid, &st, NULL) &&
	       st.start_time == start_time && st.state != 'Z' &&
	       st.state != 'X';
}

/* The rest of the first line of [text, text + len) that starts with key,
 * as [*value, *stop). */
static gboolean find_line(const char *text, gsize len, const char *key,
			  const char **value, const char **stop)
{
	gsize klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (gsize)(end - p));

		*stop = eol ? eol : end;
		if ((gsize)(*stop - p) > klen && memcmp(p, key, klen) == 0) {
			*value = p + klen;
			return TRUE;
		}
		p = *stop + 1;
	}
	return FALSE;
}

/* "Key:\t<16 hex digits>" at the start of a line of [text, text + len). */
static gboolean find_mask(const char *text, gsize len, const char *key,
			  guint64 *mask)
{
	const char *v, *stop;
	guint64 acc = 0;
	gsize n = 0;

	if (!find_line(text, len, key, &v, &stop))
		return FALSE;
	while (v < stop && (*v == '\t' || *v == ' '))
		v++;
	for (; v < stop && n <= 16; v++, n++) {
		if (!g_ascii_isxdigit(*v))
			break;
		acc = acc << 4 | (guint64)g_ascii_xdigit_value(*v);
	}
	if (v != stop || n == 0 || n > 16)
		return FALSE;
	*mask = acc;
	return TRUE;
}

gboolean proc_parse_sigmasks(const char *text, gsize len,
			     struct proc_sigmasks *out)
{
	struct proc_sigmasks m;

	if (!text || !find_mask(text, len, "SigBlk:", &m.blocked) ||
	    !find_mask(text, len, "SigIgn:", &m.ignored) ||
	    !find_mask(text, len, "SigCgt:", &m.caught))
		return FALSE;
	*out = m;
	return TRUE;
}

gboolean proc_sigmasks_at(const char *root, GPid pid,
			  struct proc_sigmasks *out, GError **error)
{
	return parse_pid_file(root, pid, PID_SIGMASKS, out, error);
}

gboolean proc_catches_signal_at(const char *root, GPid pid, int sig)
{
	struct proc_sigmasks m;

	if (sig < 1 || sig > 64 || !proc_sigmasks_at(root, pid, &m, NULL))
		return FALSE;
	return (m.caught & PROC_SIGBIT(sig)) && !(m.blocked & PROC_SIGBIT(sig));
}

/* "Key:\t<4 decimal ids>" at the start of a line of [text, text + len). */
static gboolean find_ids(const char *text, gsize len, const char *key,
			 guint32 ids[4])
{
	const char *v, *stop;
	g_autofree gchar *line = NULL;
	g_auto(GStrv) f = NULL;
	guint n = 0;

	if (!find_line(text, len, key, &v, &stop))
		return FALSE;
	line = g_strndup(v, (gsize)(stop - v));
	f = g_strsplit_set(g_strstrip(line), "\t ", -1);
	for (guint i = 0; f[i]; i++) {
		guint64 id;

		if (!*f[i])
			continue;
		if (n == 4 || !g_ascii_string_to_unsigned(f[i], 10, 0,
							   G_MAXUINT32, &id,
							   NULL))
			return FALSE;
		ids[n++] = (guint32)id;
	}
	return n == 4;
}

gboolean proc_parse_ids(const char *text, gsize len, struct proc_ids *out)
{
	struct proc_ids ids;

	if (!text || !find_ids(text, len, "Uid:", ids.uid) ||
	    !find_ids(text, len, "Gid:", ids.gid))
		return FALSE;
	*out = ids;
	return TRUE;
}

gboolean proc_ids_at(const char *root, GPid pid, struct proc_ids *out,
		     GError **error)
{
	return parse_pid_file(root, pid, PID_IDS, out, error);
}
