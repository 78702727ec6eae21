#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mk/diagram.sh [--update]: doc/internals.md shows the reload machine's
# table, printed from wrapper/reloader.c by t/unit/reloader --diagram,
# between two marker lines. Without --update, status 1 and the
# difference when the two disagree; with it, the block is rewritten.
set -eu

doc=doc/internals.md
begin='<!-- t/unit/reloader --diagram: begin -->'
end='<!-- t/unit/reloader --diagram: end -->'
want=$(mktemp)
got=$(mktemp)
trap 'rm -f "$want" "$got"' EXIT

{ echo '```'; t/unit/reloader --diagram; echo '```'; } >"$want"
awk -v b="$begin" -v e="$end" \
	'$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$doc" >"$got"
if ! grep -qxF -- "$begin" "$doc" || ! grep -qxF -- "$end" "$doc"; then
	echo "diagram-check: $doc has no marker lines \"$begin\", \"$end\"" >&2
	exit 1
fi
if [ "${1:-}" = --update ]; then
	awk -v b="$begin" -v e="$end" -v f="$want" '
		$0 == e { while ((getline l < f) > 0) print l; on = 0 }
		!on { print }
		$0 == b { on = 1 }' "$doc" >"$got"
	cat "$got" >"$doc"
	exit 0
fi
if ! cmp -s "$want" "$got"; then
	echo "diagram-check: $doc differs from the reload machine's table" \
	     "(mk/diagram.sh --update rewrites it):" >&2
	diff -u "$got" "$want" >&2 || true
	exit 1
fi
