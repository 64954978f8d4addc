#!/bin/sh
# The CLI from the outside: exit codes, --help on every verb, a partial
# last line left alone, fix records appended whole by 20 concurrent writers.
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

# --help on every verb, exit 0, says usage
for v in issues report history fix hook-status doctor; do
	expect_rc 0 "$S" "$v" --help
	grep -q "usage: sloptimize $v" "$tmp/out" || fail "$v --help has no usage line"
done
expect_rc 2 "$S"
expect_rc 2 "$S" nope
expect_rc 2 "$S" issues --bogus
expect_rc 2 "$S" issues --status maybe
expect_rc 2 "$S" history --buckets 0
mkdir -p "$tmp/p0"
expect_rc 2 "$S" fix --project "$tmp/p0"		# no --title

# a project that is not there: every verb says so and exits 4 (the rule of
# docs/sloptimize.1 EXIT STATUS); doctor reports it among its checks
for v in issues report history hook-status watch "fix --title x" \
    "fix propose --title x" "replay $top/tests/fixtures/basic.jsonl" doctor; do
	# shellcheck disable=SC2086
	expect_rc 4 "$S" $v --project "$tmp/absent"
	case "$v" in
	doctor) grep -q "absent" "$tmp/out" || fail "doctor does not name the missing project" ;;
	*) grep -q "no project at $tmp/absent" "$tmp/err" ||
	    fail "'$v' does not say the project is missing" ;;
	esac
done
: >"$tmp/file"
expect_rc 4 "$S" issues --project "$tmp/file"
grep -q "not a directory" "$tmp/err" || fail "a file as --project is not named"

# nothing to read: exit 4 with a clear message; hook-status stays silent
mkdir -p "$tmp/p"
expect_rc 4 "$S" issues --project "$tmp/p"
grep -q "no ledger at" "$tmp/err" || fail "no explanation for a missing ledger"
expect_rc 0 "$S" hook-status --project "$tmp/p"
[ ! -s "$tmp/out" ] || fail "hook-status printed with nothing to say"

# an unterminated last line is not folded, and the CLI says how much it left
mkdir -p "$tmp/p/.sloptimize"
printf '%s\n%s' \
  '{"type":"hitch","at":"2026-09-01T09:00:00.000Z","frameMs":150}' \
  '{"type":"hitch","at":"2026-09-01T09:00:01.000Z","frameMs":1' \
  > "$tmp/p/.sloptimize/perf.jsonl"
expect_rc 0 "$S" issues --json --project "$tmp/p"
node -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1]));
  if (o.issues.length !== 1 || o.issues[0].count !== 1) throw "count " + JSON.stringify(o.issues);
  if (o.source.partialBytes !== 59) throw "partialBytes " + o.source.partialBytes;
' "$tmp/out"
grep -q "left 59 bytes" "$tmp/err" || fail "partial line not reported"
printf '50}\n' >> "$tmp/p/.sloptimize/perf.jsonl"
expect_rc 0 "$S" issues --json --project "$tmp/p"
node -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1]));
  if (o.issues[0].count !== 2) throw "not folded once complete";
' "$tmp/out"

# hook-status speaks when something happened lately, in at most 5 lines
expect_rc 0 "$S" hook-status --project "$tmp/p" --now 2026-09-01T09:10:00.000Z
[ "$(wc -l < "$tmp/out")" -ge 2 ] && [ "$(wc -l < "$tmp/out")" -le 5 ] ||
	fail "hook-status printed $(wc -l < "$tmp/out") lines"

# report exits 1 once an issue regressed after a fix
expect_rc 0 "$S" issues --json --project "$tmp/p"
id=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).issues[0].id)' "$tmp/out")
expect_rc 0 "$S" fix --project "$tmp/p" --title t --footprints "$id" --json
printf '%s\n%s\n' \
  '{"type":"heartbeat","at":"2030-01-01T00:00:00.000Z","build":"b9"}' \
  '{"type":"hitch","at":"2030-01-01T00:00:01.000Z","frameMs":150,"build":"b9"}' \
  >> "$tmp/p/.sloptimize/perf.jsonl"
expect_rc 1 "$S" report --project "$tmp/p"
grep -q "regressed" "$tmp/out" || fail "report does not say regressed"
expect_rc 2 "$S" fix --project "$tmp/p" --title t --footprints nothex

# report and hook-status rank by impact (docs/ranking.md), not by count:
# a 33 ms cause seen 40 times must not bury a 164 ms one seen once, nor
# the usermark just pressed; each line names the command that shows it
mkdir -p "$tmp/r/.sloptimize"
node -e '
  const at = (s) => new Date(Date.parse("2026-09-01T09:00:00.000Z") + s * 1000).toISOString();
  const out = [];
  for (let i = 0; i < 40; i++) out.push({ type: "hitch", at: at(i * 10), frameMs: 33, phase: "play",
    classification: { guess: "long-script", confidence: "low", evidence: "often" } });
  out.push({ type: "hitch", at: at(100), frameMs: 164, phase: "play",
    classification: { guess: "shader-compile", confidence: "high", evidence: "once" } });
  out.push({ type: "usermark", at: at(595), phase: "play", note: "it felt wrong",
    worst: [{ frameMs: 28, classification: { guess: "gc", confidence: "low", evidence: "mark" } }] });
  require("fs").writeFileSync(process.argv[1], out.map((r) => JSON.stringify(r)).join("\n") + "\n");
' "$tmp/r/.sloptimize/perf.jsonl"
expect_rc 0 "$S" report --json --project "$tmp/r" --now 2026-09-01T09:10:00.000Z
node -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const order = o.issues.map((r) => r.type + ":" + (r.worst && r.worst.value));
  if (order.join(" ") !== "usermark:28 hitch:164 hitch:33") throw "report order: " + order.join(" ");
  if (o.issues[0].impact.tier !== "fresh usermark" || o.issues[0].impact.rank !== 1) throw "impact: " + JSON.stringify(o.issues[0].impact);
' "$tmp/out"
expect_rc 0 "$S" report --project "$tmp/r" --now 2026-09-01T09:10:00.000Z
grep -q "^   sloptimize issues --fp [0-9a-f]\{8\}$" "$tmp/out" || fail "report names no command: $(cat "$tmp/out")"
expect_rc 0 "$S" hook-status --project "$tmp/r" --now 2026-09-01T09:10:00.000Z
sed -n 2p "$tmp/out" | grep -q "open .* usermark .*: sloptimize issues --fp " ||
	fail "hook-status does not put the fresh usermark first: $(cat "$tmp/out")"
sed -n 3p "$tmp/out" | grep -q "worst 164ms" || fail "hook-status: 164 ms is not second: $(cat "$tmp/out")"

# 20 writers x 50 fixes: 1000 whole lines, every id distinct
rm -f "$tmp/p/.sloptimize/fixes.jsonl"
i=0
while [ $i -lt 20 ]; do
	( j=0; while [ $j -lt 50 ]; do
		"$S" fix --project "$tmp/p" --title "writer $i fix $j with some text to make the line longer" \
		    --footprints "$id" --commit "c$i$j" >/dev/null || exit 1
		j=$((j + 1)); done ) &
	i=$((i + 1))
done
wait
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
  if (lines.pop() !== "") throw "no final newline";
  if (lines.length !== 1000) throw "lines: " + lines.length;
  const ids = new Set(lines.map(l => JSON.parse(l).id));
  if (ids.size !== 1000) throw "distinct ids: " + ids.size;
' "$tmp/p/.sloptimize/fixes.jsonl"
expect_rc 0 "$S" issues --json --project "$tmp/p"
node -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1]));
  if (o.counts.fixes !== 1000 || o.issues[0].fixes.length !== 1000) throw "fixes folded: " + o.counts.fixes;
' "$tmp/out"
# writers refuse what the fold would skip: a title that is not UTF-8 was
# once acknowledged, then never counted
before=$(wc -c < "$tmp/p/.sloptimize/fixes.jsonl")
expect_rc 2 "$S" fix --project "$tmp/p" --title "$(printf 'bad \377 title')"
grep -q "title is not valid UTF-8" "$tmp/err" || fail "no reason for a non-UTF-8 title: $(cat "$tmp/err")"
[ "$(wc -c < "$tmp/p/.sloptimize/fixes.jsonl")" = "$before" ] || fail "a non-UTF-8 fix was appended"

# a FIFO where a ledger file should be: refused at once, never waited on
# (exit 4, the reason on stderr); `timeout` turns a hang into a failure
mkdir -p "$tmp/q/.sloptimize"
mkfifo "$tmp/q/.sloptimize/perf.jsonl"
for v in issues report history hook-status doctor; do
	expect_rc 4 timeout 10 "$S" "$v" --project "$tmp/q"
	grep -q "not a regular file" "$tmp/err" "$tmp/out" ||
	    fail "$v: no reason for a FIFO ledger: $(cat "$tmp/err")"
done
rm "$tmp/q/.sloptimize/perf.jsonl"
mkfifo "$tmp/q/.sloptimize/fixes.jsonl"
expect_rc 4 timeout 10 "$S" fix --project "$tmp/q" --title t
grep -q "not a regular file" "$tmp/err" || fail "fix into a FIFO: $(cat "$tmp/err")"

echo "cli: all checks passed"

# the man pages name every option the programs take
man8=$(sed 's/\\-/-/g' "$top/docs/sloptimized.8")
for f in $("${S%/*}/sloptimized" --help | grep -o '^  --[a-z-]*' | tr -d ' '); do
	printf '%s\n' "$man8" | grep -q -- "$f" || fail "sloptimized(8) does not document $f"
done
man1=$(sed 's/\\-/-/g' "$top/docs/sloptimize.1")
for v in issues report history fix watch replay hook-status doctor mcp init-agent bench; do
	for f in $("$S" "$v" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		printf '%s\n' "$man1" | grep -q -- "$f" || fail "sloptimize(1) does not document $v $f"
	done
done
echo "ok: the man pages name every option"
