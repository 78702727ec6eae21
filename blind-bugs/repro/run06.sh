#!/bin/bash
# usage: run06.sh WRAPPER: a hand-off whose "haproxy -c" dies of SIGSEGV
W=$1; d=/tmp/brepro/r06; rm -rf $d; mkdir -p $d/rt
$W --haproxy=/tmp/brepro/crashcheck.sh --runtime-dir=$d/rt -f /tmp/brepro/hap.cfg -p $d/pid > $d/log 2>&1 &
wp=$!
for i in $(seq 50); do grep -q 'ready' $d/log && break; sleep 0.2; done
timeout 20 $W --handoff --runtime-dir=$d/rt; echo "handoff client exit $?"
sleep 1
ps -o pid,args -p $wp
kill -TERM $wp; for i in $(seq 100); do kill -0 $wp 2>/dev/null || break; sleep 0.1; done
kill -0 $wp 2>/dev/null && kill -KILL $wp
wait $wp; echo "exit $?"
grep -E 'hand|check' $d/log
