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

/* ---- t/int/reload*.c ---- */
/* The priority prefixes of a line: warning ("<4>..."), notice. */
#define LOG_PRIO_WARNING	"<4>"
#define LOG_PRIO_NOTICE		"<5>"
/* "sd_notify: ERROR" (a notification that could not be sent). */
#define LOG_SD_NOTIFY		"sd_notify"
/* "sd_notify: cannot load libsystemd: DLERROR", once for each reason. */
#define LOG_LIBSYSTEMD_NOT_LOADED	"sd_notify: cannot load libsystemd: "
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
/* "still adopted after the upgrade: standalone pid P, ..." (printf: P). */
#define LOG_STILL_ADOPTED_FMT	"still adopted after the upgrade: " \
				"standalone pid %d,"
/* The hand-off refused while an adopted haproxy runs. */
#define LOG_HANDOFF_REFUSED_ADOPTED	"hand-off refused: a haproxy adopted"
/* "re-executing on request." / "re-executing on SIGUSR2." */
#define LOG_REEXECUTING		"re-executing on "
#define LOG_REEXECUTING_ON_REQUEST	"re-executing on request."
/* "haproxy-systemd-wrapper V running, adopted N generation(s)" (printf:
 * N), the re-executed image's first word. */
#define LOG_ADOPTED_GENERATIONS_FMT	"adopted %u generation(s)"

/* ---- the real-haproxy tests (t/int/real-*.c) ---- */
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
/* STATUS= once handed off: "handed off to haproxy -Ws: its master, pid P,
 * serves..." (printf: P, the wrapper's pid, now haproxy's master's). */
#define STATUS_HANDED_OFF_FMT	"handed off to haproxy -Ws: its master, pid %d, "
#define STATUS_LAST_FAILED	"; last reload FAILED ("

/* gaps: a -D launcher found still loading is awaited, not adopted. */
#define LOG_LAUNCHER_AWAITED	"is a launcher still loading; its daemon is adopted"

/* ---- logsA ---- */
/* "...: executing /usr/sbin/haproxy -Ws ..." (the word alone; a test adds the path it expects; "re-executing on ..." holds it too). */
#define LOG_EXECUTING_WORD	"executing "
/* "re-executing on SIGUSR2." / "re-executing on request.", any of them. */
#define LOG_REEXECUTING_ANY	"re-executing"
/* "reloading on SIGUSR2." / "reloading on request." (a test adds the cause). */
#define LOG_RELOADING_ON	"reloading on "
/* "haproxy-systemd-wrapper V running, adopted N generation(s)" (printf: V, N). */
#define LOG_WRAPPER_RUNNING_FMT	"haproxy-systemd-wrapper %s running, " \
				"adopted %u generation(s)"
/* "haproxy-systemd-wrapper V running, adopted N generation(s)", whatever V, N. */
#define LOG_RUNNING_ADOPTED	" running, adopted"
/* "haproxy-systemd-wrapper V running, adopted N generation(s)" (printf: N). */
#define LOG_RUNNING_ADOPTED_FMT	"running, adopted %u generation(s)"
/* "<3>not upgrading: P --upgrade-dry-run WHY; reloading with the running wrapper" (and "not upgrading the wrapper on this reload: ..."). */
#define LOG_NOT_UPGRADING	"not upgrading"
/* "<3>not upgrading: P --upgrade-dry-run WHY; reloading with the running wrapper". */
#define LOG_UPGRADE_REFUSED	"not upgrading: "
/* "runtime directory D: D is owned by uid U with mode M; it must be owned by uid U and writable by no one else...". */
#define LOG_RUNDIR_UNTRUSTED	"writable by no one else"
/* "exit, haproxy RC=N", whatever N. */
#define LOG_EXIT_RC		"exit, haproxy RC"
/* "foreign haproxy pid P (standalone) has exited" (printf: P, its kind). */
#define LOG_FOREIGN_EXITED_FMT	"foreign haproxy pid %d (%s) has exited"
/* "<4>handover names pid P, not our child; ignored" (printf: P). */
#define LOG_HANDOVER_NOT_CHILD_FMT	"handover names pid %d, not our child"
/* "generation N ready: pid P, ..." / "generation N ready: master pid P ...". */
#define LOG_READY		" ready: "
/* A line's error priority prefix: "<3>reload failed: ...", "<3>not upgrading: ...". */
#define LOG_PRIO_ERR		"<3>"
/* "<3>not handing off: WHY" (a hand-off refused). */
#define LOG_NOT_HANDING_OFF	"not handing off"
/* "SIGUSR1 from pid P: stopping gracefully". */
#define LOG_STOPPING_GRACEFULLY	"stopping gracefully"
/* "re-exec(PATH) failed: ERROR." (the self-upgrade's execv failed). */
#define LOG_REEXEC_FAILED	"re-exec("
/* "generation N ready: pid P, ..." (printf: N), without the colon. */
#define LOG_GENERATION_READY_FMT	"generation %u ready"
/* "<4>HAPROXY_WRAPPER_STATE could not be read in full (N part(s) ignored): adopting the generations it names, ...". */
#define LOG_STATE_UNREADABLE	"could not be read"
/* "<3>reload failed: ..., generation N (pid P) keeps serving" (printf: P). */
#define LOG_KEEPS_SERVING_FMT	"(pid %d) keeps serving"
/* "<3>not upgrading: P --upgrade-dry-run passed, but the file was replaced during its dry run; reloading with the running wrapper". */
#define LOG_REPLACED_IN_DRY_RUN	"replaced during its dry run"
/* "handing off to haproxy -Ws in place (pid P)". */
#define LOG_HANDING_OFF		"handing off to"
/* "<4>cannot write pidfile: P: ERROR". */
#define LOG_PIDFILE_UNWRITABLE	"cannot write pidfile"
/* "<4>control socket: Too many open files; dropped N idle client(s), accepting at most every M ms until it passes" (a test adds the error). */
#define LOG_CONTROL_SOCKET	"control socket: "
/* "control socket: accepting clients again". */
#define LOG_CONTROL_ACCEPTING_AGAIN	"control socket: accepting clients again"
/* "<4>...: cannot write listeners.cfg: ERROR: no seamless reload". */
#define LOG_LISTENERS_UNWRITABLE	"cannot write listeners.cfg"
/* Any line naming the file: "<4>...: cannot write listeners.cfg: ERROR: no seamless reload". */
#define LOG_LISTENERS_CFG	"listeners.cfg"
/* "<4>...: no seamless reload" / "<4>...: no control socket, no seamless reload". */
#define LOG_NO_SEAMLESS_RELOAD	"no seamless reload"
/* "<4>...: control socket S: ERROR: no control socket" (or "..., no seamless reload"). */
#define LOG_NO_CONTROL_SOCKET	"no control socket"
/* "...: executing /usr/sbin/haproxy ... -x SOCKET ..." (the listeners passed on). */
#define LOG_ARG_X		" -x "
/* "<3>signalfd: ERROR" (a test adds the error; fatal at start). */
#define LOG_SIGNALFD_FAILED	"signalfd: "
/* "<3>hand-off failed: execve(P): ERROR; the wrapper goes on". */
#define LOG_HANDOFF_FAILED	"hand-off failed"
/* "ignoring SIGQUIT from pid P" / "ignoring SIGHUP: stopping" (a test adds the signal's name). */
#define LOG_IGNORING		"ignoring "
/* "ignoring SIGQUIT from pid P" (printf: the signal's name). */
#define LOG_IGNORING_FROM_FMT	"ignoring %s from pid "
/* "ignoring SIGHUP: stopping" (a reload asked for while stopping; printf: the signal's name). */
#define LOG_IGNORING_STOPPING_FMT	"ignoring %s: stopping"
/* "SIGTERM from pid P: stopping" (printf: the signal's name, P). */
#define LOG_STOPPING_ON_FMT	"%s from pid %d: stopping"
/* "SIGUSR1 from pid P: stopping gracefully" (printf: the signal's name, P). */
#define LOG_STOPPING_GRACEFULLY_ON_FMT	"%s from pid %d: stopping gracefully"
/* "SIGTERM while stopping gracefully: stopping now" (printf: the signal's name). */
#define LOG_STOPPING_NOW_FMT	"%s while stopping gracefully: stopping now"
/* "control request: a reload is in progress; one more will follow it" (a client's reload queued). */
#define LOG_RELOAD_QUEUED_BY_CLIENT	"control request: a reload is in progress"
/* ---- logsB ---- */
/* "generation N ready: pid P, ..." or "generation N ready: master pid
 * P, ...", whatever N and whichever form. */
#define LOG_READY_ANY		" ready: "
/* Any line about generation N, process P: "generation N (pid P) ..."
 * (printf: N, P). */
#define LOG_GENERATION_PID_FMT	"generation %u (pid %d)"
/* "<3>... reload failed: ..., generation N (pid P) keeps serving" (or
 * "the adopted haproxy keeps serving"). */
#define LOG_KEEPS_SERVING	"keeps serving"
/* "<4>... generation N: an address is in use; haproxy retries while
 * asking old processes to pause". */
#define LOG_ADDRESS_IN_USE	"an address is in use"
/* "... generation N (pid P) could not bind its addresses and <how>
 * before it was ready" (in the reload failed line). */
#define LOG_COULD_NOT_BIND	"could not bind"
/* "<4>... generation N (pid P) still running Ss after the stop; SIGKILL"
 * (printf: S, the --stop-timeout). */
#define LOG_STILL_RUNNING_AFTER_STOP_FMT	"still running %us after the stop"
/* "<4>... generation N (pid P) still listens M ms after its successor
 * was ready: its stop signal was lost; sending SIGUSR1 again" (printf:
 * N, P; then the signal's name). */
#define LOG_STILL_LISTENS	"still listens "
#define LOG_STILL_LISTENS_FMT	"generation %u (pid %d) still listens "
#define LOG_SENDING_AGAIN_FMT	"%s again"
/* "<3>... cannot start haproxy: /usr/sbin/haproxy -v exited with status
 * S and printed no haproxy version". */
#define LOG_NO_VERSION		"printed no haproxy version"
/* "<3>... runtime directory D: D is owned by uid U with mode M; it must
 * be owned by uid U and writable by no one else". */
#define LOG_RUNDIR_MUST_BE_OWNED	"must be owned by"
/* "<4>... D: haproxy reads "," in a socket path as a separator: no
 * seamless reload" (a "," in the runtime directory). */
#define LOG_COMMA_SEPARATOR	"as a separator"
/* "<4>... <why>: no seamless reload" (or "no control socket, no seamless
 * reload"): haproxy starts without -x. */
#define LOG_NO_SEAMLESS		"no seamless reload"
/* "<4>... cannot write listeners.cfg: <errno>: no seamless reload". */
#define LOG_CANNOT_WRITE_LISTENERS	"cannot write listeners.cfg"
/* The control client's answers on stdout: "ok generation N (pid P)
 * serving" to --reload; --status's "generation N (pid P, haproxy V)
 * serving". */
#define ANSWER_OK_GENERATION	"ok generation "
#define ANSWER_SERVING		"serving"
/* ---- logsC ---- */
/* "the adopted haproxy ended while generation N starts" (printf: N). */
#define LOG_ADOPTED_ENDED_STARTING_FMT \
	"the adopted haproxy ended while generation %u starts"
/* "looking for a haproxy that replaced the adopted one" */
#define LOG_REPLACED_ADOPTED	"replaced the adopted one"
/* "generation N (pid P) <how>: the one serving, whose listeners it was to
 * take, ended while it loaded; starting it again" */
#define LOG_ENDED_WHILE_LOADED	"ended while it loaded; starting it again"
/* "generation N (pid P) killed by signal 9 (Killed) while generation M
 * starts" (printf: P, M). */
#define LOG_KILLED_WHILE_STARTS_FMT \
	"(pid %d) killed by signal 9 (Killed) while generation %u starts"
/* "generation N serves; the haproxy restarted by hand during its reload
 * leaves (SIGUSR1)" (printf: the signal's name). */
#define LOG_HAND_RESTART_LEAVES_FMT \
	"the haproxy restarted by hand during its reload leaves (%s)"
/* "generation N (pid P), the one serving, <how> on its own; looking for a
 * haproxy that replaced it" */
#define LOG_LOOKING_FOR_REPLACEMENT \
	"looking for a haproxy that replaced it"
/* "generation N waits for the search for a haproxy that replaced the one
 * serving" */
#define LOG_WAITS_FOR_SEARCH	"waits for the search"
/* "not taking over pid P: <why>" (printf: P), the takeover's skip notice;
 * why: "it runs as uid U (real ...), gid G: ..." (printf: P, U), or
 * "runs EXE, not haproxy" (printf: P). */
#define LOG_NOT_TAKING_OVER	"not taking over"
#define LOG_NOT_TAKING_OVER_FMT	LOG_NOT_TAKING_OVER " pid %d: "
#define LOG_NOT_TAKING_OVER_UID_FMT \
	LOG_NOT_TAKING_OVER_FMT "it runs as uid %u"
#define LOG_NOT_TAKING_OVER_RUNS_FMT	LOG_NOT_TAKING_OVER_FMT "runs "
/* "pidfile F names pid P (EXE), which this wrapper did not start; it gets
 * no signal from us" (printf: P). */
#define LOG_PIDFILE_NAMES_FMT	"names pid %d ("
/* "taking over standalone pid P, EXE, found by SOURCE" (printf: P); any
 * takeover notice ("taking over master-worker master pid P (workers W),
 * ..."). */
#define LOG_TAKING_OVER		"taking over"
#define LOG_TAKING_OVER_STANDALONE	LOG_TAKING_OVER " standalone"
#define LOG_TAKING_OVER_STANDALONE_FMT \
	LOG_TAKING_OVER_STANDALONE " pid %d, "
/* After the executable in such a line: ", found by pidfile". */
#define LOG_FOUND_BY		", found by"
/* In a takeover notice: "... master pid P (workers W1, W2), ..." */
#define LOG_WORKERS_KEY		"(workers "
/* Any line about a foreign instance. */
#define LOG_FOREIGN		"foreign"
/* "generation N: an address is in use; haproxy retries while asking old
 * processes to pause" */
#define LOG_ADDR_IN_USE		"an address is in use"
/* "generation N gave up binding; old processes were told to resume" */
#define LOG_TOLD_TO_RESUME	"old processes were told to resume"
/* "generation N reloaded: master pid P, workers W1 W2, haproxy V" (printf:
 * N), a master-worker generation's reload; its workers, and those of its
 * "ready" line, after the key "workers ". */
#define LOG_MASTER_RELOADED_FMT	"generation %u reloaded"
#define LOG_WORKERS_PIDS_KEY	"workers "
/* "the haproxy master (pid P) was reloaded without us; its workers are
 * now W1 W2": the new workers after the key. */
#define LOG_RELOADED_WITHOUT_US	"reloaded without us"
#define LOG_WORKERS_NOW_KEY	"workers are now "
/* A signal relayed, "SIGTERM -> P." (printf: the signal's name). */
#define LOG_RELAYED_SIG_FMT	"%s -> "
/* The pid in "generation N ready: pid P, haproxy V" (t_pid_in's key). */
#define LOG_PID_KEY		"pid "
/* Any line of an exec: "...: executing /usr/sbin/haproxy ...", and
 * "re-executing on request." too. */
#define LOG_EXEC_ANY		"executing"
/* A usage error: "-S asks for a master CLI, which needs haproxy >= 1.9" */
#define LOG_MASTER_CLI_TOO_OLD	"-S asks for a master CLI, which needs " \
				"haproxy >= 1.9"
/* A usage error: "-W, -Ws and -S ask for master-worker mode, which
 * --master-worker=off refuses" */
#define LOG_MW_OFF_REFUSES	"-S ask for master-worker mode, which " \
				"--master-worker=off refuses"
/* Why the launch mode is not what the policy alone says (notices): */
/* "nbproc > 1 needs master-worker mode (-db runs a single process)" */
#define LOG_NBPROC_NEEDS_MW	"nbproc > 1 needs master-worker mode"
/* "nbproc > 1 but master-worker mode is off: -db runs a single process" */
#define LOG_MW_MODE_OFF		"master-worker mode is off"
/* "master-worker mode needs haproxy >= 1.8" */
#define LOG_MW_NEEDS_18		"needs haproxy >= 1.8"
/* "the configuration asks for master-worker mode" */
#define LOG_CONFIG_ASKS_MW \
	"the configuration asks for master-worker mode"
/* "cannot start haproxy: master-worker mode: no runtime directory of our
 * own for its notify socket" */
#define LOG_NOTIFY_SOCKET	"notify socket"
/* "adopting standalone pid P, EXE, found by SOURCE" (printf: the kind,
 * "standalone" or "master-worker master", and P); any adoption notice;
 * any line about adoption ("adopting", "adopted ..."). */
#define LOG_ADOPTING_KIND_FMT	"adopting %s pid %d"
#define LOG_ADOPTING_ANY	"adopting"
#define LOG_ADOPT_ANY		"adopt"
/* A line naming pid P ("adopting standalone pid P, ...") (printf: P). */
#define LOG_NAMES_PID_FMT	" pid %d"
/* "generation N (pid P), the one serving, <how> on its own; stopping",
 * and "the adopted haproxy, the one serving, has exited on its own;
 * stopping" */
#define LOG_LOST_STOPPING	"on its own; stopping"
#define LOG_ADOPTED_LOST	"the adopted haproxy, the one serving, has " \
				"exited on its own"
/* "adopted haproxy pid P (standalone) has exited[, and it was serving]"
 * (printf: P). */
#define LOG_ADOPTED_EXITED_FMT	"adopted haproxy pid %d "
/* "haproxy pid P is a launcher still loading; its daemon is adopted once
 * it forks" (printf: P). */
#define LOG_LAUNCHER_AWAITED_FMT	"haproxy pid %d " LOG_LAUNCHER_AWAITED
/* "SO_REUSEPORT migration on for N listeners of haproxy pid P" (printf:
 * N, P), one line for all that a round attached in one process; any line
 * of the migration; the holder's pid after "listeners of haproxy pid ". */
#define LOG_MIGRATION		"SO_REUSEPORT migration"
#define LOG_MIGRATION_ON	LOG_MIGRATION " on for "
#define LOG_HAPROXY_PID_KEY	"listeners of haproxy pid "
/* "foreign haproxy pids P1 P2 stay off -sf: ..." (printf: the pids). */
#define LOG_FOREIGN_HELD_BACK_FMT	"foreign haproxy pids %s stay off -sf"
/* wrapper/steering/reuseport.c: a group's new handshakes go to the new haproxy. */
#define LOG_STEERING		"SO_REUSEPORT steering to "
#define LOG_MIGRATION_ON_FMT \
	LOG_MIGRATION_ON "%u " LOG_HAPROXY_PID_KEY "%d"
/* The notice's first words, "<5>haproxy-systemd-wrapper: ...". */
#define LOG_IDENT_PREFIX	"haproxy-systemd-wrapper: "
/* "SO_REUSEPORT migration: haproxy pid P listens on 127.0.0.1:PORT without
 * SO_REUSEPORT (noreuseport, or -dR): connections ..." (printf: P, PORT). */
#define LOG_NOREUSEPORT		"without SO_REUSEPORT"
#define LOG_NOREUSEPORT_FMT \
	LOG_MIGRATION ": haproxy pid %d listens on 127.0.0.1:%u " \
	LOG_NOREUSEPORT
/* The advice in "SO_REUSEPORT migration unavailable: ...; ...: give the
 * wrapper CAP_BPF, or set net.ipv4.tcp_migrate_req=1 (Linux >= 5.14)". */
#define LOG_TCP_MIGRATE_REQ	"tcp_migrate_req"
/* ---- gaps ---- */
/* A stop during a search: "the wrapper stops: so does standalone pid N,
 * EXE, found by ... (SIGNAL); it replaced ours" (printf: N). */
#define LOG_STOPS_TOO_FMT	"the wrapper stops: so does standalone pid %d, "
#define LOG_IT_REPLACED_OURS	"; it replaced ours"
/* A hard stop: "... so does haproxy pid N, a launcher still loading by
 * hand (SIGTERM)" (printf: N). */
#define LOG_LAUNCHER_STOPS_FMT	"the wrapper stops: so does haproxy pid %d, a launcher still loading by hand ("
/* A graceful stop leaves a launcher loading alone (printf: N). */
#define LOG_LAUNCHER_SPARED_FMT	"haproxy pid %d, a launcher still loading by hand, is not signalled"
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
/* "<7>...: reload: STARTING --SETTLED--> PROBING" (the first start goes on);
 * the steps of the reload state machine are logged with --debug only. */
#define LOG_SETTLED_TO_PROBING	"--SETTLED--> PROBING"
/* Every step line: "<7>...: reload: A --EVENT--> B" (--debug only). */
#define LOG_RELOAD_STEP		"--> "
/* The step that ends a reload that worked. */
#define LOG_STEP_READY_IDLE	"--READY--> IDLE"

/* ---- t/int/real-fdstore.c ---- */
/* "<5>N descriptors handed in LISTEN_FDS are not the fd store's ...:
 * closed" (once, whatever their number). */
#define LOG_HANDED_NOT_OURS	"handed in LISTEN_FDS are not the fd store's"
/* ---- fd store ---- */
/* The one notice that a unit's fd store cannot be used: "systemd's fd
 * store is not used: haproxy V cannot take listening sockets over (-x
 * needs 1.8 or later); a restart refuses connections". */
#define LOG_FDSTORE_UNUSED	"<5>haproxy-systemd-wrapper: systemd's fd store is not used: haproxy "
