#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mk/layers.sh [DIR]: the layers' dependencies run one way. From the bottom:
#
#   base/     logging, wait-status text, the signal reset for exec, /proc
#   legacy/   haproxy's command line, versions, pidfiles, launching it
#   migrate/  finding and taking over haproxy instances started by others
#   wrapper/  the supervisor and its client commands
#
# A file includes headers of its own layer and the layers below it, never
# above, and never the tests' (t/). Every #include "..." line of the four
# is read; each one that breaks the rule is named by file and line, and
# the status is 1.
#
# Inside wrapper/, struct supervisor is supervisor.c's own: only its
# public header (wrapper/supervisor.h) and main.c, which runs it, may
# name it; every other module has its own struct and ops.

dir=${1:-.}
cd "$dir" || exit 2
# The project's file names hold no white space.
set -- $(find base legacy migrate wrapper -name '*.[ch]' | LC_ALL=C sort)
[ $# -gt 0 ] || { echo "layers.sh: no sources under $dir" >&2; exit 2; }
exec awk '
BEGIN {
	rank["base"] = 0; rank["legacy"] = 1
	rank["migrate"] = 2; rank["wrapper"] = 3
	bad = 0
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
	hdr = $0
	sub(/^[^"]*"/, "", hdr)
	sub(/".*/, "", hdr)
	split(FILENAME, f, "/")
	own = f[1]
	# A bare name is a header next to the file.
	to = (hdr ~ /\//) ? hdr : own "/" hdr
	sub(/^(\.\/)+/, "", to)
	split(to, h, "/")
	if (h[1] == "t" || h[1] == ".." ||
	    (h[1] in rank && rank[h[1]] > rank[own])) {
		printf "%s:%d: %s/ must not include %s (layers, from the bottom: base, legacy, migrate, wrapper)\n", FILENAME, FNR, own, hdr
		bad = 1
	}
}
/struct[ \t]+supervisor([^_a-zA-Z0-9]|$)/ &&
FILENAME != "wrapper/supervisor.c" && FILENAME != "wrapper/supervisor.h" &&
FILENAME != "wrapper/main.c" {
	printf "%s:%d: only wrapper/supervisor.c (its header, main.c) may name struct supervisor\n", FILENAME, FNR
	bad = 1
}
END { exit bad }
' "$@"
