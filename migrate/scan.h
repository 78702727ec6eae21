/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One look at a proc tree, for the search of migrate/find.c: every process
 * that could be read, linked to its children, each checked on demand to
 * be a live haproxy.
 */
#pragma once

#include <glib.h>

#include "base/escape.h"
#include "base/proc.h"
#include "migrate/cmdline.h"

enum verdict { UNCHECKED, HAPROXY, NOT_HAPROXY };

/*
 * The longest command line read: all a decision needs. A haproxy of this
 * service has a few hundred bytes (its -f, -p, -x, mode and -sf pids); a
 * longer one is no haproxy the wrapper would start, and is not read on.
 */
#define SCAN_CMDLINE_MAX (64u << 10)

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
	gboolean identity_checked;
	gchar *refused;		/* why it is not this service's own */
	gboolean in_pidfile;	/* the service's pidfile names it */
};

struct scan {
	const char *root;
	int rootfd;		/* root, open; -1: by path */
	const struct identity *identity;	/* migrate/identity.h */
	/* One block for every process read: a scan of a host with many
	 * processes allocates nothing per process it passes over. */
	struct node *store;
	guint stored;
	GHashTable *nodes;	/* GPid -> struct node, in store */
	GHashTable *ours;	/* self and its descendants */
	GPtrArray *skipped;	/* struct foreign_skip */
};

static inline guint child_count(const struct node *n)
{
	return n->children ? n->children->len : 0;
}

static inline struct node *node_of(struct scan *s, GPid pid)
{
	return g_hash_table_lookup(s->nodes, GINT_TO_POINTER(pid));
}

static inline gboolean is_zombie(const struct node *n)
{
	return n->st.state == 'Z' || n->st.state == 'X';
}

/* Untrusted text made fit for a log line. */
static inline gchar *quote(const char *s)
{
	return escape_untrusted(s, ESCAPE_QUOTE_MAX);
}

void node_clear(struct node *n);
/* Every process that can be read now, linked to its children. A process
 * that ends while it is read is simply not there. */
gboolean scan_load(struct scan *s, GError **error);
/* pid and its descendants are ours. */
void mark_ours(struct scan *s, GPid pid);
/* n's command line (read once, at most SCAN_CMDLINE_MAX bytes, then
 * parsed into n->cmd); NULL when it cannot be read, or is longer. */
const char *const *node_argv(struct scan *s, struct node *n);
/* n's command line dropped: n was looked at and is not what is looked
 * for. Read again if it is asked for later. */
void node_forget_argv(struct node *n);
/* Could n belong to a haproxy of this service, by its owner
 * (identity_may_own)? Asked before its command line is read. */
gboolean node_may_be_ours(struct scan *s, struct node *n);
/* Is n a live haproxy? Checked once; when not, n->why tells why. */
gboolean verify(struct scan *s, struct node *n);
