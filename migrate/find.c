/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Foreign haproxy instances, told apart by their shape in the proc tree
 * (see haproxy-behavior.md §4, §5, §7):
 *  - a master-worker master keeps its workers as children, in its own
 *    session; with -W/-Ws it says so on its command line, with
 *    "master-worker" in the configuration only its children tell;
 *  - a 1.5-1.7 -Ds parent waits for its workers; 1.7 renames it
 *    "<argv0>-master" and blanks its other arguments;
 *  - a -D launcher (-W -D too) forks a daemon, which calls setsid(), and
 *    exits: at once up to 3.0, once the daemon is ready from 3.1. So a
 *    haproxy child in a session of its own is a daemon being started, not
 *    a worker, unless its parent is a -Ds parent.
 */
#include "migrate/find.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/escape.h"
#include "base/proc.h"
#include "legacy/pidfile.h"
#include "migrate/trust.h"

/* Longest piece of untrusted text quoted in a reason. */
#define QUOTE_MAX 200

/* What an haproxy command line says; strings borrowed from its argv. */
struct hap_cmdline {
	gboolean mworker;	/* -W, -Ws */
	gboolean ds;		/* -Ds: 1.x systemd mode; -D from 1.8 on */
	gboolean renamed;	/* argv[0] "...-master": a 1.7 -Ds parent */
	const char *basedir;	/* the last -C */
	GPtrArray *files;	/* -f values, then the "--" tail */
};

/* haproxy's flags that take the next argument, whatever it looks like. */
static gboolean takes_value(const char *arg)
{
	if (arg[1] == '\0')
		return FALSE;
	if (g_str_has_prefix(arg, "-cc"))
		return TRUE;
	return strchr("fpCLNnmxS", arg[1]) != NULL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* haproxy, haproxy-2.6, haproxy26, haproxy-master; not the wrappers
 * (haproxy-systemd-wrapper), which run haproxy rather than being it. */
static gboolean haproxy_name(const char *path)
{
	const char *base = base_name(path);

	return g_str_has_prefix(base, "haproxy") && !strstr(base, "wrapper");
}

static void hap_cmdline_parse(const char *const *argv, struct hap_cmdline *c)
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
			else if (a[1] == 'C')
				c->basedir = argv[i];
		} else if (g_str_has_prefix(a, "-W")) {
			c->mworker = TRUE;
		} else if (g_str_has_prefix(a, "-Ds")) {
			c->ds = TRUE;
		}
	}
}

static void hap_cmdline_clear(struct hap_cmdline *c)
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

static GStrv hap_cmdline_files(const struct hap_cmdline *c, const char *cwd,
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

static GPtrArray *config_targets_new(const char *const *files)
{
	GPtrArray *targets = g_ptr_array_new_with_free_func(config_target_free);

	for (; files && *files; files++) {
		struct config_target *t;
		struct stat st;

		if (!**files)
			continue;
		t = g_new0(struct config_target, 1);
		t->path = g_canonicalize_filename(*files, NULL);
		if (stat(t->path, &st) == 0) {
			t->have_id = TRUE;
			t->dev = st.st_dev;
			t->ino = st.st_ino;
		}
		g_ptr_array_add(targets, t);
	}
	return targets;
}

static gboolean config_matches(GPtrArray *targets, const char *path)
{
	struct stat st;
	gboolean have_id = stat(path, &st) == 0;

	for (guint i = 0; i < targets->len; i++) {
		const struct config_target *t = g_ptr_array_index(targets, i);

		if (strcmp(t->path, path) == 0)
			return TRUE;
		if (have_id && t->have_id && t->dev == st.st_dev &&
		    t->ino == st.st_ino)
			return TRUE;
	}
	return FALSE;
}

/* ---- one look at the proc tree ---- */

enum verdict { UNCHECKED, HAPROXY, NOT_HAPROXY };

struct node {
	GPid pid;
	struct proc_stat st;
	GArray *children;	/* GPid; NULL: none */
	gboolean argv_read;
	GStrv argv;		/* NULL: could not be read */
	gchar *argv_error;
	struct hap_cmdline cmd;
	enum verdict verdict;
	gchar *why;		/* NOT_HAPROXY: the reason */
	gchar *exe;
	gboolean exe_deleted;
	gboolean creds_checked;
	gchar *refused;		/* why its credentials are not ours */
};

static void node_clear(struct node *n)
{
	g_clear_pointer(&n->children, g_array_unref);
	g_strfreev(n->argv);
	g_free(n->argv_error);
	hap_cmdline_clear(&n->cmd);
	g_free(n->why);
	g_free(n->exe);
	g_free(n->refused);
}

static guint child_count(const struct node *n)
{
	return n->children ? n->children->len : 0;
}

struct scan {
	const char *root;
	int rootfd;		/* root, open; -1: by path */
	const char *const *config_files;	/* the wrapper's own */
	/* One block for every process read: a scan of a host with many
	 * processes allocates nothing per process it passes over. */
	struct node *store;
	guint stored;
	GHashTable *nodes;	/* GPid -> struct node, in store */
	GHashTable *ours;	/* self and its descendants */
	GPtrArray *skipped;	/* struct foreign_skip */
};

static struct node *node_of(struct scan *s, GPid pid)
{
	return g_hash_table_lookup(s->nodes, GINT_TO_POINTER(pid));
}

/* n's i-th child, NULL if it was not read. */
static struct node *child_of(struct scan *s, struct node *n, guint i)
{
	return node_of(s, g_array_index(n->children, GPid, i));
}

static gboolean is_ours(struct scan *s, GPid pid)
{
	return g_hash_table_contains(s->ours, GINT_TO_POINTER(pid));
}

static gboolean is_zombie(const struct node *n)
{
	return n->st.state == 'Z' || n->st.state == 'X';
}

/* A stat line is about 300 bytes; a longer one is read the slow way. */
#define STAT_HEAD 1024

static gboolean read_stat(struct scan *s, GPid pid, struct proc_stat *st)
{
	char buf[STAT_HEAD];
	gssize len = -1;

	if (s->rootfd >= 0)
		len = proc_read_head_at(s->rootfd, pid, "stat", buf,
					sizeof(buf));
	if (len >= 0 && (gsize)len < sizeof(buf) - 1)
		return proc_parse_stat(buf, len, st);
	if (len < 0 && s->rootfd >= 0)
		return FALSE;
	return proc_stat_at(s->root, pid, st, NULL);
}

/* Every process that can be read now, linked to its children. A process
 * that ends while it is read is simply not there. */
static gboolean scan_load(struct scan *s, GError **error)
{
	g_autoptr(GArray) pids = proc_list_pids_at(s->root, error);

	if (!pids)
		return FALSE;
	s->rootfd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->store = g_new0(struct node, pids->len);
	for (guint i = 0; i < pids->len; i++) {
		struct node *n = &s->store[s->stored];

		n->pid = g_array_index(pids, GPid, i);
		if (!read_stat(s, n->pid, &n->st))
			continue;
		s->stored++;
		g_hash_table_insert(s->nodes, GINT_TO_POINTER(n->pid), n);
	}
	for (guint i = 0; i < s->stored; i++) {
		struct node *n = &s->store[i], *parent = node_of(s, n->st.ppid);

		if (!parent || parent == n)
			continue;
		if (!parent->children)
			parent->children = g_array_new(FALSE, FALSE,
						       sizeof(GPid));
		g_array_append_val(parent->children, n->pid);
	}
	return TRUE;
}

static void mark_ours(struct scan *s, GPid pid)
{
	struct node *n = node_of(s, pid);

	/* A ppid loop in a fake (or racing) tree must not recurse forever. */
	if (!g_hash_table_add(s->ours, GINT_TO_POINTER(pid)) || !n)
		return;
	for (guint i = 0; i < child_count(n); i++)
		mark_ours(s, g_array_index(n->children, GPid, i));
}

static const char *const *node_argv(struct scan *s, struct node *n)
{
	g_autoptr(GError) error = NULL;

	if (!n->argv_read) {
		n->argv_read = TRUE;
		n->argv = proc_cmdline_at(s->root, n->pid, &error);
		if (!n->argv)
			n->argv_error = g_strdup(error->message);
		hap_cmdline_parse((const char *const *)n->argv, &n->cmd);
	}
	return (const char *const *)n->argv;
}

/* Untrusted text made fit for a log line. */
static gchar *quote(const char *s)
{
	return escape_untrusted(s, QUOTE_MAX);
}

/* A process has no executable link when it is a kernel thread or is
 * gone; else the link could not be read (permissions). */
static gchar *no_exe_reason(struct scan *s, struct node *n, GError *error)
{
	const char *const *argv;

	if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
		argv = node_argv(s, n);
		if (!argv)
			return g_strdup("exited while it was looked at");
		if (!argv[0])
			return g_strdup("a kernel thread");
	}
	return g_strdup_printf("its executable cannot be read (%s)",
			       error->message);
}

/* NULL when n is a live haproxy, else why not. */
static gchar *check_haproxy(struct scan *s, struct node *n)
{
	g_autoptr(GError) error = NULL;
	const char *const *argv;
	g_autofree gchar *exe = NULL, *arg0 = NULL;

	if (is_zombie(n))
		return g_strdup("a zombie: it has exited");
	n->exe = proc_exe_at(s->root, n->pid, &n->exe_deleted, &error);
	if (!n->exe)
		return no_exe_reason(s, n, error);
	exe = quote(n->exe);
	if (!haproxy_name(n->exe))
		return g_strdup_printf("runs %s, not haproxy", exe);
	argv = node_argv(s, n);
	if (!argv)
		return g_strdup_printf("its command line cannot be read (%s)",
				       n->argv_error);
	if (!argv[0])
		return g_strdup("its command line is empty: it is exiting");
	arg0 = quote(argv[0]);
	if (!haproxy_name(argv[0]))
		return g_strdup_printf("runs %s as \"%s\", not as haproxy",
				       exe, arg0);
	return NULL;
}

static gboolean verify(struct scan *s, struct node *n)
{
	if (n->verdict == UNCHECKED) {
		n->why = check_haproxy(s, n);
		n->verdict = n->why ? NOT_HAPROXY : HAPROXY;
	}
	return n->verdict == HAPROXY;
}

static gboolean is_daemon_of(const struct node *child,
			     const struct node *parent)
{
	return child->st.session == child->pid &&
	       child->st.session != parent->st.session;
}

/* Every live child of n is a haproxy: a master by its configuration. */
static gboolean only_haproxy_children(struct scan *s, struct node *n)
{
	for (guint i = 0; i < child_count(n); i++) {
		struct node *c = child_of(s, n, i);

		if (c && !is_zombie(c) && !verify(s, c))
			return FALSE;
	}
	return TRUE;
}

/* Is child (a haproxy whose parent is parent, a haproxy) its worker? */
static gboolean is_worker_of(struct scan *s, struct node *child,
			     struct node *parent)
{
	const struct hap_cmdline *c = &parent->cmd;

	if (c->renamed || (c->ds && !c->mworker))
		return TRUE;
	/* A launcher and the daemon it is starting. */
	if (is_daemon_of(child, parent))
		return FALSE;
	return c->mworker || only_haproxy_children(s, parent);
}

/* The haproxy whose instance n (a verified haproxy) belongs to. */
static struct node *instance_top(struct scan *s, struct node *n)
{
	struct node *parent = node_of(s, n->st.ppid);

	if (parent && parent != n && !is_ours(s, parent->pid) &&
	    verify(s, parent) && is_worker_of(s, n, parent))
		return parent;
	return n;
}

static gint by_start_time(gconstpointer a, gconstpointer b)
{
	const struct node *x = *(struct node *const *)a;
	const struct node *y = *(struct node *const *)b;

	if (x->st.start_time != y->st.start_time)
		return x->st.start_time < y->st.start_time ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* top's workers (struct node, borrowed), oldest first; *daemon gets a
 * haproxy child that is not a worker, if any. */
static GPtrArray *workers_of(struct scan *s, struct node *top,
			     struct node **daemon)
{
	GPtrArray *workers = g_ptr_array_new();

	*daemon = NULL;
	for (guint i = 0; i < child_count(top); i++) {
		struct node *c = child_of(s, top, i);

		if (!c || is_zombie(c) || !verify(s, c))
			continue;
		if (is_worker_of(s, c, top))
			g_ptr_array_add(workers, c);
		else
			*daemon = c;
	}
	g_ptr_array_sort(workers, by_start_time);
	return workers;
}

static enum foreign_kind classify(const struct node *top, GPtrArray *workers)
{
	const struct hap_cmdline *c = &top->cmd;
	gboolean one_session = top->st.session == top->pid;

	if (c->renamed)
		return FOREIGN_DS_PARENT;
	if (c->mworker)
		return FOREIGN_MW_MASTER;
	for (guint i = 0; i < workers->len; i++) {
		const struct node *w = g_ptr_array_index(workers, i);

		if (w->st.session != top->st.session)
			one_session = FALSE;
	}
	/* On >= 1.8, -Ds is -D: a daemonised master whose workers share its
	 * session got master-worker from its configuration. */
	if (c->ds && workers->len > 0 && !one_session)
		return FOREIGN_DS_PARENT;
	return workers->len > 0 ? FOREIGN_MW_MASTER : FOREIGN_STANDALONE;
}

static void add_skip(GPtrArray *skipped, GPid pid, guint found_by,
		     gchar *reason)
{
	struct foreign_skip *skip = g_new0(struct foreign_skip, 1);

	skip->pid = pid;
	skip->found_by = found_by;
	skip->reason = reason;
	g_ptr_array_add(skipped, skip);
}

static GStrv node_config_files(struct scan *s, struct node *n)
{
	g_autofree gchar *cwd = proc_cwd_at(s->root, n->pid);

	node_argv(s, n);
	return hap_cmdline_files(&n->cmd, cwd, TRUE);
}

static struct foreign *foreign_build(struct scan *s, struct node *top,
				     GPtrArray *workers, guint found_by)
{
	struct foreign *f = g_new0(struct foreign, 1);

	f->kind = classify(top, workers);
	f->pid = top->pid;
	f->start_time = top->st.start_time;
	f->workers = g_array_new(FALSE, FALSE, sizeof(GPid));
	f->worker_start_times = g_array_new(FALSE, FALSE, sizeof(guint64));
	f->exe = g_strdup(top->exe);
	f->exe_deleted = top->exe_deleted;
	f->argv = g_strdupv(top->argv);
	f->config_files = node_config_files(s, top);
	f->found_by = found_by;
	for (guint i = 0; i < workers->len; i++) {
		struct node *w = g_ptr_array_index(workers, i);

		g_array_append_val(f->workers, w->pid);
		g_array_append_val(f->worker_start_times, w->st.start_time);
		if (!f->config_files[0]) {
			g_strfreev(f->config_files);
			f->config_files = node_config_files(s, w);
		}
	}
	return f;
}

/* ---- candidates ---- */

static void add_candidate(GHashTable *cands, GPid pid, guint source)
{
	gpointer key = GINT_TO_POINTER(pid);
	guint old = GPOINTER_TO_UINT(g_hash_table_lookup(cands, key));

	g_hash_table_insert(cands, key, GUINT_TO_POINTER(old | source));
}

static void pidfile_candidates(struct scan *s, const char *pidfile,
			       GHashTable *cands)
{
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree gchar *name = NULL;
	guint invalid = 0;

	if (!pidfile)
		return;
	name = quote(pidfile);
	if (!pidfile_read(pidfile, &pids, &invalid, &error)) {
		add_skip(s->skipped, 0, FOREIGN_BY_PIDFILE,
			 g_strdup_printf("ignoring pidfile: %s",
					 error->message));
		return;
	}
	if (invalid)
		add_skip(s->skipped, 0, FOREIGN_BY_PIDFILE,
			 g_strdup_printf("pidfile %s holds %u token(s) "
					 "that are not pids", name, invalid));
	for (guint i = 0; i < pids->len; i++)
		add_candidate(cands, g_array_index(pids, GPid, i),
			      FOREIGN_BY_PIDFILE);
}

/* A program run through a descriptor (fexecve, execveat) has the
 * descriptor's number as its command name on kernels before 6.14. */
static gboolean comm_is_descriptor(const char *comm)
{
	return *comm && comm[strspn(comm, "0123456789")] == '\0';
}

/* Does argv[0] name haproxy? Asked of every process: the command name,
 * already read with stat, first (a cmdline read costs as much again),
 * then argv[0], read into the stack; only a process that passes both has
 * its command line kept. */
static gboolean named_haproxy(struct scan *s, struct node *n)
{
	const char *const *argv;
	char buf[4096];
	gssize len = -1;

	if (!g_str_has_prefix(n->st.comm, "haproxy") &&
	    !comm_is_descriptor(n->st.comm))
		return FALSE;
	if (!n->argv_read && s->rootfd >= 0)
		len = proc_read_head_at(s->rootfd, n->pid, "cmdline", buf,
					sizeof(buf));
	/* A whole argv[0] read (it ends in a NUL, or is all there is). */
	if (len >= 0 && ((gsize)len < sizeof(buf) - 1 || memchr(buf, 0, len)))
		return len > 0 && g_str_has_prefix(base_name(buf), "haproxy");
	argv = node_argv(s, n);
	return argv && argv[0] && g_str_has_prefix(base_name(argv[0]),
						   "haproxy");
}

static gboolean uses_config(struct scan *s, struct node *n, GPtrArray *targets)
{
	g_auto(GStrv) files = NULL;

	/* Cheap test first: most processes are not even named haproxy. A
	 * haproxy-systemd-wrapper passes it, to be reported as skipped. */
	if (!named_haproxy(s, n) || !node_argv(s, n) || !n->argv[0] ||
	    !n->cmd.files->len)
		return FALSE;
	files = node_config_files(s, n);
	for (guint i = 0; files[i]; i++)
		if (config_matches(targets, files[i]))
			return TRUE;
	return FALSE;
}

static void config_candidates(struct scan *s, const char *const *config_files,
			      GHashTable *cands)
{
	g_autoptr(GPtrArray) targets = config_targets_new(config_files);
	GHashTableIter it;
	struct node *n;

	if (!targets->len)
		return;
	g_hash_table_iter_init(&it, s->nodes);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&n))
		if (!is_ours(s, n->pid) && !is_zombie(n) &&
		    uses_config(s, n, targets))
			add_candidate(cands, n->pid, FOREIGN_BY_CONFIG);
}

/* Why a pid was not in the listing (or could not be read from it). */
static gchar *unlisted_reason(struct scan *s, GPid pid)
{
	g_autoptr(GError) error = NULL;
	struct proc_stat st;

	/* Threads are not listed, and neither are processes that started
	 * after the listing: too new to be what the pidfile meant. */
	if (proc_stat_at(s->root, pid, &st, &error))
		return g_strdup("not a listed process (a thread, or too new)");
	if (g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
		return g_strdup("no such process");
	return g_strdup_printf("cannot be read (%s)", error->message);
}

static gint by_pid(gconstpointer a, gconstpointer b)
{
	GPid x = *(const GPid *)a, y = *(const GPid *)b;

	return x < y ? -1 : x > y;
}

/* Started with credentials we could have started it with? Told once an
 * instance in the skipped list when not. */
static gboolean could_be_ours(struct scan *s, struct node *top, guint source)
{
	if (!top->creds_checked) {
		top->creds_checked = TRUE;
		top->refused = foreign_credentials_refusal(s->root, top->pid,
							   s->config_files);
		if (top->refused)
			add_skip(s->skipped, top->pid, source,
				 g_strdup(top->refused));
	}
	return top->refused == NULL;
}

/*
 * Verified candidates go to their instance's top (tops: node -> sources);
 * the others to the skipped list. Our own processes are not foreign and
 * not worth a word.
 */
static void place_candidates(struct scan *s, GHashTable *cands,
			    GHashTable *tops)
{
	g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, cands);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		GPid pid = GPOINTER_TO_INT(key);

		g_array_append_val(pids, pid);
	}
	g_array_sort(pids, by_pid);
	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);
		guint source = GPOINTER_TO_UINT(
			g_hash_table_lookup(cands, GINT_TO_POINTER(pid)));
		struct node *n = node_of(s, pid), *top;
		guint old;

		if (is_ours(s, pid))
			continue;
		if (!n) {
			add_skip(s->skipped, pid, source,
				 unlisted_reason(s, pid));
			continue;
		}
		if (!verify(s, n)) {
			add_skip(s->skipped, pid, source, g_strdup(n->why));
			continue;
		}
		top = instance_top(s, n);
		if (!could_be_ours(s, top, source))
			continue;
		old = GPOINTER_TO_UINT(g_hash_table_lookup(tops, top));
		g_hash_table_insert(tops, top, GUINT_TO_POINTER(old | source));
	}
}

/* One instance a top, oldest first (and so are launchers skipped). */
static GPtrArray *build_instances(struct scan *s, GHashTable *tops)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(
		(GDestroyNotify)foreign_free);
	g_autoptr(GPtrArray) order = g_ptr_array_new();
	GHashTableIter it;
	gpointer top_node;

	g_hash_table_iter_init(&it, tops);
	while (g_hash_table_iter_next(&it, &top_node, NULL))
		g_ptr_array_add(order, top_node);
	g_ptr_array_sort(order, by_start_time);
	for (guint i = 0; i < order->len; i++) {
		struct node *top = g_ptr_array_index(order, i), *daemon;
		g_autoptr(GPtrArray) workers = workers_of(s, top, &daemon);
		guint found_by;

		found_by = GPOINTER_TO_UINT(g_hash_table_lookup(tops, top));

		if (!workers->len && daemon && !top->cmd.renamed) {
			add_skip(s->skipped, top->pid, found_by,
				 g_strdup_printf("a haproxy launcher starting "
						 "its daemon (pid %d); it "
						 "exits by itself",
						 daemon->pid));
			continue;
		}
		g_ptr_array_add(out, foreign_build(s, top, workers, found_by));
	}
	return out;
}

gboolean find_foreign(const char *proc_root, const char *pidfile,
		      const char *const *config_files, GPid self,
		      GPtrArray **out, GPtrArray **skipped, GError **error)
{
	g_autoptr(GHashTable) cands = g_hash_table_new(NULL, NULL);
	g_autoptr(GHashTable) tops = g_hash_table_new(NULL, NULL);
	struct scan s = {
		.root = proc_root,
		.rootfd = -1,
		.config_files = config_files,
		.nodes = g_hash_table_new(NULL, NULL),
		.ours = g_hash_table_new(NULL, NULL),
		.skipped = g_ptr_array_new_with_free_func(
			(GDestroyNotify)foreign_skip_free),
	};
	gboolean ok = scan_load(&s, error);

	*out = NULL;
	if (skipped)
		*skipped = NULL;
	if (ok) {
		mark_ours(&s, self);
		pidfile_candidates(&s, pidfile, cands);
		config_candidates(&s, config_files, cands);
		place_candidates(&s, cands, tops);
		*out = build_instances(&s, tops);
		if (skipped)
			*skipped = g_ptr_array_ref(s.skipped);
	}
	g_hash_table_unref(s.nodes);
	for (guint i = 0; i < s.stored; i++)
		node_clear(&s.store[i]);
	g_free(s.store);
	if (s.rootfd >= 0)
		close(s.rootfd);
	g_hash_table_unref(s.ours);
	g_ptr_array_unref(s.skipped);
	return ok;
}

/* ---- the pidfile alone ---- */

gboolean foreign_pidfile_check(const char *proc_root, const char *pidfile,
			       GPid self, GPtrArray **skipped)
{
	g_autoptr(GHashTable) cands = g_hash_table_new(NULL, NULL);
	struct scan s = {
		.root = proc_root,
		.rootfd = -1,
		.skipped = g_ptr_array_new_with_free_func(
			(GDestroyNotify)foreign_skip_free),
	};
	g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	GHashTableIter it;
	gpointer key;
	gboolean found = FALSE;

	pidfile_candidates(&s, pidfile, cands);
	g_hash_table_iter_init(&it, cands);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		GPid pid = GPOINTER_TO_INT(key);

		g_array_append_val(pids, pid);
	}
	g_array_sort(pids, by_pid);
	for (guint i = 0; i < pids->len; i++) {
		struct node n = { .pid = g_array_index(pids, GPid, i) };

		if (n.pid == self)
			continue;
		/* The search's own checks: executable and command line. */
		if (!proc_stat_at(proc_root, n.pid, &n.st, NULL))
			add_skip(s.skipped, n.pid, FOREIGN_BY_PIDFILE,
				 unlisted_reason(&s, n.pid));
		else if (verify(&s, &n))
			found = TRUE;
		else
			add_skip(s.skipped, n.pid, FOREIGN_BY_PIDFILE,
				 g_strdup(n.why));
		node_clear(&n);
	}
	*skipped = s.skipped;
	return found;
}

/* ---- the results ---- */

gboolean foreign_settled(const char *proc_root, const struct foreign *f)
{
	if (f->kind != FOREIGN_DS_PARENT)
		return proc_catches_signal_at(proc_root, f->pid, SIGUSR1);
	/* The -Ds parent itself never handles a signal: its workers do. */
	for (guint i = 0; i < f->workers->len; i++)
		if (!proc_catches_signal_at(proc_root,
					    g_array_index(f->workers, GPid, i),
					    SIGUSR1))
			return FALSE;
	return f->workers->len > 0;
}

void foreign_free(struct foreign *f)
{
	if (!f)
		return;
	g_array_unref(f->workers);
	g_array_unref(f->worker_start_times);
	g_free(f->exe);
	g_strfreev(f->argv);
	g_strfreev(f->config_files);
	g_free(f);
}

void foreign_skip_free(struct foreign_skip *s)
{
	if (!s)
		return;
	g_free(s->reason);
	g_free(s);
}

const char *foreign_kind_name(enum foreign_kind kind)
{
	switch (kind) {
	case FOREIGN_STANDALONE:
		return "standalone";
	case FOREIGN_DS_PARENT:
		return "-Ds parent";
	case FOREIGN_MW_MASTER:
		return "master-worker master";
	}
	return "unknown";
}

static const char *source_name(guint found_by)
{
	if ((found_by & FOREIGN_BY_PIDFILE) && (found_by & FOREIGN_BY_CONFIG))
		return "pidfile and configuration";
	if (found_by & FOREIGN_BY_PIDFILE)
		return "pidfile";
	return "configuration";
}

gchar *foreign_describe(const struct foreign *f)
{
	g_autoptr(GString) line = g_string_new(NULL);
	g_autofree gchar *exe = quote(f->exe ? f->exe : "?");

	g_string_printf(line, "%s pid %d", foreign_kind_name(f->kind), f->pid);
	for (guint i = 0; i < f->workers->len; i++)
		g_string_append_printf(line, "%s%d", i ? ", " : " (workers ",
				       g_array_index(f->workers, GPid, i));
	if (f->workers->len)
		g_string_append_c(line, ')');
	g_string_append_printf(line, ", %s%s, found by %s", exe,
			       f->exe_deleted ? " (deleted)" : "",
			       source_name(f->found_by));
	return g_string_free(g_steal_pointer(&line), FALSE);
}
