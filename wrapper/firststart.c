/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The first start: a takeover, or the pidfile's strangers noticed. See
 * wrapper/firststart.h. */
#include "wrapper/firststart.h"

#include <errno.h>
#include <signal.h>

#include "base/escape.h"
#include "base/log.h"
#include "base/proc.h"
#include "legacy/pidfile.h"
#include "wrapper/replacement.h"
#include "wrapper/spawn.h"

struct first_start {
	const struct wrapper_args *args;
	const struct wrapper_options *opts;
	struct reloader *reloader;
	struct reuseport *reuseport;
	struct launcher *launcher;
	struct takeover *takeover;	/* foreign instances, first start */
};

struct first_start *first_start_new(const struct wrapper_args *args,
				    const struct wrapper_options *opts,
				    struct reloader *reloader,
				    struct reuseport *reuseport,
				    struct launcher *launcher)
{
	struct first_start *f = g_new0(struct first_start, 1);

	f->args = args;
	f->opts = opts;
	f->reloader = reloader;
	f->reuseport = reuseport;
	f->launcher = launcher;
	return f;
}

void first_start_free(struct first_start *f)
{
	if (!f)
		return;
	takeover_free(f->takeover);
	g_free(f);
}

struct takeover *first_start_takeover(const struct first_start *f)
{
	return f->takeover;
}

/* A pidfile naming live processes we did not start: say so, touch none. */
static void pidfile_notice_strangers(struct first_start *f)
{
	g_autoptr(GArray) pids = NULL;
	g_autoptr(GError) error = NULL;
	guint invalid = 0;

	if (!f->args->pidfile)
		return;
	if (!pidfile_read(f->args->pidfile, &pids, &invalid, &error)) {
		log_warn("ignoring pidfile: %s", error->message);
		return;
	}
	if (invalid)
		log_notice("pidfile %s holds %u token(s) that are not pids",
			   f->args->pidfile, invalid);
	for (guint i = 0; i < pids->len; i++) {
		GPid pid = g_array_index(pids, GPid, i);
		g_autofree gchar *exe = proc_exe(pid);
		g_autofree gchar *shown = NULL;

		if (!exe && kill(pid, 0) < 0 && errno == ESRCH)
			continue;
		/* Another user may have named that executable. */
		shown = exe ? escape_untrusted(exe, 0)
			    : g_strdup("unknown program");
		log_notice("pidfile %s names pid %d (%s), which this wrapper "
			   "did not start; it gets no signal from us",
			   f->args->pidfile, pid, shown);
	}
}

static void on_takeover_settled(gpointer data)
{
	struct first_start *f = data;

	/* Before our generation's -sf makes them close their listeners. */
	reuseport_attach_foreign(f->reuseport, takeover_instances(f->takeover));
	reloader_post(f->reloader, RE_SETTLED, NULL);
}

/* The first generation: after a takeover of what already runs, if any. */
void first_start_begin(struct first_start *f)
{
	g_auto(GStrv) argv = NULL;
	g_autofree gchar *cwd = NULL;

	if (!f->opts->takeover) {
		pidfile_notice_strangers(f);
		reloader_post(f->reloader, RE_SETTLED, NULL);
		return;
	}
	/* On a busy host the search takes long: haproxy -v runs meanwhile. */
	launcher_probe_early(f->launcher);
	argv = own_haproxy_argv(f->args);
	cwd = g_get_current_dir();
	f->takeover = takeover_begin(f->args->pidfile,
				     (const char *const *)argv, cwd,
				     on_takeover_settled, f);
}
