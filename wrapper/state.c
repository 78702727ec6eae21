/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/state.h"

#include <signal.h>
#include <string.h>

/*
 * "<format> <next> <reloads> <signal> <pending> <gen> <gen> ...", each
 * <gen> "<number>:<pid>:<mode>:<state>:<started_us>:<version>" with the
 * version URI-escaped so that it holds no separator.
 */

gchar *state_serialize(const struct handover *h)
{
	g_autoptr(GString) s = g_string_new(NULL);

	g_string_append_printf(s, "%d %u %u %d %d", STATE_FORMAT,
			       h->next_number, h->reloads, h->reload_signal,
			       h->reload_pending ? 1 : 0);
	for (guint i = 0; i < h->gens->len; i++) {
		const struct generation *g = g_ptr_array_index(h->gens, i);
		g_autofree gchar *version =
			g_uri_escape_string(g->version, NULL, FALSE);

		g_string_append_printf(s, " %u:%d:%d:%d:%" G_GINT64_FORMAT ":%s",
				       g->number, g->pid, g->mode, g->state,
				       g->started_us, version);
	}
	return g_string_free(g_steal_pointer(&s), FALSE);
}

static gboolean parse_uint(const char *s, guint64 max, guint64 *v)
{
	return g_ascii_string_to_unsigned(s, 10, 0, max, v, NULL);
}

static gboolean parse_int64(const char *s, gint64 *v)
{
	return g_ascii_string_to_signed(s, 10, 0, G_MAXINT64, v, NULL);
}

static struct generation *parse_gen(const char *token)
{
	g_auto(GStrv) f = g_strsplit(token, ":", 7);
	g_autofree gchar *version = NULL;
	guint64 number, pid, mode, state;
	gint64 started;
	struct generation *g;

	if (g_strv_length(f) != 6 ||
	    !parse_uint(f[0], G_MAXUINT, &number) ||
	    !parse_uint(f[1], G_MAXINT, &pid) || pid == 0 ||
	    !parse_uint(f[2], LAUNCH_DB, &mode) ||
	    !parse_uint(f[3], GEN_DRAINING, &state) ||
	    !parse_int64(f[4], &started))
		return NULL;
	version = g_uri_unescape_string(f[5], NULL);
	if (!version)
		return NULL;
	g = generation_new(number, mode, version);
	g->pid = pid;
	g->state = state;
	g->started_us = started;
	return g;
}

gboolean state_parse(const char *text, struct handover *h)
{
	g_auto(GStrv) tok = g_strsplit(text, " ", -1);
	guint64 format, next, reloads, sig, pending;
	guint n = g_strv_length(tok);

	*h = (struct handover){
		.gens = g_ptr_array_new_with_free_func(
			(GDestroyNotify)generation_free),
	};
	if (n < 5 || !parse_uint(tok[0], G_MAXUINT, &format) ||
	    format != STATE_FORMAT ||
	    !parse_uint(tok[1], G_MAXUINT, &next) ||
	    !parse_uint(tok[2], G_MAXUINT, &reloads) ||
	    !parse_uint(tok[3], NSIG - 1, &sig) ||
	    !parse_uint(tok[4], 1, &pending))
		goto bad;
	h->next_number = next;
	h->reloads = reloads;
	h->reload_signal = sig;
	h->reload_pending = pending;
	for (guint i = 5; i < n; i++) {
		struct generation *g = parse_gen(tok[i]);

		if (!g)
			goto bad;
		g_ptr_array_add(h->gens, g);
	}
	return TRUE;
bad:
	g_ptr_array_set_size(h->gens, 0);
	return FALSE;
}

void handover_clear(struct handover *h)
{
	g_clear_pointer(&h->gens, g_ptr_array_unref);
	*h = (struct handover){ 0 };
}
