#!/bin/sh
# The test suite: every cmocka unit, every shell test, every node test,
# room by room (tests/ROOM/).
# Each is one unit that passes or fails; the last line is the tally, and the
# exit status is non-zero if anything failed.
#
#   sh tests/run.sh BUILD_DIR [NAME_FILTER]
#
# NAME_FILTER picks the tests whose room/name holds it: `ledger/`, `jscan`.
#
# LOAD=N holds the machine busy while the suite runs: N processes that
# spin on the CPU (what CI's shared machine and a developer's busy laptop
# look like; `make test-loaded`).  Each stops by itself when this script
# ends, however it ends, and after LOAD_MAX_S seconds at most (default 3 h).
# Nothing is ever rerun: a test that fails under load is a failure.
set -u
BUILD=${1:-build}
FILTER=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export SLOPTIMIZE_BUILD="$top/$BUILD"
export PATH="$top/$BUILD:$PATH"
logdir="$top/$BUILD/test-logs"
mkdir -p "$logdir"
pass=0 fail=0 failed=""

LOAD=${LOAD:-0}
case "$LOAD" in ''|*[!0-9]*) echo "run.sh: LOAD must be a number, not '$LOAD'" >&2; exit 2;; esac
if [ "$LOAD" -gt 0 ]; then
	# a spinner checks once per ~10 ms of work that this shell is alive,
	# so a kill -9 of the suite does not leave the cores busy
	i=0
	while [ "$i" -lt "$LOAD" ]; do
		python3 -c '
import os, sys, time
parent, end = int(sys.argv[1]), time.monotonic() + int(sys.argv[2])
while time.monotonic() < end:
    x = 0
    for k in range(20000): x += k * k
    try: os.kill(parent, 0)
    except OSError: break
' "$$" "${LOAD_MAX_S:-10800}" &
		i=$((i + 1))
	done
	trap 'kill $(jobs -p) 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	echo "load: $LOAD busy processes hold the cores while the suite runs"
fi

run_one() {	# room/name, command...
	name=$1; shift
	case "$name" in *"$FILTER"*) ;; *) return ;; esac
	mkdir -p "$logdir/${name%/*}"
	start=$(date +%s)
	if "$@" >"$logdir/$name.log" 2>&1; then
		pass=$((pass + 1))
		echo "ok   $name ($(( $(date +%s) - start ))s)"
	else
		fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL $name — log follows"
		# a long log's tail is the tally, not the failure: what failed
		# (node's "not ok" with its error, cmocka's [  FAILED  ]) first
		grep -n -A 25 -e '^ *not ok' -e 'FAILED \]' -e '^FAIL' \
		    "$logdir/$name.log" | head -n 80 | sed 's/^/     /'
		echo "     … the log's end ($logdir/$name.log):"
		tail -n 15 "$logdir/$name.log" | sed 's/^/     /'
	fi
}

room_of() {	# tests/ROOM/file -> ROOM
	r=${1#tests/}
	echo "${r%%/*}"
}

# Each room's tests sit in tests/ROOM/ (docs/architecture.md, "Tests"):
# its cmocka units (built into $BUILD/tests/), its shell tests, its node
# tests.  The units run first (seconds), the integration suites after.
for src in tests/*/test_*.c; do
	[ -f "$src" ] || continue
	t="$BUILD/tests/$(basename "$src" .c)"
	if [ ! -x "$t" ]; then	# a unit with no program was not built: a failure
		run_one "$(room_of "$src")/$(basename "$t")" sh -c "echo 'not built: $t'; exit 1"
		continue
	fi
	run_one "$(room_of "$src")/$(basename "$t")" "$t"
done
for t in tests/*/*.test.sh; do
	[ -f "$t" ] || continue
	run_one "$(room_of "$t")/$(basename "$t" .test.sh)" sh "$t"
done
for t in tests/*/*.test.mjs; do
	[ -f "$t" ] || continue
	run_one "$(room_of "$t")/$(basename "$t" .test.mjs)" node --test "$t"
done

[ -z "$failed" ] || echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
