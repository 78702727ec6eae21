/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What "status" shows, from the owners. See wrapper/statussource.h. */
#include "wrapper/statussource.h"

#include <unistd.h>

#include "wrapper/steering/reuseport.h"

/* The instances we did not start: taken over at start, or adopted. */
static const GPtrArray *foreign_view(const struct status_owners *o)
{
	const GPtrArray *parts[] = {
		o->takeover ? takeover_instances(o->takeover) : NULL,
		o->adopt ? adopt_instances(o->adopt) : NULL,
	};

	g_ptr_array_set_size(o->foreign_view, 0);
	for (guint i = 0; i < G_N_ELEMENTS(parts); i++)
		for (guint j = 0; parts[i] && j < parts[i]->len; j++)
			g_ptr_array_add(o->foreign_view,
					g_ptr_array_index((GPtrArray *)parts[i],
							  j));
	return o->foreign_view;
}

static const struct foreign *adopted_serving(const struct status_owners *o)
{
	const GPtrArray *in;

	if (!adopt_serving(o->adopt))
		return NULL;
	in = adopt_instances(o->adopt);
	return in->len ? g_ptr_array_index((GPtrArray *)in, 0) : NULL;
}

struct status_view status_source_view(const struct status_owners *o)
{
	for (guint i = 0; i < o->gt->gens->len; i++)
		generation_prune_cohorts(g_ptr_array_index(o->gt->gens, i));
	return (struct status_view){
		.wrapper_pid = getpid(),
		.phase = o->phase,
		.reloads = reloader_reloads(o->reloader),
		.reloads_failed = reloader_reloads_failed(o->reloader),
		.takeovers = o->metrics->takeovers,
		.restarts_adopted = o->metrics->restarts_adopted,
		.adoptions = o->metrics->adoptions,
		.last = reloader_last(o->reloader),
		.failed = &o->gt->failed,
		.gens = o->gt->gens,
		.current = o->gt->current,
		.foreign = foreign_view(o),
		.adopted = adopted_serving(o),
		.reuseport = reuseport_state(o->reuseport),
	};
}

gchar *status_source_summary(const struct status_owners *o)
{
	struct status_view view = status_source_view(o);

	return status_summary(&view);
}
