#!/bin/sh
# make run end to end (issue 8 item 5, issue 9 item 4): with 7567 taken,
# tests/demo.sh picks a free port; with no display it plays the demo's
# scripted run in headless chromium and the agent's wake lines appear; it
# leaves nothing running behind it.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${SLOPTIMIZE_BUILD:-$top/build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/demo-test.XXXXXX")
holder=""
# the holder is gone already when someone else held 7567 first: a failed
# kill must not become the script's status (dash keeps it under set -e)
trap 'if [ -n "$holder" ]; then kill "$holder" 2>/dev/null || :; fi; rm -rf "$tmp"' EXIT

# take 7567 (if someone else already has it, it is taken all the same)
node -e "require('net').createServer().on('error', () => {}).listen(7567, '127.0.0.1')" &
holder=$!
i=0
until node -e "require('net').connect(7567, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))"; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "could not take 7567" >&2; exit 1; }; sleep 0.1
done

unset DISPLAY WAYLAND_DISPLAY
SLOPTIMIZE_DEMO_ONCE=1 SLOPTIMIZE_BUILD="$B" timeout 180 sh "$top/tests/demo.sh" "$tmp/demo" >"$tmp/out" 2>&1 || {
	echo "demo.sh failed:" >&2; cat "$tmp/out" >&2; exit 1; }
cat "$tmp/out"

fail() { echo "FAIL: $*" >&2; exit 1; }
addr=$(sed -n 's/.*(http:\/\/\([0-9.:]*\), log.*/\1/p' "$tmp/out")
[ -n "$addr" ] || fail "no daemon address printed"
[ "${addr##*:}" != 7567 ] || fail "the daemon says 7567, which was taken"
grep -q '^the demo game: *http://127.0.0.1:[0-9]*/' "$tmp/out" || fail "no URL to open"
grep -q 'playing the scripted run in headless chromium' "$tmp/out" || fail "no headless run without a display"
grep -Eq '^sloptimize (hitch|usermark|jitter) ' "$tmp/out" || fail "no wake line"
# nothing left running: every process demo.sh started is gone
for pid in $(cat "$tmp/demo/pids"); do
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 50 ] || fail "process $pid of demo.sh is still running"; sleep 0.1
	done
done
[ -n "$(cat "$tmp/demo/pids")" ] || fail "demo.sh recorded no processes"
echo "demo: ok"
