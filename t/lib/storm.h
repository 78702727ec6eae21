/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the storm test (t/int/storm.c) runs beside the wrapper: client
 * commands from any thread, a load of fresh connections in threads, and
 * a reading of what runs below the wrapper.
 */
#pragma once

#include "t/lib/harness.h"

#define LOAD_MAX	1000000	/* safety bound of the load */

struct load {
	guint16 port;
	gint64 until;		/* the time bound */
	GMutex lock;
	GCond changed;		/* requests went up */
	gboolean stop;
	guint requests;
	guint failures;
	gchar *first_failure;
};

struct proc_entry {
	GPid pid;
	GPid ppid;
	char state;
	char comm[16];
};

int run_client(const char *command, const char *opt, const char *rundir_opt,
	       GPid *slot, gchar **out, gchar **err);
gpointer load_run(gpointer data);
guint load_more(struct load *l, guint n);
void load_stop(struct load *l);
gboolean read_stat(GPid pid, struct proc_entry *e);
struct proc_entry *entry_at(GArray *procs, guint i);
gboolean has_pid(GArray *procs, GPid pid);
GArray *tree_below(GPid root);
guint count_comm(GArray *procs, const char *comm);
gchar *describe_procs(GArray *procs);
