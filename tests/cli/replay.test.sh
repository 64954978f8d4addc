#!/bin/sh
# replay: `sloptimize replay` appends a recorded session re-stamped to now.
#
# Checks: every record arrives, one complete line each, with `at` now and
# every other field as recorded; bad lines are reported and counted, not
# written; a fragment left by a dead writer is ended first; --speed keeps
# the recorded gaps (a lower bound only: machines are noisy, so a timing
# test never asserts an upper one); exit codes 2 and 4.
#
#   sh tests/cli/replay.test.sh            (after make all; run.sh sets PATH)
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SLOPTIMIZE_BUILD:-$top/build}/sloptimize
[ -x "$bin" ] || bin=sloptimize
demo=$top/tests/fixtures/sessions/demo.jsonl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# compare.py LEDGER FIXTURE [SKIP_AT_CHECK]: the ledger's records are the
# fixture's, in order, with `at` re-stamped within the last minute.
cat >"$tmp/compare.py" <<'EOF'
import datetime, json, sys
got = open(sys.argv[1], encoding="utf-8").read()
want = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
assert got.endswith("\n"), "ledger does not end with a newline"
lines = got[:-1].split("\n")
assert len(lines) == len(want), "%d lines, want %d" % (len(lines), len(want))
now = datetime.datetime.now(datetime.timezone.utc)
for i, (line, w) in enumerate(zip(lines, want), 1):
    g = json.loads(line)
    at = datetime.datetime.strptime(g.pop("at"), "%Y-%m-%dT%H:%M:%S.%f%z")
    assert datetime.timedelta(0) <= now - at < datetime.timedelta(minutes=1), \
        "line %d: at %s is not within the last minute" % (i, at)
    w.pop("at", None)
    assert g == w, "line %d differs beyond at:\n got %r\nwant %r" % (i, g, w)
    assert list(g) == [k for k in w], "line %d: members reordered" % i
EOF

# 1. the demo, without waiting
p=$tmp/p1; mkdir "$p"
"$bin" replay "$demo" --speed 0 --project "$p" >"$tmp/out" 2>"$tmp/err" ||
	fail "replay exited $?: $(cat "$tmp/err")"
n=$(wc -l <"$demo" | tr -d ' ')
grep -q "^replayed $n records (0 skipped) into $p/.sloptimize/perf.jsonl$" \
	"$tmp/out" || fail "summary: $(cat "$tmp/out")"
[ "$(wc -l <"$p/.sloptimize/perf.jsonl" | tr -d ' ')" = "$n" ] ||
	fail "line count"
python3 "$tmp/compare.py" "$p/.sloptimize/perf.jsonl" "$demo" ||
	fail "records changed"
# and the fold reads every one of them
"$bin" doctor --project "$p" | grep -q "every line is a valid record" ||
	fail "the fold skipped a replayed line"

# 2. appending twice appends
"$bin" replay "$demo" --speed 0 --project "$p" >/dev/null 2>&1
[ "$(wc -l <"$p/.sloptimize/perf.jsonl" | tr -d ' ')" = "$((n * 2))" ] ||
	fail "second replay did not append"

# 3. bad lines: reported with their number, counted, not written; a
#    record without `at` gets one; blank lines are not records
p=$tmp/p3; mkdir "$p"
{
	head -n 2 "$demo"
	echo '{"type":"heartbeat","at":'		# line 3: cut short
	echo '[1,2,3]'					# line 4: not an object
	echo ''						# line 5: blank
	echo '{"type":"hitch","frameMs":120}'		# line 6: no at
	printf '%s\r\n' "$(sed -n 3p "$demo")"		# line 7: CRLF
	echo '{"type":"hitch","frameMs":1e999999}'	# line 8: beyond a double
} >"$tmp/bad.jsonl"
"$bin" replay "$tmp/bad.jsonl" --speed 0 --project "$p" >"$tmp/out" \
	2>"$tmp/err" || fail "replay of bad input exited $?"
grep -q "^replayed 4 records (3 skipped) into " "$tmp/out" ||
	fail "bad-input summary: $(cat "$tmp/out")"
grep -q "bad.jsonl:3: " "$tmp/err" || fail "line 3 not reported: $(cat "$tmp/err")"
grep -q "bad.jsonl:4: " "$tmp/err" || fail "line 4 not reported"
# cJSON would have written it as "frameMs":null (docs/json.md)
grep -q "bad.jsonl:8: number out of range" "$tmp/err" ||
	fail "line 8 not reported: $(cat "$tmp/err")"
[ "$(grep -c skipped "$tmp/err")" = 3 ] || fail "more than three reports"
{ head -n 2 "$demo"; echo '{"type":"hitch","frameMs":120}'; sed -n 3p "$demo"; } \
	>"$tmp/good.jsonl"
python3 "$tmp/compare.py" "$p/.sloptimize/perf.jsonl" "$tmp/good.jsonl" ||
	fail "bad-input ledger"

# 4. a fragment left by a writer that died mid-line is ended first
p=$tmp/p4; mkdir -p "$p/.sloptimize"
printf '{"type":"heartbeat","at":"2026-' >"$p/.sloptimize/perf.jsonl"
head -n 1 "$demo" >"$tmp/one.jsonl"
"$bin" replay "$tmp/one.jsonl" --speed 0 --project "$p" >/dev/null 2>&1 ||
	fail "replay after a fragment"
[ "$(wc -l <"$p/.sloptimize/perf.jsonl" | tr -d ' ')" = 2 ] ||
	fail "fragment not ended"
tail -n 1 "$p/.sloptimize/perf.jsonl" >"$tmp/last.jsonl"
python3 "$tmp/compare.py" "$tmp/last.jsonl" "$tmp/one.jsonl" ||
	fail "record after the fragment"

# 5. exit codes and --json
set +e
"$bin" replay "$tmp/no-such.jsonl" --project "$tmp" >/dev/null 2>&1; rc=$?
[ "$rc" = 4 ] || fail "missing FILE exited $rc, want 4"
"$bin" replay "$demo" --speed -1 --project "$tmp" >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || fail "--speed -1 exited $rc, want 2"
"$bin" replay --project "$tmp" >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || fail "no FILE exited $rc, want 2"
set -e
p=$tmp/p5; mkdir "$p"
"$bin" replay "$tmp/one.jsonl" --speed 0 --project "$p" --json >"$tmp/out"
python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["replayed"] == 1 and o["skipped"] == 0, o
assert o["perf"].endswith("/.sloptimize/perf.jsonl"), o
' "$tmp/out" || fail "--json summary: $(cat "$tmp/out")"

# 6. --speed 20 keeps the recorded gaps, scaled: at least half the
#    expected time (never an upper bound)
p=$tmp/p6; mkdir "$p"
python3 - "$bin" "$demo" "$p" <<'EOF' || fail "--speed 20 too fast"
import datetime, json, subprocess, sys, time
bin, demo, project = sys.argv[1:]
ats = [datetime.datetime.strptime(json.loads(l)["at"], "%Y-%m-%dT%H:%M:%S.%f%z")
       for l in open(demo) if l.strip()]
span = (max(ats) - min(ats)).total_seconds()
t0 = time.monotonic()
subprocess.run([bin, "replay", demo, "--speed", "20", "--project", project],
               check=True, stdout=subprocess.DEVNULL)
took = time.monotonic() - t0
expect = span / 20
print("span %.1fs, --speed 20 took %.2fs (expected %.2fs)" % (span, took, expect))
sys.exit(0 if took >= 0.5 * expect else 1)
EOF
echo "ok replay"
