#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/crowd.sh (make bench-crowd): what a crowd of another user's
# processes named haproxy costs the wrapper. Any local user can start
# them, each with a long command line; the wrapper's look at the proc tree
# (at its start, in every adoption search, at a stop after one) must not
# grow with them.
#
# CROWD (400) processes of uid CROWD_UID (65534) are started by
# bench/idleprocs -e: a copy of sleep named CROWD_NAME (haproxy), run as
# "haproxy 86400 0 0 ...", CROWD_ARGS (65535) arguments each
# (CROWD_NAME=sleeper: as many processes the search has no reason to
# look at, for the share of the cost that comes with any process). Then, for
# each WRAPPERS entry (default: the built wrapper; "label=path" pairs, to
# compare builds), CROWD_RUNS (3) times with the crowd and without it:
# the wrapper started on a site of Debian's haproxy (its own runtime
# directory and pidfile), run until its search after the start is done
# ("looked for foreign haproxy instances after the start"), then its peak
# memory (VmHWM) and the CPU its threads used (schedstat, ns) read, and
# stopped. Printed: each run, and the medians, with the crowd minus
# without it. Needs root (a crowd of another user); exits 0 with a
# message when it cannot run, non-zero only when a run failed.

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
WRAPPERS=${WRAPPERS:-built=$root/haproxy-systemd-wrapper}
CROWD=${CROWD:-400}
CROWD_ARGS=${CROWD_ARGS:-65535}
CROWD_UID=${CROWD_UID:-65534}
CROWD_RUNS=${CROWD_RUNS:-3}
CROWD_NAME=${CROWD_NAME:-haproxy}
SEARCH_DONE="looked for foreign haproxy instances after the start"

die() { echo "bench-crowd: $*" >&2; exit 2; }

for v in CROWD CROWD_ARGS CROWD_UID CROWD_RUNS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "bad $v=${!v}"
done
if [ "$(id -u)" != 0 ]; then
	echo "bench-crowd: skipped: needs root, for a crowd of uid $CROWD_UID"
	exit 0
fi
[ -x "$HAPROXY" ] || die "no haproxy at $HAPROXY"
[ -x "$here/idleprocs" ] && [ -x "$here/reloader" ] ||
	die "bench/idleprocs and bench/reloader are not built (make bench-build)"

work=$(mktemp -d /tmp/hsw-crowd.XXXXXX) || die "no work directory"
# The crowd executes a file in it.
chmod 755 "$work"
crowd_pid=
wrapper_pid=

cleanup() {
	[ -n "$wrapper_pid" ] && kill -KILL "$wrapper_pid" 2>/dev/null
	[ -n "$crowd_pid" ] && kill -TERM "$crowd_pid" 2>/dev/null &&
		wait "$crowd_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$("$here/reloader" -f) || die "no free port"
cat >"$work/haproxy.cfg" <<EOF
global
    hard-stop-after 5s
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend fe
    bind 127.0.0.1:$port
    http-request return status 200 content-type text/plain lf-string "pid=%pid\n"
EOF
[[ $CROWD_NAME =~ ^[a-z]+$ ]] || die "bad CROWD_NAME=$CROWD_NAME"
cp /bin/sleep "$work/$CROWD_NAME"
chmod 755 "$work/$CROWD_NAME"

# "VmHWM_kB cpu_ns" of the wrapper at path, started afresh and run until
# its search after the start is done; "" when it failed.
measure() {
	local wrapper=$1 name=$2 log hwm cpu=0 t ns
	log=$work/$name.log
	rm -rf "$work/run-$name" "$work/$name.pid"
	"$wrapper" --runtime-dir="$work/run-$name" -f "$work/haproxy.cfg" \
		-p "$work/$name.pid" 2>"$log" &
	wrapper_pid=$!
	for ((t = 0; t < 600; t++)); do
		grep -q "$SEARCH_DONE" "$log" && break
		kill -0 "$wrapper_pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "$SEARCH_DONE" "$log"; then
		echo "bench-crowd: $name: no search after the start; its log:" >&2
		cat "$log" >&2
		kill -KILL "$wrapper_pid" 2>/dev/null
		wait "$wrapper_pid" 2>/dev/null
		wrapper_pid=
		return 1
	fi
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$wrapper_pid/status")
	for t in /proc/"$wrapper_pid"/task/*/schedstat; do
		read -r ns _ <"$t" && cpu=$((cpu + ns))
	done
	kill -TERM "$wrapper_pid"
	wait "$wrapper_pid" 2>/dev/null
	wrapper_pid=
	echo "$hwm $cpu"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Runs of one wrapper, with the crowd there or not: "hwm cpu" lines.
runs() {
	local label=$1 path=$2 crowd=$3 i out
	for ((i = 1; i <= CROWD_RUNS; i++)); do
		out=$(measure "$path" "$label-$crowd-$i") || return 1
		echo "$out"
		printf '  %-10s %-8s run %d: VmHWM %6d kB, CPU %8.2f ms\n' \
			"$label" "$crowd" "$i" "${out% *}" \
			"$(awk -v n="${out#* }" 'BEGIN { print n / 1e6 }')" >&2
	done
}

echo "bench-crowd: $CROWD processes of uid $CROWD_UID named $CROWD_NAME," \
	"$CROWD_ARGS arguments each; $CROWD_RUNS runs a case"
declare -A results
failed=0
for entry in $WRAPPERS; do
	label=${entry%%=*}
	path=${entry#*=}
	[ -x "$path" ] || die "no wrapper at $path"
	results[$label-alone]=$(runs "$label" "$path" alone) || failed=1
done
"$here/idleprocs" -n "$CROWD" -e "$work/$CROWD_NAME" -a "$CROWD_ARGS" \
	-u "$CROWD_UID" -r "$work/crowd.ready" &
crowd_pid=$!
for ((t = 0; t < 1200; t++)); do
	[ -s "$work/crowd.ready" ] && break
	kill -0 "$crowd_pid" 2>/dev/null || die "the crowd could not start"
	sleep 0.1
done
[ -s "$work/crowd.ready" ] || die "the crowd never got ready"
echo "bench-crowd: crowd $(cat "$work/crowd.ready")," \
	"$(cat /proc/[0-9]*/cmdline 2>/dev/null | wc -c) bytes of command lines on the host"
for entry in $WRAPPERS; do
	label=${entry%%=*}
	path=${entry#*=}
	results[$label-crowd]=$(runs "$label" "$path" crowd) || failed=1
done
kill -TERM "$crowd_pid" && wait "$crowd_pid"
crowd_pid=

for entry in $WRAPPERS; do
	label=${entry%%=*}
	a_hwm=$(awk '{ print $1 }' <<<"${results[$label-alone]}" | median)
	a_cpu=$(awk '{ print $2 }' <<<"${results[$label-alone]}" | median)
	c_hwm=$(awk '{ print $1 }' <<<"${results[$label-crowd]}" | median)
	c_cpu=$(awk '{ print $2 }' <<<"${results[$label-crowd]}" | median)
	awk -v l="$label" -v ah="$a_hwm" -v ac="$a_cpu" -v ch="$c_hwm" \
		-v cc="$c_cpu" 'BEGIN {
		printf "measured: %s: VmHWM alone %d kB, with the crowd %d kB " \
		       "(%+d kB); CPU alone %.2f ms, with the crowd %.2f ms " \
		       "(%+.2f ms)\n", l, ah, ch, ch - ah, ac / 1e6, cc / 1e6,
		       (cc - ac) / 1e6 }'
done
exit $failed
