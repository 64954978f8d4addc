#!/bin/sh
# check from the outside (docs/budgets.md): --help and the man page, the
# common rules for a missing project, and files that are not what they
# should be — a FIFO where profile.json or the budgets file should be is
# refused at once, never waited on (`timeout` turns a hang into a
# failure), with its reason and the exit code of its class.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
S=${SLOPTIMIZE_BUILD:-$top/build}/sloptimize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {	# rc, command...
	want=$1; shift
	set +e; "$@" >"$tmp/out" 2>"$tmp/err"; got=$?; set -e
	[ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, want $want"; }
}

expect_rc 0 "$S" check --help
grep -q "usage: sloptimize check" "$tmp/out" || fail "check --help has no usage line"
"$S" --help | grep -q "^  check " || fail "sloptimize --help does not list check"
man1=$(sed 's/\\-/-/g' "$top/docs/sloptimize.1")
for f in $("$S" check --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	printf '%s\n' "$man1" | grep -q -- "$f" || fail "sloptimize(1) does not document check $f"
done
expect_rc 2 "$S" check --max-age yesterday
expect_rc 2 "$S" check --bench ''
expect_rc 2 "$S" check --bogus
expect_rc 4 "$S" check --project "$tmp/absent"
grep -q "no project at $tmp/absent" "$tmp/err" || fail "check does not say the project is missing"

mkdir -p "$tmp/p/.sloptimize"
printf '{"perf.budget.draw_calls": 300}\n' >"$tmp/p/sloptimize.budgets.json"
mkfifo "$tmp/p/.sloptimize/profile.json"
expect_rc 4 timeout 10 "$S" check --project "$tmp/p"
grep -q "not a regular file" "$tmp/err" || fail "a FIFO profile.json: $(cat "$tmp/err")"
expect_rc 0 timeout 10 "$S" hook-status --project "$tmp/p"
rm "$tmp/p/sloptimize.budgets.json"
mkfifo "$tmp/p/sloptimize.budgets.json"
expect_rc 2 timeout 10 "$S" check --project "$tmp/p"
grep -q "not a regular file" "$tmp/err" || fail "a FIFO budgets file: $(cat "$tmp/err")"
rm "$tmp/p/sloptimize.budgets.json" "$tmp/p/.sloptimize/profile.json"

# a profile that is not one (torn, or something else's): 4, said
printf '{"perf.budget.draw_calls": 300}\n' >"$tmp/p/sloptimize.budgets.json"
printf '{"at": "a while ago"' >"$tmp/p/.sloptimize/profile.json"
expect_rc 4 "$S" check --project "$tmp/p"
grep -q "is not a profile" "$tmp/err" || fail "a torn profile.json: $(cat "$tmp/err")"
# one that is, judged by --now: no daemon needed to read it
printf '{"v":1,"at":"2026-11-29T12:00:00.000Z","regime":"hardware","render":{"calls":301}}\n' \
    >"$tmp/p/.sloptimize/profile.json"
expect_rc 1 "$S" check --project "$tmp/p" --now 2026-11-29T12:00:10Z
grep -q "perf.budget.draw_calls   301 / 300 .*← over by 0.3%" "$tmp/out" || fail "$(cat "$tmp/out")"
expect_rc 4 "$S" check --project "$tmp/p" --now 2026-11-29T12:00:31Z
expect_rc 1 "$S" check --project "$tmp/p" --now 2026-11-29T12:00:31Z --max-age 31s
expect_rc 1 "$S" check --project "$tmp/p" --now 2026-11-29T12:00:00.250Z --max-age 500ms
echo "check: all checks passed"
