#!/bin/bash
# usage: run05.sh WRAPPER: which haproxy does haproxy26-systemd-wrapper run?
W=$1; d=/tmp/brepro/r05; rm -rf $d; mkdir -p $d/rt
cp $W $d/haproxy26-systemd-wrapper
printf '#!/bin/sh\nexec /usr/sbin/haproxy "$@"\n' > $d/haproxy26
printf '#!/bin/sh\necho "wrong haproxy" >&2; exit 1\n' > $d/haproxy
chmod +x $d/haproxy26 $d/haproxy
$d/haproxy26-systemd-wrapper --runtime-dir=$d/rt -f /tmp/brepro/hap.cfg -p $d/pid > $d/log 2>&1 &
wp=$!
for i in $(seq 50); do grep -q 'ready\|exit' $d/log && break; sleep 0.2; done
kill -TERM $wp 2>/dev/null; wait $wp; echo "wrapper exit $?"
grep -E 'executing|ready|wrong|RC=' $d/log
