/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The wrapper's descriptor limit (fdlimit.h says why). */
#include "base/fdlimit.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"

static struct rlimit original;
static gboolean raised;
static gboolean told;

void fdlimit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == rl.rlim_max)
		return;
	original = rl;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		raised = TRUE;
}

void fdlimit_restore_for_exec(void)
{
	if (raised)
		setrlimit(RLIMIT_NOFILE, &original);
}

void fdlimit_raise_again(void)
{
	struct rlimit rl = original;

	if (!raised)
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* Descriptors open now in this process. */
static guint fdlimit_in_use(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	guint n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	/* The directory's own descriptor is not in use after this. */
	closedir(d);
	return n ? n - 1 : 0;
}

guint fdlimit_free(void)
{
	struct rlimit rl;
	rlim_t used = fdlimit_in_use() + FDLIMIT_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur <= used)
		return 0;
	return (guint)MIN(rl.rlim_cur - used, G_MAXUINT);
}

guint fdlimit_unit_soft(void)
{
	struct rlimit rl = original;

	if (!raised && getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return G_MAXUINT;
	return (guint)MIN(rl.rlim_cur, G_MAXUINT);
}

void fdlimit_tell_short(const char *what, guint at_least)
{
	struct rlimit rl;
	g_autofree gchar *hint = NULL;

	if (told)
		return;
	told = TRUE;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		rl.rlim_max = 0;
	if (at_least)
		hint = g_strdup_printf(" (LimitNOFILE=%u or more)", at_least);
	log_notice("%s needs more descriptors than the unit gives (soft "
		   "limit %u, hard %lu): raise LimitNOFILE= in the unit%s",
		   what, fdlimit_unit_soft(), (unsigned long)rl.rlim_max,
		   hint ? hint : "");
}
