#!/bin/sh
# docs — the examples the docs give work as written.  docs/cli-watch.md's
# "Trying it without a game": its commands are read from the page itself
# (so the page cannot drift from what is tested), /tmp/demo becomes a
# temp folder, and the daemon gets `--listen 127.0.0.1:0` and a private
# state directory — the one liberty taken, because port 7567 and
# ~/.local/state belong to whoever runs the suite.  Then: six lines, the
# usermark's with its note and what was held, each ending with its command;
# with --json, every wake has a string id.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
bin=$(cd "${SLOPTIMIZE_BUILD:-build}" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/docs-test.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	# gone before their folder is: a daemon still stopping wrote its
	# state folder again after the rm (an empty one was left in /tmp)
	(trap 'kill $s 2>/dev/null; exit 0' TERM; sleep 10 & s=$!; wait $s
	    for p in $pids; do kill -KILL "$p" 2>/dev/null; done) &
	guard=$!
	for p in $pids; do wait "$p" 2>/dev/null; done
	kill "$guard" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
export PATH="$bin:$PATH" XDG_STATE_HOME="$tmp/state"

page=docs/cli-watch.md
block=$(sed -n '/^## Trying it without a game/,$p' "$page")
cmd() {	# the line of the block starting with $1, /tmp/demo replaced
	line=$(printf '%s\n' "$block" | grep -m1 "^$1") ||
	    fail "$page no longer shows '$1'"
	printf '%s\n' "$line" | sed "s#/tmp/demo#$tmp/demo#g"
}
mk=$(cmd "mkdir -p /tmp/demo")
daemon=$(cmd "sloptimized --project /tmp/demo &")
watch=$(cmd "sloptimize watch --project /tmp/demo")
replay=$(cmd "sloptimize replay ")

sh -c "$mk" || fail "$mk"
sh -c "exec ${daemon%&} --listen 127.0.0.1:0 --desktop 0" 2>"$tmp/daemon.log" &
pids="$pids $!"
sh -c "exec $watch" >"$tmp/watch.out" 2>"$tmp/watch.err" &
pids="$pids $!"
sh -c "exec $watch --json" >"$tmp/watch.json" 2>/dev/null &
pids="$pids $!"
# both watches connected (they say so on stderr), with a deadline
i=0
until grep -q "connected to " "$tmp/watch.err" 2>/dev/null; do
	i=$((i + 1)); [ $i -le 100 ] || { cat "$tmp/watch.err" "$tmp/daemon.log"; fail "watch did not connect"; }
	sleep 0.1
done
sh -c "$replay" >"$tmp/replay.out" 2>&1 || { cat "$tmp/replay.out"; fail "$replay"; }
i=0
until [ "$(wc -l < "$tmp/watch.out")" -ge 6 ] && [ "$(wc -l < "$tmp/watch.json")" -ge 6 ]; do
	i=$((i + 1)); [ $i -le 100 ] || { cat "$tmp/watch.out" "$tmp/daemon.log"; fail "fewer than six lines"; }
	sleep 0.1
done
cat "$tmp/watch.out"
[ "$(wc -l < "$tmp/watch.out")" -eq 6 ] || fail "the page says six lines"
grep -q '^sloptimize usermark .* note="stutter when banking left" .* +2 more since [0-9:]*: a64a6f58 ×2 ' "$tmp/watch.out" ||
    fail "the usermark's line has its note and what was held"
n=$(grep -c ' → sloptimize issues --fp [0-9a-f]\{8\}$' "$tmp/watch.out")
[ "$n" -eq 6 ] || fail "every line ends with its command ($n of 6)"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  for (const w of lines) {
    if (typeof w.id !== "string" || !/^\d+:\d+$/.test(w.id)) throw "id " + JSON.stringify(w.id);
    if (!Array.isArray(w.heldBy) || typeof w.held !== "number") throw "held " + JSON.stringify(w);
  }
  const m = lines.find((w) => w.record && w.record.type === "usermark");
  if (m.record.note !== "stutter when banking left" || m.held !== 2 || m.heldBy[0].fp !== "a64a6f58") throw "usermark " + JSON.stringify(m);
' "$tmp/watch.json" || fail "the --json shape of docs/cli-watch.md"
echo "docs: the cli-watch example works as written"

# the man pages render without a warning (a line starting with a dot is a
# macro call: ".claude/skills/…" once became an undefined macro, which
# only lintian saw)
for m in docs/*.1 docs/*.8; do
	w=$(groff -man -Tutf8 -ww -z "$m" 2>&1) || fail "groff cannot render $m"
	[ -z "$w" ] || fail "$m: $w"
done
echo "docs: the man pages render without a warning"
