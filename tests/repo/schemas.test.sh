#!/bin/sh
# schemas — every JSON shape against its schema in schemas/:
#   1. the expected outputs in tests/fixtures (issues, history, issue-<id>);
#   2. every record line of the fixtures (record.json dispatches on type),
#      except the cases that are off the writer's contract on purpose;
#   3. schemas/footprint-vectors.json: the vectors agree with the Python
#      derivation, valid stamps validate, malformed ones do not;
#   3b. schemas/events-vectors.json: the events socket's good messages
#      validate against schemas/events.json, its bad ones do not;
#   4. the CLI's real output on fixtures and on a generated ledger:
#      issues, issues --fp, history, fix --json, fix propose --json.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
cli=$(cd "${SLOPTIMIZE_BUILD:-build}" && pwd)/sloptimize
gen="$top/tests/genledger.py"
fx=tests/fixtures
now=2026-10-01T00:00:00.000Z
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0 failed=""

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); failed="$failed $1"; echo "FAIL $1"; sed 's/^/     /' "$tmp/err" | head -n 30; }

# valid SCHEMA FILE LABEL [--jsonl]
valid() {
	if node tests/validate.mjs ${4:-} "schemas/$1" "$2" >"$tmp/err" 2>&1; then ok "$3"; else bad "$3"; fi
}

# 1. expected outputs
for f in "$fx"/*.issues.json; do valid issues.json "$f" "${f##*/}"; done
for f in "$fx"/*.history.json; do valid history.json "$f" "${f##*/}"; done
for f in "$fx"/*.issue-*.json; do [ ! -f "$f" ] || valid issue.json "$f" "${f##*/}"; done

# 2. fixture records (these cases break the writer's contract on purpose)
off_contract=" malformed strings-as-numbers no-at out-of-range "
for f in "$fx"/*.jsonl; do
	name=${f##*/}; base=${name%.jsonl}; base=${base%.fixes}
	case "$off_contract" in *" $base "*) continue ;; esac
	python3 tests/ledger/indep_fold.py objects "$f" >"$tmp/records.jsonl"
	valid record.json "$tmp/records.jsonl" "records of $name" --jsonl
done

# 3. footprint vectors
if python3 tests/ledger/indep_fold.py vectors schemas/footprint-vectors.json >"$tmp/err" 2>&1; then
	ok "footprint vectors derive"; else bad "footprint vectors derive"; fi
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const c of d.records) console.log((c.malformed ? "bad " : "good ") + JSON.stringify(c.record));
' schemas/footprint-vectors.json >"$tmp/vectors"
sed -n 's/^good //p' "$tmp/vectors" >"$tmp/good.jsonl"
sed -n 's/^bad //p' "$tmp/vectors" >"$tmp/bad.jsonl"
valid record.json "$tmp/good.jsonl" "vector records validate" --jsonl
n=0 refused=0
while IFS= read -r line; do
	n=$((n + 1))
	printf '%s\n' "$line" >"$tmp/one.json"
	node tests/validate.mjs schemas/record.json "$tmp/one.json" >/dev/null 2>&1 || refused=$((refused + 1))
done <"$tmp/bad.jsonl"
if [ "$n" -gt 0 ] && [ "$refused" -eq "$n" ]; then ok "malformed vector stamps are refused ($n)"; else
	echo "$refused of $n malformed stamps refused" >"$tmp/err"; bad "malformed vector stamps are refused"; fi

# 3b. events socket vectors (the programs are tested against the same
# vectors: tests/cli/test_watch.c, tests/page-runtime/events.test.mjs)
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const c of d.good) console.log("good " + JSON.stringify(c.message));
for (const c of d.bad) console.log("bad " + JSON.stringify(c.text));
' schemas/events-vectors.json >"$tmp/evectors"
sed -n 's/^good //p' "$tmp/evectors" >"$tmp/egood.jsonl"
valid events.json "$tmp/egood.jsonl" "events vectors: good messages validate" --jsonl
n=0 refused=0
while IFS= read -r line; do
	n=$((n + 1))
	# the vector is the message's text, as a JSON string
	node -e 'process.stdout.write(JSON.parse(process.argv[1]))' "$line" >"$tmp/one.json"
	node tests/validate.mjs schemas/events.json "$tmp/one.json" >/dev/null 2>&1 || refused=$((refused + 1))
done <<EOF_BAD
$(sed -n 's/^bad //p' "$tmp/evectors")
EOF_BAD
if [ "$n" -gt 0 ] && [ "$refused" -eq "$n" ]; then ok "events vectors: bad messages are refused ($n)"; else
	echo "$refused of $n bad messages refused" >"$tmp/err"; bad "events vectors: bad messages are refused"; fi

# 4. the CLI's own output
if [ ! -x "$cli" ]; then
	echo "schemas: no CLI at $cli (make all)" >"$tmp/err"
	bad "CLI present"
else
	# cli LABEL SCHEMA ARGS…: run, validate stdout against SCHEMA
	cli() {
		label=$1 schema=$2
		shift 2
		rc=0
		"$cli" "$@" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
		if [ "$rc" -gt 1 ] || [ ! -s "$tmp/out.json" ]; then
			echo "sloptimize $* exited $rc" >>"$tmp/err"; bad "$label"; return 0
		fi
		valid "$schema" "$tmp/out.json" "$label"
	}
	top_id() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["issues"]; print(r[0]["id"] if r else "")' "$1" 2>/dev/null; }
	for name in basic fix-status malformed unknown no-at empty; do
		dir="$tmp/$name"
		mkdir -p "$dir/.sloptimize"
		cp "$fx/$name.jsonl" "$dir/.sloptimize/perf.jsonl"
		[ ! -f "$fx/$name.fixes.jsonl" ] || cp "$fx/$name.fixes.jsonl" "$dir/.sloptimize/fixes.jsonl"
		cli "$name: issues" issues.json issues --json --now "$now" --project "$dir"
		id=$(top_id "$tmp/out.json" 2>/dev/null || true)
		[ -z "$id" ] || cli "$name: issues --fp $id" issue.json issues --fp "$id" --json --now "$now" --project "$dir"
		cli "$name: history" history.json history --json --buckets 4 --now "$now" --project "$dir"
	done
	if [ -f "$gen" ]; then
		game="$tmp/game"
		python3 "$gen" "$game" --records 5000 --causes 120 >/dev/null
		# the generator writes what a real writer must: every line a record
		if node tests/validate.mjs --jsonl schemas/record.json \
		    "$game/.sloptimize/perf.jsonl" >"$tmp/err" 2>&1 &&
		    node tests/validate.mjs --jsonl schemas/record.json \
		    "$game/.sloptimize/fixes.jsonl" >>"$tmp/err" 2>&1
		then ok "genledger: every generated line is a valid record"
		else bad "genledger: every generated line is a valid record"; fi
		cli "genledger: issues" issues.json issues --json --project "$game"
		id=$(top_id "$tmp/out.json" 2>/dev/null || true)
		[ -n "$id" ] || id=00000000
		cli "genledger: issues --include-automated" issues.json issues --json --include-automated --project "$game"
		cli "genledger: issues --fp $id" issue.json issues --fp "$id" --json --project "$game"
		cli "genledger: history" history.json history --json --project "$game"
		cli "genledger: history --buckets 7" history.json history --json --buckets 7 --project "$game"
		cli "genledger: fix --json" fix-output.json fix --json --project "$game" \
		    --title "instance the enemy meshes" --footprints "$id" --issue "stutter on spawn" \
		    --solution "InstancedMesh" --commit abc1234 --files src/world.js
		cli "genledger: fix propose --json" fix-output.json fix propose --json --project "$game" \
		    --title "warm shaders at load" --footprints "$id"
		pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/out.json" 2>/dev/null || true)
		cli "genledger: fix merge --json" fix-output.json fix merge "$pid" --json --project "$game"
		cli "genledger: fix propose --json (2)" fix-output.json fix propose --json --project "$game" \
		    --title "halve the particles" --footprints "$id"
		pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/out.json" 2>/dev/null || true)
		cli "genledger: fix reject --json" fix-output.json fix reject "$pid" --json --project "$game"
		cli "genledger: issues after fixes" issues.json issues --json --project "$game"
		cli "genledger: issues --fp $id after fixes" issue.json issues --fp "$id" --json --project "$game"
		if node tests/validate.mjs --jsonl schemas/record.json "$game/.sloptimize/fixes.jsonl" \
		    >"$tmp/err" 2>&1 && tail -n 5 "$game/.sloptimize/fixes.jsonl" | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
assert all(r.get("id") and r.get("type") == "fix" for r in recs), recs
' 2>>"$tmp/err"; then ok "fixes.jsonl records the CLI appended"
		else bad "fixes.jsonl records the CLI appended"; fi
	else
		echo "no $gen" >"$tmp/err"; bad "genledger present"
	fi
fi

# 5. the bench (docs/bench.md): the fixture benches, and what bench
#    --compare prints and appends for them (no browser: files only)
for f in tests/fixtures/bench/*.json; do valid bench.json "$f" "bench ${f##*/}"; done
if [ -x "$cli" ]; then
	bp="$tmp/benchproject"
	mkdir -p "$bp/.sloptimize/bench"
	cp tests/fixtures/bench/crates-before.json "$bp/.sloptimize/bench/crates-20261201T100000.000Z.json"
	cp tests/fixtures/bench/crates-after.json "$bp/.sloptimize/bench/crates-20261201T110000.000Z.json"
	printf '{"perf.budget.draw_calls": 300, "perf.budget.frame_ms_p95": {"max": 16.7, "level": "warn"}}\n' \
	    >"$bp/sloptimize.budgets.json"
	rc=0
	"$cli" bench --compare last --json --project "$bp" --change-ref git:abc1234 \
	    --change "instance the crates" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 0 ]; then valid bench-output.json "$tmp/out.json" "bench --compare last --json (improved)"
	else echo "exit $rc, not 0 (improved)" >>"$tmp/err"; bad "bench --compare last --json (improved)"; fi
	if node tests/validate.mjs --jsonl schemas/bench-history-line.json "$bp/.sloptimize/bench-history.jsonl" \
	    >"$tmp/err" 2>&1; then ok "bench-history.jsonl lines"; else bad "bench-history.jsonl lines"; fi
	rc=0
	"$cli" bench --compare crates-20261201T100000.000Z crates-20261201T100000.000Z --json --project "$bp" \
	    >"$tmp/out.json" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 5 ]; then valid bench-output.json "$tmp/out.json" "bench --compare A A --json (exit 5)"
	else echo "exit $rc, not 5" >>"$tmp/err"; bad "bench --compare A A --json (exit 5)"; fi
	rc=0
	"$cli" bench --compare nothing-here other --json --project "$bp" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 4 ]; then valid bench-output.json "$tmp/out.json" "bench --compare (no such bench) --json (exit 4)"
	else echo "exit $rc, not 4" >>"$tmp/err"; bad "bench --compare (no such bench) --json (exit 4)"; fi
fi

[ -z "$failed" ] || echo "failed:$failed"
echo "schemas: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
