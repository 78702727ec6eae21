/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: HAPROXY_WRAPPER_STATE, which a leaked environment can
 * fill with anything. A state that parses must serialize to text that
 * parses to the same state, and that text must be a fixed point. One that
 * does not is salvaged, as the new image does: what it keeps is sane.
 */
#include <signal.h>

#include "wrapper/selfupgrade/state.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

static void check_same_gen(const struct generation *a,
			   const struct generation *b)
{
	FUZZ_CHECK(a->number == b->number);
	FUZZ_CHECK(a->pid == b->pid);
	FUZZ_CHECK(a->mode == b->mode);
	FUZZ_CHECK(a->state == b->state);
	FUZZ_CHECK(a->started_us == b->started_us);
	FUZZ_CHECK(strcmp(a->version, b->version) == 0);
}

static void check_same(const struct upgrade_state *a, const struct upgrade_state *b)
{
	FUZZ_CHECK(a->next_number == b->next_number);
	FUZZ_CHECK(a->reloads == b->reloads);
	FUZZ_CHECK(a->reloads_failed == b->reloads_failed);
	FUZZ_CHECK(a->takeovers == b->takeovers);
	FUZZ_CHECK(a->adoptions == b->adoptions);
	FUZZ_CHECK(a->reload_signal == b->reload_signal);
	FUZZ_CHECK(a->reload_pending == b->reload_pending);
	FUZZ_CHECK(a->attempt == b->attempt);
	FUZZ_CHECK(a->hard == b->hard);
	FUZZ_CHECK(a->pending_hard == b->pending_hard);
	FUZZ_CHECK(a->gens->len == b->gens->len);
	for (guint i = 0; i < a->gens->len; i++)
		check_same_gen(g_ptr_array_index(a->gens, i),
			       g_ptr_array_index(b->gens, i));
	FUZZ_CHECK(a->adopted->len == b->adopted->len);
	for (guint i = 0; i < a->adopted->len; i++) {
		const struct adopt_row *x =
			&g_array_index(a->adopted, struct adopt_row, i);
		const struct adopt_row *y =
			&g_array_index(b->adopted, struct adopt_row, i);

		FUZZ_CHECK(x->pid == y->pid && x->leaving == y->leaving &&
			   x->start_time == y->start_time);
	}
	FUZZ_CHECK(fuzz_arrays_equal(a->waiters, b->waiters,
				     sizeof(struct upgrade_waiter)));
	FUZZ_CHECK(a->notify_fd == b->notify_fd);
}

/* What the new image will act on: a pid, a mode, a state it knows. */
static void check_sane(const struct upgrade_state *h)
{
	FUZZ_CHECK(h->reload_signal >= 0 && h->reload_signal < NSIG);
	for (guint i = 0; i < h->gens->len; i++) {
		const struct generation *g = g_ptr_array_index(h->gens, i);

		FUZZ_CHECK(g->pid > 0);
		FUZZ_CHECK(g->mode == LAUNCH_DS || g->mode == LAUNCH_DB ||
			   g->mode == LAUNCH_MW);
		FUZZ_CHECK(g->state <= GEN_DRAINING);
		FUZZ_CHECK(g->started_us >= 0);
		FUZZ_CHECK(strnlen(g->version, sizeof(g->version)) <
			   sizeof(g->version));
	}
	for (guint i = 0; i < h->adopted->len; i++)
		FUZZ_CHECK(g_array_index(h->adopted, struct adopt_row,
					 i).pid > 0);
	/* Inherited across exec, never stdio: a master's notify socket, */
	FUZZ_CHECK(h->notify_fd == -1 || h->notify_fd >= 3);
	/* and a waiter's fd. */
	for (guint i = 0; i < h->waiters->len; i++)
		FUZZ_CHECK(g_array_index(h->waiters, struct upgrade_waiter,
					 i).fd >= 3);
}

static void check_round_trip(const struct upgrade_state *h)
{
	g_autofree gchar *text = state_serialize(h);
	g_autofree gchar *again = NULL;
	struct upgrade_state back;

	FUZZ_CHECK(state_parse(text, &back));
	check_same(h, &back);
	again = state_serialize(&back);
	FUZZ_CHECK(strcmp(text, again) == 0);
	upgrade_state_clear(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree gchar *text = fuzz_cstring(data, size);
	struct upgrade_state h;

	if (state_parse(text, &h)) {
		check_sane(&h);
		check_round_trip(&h);
	} else {
		/* "h is then left empty" */
		FUZZ_CHECK(h.gens != NULL && h.gens->len == 0);
		FUZZ_CHECK(h.adopted != NULL && h.adopted->len == 0);
		FUZZ_CHECK(h.waiters != NULL && h.waiters->len == 0);
		/* Into the same struct, as the new image reads a state. */
		FUZZ_CHECK(state_salvage(text, &h) > 0);
		check_sane(&h);
	}
	upgrade_state_clear(&h);
	return 0;
}
