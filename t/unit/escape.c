/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for base/escape.c: untrusted text in logs, status and JSON. */
#include <string.h>

#include "base/escape.h"

static void check(const char *in, gsize max, const char *want)
{
	g_autofree gchar *got = escape_untrusted(in, max);

	g_assert_cmpstr(got, ==, want);
	g_assert_true(g_utf8_validate(got, -1, NULL));
}

/* A forged journal line, and every kind of control. */
static void test_untrusted(void)
{
	check("/usr/sbin/haproxy", 0, "/usr/sbin/haproxy");
	check("t\n<0>haproxy-systemd-wrapper: FORGED", 0,
	      "t\\n<0>haproxy-systemd-wrapper: FORGED");
	check("<0>x", 0, "\\x3c0>x");
	check("a<b", 0, "a<b");
	check("tab\there\rcr", 0, "tab\\there\\rcr");
	check("\x01\x1b[31m\x7f", 0, "\\x01\\x1b[31m\\x7f");
	check("back\\slash", 0, "back\\\\slash");
	/* C1 controls (U+0085 NEL...) and bytes that are not UTF-8 */
	check("a\xc2\x85z", 0, "a\\u0085z");
	check("bad\xff\xfe", 0, "bad\\xff\\xfe");
	check("caf\xc3\xa9", 0, "caf\xc3\xa9");
	check("", 0, "");
	check("abcdef", 3, "abc...");
	check("abc", 3, "abc");
}

static void check_json(const char *in, const char *want)
{
	g_autofree gchar *got = escape_json_controls(in);

	g_assert_cmpstr(got, ==, want);
	g_assert_true(g_utf8_validate(got, -1, NULL));
	for (const char *p = got; *p; p++)
		g_assert_cmpint((unsigned char)*p, >=, 0x20);
}

/* What json-glib leaves raw in a compact document: U+001F, C1. */
static void test_json(void)
{
	check_json("{\"e\":\"/usr/sbin/haproxy\"}",
		   "{\"e\":\"/usr/sbin/haproxy\"}");
	check_json("[\"a\x1f" "b\"]", "[\"a\\u001fb\"]");
	check_json("[\"\xc2\x85\xc2\x9b\"]", "[\"\\u0085\\u009b\"]");
	check_json("[\"\x7f\"]", "[\"\\u007f\"]");
	check_json("[\"caf\xc3\xa9 \\u0001\"]", "[\"caf\xc3\xa9 \\u0001\"]");
}

/* Whatever the bytes: one line, valid UTF-8, never a leading '<'. */
static void test_random(void)
{
	GRand *r = g_rand_new_with_seed(42);

	for (guint i = 0; i < 20000; i++) {
		guint8 buf[33];
		guint n = g_rand_int_range(r, 0, 32);
		g_autofree gchar *out = NULL;
		g_autofree gchar *j = NULL;
		g_autofree gchar *valid = NULL;

		for (guint k = 0; k < n; k++)
			buf[k] = (guint8)g_rand_int_range(r, 1, 256);
		buf[n] = 0;
		out = escape_untrusted((const char *)buf, 0);
		g_assert_true(g_utf8_validate(out, -1, NULL));
		g_assert_null(strpbrk(out, "\n\r"));
		g_assert_cmpint(out[0], !=, '<');
		valid = g_utf8_make_valid((const char *)buf, -1);
		j = escape_json_controls(valid);
		g_assert_true(g_utf8_validate(j, -1, NULL));
		for (const char *p = j; *p; p++)
			g_assert_cmpint((unsigned char)*p, >=, 0x20);
	}
	g_rand_free(r);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/escape/untrusted", test_untrusted);
	g_test_add_func("/escape/json", test_json);
	g_test_add_func("/escape/random", test_random);
	return g_test_run();
}
