/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/status.h"

#include <string.h>

#include "base/escape.h"
#include "base/jsonlib.h"
#include "base/proc.h"
#include "migrate/find.h"

static gchar *iso_time(gint64 us)
{
	g_autoptr(GDateTime) t = g_date_time_new_from_unix_utc(us / G_USEC_PER_SEC);

	return t ? g_date_time_format_iso8601(t) : g_strdup("?");
}

static void text_pids(GString *s, const GArray *pids)
{
	for (guint i = 0; i < pids->len; i++)
		g_string_append_printf(s, " %d", g_array_index(pids, GPid, i));
}

/* A master's workers: those of its last load, then older ones. */
static void text_workers(GString *s, const struct generation *g)
{
	if (g->workers->len) {
		g_string_append_printf(s, "generation %u workers", g->number);
		text_pids(s, g->workers);
		g_string_append(s, " current\n");
	}
	for (guint i = 0; i < g->cohorts->len; i++) {
		const struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);

		g_string_append_printf(s, "generation %u workers", g->number);
		text_pids(s, c->pids);
		g_string_append(s, c->terminated ? " terminated\n"
						 : " draining\n");
	}
}

static void text_generation(GString *s, const struct generation *g)
{
	g_autofree gchar *started = iso_time(g->started_us);

	g_string_append_printf(s, "generation %u pid %d haproxy %s started %s "
			       "%s%s\n", g->number, g->pid, g->version, started,
			       generation_state_name(g->state),
			       g->mode == LAUNCH_MW ? " master" : "");
	if (g->mode == LAUNCH_MW)
		text_workers(s, g);
}

static void text_last(GString *s, const struct reload_report *r)
{
	g_autofree gchar *at = NULL;

	if (!r->valid) {
		g_string_append(s, "last reload: none\n");
		return;
	}
	at = iso_time(r->ended_us);
	g_string_append_printf(s, "last reload: %s in %" G_GINT64_FORMAT
			       " ms at %s: %s\n", r->ok ? "ok" : "failed",
			       r->duration_us / 1000, at, r->message);
}

gchar *status_text(const struct status_view *v)
{
	GString *s = g_string_new(NULL);

	g_string_append_printf(s, "wrapper pid %d version %s %s\n",
			       v->wrapper_pid, WRAPPER_VERSION, v->phase);
	/* By result: a failed reload is a reload too. */
	g_string_append_printf(s, "reloads %u ok %u failed %u\n",
			       v->reloads + v->reloads_failed, v->reloads,
			       v->reloads_failed);
	text_last(s, v->last);
	for (guint i = v->gens->len; i-- > 0;)
		text_generation(s, g_ptr_array_index((GPtrArray *)v->gens, i));
	for (guint i = 0; v->foreign && i < v->foreign->len; i++) {
		const struct foreign *f = g_ptr_array_index(
			(GPtrArray *)v->foreign, i);

		g_autofree gchar *started =
			iso_time(proc_start_time_us(f->start_time));
		g_autofree gchar *exe = escape_untrusted(f->exe, 0);

		g_string_append_printf(s, "foreign pid %d %s %s started %s\n",
				       f->pid, exe,
				       foreign_kind_name(f->kind), started);
	}
	if (v->failed->valid) {
		g_autofree gchar *started = iso_time(v->failed->started_us);

		g_string_append_printf(s, "generation %u pid %d haproxy %s "
				       "started %s failed: %s\n",
				       v->failed->number, v->failed->pid,
				       v->failed->version, started,
				       v->failed->how);
	}
	g_string_append(s, "ok");
	return g_string_free(s, FALSE);
}

/* ---- JSON (json-glib builds and writes it) ---- */

/* A document being built: json-glib's functions and the builder. */
struct json_out {
	const struct jsonlib *j;
	JsonBuilder *b;
};

static void json_key(struct json_out *o, const char *key)
{
	o->j->set_member_name(o->b, key);
}

/* json-glib needs valid UTF-8: a byte that is not becomes U+FFFD. */
static void json_member_string(struct json_out *o, const char *key,
			       const char *text)
{
	g_autofree gchar *valid = g_utf8_make_valid(text, -1);

	json_key(o, key);
	o->j->add_string(o->b, valid);
}

static void json_member_int(struct json_out *o, const char *key,
			    gint64 value)
{
	json_key(o, key);
	o->j->add_int(o->b, value);
}

static void json_member_null(struct json_out *o, const char *key)
{
	json_key(o, key);
	o->j->add_null(o->b);
}

static void json_member_time(struct json_out *o, const char *key, gint64 us)
{
	g_autofree gchar *iso = iso_time(us);

	json_member_string(o, key, iso);
}

static void json_pids(struct json_out *o, const GArray *pids)
{
	o->j->begin_array(o->b);
	for (guint i = 0; i < pids->len; i++)
		o->j->add_int(o->b, g_array_index(pids, GPid, i));
	o->j->end_array(o->b);
}

/* A master's workers, current then older ones, in its object. */
static void json_master(struct json_out *o, const struct generation *g)
{
	json_key(o, "master");
	o->j->add_boolean(o->b, TRUE);
	json_key(o, "workers");
	json_pids(o, g->workers);
	json_key(o, "old_workers");
	o->j->begin_array(o->b);
	for (guint i = 0; i < g->cohorts->len; i++) {
		const struct worker_cohort *c = g_ptr_array_index(g->cohorts, i);

		json_pids(o, c->pids);
	}
	o->j->end_array(o->b);
}

/* The members every generation has; the caller closes the object. */
static void json_generation(struct json_out *o, guint number, GPid pid,
			    const char *version, gint64 started_us,
			    const char *state)
{
	o->j->begin_object(o->b);
	json_member_int(o, "number", number);
	json_member_int(o, "pid", pid);
	json_member_string(o, "haproxy", version);
	json_member_time(o, "started", started_us);
	json_member_string(o, "state", state);
}

/* An instance we did not start has no number and no known version; its
 * executable and its kind are shown instead. */
static void json_foreign(struct json_out *o, const struct foreign *f)
{
	o->j->begin_object(o->b);
	json_member_null(o, "number");
	json_member_int(o, "pid", f->pid);
	json_member_null(o, "haproxy");
	json_member_string(o, "executable", f->exe);
	json_member_string(o, "kind", foreign_kind_name(f->kind));
	json_member_time(o, "started", proc_start_time_us(f->start_time));
	json_member_string(o, "state", "foreign");
	o->j->end_object(o->b);
}

static void json_last(struct json_out *o, const struct reload_report *r)
{
	if (!r->valid) {
		json_member_null(o, "last_reload");
		return;
	}
	json_key(o, "last_reload");
	o->j->begin_object(o->b);
	json_member_string(o, "result", r->ok ? "ok" : "failed");
	json_member_int(o, "duration_ms", r->duration_us / 1000);
	json_member_string(o, "message", r->message);
	o->j->end_object(o->b);
}

static void json_generations(struct json_out *o, const struct status_view *v)
{
	json_key(o, "generations");
	o->j->begin_array(o->b);
	for (guint i = v->gens->len; i-- > 0;) {
		const struct generation *g =
			g_ptr_array_index((GPtrArray *)v->gens, i);

		json_generation(o, g->number, g->pid, g->version,
				g->started_us, generation_state_name(g->state));
		if (g->mode == LAUNCH_MW)
			json_master(o, g);
		o->j->end_object(o->b);
	}
	for (guint i = 0; v->foreign && i < v->foreign->len; i++)
		json_foreign(o, g_ptr_array_index((GPtrArray *)v->foreign, i));
	if (v->failed->valid) {
		json_generation(o, v->failed->number, v->failed->pid,
				v->failed->version, v->failed->started_us,
				"failed");
		o->j->end_object(o->b);
	}
	o->j->end_array(o->b);
}

static void json_status(struct json_out *o, const struct status_view *v)
{
	o->j->begin_object(o->b);
	json_member_int(o, "wrapper_pid", v->wrapper_pid);
	json_member_string(o, "version", WRAPPER_VERSION);
	json_member_string(o, "state", v->phase);
	/* By result: a failed reload is a reload too. */
	json_member_int(o, "reloads", v->reloads + v->reloads_failed);
	json_member_int(o, "reloads_ok", v->reloads);
	json_member_int(o, "reloads_failed", v->reloads_failed);
	json_last(o, v->last);
	if (v->reuseport)
		json_member_string(o, "reuseport_migration", v->reuseport);
	json_generations(o, v);
	o->j->end_object(o->b);
}

gchar *status_json(const struct status_view *v)
{
	g_autoptr(GError) error = NULL;
	struct json_out o = { .j = jsonlib_load(&error) };
	g_autofree gchar *doc = NULL, *safe = NULL;
	JsonNode *root;

	if (!o.j)
		return g_strdup_printf("error: no JSON: %s", error->message);
	o.b = o.j->builder_new();
	json_status(&o, v);
	root = o.j->get_root(o.b);
	o.j->object_unref(o.b);
	/* Compact: escape_json_controls() needs no whitespace in it. */
	doc = o.j->to_string(root, FALSE);
	o.j->node_unref(root);
	safe = escape_json_controls(doc);
	return g_strconcat(safe, "\nok", NULL);
}

/* ---- OpenMetrics (node_exporter's textfile collector, a scrape) ---- */

#define OM_PREFIX "haproxy_wrapper_"

static void om_family(GString *s, const char *name, const char *type,
		      const char *unit, const char *help)
{
	g_string_append_printf(s, "# TYPE " OM_PREFIX "%s %s\n", name, type);
	if (unit)
		g_string_append_printf(s, "# UNIT " OM_PREFIX "%s %s\n", name,
				       unit);
	g_string_append_printf(s, "# HELP " OM_PREFIX "%s %s\n", name, help);
}

static void om_seconds(GString *s, const char *name, gint64 us)
{
	g_string_append_printf(s, OM_PREFIX "%s %" G_GINT64_FORMAT ".%06"
			       G_GINT64_FORMAT "\n", name, us / G_USEC_PER_SEC,
			       us % G_USEC_PER_SEC);
}

static void om_last_reload(GString *s, const struct reload_report *r)
{
	if (!r->valid)
		return;
	om_family(s, "last_reload_success", "gauge", NULL,
		  "1 if the last reload (or the first start) worked.");
	g_string_append_printf(s, OM_PREFIX "last_reload_success %d\n", r->ok);
	om_family(s, "last_reload_duration_seconds", "gauge", "seconds",
		  "How long the last reload took.");
	om_seconds(s, "last_reload_duration_seconds", r->duration_us);
	om_family(s, "last_reload_timestamp_seconds", "gauge", "seconds",
		  "When the last reload ended.");
	om_seconds(s, "last_reload_timestamp_seconds", r->ended_us);
}

/* Old processes still draining, and the age of the oldest of them. */
static guint om_draining(const struct status_view *v, gint64 *oldest_us)
{
	guint n = 0;

	*oldest_us = 0;
	for (guint i = 0; i < v->gens->len; i++) {
		const struct generation *g =
			g_ptr_array_index((GPtrArray *)v->gens, i);
		gint64 since = g->draining_since_us ? : g->started_us;

		if (g->state == GEN_DRAINING) {
			n++;
			if (!*oldest_us || since < *oldest_us)
				*oldest_us = since;
		}
		for (guint j = 0; j < g->cohorts->len; j++) {
			const struct worker_cohort *c =
				g_ptr_array_index(g->cohorts, j);

			n += c->pids->len;
			if (!*oldest_us || c->since_us < *oldest_us)
				*oldest_us = c->since_us;
		}
	}
	return n;
}

static void om_generations(GString *s, const struct status_view *v)
{
	static const enum gen_state states[] = {
		GEN_STARTING, GEN_CURRENT, GEN_DRAINING,
	};
	guint n[G_N_ELEMENTS(states)] = { 0 };
	gint64 oldest_us;
	guint draining = om_draining(v, &oldest_us);

	for (guint i = 0; i < v->gens->len; i++)
		n[((const struct generation *)
		   g_ptr_array_index((GPtrArray *)v->gens, i))->state]++;
	om_family(s, "generations", "gauge", NULL,
		  "haproxy generations by state.");
	for (guint i = 0; i < G_N_ELEMENTS(states); i++)
		g_string_append_printf(s, OM_PREFIX "generations{state=\"%s\"}"
				       " %u\n",
				       generation_state_name(states[i]), n[i]);
	g_string_append_printf(s, OM_PREFIX "generations{state=\"foreign\"} "
			       "%u\n", v->foreign ? v->foreign->len : 0);
	g_string_append_printf(s, OM_PREFIX "generations{state=\"failed\"} "
			       "%d\n", v->failed->valid);
	om_family(s, "draining_processes", "gauge", NULL,
		  "Old haproxy processes (or -Ws workers) still draining.");
	g_string_append_printf(s, OM_PREFIX "draining_processes %u\n",
			       draining);
	om_family(s, "oldest_draining_age_seconds", "gauge", "seconds",
		  "Since when the oldest of them drains (0: none).");
	om_seconds(s, "oldest_draining_age_seconds",
		   oldest_us ? MAX(g_get_real_time() - oldest_us, 0) : 0);
}

static void om_counter(GString *s, const char *name, guint value,
		       const char *help)
{
	om_family(s, name, "counter", NULL, help);
	g_string_append_printf(s, OM_PREFIX "%s_total %u\n", name, value);
}

gchar *status_openmetrics(const struct status_view *v)
{
	GString *s = g_string_new(NULL);

	om_family(s, "reloads", "counter", NULL,
		  "Reloads that ended, by result.");
	g_string_append_printf(s, OM_PREFIX "reloads_total{result=\"ok\"} "
			       "%u\n", v->reloads);
	g_string_append_printf(s, OM_PREFIX "reloads_total{result=\"failed\"} "
			       "%u\n", v->reloads_failed);
	om_last_reload(s, v->last);
	om_generations(s, v);
	om_counter(s, "takeovers", v->takeovers,
		   "haproxy instances it did not start, taken over at start.");
	om_counter(s, "adoptions", v->adoptions,
		   "Generations adopted from its previous image on a "
		   "self-upgrade.");
	om_counter(s, "restarts_adopted", v->restarts_adopted,
		   "haproxy instances started by hand that replaced the one "
		   "serving, adopted.");
	g_string_append(s, "# EOF\nok");
	return g_string_free(s, FALSE);
}

gchar *status_summary(const struct status_view *v)
{
	const struct generation *c = v->current;
	const struct foreign *a = v->adopted;
	g_autofree gchar *serving = c ? g_strdup_printf(
		"generation %u (pid %d, haproxy %s) serving", c->number, c->pid,
		c->version) : a ? g_strdup_printf(
		"adopted haproxy (pid %d, %s) serving", a->pid,
		foreign_kind_name(a->kind)) : g_strdup("no generation serving");
	gint64 ms = v->last->duration_us / 1000;
	g_autofree gchar *last = !v->last->valid ? g_strdup("") :
		v->last->ok ?
		g_strdup_printf("; last reload ok (%" G_GINT64_FORMAT " ms)",
				ms) :
		g_strdup_printf("; last reload FAILED (%" G_GINT64_FORMAT
				" ms): %s", ms, v->last->message);
	g_autofree gchar *failed = v->reloads_failed ?
		g_strdup_printf(" (%u failed)", v->reloads_failed) :
		g_strdup("");

	return g_strdup_printf("%s; %u reload(s)%s%s", serving,
			       v->reloads + v->reloads_failed, failed, last);
}

void reload_report_clear(struct reload_report *r)
{
	g_clear_pointer(&r->message, g_free);
	r->valid = FALSE;
}

void failed_generation_clear(struct failed_generation *f)
{
	g_clear_pointer(&f->how, g_free);
	f->valid = FALSE;
}
