/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests for wrapper/status.c's JSON (json-glib, loaded on first
 * use): the document parses, with the keys and types the clients read,
 * and an executable path that another user chose (control characters,
 * bytes that are not UTF-8) comes back as the same text, never breaking
 * the document.
 */
#include <json-glib/json-glib.h>
#include <string.h>

#include "migrate/find.h"
#include "wrapper/status.h"

/* Raw: U+001F (json-glib 1.6 writes it unescaped), a newline and a forged
 * journal priority, DEL, a C1 control, a byte that is not UTF-8. */
#define ODD_EXE "/opt/h\x1f" "a\n<0>p\x7f\xc2\x85r\xff" "oxy\"\\"
/* What a parser reads back: the invalid byte as U+FFFD. */
#define ODD_EXE_READ "/opt/h\x1f" "a\n<0>p\x7f\xc2\x85r\xef\xbf\xbd" "oxy\"\\"

struct fixture {
	struct reload_report last;
	struct failed_generation failed;
	GPtrArray *gens;
	GPtrArray *foreign;
	struct status_view view;
};

static struct foreign *odd_foreign(void)
{
	struct foreign *f = g_new0(struct foreign, 1);

	f->kind = FOREIGN_STANDALONE;
	f->pid = 4242;
	f->workers = g_array_new(FALSE, FALSE, sizeof(GPid));
	f->worker_start_times = g_array_new(FALSE, FALSE, sizeof(guint64));
	f->exe = g_strdup(ODD_EXE);
	return f;
}

static void fixture_init(struct fixture *fx)
{
	struct generation *g = generation_new(3, LAUNCH_MW, "2.6.12");
	GPid w = 5151;

	g->pid = 5150;
	g->state = GEN_CURRENT;
	g->started_us = G_GINT64_CONSTANT(1700000000) * G_USEC_PER_SEC;
	g_array_append_val(g->workers, w);
	fx->gens = g_ptr_array_new_with_free_func(
		(GDestroyNotify)generation_free);
	g_ptr_array_add(fx->gens, g);
	fx->foreign = g_ptr_array_new_with_free_func(
		(GDestroyNotify)foreign_free);
	g_ptr_array_add(fx->foreign, odd_foreign());
	fx->last = (struct reload_report){
		.valid = TRUE, .ok = FALSE, .duration_us = 12000,
		.message = g_strdup("bad\xfe config\x1f"),
	};
	fx->view = (struct status_view){
		.wrapper_pid = 99, .phase = "running", .reloads = 2,
		.reloads_failed = 1, .last = &fx->last, .failed = &fx->failed,
		.gens = fx->gens, .current = g, .foreign = fx->foreign,
		.reuseport = "active",
	};
}

static void fixture_clear(struct fixture *fx)
{
	g_ptr_array_unref(fx->gens);
	g_ptr_array_unref(fx->foreign);
	reload_report_clear(&fx->last);
}

/* status_json() without its "ok" verdict line, parsed. */
static JsonNode *parsed_status(const struct status_view *v)
{
	g_autofree gchar *answer = status_json(v);
	g_autoptr(JsonParser) p = json_parser_new();
	g_autoptr(GError) error = NULL;
	gchar *verdict = strrchr(answer, '\n');

	g_assert_nonnull(verdict);
	g_assert_cmpstr(verdict, ==, "\nok");
	*verdict = '\0';
	/* What a strict parser (jq, Python's json) requires of a string. */
	g_assert_true(g_utf8_validate(answer, -1, NULL));
	for (const char *c = answer; *c; c++)
		g_assert_cmpint((unsigned char)*c, >=, 0x20);
	g_assert_true(json_parser_load_from_data(p, answer, -1, &error));
	g_assert_no_error(error);
	return json_node_copy(json_parser_get_root(p));
}

static void test_odd_executable(void)
{
	struct fixture fx = { 0 };
	g_autoptr(JsonNode) root = NULL;
	JsonObject *o, *last;
	JsonArray *gens;

	fixture_init(&fx);
	root = parsed_status(&fx.view);
	o = json_node_get_object(root);
	gens = json_object_get_array_member(o, "generations");
	g_assert_cmpuint(json_array_get_length(gens), ==, 2);
	g_assert_cmpstr(json_object_get_string_member(
				json_array_get_object_element(gens, 1),
				"executable"), ==, ODD_EXE_READ);
	last = json_object_get_object_member(o, "last_reload");
	g_assert_cmpstr(json_object_get_string_member(last, "message"), ==,
			"bad\xef\xbf\xbd config\x1f");
	fixture_clear(&fx);
}

/* The keys and types the document had before json-glib wrote it. */
static void test_keys_and_types(void)
{
	struct fixture fx = { 0 };
	g_autoptr(JsonNode) root = NULL;
	JsonObject *o, *gen, *foreign, *last;
	JsonArray *gens;

	fixture_init(&fx);
	root = parsed_status(&fx.view);
	o = json_node_get_object(root);
	g_assert_cmpint(json_object_get_int_member(o, "wrapper_pid"), ==, 99);
	g_assert_cmpstr(json_object_get_string_member(o, "version"), ==,
			WRAPPER_VERSION);
	g_assert_cmpstr(json_object_get_string_member(o, "state"), ==,
			"running");
	g_assert_cmpint(json_object_get_int_member(o, "reloads"), ==, 3);
	g_assert_cmpint(json_object_get_int_member(o, "reloads_ok"), ==, 2);
	g_assert_cmpint(json_object_get_int_member(o, "reloads_failed"), ==, 1);
	g_assert_cmpstr(json_object_get_string_member(o, "reuseport_migration"),
			==, "active");
	last = json_object_get_object_member(o, "last_reload");
	g_assert_cmpstr(json_object_get_string_member(last, "result"), ==,
			"failed");
	g_assert_cmpint(json_object_get_int_member(last, "duration_ms"), ==,
			12);
	gens = json_object_get_array_member(o, "generations");
	gen = json_array_get_object_element(gens, 0);
	g_assert_cmpint(json_object_get_int_member(gen, "number"), ==, 3);
	g_assert_cmpint(json_object_get_int_member(gen, "pid"), ==, 5150);
	g_assert_cmpstr(json_object_get_string_member(gen, "haproxy"), ==,
			"2.6.12");
	g_assert_cmpstr(json_object_get_string_member(gen, "started"), ==,
			"2023-11-14T22:13:20Z");
	g_assert_cmpstr(json_object_get_string_member(gen, "state"), ==,
			"current");
	g_assert_true(json_object_get_boolean_member(gen, "master"));
	g_assert_cmpint(json_array_get_int_element(
		json_object_get_array_member(gen, "workers"), 0), ==, 5151);
	g_assert_cmpuint(json_array_get_length(
		json_object_get_array_member(gen, "old_workers")), ==, 0);
	foreign = json_array_get_object_element(gens, 1);
	g_assert_true(json_object_get_null_member(foreign, "number"));
	g_assert_true(json_object_get_null_member(foreign, "haproxy"));
	g_assert_cmpint(json_object_get_int_member(foreign, "pid"), ==, 4242);
	g_assert_cmpstr(json_object_get_string_member(foreign, "state"), ==,
			"foreign");
	fixture_clear(&fx);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/status/json-odd-executable", test_odd_executable);
	g_test_add_func("/status/json-keys-and-types", test_keys_and_types);
	return g_test_run();
}
