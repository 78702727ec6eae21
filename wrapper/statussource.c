/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What "status" shows, from the owners. See wrapper/statussource.h. */
#include "wrapper/statussource.h"

#include <unistd.h>

#include "migrate/adopt.h"
#include "wrapper/sdnotify.h"

void status_source_clear(struct status_source *v)
{
	g_clear_pointer(&v->foreign_view, g_ptr_array_unref);
}

/* The instances we did not start: taken over at start, or adopted. */
static const GPtrArray *foreign_view(struct status_source *v)
{
	struct takeover *t = first_start_takeover(v->first);
	struct adopt *a = replacement_adopt(v->replacement);
	const GPtrArray *parts[] = {
		t ? takeover_instances(t) : NULL,
		a ? adopt_instances(a) : NULL,
	};

	if (!v->foreign_view)
		v->foreign_view = g_ptr_array_new();
	g_ptr_array_set_size(v->foreign_view, 0);
	for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
		for (guint j = 0; parts[i] && j < parts[i]->len; j++)
			g_ptr_array_add(v->foreign_view,
					g_ptr_array_index((GPtrArray *)parts[i],
							  j));
	return v->foreign_view;
}

static const struct foreign *adopted_serving(struct status_source *v)
{
	struct adopt *a = replacement_adopt(v->replacement);
	const GPtrArray *in;

	if (!adopt_serving(a))
		return NULL;
	in = adopt_instances(a);
	return in->len ? g_ptr_array_index((GPtrArray *)in, 0) : NULL;
}

struct status_view status_source_view(struct status_source *v)
{
	for (guint i = 0; i < v->gt->gens->len; i++)
		generation_prune_cohorts(g_ptr_array_index(v->gt->gens, i));
	return (struct status_view){
		.wrapper_pid = getpid(),
		.phase = phase_name(v->life->phase),
		.reloads = reloader_reloads(v->reloader),
		.reloads_failed = reloader_reloads_failed(v->reloader),
		.takeovers = v->metrics->takeovers,
		.restarts_adopted = v->metrics->restarts_adopted,
		.adoptions = v->metrics->adoptions,
		.last = reloader_last(v->reloader),
		.failed = &v->gt->failed,
		.gens = v->gt->gens,
		.current = v->gt->current,
		.foreign = foreign_view(v),
		.adopted = adopted_serving(v),
		.reuseport = reuseport_state(v->reuseport),
	};
}

gchar *status_source_summary(struct status_source *v)
{
	struct status_view view = status_source_view(v);

	return status_summary(&view);
}

void status_source_tell(struct status_source *v)
{
	g_autofree gchar *line = NULL;

	if (reloader_busy(v->reloader) || v->life->phase != PHASE_RUNNING)
		return;
	line = status_source_summary(v);
	notify_status(line);
}
