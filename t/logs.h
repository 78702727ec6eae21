/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper's log lines the tests wait for, declared once (the wording
 * is the historic wrapper's and wrapper/'s; a test names the event, not
 * the words). Where a machine-readable answer exists, tests prefer
 * `--status --json`.
 */
#pragma once

/* "generation N ready: pid P, ..." (printf format: the number). */
#define LOG_READY_FMT		"generation %u ready: "
/* "...: executing /usr/sbin/haproxy ..." (a generation started). */
#define LOG_EXECUTING		": executing "
/* "<3>... reload failed: ..., generation N (pid P) keeps serving". */
#define LOG_RELOAD_FAILED	"reload failed: "
/* "adopting standalone pid P ..." (a restart by hand adopted). */
#define LOG_ADOPTING		"adopting standalone pid "

/* ---- t/int-reload*.c ---- */
/* The priority prefixes of a line: warning ("<4>..."), notice. */
#define LOG_PRIO_WARNING	"<4>"
#define LOG_PRIO_NOTICE		"<5>"
/* "sd_notify: ERROR" (a notification that could not be sent). */
#define LOG_SD_NOTIFY		"sd_notify"
/* "[hard-]reloading on request." / "... on SIGUSR2." */
#define LOG_RELOADING		"reloading"
#define LOG_HARD_RELOADING_ON_REQUEST	"hard-reloading on request."
/* "SIGUSR2: a reload is in progress; one more will follow" (queued). */
#define LOG_RELOAD_QUEUED	"a reload is in progress"
/* "generation N (pid P) finished: <wait status>" (printf: N, P). */
#define LOG_FINISHED_FMT	"generation %u (pid %d) finished: "
/* A wait status in such a line (printf: the signal). */
#define LOG_KILLED_BY_FMT	"killed by signal %d"
/* Any line naming SIGKILL: the stop timeout's, a signal relayed. */
#define LOG_SIGKILL		"SIGKILL"
/* "generation N (pid P), the one serving, <how> on its own; ..." */
#define LOG_SERVING_LOST	"the one serving, "
/* The historic wrapper's last line (printf: the exit code). */
#define LOG_EXIT_RC_FMT		"exit, haproxy RC=%d"
/* "taking over master-worker master pid P ..." (printf: P). */
#define LOG_TAKING_OVER_MASTER_FMT	"taking over master-worker master pid %d "
/* A foreign master taken over before it handles SIGUSR1. */
#define LOG_FOREIGN_UNSETTLED	"does not handle SIGUSR1 yet"
/* "... control.sock is in use by another wrapper" */
#define LOG_RUNDIR_IN_USE	"in use by another wrapper"
/* "more than M old generation(s) draining: SIGTERM to generation N
 * (pid P)" (printf: M, N, P). */
#define LOG_DRAINING_OVER	"old generation(s) draining"
#define LOG_DRAINING_OVER_FMT	"more than %d old generation(s) draining: " \
				"SIGTERM to generation %u (pid %d)"
/* "generation N (pid P) still draining after its deadline; SIGTERM". */
#define LOG_DRAIN_DEADLINE	"still draining"
#define LOG_DRAIN_DEADLINE_FMT	"generation %u (pid %d) still draining " \
				"after its deadline"
/* The old generation still holds the listeners it shares (-x). */
#define LOG_HOLDS_LISTENERS	"still holds its listeners"
/* The hand-off, the self-upgrade refused while an adopted haproxy runs. */
#define LOG_HANDOFF_REFUSED_ADOPTED	"hand-off refused: a haproxy adopted"
#define LOG_UPGRADE_POSTPONED_ADOPTED	"not upgrading the wrapper on this " \
					"reload: a haproxy adopted"
/* "re-executing on request." / "re-executing on SIGUSR2." */
#define LOG_REEXECUTING		"re-executing on "
#define LOG_REEXECUTING_ON_REQUEST	"re-executing on request."
/* "haproxy-systemd-wrapper V running, adopted N generation(s)" (printf:
 * N), the re-executed image's first word. */
#define LOG_ADOPTED_GENERATIONS_FMT	"adopted %u generation(s)"

/* ---- the real-haproxy tests (t/int-real-*.c) ---- */
/* "reloading on SIGUSR2." (printf: the signal's name). */
#define LOG_RELOADING_ON_FMT	"reloading on %s."
/* "generation N ready: pid P, ...", whatever N. */
#define LOG_READY_PID		" ready: pid "
/* "ignoring SIGWINCH from pid P" (printf: the signal's name, P). */
#define LOG_IGNORING_FMT	"ignoring %s from pid %d"
/* A stop signal relayed to a generation: "SIGTERM -> P." (printf). */
#define LOG_RELAYED_FMT		"%s -> %d."
/* A line about process P: "generation N (pid P) ..." (printf: P). */
#define LOG_PID_FMT		"(pid %d)"
/* How it ended, in such a line (printf: the exit code). */
#define LOG_EXITED_FMT		"exited with status %d"
/* "generation N (pid P), the one serving, ... on its own; ...". */
#define LOG_ON_ITS_OWN		" on its own"
/* "cannot start haproxy: ..." (the first start failed). */
#define LOG_CANNOT_START	"cannot start haproxy: "
/* systemd's STATUS=: "generation N (pid P, haproxy V) serving; ..."
 * (printf: N, P), then "; last reload FAILED (...)" after a failure. */
#define STATUS_SERVING_FMT	"generation %u (pid %d, haproxy "
#define STATUS_LAST_FAILED	"; last reload FAILED ("

/* gaps: a -D launcher found still loading is awaited, not adopted. */
#define LOG_LAUNCHER_AWAITED	"is a launcher still loading; its daemon is adopted"

/* ---- faststart ---- */
/* No live haproxy in the pidfile: generation 1 starts before the search. */
#define LOG_SEARCH_DEFERRED	"looking for other instances once generation 1 serves"
/* "looked for foreign haproxy instances after the start: N found"
 * (printf: N), the end of the search that waited. */
#define LOG_LATE_SEARCH_FOUND_FMT	"looked for foreign haproxy instances after the start: %u found"
/* "SIGUSR1 -> foreign haproxy pid P: soft stop" (printf: P). */
#define LOG_FOREIGN_SOFT_STOP_FMT	"SIGUSR1 -> foreign haproxy pid %d: soft stop"
/* Generation 1 failed: "...; looking for haproxy instances that may hold
 * its addresses". */
#define LOG_FIRST_FAILED_SEARCH	"looking for haproxy instances that may hold its addresses"
