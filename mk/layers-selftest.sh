#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mk/layers-selftest.sh: mk/layers.sh can fail. On a scratch copy of the
# sources, each rule is broken once (a line added to one file); the check
# must name that file and line, and pass again on the untouched copy.

here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d) || exit 2
trap 'rm -rf "$scratch"' EXIT
(cd "$here" && tar -cf - base legacy migrate wrapper) | tar -xf - -C "$scratch" || exit 2

"$here/mk/layers.sh" "$scratch" >/dev/null || {
	echo "layers-selftest: the untouched copy fails" >&2; exit 1; }

status=0
# file, line planted after its first line, what the complaint must say
while IFS='|' read -r file line want; do
	[ -n "$file" ] || continue
	cp "$scratch/$file" "$scratch/.keep"
	sed -i "1a $line" "$scratch/$file"
	out=$("$here/mk/layers.sh" "$scratch" 2>&1)
	case $out in
	*"$file:2: "*"$want"*) ;;
	*) echo "layers-selftest: $file with '$line' not refused ($want): $out" >&2
	   status=1 ;;
	esac
	mv "$scratch/.keep" "$scratch/$file"
done <<'PLANTS'
legacy/args.c|#include "wrapper/launcher.h"|the supervisor is above it
base/log.c|#include "legacy/args.h"|legacy/ is above it
migrate/find.c|#include "migrate/adopt.h"|the supervisor is above it
base/proc.c|#include "t/lib/harness.h"|the tests are not the product
legacy/pidfile.c|static guint x(void) { return g_idle_add(NULL, NULL); }|runs no main loop
migrate/identity.c|static guint x(void) { return g_timeout_add(1, NULL, NULL); }|runs no main loop
wrapper/reloader.c|#include "wrapper/gentable.h"|runs without processes
wrapper/drain.c|#include "wrapper/fdstore/fdstore.h"|the fdstore feature is used only
wrapper/steering/reuseport.c|#include "wrapper/selfupgrade/state.h"|the selfupgrade feature is used only
wrapper/hastderr.c|#include "wrapper/outcome.h"|uses the core (a call cycle)
wrapper/probe.c|#include "wrapper/launcher.h"|uses wrapper/launcher.c (a call cycle)
wrapper/launcher.c|struct supervisor;|named only in the core
migrate/identity.c|struct supervisor;|named only in the core
wrapper/gentable.h|#include "wrapper/lifecycle.h"|the core's headers are the core's own
PLANTS
[ $status -eq 0 ] && echo "layers-selftest: 14 planted breaks refused"
exit $status
