#!/bin/sh
# The build itself, as a user meets it: a Linux build without libnotify
# stops with a clear message unless NOTIFY=0 asks for it; a NOTIFY=0
# binary says so in doctor; a change of PREFIX (compiled into the daemon)
# or of the backend rebuilds the objects instead of linking stale ones.
#
# A missing package is simulated with a pkg-config search path that holds
# every .pc file of this machine but libnotify's.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/build-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir "$tmp/pc"
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	[ -d "$d" ] || continue
	for f in "$d"/*.pc; do
		[ -f "$f" ] || continue
		case "${f##*/}" in libnotify.pc) continue ;; esac
		[ -e "$tmp/pc/${f##*/}" ] || ln -s "$f" "$tmp/pc/${f##*/}"
	done
done
nolibnotify() { PKG_CONFIG_LIBDIR="$tmp/pc" "$@"; }

B="$tmp/b"
nolibnotify make -s --no-print-directory BUILD="$B" "$B/sloptimize" \
    >"$tmp/out" 2>&1 && fail "a Linux build without libnotify succeeded"
grep -q "missing libnotify" "$tmp/out" ||
    { cat "$tmp/out" >&2; fail "the failed build does not name libnotify"; }
grep -q "NOTIFY=0" "$tmp/out" ||
    { cat "$tmp/out" >&2; fail "the failed build does not say how to build without it"; }
echo "ok: without libnotify the build stops and names it"

nolibnotify make -s --no-print-directory -j2 BUILD="$B" NOTIFY=0 \
    PREFIX=/opt/one "$B/sloptimize" >"$tmp/out" 2>&1 ||
    { cat "$tmp/out" >&2; fail "NOTIFY=0 does not build"; }
"$B/sloptimize" doctor --json --project "$tmp" >"$tmp/doctor.json" 2>/dev/null || true
python3 - "$tmp/doctor.json" <<'EOF' || fail "doctor does not name the missing backend"
import json, sys
checks = json.load(open(sys.argv[1]))["checks"]
n = [c for c in checks if c["check"] == "notifications"]
assert n and "NOTIFY=0" in n[0]["detail"], n
EOF
echo "ok: a NOTIFY=0 build says so in doctor"

# PREFIX is compiled in: changing it must rebuild, not relink old objects
nolibnotify make --no-print-directory BUILD="$B" NOTIFY=0 PREFIX=/opt/two \
    "$B/daemon/static.o" >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "rebuild"; }
grep -q "CC daemon/static.c" "$tmp/out" ||
    { cat "$tmp/out" >&2; fail "a PREFIX change did not rebuild daemon/static.o"; }
grep -q "/opt/two/share/sloptimize" "$B/daemon/static.o" ||
    fail "the rebuilt object does not carry the new PREFIX"
nolibnotify make --no-print-directory BUILD="$B" NOTIFY=0 PREFIX=/opt/two \
    "$B/daemon/static.o" >"$tmp/out" 2>&1
grep -q "CC daemon/static.c" "$tmp/out" &&
    fail "the same flags rebuilt daemon/static.o again"
echo "ok: a PREFIX change rebuilds; the same flags do not"
