/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Splitting the 1.x wrapper's command line. haproxy recognises its flags by
 * their first letters only, so the tests below look at prefixes the same
 * way: whatever haproxy would take as a flag, we take as that flag too.
 */
#include <limits.h>
#include <string.h>

#include "legacy/args.h"
#include "legacy/version.h"

G_DEFINE_QUARK(wrapper-args-error-quark, wrapper_args_error)

/* Accumulates a parse before it is handed to the caller in one piece. */
struct args_builder {
	GPtrArray *wrapper_opts;
	GPtrArray *haproxy_args;
	GStrv config_tail;
	const char *pidfile;	/* last -p value, borrowed from argv */
	const char *basedir;	/* last -C value, borrowed from argv */
	GArray *user_old_pids;
	gboolean user_old_hard;
	gboolean master_worker;
	gboolean master_cli;
	enum oneshot oneshot;
};

static void args_builder_init(struct args_builder *b)
{
	*b = (struct args_builder){
		.wrapper_opts = g_ptr_array_new_with_free_func(g_free),
		.haproxy_args = g_ptr_array_new_with_free_func(g_free),
		.user_old_pids = g_array_new(FALSE, FALSE, sizeof(GPid)),
		.oneshot = ONESHOT_NONE,
	};
}

static void args_builder_free(struct args_builder *b)
{
	g_clear_pointer(&b->wrapper_opts, g_ptr_array_unref);
	g_clear_pointer(&b->haproxy_args, g_ptr_array_unref);
	g_clear_pointer(&b->config_tail, g_strfreev);
	g_clear_pointer(&b->user_old_pids, g_array_unref);
}

/* Turns a GPtrArray of strings into a GStrv, consuming the array. */
static GStrv ptr_array_steal_strv(GPtrArray **arr)
{
	GPtrArray *a = g_steal_pointer(arr);

	g_ptr_array_add(a, NULL);
	return (GStrv)g_ptr_array_free(a, FALSE);
}

static GStrv strv_copy_n(char *const *v, int n)
{
	GStrv copy = g_new0(gchar *, n + 1);

	for (int i = 0; i < n; i++)
		copy[i] = g_strdup(v[i]);
	return copy;
}

static gboolean is_wrapper_option(const char *arg)
{
	return arg[0] == '-' && arg[1] == '-' && arg[2] != '\0';
}

gboolean haproxy_flag_takes_value(const char *arg)
{
	if (arg[0] != '-' || arg[1] == '\0')
		return FALSE;
	if (g_str_has_prefix(arg, "-cc"))
		return TRUE;
	return strchr("fpCLNnmxS", arg[1]) != NULL;
}

/* Every -D* is daemon mode to haproxy; -db is the mode we choose ourselves. */
static gboolean is_removed_mode_flag(const char *arg)
{
	return g_str_has_prefix(arg, "-D") || strcmp(arg, "-db") == 0;
}

/* A pid as haproxy writes it: digits only, no leading zero, fits pid_t. */
static gboolean parse_user_pid(const char *s, GPid *pid)
{
	guint64 v = 0;

	if (s[0] < '1' || s[0] > '9')
		return FALSE;
	for (const char *p = s; *p; p++) {
		if (!g_ascii_isdigit(*p))
			return FALSE;
		v = v * 10 + (guint64)(*p - '0');
		if (v > INT_MAX)
			return FALSE;
	}
	*pid = (GPid)v;
	return TRUE;
}

static void note_oneshot(struct args_builder *b, enum oneshot kind)
{
	/* haproxy prints its version as soon as it meets -v, even with -c. */
	if (b->oneshot != ONESHOT_VERSION)
		b->oneshot = kind;
}

/* Consumes the pids after -sf/-st; returns the index of the last one used. */
static int collect_old_pids(struct args_builder *b, int argc,
			    char *const *argv, int i, GError **error)
{
	const char *flag = argv[i];

	if (strcmp(flag, "-st") == 0)
		b->user_old_hard = TRUE;
	while (i + 1 < argc && argv[i + 1][0] != '-') {
		GPid pid;

		i++;
		if (!parse_user_pid(argv[i], &pid)) {
			g_set_error(error, WRAPPER_ARGS_ERROR,
				    WRAPPER_ARGS_ERROR_USAGE,
				    "option '%s': '%s' is not a valid pid",
				    flag, argv[i]);
			return -1;
		}
		g_array_append_val(b->user_old_pids, pid);
	}
	return i;
}

/* Handles a value-taking flag at argv[i]; returns the index of its value. */
static int take_flag_value(struct args_builder *b, int argc, char *const *argv,
			   int i, GError **error)
{
	const char *flag = argv[i];
	const char *value;

	if (i + 1 >= argc) {
		g_set_error(error, WRAPPER_ARGS_ERROR, WRAPPER_ARGS_ERROR_USAGE,
			    "option '%s' needs a value", flag);
		return -1;
	}
	value = argv[i + 1];
	if (flag[1] == 'p')
		b->pidfile = value;
	else if (flag[1] == 'C')
		b->basedir = value;
	else if (flag[1] == 'c')
		note_oneshot(b, ONESHOT_CHECK);
	else if (flag[1] == 'S')
		/* "-S <bind>[,<option>...]": the master CLI, which only
		 * exists in master-worker mode (3.x refuses it without). */
		b->master_cli = b->master_worker = TRUE;
	g_ptr_array_add(b->haproxy_args, g_strdup(flag));
	g_ptr_array_add(b->haproxy_args, g_strdup(value));
	return i + 1;
}

/*
 * Handles argv[i], in flag position. Returns the index of the last argument
 * it used, argc when the rest of the line was consumed, -1 on error.
 */
static int parse_one(struct args_builder *b, int argc, char *const *argv,
		     int i, GError **error)
{
	const char *arg = argv[i];

	if (strcmp(arg, "--") == 0) {
		b->config_tail = strv_copy_n(argv + i + 1, argc - i - 1);
		return argc;
	}
	if (is_wrapper_option(arg)) {
		g_ptr_array_add(b->wrapper_opts, g_strdup(arg));
		return i;
	}
	if (haproxy_flag_takes_value(arg))
		return take_flag_value(b, argc, argv, i, error);
	if (strcmp(arg, "-sf") == 0 || strcmp(arg, "-st") == 0)
		return collect_old_pids(b, argc, argv, i, error);
	if (is_removed_mode_flag(arg))
		return i;
	/* -W/-Ws: run the master-worker mode behind the wrapper, which
	 * adds -Ws itself. */
	if (g_str_has_prefix(arg, "-W")) {
		b->master_worker = TRUE;
		return i;
	}
	if (strcmp(arg, "-c") == 0)
		note_oneshot(b, ONESHOT_CHECK);
	else if (g_str_has_prefix(arg, "-v"))
		note_oneshot(b, ONESHOT_VERSION);
	g_ptr_array_add(b->haproxy_args, g_strdup(arg));
	return i;
}

/* haproxy opens a relative -p after its chdir to -C. */
static gchar *resolve_pidfile(const char *pidfile, const char *basedir,
			      const char *cwd)
{
	g_autofree gchar *base = NULL;

	if (pidfile == NULL)
		return NULL;
	if (g_path_is_absolute(pidfile))
		return g_strdup(pidfile);
	if (basedir == NULL)
		return g_build_filename(cwd, pidfile, NULL);
	if (g_path_is_absolute(basedir))
		base = g_strdup(basedir);
	else
		base = g_build_filename(cwd, basedir, NULL);
	return g_build_filename(base, pidfile, NULL);
}

gboolean wrapper_args_parse(int argc, char *const *argv, const char *cwd,
			    struct wrapper_args *out, GError **error)
{
	struct args_builder b;

	g_return_val_if_fail(argc >= 0, FALSE);
	g_return_val_if_fail(argc == 0 || argv != NULL, FALSE);
	g_return_val_if_fail(cwd != NULL, FALSE);
	g_return_val_if_fail(out != NULL, FALSE);

	*out = (struct wrapper_args){ 0 };
	args_builder_init(&b);
	for (int i = 0; i < argc; i++) {
		i = parse_one(&b, argc, argv, i, error);
		if (i < 0) {
			args_builder_free(&b);
			return FALSE;
		}
	}

	out->wrapper_opts = ptr_array_steal_strv(&b.wrapper_opts);
	out->haproxy_args = ptr_array_steal_strv(&b.haproxy_args);
	out->config_tail = g_steal_pointer(&b.config_tail);
	out->pidfile = resolve_pidfile(b.pidfile, b.basedir, cwd);
	out->user_old_pids = g_steal_pointer(&b.user_old_pids);
	out->user_old_hard = b.user_old_hard;
	out->master_worker = b.master_worker;
	out->master_cli = b.master_cli;
	out->oneshot = b.oneshot;
	args_builder_free(&b);
	return TRUE;
}

void wrapper_args_clear(struct wrapper_args *a)
{
	g_clear_pointer(&a->wrapper_opts, g_strfreev);
	g_clear_pointer(&a->haproxy_args, g_strfreev);
	g_clear_pointer(&a->config_tail, g_strfreev);
	g_clear_pointer(&a->pidfile, g_free);
	g_clear_pointer(&a->user_old_pids, g_array_unref);
	*a = (struct wrapper_args){ 0 };
}

GStrv own_haproxy_argv(const struct wrapper_args *args)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();

	g_strv_builder_add(b, "haproxy");
	g_strv_builder_addv(b, (const char **)args->haproxy_args);
	if (args->config_tail) {
		g_strv_builder_add(b, "--");
		g_strv_builder_addv(b, (const char **)args->config_tail);
	}
	return g_strv_builder_end(b);
}

static void add_strv(GPtrArray *argv, char *const *v)
{
	for (; v != NULL && *v != NULL; v++)
		g_ptr_array_add(argv, g_strdup(*v));
}

static void add_config_tail(GPtrArray *argv, const struct wrapper_args *a)
{
	if (a->config_tail == NULL)
		return;
	g_ptr_array_add(argv, g_strdup("--"));
	add_strv(argv, a->config_tail);
}

/* haproxy 1.5 takes "--" for an unknown flag: "-f FILE" says the same. */
static void add_config_tail_as_f(GPtrArray *argv, const struct wrapper_args *a)
{
	for (char **f = a->config_tail; f && *f; f++) {
		g_ptr_array_add(argv, g_strdup("-f"));
		g_ptr_array_add(argv, g_strdup(*f));
	}
}

static gboolean knows_double_dash(const struct haproxy_version *v)
{
	return !v || haproxy_version_compare(v, 1, 6, 0) >= 0;
}

const char *launch_mode_flag(enum launch_mode mode)
{
	switch (mode) {
	case LAUNCH_DS:
		return "-Ds";
	case LAUNCH_DB:
		return "-db";
	case LAUNCH_MW:
		return "-Ws";
	}
	g_return_val_if_reached("-db");
}

GStrv haproxy_argv_build(const char *haproxy_path, enum launch_mode mode,
			 const struct haproxy_version *v,
			 const struct wrapper_args *a,
			 const char *const *extra, const GPid *old_pids,
			 guint n_old, GPid witness, gboolean hard)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(argv, g_strdup(haproxy_path));
	add_strv(argv, a->haproxy_args);
	/* haproxy 1.5 takes -sf/-st only as its last arguments. */
	if (!knows_double_dash(v))
		add_config_tail_as_f(argv, a);
	add_strv(argv, (GStrv)extra);
	g_ptr_array_add(argv, g_strdup(launch_mode_flag(mode)));
	if (n_old > 0 || witness > 0) {
		g_ptr_array_add(argv, g_strdup(hard ? "-st" : "-sf"));
		for (guint i = 0; i < n_old; i++)
			g_ptr_array_add(argv, g_strdup_printf("%d", old_pids[i]));
		if (witness > 0)
			g_ptr_array_add(argv, g_strdup_printf("%d", witness));
	}
	/* Last, so that "-Ds" and the pids are never taken for config files. */
	if (knows_double_dash(v))
		add_config_tail(argv, a);
	return ptr_array_steal_strv(&argv);
}

GStrv haproxy_argv_oneshot(const char *haproxy_path,
			   const struct wrapper_args *a)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);

	g_ptr_array_add(argv, g_strdup(haproxy_path));
	add_strv(argv, a->haproxy_args);
	add_config_tail(argv, a);
	return ptr_array_steal_strv(&argv);
}
