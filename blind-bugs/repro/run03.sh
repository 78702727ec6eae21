#!/bin/bash
# usage: run03.sh WRAPPER
W=$1; d=/tmp/brepro/r03; rm -rf $d; mkdir -p $d/rt; rm -f /tmp/brepro/slow
$W --haproxy=/tmp/brepro/slowhap.sh --runtime-dir=$d/rt -f /tmp/brepro/hap.cfg -p $d/pid > $d/log 2>&1 &
wp=$!
for i in $(seq 50); do grep -q 'ready' $d/log && break; sleep 0.2; done
touch /tmp/brepro/slow
kill -USR2 $wp
for i in $(seq 50); do grep -q 'Executing\|executing' <(tail -n +3 $d/log) && grep -c 'xecuting' $d/log | grep -q 2 && break; sleep 0.1; done
sleep 1
kill -TERM $wp
for i in $(seq 150); do kill -0 $wp 2>/dev/null || break; sleep 0.1; done
kill -0 $wp 2>/dev/null && { echo "wrapper still up after 15 s"; kill -KILL $wp; }
wait $wp; echo "wrapper exit $?"
rm -f /tmp/brepro/slow
cat $d/log
