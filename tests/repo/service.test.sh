#!/bin/sh
# service.test.sh — `make install` and `make install-service` into staging
# directories, then check what landed: every file in place, no @PLACEHOLDER@
# left, the systemd unit clean under `systemd-analyze verify`, the launchd
# plist well-formed with the right label and arguments.  Runs on Linux; the
# LaunchAgent is generated here too (SERVICE=launchd with a DESTDIR never
# calls launchctl) and parsed with Python's plistlib.
#
#   sh tests/repo/service.test.sh        (tests/run.sh sets SLOPTIMIZE_BUILD)
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${SLOPTIMIZE_BUILD:-$top/build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/service-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0

ok()   { echo "ok   $*"; }
bad()  { echo "FAIL $*"; fails=$((fails + 1)); }
need() { [ -e "$1" ] && ok "${2:-exists}: ${1#"$tmp"/}" || bad "missing: $1"; }

# The tools are part of the test, not optional: `make deps` installs both
# (the Debian package `systemd` brings systemd-analyze).
command -v systemd-analyze >/dev/null 2>&1 ||
	{ echo "FAIL systemd-analyze not found: run make deps" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 ||
	{ echo "FAIL python3 not found: run make deps" >&2; exit 1; }
echo "using $(systemd-analyze --version | head -n 1)"

# A make of our own: not the caller's -j, jobserver or variable overrides
# (`make test PREFIX=...` must not leak into the PREFIXes below).
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top" \
    BUILD="$build" "$@"; }

# --- make install, packaged --------------------------------------------------
pkg=$tmp/pkg
mk install DESTDIR="$pkg" PREFIX=/usr >"$tmp/install.out"
cat "$tmp/install.out"
grep -q "^install: $pkg/usr/bin/sloptimize\$" "$tmp/install.out" &&
	ok "install says what it wrote" || bad "install did not print its files"
[ -x "$pkg/usr/bin/sloptimize" ] && ok "sloptimize installed" ||
	bad "no $pkg/usr/bin/sloptimize"
if [ -f "$top/daemon/main.c" ]; then
	[ -x "$pkg/usr/bin/sloptimized" ] && ok "sloptimized installed" ||
		bad "no $pkg/usr/bin/sloptimized"
fi
for m in "$top"/docs/*.[1-8]; do
	[ -f "$m" ] || continue
	need "$pkg/usr/share/man/man${m##*.}/${m##*/}" "man page"
done
need "$pkg/usr/share/doc/sloptimize/service.md" "doc"
find "$top/page-runtime" -type f ! -name '.*' ! -name '*.test.*' \
    ! -path '*/node_modules/*' 2>/dev/null | while IFS= read -r f; do
	[ -f "$pkg/usr/share/sloptimize/page-runtime/${f#"$top"/page-runtime/}" ] ||
		echo "${f#"$top"/}"
done >"$tmp/missing-runtime"
[ ! -s "$tmp/missing-runtime" ] && ok "page-runtime installed" ||
	bad "page-runtime files missing: $(cat "$tmp/missing-runtime")"
if find "$pkg" -name '*.test.*' | grep -q .; then
	bad "tests were installed: $(find "$pkg" -name '*.test.*')"
fi

# --- make install-service, packaged (systemd) ------------------------------
mk install-service DESTDIR="$pkg" PREFIX=/usr >"$tmp/svc.out"
cat "$tmp/svc.out"
unit=$pkg/usr/lib/systemd/user/sloptimized@.service
need "$unit" "unit"
grep -q "installed $unit" "$tmp/svc.out" &&
	ok "install-service says what it wrote" || bad "install-service silent"
grep -q "service manager is left alone" "$tmp/svc.out" &&
	ok "DESTDIR leaves the service manager alone" ||
	bad "install-service with DESTDIR did not say it skipped systemctl"
if grep -n '@[A-Z_]*@' "$unit"; then
	bad "placeholders left in the unit"
else
	ok "no placeholders left in the unit"
fi
doc=/usr/share/doc/sloptimize
for line in 'ExecStart=/usr/bin/sloptimized --project %f $SLOPTIMIZED_OPTS' \
    "Documentation=man:sloptimize(1) file:$doc/service.md" \
    'Type=notify' 'NotifyAccess=main' 'WatchdogSec=30' 'PrivateUsers=yes' \
    'ProtectSystem=strict' 'ProtectHome=read-only' \
    'ExecReload=/bin/kill -HUP $MAINPID' 'WantedBy=default.target'; do
	grep -qxF "$line" "$unit" && ok "unit has $line" ||
		bad "unit lacks: $line"
done

# UNITDIR moves the unit; a BINDIR that systemd would split is refused.
mk install-service DESTDIR="$pkg" PREFIX=/usr UNITDIR=/etc/xdg/u >/dev/null
need "$pkg/etc/xdg/u/sloptimized@.service" "UNITDIR honoured"
if mk install-service DESTDIR="$pkg" BINDIR='/opt/my bin' \
    UNITDIR=/x >"$tmp/blank.out" 2>&1; then
	bad "a BINDIR with a blank was accepted"
else
	ok "a BINDIR with a blank is refused:" \
	    "$(grep install-service: "$tmp/blank.out" | tail -n 1)"
fi

# --- systemd-analyze verify -------------------------------------------------
# verify checks that ExecStart= names an executable, so it needs a tree
# whose paths are real: PREFIX is the staging directory itself, and
# DESTDIR=/ keeps install-service in packaging mode (no systemctl).  The
# unit checked is byte for byte what install-service wrote, only with
# BINDIR = $stage/bin.
#
# In a container or CI job there is no user manager, no journal and no
# session bus, and systemd-analyze says so (lines about the runtime
# directory, cgroups, D-Bus) and may exit non-zero for that alone.  Those
# lines name no unit.  Everything wrong with *our* unit -- a bad value, an
# unknown key, a missing executable -- is printed as "<file>:<line>: ..." or
# "sloptimized@<instance>.service: ...", so any line naming the unit fails
# the test and the rest is shown as information.  A deliberately broken
# copy is verified first, to prove the errors would be seen here at all.
# --man=no: Documentation=man:sloptimize(1) would run man(1) against the
# system's MANPATH, where the staged page is not; the man page's presence
# is checked above instead.
stage=$tmp/stage
mk install DESTDIR=/ PREFIX="$stage" >/dev/null
mk install-service DESTDIR=/ PREFIX="$stage" >/dev/null
sunit=$stage/lib/systemd/user/sloptimized@.service
need "$sunit" "staged unit"
if [ ! -x "$stage/bin/sloptimized" ]; then
	# daemon/main.c not written yet: a stand-in keeps verify meaningful.
	printf '#!/bin/sh\nexit 0\n' >"$stage/bin/sloptimized"
	chmod 755 "$stage/bin/sloptimized"
fi
mkdir -m 700 "$tmp/xdg"
sa_verify() {	# unit file -> output on stdout, never fails
	XDG_RUNTIME_DIR=$tmp/xdg systemd-analyze --user --man=no verify "$1" \
	    2>&1 || echo "(systemd-analyze exited $?)"
}

mkdir -p "$tmp/canary"
sed -e 's/^Type=notify$/Type=notfy/' -e 's/^NoNewPrivileges=/NoNewPrivilege=/' \
    "$sunit" >"$tmp/canary/sloptimized@.service"
canary=$(sa_verify "$tmp/canary/sloptimized@.service")
if printf '%s\n' "$canary" | grep -q "sloptimized@.service:[0-9]*:.*notfy" &&
    printf '%s\n' "$canary" | grep -q "NoNewPrivilege'"; then
	ok "verify reports errors in a broken copy (the check can fail)"
else
	bad "verify did not flag a broken unit; its output:"
	printf '%s\n' "$canary" | sed 's/^/     /'
fi

# The template (verify instantiates it as sloptimized@i) and an instance
# named the way the docs say, for a path that needs escaping.
inst=$(systemd-escape --template=sloptimized@.service \
    --path "/home/dev/my-games/orbit 2")
ln -s sloptimized@.service "$stage/lib/systemd/user/$inst"
for u in "$sunit" "$stage/lib/systemd/user/$inst"; do
	out=$(sa_verify "$u")
	mine=$(printf '%s\n' "$out" | grep -e 'sloptimized@' || true)
	if [ -n "$mine" ]; then
		bad "systemd-analyze verify ${u##*/}:"
		printf '%s\n' "$mine" | sed 's/^/     /'
	else
		ok "systemd-analyze verify ${u##*/}: nothing about the unit"
		[ -z "$out" ] ||
			printf '%s\n' "$out" | sed 's/^/     (environment) /'
	fi
done
[ "$inst" = 'sloptimized@home-dev-my\x2dgames-orbit\x202.service' ] &&
	ok "instance name: $inst" || bad "unexpected instance name: $inst"

# --- launchd ---------------------------------------------------------------
# Same template path as on a Mac, minus launchctl.  A project path with
# XML-special characters and a blank, and a trailing slash to strip.
proj='/Users/dev/games/a&b <c>'
mk install-service SERVICE=launchd DESTDIR="$pkg" PREFIX=/usr HOME=/Users/dev \
    PROJECT="$proj/" >"$tmp/agent.out"
cat "$tmp/agent.out"
grep -q "launchctl is left alone" "$tmp/agent.out" &&
	ok "DESTDIR leaves launchctl alone" || bad "launchd install not dry"
# A real directory through a symlink: the agent names its physical path,
# as the daemon's realpath() does.
mkdir -p "$tmp/real/orbit"
ln -s "$tmp/real" "$tmp/link"
mk install-service SERVICE=launchd DESTDIR="$pkg" PREFIX=/usr HOME=/Users/dev \
    PROJECT="$tmp/link/orbit" >/dev/null

if ! python3 - "$pkg/Users/dev/Library/LaunchAgents" "$proj" \
    "$tmp/real/orbit" <<'EOF'
import os, plistlib, re, sys

agents, *projects = sys.argv[1:]
fails = 0

def fnv1a32(s):
    h = 2166136261
    for b in s.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return "%08x" % h

def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += not cond

for proj in projects:
    name = re.sub(rb"[^A-Za-z0-9._-]", b"_",
                  os.path.basename(proj).encode()).decode()
    label = "dev.sloptimize.sloptimized.%s-%s" % (name, fnv1a32(proj))
    path = os.path.join(agents, label + ".plist")
    check(os.path.exists(path), "plist " + os.path.basename(path))
    if not os.path.exists(path):
        continue
    with open(path, "rb") as f:
        text = f.read()
    check(not re.search(rb"@[A-Z_]+@", text), "no placeholders left")
    p = plistlib.loads(text)
    check(p.get("Label") == label, "Label %r" % p.get("Label"))
    check(p.get("ProgramArguments") ==
          ["/usr/bin/sloptimized", "--project", proj],
          "ProgramArguments %r" % p.get("ProgramArguments"))
    check(p.get("KeepAlive") is True, "KeepAlive true")
    check(p.get("RunAtLoad") is True, "RunAtLoad true")
    check(p.get("WorkingDirectory") == proj, "WorkingDirectory")
    log = "/Users/dev/Library/Logs/sloptimize/%s-%s.log" % (name, fnv1a32(proj))
    check(p.get("StandardErrorPath") == log, "StandardErrorPath " + log)
    check(p.get("StandardOutPath") == log, "StandardOutPath " + log)
sys.exit(1 if fails else 0)
EOF
then
	fails=$((fails + 1))
fi

if mk install-service SERVICE=launchd DESTDIR="$pkg" HOME=/Users/dev \
    >"$tmp/noproj.out" 2>&1; then
	bad "launchd install-service without PROJECT succeeded"
else
	ok "launchd without PROJECT refused:" \
	    "$(grep install-service: "$tmp/noproj.out" | tail -n 1)"
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all service checks passed"
