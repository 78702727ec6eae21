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
/* "exit, haproxy RC=N" (printf: N), the wrapper's last line. */
#define LOG_EXIT_RC_FMT		"exit, haproxy RC=%d"
/* systemd's STATUS=: "generation N (pid P, haproxy V) serving; ..."
 * (printf: N, P), then "; last reload FAILED (...)" after a failure. */
#define STATUS_SERVING_FMT	"generation %u (pid %d, haproxy "
#define STATUS_LAST_FAILED	"; last reload FAILED ("
