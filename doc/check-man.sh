#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-man.sh WRAPPER MANPAGE VERSION
# The man page documents exactly the options --help lists (in its OPTIONS
# section, one ".TP" item each), and the version the wrapper reports.
set -eu

wrapper=$1 page=$2 version=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$wrapper" --help | sed -n 's/^  --\([a-z-]*\).*/\1/p' | sort > "$tmp/help"
# The line after each .TP of the OPTIONS section: ".BI \-\-name= arg" or
# ".B \-\-name".
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$page" \
	| awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' \
	| sed -n 's/^\.BI* \\-\\-\([a-z\\-]*\).*/\1/p' | sed 's/\\-/-/g; s/=$//' \
	| sort > "$tmp/man"

if ! diff -u --label help "$tmp/help" --label man "$tmp/man"; then
	echo "check-man: $page and $wrapper --help list different options" >&2
	exit 1
fi
[ -s "$tmp/help" ] || { echo "check-man: no option in --help" >&2; exit 1; }

if ! "$wrapper" --version | grep -qx "haproxy-systemd-wrapper $version"; then
	echo "check-man: $wrapper --version is not $version" >&2
	exit 1
fi
if ! grep -q "^\.TH .*\"haproxy-systemd-wrapper $version\"" "$page"; then
	echo "check-man: the .TH line of $page does not say version $version" >&2
	exit 1
fi
echo "check-man: $(wc -l < "$tmp/help") options in --help and $page, version $version"
