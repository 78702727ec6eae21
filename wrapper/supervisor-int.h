/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The supervisor's insides, shared by its files and nobody else:
 * supervisor.c (life cycle, signals, control, stop, generation exits),
 * reload.c (the reload machine's effects, readiness, bounded draining),
 * spawn.c (probe, launch, spawn, witness), selfupgrade.c (the self-upgrade)
 * and handoff.c (exec into -Ws). The reload machine (reloader.c), the
 * master link (master.c) and the runtime (runtime.c) own their state and
 * never see this struct. See doc/internals.md.
 */
#pragma once

#include "wrapper/supervisor.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/proc.h"
#include "legacy/config.h"
#include "legacy/launch.h"
#include "legacy/mworker.h"
#include "legacy/pidfile.h"
#include "legacy/version.h"
#include "migrate/takeover.h"
#include "wrapper/adopt.h"
#include "wrapper/child.h"
#include "wrapper/control.h"
#include "wrapper/generation.h"
#include "wrapper/gentable.h"
#include "wrapper/master.h"
#include "wrapper/mwnotify.h"
#include "wrapper/notify.h"
#include "wrapper/probe.h"
#include "wrapper/reloader.h"
#include "wrapper/reuseport.h"
#include "wrapper/rundir.h"
#include "wrapper/runtime.h"
#include "wrapper/signals.h"
#include "wrapper/state.h"
#include "wrapper/status.h"
#include "wrapper/upgrade.h"

#define VERSION_PROBE_TIMEOUT_MS 10000
/* While haproxy loads, systemd is told every EXTEND_EVERY_S that it is
 * still alive, and given EXTEND_BY_US more. */
#define EXTEND_EVERY_S 10
#define EXTEND_BY_US (30 * G_USEC_PER_SEC)

enum phase {
	PHASE_STARTING,	/* the first generation is not ready yet */
	PHASE_RUNNING,
	PHASE_STOPPING,
};

/* The life cycle: starting, running, stopping, and how we exit.
 * supervisor.c owns it; others only read the phase. */
struct lifecycle {
	enum phase phase;
	gboolean stop_hard;	/* the stop asked for is SIGTERM-now */
	guint stop_timer;	/* --stop-timeout, then a hard stop */
	gboolean done;		/* stopping, nothing left to wait for */
	gboolean have_exit_code;
	int exit_code;
};

/* Our own image and how to exec it again; selfupgrade.c owns it. */
struct selfupgrade {
	char **orig_argv;	/* our command line, for the exec */
	struct self_image image;
	gboolean possible;	/* /proc/self/exe could be read */
};

/* "haproxy -v" is asked again only when the binary changed. */
struct version_cache {
	gchar *path;
	struct stat st;
	struct haproxy_version version;
};

struct supervisor {
	GMainLoop *loop;
	const struct wrapper_args *args;
	const struct wrapper_options *opts;
	struct selfupgrade up;		/* selfupgrade.c */

	struct gen_table gt;		/* the generations (gentable.h) */
	guint takeovers;	/* these three: for metrics, kept across
				 * our own exec */
	guint restarts_adopted;
	guint adoptions;
	struct lifecycle life;		/* supervisor.c */

	/* Starts, reloads and the hand-off: which step, the requests
	 * meanwhile, the clients waiting (wrapper/reloader.h). */
	struct reloader *reloader;
	guint pending_idle;		/* its RUN_PENDING, from the loop */
	struct handoff *handoff;	/* under way, or NULL */
	struct probe *probe;
	guint ready_timer;
	gchar *haproxy_path;		/* of the generation being started */
	struct version_cache vcache;

	struct takeover *takeover;	/* foreign instances, first start */
	/* A haproxy that replaced the one serving behind our back (a
	 * restart by hand), and how ours ended, while we look for it. */
	struct adopt *adopt;
	struct {
		gboolean valid;
		guint number;
		GPid pid;
		int status;
		enum launch_mode mode;
	} replaced;
	GPtrArray *foreign_view;	/* takeover's and adopt's, for status */
	struct runtime rt;		/* rundir, control, listeners fragment */
	guint extend_timer;
	guint watchdog_timer;
	gboolean told_migrate_req;
	struct reuseport *reuseport;	/* per-group queue migration */

	/* Master-worker mode: the notify socket, a master's reload. */
	struct master_link *master;
	enum launch_mode told_mode;	/* the last mode a notice was about */
	gboolean told_mode_valid;

};

/* reload.c: an event's journal fields; result: the current attempt's. */
struct log_event sv_event(struct supervisor *s, const char *message_id,
			  guint number, GPid pid, const char *result);

/* supervisor.c */
void sv_set_exit_code(struct supervisor *s, int code);
/* The first generation serves (or was adopted across our exec). */
void sv_set_running(struct supervisor *s);
int sv_lost_exit_code(enum launch_mode mode, int status);
gchar *sv_summary(struct supervisor *s);
void sv_pidfile_publish(struct supervisor *s, struct generation *g);
void sv_watch_generation(struct supervisor *s, struct generation *g);
void sv_begin_stop(struct supervisor *s, int sig);

/* reload.c: the reload machine's effects, and its events. */
extern const struct reloader_ops sv_reload_ops;
void sv_post(struct supervisor *s, enum reload_event ev,
	     const struct reload_input *in);
void sv_request_reload(struct supervisor *s, int sig, gboolean hard,
		       struct control_client *client);
/* RE_FAILED, with its message. */
void sv_launch_failed(struct supervisor *s, int exit_code, const char *fmt,
		      ...) G_GNUC_PRINTF(3, 4);
/* The -sf pids of every live generation. */
GArray *sv_generations_sf_pids(struct supervisor *s);
/* Can a new haproxy take the serving generation's listeners (-x)? */
gboolean sv_can_take_listeners(struct supervisor *s);
/* Look for a haproxy that replaced the one serving (quick: done at once
 * if none is there at all). */
void sv_search_replacement(struct supervisor *s, gboolean quick);
/* Our generation serves: the adopted instances that were not on its -sf
 * list (found during its reload) get its stop signal. */
void sv_retire_adopted(struct supervisor *s);

/* Make g the serving generation, and say so. */
void sv_generation_ready(struct supervisor *s, struct generation *g);
/* SIGTERM the oldest draining generations or workers beyond the bound. */
void sv_bound_draining(struct supervisor *s);

/* spawn.c: the reload machine's PROBING and LOADING effects. */
void sv_probe(void *ctx);
void sv_probe_early(struct supervisor *s);
gboolean sv_launch_must_wait(void *ctx);
enum launch_kind sv_launch(void *ctx, const struct haproxy_version *v);
void sv_kill_loading(void *ctx);
gchar *sv_master_timeout_text(void *ctx, gboolean settling);

/* Is one of our generations a master? */
gboolean sv_master_running(struct supervisor *s);
/* reload.c: what a master's words mean to the supervisor. */
extern const struct master_link_ops sv_master_ops;
/* The notify socket's path, bound on first use. */
const char *sv_master_notify_socket(struct supervisor *s, GError **error);

/* handoff.c: replace the wrapper by haproxy -Ws, same pid. */
void sv_handoff(struct supervisor *s, struct control_client *client);
/* A stop: a hand-off under way is abandoned, its client told. */
void sv_handoff_abandon(struct supervisor *s);

/* selfupgrade.c: the self-upgrade, and the upgrade state (what crosses
 * our own exec). */
enum upgrade_choice sv_upgrade_wanted(void *ctx);
void sv_begin_upgrade(void *ctx);
void sv_self_upgrade_init(struct supervisor *s, char **orig_argv);
void sv_self_upgrade_clear(struct supervisor *s);
struct upgrade_state sv_upgrade_state_of(struct supervisor *s);
void sv_upgrade_fds_inheritable(struct supervisor *s, gboolean yes);
gboolean sv_restore_upgrade_state(struct supervisor *s);
