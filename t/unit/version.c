/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for legacy/version.c: "haproxy -v" banners from 1.5 to 3.x. */
#include <string.h>

#include "legacy/version.h"

static void check_version(const char *output, guint major, guint minor,
			  guint patch, const char *full)
{
	struct haproxy_version v;

	memset(&v, 0xa5, sizeof(v));
	g_assert_true(haproxy_version_parse(output, &v));
	g_assert_cmpuint(v.major, ==, major);
	g_assert_cmpuint(v.minor, ==, minor);
	g_assert_cmpuint(v.patch, ==, patch);
	g_assert_cmpstr(v.full, ==, full);
}

static void check_not_version(const char *output)
{
	struct haproxy_version v = { .major = 42, .full = "untouched" };

	g_assert_false(haproxy_version_parse(output, &v));
	/* a failed parse leaves the caller's struct alone */
	g_assert_cmpuint(v.major, ==, 42);
	g_assert_cmpstr(v.full, ==, "untouched");
}

static void test_15(void)
{
	check_version("HA-Proxy version 1.5.18 2016/05/10\n"
		      "Copyright 2000-2016 Willy Tarreau <willy@haproxy.org>\n"
		      "\n",
		      1, 5, 18, "1.5.18");
}

static void test_17(void)
{
	check_version("HA-Proxy version 1.7.0 2016/11/25\n"
		      "Copyright 2000-2016 Willy Tarreau <willy@haproxy.org>\n",
		      1, 7, 0, "1.7.0");
}

static void test_18_hash(void)
{
	check_version("HA-Proxy version 1.8.30-c248dabed 2021/04/11\n"
		      "Copyright 2000-2021 Willy Tarreau <willy@haproxy.org>\n",
		      1, 8, 30, "1.8.30-c248dabed");
}

static void test_19_url(void)
{
	check_version("HA-Proxy version 1.9.0 2018/12/19 - https://haproxy.org/\n",
		      1, 9, 0, "1.9.0");
}

static void test_26_debian(void)
{
	check_version("HAProxy version 2.6.12-1+deb12u4 2023/03/14 - https://haproxy.org/\n"
		      "Status: long-term supported branch - will stop receiving fixes around Q2 2027.\n"
		      "Known bugs: http://www.haproxy.org/bugs/bugs-2.6.12.html\n"
		      "Running on: Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64\n",
		      2, 6, 12, "2.6.12-1+deb12u4");
}

static void test_30(void)
{
	check_version("HAProxy version 3.0.0-5590ada47 2024/05/29 - https://haproxy.org/\n"
		      "Status: long-term supported branch - will stop receiving fixes around Q2 2029.\n",
		      3, 0, 0, "3.0.0-5590ada47");
}

static void test_dev_versions(void)
{
	check_version("HA-Proxy version 1.6-dev7-a088d3-4 2015/10/12\n"
		      "Copyright 2000-2015 Willy Tarreau <willy@haproxy.org>\n",
		      1, 6, 0, "1.6-dev7-a088d3-4");
	check_version("HA-Proxy version 1.8-dev2 2017/06/02\n", 1, 8, 0,
		      "1.8-dev2");
	check_version("HAProxy version 3.3-dev8-1234abcd 2025/09/01 - https://haproxy.org/\n",
		      3, 3, 0, "3.3-dev8-1234abcd");
	/* a dot not followed by digits is not a patch level */
	check_version("HAProxy version 2.9.x 2025/01/01\n", 2, 9, 0, "2.9.x");
}

static void test_after_warnings(void)
{
	check_version("[WARNING]  (1234) : something odd in the environment\n"
		      "HAProxy version is not what this line is\n"
		      "Note: HAProxy version 9.9.9 is only mentioned here\n"
		      "HAProxy version 2.8.5 2023/12/07 - https://haproxy.org/\n",
		      2, 8, 5, "2.8.5");
	/* a bad banner does not hide a good one below it */
	check_version("HAProxy version x.y 2020/01/01\n"
		      "HA-Proxy version 1.5.4 2014/09/02\n",
		      1, 5, 4, "1.5.4");
}

static void test_line_endings(void)
{
	check_version("HA-Proxy version 1.7.14", 1, 7, 14, "1.7.14");
	check_version("HAProxy version 2.4.0\n", 2, 4, 0, "2.4.0");
	check_version("HAProxy version 2.4.1\r\nStatus: x\r\n", 2, 4, 1,
		      "2.4.1");
	check_version("\n\nHAProxy version 2.2.33 2024/04/05", 2, 2, 33,
		      "2.2.33");
}

static void test_garbage(void)
{
	check_not_version("");
	check_not_version(NULL);
	check_not_version("garbage\n\x01\x02\xff\n");
	check_not_version("HAProxy version ");
	check_not_version("HAProxy version \n1.8.0\n");
	check_not_version("HAProxy version  1.8.0 2017/11/26\n");
	check_not_version("HAProxy version x.y\n");
	check_not_version("HAProxy version 1 2020/01/01\n");
	check_not_version("HAProxy version 1. 2020/01/01\n");
	check_not_version("HAProxy version 1.x\n");
	check_not_version("HAProxy version .1.2\n");
	check_not_version("HAProxy version -1.2\n");
	check_not_version("haproxy version 1.8.0\n");
	check_not_version("HA-Proxy  version 1.8.0\n");
	check_not_version(" HAProxy version 1.8.0\n");
	check_not_version("1.8.0\n");
}

static void test_overflow(void)
{
	check_not_version("HAProxy version 4294967297.1.0\n");
	check_not_version("HAProxy version 1.99999999999999999999 x\n");
	check_not_version("HAProxy version 1000.0\n");
	check_not_version("HAProxy version 1.1000\n");
	check_not_version("HAProxy version 1.2.1000\n");
	check_version("HAProxy version 999.999.999\n", 999, 999, 999,
		      "999.999.999");
	check_version("HAProxy version 001.008.0003\n", 1, 8, 3,
		      "001.008.0003");
}

static void test_long_token(void)
{
	g_autofree gchar *suffix = g_strnfill(5000, 'a');
	g_autofree gchar *output = g_strdup_printf(
		"HAProxy version 2.6.12-%s 2023/03/14\n", suffix);
	g_autofree gchar *want = g_strndup(output + strlen("HAProxy version "),
					   sizeof(((struct haproxy_version *)0)->full) - 1);
	struct haproxy_version v;

	g_assert_true(haproxy_version_parse(output, &v));
	g_assert_cmpuint(v.major, ==, 2);
	g_assert_cmpuint(v.minor, ==, 6);
	g_assert_cmpuint(v.patch, ==, 12);
	g_assert_cmpuint(strlen(v.full), ==, sizeof(v.full) - 1);
	g_assert_cmpstr(v.full, ==, want);

	/* exactly 63 characters still fits whole */
	g_clear_pointer(&output, g_free);
	g_clear_pointer(&want, g_free);
	want = g_strdup_printf("3.0.0-%s", suffix);
	want[sizeof(v.full) - 1] = '\0';
	output = g_strdup_printf("HAProxy version %s\n", want);
	g_assert_true(haproxy_version_parse(output, &v));
	g_assert_cmpstr(v.full, ==, want);
}

static struct haproxy_version version_of(const char *output)
{
	struct haproxy_version v;

	g_assert_true(haproxy_version_parse(output, &v));
	return v;
}

static void test_launch_mode(void)
{
	struct haproxy_version v;

	v = version_of("HA-Proxy version 1.5.18 2016/05/10");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DS);
	v = version_of("HA-Proxy version 1.7.14 2021/03/31");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DS);
	v = version_of("HA-Proxy version 1.6-dev7-a088d3-4 2015/10/12");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DS);
	v = version_of("HA-Proxy version 1.8.0 2017/11/26");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DB);
	v = version_of("HA-Proxy version 1.8-dev2 2017/06/02");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DB);
	v = version_of("HAProxy version 2.6 2023/03/14");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DB);
	v = version_of("HAProxy version 3.2.0 2025/05/28");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DB);
	v = version_of("HAProxy version 0.9.9 2000/01/01");
	g_assert_cmpint(haproxy_version_launch_mode(&v), ==, LAUNCH_DS);
}

static void test_compare(void)
{
	struct haproxy_version v = version_of("HAProxy version 2.6.12-1 x");

	g_assert_cmpint(haproxy_version_compare(&v, 2, 6, 12), ==, 0);
	g_assert_cmpint(haproxy_version_compare(&v, 2, 6, 11), >, 0);
	g_assert_cmpint(haproxy_version_compare(&v, 2, 6, 13), <, 0);
	g_assert_cmpint(haproxy_version_compare(&v, 2, 7, 0), <, 0);
	g_assert_cmpint(haproxy_version_compare(&v, 2, 5, 99), >, 0);
	g_assert_cmpint(haproxy_version_compare(&v, 3, 0, 0), <, 0);
	g_assert_cmpint(haproxy_version_compare(&v, 1, 99, 99), >, 0);
	g_assert_cmpint(haproxy_version_compare(&v, G_MAXUINT, 0, 0), <, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/version/1.5", test_15);
	g_test_add_func("/version/1.7", test_17);
	g_test_add_func("/version/1.8-hash", test_18_hash);
	g_test_add_func("/version/1.9-url", test_19_url);
	g_test_add_func("/version/2.6-debian", test_26_debian);
	g_test_add_func("/version/3.0", test_30);
	g_test_add_func("/version/dev", test_dev_versions);
	g_test_add_func("/version/after-warnings", test_after_warnings);
	g_test_add_func("/version/line-endings", test_line_endings);
	g_test_add_func("/version/garbage", test_garbage);
	g_test_add_func("/version/overflow", test_overflow);
	g_test_add_func("/version/long-token", test_long_token);
	g_test_add_func("/version/launch-mode", test_launch_mode);
	g_test_add_func("/version/compare", test_compare);

	return g_test_run();
}
