/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control protocol's grammar. */
#include <glib.h>
#include <string.h>

#include "wrapper/protocol.h"

static enum control_command parse(const char *s, const char **error)
{
	return control_parse(s, strlen(s), error);
}

static void test_commands(void)
{
	const char *error;

	g_assert_cmpint(parse("reload\n", &error), ==, CMD_RELOAD);
	g_assert_null(error);
	g_assert_cmpint(parse("hard-reload\n", &error), ==, CMD_HARD_RELOAD);
	g_assert_cmpint(parse("status\n", &error), ==, CMD_STATUS);
	g_assert_cmpint(parse("status json\n", &error), ==, CMD_STATUS_JSON);
	g_assert_cmpint(parse("status openmetrics\n", &error), ==,
			CMD_STATUS_OPENMETRICS);
	g_assert_cmpint(parse("handoff\n", &error), ==, CMD_HANDOFF);
	/* CRLF and trailing blanks from hand-typed clients. */
	g_assert_cmpint(parse("reload \r\n", &error), ==, CMD_RELOAD);
	/* Only the first line counts. */
	g_assert_cmpint(parse("status\nreload\n", &error), ==, CMD_STATUS);
}

static void test_incomplete(void)
{
	const char *error;
	g_autofree gchar *long_line = g_strnfill(CONTROL_MAX_LINE + 1, 'a');

	g_assert_cmpint(parse("", &error), ==, CMD_INCOMPLETE);
	g_assert_cmpint(parse("relo", &error), ==, CMD_INCOMPLETE);
	g_assert_null(error);
	/* Waiting for a newline is bounded. */
	g_assert_cmpint(parse(long_line, &error), ==, CMD_INVALID);
	g_assert_cmpstr(error, ==, "line too long");
}

static void test_invalid(void)
{
	static const char nul[] = "rel\0oad\n";
	const char *error;

	g_assert_cmpint(parse("Reload\n", &error), ==, CMD_INVALID);
	g_assert_nonnull(strstr(error, "unknown command"));
	g_assert_cmpint(parse(" reload\n", &error), ==, CMD_INVALID);
	g_assert_cmpint(parse("status  json\n", &error), ==, CMD_INVALID);
	g_assert_cmpint(parse("\n", &error), ==, CMD_INVALID);
	g_assert_cmpint(control_parse(nul, sizeof(nul) - 1, &error), ==,
			CMD_INVALID);
	g_assert_cmpstr(error, ==, "binary data");
	/* A NUL after the newline is not part of the command. */
	g_assert_cmpint(control_parse("reload\n\0", 8, &error), ==, CMD_RELOAD);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/protocol/commands", test_commands);
	g_test_add_func("/protocol/incomplete", test_incomplete);
	g_test_add_func("/protocol/invalid", test_invalid);
	return g_test_run();
}
