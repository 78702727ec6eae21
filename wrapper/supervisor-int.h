/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The supervisor's insides, shared by its files and nobody else:
 * supervisor.c (life cycle, signals, control, stop, generation exits),
 * reload.c (the reload pipeline: request, probe, spawn, witness, verdict,
 * bounded draining), master.c (the same for a master-worker haproxy),
 * handover.c (the self-upgrade handover) and handoff.c (exec into -Ws).
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
#include "wrapper/mwnotify.h"
#include "wrapper/notify.h"
#include "wrapper/probe.h"
#include "wrapper/reuseport.h"
#include "wrapper/rundir.h"
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
	char **orig_argv;
	struct self_image self;
	gboolean can_upgrade;

	GPtrArray *gens;		/* oldest first; owns them */
	struct generation *current;
	struct generation *starting;
	guint next_number;
	guint reloads;
	guint reloads_failed;	/* these three: for metrics, kept across
				 * our own exec */
	guint takeovers;
	guint restarts_adopted;
	guint adoptions;
	enum phase phase;

	/* One reload in flight; any number of requests meanwhile make one
	 * more. "busy" spans the upgrade check, the version probe and the
	 * starting generation. */
	gboolean busy;
	int reload_signal;
	gboolean reload_pending;
	int pending_signal;
	gboolean pending_hard;
	guint pending_idle;
	/* Reload attempts are numbered (0: the first start). A client that
	 * asks for a reload waits for the first attempt after its request. */
	guint attempt;
	gboolean attempt_hard;		/* this one uses -st */
	gint64 attempt_started_us;
	GPtrArray *waiters;		/* struct waiter * */
	struct reload_report last;
	struct failed_generation failed;
	gboolean skip_upgrade;		/* this reload follows our own exec */
	gchar *upgrade_refused;		/* why not, told to the waiters */
	struct handoff *handoff;	/* under way, or NULL */
	struct probe *probe;
	guint ready_timer;
	gchar *haproxy_path;		/* of the generation being started */
	struct version_cache vcache;

	/* The serving generation ended while its successor was starting:
	 * usually the soft stop the successor sent once bound, which can
	 * reach us before the witness does. The successor decides. */
	gboolean current_lost;
	int lost_status;
	enum launch_mode lost_mode;

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
	/* A reload's launch waits for that search (its -sf list). */
	gboolean launch_waits;
	/* The one serving ended while a generation started, as a replaced
	 * one does: look for a restart by hand once the reload decides. */
	gboolean lost_replaced;
	gboolean upgrade_postponed;	/* this reload's, for its answer */
	struct haproxy_version launch_version;
	struct control *control;
	gchar *rundir;
	gboolean rundir_ours;		/* no other live wrapper uses it */
	gchar *expose_cfg;		/* our -f fragment; NULL: no -x */
	gchar *expose_sock;
	guint extend_timer;
	guint watchdog_timer;
	gboolean told_migrate_req;
	struct reuseport *reuseport;	/* per-group queue migration */

	/* Master-worker mode (master.c): the notify socket, and while a
	 * reload of the master is ours, its children before the SIGUSR2. */
	struct mw_notify *mw_notify;
	GArray *mw_before;
	guint mw_settle_timer;
	gint64 mw_settle_deadline;
	gchar mw_version[64];
	gboolean mw_reloading_seen;	/* RELOADING=1 since our SIGUSR2 */
	enum launch_mode told_mode;	/* the last mode a notice was about */
	gboolean told_mode_valid;

	gboolean stop_hard;
	guint stop_timer;
	gboolean done;
	gboolean have_exit_code;
	int exit_code;
	GPid pidfile_pid;		/* what we wrote there, 0 if nothing */
};

struct waiter {
	struct control_client *client;
	guint target;
};

/* reload.c: an event's journal fields; result: the current attempt's. */
struct log_event sv_event(struct supervisor *s, const char *message_id,
			  guint number, GPid pid, const char *result);

/* supervisor.c */
void sv_set_exit_code(struct supervisor *s, int code);
int sv_lost_exit_code(enum launch_mode mode, int status);
gchar *sv_summary(struct supervisor *s);
void sv_pidfile_publish(struct supervisor *s, struct generation *g);
void sv_watch_generation(struct supervisor *s, struct generation *g);
void sv_begin_stop(struct supervisor *s, int sig);

/* reload.c */
void sv_request_reload(struct supervisor *s, int sig, gboolean hard,
		       struct control_client *client);
void sv_begin_reload(struct supervisor *s, int sig, gboolean hard);
void sv_launch(struct supervisor *s);
void sv_reload_finished(struct supervisor *s, gboolean ok, const char *msg);
/* The end of every busy period (a reload, a hand-off): what is pending
 * runs next. */
void sv_busy_over(struct supervisor *s);
void sv_launch_failed(struct supervisor *s, int exit_code, const char *fmt,
		      ...) G_GNUC_PRINTF(3, 4);
void sv_answer_waiters(struct supervisor *s, guint upto, const char *text);
/* The -sf pids of every live generation. */
GArray *sv_generations_sf_pids(struct supervisor *s);
/* Can a new haproxy take the serving generation's listeners (-x)? */
gboolean sv_can_take_listeners(struct supervisor *s);
/* Run the reload requested meanwhile, if any, from the loop. */
void sv_run_pending(struct supervisor *s);
/* Look for a haproxy that replaced the one serving (quick: done at once
 * if none is there at all). */
void sv_search_replacement(struct supervisor *s, gboolean quick);
/* The launch that waited for a search for an adopted haproxy. */
void sv_launch_resume(struct supervisor *s);
/* Our generation serves: the adopted instances that were not on its -sf
 * list (found during its reload) get its stop signal. */
void sv_retire_adopted(struct supervisor *s);

/* Make g the serving generation, and say so. */
void sv_generation_ready(struct supervisor *s, struct generation *g);
/* SIGTERM the oldest draining generations or workers beyond the bound. */
void sv_bound_draining(struct supervisor *s);

/* master.c: master-worker mode. */
const char *sv_master_notify_socket(struct supervisor *s, GError **error);
gboolean sv_master_adopt_notify(struct supervisor *s, int fd);
/* Is one of our generations a master? */
gboolean sv_master_running(struct supervisor *s);
/* The notify socket, inheritable for the exec; -1 without a master. */
int sv_master_handover_fd(struct supervisor *s);
/* The exec failed: the socket is private again. */
void sv_master_reclaim_fd(struct supervisor *s);
/* Is fd the notify socket of this instance (handed over)? */
gboolean sv_master_notify_fd_is_ours(struct supervisor *s, int fd);
void sv_master_free(struct supervisor *s);
/* Reload the serving master (SIGUSR2) into haproxy v. */
void sv_master_reload(struct supervisor *s, const struct haproxy_version *v);
/* Is a reload of the serving master ours and under way? */
gboolean sv_master_reloading(struct supervisor *s);
void sv_master_abandon(struct supervisor *s);
gchar *sv_pids_text(const GArray *pids);

/* handoff.c: replace the wrapper by haproxy -Ws, same pid. */
void sv_handoff(struct supervisor *s, struct control_client *client);
/* A stop: a hand-off under way is abandoned, its client told. */
void sv_handoff_abandon(struct supervisor *s);

/* handover.c */
struct handover sv_handover_of(struct supervisor *s);
void sv_handover_inheritable(struct supervisor *s, gboolean yes);
gboolean sv_restore_handover(struct supervisor *s);
