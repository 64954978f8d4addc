#!/bin/sh
# init-agent's .gitignore lines, judged by git itself (docs/budgets.md,
# "What is committed"): in a real repository, what one machine makes is
# ignored and every ledger is not; the user's own lines stay byte for
# byte; a second run writes nothing; a symlinked .gitignore is written
# through to its target.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
S=${SLOPTIMIZE_BUILD:-$top/build}/sloptimize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v git >/dev/null || fail "no git (make deps)"

g="$tmp/game"
mkdir -p "$g/.sloptimize/bench" "$g/.sloptimize/goldens" "$g/.sloptimize/snapshots"
git -C "$g" init -q
printf 'node_modules\n/dist' >"$g/.gitignore"		# no last newline
cp "$g/.gitignore" "$tmp/theirs"
"$S" init-agent --project "$g" --yes >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "init-agent"; }
grep -q "^wrote $g/.gitignore" "$tmp/out" || fail "the .gitignore was not written: $(cat "$tmp/out")"
head -c "$(wc -c <"$tmp/theirs")" "$g/.gitignore" | cmp -s - "$tmp/theirs" ||
	fail "the user's lines changed"
for f in bench/s-1.json goldens/crates.png snapshots/v.json profile.json census.json \
    attribution.json dev.json profile.json.tmp; do
	: >"$g/.sloptimize/$f"
	git -C "$g" check-ignore -q ".sloptimize/$f" || fail ".sloptimize/$f is not ignored"
done
for f in perf.jsonl fixes.jsonl bench-history.jsonl goldens.jsonl; do
	: >"$g/.sloptimize/$f"
	! git -C "$g" check-ignore -q ".sloptimize/$f" || fail "the ledger $f is ignored"
done
: >"$g/sloptimize.budgets.json"
! git -C "$g" check-ignore -q sloptimize.budgets.json || fail "the budgets file is ignored"
cp "$g/.gitignore" "$tmp/after"
"$S" init-agent --project "$g" --yes >"$tmp/out" 2>&1
grep -q "Nothing to write" "$tmp/out" || fail "a second run wrote: $(cat "$tmp/out")"
cmp -s "$g/.gitignore" "$tmp/after" || fail "a second run changed .gitignore"

# a .gitignore that hides the ledgers is said, and left
h="$tmp/hides"
mkdir -p "$h"
printf '.sloptimize/\n' >"$h/.gitignore"
"$S" init-agent --project "$h" --dry-run >"$tmp/out" 2>&1
grep -q 'your .gitignore has ".sloptimize/": it keeps the ledgers' "$tmp/out" ||
	fail "no word of the hidden ledgers: $(cat "$tmp/out")"
[ "$(cat "$h/.gitignore")" = ".sloptimize/" ] || fail "--dry-run wrote"

# through a symlink, to its target
l="$tmp/linked"
mkdir -p "$l" "$tmp/dotfiles"
printf '*.log\n' >"$tmp/dotfiles/gitignore"
ln -s "$tmp/dotfiles/gitignore" "$l/.gitignore"
"$S" init-agent --project "$l" --yes >/dev/null 2>&1
[ -L "$l/.gitignore" ] || fail "the link was replaced by a file"
grep -q '^\.sloptimize/bench/$' "$tmp/dotfiles/gitignore" || fail "the target was not written"
echo "gitignore: all checks passed"
