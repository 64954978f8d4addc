#!/bin/sh
# bench — the `make bench` machinery works: the gatherer (tests/bench/
# table.py) runs two cheap benchmarks in quick mode (BENCH_QUICK=1: the
# fold of a 20 MB ledger, restart to ready on 5 and 20 MB) and its table
# has their rows, each with a number and a verdict; the Markdown table
# has the same rows; a saved log with a BENCH line whose values hold
# spaces gives the right cells and ratio.  Nothing here asserts a speed
# (figures are never pass/fail): only that every row was measured.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
build=$(cd "${SLOPTIMIZE_BUILD:-build}" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

BENCH_QUICK=1 python3 tests/bench/table.py "$build" --only fold,restart \
    --logs "$tmp/logs" --markdown "$tmp/table.md" >"$tmp/out" 2>&1 ||
    { cat "$tmp/out"; tail -n 20 "$tmp"/logs/*.log; fail "table.py exited $?"; }
cat "$tmp/out"

# row MEASURE UNIT: the row is in the table with a number in `ours` and
# yes or no under `met`
row() {
	line=$(grep -F -- "$1 " "$tmp/out" | head -n 1)
	[ -n "$line" ] || fail "no row '$1'"
	printf '%s\n' "$line" | grep -Eq -- "  [0-9][0-9,]*(\.[0-9]+)? $2  .*  (yes|no)\$" ||
	    fail "row '$1' has no number in $2 and verdict: $line"
}
row "issues --json, 20 MB: throughput" "MB/s"
row "issues --json, 20 MB: peak RSS" "MB"
row "history --json, 20 MB: throughput" "MB/s"
row "history --json, 20 MB: peak RSS" "MB"
row "restart to ready, 5 MB, cursor present" "ms"
row "restart to ready, 20 MB, cursor present" "ms"
row "daemon RSS after the start-up fold, 20 MB" "MB"
row "daemon RSS once its first checkpoint is written, 20 MB" "MB"
grep -q "^  fold      done, [0-9]* rows" "$tmp/out" || fail "fold not reported done"
grep -q "^  restart   done, 5 rows" "$tmp/out" || fail "restart not reported done with 5 rows"
n=$(grep -c '^BENCH ' "$tmp/logs/fold.log" "$tmp/logs/restart.log" | awk -F: '{ s += $2 } END { print s }')
md=$(grep -c '^| [a-z]' "$tmp/table.md")
[ "$md" -eq $((n + 1)) ] || fail "the Markdown table has $md lines for $n BENCH lines (and its head)"
grep -q "^$n measures: " "$tmp/out" || fail "the tally does not count $n measures"

# the parser: values with spaces, the ratio, a row without an anchor
cat >"$tmp/saved.log" <<'LOG'
noise BENCH measure=not at the start ours=1
BENCH measure=a b, 1 GB: x anchor=40 ours=100 unit=MB/s target=>= 50 % of y met=yes vs=jq, first 100 MB
BENCH measure=no anchor anchor=- ours=3.5 unit=ms target=- met=-
LOG
python3 tests/bench/table.py --parse "$tmp/saved.log" >"$tmp/parsed" || fail "--parse"
cat "$tmp/parsed"
grep -q '^a b, 1 GB: x  *40 MB/s (jq, first 100 MB)  *100 MB/s  *2.50×  *>= 50 % of y  *yes$' "$tmp/parsed" ||
    fail "the first saved row's cells"
grep -q '^no anchor  *-  *3.5 ms  *-  *-  *-$' "$tmp/parsed" || fail "the row without an anchor"
grep -q '^2 measures: 1 met, 0 not met, 1 without a target$' "$tmp/parsed" || fail "the tally"
echo "ok"
