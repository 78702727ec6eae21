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
#  - struct supervisor (wrapper/supervisor.h) is the core's context: only
#    the core (below) names it, and wrapper/main.c, which makes the one.
#    The reload machine hands it back to its effects as an opaque
#    pointer: it may declare it, and cannot see inside (it includes
#    nothing of it). The mechanisms are built with what they use;
#  - no call cycle. A.c uses B.c when it includes B.h, the header paired
#    with B.c; the core (below) counts as one file. The core calls its
#    mechanisms; a mechanism is told its inputs and reports through a
#    callback, and never reaches back up: the core's headers are included
#    by the core and wrapper/main.c only, so that no header carries them
#    to a mechanism unseen.

dir=${1:-.}
cd "$dir" || exit 2

# feature: the files outside it that may include its headers.
features='
selfupgrade	wrapper/supervisor.c wrapper/lifecycle.c wrapper/rundir-use.c wrapper/main.c
mworker		wrapper/supervisor.c wrapper/launcher.c wrapper/selfupgrade/selfupgrade.c
steering	wrapper/supervisor.c wrapper/launcher.c wrapper/outcome.c wrapper/statussource.c migrate/firststart.c migrate/replacement.c
fdstore		wrapper/options.h wrapper/supervisor.c wrapper/lifecycle.c wrapper/launcher.c wrapper/outcome.c migrate/handoff.c
versioncache	wrapper/launcher.c wrapper/rundir-use.c
'
proof='identity trust scan find foreign cmdline'
# The one place that decides and names struct supervisor: the context
# and its composition, what a generation's start and end mean, the life
# cycle. The reload machine is not in it: it calls nobody.
core='wrapper/supervisor.c wrapper/outcome.c wrapper/lifecycle.c'

# The project's file names hold no white space.
set -- $(find base legacy migrate wrapper -name '*.[ch]' | LC_ALL=C sort)
[ $# -gt 0 ] || { echo "layers.sh: no sources under $dir" >&2; exit 2; }
exec awk -v features="$features" -v proof="$proof" -v core="$core" '
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
	n = split(core, w, /[ \t\n]+/)
	for (i = 1; i <= n; i++) if (w[i] != "") in_core[w[i]] = 1
	for (i = 1; i < ARGC; i++) exists[ARGV[i]] = 1
	bad = 0
	nodes = 0
}
function in_core_file(path,    c) {
	c = path
	sub(/\.h$/, ".c", c)
	return c in in_core
}
function node(path) {
	return (path in in_core) ? "the core" : path
}
# A.c uses B.c (B.h included): an edge of the graph, with its line.
function use(from, to,    a, b) {
	a = node(from); b = node(to)
	if (a == b || (a, b) in edge_at) return
	edge_at[a, b] = from ":" FNR
	if (!(a in seen)) { seen[a] = 1; node_name[++nodes] = a }
	if (!(b in seen)) { seen[b] = 1; node_name[++nodes] = b }
	out[a, ++outs[a]] = b
}
# Tarjan: the strongly connected parts of the graph, each with its id.
function connect(v,    i, w) {
	index_of[v] = low[v] = ++counter
	stack[++top] = v; on_stack[v] = 1
	for (i = 1; i <= outs[v]; i++) {
		w = out[v, i]
		if (!(w in index_of)) {
			connect(w)
			if (low[w] < low[v]) low[v] = low[w]
		} else if ((w in on_stack) && index_of[w] < low[v])
			low[v] = index_of[w]
	}
	if (low[v] == index_of[v]) {
		parts++
		do {
			w = stack[top--]; delete on_stack[w]
			part_of[w] = parts; part_size[parts]++
		} while (w != v)
	}
}
function cycles(    i, a, b, k, key, members, cyclic) {
	for (i = 1; i <= nodes; i++)
		if (!(node_name[i] in index_of)) connect(node_name[i])
	for (i = 1; i <= nodes; i++) {
		a = node_name[i]
		if (part_size[part_of[a]] > 1)
			cyclic[part_of[a]] = 1
		members[part_of[a]] = members[part_of[a]] " " a
	}
	for (i in cyclic) {
		printf "mk/layers.sh: a call cycle through%s; its uses:\n",
			members[i]
		bad = 1
	}
	for (key in edge_at) {
		split(key, k, SUBSEP); a = k[1]; b = k[2]
		if (part_of[a] == part_of[b] && (part_of[a] in cyclic))
			printf "%s: uses %s (a call cycle)\n", edge_at[key], b
	}
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
	paired = to
	sub(/\.h$/, ".c", paired)
	if (FILENAME ~ /\.c$/ && to ~ /\.h$/ && (paired in exists))
		use(FILENAME, paired)
	r = rank_of(to)
	f = feature_of(to)
	if (to ~ /^(t|\.\.)\//)
		complain("must not include " hdr " (the tests are not the product)")
	else if (r > own)
		complain(name[own] " must not include " hdr " (" name[r] " is above it)")
	else if (FILENAME ~ /^wrapper\/reloader\.[ch]$/ && r == 3 &&
		 to != "wrapper/reloader.h" && to != "wrapper/status.h")
		complain("the reload machine must not include " hdr " (it runs without processes)")
	else if (in_core_file(to) && !in_core_file(FILENAME) &&
		 FILENAME != "wrapper/main.c")
		complain("may not include " hdr ": the core'"'"'s headers are the core'"'"'s own (and wrapper/main.c'"'"'s)")
	else if (f != "" && f != own_feature && !((f, FILENAME) in may_use))
		complain("may not include " hdr ": the " f " feature is used only by the files mk/layers.sh names")
}
/(g_main_|g_timeout_add|g_idle_add|g_unix_fd_add|g_child_watch_add|g_unix_signal_add)/ &&
own < 3 && own > 0 {
	complain(name[own] " runs no main loop")
}
/struct[ \t]+supervisor([^_a-zA-Z0-9]|$)/ && !in_core_file(FILENAME) &&
FILENAME !~ /^wrapper\/(main\.c|reloader\.[ch])$/ {
	complain("struct supervisor (wrapper/supervisor.h) is named only in the core; a mechanism is given what it uses")
}
END { cycles(); exit bad }
' "$@"
