/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Foreign haproxy instances, told apart by their shape in the proc tree,
 * as haproxy 1.5 to 3.x lay out their processes:
 *  - a master-worker master keeps its workers as children, in its own
 *    session; with -W/-Ws it says so on its command line, with
 *    "master-worker" in the configuration only its children tell;
 *  - a 1.5-1.7 -Ds parent waits for its workers; 1.7 renames it
 *    "<argv0>-master" and blanks its other arguments;
 *  - a -D launcher (-W -D too) forks a daemon, which calls setsid(), and
 *    exits: at once up to 3.0, once the daemon is ready from 3.1. So a
 *    haproxy child in a session of its own is a daemon being started, not
 *    a worker, unless its parent is a -Ds parent, or a -W master the
 *    pidfile names: 1.8's -W -D workers call setsid() as well.
 */
#include "migrate/find.h"

#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "legacy/pidfile.h"
#include "migrate/cmdline.h"
#include "migrate/identity.h"
#include "migrate/scan.h"

/* n's i-th child, NULL if it was not read. */
static struct node *child_of(struct scan *s, struct node *n, guint i)
{
	return node_of(s, g_array_index(n->children, GPid, i));
}

static gboolean is_ours(struct scan *s, GPid pid)
{
	return g_hash_table_contains(s->ours, GINT_TO_POINTER(pid));
}

static gboolean is_daemon_of(const struct node *child,
			     const struct node *parent)
{
	return child->st.session == child->pid &&
	       child->st.session != parent->st.session;
}

/* Is every live child of n a haproxy? Then n is a master, made one by
 * its configuration (its command line does not say so). */
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
	/* A -W haproxy the pidfile names is the master, never its
	 * launcher; 1.8's workers of a -W -D master call setsid() too. */
	if (c->mworker && parent->in_pidfile)
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

#define UNLISTED_GONE "no such process"

static gchar *unlisted_reason(struct scan *s, GPid pid);

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
	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);
		struct node *n = s->nodes ? node_of(s, pid) : NULL;

		if (n)
			n->in_pidfile = TRUE;
		add_candidate(cands, pid, FOREIGN_BY_PIDFILE);
	}
}

/* A program run through a descriptor (fexecve, execveat) has the
 * descriptor's number as its command name on kernels before 6.14. */
static gboolean comm_is_descriptor(const char *comm)
{
	return *comm && comm[strspn(comm, "0123456789")] == '\0';
}

/*
 * Could n be a haproxy of ours, named so? Asked of every process, each
 * look cheaper than the next and allocating nothing: the command name,
 * already read with stat; its owner (a process of another user is passed
 * over before anything of its command line is read: any local user can
 * start processes named haproxy, with megabytes of arguments each); then
 * argv[0], read into the stack. Only a process that passes them all has
 * its command line read, bounded.
 */
static gboolean named_haproxy(struct scan *s, struct node *n)
{
	const char *const *argv;
	char buf[4096];
	gssize len = -1;

	if (!g_str_has_prefix(n->st.comm, "haproxy") &&
	    !comm_is_descriptor(n->st.comm))
		return FALSE;
	if (!node_may_be_ours(s, n))
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

static gboolean loads_one_of(struct scan *s, struct node *n,
			     GPtrArray *targets)
{
	g_auto(GStrv) files = NULL;

	if (!node_argv(s, n) || !n->argv[0] || !n->cmd.files->len)
		return FALSE;
	files = node_config_files(s, n);
	for (guint i = 0; files[i]; i++)
		if (config_matches(targets, files[i]))
			return TRUE;
	return FALSE;
}

/* Cheap tests first: most processes are not even named haproxy. A
 * haproxy-systemd-wrapper passes them, to be reported as skipped. What
 * loads none of our files is dropped at once: a scan holds the command
 * lines of its candidates only. */
static gboolean uses_config(struct scan *s, struct node *n, GPtrArray *targets)
{
	if (named_haproxy(s, n) && loads_one_of(s, n, targets))
		return TRUE;
	node_forget_argv(n);
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

/* A pid that was not in the listing, and why (or could not be read
 * from it); gone: it names no process. */
static void add_unlisted(struct scan *s, GPid pid, guint found_by)
{
	gchar *reason = unlisted_reason(s, pid);
	struct foreign_skip *skip;

	add_skip(s->skipped, pid, found_by, reason);
	skip = g_ptr_array_index(s->skipped, s->skipped->len - 1);
	skip->gone = g_str_equal(reason, UNLISTED_GONE);
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
		return g_strdup(UNLISTED_GONE);
	return g_strdup_printf("cannot be read (%s)", error->message);
}

/* The candidates' pids, in order: what is told comes out the same way
 * whatever the hash table's order. */
static GArray *sorted_pids(GHashTable *cands)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(GPid));
	GHashTableIter it;
	gpointer key;

	g_hash_table_iter_init(&it, cands);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		GPid pid = GPOINTER_TO_INT(key);

		g_array_append_val(pids, pid);
	}
	g_array_sort(pids, proc_pid_cmp);
	return pids;
}

/* Why top is not this service's own, or NULL. Its -p and -f are read
 * from its first worker when it names neither (a 1.7 -Ds parent blanks
 * its arguments). */
static gchar *own_refusal(struct scan *s, struct node *top)
{
	struct node *from = top, *daemon;
	g_autofree gchar *cwd = NULL;

	if (!node_argv(s, top))
		return g_strdup("its command line cannot be read");
	if (!top->cmd.files->len && !top->cmd.pidfile) {
		g_autoptr(GPtrArray) workers = workers_of(s, top, &daemon);

		if (workers->len && node_argv(s, workers->pdata[0]))
			from = workers->pdata[0];
	}
	cwd = proc_cwd_at(s->root, from->pid);
	return identity_refusal(s->identity, top->pid, node_argv(s, from),
				cwd);
}

/* Is top this service's own haproxy (migrate/identity.h)? When it is not,
 * the instance is put once in the skipped list, with why. */
static gboolean is_own(struct scan *s, struct node *top, guint source)
{
	if (!top->identity_checked) {
		top->identity_checked = TRUE;
		top->refused = own_refusal(s, top);
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
	g_autoptr(GArray) pids = sorted_pids(cands);

	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);
		guint source = GPOINTER_TO_UINT(
			g_hash_table_lookup(cands, GINT_TO_POINTER(pid)));
		struct node *n = node_of(s, pid), *top;
		guint old;

		if (is_ours(s, pid))
			continue;
		if (!n) {
			add_unlisted(s, pid, source);
			continue;
		}
		if (!verify(s, n)) {
			add_skip(s->skipped, pid, source, g_strdup(n->why));
			continue;
		}
		top = instance_top(s, n);
		if (!is_own(s, top, source))
			continue;
		old = GPOINTER_TO_UINT(g_hash_table_lookup(tops, top));
		g_hash_table_insert(tops, top, GUINT_TO_POINTER(old | source));
	}
}

/* One instance for each top, oldest first. A launcher still starting its
 * daemon is skipped (it exits by itself), in the same order. */
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
		      const char *const *config_files, const char *fragment,
		      GPid self, GPtrArray **out, GPtrArray **skipped,
		      GError **error)
{
	g_autoptr(GHashTable) cands = g_hash_table_new(NULL, NULL);
	g_autoptr(GHashTable) tops = g_hash_table_new(NULL, NULL);
	g_autoptr(Identity) id = identity_new(proc_root, pidfile, config_files,
					      fragment, self);
	struct scan s = {
		.root = proc_root,
		.rootfd = -1,
		.identity = id,
		.nodes = g_hash_table_new(NULL, NULL),
		.ours = g_hash_table_new(NULL, NULL),
		.skipped = g_ptr_array_new_with_free_func(
			(GDestroyNotify)foreign_skip_free),
	};
	gboolean ok = scan_load(&s, error);

	*out = NULL;
	if (skipped)
		*skipped = NULL;
	if (ok && identity_pidfile_distrust(id)) {
		/* Whoever wrote it chose what it names: nothing is ours. */
		add_skip(s.skipped, 0, FOREIGN_BY_PIDFILE,
			 g_strdup_printf("%s: nothing is taken over, adopted "
					 "or stopped",
					 identity_pidfile_distrust(id)));
		*out = g_ptr_array_new_with_free_func(
			(GDestroyNotify)foreign_free);
	} else if (ok) {
		mark_ours(&s, self);
		pidfile_candidates(&s, pidfile, cands);
		config_candidates(&s, config_files, cands);
		place_candidates(&s, cands, tops);
		*out = build_instances(&s, tops);
	}
	if (ok && skipped)
		*skipped = g_ptr_array_ref(s.skipped);
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

/* Is n (a haproxy the pidfile names) this service's own, its command
 * line read alone, without the tree around it? */
static gboolean pidfile_pid_is_own(struct scan *s, struct node *n)
{
	g_autofree gchar *cwd = proc_cwd_at(s->root, n->pid);

	n->refused = identity_refusal(s->identity, n->pid, node_argv(s, n),
				      cwd);
	return n->refused == NULL;
}

gboolean foreign_pidfile_check(const char *proc_root, const char *pidfile,
			       const char *const *config_files,
			       const char *fragment, GPid self,
			       GPtrArray **skipped)
{
	g_autoptr(GHashTable) cands = g_hash_table_new(NULL, NULL);
	g_autoptr(Identity) id = identity_new(proc_root, pidfile, config_files,
					      fragment, self);
	struct scan s = {
		.root = proc_root,
		.rootfd = -1,
		.identity = id,
		.skipped = g_ptr_array_new_with_free_func(
			(GDestroyNotify)foreign_skip_free),
	};
	g_autoptr(GArray) pids = NULL;
	gboolean found = FALSE;

	/* An untrusted pidfile names nothing; the search says so. */
	if (!identity_pidfile_distrust(id))
		pidfile_candidates(&s, pidfile, cands);
	pids = sorted_pids(cands);
	for (guint i = 0; i < pids->len; i++) {
		struct node n = { .pid = g_array_index(pids, GPid, i) };

		if (n.pid == self)
			continue;
		/* The search's own checks: executable and command line,
		 * then the pid's own -p and -f, as a worker shows them. */
		if (!proc_stat_at(proc_root, n.pid, &n.st, NULL))
			add_unlisted(&s, n.pid, FOREIGN_BY_PIDFILE);
		else if (!verify(&s, &n))
			add_skip(s.skipped, n.pid, FOREIGN_BY_PIDFILE,
				 g_strdup(n.why));
		else if (!pidfile_pid_is_own(&s, &n))
			add_skip(s.skipped, n.pid, FOREIGN_BY_PIDFILE,
				 g_strdup(n.refused));
		else
			found = TRUE;
		node_clear(&n);
	}
	*skipped = s.skipped;
	return found;
}
