/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "wrapper/selfupgrade/state.h"

#include <signal.h>
#include <string.h>

#include "base/proc.h"

/*
 * "<format> <next> <reloads> <signal> <pending> <attempt> <hard>
 * <pending_hard>" then tokens: generations
 * "<number>:<pid>:<mode>:<state>:<started_us>:<version>", the version
 * URI-escaped so that it holds no separator, adopted instances
 * "a<pid>:<start_time>:<leaving>" (an older image has none, and its dry
 * run refuses a state that names one), waiting control clients
 * "w<fd>:<attempt>", a master-worker haproxy's notify socket "n<fd>", and
 * counters "<name>=<value>" (the pidfile's pid among them, "pidfile_pid=",
 * and the two ends of haproxy's stderr pipe, "stderr_rfd=", "stderr_wfd="). A counter this image does not know (a newer
 * image's) is skipped; one the state lacks (an older image's) stays 0.
 */
#define HEADER_FIELDS 8

gchar *state_serialize(const struct upgrade_state *h)
{
	g_autoptr(GString) s = g_string_new(NULL);

	g_string_append_printf(s, "%d %u %u %d %d %u %d %d", STATE_FORMAT,
			       h->next_number, h->reloads, h->reload_signal,
			       h->reload_pending ? 1 : 0, h->attempt,
			       h->hard ? 1 : 0, h->pending_hard ? 1 : 0);
	for (guint i = 0; i < h->gens->len; i++) {
		const struct generation *g = g_ptr_array_index(h->gens, i);
		g_autofree gchar *version =
			g_uri_escape_string(g->version, NULL, FALSE);

		g_string_append_printf(s, " %u:%d:%d:%d:%" G_GINT64_FORMAT ":%s",
				       g->number, g->pid, g->mode, g->state,
				       g->started_us, version);
	}
	for (guint i = 0; h->adopted && i < h->adopted->len; i++) {
		const struct adopt_row *a =
			&g_array_index(h->adopted, struct adopt_row, i);

		g_string_append_printf(s, " a%d:%" G_GUINT64_FORMAT ":%d",
				       a->pid, a->start_time, a->leaving ? 1 : 0);
	}
	for (guint i = 0; h->waiters && i < h->waiters->len; i++) {
		const struct upgrade_waiter *w =
			&g_array_index(h->waiters, struct upgrade_waiter, i);

		g_string_append_printf(s, " w%d:%u", w->fd, w->target);
	}
	if (h->notify_fd >= 0)
		g_string_append_printf(s, " n%d", h->notify_fd);
	g_string_append_printf(s, " reloads_failed=%u takeovers=%u adoptions=%u"
			       " restarts_adopted=%u", h->reloads_failed,
			       h->takeovers, h->adoptions, h->restarts_adopted);
	if (h->pidfile_pid)
		g_string_append_printf(s, " pidfile_pid=%u", h->pidfile_pid);
	if (h->stderr_rfd && h->stderr_wfd)
		g_string_append_printf(s, " stderr_rfd=%u stderr_wfd=%u",
				       h->stderr_rfd, h->stderr_wfd);
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
	guint64 number, mode, state;
	gint64 started;
	GPid pid;
	struct generation *g;

	if (g_strv_length(f) != 6 ||
	    !parse_uint(f[0], G_MAXUINT, &number) ||
	    !proc_parse_pid(f[1], &pid) ||
	    !parse_uint(f[2], LAUNCH_MW, &mode) ||
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

static gboolean parse_waiter(const char *token, struct upgrade_waiter *w)
{
	g_auto(GStrv) f = g_strsplit(token + 1, ":", 3);
	guint64 fd, target;

	if (token[0] != 'w' || g_strv_length(f) != 2 ||
	    !parse_uint(f[0], G_MAXINT, &fd) || fd < 3 ||
	    !parse_uint(f[1], G_MAXUINT, &target))
		return FALSE;
	*w = (struct upgrade_waiter){ .fd = fd, .target = target };
	return TRUE;
}

static gboolean parse_adopted(const char *token, struct adopt_row *a)
{
	g_auto(GStrv) f = g_strsplit(token + 1, ":", 4);
	guint64 start, leaving;
	GPid pid;

	if (g_strv_length(f) != 3 || !proc_parse_pid(f[0], &pid) ||
	    !parse_uint(f[1], G_MAXUINT64, &start) ||
	    !parse_uint(f[2], 1, &leaving))
		return FALSE;
	*a = (struct adopt_row){ .pid = pid, .start_time = start,
		.leaving = leaving };
	return TRUE;
}

/* Known counters (and the pidfile's pid); each at most once. */
static gboolean parse_counter(const char *token, struct upgrade_state *h,
			      guint *seen)
{
	static const struct {
		const char *name;
		gsize offset;
		guint64 max;
	} known[] = {
		{ "reloads_failed",
		  G_STRUCT_OFFSET(struct upgrade_state, reloads_failed),
		  G_MAXUINT },
		{ "takeovers", G_STRUCT_OFFSET(struct upgrade_state, takeovers),
		  G_MAXUINT },
		{ "restarts_adopted",
		  G_STRUCT_OFFSET(struct upgrade_state, restarts_adopted),
		  G_MAXUINT },
		{ "adoptions", G_STRUCT_OFFSET(struct upgrade_state, adoptions),
		  G_MAXUINT },
		/* A pid_t. */
		{ "pidfile_pid",
		  G_STRUCT_OFFSET(struct upgrade_state, pidfile_pid),
		  G_MAXINT },
		/* Descriptors. */
		{ "stderr_rfd",
		  G_STRUCT_OFFSET(struct upgrade_state, stderr_rfd),
		  G_MAXINT },
		{ "stderr_wfd",
		  G_STRUCT_OFFSET(struct upgrade_state, stderr_wfd),
		  G_MAXINT },
	};
	const char *eq = strchr(token, '=');
	guint64 v;

	/* A name of [a-z_], a decimal value. */
	if (eq == token || !parse_uint(eq + 1, G_MAXUINT, &v))
		return FALSE;
	if ((gsize)(eq - token) != strspn(token, "abcdefghijklmnopqrstuvwxyz_"))
		return FALSE;
	for (guint i = 0; i < G_N_ELEMENTS(known); i++) {
		if (strncmp(token, known[i].name, eq - token) != 0 ||
		    known[i].name[eq - token] != '\0')
			continue;
		if ((*seen & (1u << i)) || v > known[i].max)
			return FALSE;
		*seen |= 1u << i;
		G_STRUCT_MEMBER(guint, h, known[i].offset) = v;
		return TRUE;
	}
	return TRUE;
}

/* Named twice, a descriptor would be adopted twice (closed by one while
 * the other writes to it), a pid watched twice. */
static gboolean fd_named(const struct upgrade_state *h, int fd)
{
	if (h->notify_fd == fd)
		return TRUE;
	for (guint i = 0; i < h->waiters->len; i++)
		if (g_array_index(h->waiters, struct upgrade_waiter, i).fd == fd)
			return TRUE;
	return FALSE;
}

static gboolean pid_named(const struct upgrade_state *h, GPid pid)
{
	for (guint i = 0; i < h->gens->len; i++) {
		const struct generation *g = g_ptr_array_index(h->gens, i);

		if (g->pid == pid)
			return TRUE;
	}
	for (guint i = 0; i < h->adopted->len; i++)
		if (g_array_index(h->adopted, struct adopt_row, i).pid == pid)
			return TRUE;
	return FALSE;
}

static gboolean parse_token(const char *token, struct upgrade_state *h,
			    guint *seen)
{
	struct upgrade_waiter w;
	struct adopt_row a;
	struct generation *g;

	if (strchr(token, '='))
		return parse_counter(token, h, seen);
	if (token[0] == 'n') {
		guint64 fd;

		if (h->notify_fd >= 0 ||
		    !parse_uint(token + 1, G_MAXINT, &fd) || fd < 3 ||
		    fd_named(h, fd))
			return FALSE;
		h->notify_fd = fd;
		return TRUE;
	}
	if (token[0] == 'a') {
		if (!parse_adopted(token, &a) || pid_named(h, a.pid))
			return FALSE;
		g_array_append_val(h->adopted, a);
		return TRUE;
	}
	if (token[0] == 'w') {
		if (!parse_waiter(token, &w) || fd_named(h, w.fd))
			return FALSE;
		g_array_append_val(h->waiters, w);
		return TRUE;
	}
	g = parse_gen(token);
	if (!g)
		return FALSE;
	if (pid_named(h, g->pid)) {
		generation_free(g);
		return FALSE;
	}
	g_ptr_array_add(h->gens, g);
	return TRUE;
}

gboolean state_parse(const char *text, struct upgrade_state *h)
{
	g_auto(GStrv) tok = g_strsplit(text, " ", -1);
	guint64 v[HEADER_FIELDS];
	guint n = g_strv_length(tok), seen = 0;
	static const guint64 max[HEADER_FIELDS] = {
		G_MAXUINT, G_MAXUINT, G_MAXUINT, NSIG - 1, 1, G_MAXUINT, 1, 1,
	};

	*h = (struct upgrade_state){
		.gens = g_ptr_array_new_with_free_func(
			(GDestroyNotify)generation_free),
		.adopted = g_array_new(FALSE, FALSE, sizeof(struct adopt_row)),
		.waiters = g_array_new(FALSE, FALSE,
				       sizeof(struct upgrade_waiter)),
		.notify_fd = -1,
	};
	if (n < HEADER_FIELDS)
		goto bad;
	for (guint i = 0; i < HEADER_FIELDS; i++)
		if (!parse_uint(tok[i], max[i], &v[i]))
			goto bad;
	if (v[0] != STATE_FORMAT)
		goto bad;
	h->next_number = v[1];
	h->reloads = v[2];
	h->reload_signal = v[3];
	h->reload_pending = v[4];
	h->attempt = v[5];
	h->hard = v[6];
	h->pending_hard = v[7];
	for (guint i = HEADER_FIELDS; i < n; i++)
		if (!parse_token(tok[i], h, &seen))
			goto bad;
	return TRUE;
bad:
	g_ptr_array_set_size(h->gens, 0);
	g_array_set_size(h->adopted, 0);
	g_array_set_size(h->waiters, 0);
	h->notify_fd = -1;
	return FALSE;
}

guint state_salvage(const char *text, struct upgrade_state *h)
{
	g_auto(GStrv) tok = g_strsplit(text, " ", -1);
	guint n = g_strv_length(tok), bad = 0, first = HEADER_FIELDS, seen = 0;
	g_autofree gchar *header = NULL;

	/* The refused parse's arrays: parsed anew below. */
	upgrade_state_clear(h);
	if (n >= HEADER_FIELDS)
		header = g_strjoinv(" ", (gchar *[]){
			tok[0], tok[1], tok[2], tok[3], tok[4], tok[5],
			tok[6], tok[7], NULL });
	/* The header alone, or defaults: one reload (the one that led to
	 * the exec), on request. */
	if (!header || !state_parse(header, h)) {
		g_autofree gchar *fallback = g_strdup_printf(
			"%d 1 0 0 0 1 0 0", STATE_FORMAT);

		upgrade_state_clear(h);
		state_parse(fallback, h);
		first = 0;
		bad++;
	}
	for (guint i = first; i < n; i++)
		if (!parse_token(tok[i], h, &seen))
			bad++;
	for (guint i = 0; i < h->gens->len; i++) {
		const struct generation *g = g_ptr_array_index(h->gens, i);

		h->next_number = MAX(h->next_number, g->number + 1);
	}
	return bad;
}

void upgrade_state_clear(struct upgrade_state *h)
{
	g_clear_pointer(&h->gens, g_ptr_array_unref);
	g_clear_pointer(&h->adopted, g_array_unref);
	g_clear_pointer(&h->waiters, g_array_unref);
	*h = (struct upgrade_state){ 0 };
}
