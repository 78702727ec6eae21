/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The self-upgrade's upgrade state: what one image writes, the next reads back,
 * and nothing malformed gets through. */
#include <glib.h>
#include <signal.h>
#include <string.h>

#include "wrapper/selfupgrade/state.h"

static struct upgrade_state sample(void)
{
	struct upgrade_state h = {
		.next_number = 7,
		.reloads = 5,
		.reloads_failed = 3,
		.takeovers = 1,
		.adoptions = 4,
		.restarts_adopted = 2,
		.reload_signal = SIGUSR2,
		.reload_pending = TRUE,
		.attempt = 9,
		.hard = TRUE,
		.pending_hard = FALSE,
		.gens = g_ptr_array_new_with_free_func(
			(GDestroyNotify)generation_free),
		.waiters = g_array_new(FALSE, FALSE,
				       sizeof(struct upgrade_waiter)),
		.notify_fd = -1,
	};
	struct upgrade_waiter w1 = { .fd = 7, .target = 9 };
	struct upgrade_waiter w2 = { .fd = 12, .target = 10 };
	struct generation *a = generation_new(5, LAUNCH_DS, "1.7.0");
	struct generation *b = generation_new(6, LAUNCH_DB,
					      "2.6.12-1+deb12u4 x:y%z");

	a->pid = 1234;
	a->state = GEN_DRAINING;
	a->started_us = 1700000000000000;
	b->pid = 5678;
	b->state = GEN_CURRENT;
	g_ptr_array_add(h.gens, a);
	g_ptr_array_add(h.gens, b);
	g_array_append_val(h.waiters, w1);
	g_array_append_val(h.waiters, w2);
	return h;
}

static void test_round_trip(void)
{
	struct upgrade_state h = sample(), back;
	g_autofree gchar *text = state_serialize(&h);
	struct generation *a, *b;

	g_assert_true(state_parse(text, &back));
	g_assert_cmpuint(back.next_number, ==, 7);
	g_assert_cmpuint(back.reloads, ==, 5);
	g_assert_cmpuint(back.reloads_failed, ==, 3);
	g_assert_cmpuint(back.takeovers, ==, 1);
	g_assert_cmpuint(back.adoptions, ==, 4);
	g_assert_cmpuint(back.restarts_adopted, ==, 2);
	g_assert_cmpint(back.reload_signal, ==, SIGUSR2);
	g_assert_true(back.reload_pending);
	g_assert_cmpuint(back.attempt, ==, 9);
	g_assert_true(back.hard);
	g_assert_false(back.pending_hard);
	g_assert_cmpuint(back.waiters->len, ==, 2);
	g_assert_cmpint(g_array_index(back.waiters, struct upgrade_waiter, 0).fd,
			==, 7);
	g_assert_cmpuint(g_array_index(back.waiters, struct upgrade_waiter, 1)
				 .target, ==, 10);
	g_assert_cmpuint(back.gens->len, ==, 2);
	a = g_ptr_array_index(back.gens, 0);
	b = g_ptr_array_index(back.gens, 1);
	g_assert_cmpuint(a->number, ==, 5);
	g_assert_cmpint(a->pid, ==, 1234);
	g_assert_cmpint(a->mode, ==, LAUNCH_DS);
	g_assert_cmpint(a->state, ==, GEN_DRAINING);
	g_assert_cmpint(a->started_us, ==, 1700000000000000);
	g_assert_cmpstr(a->version, ==, "1.7.0");
	g_assert_cmpint(b->pid, ==, 5678);
	g_assert_cmpint(b->mode, ==, LAUNCH_DB);
	g_assert_cmpint(b->state, ==, GEN_CURRENT);
	/* Separators inside a version survive the trip. */
	g_assert_cmpstr(b->version, ==, "2.6.12-1+deb12u4 x:y%z");
	g_assert_cmpint(back.notify_fd, ==, -1);
	upgrade_state_clear(&h);
	upgrade_state_clear(&back);
}

/* A master-worker generation and its notify socket. */
static void test_master_round_trip(void)
{
	struct upgrade_state h = sample(), back;
	struct generation *m = generation_new(8, LAUNCH_MW, "2.6.12");
	g_autofree gchar *text = NULL;
	struct generation *g;

	m->pid = 4321;
	m->state = GEN_CURRENT;
	g_ptr_array_add(h.gens, m);
	h.notify_fd = 11;
	text = state_serialize(&h);
	g_assert_true(state_parse(text, &back));
	g_assert_cmpint(back.notify_fd, ==, 11);
	g_assert_cmpuint(back.gens->len, ==, 3);
	g = g_ptr_array_index(back.gens, 2);
	g_assert_cmpint(g->mode, ==, LAUNCH_MW);
	g_assert_cmpint(g->pid, ==, 4321);
	upgrade_state_clear(&h);
	upgrade_state_clear(&back);
}

static void test_no_generations(void)
{
	struct upgrade_state h;

	g_assert_true(state_parse("1 1 0 0 0 0 0 0", &h));
	g_assert_cmpuint(h.gens->len, ==, 0);
	upgrade_state_clear(&h);
}

/* An older image's state has no counters: they start at 0. A newer
 * image's counters this one does not know are skipped. */
static void test_counters_compat(void)
{
	struct upgrade_state h;

	g_assert_true(state_parse("1 3 2 12 0 2 0 0 1:10:1:1:0:v", &h));
	g_assert_cmpuint(h.reloads, ==, 2);
	g_assert_cmpuint(h.reloads_failed, ==, 0);
	g_assert_cmpuint(h.takeovers, ==, 0);
	g_assert_cmpuint(h.adoptions, ==, 0);
	upgrade_state_clear(&h);

	g_assert_true(state_parse("1 3 2 12 0 2 0 0 future_total=9 "
				  "1:10:1:1:0:v adoptions=2 reloads_failed=5",
				  &h));
	g_assert_cmpuint(h.gens->len, ==, 1);
	g_assert_cmpuint(h.reloads_failed, ==, 5);
	g_assert_cmpuint(h.takeovers, ==, 0);
	g_assert_cmpuint(h.adoptions, ==, 2);
	upgrade_state_clear(&h);
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"2 1 0 12 0 1 0 0",		/* another format */
		"1 1 0 12 0 1 0",		/* too short */
		"1 1 0 99 0 1 0 0",		/* no such signal */
		"1 1 0 12 2 1 0 0",		/* pending is 0 or 1 */
		"1 1 0 12 0 1 2 0",		/* hard is 0 or 1 */
		"1 1 0 12 0 1 0 0 1:0:1:1:0:v",	/* pid 0 */
		"1 1 0 12 0 1 0 0 1:-5:1:1:0:v",
		"1 1 0 12 0 1 0 0 1:99999999999:1:1:0:v",
		"1 1 0 12 0 1 0 0 1:10:7:1:0:v",	/* no such mode */
		"1 1 0 12 0 1 0 0 1:10:1:9:0:v",	/* no such state */
		"1 1 0 12 0 1 0 0 1:10:1:1:0",	/* field missing */
		"1 1 0 12 0 1 0 0 1:10:1:1:0:v:extra",
		"1 1 0 12 0 1 0 0 1:10:1:1:x:v",
		"1 1 0 12 0 1 0 0 1:10:1:1:0:%zz",	/* bad escape */
		"1 1 0 12 0 1 0 0  1:10:1:1:0:v",	/* empty token */
		"1 1 0 12 0 1 0 0 w2:1",		/* stdio is no client */
		"1 1 0 12 0 1 0 0 w-4:1",
		"1 1 0 12 0 1 0 0 w7",
		"1 1 0 12 0 1 0 0 w7:1:2",
		"1 1 0 12 0 1 0 0 x7:1",
		"1 1 0 12 0 1 0 0 n2",			/* stdio is no socket */
		"1 1 0 12 0 1 0 0 n",
		"1 1 0 12 0 1 0 0 n7:1",
		"1 1 0 12 0 1 0 0 n7 n8",		/* one socket */
		"1 1 0 12 0 1 0 0 takeovers=",
		"1 1 0 12 0 1 0 0 takeovers=-1",
		"1 1 0 12 0 1 0 0 takeovers=4294967296",
		"1 1 0 12 0 1 0 0 takeovers=1x",
		"1 1 0 12 0 1 0 0 =1",
		"1 1 0 12 0 1 0 0 Takeovers=1",
		"1 1 0 12 0 1 0 0 take-overs=1",
		"1 1 0 12 0 1 0 0 takeovers=1 takeovers=2",	/* once */
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		struct upgrade_state h;

		g_test_message("input: '%s'", bad[i]);
		g_assert_false(state_parse(bad[i], &h));
		g_assert_cmpuint(h.gens->len, ==, 0);
		upgrade_state_clear(&h);
	}
}

/* What a refused state still tells: the header, the tokens that parse. */
static void test_salvage(void)
{
	struct upgrade_state h = { 0 };
	struct generation *g;

	g_assert_cmpuint(state_salvage("1 3 2 12 1 4 0 0 1:10:1:2:0:v w:bad "
				       "2:11:1:1:0:v w7:4", &h), ==, 1);
	g_assert_cmpuint(h.next_number, ==, 3);
	g_assert_cmpuint(h.reloads, ==, 2);
	g_assert_cmpint(h.reload_signal, ==, 12);
	g_assert_true(h.reload_pending);
	g_assert_cmpuint(h.attempt, ==, 4);
	g_assert_cmpuint(h.gens->len, ==, 2);
	g = g_ptr_array_index(h.gens, 1);
	g_assert_cmpint(g->pid, ==, 11);
	g_assert_cmpint(g->state, ==, GEN_CURRENT);
	g_assert_cmpuint(h.waiters->len, ==, 1);
	upgrade_state_clear(&h);

	/* No header: one reload on request, numbered after what it names. */
	g_assert_cmpuint(state_salvage("5:10:1:1:0:v", &h), ==, 1);
	g_assert_cmpuint(h.gens->len, ==, 1);
	g_assert_cmpuint(h.next_number, ==, 6);
	g_assert_cmpuint(h.attempt, ==, 1);
	g_assert_cmpint(h.reload_signal, ==, 0);
	upgrade_state_clear(&h);
}

/*
 * As the new image reads a state: state_parse() refuses it (its arrays
 * are left, empty), then state_salvage() reads what it can into the same
 * struct. The refused parse's arrays are freed, not lost: the sanitized
 * pass (make asan-check) fails on a leak.
 */
static void test_salvage_after_refused_parse(void)
{
	/* A bad token; a bad header (its eight tokens read as tokens too);
	 * no header. */
	static const struct {
		const char *text;
		guint bad, gens;
	} cases[] = {
		{ "1 3 2 12 1 4 0 0 1:10:1:2:0:v w:bad 2:11:1:1:0:v w7:4",
		  1, 2 },
		{ "1 3 2 12 1 4 0 bad 1:10:1:2:0:v", 9, 1 },
		{ "5:10:1:1:0:v", 1, 1 },
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct upgrade_state h;

		g_test_message("input: '%s'", cases[i].text);
		g_assert_false(state_parse(cases[i].text, &h));
		g_assert_cmpuint(state_salvage(cases[i].text, &h), ==,
				 cases[i].bad);
		g_assert_cmpuint(h.gens->len, ==, cases[i].gens);
		upgrade_state_clear(&h);
	}
}

/* A descriptor or a pid named twice would be adopted twice: one client
 * closing a descriptor the other still writes to (or a new one by then),
 * two watches on one child. Refused; the salvage keeps the first. */
/* The adopted haproxy crosses the exec as its rows: pid, start time,
 * whether it still serves. */
static void test_adopted_round_trip(void)
{
	struct upgrade_state h = sample(), back;
	struct adopt_row rows[] = {
		{ .pid = 4321, .start_time = 987654, .leaving = FALSE },
		{ .pid = 4400, .start_time = 18446744073709551615ULL,
		  .leaving = TRUE },
	};
	g_autofree gchar *text = NULL;
	const struct adopt_row *r;

	h.adopted = g_array_new(FALSE, FALSE, sizeof(struct adopt_row));
	g_array_append_vals(h.adopted, rows, G_N_ELEMENTS(rows));
	text = state_serialize(&h);
	g_assert_nonnull(strstr(text, " a4321:987654:0 "));
	g_assert_true(state_parse(text, &back));
	g_assert_cmpuint(back.gens->len, ==, 2);
	g_assert_cmpuint(back.adopted->len, ==, 2);
	r = &g_array_index(back.adopted, struct adopt_row, 1);
	g_assert_cmpint(r->pid, ==, 4400);
	g_assert_cmpuint(r->start_time, ==, 18446744073709551615ULL);
	g_assert_true(r->leaving);
	g_assert_false(g_array_index(back.adopted, struct adopt_row, 0)
			       .leaving);
	upgrade_state_clear(&h);
	upgrade_state_clear(&back);

	/* A pid named twice (as a generation too), a pid 0, a start time
	 * or flag that is no number: refused. */
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 2:11:1:1:0:v a11:5:0",
				   &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 a12:5:0 a12:6:1", &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 a0:5:0", &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 a12:x:0", &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 a12:5:2", &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 a12:5", &h));
	upgrade_state_clear(&h);
}

/* What the previous release writes (no adopted rows; a package upgrade
 * self-upgrades from it into this image): read in full, as before. */
static void test_previous_format(void)
{
	static const char previous[] =
		"1 7 5 12 1 9 1 0 5:1234:0:2:1700000000000000:1.7.0 "
		"6:5678:1:1:1795953740530494:2.6.12-1%2Bdeb12u4%20x%3Ay%25z "
		"w7:9 reloads_failed=3 takeovers=1 adoptions=4 "
		"restarts_adopted=2 pidfile_pid=5678 stderr_rfd=4 stderr_wfd=5";
	struct upgrade_state h;
	struct generation *g;

	g_assert_true(state_parse(previous, &h));
	g_assert_cmpuint(h.next_number, ==, 7);
	g_assert_cmpuint(h.gens->len, ==, 2);
	g = g_ptr_array_index(h.gens, 1);
	g_assert_cmpint(g->pid, ==, 5678);
	g_assert_cmpstr(g->version, ==, "2.6.12-1+deb12u4 x:y%z");
	g_assert_cmpuint(h.adopted->len, ==, 0);
	g_assert_cmpuint(h.waiters->len, ==, 1);
	g_assert_cmpuint(h.restarts_adopted, ==, 2);
	g_assert_cmpuint(h.pidfile_pid, ==, 5678);
	g_assert_cmpuint(h.stderr_wfd, ==, 5);
	upgrade_state_clear(&h);
}

static void test_named_twice(void)
{
	struct upgrade_state h;

	g_assert_false(state_parse("1 3 2 12 1 4 0 0 2:11:1:1:0:v w7:4 w7:4",
				   &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 2:11:1:1:0:v n7 w7:4",
				   &h));
	upgrade_state_clear(&h);
	g_assert_false(state_parse("1 3 2 12 1 4 0 0 1:11:1:2:0:v "
				   "2:11:1:1:0:v", &h));
	upgrade_state_clear(&h);

	g_assert_cmpuint(state_salvage("1 3 2 12 1 4 0 0 1:10:1:2:0:v "
				       "2:10:1:1:0:v w7:4 w7:4 n7", &h), ==, 3);
	g_assert_cmpuint(h.gens->len, ==, 1);
	g_assert_cmpuint(h.waiters->len, ==, 1);
	g_assert_cmpint(h.notify_fd, <, 0);
	upgrade_state_clear(&h);
}

/* What the pidfile names (the old image wrote it) crosses the exec; an
 * older image's state does not say: nothing, as before. */
static void test_pidfile_pid(void)
{
	struct upgrade_state h = sample(), back;
	g_autofree gchar *text = NULL;

	h.pidfile_pid = 5678;
	text = state_serialize(&h);
	g_assert_nonnull(strstr(text, " pidfile_pid=5678"));
	g_assert_true(state_parse(text, &back));
	g_assert_cmpint(back.pidfile_pid, ==, 5678);
	upgrade_state_clear(&h);
	upgrade_state_clear(&back);

	g_assert_true(state_parse("1 3 2 12 0 2 0 0 1:10:1:1:0:v "
				  "reloads_failed=1 takeovers=0 adoptions=0 "
				  "restarts_adopted=0", &back));
	g_assert_cmpint(back.pidfile_pid, ==, 0);
	upgrade_state_clear(&back);

	/* No pid is negative or beyond a pid_t. */
	g_assert_false(state_parse("1 1 0 12 0 1 0 0 pidfile_pid=-1", &back));
	upgrade_state_clear(&back);
	g_assert_false(state_parse("1 1 0 12 0 1 0 0 pidfile_pid=2147483648",
				   &back));
	upgrade_state_clear(&back);
	g_assert_false(state_parse("1 1 0 12 0 1 0 0 pidfile_pid=1 "
				   "pidfile_pid=2", &back));
	upgrade_state_clear(&back);
}

/* haproxy's stderr pipe crosses the exec: both ends, or none said. */
static void test_stderr_pipe(void)
{
	struct upgrade_state h = sample(), back;
	g_autofree gchar *text = NULL, *none = NULL;

	h.stderr_rfd = 7;
	h.stderr_wfd = 8;
	text = state_serialize(&h);
	g_assert_nonnull(strstr(text, " stderr_rfd=7 stderr_wfd=8"));
	g_assert_true(state_parse(text, &back));
	g_assert_cmpuint(back.stderr_rfd, ==, 7);
	g_assert_cmpuint(back.stderr_wfd, ==, 8);
	upgrade_state_clear(&back);

	/* No pipe: nothing said, nothing read back. */
	h.stderr_rfd = h.stderr_wfd = 0;
	none = state_serialize(&h);
	g_assert_null(strstr(none, "stderr_"));
	g_assert_true(state_parse(none, &back));
	g_assert_cmpuint(back.stderr_rfd, ==, 0);
	upgrade_state_clear(&h);
	upgrade_state_clear(&back);

	g_assert_false(state_parse("1 1 0 12 0 1 0 0 stderr_rfd=-1", &back));
	upgrade_state_clear(&back);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/state/stderr-pipe", test_stderr_pipe);
	g_test_add_func("/state/round-trip", test_round_trip);
	g_test_add_func("/state/no-generations", test_no_generations);
	g_test_add_func("/state/master-round-trip", test_master_round_trip);
	g_test_add_func("/state/counters-compat", test_counters_compat);
	g_test_add_func("/state/malformed", test_malformed);
	g_test_add_func("/state/salvage", test_salvage);
	g_test_add_func("/state/salvage-after-refused-parse",
			test_salvage_after_refused_parse);
	g_test_add_func("/state/named-twice", test_named_twice);
	g_test_add_func("/state/adopted-round-trip", test_adopted_round_trip);
	g_test_add_func("/state/previous-format", test_previous_format);
	g_test_add_func("/state/pidfile-pid", test_pidfile_pid);
	return g_test_run();
}
