/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * legacy/cfgwords.c: configuration words read as haproxy reads them. The
 * expected words are what haproxy 1.7.0, 1.8.30, 2.0.0, 2.6, 2.8.0, 3.0.0
 * and 3.4.0 made of the same text in a "user" line (black-box runs: the
 * name its refusal quoted back); "${NAME-DEFAULT}" and "${NAME[*]}" as
 * 2.6 and later read them (1.7 and 2.0 refuse such a line, so no running
 * one has it).
 */
#include <string.h>

#include "legacy/cfgwords.h"
#include "t/lib/cfgtext.h"

static const char *const env[] = {
	"U=nobody", "V=a b", "E=", "U_2=x", NULL,
};

/* line's words joined by "|", or NULL when the line is refused. */
static gchar *words_of(const char *line)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) w = config_line_words(line, strlen(line), env, &error);

	if (!w) {
		g_assert_nonnull(error);
		return NULL;
	}
	g_assert_no_error(error);
	return g_strjoinv("|", w);
}

static void check(const char *line, const char *want)
{
	g_autofree gchar *got = words_of(line);

	g_test_message("%s -> %s", line, got ? got : "(refused)");
	g_assert_cmpstr(got, ==, want);
}

static void test_blanks_and_comments(void)
{
	check("  user\tnobody  ", "user|nobody");
	check("user nobody\r", "user|nobody");
	check("user nobody # a comment", "user|nobody");
	check("user nobody#a", "user|nobody");
	check("# user nobody", "");
	check("", "");
	check("user nobody\nuser other", "user|nobody");
}

static void test_quotes(void)
{
	check("user \"nobody\"", "user|nobody");
	check("user 'nobody'", "user|nobody");
	check("user no\"bo\"dy", "user|nobody");
	check("user \"no body\"", "user|no body");
	check("user \"a#b\"", "user|a#b");
	check("user 'a#b'", "user|a#b");
	check("user \"z'z\"", "user|z'z");
	check("user 'z\"z'", "user|z\"z");
	check("user \"\"", "user|");
	check("user \"nobody", NULL);
	check("user nobody'", NULL);
	check("user 'z\\'z'", NULL);
}

static void test_backslashes(void)
{
	check("user z\\ z", "user|z z");
	check("user z\\\\z", "user|z\\z");
	check("user z\\#z", "user|z#z");
	check("user z\\\"z", "user|z\"z");
	check("user z\\'z", "user|z'z");
	check("user z\\tz", "user|z\tz");
	check("user z\\rz", "user|z\rz");
	check("user z\\nz", "user|z\nz");
	check("user z\\x41z", "user|zAz");
	check("user \"z\\x41z\"", "user|zAz");
	check("user 'z\\x41z'", "user|z\\x41z");
	check("user z\\zz", "user|z\\zz");
	check("user \"z\\zz\"", "user|z\\zz");
	check("user zz\\", "user|zz\\");
	check("user z\\$z", "user|z\\$z");
	check("user \"z\\$Uz\"", "user|z$Uz");
	check("user \"z\\\"z\"", "user|z\"z");
	check("user z\\x4", NULL);
	check("user z\\x4g", NULL);
}

static void test_variables(void)
{
	check("user \"${U}\"", "user|nobody");
	check("user \"$U\"", "user|nobody");
	check("user \"zz${U}\"x\"y\"", "user|zznobodyxy");
	check("user \"$U_2\"", "user|x");
	check("user \"z$Uz\"", "user|z");
	check("user \"z${NOPE}z\"", "user|zz");
	check("user \"${NOPE-zdef}\"", "user|zdef");
	check("user \"${U-zdef}\"", "user|nobody");
	check("user \"${E-zdef}\"", "user|");
	check("user \"${NOPE-a\"b}\"", "user|a\"b");
	check("user \"z${V[*]}z\"", "user|za|bz");
	check("user \"z${U[*]}z\"", "user|znobodyz");
	/* Outside double quotes, '$' is a character. */
	check("user ${U}", "user|${U}");
	check("user $U", "user|$U");
	check("user '${U}'", "user|${U}");
	check("user \"z$\"", NULL);
	check("user \"z${\"", NULL);
	check("user \"z${U\"", NULL);
	check("user \"z$1z\"", NULL);
	check("user \"z${U:-d}z\"", NULL);
}

/* The hints take the user and group haproxy takes. */
static void test_hints(void)
{
	static const char text[] =
		"global\n"
		"    user \"${U}\" # from the environment\n"
		"    group 'nogroup'\n"
		"    nbproc \"2\"\n";
	struct config_hints h = t_config_hints(text, sizeof(text) - 1);

	g_assert_cmpstr(h.user, ==, "nobody");
	g_assert_cmpstr(h.group, ==, "nogroup");
	g_assert_cmpuint(h.nbproc, ==, 2);

	/* A line haproxy refuses says nothing. */
	h = t_config_hints("global\n user \"nobody\n", 21);
	g_assert_cmpstr(h.user, ==, "");
}

/* The global section's setenv, presetenv, unsetenv and resetenv change
 * what the lines after them read (haproxy 1.7 and later), in the file
 * they are in; the wrapper's environment is left as it was. */
static void scan_env(const char *text, struct config_hints *h)
{
	*h = t_config_hints(text, strlen(text));
}

static void test_hints_env_changed(void)
{
	struct config_hints h = { 0 };

	scan_env("global\n setenv R nobody\n user \"$R\"\n", &h);
	g_assert_cmpstr(h.user, ==, "nobody");
	scan_env("global\n presetenv U root\n user \"$U\"\n", &h);
	g_assert_cmpstr(h.user, ==, "nobody");
	scan_env("global\n unsetenv U\n user \"x$U\"\n", &h);
	g_assert_cmpstr(h.user, ==, "x");
	scan_env("global\n resetenv V\n user \"x$U$V\"\n", &h);
	g_assert_cmpstr(h.user, ==, "xa b");
	g_assert_cmpstr(g_getenv("U"), ==, "nobody");
	/* A name setenv(3) refuses (haproxy too) changes nothing. */
	scan_env("global\n unsetenv U=x\n user \"$U\"\n", &h);
	g_assert_cmpstr(h.user, ==, "nobody");
	scan_env("global\n setenv U=x y\n setenv \"\" y\n user \"$U\"\n", &h);
	g_assert_cmpstr(h.user, ==, "nobody");
	scan_env("global\n resetenv U V=\n user \"$U\"\n", &h);
	g_assert_cmpstr(h.user, ==, "nobody");
	/* Outside the global section it is no keyword. */
	scan_env("defaults\n setenv R x\nglobal\n user \"$R\"\n", &h);
	g_assert_cmpstr(h.user, ==, "");
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	/* The hints read the environment haproxy gets: the wrapper's. */
	for (guint i = 0; env[i]; i++) {
		g_auto(GStrv) kv = g_strsplit(env[i], "=", 2);

		g_setenv(kv[0], kv[1], TRUE);
	}
	g_test_add_func("/cfgwords/blanks-and-comments",
			test_blanks_and_comments);
	g_test_add_func("/cfgwords/quotes", test_quotes);
	g_test_add_func("/cfgwords/backslashes", test_backslashes);
	g_test_add_func("/cfgwords/variables", test_variables);
	g_test_add_func("/cfgwords/hints", test_hints);
	g_test_add_func("/cfgwords/hints-env-changed", test_hints_env_changed);
	return g_test_run();
}
