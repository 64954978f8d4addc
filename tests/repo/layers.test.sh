#!/bin/sh
# layers — the rooms of docs/architecture.md and what each may include.
# Every `#include "room/…"` in a room's C files must name the room itself
# or one it may use; within daemon/, the API side (api, api_env, http, guard,
# routes, jobs, cache, snapshot, static, rawhdr) never includes the daemon or the
# server, the events socket's protocol (daemon/events) includes no WebSocket
# library, and no module includes its way back to itself (an include
# circle).  A violation is printed with its file and line.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
bad=$(mktemp "${TMPDIR:-/tmp}/layers.XXXXXX")
trap 'rm -f "$bad" "$bad.circles"' EXIT INT TERM

allowed() {	# room: the rooms it may include besides itself and base/
	case "$1" in
	base)		echo "" ;;
	ledger)		echo "" ;;
	project)	echo "ledger" ;;
	watchers)	echo "ledger project" ;;
	notifier)	echo "ledger" ;;
	image)		echo "" ;;
	sink)		echo "ledger project watchers" ;;
	browser)	echo "ledger project image" ;;
	daemon)		echo "ledger project watchers notifier sink image" ;;
	cli)		echo "ledger project watchers notifier sink image browser" ;;
	*)		echo "?" ;;
	esac
}

# base/ is the ground floor: it includes nothing of ours, and every room
# may include it
for room in base ledger project watchers notifier sink image browser daemon cli; do
	if [ "$room" = base ]; then
		ok="base"
	else
		ok="$room base $(allowed "$room")"
	fi
	for f in "$room"/*.c "$room"/*.h; do
		[ -f "$f" ] || continue
		grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r hit; do
			inc=${hit#*\"}
			inc=${inc%%\"*}
			to=${inc%%/*}
			case " $ok " in
			*" $to "*) ;;
			*) echo "FAIL: $f:${hit%%:*}: $room/ may not include $inc"
			   echo x >>"$bad" ;;
			esac
		done
	done
done

# the API side of daemon/ sees the daemon only through its environment
for f in daemon/api.[ch] daemon/api_env.h daemon/http.[ch] daemon/guard.[ch] \
    daemon/routes.[ch] daemon/jobs.[ch] daemon/cache.[ch] \
    daemon/snapshot.[ch] daemon/static.[ch] daemon/rawhdr.[ch]; do
	[ -f "$f" ] || continue
	if grep -n '#include "daemon/\(daemon\|server\)\.h"' "$f"; then
		echo "FAIL: $f includes the daemon or the server"
		echo x >>"$bad"
	fi
done
# the server hands HTTP to the API and knows nothing of the daemon
if grep -n '#include "daemon/daemon\.h"' daemon/server.[ch]; then
	echo "FAIL: the server includes the daemon"
	echo x >>"$bad"
fi

# the events socket's protocol knows no WebSocket library: the server is
# its transport (docs/architecture.md)
if grep -n '#include [<"]\(libwebsockets\|daemon/server\|daemon/daemon\|daemon/api\)' \
    daemon/events.[ch]; then
	echo "FAIL: daemon/events includes libwebsockets, the server, the daemon or the API"
	echo x >>"$bad"
fi

# no include circle inside a room.  A module is name.c with name.h, and
# an arrow runs from it to each header of its room it includes but its own
# ("room/x.h", or a bare "x.h", which the compiler finds beside the file);
# two modules that reach each other that way (api and routes, fold and
# ckpt in daemon/; append and bench, ledger and ledger_impl, sink and
# sink_impl did) are a lower one calling back up, which is handed what it
# needs or finds it in a small header of its own instead
# (docs/architecture.md).  Any circle fails it; one is printed for each
# include that closes one, with the include lines along it.
for room in base ledger project watchers notifier sink image browser daemon cli; do
	for f in "$room"/*.c "$room"/*.h; do
		[ -f "$f" ] || continue
		m=${f#"$room"/}
		m=${m%.*}
		grep -n '^#include "\('"$room"'/\)\{0,1\}[a-z0-9_]*\.h"' "$f" |
		while IFS= read -r hit; do
			to=${hit#*\"}
			to=${to#"$room"/}
			to=${to%%.h\"*}
			[ "$to" = "$m" ] || echo "$room/$m $room/$to $f:${hit%%:*}"
		done
	done
done | awk '
	!(($1, $2) in at) { at[$1, $2] = $3; out[$1] = out[$1] " " $2 }
	function visit(u,	n, i, vs, v, k, path, where) {
		state[u] = 1
		stack[++depth] = u
		n = split(out[u], vs, " ")
		for (i = 1; i <= n; i++) {
			v = vs[i]
			if (state[v] == 1) {	# back to a module on the path
				for (k = depth; stack[k] != v; k--)
					;
				path = v
				where = ""
				for (; k < depth; k++) {
					path = path " -> " stack[k + 1]
					where = where " " at[stack[k], stack[k + 1]]
				}
				print "FAIL: include circle: " path " -> " v \
				    " (" substr(where, 2) " " at[u, v] ")"
			} else if (state[v] == 0)
				visit(v)
		}
		depth--
		state[u] = 2
	}
	END { for (u in out) if (state[u] == 0) visit(u) }
' >"$bad.circles"
if [ -s "$bad.circles" ]; then
	cat "$bad.circles"
	sed 's/.*/x/' "$bad.circles" >>"$bad"
fi
rm -f "$bad.circles"

if [ -s "$bad" ]; then
	n=$(wc -l <"$bad")
	echo "$n include(s) out of their room"
	exit 1
fi
echo "ok: every include stays in its room"
