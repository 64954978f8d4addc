#!/bin/sh
# indep — the C fold against an independent Python fold (tests/ledger/indep_fold.py)
# on a realistic generated ledger: every footprint id's count, first, last,
# builds (first-seen order) and worst, plus key, type, phase, verdict,
# situation, status, fixes, lastAgoMs, row order and counts; every
# build's window (regime, timings, play time, noise interval) and every
# fix's verdict.
#
#   sh tests/ledger/indep.test.sh [RECORDS [CAUSES]]     (default 20000 300)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cli=$(cd "${SLOPTIMIZE_BUILD:-build}" && pwd)/sloptimize
[ -x "$cli" ] || { echo "indep: no CLI at $cli (make all)" >&2; exit 1; }
gen="$top/tests/genledger.py"
now=2026-10-01T00:00:00.000Z
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

python3 "$gen" "$tmp/game" --records "${1:-20000}" --causes "${2:-300}"
rc=0
"$cli" issues --json --now "$now" --project "$tmp/game" >"$tmp/issues.json" || rc=$?
if [ "$rc" -gt 1 ]; then
	echo "indep: sloptimize issues exited $rc" >&2
	exit 1
fi
if python3 tests/ledger/indep_fold.py compare "$tmp/game" "$tmp/issues.json" --now "$now"; then
	echo "indep: C fold and Python fold agree on every footprint"
else
	echo "indep: the folds disagree (lines above: <id>.<field>: expected <python>, got <C>)"
	exit 1
fi

# the fix windows: regime, timings, play time and the p95's noise interval
# of every build, and every fix's verdict from the windows it carries
"$cli" history --json --now "$now" --project "$tmp/game" >"$tmp/history.json"
if python3 tests/ledger/indep_fold.py windows "$tmp/game" "$tmp/history.json" &&
    python3 tests/ledger/indep_fold.py judge "$tmp/issues.json"; then
	echo "indep: C fold and Python fold agree on every window and verdict"
else
	echo "indep: the windows or verdicts disagree (lines above)"
	exit 1
fi
