#!/bin/bash
# haproxy that loads slowly, and ends late on SIGTERM while it loads
if [ "$1" != "-v" ] && [ -e /tmp/brepro/slow ]; then
	trap 'sleep 0.5; exit 1' TERM
	sleep 3 & wait
fi
exec /usr/sbin/haproxy "$@"
