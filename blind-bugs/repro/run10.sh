#!/bin/bash
# usage: run10.sh WRAPPER: a restart by hand during a (slow) reload
W=$1; d=/tmp/brepro/r10; rm -rf $d; mkdir -p $d/rt; rm -f /tmp/brepro/slow
$W --seamless-reload=off --haproxy=/tmp/brepro/slowhap.sh --runtime-dir=$d/rt -f /tmp/brepro/hap.cfg -p $d/pid > $d/log 2>&1 &
wp=$!
for i in $(seq 50); do grep -q 'ready' $d/log && break; sleep 0.2; done
touch /tmp/brepro/slow
kill -USR2 $wp
sleep 1
/usr/sbin/haproxy -f /tmp/brepro/hap.cfg -p $d/pid -D -sf $(cat $d/pid)
rm -f /tmp/brepro/slow
for i in $(seq 100); do grep -q 'leaves\|generation 2 ready' $d/log && break; sleep 0.1; done
sleep 1
kill -TERM $wp; for i in $(seq 100); do kill -0 $wp 2>/dev/null || break; sleep 0.1; done
wait $wp; echo "wrapper exit $?"
for p in $(cat $d/pid 2>/dev/null); do grep -q brepro/hap.cfg /proc/$p/cmdline 2>/dev/null && { echo "left running: $p"; kill -TERM $p; }; done
grep -vE 'SO_REUSEPORT|WARN|Proxy' $d/log | cut -c1-220
