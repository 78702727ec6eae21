/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Looking at processes through /proc. Pids found here are candidates; a
 * signal goes only through a pidfd that was verified after it was opened
 * (proc_open_if_child_of, proc_same_process_at), so that a pid reused in
 * between can never receive it.
 */
#pragma once

#include <glib.h>

/* The real proc tree, for the functions below that take a root. */
#define PROC_ROOT "/proc"

/* A pid in decimal, as /proc and MAINPID= write it: 1 to G_MAXINT. */
gboolean proc_parse_pid(const char *text, GPid *pid);

/* The parent of pid, or 0 when pid does not exist or cannot be read. */
GPid proc_parent(GPid pid);

/* The pids whose parent is parent, from a scan of /proc (GArray of GPid). */
GArray *proc_children(GPid parent);

/* Is pid among pids (a GArray of GPid, like proc_children's)? */
gboolean proc_pids_contain(const GArray *pids, GPid pid);
/* "1 2 3", for the log. */
gchar *pids_text(const GArray *pids);

/* Orders two GPid for g_array_sort(): what is listed comes out in pid
 * order, whatever order it was found in. */
gint proc_pid_cmp(gconstpointer a, gconstpointer b);

/* /proc/pid/exe, without a " (deleted)" suffix; NULL when unreadable. */
gchar *proc_exe(GPid pid);

/*
 * A pidfd for pid, returned only if, after it was opened, pid's parent is
 * still expected_parent: the pidfd then names that very process. -1 when
 * the process is gone or is someone else's (errno ESRCH), or when there
 * are no pidfds (ENOSYS: Linux < 5.3, valgrind).
 */
int proc_open_if_child_of(GPid pid, GPid expected_parent);

/* A start time from stat (clock ticks since boot) as wall-clock
 * microseconds; 0 when the boot time cannot be read. */
gint64 proc_start_time_us(guint64 ticks);

/* Send sig through a pidfd; FALSE (errno set) when it could not be sent. */
gboolean proc_pidfd_signal(int pidfd, int sig);

/*
 * The same questions asked of any proc tree: root is PROC_ROOT in
 * production, a directory of fake PID/{stat,cmdline,exe,cwd} entries in
 * tests. The parsers take untrusted bytes (len, not NUL-terminated) and
 * never fail worse than returning FALSE or an empty result.
 */

/* What /proc/PID/stat says about a process that matters here. */
struct proc_stat {
	char state;		/* R, S, D, T, Z (zombie), X (dead)... */
	GPid ppid;
	GPid session;
	/* Clock ticks after boot: with the pid, names one process for good. */
	guint64 start_time;
	/* The executed file's name as the kernel keeps it: at most 15
	 * bytes (up to a NUL in it); a cheap filter before cmdline. */
	char comm[16];
};

/* More arguments than this are dropped by the parser. */
#define PROC_ARGV_MAX 65536u

/* Parse stat content; the command name in parentheses may hold anything. */
gboolean proc_parse_stat(const char *text, gsize len, struct proc_stat *out);

/*
 * Split cmdline content at NULs into a GStrv (bytes kept as they are, not
 * necessarily UTF-8). Trailing empty strings are dropped: they are the
 * padding a process leaves when it overwrites its arguments in place.
 * Empty content (a kernel thread, a zombie) gives an empty GStrv.
 */
GStrv proc_parse_cmdline(const char *data, gsize len);

/* The pids (numeric entries) under root, unsorted; NULL and error when
 * root cannot be listed. */
GArray *proc_list_pids_at(const char *root, GError **error);

gboolean proc_stat_at(const char *root, GPid pid, struct proc_stat *out,
		      GError **error);
/*
 * PID/cmdline, if it is at most max bytes long: a process of another user
 * may have a command line of megabytes, and a scan must not hold what it
 * only needs to decide. Longer: NULL, *whole FALSE and no error.
 */
GStrv proc_cmdline_at(const char *root, GPid pid, gsize max, gboolean *whole,
		      GError **error);

/*
 * The start of PID/name in the proc directory dirfd, read into buf and
 * NUL-terminated (at most size - 1 bytes), without allocating: for a scan
 * that looks at every process. Its length (size - 1: maybe cut), or -1
 * with errno set.
 */
gssize proc_read_head_at(int dirfd, GPid pid, const char *name, char *buf,
			 gsize size);

/* PID/exe; *deleted tells whether it ended in " (deleted)", removed here. */
gchar *proc_exe_at(const char *root, GPid pid, gboolean *deleted,
		   GError **error);
/* PID/cwd; NULL when it cannot be read. */
gchar *proc_cwd_at(const char *root, GPid pid);

/* Is pid still the process that started at start_time, and not a zombie?
 * Asked after pidfd_open(), it tells that the pidfd names that process. */
gboolean proc_same_process_at(const char *root, GPid pid, guint64 start_time);
/* A pidfd for pid, returned only if, once it is open, pid is still the
 * process that started at start_time: the pidfd then names that very
 * process for good. -1 when it is gone or another process has its pid. */
int proc_open_if_same_at(const char *root, GPid pid, guint64 start_time);

/* Signal masks from /proc/PID/status: bit (n - 1) stands for signal n. */
struct proc_sigmasks {
	guint64 blocked;	/* SigBlk (of the main thread) */
	guint64 ignored;	/* SigIgn */
	guint64 caught;		/* SigCgt: a handler is installed */
};

#define PROC_SIGBIT(sig) (G_GUINT64_CONSTANT(1) << ((sig) - 1))

/* Parse status content; FALSE unless all three masks are there. */
gboolean proc_parse_sigmasks(const char *text, gsize len,
			     struct proc_sigmasks *out);

/*
 * Does pid handle sig now: a handler installed and sig not blocked? A
 * haproxy master re-executes itself after every load (2.5+) and a signal
 * that comes while it does may be lost: this tells when it has settled.
 */
gboolean proc_catches_signal_at(const char *root, GPid pid, int sig);

/* The Uid: and Gid: lines of /proc/PID/status: real, effective, saved
 * and filesystem ids. */
struct proc_ids {
	guint32 uid[4];
	guint32 gid[4];
};

/* Parse status content; FALSE unless both lines hold four ids. */
gboolean proc_parse_ids(const char *text, gsize len, struct proc_ids *out);
gboolean proc_ids_at(const char *root, GPid pid, struct proc_ids *out,
		     GError **error);
