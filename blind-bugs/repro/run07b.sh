#!/bin/bash
# usage: run07.sh WRAPPER: haproxy restarted by hand twice under the wrapper
W=$1; d=/tmp/brepro/r07; rm -rf $d; mkdir -p $d/rt
$W --runtime-dir=$d/rt -f /tmp/brepro/hap.cfg -p $d/pid > $d/log 2>&1 &
wp=$!
for i in $(seq 50); do grep -q 'ready' $d/log && break; sleep 0.2; done
for n in 1 2; do
	old=$(cat $d/pid)
	kill -USR1 $old; while kill -0 $old 2>/dev/null; do sleep 0.05; done; sleep 0.3
	/usr/sbin/haproxy -f /tmp/brepro/hap.cfg -p $d/pid -D
	for i in $(seq 50); do [ $(grep -c 'adopting' $d/log) -ge $n ] && break; kill -0 $wp 2>/dev/null || break; sleep 0.1; done
	echo "after restart $n: wrapper $(kill -0 $wp 2>/dev/null && echo up || echo gone); pidfile $(cat $d/pid)"
done
sleep 1
kill -TERM $wp 2>/dev/null; for i in $(seq 100); do kill -0 $wp 2>/dev/null || break; sleep 0.1; done
wait $wp; echo "wrapper exit $?"
# leftovers of ours: only a haproxy on this very configuration
for p in $(cat $d/pid 2>/dev/null); do grep -q brepro/hap.cfg /proc/$p/cmdline 2>/dev/null && { echo "left running: $p"; kill -TERM $p; }; done
grep -vE 'SO_REUSEPORT|^<7>' $d/log
