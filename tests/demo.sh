#!/bin/sh
# make run: the daemon on a scratch demo project, the demo game (demo/,
# three.js) on Vite's dev server with the sloptimize plugin proxying to
# it, and `sloptimize watch` printing the wake lines an agent gets.
#
# With a display, open the printed URL and play: the buttons cause each
# stutter, Ctrl+F11 marks a moment, Ctrl+F12 opens the panel.  With none
# ($DISPLAY and $WAYLAND_DISPLAY unset) the demo's scripted run plays in
# headless chromium, so the wake lines appear within seconds anyway.
# Ctrl-C stops everything.  SLOPTIMIZE_DEMO_ONCE=1 stops after the
# scripted run (tests/repo/demo.test.sh).
#
#   sh tests/demo.sh DEMO_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
demo=${1:-build/demo}
B=${SLOPTIMIZE_BUILD:-$top/build}
rm -rf "$demo"
mkdir -p "$demo"
demo=$(cd "$demo" && pwd)
# the demo keeps its state beside it, away from real projects' state
export XDG_STATE_HOME="$demo/.state"

# 7567 if it is free, else any free port (the daemon records what it bound
# in daemon.json).  Asked of node, which `make deps` installs: this is sh,
# where bash's /dev/tcp does not exist.
listen=127.0.0.1:7567
if ! node -e "require('net').createServer().once('error', () => process.exit(1))
    .listen(7567, '127.0.0.1', function () { this.close(); })" 2>/dev/null; then
	listen=127.0.0.1:0
fi
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap 'cleanup; exit 0' INT TERM HUP PIPE
trap cleanup EXIT

"$B/sloptimized" --project "$demo" --listen "$listen" 2>"$demo/daemon.log" &
daemon=$!
pids="$daemon"

# wait until the daemon records where it listens (10 s at most)
i=0
until state=$(ls -d "$XDG_STATE_HOME"/sloptimize/*/ 2>/dev/null) &&
    [ -s "$state/daemon.json" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 $daemon 2>/dev/null; then
		echo "the daemon did not start:" >&2
		cat "$demo/daemon.log" >&2
		exit 1
	fi
	sleep 0.1
done
addr=$(sed -n 's/.*"listen":[^"]*"\([^"]*\)".*/\1/p' "$state/daemon.json")

# the game on Vite, proxying /api/sloptimize to the daemon
SLOPTIMIZE_DAEMON="http://$addr" SLOPTIMIZE_PROJECT="$demo" \
    node "$top/demo/node_modules/vite/bin/vite.js" "$top/demo" \
    --host 127.0.0.1 --port 5173 >"$demo/vite.log" 2>&1 &
pids="$pids $!"
i=0
# Vite colours its banner when it thinks a terminal or CI wants it (the
# codes fall between "Local" and its colon), so they go before matching.
until url=$(sed 's/\x1b\[[0-9;]*m//g' "$demo/vite.log" |
    sed -n 's/.*Local:[^h]*\(http:[^ ]*\).*/\1/p' | head -n 1) && [ -n "$url" ]; do
	i=$((i + 1))
	if [ $i -gt 300 ]; then
		echo "vite did not start:" >&2
		cat "$demo/vite.log" >&2
		exit 1
	fi
	sleep 0.1
done

echo "sloptimized is watching the demo project $demo (http://$addr, log: $demo/daemon.log)"
echo "the demo game:   $url"
echo "  buttons cause each stutter; Ctrl+F11 marks a moment; Ctrl+F12 opens the panel"
echo "the agent's wake lines follow:"
echo
"$B/sloptimize" watch --project "$demo" &
pids="$pids $!"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
	echo "(no display: playing the scripted run in headless chromium)"
	rc=0
	node "$top/tests/demo-drive.mjs" "${url%/}/?scripted=1" || rc=$?
	if [ $rc -eq 3 ]; then
		echo "(this daemon refused the recorder's records: replaying a recorded session instead)"
		"$B/sloptimize" replay "$top/tests/fixtures/sessions/demo.jsonl" \
		    --project "$demo" --speed 4 >/dev/null
	elif [ $rc -ne 0 ]; then
		echo "the scripted run failed: see above" >&2
	fi
	sleep 1
	echo
	"$B/sloptimize" report --project "$demo" || true
	echo
fi
echo "try: $B/sloptimize issues --project $demo"
echo "     $B/sloptimize bench --scene crates --launch --project $demo"
echo "$pids" >"$demo/pids"	# what cleanup stops (tests/repo/demo.test.sh checks)
if [ -n "${SLOPTIMIZE_DEMO_ONCE:-}" ]; then exit 0; fi
echo "Ctrl-C to stop."
wait $daemon
