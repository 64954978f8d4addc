#!/bin/sh
# fixtures — run every tests/fixtures case through the CLI and compare the
# output with the expected JSON, worked out by hand (tests/fixtures/README.md).
# Everything is compared except the top-level generatedAt and source.
#
#   sh tests/ledger/fixtures.test.sh [NAME…]      (default: every case)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cli=$(cd "${SLOPTIMIZE_BUILD:-build}" && pwd)/sloptimize
[ -x "$cli" ] || { echo "fixtures: no CLI at $cli (make all)" >&2; exit 1; }
fx=tests/fixtures
now=2026-10-01T00:00:00.000Z
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

pass=0 fail=0 failed=""

# run NAME LABEL EXPECTED ARGS…: run the CLI, compare, report
check() {
	name=$1 label=$2 expected=$3
	shift 3
	out="$tmp/$name.$label.out"
	rc=0
	"$cli" "$@" >"$out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -gt 1 ]; then
		fail=$((fail + 1)); failed="$failed $name:$label"
		echo "FAIL $name $label: sloptimize $* exited $rc"
		sed 's/^/     /' "$tmp/err" | head -n 10
		return 0
	fi
	if python3 tests/ledger/indep_fold.py jsondiff "$expected" "$out" \
	    --ignore generatedAt,source >"$tmp/diff" 2>&1; then
		pass=$((pass + 1))
		echo "ok   $name $label"
	else
		fail=$((fail + 1)); failed="$failed $name:$label"
		echo "FAIL $name $label (expected $expected; '<path>: expected X, got Y')"
		sed 's/^/     /' "$tmp/diff"
	fi
}

names="$*"
if [ -z "$names" ]; then
	for f in "$fx"/*.jsonl; do
		base=${f##*/}; base=${base%.jsonl}
		case "$base" in *.fixes) ;; *) names="$names $base" ;; esac
	done
fi
for name in $names; do
	[ -f "$fx/$name.jsonl" ] || { echo "fixtures: no case $name" >&2; exit 2; }
	dir="$tmp/$name"
	mkdir -p "$dir/.sloptimize"
	cp "$fx/$name.jsonl" "$dir/.sloptimize/perf.jsonl"
	[ ! -f "$fx/$name.fixes.jsonl" ] || cp "$fx/$name.fixes.jsonl" "$dir/.sloptimize/fixes.jsonl"
	[ ! -f "$fx/$name.issues.json" ] || check "$name" issues "$fx/$name.issues.json" \
	    issues --json --now "$now" --project "$dir"
	[ ! -f "$fx/$name.history.json" ] || check "$name" history "$fx/$name.history.json" \
	    history --json --buckets 4 --now "$now" --project "$dir"
	# the windows and verdicts once more, from tests/ledger/indep_fold.py's own
	# fold: the expected files' new numbers are checked, not copied
	if [ -f "$fx/$name.history.json" ]; then
		if python3 tests/ledger/indep_fold.py windows "$dir" "$fx/$name.history.json" >"$tmp/diff" 2>&1 &&
		    { [ ! -f "$fx/$name.issues.json" ] || python3 tests/ledger/indep_fold.py judge "$fx/$name.issues.json" >>"$tmp/diff" 2>&1; }; then
			pass=$((pass + 1))
			echo "ok   $name windows and verdicts (independent fold)"
		else
			fail=$((fail + 1)); failed="$failed $name:indep"
			echo "FAIL $name windows and verdicts (independent fold)"
			sed 's/^/     /' "$tmp/diff"
		fi
	fi
	for f in "$fx/$name".issue-*.json; do
		[ -f "$f" ] || continue
		id=${f##*.issue-}; id=${id%.json}
		check "$name" "issue-$id" "$f" issues --fp "$id" --json --now "$now" --project "$dir"
	done
done

[ -z "$failed" ] || echo "failed:$failed"
echo "fixtures: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
