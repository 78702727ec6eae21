#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# mk/layers.sh [DIR]: the tree's map, checked. From the bottom:
#
#   base/      logging, /proc, sockets, systemd's library: no haproxy
#   legacy/    what haproxy needs to hear (its command line per version,
#              pidfiles, the launch): plain functions, no main loop
#   migrate/   haproxy the wrapper did not start. Its proof (identity,
#              trust, scan, find, foreign, cmdline) is plain functions
#              below the supervisor; what acts on the loop (takeover,
#              adopt, replacement, firststart, handoff) sits beside it
#   wrapper/   the supervisor's spine; each optional feature in a
#              directory of its own (wrapper/FEATURE/)
#
# The rules, each broken line named by file and line, status 1:
#  - an #include never points up the layers, and never into t/;
#  - legacy/ and migrate's proof run no main loop (no GLib source);
#  - the reload machine (wrapper/reloader.[ch]) includes nothing of the
#    supervisor's but the status report: it runs without processes;
#  - a feature's headers are included by its own files and by the users
#    the map below names, nobody else: the map is the feature's coupling;
#  - struct supervisor (wrapper/supervisor.h) is the supervisor's context:
#    its parts (wrapper/, its features, migrate's acting files) are built
#    with it; base/, legacy/ and migrate's proof never name it. The reload
#    machine hands it back to its effects as an opaque pointer: it may
#    declare it, and cannot see inside (it includes nothing of it).

dir=${1:-.}
cd "$dir" || exit 2

# feature: the files outside it that may include its headers.
features='
selfupgrade	wrapper/supervisor.c wrapper/rundir-use.c wrapper/main.c
mworker		wrapper/supervisor.c wrapper/launcher.c wrapper/outcome.c wrapper/drain.c wrapper/selfupgrade/selfupgrade.c
steering	wrapper/supervisor.c wrapper/launcher.c wrapper/outcome.c wrapper/statussource.c migrate/firststart.c migrate/replacement.c
fdstore		wrapper/options.h wrapper/supervisor.c wrapper/launcher.c wrapper/outcome.c migrate/handoff.c
versioncache	wrapper/launcher.c wrapper/rundir-use.c
'
proof='identity trust scan find foreign cmdline'

# The project's file names hold no white space.
set -- $(find base legacy migrate wrapper -name '*.[ch]' | LC_ALL=C sort)
[ $# -gt 0 ] || { echo "layers.sh: no sources under $dir" >&2; exit 2; }
exec awk -v features="$features" -v proof="$proof" '
function rank_of(path,    p, n, base) {
	n = split(path, p, "/")
	if (p[1] == "base") return 0
	if (p[1] == "legacy") return 1
	if (p[1] == "migrate") {
		base = p[n]
		sub(/\.[ch]$/, "", base)
		return (base in is_proof) ? 2 : 3
	}
	if (p[1] == "wrapper") return 3
	return -1
}
function feature_of(path,    p, n) {
	n = split(path, p, "/")
	return (p[1] == "wrapper" && n == 3) ? p[2] : ""
}
BEGIN {
	name[0] = "base/"; name[1] = "legacy/"
	name[2] = "migrate'"'"'s proof"; name[3] = "the supervisor"
	n = split(proof, pr, " ")
	for (i = 1; i <= n; i++) is_proof[pr[i]] = 1
	n = split(features, lines, "\n")
	for (i = 1; i <= n; i++) {
		if (lines[i] == "") continue
		m = split(lines[i], w, /[ \t]+/)
		is_feature[w[1]] = 1
		for (j = 2; j <= m; j++) may_use[w[1], w[j]] = 1
	}
	bad = 0
}
function complain(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg
	bad = 1
}
FNR == 1 { own = rank_of(FILENAME); own_feature = feature_of(FILENAME) }
/^[ \t]*#[ \t]*include[ \t]*"/ {
	hdr = $0
	sub(/^[^"]*"/, "", hdr)
	sub(/".*/, "", hdr)
	to = hdr
	if (to !~ /\//) {
		# A bare name is a header next to the file.
		to = FILENAME
		sub(/[^\/]*$/, hdr, to)
	}
	sub(/^(\.\/)+/, "", to)
	r = rank_of(to)
	f = feature_of(to)
	if (to ~ /^(t|\.\.)\//)
		complain("must not include " hdr " (the tests are not the product)")
	else if (r > own)
		complain(name[own] " must not include " hdr " (" name[r] " is above it)")
	else if (FILENAME ~ /^wrapper\/reloader\.[ch]$/ && r == 3 &&
		 to != "wrapper/reloader.h" && to != "wrapper/status.h")
		complain("the reload machine must not include " hdr " (it runs without processes)")
	else if (f != "" && f != own_feature && !((f, FILENAME) in may_use))
		complain("may not include " hdr ": the " f " feature is used only by the files mk/layers.sh names")
}
/(g_main_|g_timeout_add|g_idle_add|g_unix_fd_add|g_child_watch_add|g_unix_signal_add)/ &&
own < 3 && own > 0 {
	complain(name[own] " runs no main loop")
}
/struct[ \t]+supervisor([^_a-zA-Z0-9]|$)/ && own < 3 {
	complain("struct supervisor (wrapper/supervisor.h) is named only in the supervisor and its parts")
}
END { exit bad }
' "$@"
