#!/bin/bash
# usage: run08.sh WRAPPER: a hard reload that upgrades the wrapper
W=$1; d=/tmp/brepro/r08; rm -rf $d; mkdir -p $d/rt
$W --self-upgrade=always --runtime-dir=$d/rt -f /tmp/brepro/hap.cfg -p $d/pid > $d/log 2>&1 &
wp=$!
for i in $(seq 50); do grep -q 'ready' $d/log && break; sleep 0.2; done
timeout 20 $W --hard-reload --runtime-dir=$d/rt; echo "client exit $?"
kill -TERM $wp; for i in $(seq 100); do kill -0 $wp 2>/dev/null || break; sleep 0.1; done
wait $wp; echo "wrapper exit $?"
grep -E 'reloading|re-exec|executing' $d/log | cut -c1-200
