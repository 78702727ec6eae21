/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What "status" shows, from the owners. See wrapper/statussource.h. */
#include "wrapper/statussource.h"

#include <unistd.h>

#include "migrate/adopt.h"
#include "migrate/firststart.h"
#include "migrate/replacement.h"
#include "wrapper/reloader.h"
#include "wrapper/sdnotify.h"
#include "wrapper/steering/reuseport.h"
#include "wrapper/supervisor.h"

/* The instances we did not start: taken over at start, or adopted. */
static const GPtrArray *foreign_view(struct supervisor *sv)
{
	struct takeover *t = first_start_takeover(sv->first);
	struct adopt *a = replacement_adopt(sv->replacement);
	const GPtrArray *parts[] = {
		t ? takeover_instances(t) : NULL,
		a ? adopt_instances(a) : NULL,
	};

	if (!sv->foreign_view)
		sv->foreign_view = g_ptr_array_new();
	g_ptr_array_set_size(sv->foreign_view, 0);
	for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
		for (guint j = 0; parts[i] && j < parts[i]->len; j++)
			g_ptr_array_add(sv->foreign_view,
					g_ptr_array_index((GPtrArray *)parts[i],
							  j));
	return sv->foreign_view;
}

static const struct foreign *adopted_serving(struct supervisor *sv)
{
	struct adopt *a = replacement_adopt(sv->replacement);
	const GPtrArray *in;

	if (!adopt_serving(a))
		return NULL;
	in = adopt_instances(a);
	return in->len ? g_ptr_array_index((GPtrArray *)in, 0) : NULL;
}

struct status_view status_source_view(struct supervisor *sv)
{
	for (guint i = 0; i < sv->gt.gens->len; i++)
		generation_prune_cohorts(g_ptr_array_index(sv->gt.gens, i));
	return (struct status_view){
		.wrapper_pid = getpid(),
		.phase = phase_name(sv->life.phase),
		.reloads = reloader_reloads(sv->reloader),
		.reloads_failed = reloader_reloads_failed(sv->reloader),
		.takeovers = sv->metrics.takeovers,
		.restarts_adopted = sv->metrics.restarts_adopted,
		.adoptions = sv->metrics.adoptions,
		.last = reloader_last(sv->reloader),
		.failed = &sv->gt.failed,
		.gens = sv->gt.gens,
		.current = sv->gt.current,
		.foreign = foreign_view(sv),
		.adopted = adopted_serving(sv),
		.reuseport = reuseport_state(sv->reuseport),
	};
}

gchar *status_source_summary(struct supervisor *sv)
{
	struct status_view view = status_source_view(sv);

	return status_summary(&view);
}

void status_source_tell(struct supervisor *sv)
{
	g_autofree gchar *line = NULL;

	if (reloader_busy(sv->reloader) || sv->life.phase != PHASE_RUNNING)
		return;
	line = status_source_summary(sv);
	notify_status(line);
}
