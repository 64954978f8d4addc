#!/bin/sh
# notify — notifier/desktop against a real notification server: a private
# session bus (dbus-run-session), a headless X server (Xvfb) and dunst.
#
# tests/notify_driver.c is compiled here from the notifier sources (a
# cmocka binary would also be run by the suite outside any D-Bus session)
# and sends: A1, A2 (same footprint: must replace A1 in place), B
# (regressed: critical), then a burst C1 C2 C3 (coalesced: "+2 more").
# Checked with `dunstctl history` (JSON) and a dbus-monitor capture of
# the Notify calls (dunst's history has no urgency).  Then the same driver
# with no D-Bus session at all must log "no notification server" once and
# exit 0.
#
# Missing tools are a failure, not a skip: `make deps` installs them.
# NOTIFY_CFLAGS adds compiler flags for the driver (e.g. sanitizers).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

fail() { echo "FAIL: $*"; exit 1; }

for tool in cc pkg-config python3 dbus-run-session dbus-send dbus-monitor \
    Xvfb dunst dunstctl; do
	command -v "$tool" >/dev/null 2>&1 ||
	    fail "$tool not found (make deps installs it)"
done
pkg-config --exists libnotify libuv libcjson ||
    fail "libnotify, libuv or libcjson missing for pkg-config (make deps)"

work=$(mktemp -d "${TMPDIR:-/tmp}/notify-test.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# shellcheck disable=SC2046
cc -std=gnu11 -Wall -Wextra -Werror -g ${NOTIFY_CFLAGS:-} -I. \
    -DHAVE_LIBNOTIFY=1 $(pkg-config --cflags libuv libcjson libnotify) \
    -o "$work/driver" tests/notify_driver.c notifier/wake.c \
    notifier/desktop.c ledger/footprint.c ledger/impact.c ledger/jscan.c \
    $(pkg-config --libs libuv libcjson libnotify) -lm ||
    fail "cannot build the driver"

# --- 1. no D-Bus session: one log line, exit 0 ------------------------------

mkdir -m 700 "$work/rt"
env -u DBUS_SESSION_BUS_ADDRESS -u DISPLAY -u WAYLAND_DISPLAY \
    XDG_RUNTIME_DIR="$work/rt" "$work/driver" >"$work/nobus.out" \
    2>"$work/nobus.err"
rc=$?
cat "$work/nobus.out" "$work/nobus.err"
[ "$rc" -eq 0 ] || fail "driver without D-Bus exited $rc"
n=$(grep -c "no notification server" "$work/nobus.err")
[ "$n" -eq 1 ] || fail "expected 1 'no notification server' line, got $n"
grep -q "^state: unavailable: " "$work/nobus.out" ||
    fail "state is not 'unavailable: …'"
grep -q "dropped=6" "$work/nobus.out" ||
    fail "the six wakes were not counted as dropped"
echo "ok: no D-Bus session"

# --- 2. a real server ---------------------------------------------------------

cat >"$work/inner.sh" <<'EOF'
# Runs inside dbus-run-session.  Every background process is killed by the
# pid it was given here.
work=$1
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

deadline_loop() {	# tries, command...: poll every 0.1 s
	tries=$1; shift
	while [ "$tries" -gt 0 ]; do
		"$@" && return 0
		tries=$((tries - 1))
		sleep 0.1
	done
	return 1
}

Xvfb -displayfd 3 -screen 0 800x600x24 -nolisten tcp 3>"$work/display" \
    2>"$work/xvfb.log" &
pids="$pids $!"
deadline_loop 100 test -s "$work/display" || { echo "Xvfb did not start"; exit 1; }
DISPLAY=:$(cat "$work/display"); export DISPLAY

# Default settings, not the user's: an empty config dir.
mkdir -p "$work/xdg"
XDG_CONFIG_HOME=$work/xdg dunst >"$work/dunst.log" 2>&1 &
pids="$pids $!"
owned() {
	dbus-send --session --dest=org.freedesktop.DBus --print-reply \
	    /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner \
	    string:org.freedesktop.Notifications 2>/dev/null |
	    grep -q "boolean true"
}
deadline_loop 100 owned || { echo "dunst did not own the name"; cat "$work/dunst.log"; exit 1; }

dbus-monitor --session \
    "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" \
    >"$work/monitor.txt" 2>&1 &
pids="$pids $!"
# dbus-monitor is live once it has printed its own NameAcquired/NameLost
deadline_loop 100 test -s "$work/monitor.txt" || { echo "dbus-monitor silent"; exit 1; }

"$work/driver" >"$work/live.out" 2>"$work/live.err"
echo "driver exit $?" >>"$work/live.out"
dunstctl close-all
dunstctl history >"$work/history.json"
sleep 0.2	# let dbus-monitor flush what it has already received
EOF

dbus-run-session -- sh "$work/inner.sh" "$work" 2>"$work/session.err"
rc=$?
cat "$work/live.out" "$work/live.err" 2>/dev/null
[ "$rc" -eq 0 ] || { cat "$work/session.err"; fail "session script exited $rc"; }

python3 - "$work" <<'EOF' || fail "assertions above"
import json, re, sys
work = sys.argv[1]
out = open(f"{work}/live.out").read()
err = open(f"{work}/live.err").read()
problems = []
def check(cond, what):
    if not cond:
        problems.append(what)

check("driver exit 0" in out, "driver exit status")
check("state: ok" in out, "state ok")
check(out.count("shown ") == 4 and all(
    l.split()[2] == "0" for l in out.splitlines() if l.startswith("shown ")),
    "four notifications shown with status 0")
check("no notification server" not in err, "no 'unavailable' log")

# dunstctl history: {"type": "aa{sv}", "data": [[{...}, ...]]}
hist = json.load(open(f"{work}/history.json"))["data"][0]
entries = [(h["summary"]["data"], h["body"]["data"], h["id"]["data"])
           for h in hist if h["appname"]["data"] == "sloptimize"]
for e in entries:
    print("history:", e)
def of(fp):
    return [e for e in entries if f"fp={fp}" in e[1]]
a, b, c = of("81e5eb9b"), of("d423dcef"), of("68faa5c5")
check(len(a) == 1, f"fp A has one history entry (got {len(a)})")
check(len(b) == 1, f"fp B has one history entry (got {len(b)})")
check(len(c) == 1, f"fp C has one history entry (got {len(c)})")
check(len(entries) == 3, f"three entries in all (got {len(entries)})")
if a:
    check(a[0][0] == "sloptimize: hitch 141.2ms (shader-compile)",
          f"A summary: {a[0][0]!r}")
    check(a[0][1] == "second A\nfp=81e5eb9b ×2 status=open",
          f"A body is the update: {a[0][1]!r}")
if b:
    check(b[0][0] == "sloptimize: jitter 0.67units (snap)",
          f"B summary: {b[0][0]!r}")
    check(b[0][1] == "B regressed\nfp=d423dcef ×5 status=regressed",
          f"B body: {b[0][1]!r}")
if c:
    check(c[0][0] == "sloptimize: usermark worst 61.0ms (texture-upload)",
          f"C summary: {c[0][0]!r}")
    check(c[0][1] == "C three\nfp=68faa5c5 ×3 status=open +2 more",
          f"C body coalesced: {c[0][1]!r}")

# dbus-monitor: one "method call … member=Notify" block per call
mon = open(f"{work}/monitor.txt").read()
calls = [blk for blk in re.split(r"\n(?=method call )", mon)
         if "member=Notify" in blk]
urg = {}
replaces = {}
for blk in calls:
    m = re.search(r"fp=([0-9a-f]{8})", blk)
    u = re.search(r'string "urgency"\s*variant\s+byte (\d+)', blk)
    r = re.search(r'string "sloptimize"\s*uint32 (\d+)', blk)
    if m and u:
        urg.setdefault(m.group(1), []).append(int(u.group(1)))
        replaces.setdefault(m.group(1), []).append(int(r.group(1)) if r else None)
print("urgency:", urg, "replaces_id:", replaces)
check(urg.get("81e5eb9b") == [1, 1], "A: two Notify calls, urgency 1 (normal)")
check(urg.get("d423dcef") == [2], "B: urgency 2 (critical)")
check(urg.get("68faa5c5") == [1], "C: one Notify call for the burst")
# markup in the evidence is escaped (bodies may be parsed as markup)
check('string "first A &lt;b&gt;&amp;&lt;/b&gt; &quot;q&quot; \\ end\nfp='
      in mon, "A1's body escaped for markup")
ra = replaces.get("81e5eb9b", [])
check(len(ra) == 2 and ra[0] == 0 and ra[1] not in (0, None),
      f"A2 replaces A1's id (replaces_id {ra})")
if problems:
    for p in problems:
        print("FAIL:", p)
    sys.exit(1)
print("ok: real server")
EOF
