# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# bench/extra.sh: the start-up, takeover and no-handover cases of make
# bench, sourced by bench/run (its helpers: track, stop_pid, wait_gone,
# alive, who_answers, wait_serving, write_cfg, block, kv, ratio...).
# Each case runs side by side with its anchor and prints ratios:
#
#   start    start to serving, p50/p99: the wrapper vs haproxy -db alone,
#            STARTS runs each, interleaved
#   reload   reload latency, p50/p99, no load: the wrapper (SIGUSR2) vs a
#            manual haproxy -D -sf, LAT_RELOADS each
#   both of those on an idle host and with BENCH_IDLE_PROCS (10000) idle
#            processes on it (bench/idleprocs; 0 skips that half)
#   takeover failed requests per takeover, under load, of a foreign
#            haproxy -D and haproxy -W -D (TAKEOVERS each, 20) by the
#            wrapper, vs the same instance replaced by a manual -sf
#   no-x     failed requests per reload, under load, of the wrapper with
#            --seamless-reload=off, with the default reuseport migration
#            and with --reuseport-migration=off (skipped when the wrapper
#            does not know the option), NOX_RELOADS (50) each
#   series   failed requests per reload, under load (SERIES_CONC, 16), on
#            haproxy 1.5.18 and 1.7.0 (BENCH_SERIES_DIR, ../shared/haproxy
#            beside the tree) and Debian's haproxy with
#            --seamless-reload=off: the wrapper vs the historic wrapper
#            1.7.0 (wrapper-1.7.0 there) driving the same build,
#            SERIES_RELOADS (400) each; absent builds are skipped

STARTS=${STARTS:-20}
LAT_RELOADS=${LAT_RELOADS:-20}
TAKEOVERS=${TAKEOVERS:-20}
NOX_RELOADS=${NOX_RELOADS:-50}
SERIES_RELOADS=${SERIES_RELOADS:-400}
SERIES_CONC=${SERIES_CONC:-16}
BENCH_SERIES_DIR=${BENCH_SERIES_DIR:-$root/../shared/haproxy}
SERIES_VERSIONS=${SERIES_VERSIONS:-1.5.18 1.7.0}
BENCH_IDLE_PROCS=${BENCH_IDLE_PROCS:-10000}
IDLEPROCS=$here/idleprocs
for v in STARTS LAT_RELOADS TAKEOVERS NOX_RELOADS SERIES_RELOADS SERIES_CONC; do
	[[ ${!v} =~ ^[0-9]+$ ]] && (( ${!v} > 0 && ${!v} <= 10000 )) || die "bad $v=${!v}"
done
[[ $BENCH_IDLE_PROCS =~ ^[0-9]+$ ]] || die "bad BENCH_IDLE_PROCS=$BENCH_IDLE_PROCS"

# pcts FILE NAME: NAME_p50/NAME_p99 (ms, nearest rank) of a column of us.
pcts() {
	sort -n "$1" | awk -v name="$2" '
		{ v[++n] = $1 }
		function pct(p,   r) { r = int(p * n + 0.999999); if (r < 1) r = 1; if (r > n) r = n; return v[r] / 1000 }
		END { if (!n) { printf "%s_p50=-1\n%s_p99=-1\n%s_n=0\n", name, name, name; exit }
		      printf "%s_p50=%.2f\n%s_p99=%.2f\n%s_n=%d\n", name, pct(0.5), name, pct(0.99), name, n }'
}

# ---- idle processes ----

IPID=
idle_procs_start() {
	local n=$1 deadline
	rm -f "$work/idleprocs.ready"
	# It ends its processes when this run ends, at worst.
	"$IDLEPROCS" -n "$n" -r "$work/idleprocs.ready" </dev/null >/dev/null 2>"$work/idleprocs.err" &
	IPID=$!
	track "$IPID" "$(readlink -f "$IDLEPROCS")"
	deadline=$(( $(date +%s) + 600 ))
	until [ -s "$work/idleprocs.ready" ]; do
		alive "$IPID" || { cat "$work/idleprocs.err" >&2; return 1; }
		(( $(date +%s) >= deadline )) && return 1
		sleep 0.2
	done
}

idle_procs_stop() {
	[ -n "$IPID" ] && stop_pid "$IPID" "$(readlink -f "$IDLEPROCS")"
	IPID=
}

# ---- start to serving ----

# start_one KIND N COND: one start, its microseconds appended to
# $work/start.KIND.COND; the server stopped after.
start_one() {
	local kind=$1 i=$2 cond=$3 port cfg cmd out pid exe
	port=$("$RELOADER" -f) || return 1
	cfg=$work/s.$kind.$cond.$i.cfg
	write_cfg "$cfg" "$port"
	case $kind in
	haproxy)
		cmd="exec '$HAPROXY' -db -f '$cfg' </dev/null >>'$work/s.log' 2>&1"
		exe=$HAPROXY ;;
	wrapper)	# a restart: the same instance's runtime directory
		cmd="exec '$WRAPPER' --haproxy='$HAPROXY' -f '$cfg' -p '$work/s.$cond.pid' --runtime-dir='$work/rt-s.$cond' </dev/null >>'$work/s.log' 2>&1"
		exe=$WRAPPER_EXE ;;
	cold)		# a first start: a new runtime directory
		cmd="exec '$WRAPPER' --haproxy='$HAPROXY' -f '$cfg' -p '$work/s.$cond.$i.pid' --runtime-dir='$work/rt-s.$cond.$i' </dev/null >>'$work/s.log' 2>&1"
		exe=$WRAPPER_EXE ;;
	esac
	out=$("$RELOADER" -p "$port" -X "$cmd" -w 30000) || { echo "bench: start of $kind did not serve" >&2; return 1; }
	pid=$(sed -n 's/^pid=//p' <<<"$out")
	track "$pid" "$exe"
	sed -n 's/^start_us=//p' <<<"$out" >>"$work/start.$kind.$cond"
	sed -n 's/^cpu_us=//p' <<<"$out" >>"$work/cpu.$kind.$cond"
	stop_pid "$pid" "$exe"
	unset "tracked[$pid]"
}

# reload_lat COND: LAT_RELOADS reloads of the wrapper and of a manual -sf,
# in two interleaved halves each; latencies in $work/lat.{w,sf}.COND.
reload_lat() {
	local cond=$1 wport sport wpid h n
	wport=$("$RELOADER" -f) && sport=$("$RELOADER" -f) || return 1
	write_cfg "$work/l.w.$cond.cfg" "$wport"
	write_cfg "$work/l.sf.$cond.cfg" "$sport"
	"$WRAPPER" --haproxy="$HAPROXY" -f "$work/l.w.$cond.cfg" -p "$work/l.w.$cond.pid" \
		--runtime-dir="$work/rt-l.$cond" </dev/null >>"$work/l.log" 2>&1 &
	wpid=$!
	track "$wpid" "$WRAPPER_EXE"
	"$HAPROXY" -D -p "$work/l.sf.$cond.pid" -f "$work/l.sf.$cond.cfg" </dev/null >>"$work/l.log" 2>&1 || return 1
	wait_serving "$wport" 30 && wait_serving "$sport" 30 || return 1
	for h in 1 2; do
		n=$(( LAT_RELOADS / 2 + (h == 1 ? LAT_RELOADS % 2 : 0) ))
		"$RELOADER" -p "$wport" -n "$n" -w 15000 -o "$work/lat.w.$cond.$h.rl" \
			-k "$wpid" -S USR2 -Q "$work/rt-l.$cond/control.sock" >/dev/null 2>>"$work/l.log" || return 1
		"$RELOADER" -p "$sport" -n "$n" -w 15000 -o "$work/lat.sf.$cond.$h.rl" \
			-C "exec '$HAPROXY' -D -p '$work/l.sf.$cond.pid' -f '$work/l.sf.$cond.cfg' -sf \$(cat '$work/l.sf.$cond.pid') </dev/null >>'$work/l.log' 2>&1" \
			>/dev/null 2>>"$work/l.log" || return 1
	done
	cat "$work"/lat.w."$cond".*.rl | awk '!/^#/ && $3 != 0 {print $4}' >"$work/lat.w.$cond"
	cat "$work"/lat.sf."$cond".*.rl | awk '!/^#/ && $3 != 0 {print $4}' >"$work/lat.sf.$cond"
	stop_pid "$wpid" "$WRAPPER_EXE"
	unset "tracked[$wpid]"
	for pid in $(cat "$work/l.sf.$cond.pid"); do
		[ "$(exe_of "$pid")" = "$HAPROXY" ] && stop_pid "$pid" "$HAPROXY"
	done
	return 0
}

startup_case() {
	local cond=$1 i
	for (( i = 1; i <= STARTS; i++ )); do
		# Rotate which goes first: a busy moment weighs on all.
		case $(( i % 3 )) in
		0) start_one haproxy "$i" "$cond" && start_one wrapper "$i" "$cond" && start_one cold "$i" "$cond" ;;
		1) start_one wrapper "$i" "$cond" && start_one cold "$i" "$cond" && start_one haproxy "$i" "$cond" ;;
		2) start_one cold "$i" "$cond" && start_one haproxy "$i" "$cond" && start_one wrapper "$i" "$cond" ;;
		esac || return 1
	done
	reload_lat "$cond"
}

# ---- takeovers of a foreign instance, under load ----

# takeover_one HOW KIND I: a foreign haproxy (KIND "-D" or "-W -D"), then,
# under load, the wrapper (HOW=wrapper) or a manual haproxy -D -sf (HOW=sf)
# replaces it. Failed requests in $work/t.HOW.KIND.I.load.
takeover_one() {
	local how=$1 kind=$2 i=$3 tag port cfg pidf old lpid wpid pid deadline
	tag=$how.${kind// /}.$i
	port=$("$RELOADER" -f) || return 1
	cfg=$work/t.$tag.cfg
	pidf=$work/t.$tag.pid
	write_cfg "$cfg" "$port"
	# shellcheck disable=SC2086
	"$HAPROXY" $kind -p "$pidf" -f "$cfg" </dev/null >>"$work/t.log" 2>&1 || return 1
	wait_serving "$port" 30 || return 1
	old=$(head -n 1 "$pidf")
	[[ $old =~ ^[0-9]+$ ]] && [ "$(exe_of "$old")" = "$HAPROXY" ] || return 1
	rm -f "$work/t.$tag.stop"
	"$LOADCLIENT" -p "$port" -c "$BENCH_CONC" -d 120 -t 2000 -i 100 -s "$work/t.$tag.stop" \
		-o "$work/t.$tag.load" &
	lpid=$!
	track "$lpid" "$LOADCLIENT"
	sleep 0.3
	if [ "$how" = wrapper ]; then
		"$WRAPPER" --haproxy="$HAPROXY" -f "$cfg" -p "$pidf" --runtime-dir="$work/rt-t.$tag" \
			</dev/null >>"$work/t.log" 2>&1 &
		wpid=$!
		track "$wpid" "$WRAPPER_EXE"
	else
		"$HAPROXY" -D -p "$pidf.new" -f "$cfg" -sf "$old" </dev/null >>"$work/t.log" 2>&1 || return 1
	fi
	# Done once the foreign instance has left (its top process).
	wait_gone "$old" 40 || { echo "bench: takeover $tag: pid $old still there" >&2; return 1; }
	sleep 0.3
	touch "$work/t.$tag.stop"
	wait_gone "$lpid" 30
	unset "tracked[$lpid]"
	if [ "$how" = wrapper ]; then
		stop_pid "$wpid" "$WRAPPER_EXE"
		unset "tracked[$wpid]"
	fi
	for pid in $(cat "$pidf.new" "$pidf" 2>/dev/null); do
		[[ $pid =~ ^[0-9]+$ ]] && [ "$(exe_of "$pid")" = "$HAPROXY" ] && stop_pid "$pid" "$HAPROXY"
	done
	# Draining processes end by themselves (hard-stop-after at worst).
	deadline=$(( $(date +%s) + 35 ))
	while [ -n "$(haproxies_of "$cfg")" ] && (( $(date +%s) < deadline )); do
		sleep 0.1
	done
	for pid in $(haproxies_of "$cfg"); do
		stop_pid "$pid" "$HAPROXY"
	done
	return 0
}

# haproxies_of CFG: our haproxy processes that load CFG.
haproxies_of() {
	local pid
	for pid in $(our_haproxies); do
		tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$1 " && echo "$pid"
	done
}

takeover_case() {
	local kind i
	for kind in "-D" "-W -D"; do
		for (( i = 1; i <= TAKEOVERS; i++ )); do
			takeover_one wrapper "$kind" "$i" && takeover_one sf "$kind" "$i" || return 1
		done
	done
}

# takeover_sum HOW KIND: total failed requests and takeovers.
takeover_sum() {
	local f
	cat $(for (( f = 1; f <= TAKEOVERS; f++ )); do echo "$work/t.$1.${2// /}.$f.load"; done) 2>/dev/null |
		awk -F= '$1 == "errors" {e += $2; n++} $1 == "total" {t += $2} END {printf "%d %d %d\n", e, n, t}'
}

# ---- reloads without socket handover, with and without migration ----

# nox_run NAME EXTRA-OPTION: the wrapper with --seamless-reload=off (and
# the option), NOX_RELOADS reloads under load; $work/NAME.1.* as block().
nox_run() {
	local name=$1 opt=$2 port wpid rc
	if [ -n "$opt" ]; then
		"$WRAPPER" "$opt" --version >/dev/null 2>&1
		rc=$?
		(( rc == 64 )) && { echo skipped >"$work/$name.skipped"; return 0; }
	fi
	port=$("$RELOADER" -f) || return 1
	write_cfg "$work/$name.cfg" "$port"
	"$WRAPPER" --haproxy="$HAPROXY" --seamless-reload=off ${opt:+"$opt"} -f "$work/$name.cfg" \
		-p "$work/$name.pid" --runtime-dir="$work/rt-$name" </dev/null >"$work/$name.wrapper.log" 2>&1 &
	wpid=$!
	track "$wpid" "$WRAPPER_EXE"
	wait_serving "$port" 30 || { cat "$work/$name.wrapper.log" >&2; return 1; }
	block "$name.1" "$port" "$NOX_RELOADS" -k "$wpid" -S USR2 -Q "$work/rt-$name/control.sock" || return 1
	stop_pid "$wpid" "$WRAPPER_EXE"
	unset "tracked[$wpid]"
}

# ---- reloads without -x on old series: the wrapper vs the historic one ----

# A configuration for haproxy < 2.2 (no http-request return, no
# hard-stop-after before 1.8): its pid in a redirect, which the reloader
# reads and the load client counts as an answer (-k 302).
write_cfg_old() {   # write_cfg_old FILE PORT
	cat >"$1" <<EOF
global
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 5s
    timeout server 5s
frontend bench
    bind 127.0.0.1:$2
    http-request redirect location /pid=%pid code 302
EOF
}

# series_serving PORT SECONDS: until an answer (200 or a redirect) names a pid.
series_serving() {
	local deadline=$(( $(date +%s%N) + $2 * 1000000000 ))
	until curl -si --max-time 1 "http://127.0.0.1:$1/" 2>/dev/null | grep -q 'pid=[0-9]'; do
		(( $(date +%s%N) >= deadline )) && return 1
		sleep 0.02
	done
}

# series_leftovers EXE: processes of EXE with this run's work directory on
# their command line, ended by pid (a draining generation at most).
series_leftovers() {
	local d pid
	for d in $(find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$1" 2>/dev/null); do
		d=${d%/exe}
		pid=${d#/proc/}
		[[ $pid =~ ^[0-9]+$ ]] || continue
		tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF "$work/" && stop_pid "$pid" "$1"
	done
	return 0
}

# before_2_2 HAPROXY: true for haproxy 1.x, 2.0 and 2.1.
before_2_2() {
	"$1" -v 2>/dev/null | sed -n '1s/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p' |
		awk '{exit !($1 < 2 || ($1 == 2 && $2 < 2))}'
}

# series_run NAME WHO HAPROXY: WHO (ours or historic) drives HAPROXY
# through SERIES_RELOADS reloads (SIGUSR2) under load; $work/NAME.1.*.
series_run() {
	local name=$1 who=$2 ha=$3 port wpid exe dir BENCH_CONC=$SERIES_CONC
	# Both read by block(), within this call.
	# shellcheck disable=SC2034
	local BENCH_OK_STATUS=200
	port=$("$RELOADER" -f) || return 1
	if before_2_2 "$ha"; then
		BENCH_OK_STATUS=302
		write_cfg_old "$work/$name.cfg" "$port"
	else
		write_cfg "$work/$name.cfg" "$port"
	fi
	if [ "$who" = historic ]; then
		# It runs the haproxy beside it, named after itself.
		dir=$work/$name.bin
		mkdir -p "$dir" && cp "$BENCH_SERIES_DIR/wrapper-1.7.0" "$dir/haproxy-systemd-wrapper" &&
			ln -s "$ha" "$dir/haproxy" || return 1
		exe=$(readlink -f "$dir/haproxy-systemd-wrapper")
		"$dir/haproxy-systemd-wrapper" -f "$work/$name.cfg" -p "$work/$name.pid" \
			</dev/null >"$work/$name.wrapper.log" 2>&1 &
	else
		exe=$WRAPPER_EXE
		"$WRAPPER" --haproxy="$ha" --seamless-reload=off -f "$work/$name.cfg" \
			-p "$work/$name.pid" --runtime-dir="$work/rt-$name" \
			</dev/null >"$work/$name.wrapper.log" 2>&1 &
	fi
	wpid=$!
	track "$wpid" "$exe"
	series_serving "$port" 30 || { cat "$work/$name.wrapper.log" >&2; return 1; }
	if [ "$who" = historic ]; then
		block "$name.1" "$port" "$SERIES_RELOADS" -k "$wpid" -S USR2 || return 1
	else
		block "$name.1" "$port" "$SERIES_RELOADS" -k "$wpid" -S USR2 \
			-Q "$work/rt-$name/control.sock" || return 1
	fi
	stop_pid "$wpid" "$exe"
	unset "tracked[$wpid]"
	series_leftovers "$(readlink -f "$ha")"
}

# series_case: each version, ours and the historic wrapper in turn where
# it can reload that haproxy (1.7 only).
series_case() {
	local v ha
	: >"$work/series.list"
	for v in $SERIES_VERSIONS debian; do
		if [ "$v" = debian ]; then
			ha=$HAPROXY
		else
			ha=$BENCH_SERIES_DIR/haproxy-$v
		fi
		if [ ! -x "$ha" ]; then
			echo "$v skipped" >>"$work/series.list"
			continue
		fi
		series_run "ser.$v.ours" ours "$ha" || return 1
		# The historic wrapper blocks on its readiness pipe for good
		# with 1.5 (which never closes it) and runs -D from 1.8 on.
		if [[ $v == 1.7.* ]] && [ -x "$BENCH_SERIES_DIR/wrapper-1.7.0" ]; then
			series_run "ser.$v.hist" historic "$ha" || return 1
		fi
		echo "$v ran" >>"$work/series.list"
	done
}

# series_cell NAME: "E in R reloads (E/R per reload; K resets)", or n/a.
series_cell() {
	local e r k
	[ -s "$work/$1.1.load" ] || { echo "n/a"; return; }
	e=$(kv "$work/$1.1.load" errors)
	k=$(kv "$work/$1.1.load" reset)
	r=$(awk '!/^#/' "$work/$1.1.rl" | wc -l)
	printf '%s in %s reloads (%s per reload; %s resets)' "$e" "$r" \
		"$(awk -v e="$e" -v n="$r" 'BEGIN {printf "%.4f", n ? e / n : 0}')" "$k"
}

report_series() {
	local v st e1 e2
	echo
	echo "reloads without socket handover, under load ($SERIES_CONC connections, a new one per request), failed requests: the wrapper (--seamless-reload=off, migration by default) vs the historic wrapper 1.7.0 on the same haproxy:"
	while read -r v st; do
		if [ "$st" = skipped ]; then
			echo "  haproxy $v: skipped: no build in $BENCH_SERIES_DIR"
			continue
		fi
		if [ "$v" = debian ]; then
			echo "  haproxy $hv: wrapper $(series_cell "ser.$v.ours"); historic: n/a (its -Ds is -D from 1.8 on)"
			continue
		fi
		if [ ! -s "$work/ser.$v.hist.1.load" ]; then
			echo "  haproxy $v: wrapper $(series_cell "ser.$v.ours"); historic: n/a (it blocks on its readiness pipe, which haproxy 1.5 never closes)"
			continue
		fi
		e1=$(kv "$work/ser.$v.ours.1.load" errors)
		e2=$(kv "$work/ser.$v.hist.1.load" errors)
		echo "  haproxy $v: wrapper $(series_cell "ser.$v.ours"); historic $(series_cell "ser.$v.hist"); ratio $(ratio "$e1" "$e2")"
	done <"$work/series.list"
}

# ---- all of it ----

run_extra() {
	local c
	echo "bench: start-up: $STARTS starts and $LAT_RELOADS reloads each, idle host" >&2
	startup_case idle || die "start-up case (idle) could not run"
	if (( BENCH_IDLE_PROCS > 0 )); then
		echo "bench: start-up: forking $BENCH_IDLE_PROCS idle processes" >&2
		idle_procs_start "$BENCH_IDLE_PROCS" || die "could not start $BENCH_IDLE_PROCS idle processes (ulimit -u $(ulimit -u), pid_max $(cat /proc/sys/kernel/pid_max))"
		echo "bench: start-up: the same with $(ls -d /proc/[0-9]* 2>/dev/null | wc -l) processes on the host" >&2
		startup_case busy || die "start-up case (busy) could not run"
		idle_procs_stop
	fi
	echo "bench: takeovers: $TAKEOVERS of a haproxy -D and of a haproxy -W -D, by the wrapper and by a manual -sf" >&2
	takeover_case || die "takeover case could not run"
	echo "bench: no -x: $NOX_RELOADS reloads with --seamless-reload=off, with and without --reuseport-migration=off" >&2
	nox_run nox "" || die "the --seamless-reload=off case could not run"
	nox_run noxmig "--reuseport-migration=off" || die "the --reuseport-migration=off case could not run"
	echo "bench: series: $SERIES_RELOADS reloads under load on haproxy $SERIES_VERSIONS and $hv, the wrapper and the historic wrapper 1.7.0" >&2
	series_case || die "the series case could not run"
	for c in idle busy; do
		[ -s "$work/start.wrapper.$c" ] || continue
		pcts "$work/start.wrapper.$c" sw_$c
		pcts "$work/start.haproxy.$c" sh_$c
		pcts "$work/start.cold.$c" sc_$c
		pcts "$work/cpu.haproxy.$c" ch_$c
		pcts "$work/cpu.wrapper.$c" cw_$c
		pcts "$work/cpu.cold.$c" cc_$c
		pcts "$work/lat.w.$c" lw_$c
		pcts "$work/lat.sf.$c" lsf_$c
	done >"$work/extra.agg"
}

report_extra() {
	local c e r x kind w s d nox nr
	x() { kv "$work/extra.agg" "$1"; }
	echo
	echo "start to serving, ms (p50 / p99; fork to first answer, polled every 250 us; no load); ratios to haproxy -db alone:"
	printf '  %-6s %-22s %-22s %-12s %-22s %-12s\n' host "haproxy -db alone" "wrapper, restart" "ratio" "wrapper, first start" "ratio"
	for c in idle busy; do
		[ -n "$(x sw_${c}_p50)" ] || continue
		printf '  %-6s %-22s %-22s %-12s %-22s %-12s\n' "$c" \
			"$(x sh_${c}_p50) / $(x sh_${c}_p99)" "$(x sw_${c}_p50) / $(x sw_${c}_p99)" \
			"$(ratio "$(x sw_${c}_p50)" "$(x sh_${c}_p50)")/$(ratio "$(x sw_${c}_p99)" "$(x sh_${c}_p99)")" \
			"$(x sc_${c}_p50) / $(x sc_${c}_p99)" \
			"$(ratio "$(x sc_${c}_p50)" "$(x sh_${c}_p50)")/$(ratio "$(x sc_${c}_p99)" "$(x sh_${c}_p99)")"
	done
	echo "  restart: the same runtime directory as the run before (haproxy's version cached there); first start: a new one; $STARTS starts each, interleaved"
	echo "  CPU of the process itself until it served, p50 ms (schedstat; not its children: the wrapper's haproxy -v probe is not in it):"
	for c in idle busy; do
		[ -n "$(x ch_${c}_p50)" ] || continue
		echo "    $c: haproxy -db alone $(x ch_${c}_p50), wrapper restart $(x cw_${c}_p50), wrapper first start $(x cc_${c}_p50)"
	done
	echo
	echo "reload latency, ms (p50 / p99; trigger to first answer of a new pid; no load), ratio to a manual -sf:"
	printf '  %-6s %-24s %-24s %-12s\n' host "wrapper (SIGUSR2)" "haproxy -D -sf by hand" "ratio"
	for c in idle busy; do
		[ -n "$(x lw_${c}_p50)" ] || continue
		printf '  %-6s %-24s %-24s %-12s\n' "$c" \
			"$(x lw_${c}_p50) / $(x lw_${c}_p99)" "$(x lsf_${c}_p50) / $(x lsf_${c}_p99)" \
			"$(ratio "$(x lw_${c}_p50)" "$(x lsf_${c}_p50)")/$(ratio "$(x lw_${c}_p99)" "$(x lsf_${c}_p99)")"
	done
	for c in idle busy; do
		[ -n "$(x sw_${c}_p50)" ] || continue
		d=$(awk -v a="$(x sw_${c}_p50)" -v b="$(x sh_${c}_p50)" 'BEGIN {printf "%.2f", a - b}')
		awk -v d="$d" 'BEGIN {exit !(d > 2)}' && echo "  TARGET MISSED: $c host: the wrapper serves $d ms after haproxy alone (p50); target 2 ms"
		d=$(awk -v a="$(x lw_${c}_p50)" -v b="$(x lsf_${c}_p50)" 'BEGIN {printf "%.2f", a - b}')
		awk -v d="$d" 'BEGIN {exit !(d > 1)}' && echo "  TARGET MISSED: $c host: a wrapper reload takes $d ms more than a manual -sf (p50); target 1 ms"
	done
	echo "  busy: with $BENCH_IDLE_PROCS idle processes (bench/idleprocs) on the host"
	echo
	echo "takeover of a foreign instance under load ($BENCH_CONC connections, a new one per request), failed requests:"
	for kind in "-D" "-W -D"; do
		read -r w nw tw < <(takeover_sum wrapper "$kind")
		read -r s ns ts < <(takeover_sum sf "$kind")
		printf '  haproxy %-6s wrapper %d in %d takeovers (%s per takeover, %d requests); manual -sf %d in %d (%s per replacement); ratio %s\n' \
			"$kind" "$w" "$nw" "$(awk -v e="$w" -v n="$nw" 'BEGIN {printf "%.2f", n ? e / n : 0}')" "$tw" \
			"$s" "$ns" "$(awk -v e="$s" -v n="$ns" 'BEGIN {printf "%.2f", n ? e / n : 0}')" "$(ratio "$w" "$s")"
	done
	echo
	echo "reloads without socket handover (--seamless-reload=off), under load, failed requests:"
	for nox in nox noxmig; do
		if [ -f "$work/$nox.skipped" ]; then
			echo "  --reuseport-migration=off: skipped: option not available"
			continue
		fi
		e=$(kv "$work/$nox.1.load" errors)
		r=$(awk '!/^#/' "$work/$nox.1.rl" | wc -l)
		printf '  %-40s %s in %s reloads (%s per reload)\n' \
			"$([ $nox = nox ] && echo "default (migration where the kernel has it)" || echo "--reuseport-migration=off")" \
			"$e" "$r" "$(awk -v e="$e" -v n="$r" 'BEGIN {printf "%.3f", n ? e / n : 0}')"
	done
	if [ ! -f "$work/noxmig.skipped" ]; then
		nr=$(kv "$work/noxmig.1.load" errors)
		echo "  ratio default / --reuseport-migration=off: $(ratio "$(kv "$work/nox.1.load" errors)" "$nr")"
	fi
	report_series
}
