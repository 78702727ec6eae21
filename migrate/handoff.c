/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-off to upstream's unit: the wrapper replaces itself, same pid
 * (systemd's MainPID does not change), by "haproxy -Ws <args> -sf <live
 * pids>". The new master's first worker takes the listening sockets of
 * the serving generation (-x) and soft-stops the old generations, which
 * are now the master's children. Checked before it is irrevocable: the
 * haproxy must have master-worker mode (>= 1.8) and accept the
 * configuration (-c); otherwise the wrapper answers an error and goes on.
 * Reloads asked for meanwhile wait, and run however it ends short of the
 * exec; a stop abandons it, and its client is told.
 */
#include "migrate/handoff.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fdlimit.h"
#include "base/log.h"
#include "legacy/launch.h"
#include "legacy/version.h"
#include "wrapper/sdnotify.h"
#include "wrapper/probe.h"
#include "migrate/adopt.h"
#include "migrate/replacement.h"
#include "wrapper/fdstore/fdstore.h"
#include "wrapper/launcher.h"
#include "wrapper/reloader.h"
#include "wrapper/rundir.h"

#define HANDOFF_PROBE_MS 30000

struct handoff {
	const struct wrapper_args *args;
	const struct wrapper_options *opts;
	struct gen_table *gt;
	struct reloader *rl;
	const struct rundir_use *rt;
	struct launcher *launcher;
	struct replacement *replacement;
	handoff_report_fn report;
	gpointer data;
	const char *image_path;
	gboolean active;		/* under way */
	struct control_client *client;
	gchar *path;
	struct probe *probe;		/* -v, then -c */
};

struct handoff *handoff_new(const struct wrapper_args *args,
			    const struct wrapper_options *opts,
			    struct gen_table *gt, struct reloader *rl,
			    const struct rundir_use *rt,
			    struct launcher *launcher,
			    struct replacement *replacement,
			    const char *image_path,
			    handoff_report_fn report, gpointer data)
{
	struct handoff *h = g_new0(struct handoff, 1);

	*h = (struct handoff){
		.args = args, .opts = opts, .gt = gt, .rl = rl, .rt = rt,
		.launcher = launcher, .replacement = replacement,
		.report = report, .data = data, .image_path = image_path,
	};
	return h;
}

void handoff_free(struct handoff *h)
{
	if (!h)
		return;
	g_clear_pointer(&h->probe, probe_cancel);
	g_free(h->path);
	g_free(h);
}

/* However it ends (refused, failed, abandoned), the busy period ends
 * through the one path that runs what is pending. */
static void handoff_end(struct handoff *h)
{
	h->active = FALSE;
	h->client = NULL;
	g_clear_pointer(&h->probe, probe_cancel);
	g_clear_pointer(&h->path, g_free);
	reloader_post(h->rl, RE_HANDOFF_OVER, NULL);
}

static void refuse(struct handoff *h, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void refuse(struct handoff *h, const char *fmt, ...)
{
	g_autofree gchar *msg = NULL;
	g_autofree gchar *answer = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	log_err("not handing off: %s", msg);
	answer = g_strdup_printf("error: %s", msg);
	control_reply(h->client, answer);
	handoff_end(h);
}

void handoff_abandon(struct handoff *h)
{
	if (!h->active)
		return;
	log_notice("hand-off abandoned: stopping");
	control_reply(h->client, "error: stopping; the hand-off did not "
				 "happen");
	handoff_end(h);
}

/* "haproxy -c -q <its arguments>": would the master accept them? */
static GStrv check_argv(struct handoff *h, const char *path)
{
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();

	g_strv_builder_add(b, path);
	g_strv_builder_add(b, "-c");
	g_strv_builder_add(b, "-q");
	g_strv_builder_addv(b, (const char **)h->args->haproxy_args);
	if (h->args->config_tail) {
		g_strv_builder_add(b, "--");
		g_strv_builder_addv(b, (const char **)h->args->config_tail);
	}
	return g_strv_builder_end(b);
}

/* A reload asked for during the checks is what the exec does: haproxy
 * -Ws reads the configuration after the request. Its clients are told
 * so before the exec, which closes them; a failure is told after. */
static void tell_waiters(struct handoff *h)
{
	g_autofree gchar *text = g_strdup_printf(
		"ok pid %d is now haproxy -Ws, started after this request; "
		"it takes its reloads itself", getpid());

	const GPtrArray *waiters = reloader_waiters(h->rl);

	for (guint i = 0; i < waiters->len; i++) {
		struct waiter *w = g_ptr_array_index((GPtrArray *)waiters, i);

		control_send_now(w->client, text);
	}
}

/*
 * No wrapper answers once haproxy -Ws runs: the control socket's file
 * goes (a client would meet "Connection refused"), and a note says what
 * happened to the clients that look (wrapper/main.c).
 */
static void leave_control(struct handoff *h)
{
	g_autofree gchar *note = rundir_handoff_note(h->rt->dir);
	g_autofree gchar *text = g_strdup_printf(
		"the service was handed off to haproxy -Ws: pid %d is its "
		"master, and takes its reloads itself (systemctl reload, or "
		"its master CLI)\n", getpid());

	if (!g_file_set_contents(note, text, -1, NULL))
		errno = 0;
	if (h->rt->control)
		control_unlink(h->rt->control);
}

/* The exec failed: the wrapper answers again. */
static void restore_control(struct handoff *h)
{
	g_autofree gchar *note = rundir_handoff_note(h->rt->dir);
	g_autoptr(GError) error = NULL;

	unlink(note);
	if (h->rt->control &&
	    !control_relisten(h->rt->control, &error))
		log_warn("%s: no control socket", error->message);
}

static void exec_haproxy(struct handoff *h)
{
	g_auto(GStrv) argv = launcher_master_argv(h->launcher, h->path);
	g_auto(GStrv) envp = haproxy_environ_for_handoff();
	g_autofree gchar *answer = g_strdup_printf(
		"ok pid %d is now haproxy -Ws; it takes its reloads itself",
		getpid());
	g_autofree gchar *status = g_strdup_printf(
		"handed off to haproxy -Ws: its master, pid %d, serves and "
		"takes its reloads itself", getpid());
	g_autofree gchar *failed = NULL;
	int saved;

	log_notice("handing off to haproxy -Ws in place (pid %d)", getpid());
	log_executing(argv);
	/* systemd keeps the last STATUS= until haproxy sends one (2.7 and
	 * later): none may name a generation that is about to go. */
	notify_status(status);
	/* Sent, not closed: the client's end of file is the exec's success
	 * (close-on-exec), and a failure is told after it, last. */
	control_send_now(h->client, answer);
	tell_waiters(h);
	/* haproxy -Ws knows nothing of the store: a socket left there after
	 * its configuration dropped the bind would take connections nobody
	 * accepts. */
	fdstore_empty(h->rt->fdstore, "the hand-off to haproxy -Ws");
	leave_control(h);
	/* The control signals stay blocked: haproxy sets its own mask, and
	 * whatever is pending reaches haproxy's handlers, not a default
	 * action that would kill the service. */
	/* haproxy -Ws gets the unit's descriptor limit, as every haproxy. */
	fdlimit_restore_for_exec();
	execve(argv[0], argv, envp);
	saved = errno;
	fdlimit_raise_again();
	log_err("hand-off failed: execve(%s): %s; the wrapper goes on",
		argv[0], g_strerror(saved));
	restore_control(h);
	/* Still ours to serve: systemd keeps its sockets again. */
	if (h->gt->current)
		fdstore_serving(h->rt->fdstore, h->gt->current);
	failed = g_strdup_printf("error: hand-off failed: execve(%s): %s; the "
				 "wrapper goes on", argv[0], g_strerror(saved));
	control_reply(h->client, failed);
	handoff_end(h);
	h->report(HANDOFF_EXEC_FAILED, h->data);
}

static void on_checked(const char *output, int wait_status,
		       const GError *error, gpointer data)
{
	struct handoff *h = data;
	g_autofree gchar *how = NULL;

	h->probe = NULL;
	if (error) {
		refuse(h, "%s -c: %s", h->path, error->message);
		return;
	}
	if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
		how = describe_wait_status(wait_status);
		refuse(h, "the configuration check (%s -c) %s", h->path, how);
		return;
	}
	exec_haproxy(h);
}

static void on_version(const char *output, int wait_status,
		       const GError *error, gpointer data)
{
	struct handoff *h = data;
	struct haproxy_version v;
	g_auto(GStrv) argv = NULL;

	h->probe = NULL;
	if (error || !haproxy_version_parse(output, &v)) {
		refuse(h, "%s -v gave no haproxy version", h->path);
		return;
	}
	if (haproxy_version_compare(&v, 1, 8, 0) < 0) {
		refuse(h, "haproxy %s has no master-worker mode (-Ws needs "
		       ">= 1.8)", v.full);
		return;
	}
	argv = check_argv(h, h->path);
	h->probe = probe_start(argv, HANDOFF_PROBE_MS, on_checked, h);
}

/* Check, then exec: client hears how it went. path: the haproxy to run,
 * or NULL and why not (error). */
static void handoff_begin(struct handoff *h, struct control_client *client,
			  const char *path, const GError *error)
{
	h->active = TRUE;
	h->client = client;
	if (!path) {
		refuse(h, "%s", error->message);
		return;
	}
	h->path = g_strdup(path);
	{
		char *argv[] = { h->path, (char *)"-v", NULL };

		h->probe = probe_start(argv, HANDOFF_PROBE_MS, on_version, h);
	}
}

void handoff_request(struct handoff *h, struct control_client *client,
		     gboolean running)
{
	g_autoptr(GError) error = NULL;
	g_autofree gchar *path = NULL;

	if (!running || reloader_busy(h->rl)) {
		control_reply(client, "error: a start, reload or stop is in "
				      "progress; hand off once it is over");
		return;
	}
	if (adopt_alive(replacement_adopt(h->replacement))) {
		log_notice("hand-off refused: a haproxy adopted after a restart "
			   "by hand runs; reload first");
		control_reply(client, "error: a haproxy adopted after a restart "
				      "by hand runs; reload first");
		return;
	}
	/* Reloads wait while we check: nothing may change under us. */
	reloader_post(h->rl, RE_HANDOFF, NULL);
	path = haproxy_locate(h->opts->haproxy, h->image_path, &error);
	handoff_begin(h, client, path, error);
}
