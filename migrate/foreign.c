/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the search reports: a foreign instance, and a pid it passed over. */
#include "migrate/find.h"

#include <signal.h>

#include "base/proc.h"
#include "migrate/scan.h"

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
