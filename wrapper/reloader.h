/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reload state machine: which step of a start, reload or hand-off is
 * under way, the requests that came meanwhile, the clients waiting for a
 * verdict, and what each step's end means. It runs no process: the
 * supervisor performs its effects (struct reloader_ops) and reports what
 * happened as events. Its one timer is the attempt's deadline while a
 * generation or a master loads (RE_TIMEOUT; tests post that themselves).
 * Events posted while one is handled are handled after it, in order (run
 * to completion).
 *
 * The machine is one table of (state, event) -> (action, next states),
 * in reloader.c; doc/internals.md shows it, generated from the table
 * (t/unit/reloader --diagram, checked by make diagram-check).
 */
#pragma once

#include <glib.h>

#include "base/log.h"
#include "legacy/version.h"
#include "wrapper/status.h"

struct control_client;
struct supervisor;

enum reload_state {
	RS_IDLE,		/* nothing under way */
	RS_STARTING,		/* first start: instances found running
				 * are being taken over */
	RS_CHECKING_UPGRADE,	/* the new wrapper image's dry run */
	RS_PROBING,		/* locating haproxy, asking its version */
	RS_AWAITING_SEARCH,	/* the launch waits for the search for a
				 * haproxy restarted by hand (its -sf) */
	RS_LOADING,		/* a new generation loads */
	RS_MASTER_SETTLING,	/* the serving master cannot take SIGUSR2 yet */
	RS_MASTER_VERDICT,	/* SIGUSR2 sent: the master's verdict decides */
	RS_HANDING_OFF,		/* checks before the exec into haproxy -Ws */
};
#define RELOAD_STATES (RS_HANDING_OFF + 1)

enum reload_event {
	RE_START,		/* the first start */
	RE_RESUME,		/* after our own exec: the same attempt */
	RE_REQUEST,		/* SIGUSR2, SIGHUP or a client */
	RE_RUN_PENDING,		/* from the loop: run what came meanwhile */
	RE_SETTLED,		/* the first start's takeover settled */
	RE_UPGRADE_REFUSED,	/* the dry run refused: reload as we are */
	RE_PROBED,		/* haproxy's version is known */
	RE_REPLACED,		/* a haproxy restarted by hand was adopted */
	RE_SEARCH_OVER,		/* the search found nothing; others serve */
	RE_SIGNALLED,		/* the master was sent its SIGUSR2 */
	RE_SERVING,		/* the new generation is the serving one */
	RE_READY,		/* the new generation or load serves */
	RE_FAILED,		/* a step failed */
	RE_CHILD_EXIT,		/* the loading generation ended unready */
	RE_RETRY,		/* ... and is to be started again */
	RE_SERVING_LOST,	/* the serving one ended while another loads */
	RE_TIMEOUT,		/* the ready timeout (the machine's timer) */
	RE_HANDOFF,		/* the hand-off's checks begin */
	RE_HANDOFF_OVER,	/* the hand-off ended short of the exec */
	RE_STOP,
};
#define RELOAD_EVENTS (RE_STOP + 1)

/* What an event carries; each uses its own fields, the rest stay 0. */
struct reload_input {
	int signal;			/* REQUEST, RESUME: 0 for a client */
	gboolean hard;			/* REQUEST, RESUME */
	struct control_client *client;	/* REQUEST */
	const struct haproxy_version *version;	/* PROBED */
	int exit_code;			/* FAILED, CHILD_EXIT, SERVING_LOST */
	const char *message;		/* FAILED, CHILD_EXIT, READY, REFUSED */
	gboolean replaced;		/* SERVING_LOST: maybe by hand */
	/* RESUME: the attempt carried on, and what was pending. */
	guint attempt;
	gboolean pending;
	int pending_signal;
	gboolean pending_hard;
};

enum upgrade_choice {
	UPGRADE_NO,
	UPGRADE_YES,
};

enum launch_kind {
	LAUNCH_FAILED,		/* a RE_FAILED was posted */
	LAUNCH_GENERATION,	/* a new generation loads */
	LAUNCH_MASTER,		/* the serving master reloads itself */
};

/* How a failed reload ends, for its log line. */
enum reload_failure {
	FAILURE_FIRST_START,	/* nothing served yet: the wrapper stops */
	FAILURE_KEPT,		/* the serving one (or adopted) goes on */
	FAILURE_REPLACED,	/* the serving one ended as replaced: look */
	FAILURE_NONE_SERVING,	/* the serving one ended: the wrapper stops */
};

struct reloader;

/*
 * The effects. The supervisor's parts perform them, each with its own
 * function; the machine only hands back the context it was given, which
 * it never looks into (tests pass NULL and fake them).
 */
struct reloader_ops {
	/* Is a search for a haproxy restarted by hand under way? */
	gboolean (*searching)(struct supervisor *sv);
	/* Does an adopted haproxy serve? */
	gboolean (*adopted_serving)(struct supervisor *sv);
	enum upgrade_choice (*upgrade_wanted)(struct supervisor *sv);
	void (*notify_reloading)(struct supervisor *sv);
	/* The dry run of the new image: RE_UPGRADE_REFUSED, or an exec. */
	void (*begin_upgrade)(struct supervisor *sv);
	/* Locate haproxy, know its version: RE_PROBED or RE_FAILED. */
	void (*probe)(struct supervisor *sv);
	/* Must the launch wait for the search (said in the log)? */
	gboolean (*launch_must_wait)(struct supervisor *sv);
	enum launch_kind (*launch)(struct supervisor *sv,
				   const struct haproxy_version *v);
	/* The ready timeout passed while a generation loads. */
	void (*kill_loading)(struct supervisor *sv);
	/* Why the master's reload timed out (g_free). */
	gchar *(*master_timeout_text)(struct supervisor *sv,
				      gboolean settling);
	void (*search)(struct supervisor *sv, gboolean quick);
	void (*log_failure)(struct supervisor *sv, enum reload_failure how,
			    const char *msg);
	/* The service is lost: exit with code, stop everything. */
	void (*stop_service)(struct supervisor *sv, int exit_code);
	/* READY=1 for systemd, with the status line. */
	void (*notify_ready)(struct supervisor *sv);
	void (*answer)(struct control_client *c, const char *text);
	/* The attempt is over: its timers and helpers go. */
	void (*end_attempt)(struct supervisor *sv);
	/* Post RE_RUN_PENDING from the loop. */
	void (*schedule_pending)(struct supervisor *sv);
	/* A stop abandons the hand-off: its client is told. */
	void (*abandon_handoff)(struct supervisor *sv);
	/* Is the wrapper stopping? The life cycle knows: nothing new
	 * starts. */
	gboolean (*stopping)(struct supervisor *sv);
	/* The first generation ended unready (may be NULL): TRUE when the
	 * first start is to be settled again (SETTLED, or FAILED with
	 * these). */
	gboolean (*retry_first)(struct supervisor *sv, int exit_code,
				const char *msg);
};

struct waiter {
	struct control_client *client;
	guint target;		/* the first attempt after its request */
};

/*
 * One row of the machine: in a state of from (a set, 1 << state), event
 * runs act, which returns one of the states of to (RELOAD_SAME: the
 * state it was in). Without act, the row goes to its one state.
 */
#define RELOAD_SAME (1u << RELOAD_STATES)
struct reload_transition {
	guint from;
	enum reload_event event;
	guint to;
	enum reload_state (*act)(struct reloader *r,
				 const struct reload_input *in);
	const char *action;	/* act's name, for the diagram */
};

/* The table, in the order it is searched. */
const struct reload_transition *reload_transitions(guint *n);

struct reloader *reloader_new(const struct reloader_ops *ops,
			      struct supervisor *sv);
void reloader_free(struct reloader *r);
/* --ready-timeout: how long a generation or a master may load before
 * RE_TIMEOUT; 0, the default, for ever. */
void reloader_set_ready_timeout(struct reloader *r, guint seconds);

void reloader_post(struct reloader *r, enum reload_event ev,
		   const struct reload_input *in);

enum reload_state reloader_state(const struct reloader *r);
/* Anything under way (a start, reload or hand-off), not IDLE? */
gboolean reloader_busy(const struct reloader *r);
/* The first start, until its generation serves. */
gboolean reloader_first_start(const struct reloader *r);
const char *reload_state_name(enum reload_state state);
const char *reload_event_name(enum reload_event ev);

/* The current attempt (0: the first start), and how it was asked. */
guint reloader_attempt(const struct reloader *r);
gboolean reloader_hard(const struct reloader *r);
int reloader_signal(const struct reloader *r);
/* A log event timed from the start of the attempt. */
struct log_event reloader_event(const struct reloader *r,
				const char *message_id, guint number, GPid pid,
				const char *result);
/* The reload asked for meanwhile, if any. */
gboolean reloader_pending(const struct reloader *r, int *sig,
			  gboolean *hard);

/* The clients waiting (struct waiter *), and one taken over. */
const GPtrArray *reloader_waiters(const struct reloader *r);
void reloader_add_waiter(struct reloader *r, struct control_client *c,
			 guint target);
void reloader_answer_all(struct reloader *r, const char *text);

/* For status: how the last reload ended, and the counters (kept across
 * our own exec: settable). */
const struct reload_report *reloader_last(const struct reloader *r);
guint reloader_reloads(const struct reloader *r);
guint reloader_reloads_failed(const struct reloader *r);
void reloader_set_counters(struct reloader *r, guint reloads,
			   guint reloads_failed);
