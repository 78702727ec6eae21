/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The real haproxy under test: Debian's /usr/sbin/haproxy, or the build
 * that $HSW_TEST_HAPROXY names (make check runs the real-haproxy tests
 * again on older and newer series that way), its version, and the skips
 * of the tests that do not apply to it.
 */
#include "t/lib/harness.h"

#include "legacy/version.h"

#define DEBIAN_HAPROXY "/usr/sbin/haproxy"

const char *t_haproxy_path(void)
{
	const char *env = g_getenv("HSW_TEST_HAPROXY");

	return env && *env ? env : DEBIAN_HAPROXY;
}

gboolean t_haproxy_switched(void)
{
	return g_strcmp0(t_haproxy_path(), DEBIAN_HAPROXY) != 0;
}

gboolean t_have_haproxy(void)
{
	return g_file_test(t_haproxy_path(), G_FILE_TEST_IS_EXECUTABLE);
}

/* Asked once: "haproxy -v" of the one under test; NULL when there is
 * none (its tests skip as they start). */
static const struct haproxy_version *version_under_test(void)
{
	static struct haproxy_version v;
	static gboolean asked;
	const char *argv[] = { t_haproxy_path(), "-v", NULL };
	g_autofree gchar *out = NULL;

	if (!t_have_haproxy())
		return NULL;
	if (asked)
		return &v;
	asked = TRUE;
	/* Bounded: a haproxy that hangs fails the test, it does not stall. */
	if (t_run_command(argv, T_WAIT, &out, NULL) != 0 ||
	    !haproxy_version_parse(out, &v))
		g_error("%s -v: no version (%s)", t_haproxy_path(), out);
	return &v;
}

const char *t_haproxy_version(void)
{
	const struct haproxy_version *v = version_under_test();

	return v ? v->full : "(none)";
}

gboolean t_haproxy_at_least(guint major, guint minor)
{
	const struct haproxy_version *v = version_under_test();

	return !v || haproxy_version_compare(v, major, minor, 0) >= 0;
}

gboolean t_haproxy_needs(guint major, guint minor, const char *what)
{
	g_autofree gchar *why = NULL;

	if (t_haproxy_at_least(major, minor))
		return TRUE;
	why = g_strdup_printf("haproxy %s: %s needs %u.%u or later",
			      t_haproxy_version(), what, major, minor);
	g_test_skip(why);
	return FALSE;
}
