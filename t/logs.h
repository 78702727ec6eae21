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

/* gaps: a -D launcher found still loading is awaited, not adopted. */
#define LOG_LAUNCHER_AWAITED	"is a launcher still loading; its daemon is adopted"
