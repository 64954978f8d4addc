#!/bin/sh
# verdicts — where people look, a fix's verdict carries its evidence and
# the regime is said (issue 22 items 3, 4 and 5's `issues --fp`): the CLI
# prints was → now with each window's noise interval, a delta only past
# the noise, never a software renderer's timings side by side; every verb
# that shows timings says when they come from a software renderer; and
# `issues --fp` says per occurrence what tells it from the others.
# The ledger is tests/fixtures/judged-noise (its README row says what each
# fix is), and a copy of it whose last heartbeats are SwiftShader's.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
S=${SLOPTIMIZE_BUILD:-$top/build}/sloptimize
fx="$top/tests/fixtures"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {	# command...: exit 0 or 1 expected
	set +e; "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; set -e
	[ "$rc" -le 1 ] || { cat "$tmp/err" >&2; fail "'$*' exited $rc"; }
}
has() { grep -qF -- "$1" "$tmp/out" || { cat "$tmp/out" >&2; fail "no '$1' in: $2"; }; }
hasnt() { ! grep -qF -- "$1" "$tmp/out" || { cat "$tmp/out" >&2; fail "'$1' in: $2"; }; }
line() { grep -F -- "$1" "$tmp/out" || { cat "$tmp/out" >&2; fail "no line with '$1'"; }; }
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

P="$tmp/game"
mkdir -p "$P/.sloptimize"
cp "$fx/judged-noise.jsonl" "$P/.sloptimize/perf.jsonl"
cp "$fx/judged-noise.fixes.jsonl" "$P/.sloptimize/fixes.jsonl"

# the no-op fix (only the build label moved): fixed, no detectable change,
# no delta; each side with its interval
run "$S" issues --fp efd9b849 --project "$P"
has "(fixed)" "the footprint did not come back: DESIGN §7's status stays"
l=$(line "was 97.2ms [93.9")
case "$l" in *"no detectable change"*"inside the noise"*) ;; *) fail "no-op fix: $l" ;; esac
case "$l" in *"now 95.7ms [92.4"*) ;; *) fail "no-op fix, now without its interval: $l" ;; esac
case "$l" in *"−1.5"*|*"-1.5"*) fail "a delta inside the noise is shown: $l" ;; esac

# what tells the occurrences apart: the scripts the browser named
has "script animate (main.js) 120.5ms" "the first occurrence's script"
has "script animate (main.js) 131ms" "the second occurrence's script, its query string aside"
run "$S" issues --fp b0d750ab --project "$P"
has "upload 64.0 MiB" "the bytes uploaded"
has "textures +1" "the counters that moved"
l=$(line "improved")
case "$l" in *"−36.5ms (−38.1 %)"*) ;; *) fail "a real fix's delta: $l" ;; esac
run "$S" issues --fp 1538ad08 --project "$P"
has "src/level.js:42" "the site"
l=$(line "software renderer: timings are not evidence")
case "$l" in *" → "*) fail "software timings put side by side: $l" ;; esac
run "$S" issues --fp eee0037f --project "$P"
has "(regressed)" "D came back in b5"
has "not enough evidence yet — the after window has 10 heartbeats and 30 s of play; a verdict needs 30 and 60 s" "a short after window"
run "$S" issues --fp 52fa2186 --project "$P"
has "incomparable — the before window ran on hardware, the after window on unknown" "unlike regimes"

# history: the regime of every bucket and build; a software one flagged
run "$S" history --buckets 4 --project "$P"
l=$(grep '^b4 ' "$tmp/out") || fail "no b4 row"
case "$l" in *" sw! "*) ;; *) fail "b4 is SwiftShader's: $l" ;; esac
l=$(grep '^b3 ' "$tmp/out") || fail "no b3 row"
case "$l" in *" hw+ "*"p95 [59"*) ;; *) fail "b3 is timed on hardware, software left out: $l" ;; esac
has "sw!: timings from a software renderer" "the legend"

# report: the verdict of each row's latest fix
run "$S" report --project "$P"
has "fix f2000001 \"the build label only\": was 97.2ms" "report's verdict line"

# a ledger whose last heartbeats are SwiftShader's: every verb says so
Q="$tmp/swiftshader"
mkdir -p "$Q/.sloptimize"
python3 - "$fx/judged-noise.jsonl" "$Q/.sloptimize/perf.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as o:
    for line in f:
        r = json.loads(line)
        if r["type"] == "heartbeat":
            r["regime"] = "software"
        o.write(json.dumps(r) + "\n")
EOF
cp "$fx/judged-noise.fixes.jsonl" "$Q/.sloptimize/fixes.jsonl"
for verb in issues report; do
	run "$S" "$verb" --project "$Q"
	has "timings come from a software renderer (SwiftShader, llvmpipe): frame times are not to be trusted" "$verb"
done
run "$S" issues --json --project "$Q"
cp "$tmp/out" "$tmp/q.json"
[ "$(field "$tmp/q.json" 'd["regime"]["timings"]')" = software ] || fail "issues --json regime: $(field "$tmp/q.json" 'd.get("regime")')"
run "$S" issues --fp efd9b849 --project "$Q"
has "regime    timings come from a software renderer" "issues --fp"
has "software renderer: timings are not evidence — the after window ran on a software renderer" "the no-op fix, judged on SwiftShader"
run "$S" fix --footprints efd9b849 --title "try again" --project "$Q"
has "regime software" "fix names the before window's regime"
has "timings from a software renderer (SwiftShader, llvmpipe) are not evidence" "fix says it"
has "p95 " "fix shows the before window"

# and a hardware ledger says nothing of the sort
run "$S" issues --project "$P"
hasnt "software renderer" "a ledger whose last heartbeats are a GPU's or unknown"
echo "verdicts: ok"
