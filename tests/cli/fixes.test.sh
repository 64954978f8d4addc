#!/bin/sh
# fixes — the README's fix example, step by step, judged honestly
# (issue 10 item 4): `sloptimize fix --footprints ID --title … --commit …`
# right after changing the code ends `pending`; a clean build after it
# makes it `fixed`, measured on that build; the cause recurring in that
# build makes it `regressed`.  And a footprint the ledger never saw is
# refused with the nearest known ids, unless --force.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
S=${SLOPTIMIZE_BUILD:-$top/build}/sloptimize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {	# rc, command...
	want=$1; shift
	set +e; "$@" >"$tmp/out" 2>"$tmp/err"; got=$?; set -e
	[ "$got" = "$want" ] || { cat "$tmp/err" >&2; fail "'$*' exited $got, want $want"; }
}
# field FILE EXPR: a Python expression on the JSON document `d`
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
iso() { python3 -c 'import datetime,sys; print((datetime.datetime.now(datetime.timezone.utc)+datetime.timedelta(seconds=float(sys.argv[1]))).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]+"Z")' "$1"; }

# A project whose game ran builds before the change, the last an hour ago.
P="$tmp/ship"
python3 "$top/tests/genledger.py" "$P" --records 3000 --causes 40 --builds 4 \
    --fixes 0 --start "$(iso -7200)" >/dev/null
perf="$P/.sloptimize/perf.jsonl"
expect_rc 0 "$S" issues --json --project "$P"
cp "$tmp/out" "$tmp/issues.json"
ID=$(field "$tmp/issues.json" 'next(r["id"] for r in d["issues"] if r["type"] == "hitch")')
last_build=$(field "$tmp/issues.json" 'sorted(d["issues"], key=lambda r: r["last"])[-1]["builds"][-1]')
[ "$(field "$tmp/issues.json" "next(r['status'] for r in d['issues'] if r['id'] == '$ID')")" = open ] ||
    fail "$ID is not open before any fix"

# The README's step: right after changing the code.
expect_rc 0 "$S" fix --footprints "$ID" --title "warm shaders at load" --commit 1a2b3c4 --project "$P"
grep -q "pending until a build after it has run" "$tmp/out" || fail "fix says: $(cat "$tmp/out")"
expect_rc 0 "$S" issues --fp "$ID" --json --project "$P"
cp "$tmp/out" "$tmp/one.json"
[ "$(field "$tmp/one.json" 'd["issue"]["status"]')" = pending ] ||
    fail "right after the fix: $(field "$tmp/one.json" 'd["issue"]["status"]'), want pending"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["pending"]')" = True ] || fail "the fix is not marked pending"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["after"]')" = None ] ||
    fail "a pending fix carries an after window measured before it"
before_build=$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["before"]["build"]')
hb_last=$(python3 -c 'import json,sys
b=None
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")=="heartbeat" and not r.get("automated"): b=r.get("build")
print(b)' "$perf")
[ "$before_build" = "$hb_last" ] || fail "before is $before_build, want the build that ran last ($hb_last)"
expect_rc 0 "$S" issues --fp "$ID" --project "$P"
grep -q "waiting for a build after this fix" "$tmp/out" || fail "issues --fp does not say the fix waits"
expect_rc 0 "$S" report --project "$P"		# pending is not a regression

# The old build is still running: the cause again, in the old build,
# after the fix.  Stale: still pending, never regressed.
occ=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("footprint",{}).get("id")==sys.argv[2] and r.get("footprint",{}).get("v")==2: o=l
print(o.strip())' "$perf" "$ID")
again() {	# build at: the occurrence again
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["build"]=sys.argv[2]; r["at"]=sys.argv[3]; print(json.dumps(r))' "$occ" "$1" "$2"
}
again "$hb_last" "$(iso 1)" >>"$perf"
expect_rc 0 "$S" issues --fp "$ID" --json --project "$P"
[ "$(field "$tmp/out" 'd["issue"]["status"]')" = pending ] || fail "a stale occurrence in the old build moved the status"

# A clean build after the fix runs: fixed, its after measured by the fold.
for s in 2 4 6; do
	printf '{"type":"heartbeat","at":"%s","phase":"play","build":"after-fix","frame":{"medianMs":7.0,"p95Ms":%s,"insideRenderMs":3.0,"fps":60},"render":{"calls":500,"triangles":80000},"memory":{"programs":12}}\n' \
	    "$(iso $s)" "1$s.0" >>"$perf"
done
expect_rc 0 "$S" issues --fp "$ID" --json --project "$P"
cp "$tmp/out" "$tmp/one.json"
[ "$(field "$tmp/one.json" 'd["issue"]["status"]')" = fixed ] ||
    fail "after a clean build: $(field "$tmp/one.json" 'd["issue"]["status"]'), want fixed"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["fixBuild"]')" = after-fix ] || fail "not judged on the new build"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["afterSource"]')" = fold ] || fail "after not measured by the fold"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["after"]["build"]')" = after-fix ] || fail "after window is not the new build's"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["after"]["p95Ms"]')" = 14 ] || fail "after p95 is not the median of 12, 14, 16"
[ "$(field "$tmp/one.json" 'd["issue"]["fixes"][0]["after"]["heartbeats"]')" = 3 ] || fail "after window heartbeats"
expect_rc 0 "$S" issues --status fixed --json --project "$P"
grep -q "\"$ID\"" "$tmp/out" || fail "--status fixed does not list $ID"

# The cause recurs in the new build: regressed, report exits 1.
again after-fix "$(iso 8)" >>"$perf"
expect_rc 0 "$S" issues --fp "$ID" --json --project "$P"
[ "$(field "$tmp/out" 'd["issue"]["status"]')" = regressed ] ||
    fail "the cause in the new build: $(field "$tmp/out" 'd["issue"]["status"]'), want regressed"
expect_rc 1 "$S" report --project "$P"

# --after given: judged on that window as written (no pending).
expect_rc 0 "$S" fix --footprints "$ID" --title "judged on a window given" --after after-fix --json --project "$P"
[ "$(field "$tmp/out" 'd["after"]["build"]')" = after-fix ] || fail "--after not written"

# A footprint nothing ever carried: refused, nearest ids named, nothing written.
n=$(wc -l <"$P/.sloptimize/fixes.jsonl")
typo=$(printf '%s' "$ID" | sed 's/^./0/; s/^00/01/')
[ "$typo" != "$ID" ] || typo=$(printf '%s' "$ID" | sed 's/^./1/')
expect_rc 2 "$S" fix --footprints "$typo" --title "a typo" --project "$P"
grep -q "footprint $typo is in no record of the ledger; nearest known: $ID" "$tmp/err" ||
    fail "unknown footprint: $(cat "$tmp/err")"
expect_rc 2 "$S" fix propose --footprints "$ID,deadbeef" --title "one typo of two" --project "$P"
grep -q "deadbeef" "$tmp/err" || fail "the unknown one of two is not named"
[ "$(wc -l <"$P/.sloptimize/fixes.jsonl")" = "$n" ] || fail "a refused fix was written"
expect_rc 0 "$S" fix --footprints deadbeef --title "on purpose" --force --json --project "$P"
[ "$(field "$tmp/out" '"force" in d')" = False ] || fail "force was written into the record"
[ "$(wc -l <"$P/.sloptimize/fixes.jsonl")" = $((n + 1)) ] || fail "--force did not write"
# no ledger at all: every footprint is unknown
mkdir -p "$tmp/empty"
expect_rc 2 "$S" fix --footprints "$ID" --title t --project "$tmp/empty"
grep -q "there is no ledger yet" "$tmp/err" || fail "no ledger: $(cat "$tmp/err")"
echo "fixes: the README's fix went pending, fixed, regressed; unknown footprints refused"
