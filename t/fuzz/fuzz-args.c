/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the 1.x command line, as written in unit files and
 * scripts. The input is argv (argv[0] excluded), NUL-separated. A command
 * line that parses must give haproxy argv whose translation is stable:
 * parsing what haproxy_argv_build() made gives back the same haproxy
 * arguments, pidfile, one-shot kind and config tail, with the -sf pids
 * the wrapper added and no wrapper option.
 */
#include "legacy/args.h"
#include "t/fuzz/fuzz.h"

#define CWD "/var/lib/hsw-fuzz"
#define HAPROXY "/usr/sbin/haproxy"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_glib_fatal();
	return 0;
}

/* "a\0b\0" and "a\0b" are both { "a", "b" }; "" is no argument. */
static GStrv split_argv(const uint8_t *data, size_t size)
{
	g_autoptr(GPtrArray) v = g_ptr_array_new();
	size_t start = 0;

	for (size_t i = 0; i <= size; i++) {
		if (i < size && data[i] != '\0')
			continue;
		if (i == size && start == size)
			break;
		g_ptr_array_add(v, g_strndup((const char *)data + start,
					     i - start));
		start = i + 1;
	}
	g_ptr_array_add(v, NULL);
	return (GStrv)g_ptr_array_free(g_steal_pointer(&v), FALSE);
}

static gboolean strv_equal0(char *const *a, char *const *b)
{
	if (!a || !b)
		return a == b;
	return g_strv_equal((const char *const *)a, (const char *const *)b);
}

static void check_parsed(const struct wrapper_args *a)
{
	FUZZ_CHECK(a->wrapper_opts && a->haproxy_args && a->user_old_pids);
	for (char **o = a->wrapper_opts; *o; o++)
		FUZZ_CHECK(g_str_has_prefix(*o, "--") && (*o)[2] != '\0');
	for (guint i = 0; i < a->user_old_pids->len; i++)
		FUZZ_CHECK(g_array_index(a->user_old_pids, GPid, i) > 0);
	FUZZ_CHECK(!a->pidfile || g_path_is_absolute(a->pidfile));
}

/* argv built for haproxy, parsed again as if a user had typed it. */
static void reparse(GStrv argv, struct wrapper_args *out)
{
	g_autoptr(GError) error = NULL;
	int argc = g_strv_length(argv);

	FUZZ_CHECK(argc >= 1 && strcmp(argv[0], HAPROXY) == 0);
	if (!wrapper_args_parse(argc - 1, argv + 1, CWD, out, &error)) {
		g_printerr("built argv does not parse again: %s\n",
			   error->message);
		abort();
	}
	FUZZ_CHECK(g_strv_length(out->wrapper_opts) == 0);
}

/* b parsed what a gave haproxy, extra arguments (if any) after a's own. */
static void check_same_translation(const struct wrapper_args *a,
				   const struct wrapper_args *b,
				   const char *const *extra)
{
	g_autoptr(GStrvBuilder) want = g_strv_builder_new();
	g_auto(GStrv) args = NULL;

	g_strv_builder_addv(want, (const char **)a->haproxy_args);
	if (extra)
		g_strv_builder_addv(want, (const char **)extra);
	args = g_strv_builder_end(want);
	FUZZ_CHECK(strv_equal0(args, b->haproxy_args));
	FUZZ_CHECK(strv_equal0(a->config_tail, b->config_tail));
	FUZZ_CHECK(g_strcmp0(a->pidfile, b->pidfile) == 0);
	FUZZ_CHECK(a->oneshot == b->oneshot);
}

static void check_build(const struct wrapper_args *a, enum launch_mode mode,
			const char *const *extra, GPid witness)
{
	const GArray *old = a->user_old_pids;
	g_auto(GStrv) argv = haproxy_argv_build(HAPROXY, mode, NULL, a, extra,
						(const GPid *)old->data,
						old->len, witness,
						a->user_old_hard);
	struct wrapper_args back;
	guint want = old->len + (witness > 0);

	reparse(argv, &back);
	check_same_translation(a, &back, extra);
	FUZZ_CHECK(back.user_old_pids->len == want);
	FUZZ_CHECK(old->len == 0 ||
		   memcmp(back.user_old_pids->data, old->data,
			  old->len * sizeof(GPid)) == 0);
	if (witness > 0)
		FUZZ_CHECK(g_array_index(back.user_old_pids, GPid,
					 old->len) == witness);
	if (want)
		FUZZ_CHECK(back.user_old_hard == a->user_old_hard);
	wrapper_args_clear(&back);
}

static void check_oneshot(const struct wrapper_args *a)
{
	g_auto(GStrv) argv = haproxy_argv_oneshot(HAPROXY, a);
	struct wrapper_args back;

	reparse(argv, &back);
	check_same_translation(a, &back, NULL);
	FUZZ_CHECK(back.user_old_pids->len == 0);
	wrapper_args_clear(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* What the wrapper adds for a seamless reload. */
	static const char *const expose[] = { "-x", "/run/hsw/fuzz.sock", NULL };
	g_auto(GStrv) argv = split_argv(data, size);
	g_autoptr(GError) error = NULL;
	struct wrapper_args a;

	if (!wrapper_args_parse(g_strv_length(argv), argv, CWD, &a, &error)) {
		FUZZ_CHECK(error && error->domain == WRAPPER_ARGS_ERROR);
		FUZZ_CHECK(!a.haproxy_args && !a.wrapper_opts &&
			   !a.user_old_pids && !a.pidfile);
		return 0;
	}
	FUZZ_CHECK(!error);
	check_parsed(&a);
	check_build(&a, LAUNCH_DB, NULL, 0);
	check_build(&a, LAUNCH_DB, NULL, 4242);
	check_build(&a, LAUNCH_DS, expose, G_MAXINT);
	check_oneshot(&a);
	wrapper_args_clear(&a);
	return 0;
}
