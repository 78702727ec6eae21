/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "migrate/scan.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "migrate/identity.h"

void node_forget_argv(struct node *n)
{
	g_clear_pointer(&n->argv, g_strfreev);
	g_clear_pointer(&n->argv_error, g_free);
	hap_cmdline_clear(&n->cmd);
	n->argv_read = FALSE;
}

void node_clear(struct node *n)
{
	g_clear_pointer(&n->children, g_array_unref);
	node_forget_argv(n);
	g_free(n->why);
	g_free(n->exe);
	g_free(n->refused);
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
gboolean scan_load(struct scan *s, GError **error)
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

void mark_ours(struct scan *s, GPid pid)
{
	struct node *n = node_of(s, pid);

	/* A ppid loop in a fake (or racing) tree must not recurse forever. */
	if (!g_hash_table_add(s->ours, GINT_TO_POINTER(pid)) || !n)
		return;
	for (guint i = 0; i < child_count(n); i++)
		mark_ours(s, g_array_index(n->children, GPid, i));
}

const char *const *node_argv(struct scan *s, struct node *n)
{
	g_autoptr(GError) error = NULL;
	gboolean whole;

	if (!n->argv_read) {
		n->argv_read = TRUE;
		n->argv = proc_cmdline_at(s->root, n->pid, SCAN_CMDLINE_MAX,
					  &whole, &error);
		if (!whole)
			n->argv_error = g_strdup_printf(
				"longer than %u KiB, more than a haproxy of "
				"this service has", SCAN_CMDLINE_MAX >> 10);
		else if (!n->argv)
			n->argv_error = g_strdup(error->message);
		hap_cmdline_parse((const char *const *)n->argv, &n->cmd);
	}
	return (const char *const *)n->argv;
}

/* A status file's Uid: and Gid: lines come within its first few hundred
 * bytes; a longer head is read the slow way. */
#define STATUS_HEAD 1024

gboolean node_may_be_ours(struct scan *s, struct node *n)
{
	char buf[STATUS_HEAD];
	struct proc_ids ids;
	struct stat dir;
	gssize len = -1;

	/* PID's directory belongs to its effective uid (to root when it is
	 * not dumpable): one stat passes over most of another user's
	 * processes; its status decides for the others. */
	g_snprintf(buf, sizeof(buf), "%d", n->pid);
	if (s->rootfd >= 0 && fstatat(s->rootfd, buf, &dir, 0) == 0 &&
	    dir.st_uid != 0 && !identity_may_own_uid(s->identity, dir.st_uid))
		return FALSE;
	if (s->rootfd >= 0)
		len = proc_read_head_at(s->rootfd, n->pid, "status", buf,
					sizeof(buf));
	if (len >= 0 && proc_parse_ids(buf, len, &ids))
		return identity_may_own(s->identity, &ids);
	return proc_ids_at(s->root, n->pid, &ids, NULL) &&
	       identity_may_own(s->identity, &ids);
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

gboolean verify(struct scan *s, struct node *n)
{
	if (n->verdict == UNCHECKED) {
		n->why = check_haproxy(s, n);
		n->verdict = n->why ? NOT_HAPROXY : HAPROXY;
	}
	return n->verdict == HAPROXY;
}
