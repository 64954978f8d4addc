#!/bin/sh
# layers — the rooms of docs/architecture.md and what each may include.
# Every `#include "room/…"` in a room's C files must name the room itself
# or one it may use; within daemon/, the API side (api, api_env, http, guard,
# routes, jobs, cache, snapshot, static, rawhdr) never includes the daemon or the
# server, so there is no include circle, and the events socket's protocol
# (daemon/events) includes no WebSocket library.  A violation is printed with its
# file and line.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
bad=$(mktemp "${TMPDIR:-/tmp}/layers.XXXXXX")
trap 'rm -f "$bad"' EXIT INT TERM

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

if [ -s "$bad" ]; then
	n=$(wc -l <"$bad")
	echo "$n include(s) out of their room"
	exit 1
fi
echo "ok: every include stays in its room"
