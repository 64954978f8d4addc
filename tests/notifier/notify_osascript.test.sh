#!/bin/sh
# notify_osascript — the macOS path of notifier/desktop (built without
# libnotify), run here with a stand-in `osascript` on PATH that records its
# arguments: the AppleScript must quote the evidence safely, coalesce the
# burst ("+2 more"), and with no osascript at all the driver must log
# once and exit 0.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2

fail() { echo "FAIL: $*"; exit 1; }

for tool in cc pkg-config; do
	command -v "$tool" >/dev/null 2>&1 || fail "$tool not found"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/notify-osa.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# HAVE_OSASCRIPT: the macOS backend, built and driven on Linux.
# shellcheck disable=SC2046
cc -std=gnu11 -Wall -Wextra -Werror -g ${NOTIFY_CFLAGS:-} -I. \
    -DHAVE_OSASCRIPT=1 $(pkg-config --cflags libuv libcjson) -o "$work/driver" \
    tests/notifier/notify_driver.c notifier/wake*.c notifier/desktop.c \
    ledger/footprint.c ledger/impact.c ledger/jscan*.c base/base.c \
    $(pkg-config --libs libuv libcjson) -lm || fail "cannot build the driver"

mkdir "$work/bin"
cat >"$work/bin/osascript" <<'EOF'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >>"$OSA_LOG"
EOF
chmod +x "$work/bin/osascript"

OSA_LOG=$work/osa.log PATH="$work/bin:$PATH" "$work/driver" \
    >"$work/out" 2>"$work/err" || fail "driver exited $?"
cat "$work/out" "$work/err" "$work/osa.log"

cat >"$work/want" <<'EOF'
-e
display notification "first A <b>&</b> \"q\" \\ end" with title "sloptimize: hitch 120.5ms (shader-compile)" subtitle "fp=81e5eb9b ×1 status=open"
-e
display notification "second A" with title "sloptimize: hitch 141.2ms (shader-compile)" subtitle "fp=81e5eb9b ×2 status=open"
-e
display notification "B regressed" with title "sloptimize: jitter 0.67units (snap)" subtitle "fp=d423dcef ×5 status=regressed"
-e
display notification "C one" with title "sloptimize: usermark worst 61.0ms (texture-upload)" subtitle "fp=68faa5c5 ×1 status=open"
-e
display notification "C three" with title "sloptimize: usermark worst 61.0ms (texture-upload)" subtitle "fp=68faa5c5 ×3 status=open +1 more"
-e
display notification "D" with title "sloptimize: hitch 150.0ms (spawn-burst)" subtitle "fp=0000d001 ×1 status=open"
-e
display notification "hitch 150.0ms spawn-burst fp=0000d004 ×1 regressed; hitch 150.0ms spawn-burst fp=0000d001 ×1 open; hitch 150.0ms spawn-burst fp=0000d002 ×1 open; hitch 150.0ms spawn-burst fp=0000d003 ×1 open; hitch 150.0ms spawn-burst fp=0000d005 ×1 open; hitch 150.0ms spawn-burst fp=0000d006 ×1 open" with title "sloptimize: 6 wakes from 6 causes" subtitle ""
-e
display notification "hitch 150.0ms spawn-burst fp=0000d004 ×1 regressed; hitch 150.0ms spawn-burst fp=0000d001 ×2 open (2 wakes); hitch 150.0ms spawn-burst fp=0000d002 ×1 open; hitch 150.0ms spawn-burst fp=0000d003 ×1 open; hitch 150.0ms spawn-burst fp=0000d005 ×1 open; hitch 150.0ms spawn-burst fp=0000d006 ×1 open; hitch 150.0ms spawn-burst fp=0000d007 ×1 open" with title "sloptimize: 8 wakes from 7 causes" subtitle ""
EOF
diff -u "$work/want" "$work/osa.log" || fail "osascript arguments differ"
grep -q "stats: wakes=14 shown=14 sent=8 replaced=0 pending=0 dropped=0 failed=0" \
    "$work/out" || fail "stats"

# No osascript anywhere on PATH: unavailable, said once, exit 0.
PATH=/nonexistent "$work/driver" >"$work/out2" 2>"$work/err2" ||
    fail "driver without osascript exited $?"
cat "$work/out2" "$work/err2"
n=$(grep -c "no notification server" "$work/err2")
[ "$n" -eq 1 ] || fail "expected 1 'no notification server' line, got $n"
grep -q "^state: unavailable: cannot run osascript" "$work/out2" ||
    fail "state"
echo "ok"
