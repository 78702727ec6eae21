#!/bin/bash
# haproxy whose configuration check crashes
for a in "$@"; do [ "$a" = "-c" ] && kill -SEGV $$; done
exec /usr/sbin/haproxy "$@"
