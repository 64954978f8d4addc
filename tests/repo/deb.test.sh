#!/bin/sh
# deb — the Debian package (issue 24): `make deb` builds
# sloptimize_VERSION_ARCH.deb; its control says what it needs (Depends
# covers every library the programs link, Recommends what they dlopen());
# lintian gives no tag that docs/packaging.md does not explain; `apt-get
# install ./….deb` installs it; the installed programs run (--version,
# doctor, a daemon on a scratch project whose wake `sloptimize watch`
# sees, the page runtime served from /usr/share/sloptimize byte for byte
# the npm tarball's); `apt-get purge` leaves no file of it behind.
#
# Installing into /usr needs root.  CI runs as root on a machine of its
# own, where this runs; as another user it says why it skips.  The other
# tests are unaffected while it is installed: tests/run.sh puts the build's
# programs first on PATH (checked below), and build/sloptimized serves the
# checkout's page-runtime/ (it looks beside itself first).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${SLOPTIMIZE_BUILD:-$top/build}
V=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' "$top/Makefile")
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
skip() { echo "skip: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "installing a .deb into /usr needs root (CI runs this as root); not root here"
command -v apt-get >/dev/null && command -v dpkg >/dev/null || skip "not a Debian system (no apt-get, dpkg)"
for f in /usr/bin/sloptimize /usr/bin/sloptimized; do
	if [ -e "$f" ] && ! dpkg -S "$f" 2>/dev/null | grep -q '^sloptimize:'; then
		skip "$f exists and no package owns it (a make install PREFIX=/usr?): not overwriting it"
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/deb-test.XXXXXX")
pids=""
APT="apt-get -y -qq -o DPkg::Lock::Timeout=300"
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	# purge even on failure: the machine is shared
	if dpkg -s sloptimize >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive $APT purge sloptimize >/dev/null 2>&1 ||
			echo "deb: could not purge sloptimize" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# a package left by an earlier run that died: away first
if dpkg -s sloptimize >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive $APT purge sloptimize >/dev/null
fi

# --- build ---------------------------------------------------------------
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top" deb BUILD="$B" >"$tmp/make.out" 2>&1 ||
	{ cat "$tmp/make.out" >&2; fail "make deb"; }
arch=$(dpkg --print-architecture)
deb=$B/sloptimize_${V}_$arch.deb
[ -f "$deb" ] || fail "make deb made no $deb"
ok "make deb: ${deb##*/}"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = sloptimize ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$V" ] || fail "Version: $(field Version), the Makefile says $V"
[ "$(field Architecture)" = "$arch" ] || fail "Architecture: $(field Architecture)"
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$tmp/contents"
for f in /usr/bin/sloptimize /usr/bin/sloptimized /usr/share/man/man1/sloptimize.1.gz \
    /usr/share/man/man8/sloptimized.8.gz /usr/lib/systemd/user/sloptimized@.service \
    /usr/share/sloptimize/page-runtime/recorder.js /usr/share/sloptimize/page-runtime/panel.js \
    /usr/share/sloptimize/page-runtime/vite.d.ts /usr/share/sloptimize/npm/sloptimize-$V.tgz \
    /usr/share/sloptimize/skills/sloptimize/SKILL.md /usr/share/doc/sloptimize/copyright \
    /usr/share/doc/sloptimize/changelog.gz /usr/share/doc/sloptimize/packaging.md; do
	grep -qx "$f" "$tmp/contents" || fail "the package lacks $f"
done
grep -q 'test' "$tmp/contents" && grep '\.test\.' "$tmp/contents" && fail "tests in the package"
ok "control and contents: the programs, man pages, the user unit, the page runtime, the npm tarball, docs"

# Depends covers every library the programs link: each NEEDED library's
# package is named (what those libraries need in turn is their packages'
# business: libwebsockets17 depends on libssl3 itself)
dpkg-deb -x "$deb" "$tmp/x"
deps=$(field Depends)
for b in "$tmp/x/usr/bin/sloptimize" "$tmp/x/usr/bin/sloptimized"; do
	ldd "$b" >"$tmp/ldd"
	readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p' | while IFS= read -r so; do
		path=$(awk -v so="$so" '$1 == so && $3 ~ /^\// {print $3}' "$tmp/ldd")
		[ -n "$path" ] || { echo "unresolved: $so" >&2; continue; }
		echo "$path"
	done >>"$tmp/libs"
done
[ -s "$tmp/libs" ] || fail "no NEEDED libraries read from the programs"
sort -u "$tmp/libs" | while IFS= read -r lib; do
	real=$(readlink -f "$lib")
	pkg=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || true)
	pkg=${pkg%%:*}
	[ -n "$pkg" ] || { echo "$lib: no package owns it"; continue; }
	case ", $deps" in
	*", $pkg "*|*", $pkg,"*|*", $pkg") ;;
	*) echo "$lib ($pkg) is not in Depends: $deps" ;;
	esac
done >"$tmp/undeclared"
[ ! -s "$tmp/undeclared" ] || fail "$(cat "$tmp/undeclared")"
case "$deps" in *libwebsockets-evlib-uv*) ;; *) fail "Depends lacks libwebsockets-evlib-uv (lws's libuv plugin, loaded at run time)" ;; esac
recs=$(field Recommends)
for r in libnotify4 libcurl4 chromium; do
	case ", $recs," in *", $r,"*) ;; *) fail "Recommends lacks $r: $recs" ;; esac
done
# what the programs dlopen() is what Recommends names
grep -q 'libnotify.so.4' "$top/notifier/lazynotify.h" && grep -q 'libcurl.so.4' "$top/sink/lazycurl.h" ||
	fail "the dlopen()ed sonames changed: Recommends must follow"
ok "Depends covers every linked library ($deps); Recommends: $recs"

# lintian: clean, or every tag it still gives explained in docs/packaging.md
if command -v lintian >/dev/null; then
	# (TMPDIR: lintian 2.116 leaves two mldbm-elf-* files behind a run)
	TMPDIR=$tmp lintian --tag-display-limit 0 "$deb" >"$tmp/lintian" 2>&1 || true
	sed -n 's/^[EWIPX]: sloptimize[^:]*: \([a-z0-9-]*\).*/\1/p' "$tmp/lintian" | sort -u >"$tmp/tags"
	while IFS= read -r tag; do
		grep -q "\`$tag\`" "$top/docs/packaging.md" || echo "$tag"
	done <"$tmp/tags" >"$tmp/unexplained"
	[ ! -s "$tmp/unexplained" ] ||
		fail "lintian tags docs/packaging.md does not explain: $(cat "$tmp/unexplained")
$(cat "$tmp/lintian")"
	ok "lintian: $(wc -l <"$tmp/tags") tag(s), each explained in docs/packaging.md"
else
	fail "lintian is not installed: make deps-test installs it"
fi

# --- install -------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive $APT install "$deb" >"$tmp/apt.out" 2>&1 ||
	{ cat "$tmp/apt.out" >&2; fail "apt-get install $deb"; }
dpkg -s sloptimize | grep -q '^Status: install ok installed' || fail "not installed after apt-get install"
dpkg -L sloptimize >"$tmp/files"
ok "apt-get install ./${deb##*/}"

# the suite's programs are still the build's
[ "$(command -v sloptimize)" = "$B/sloptimize" ] ||
	fail "sloptimize on PATH is $(command -v sloptimize), not the build's: tests would run the package"
[ "$(/usr/bin/sloptimized --version)" = "sloptimized $V" ] || fail "sloptimized --version: $(/usr/bin/sloptimized --version)"
[ "$(/usr/bin/sloptimize --version)" = "sloptimize $V" ] || fail "sloptimize --version"

# a demo-less session: a daemon on a scratch project, a record appended,
# its wake seen by the installed watch
P=$tmp/game
mkdir -p "$P/.sloptimize"
export XDG_STATE_HOME="$tmp/state"
/usr/bin/sloptimized --project "$P" --listen 127.0.0.1:0 2>"$tmp/daemon.log" &
pids="$pids $!"
i=0
until addr=$(sed -n 's/.*"listen":[^"]*"\([^"]*\)".*/\1/p' "$XDG_STATE_HOME"/sloptimize/*/daemon.json 2>/dev/null) && [ -n "$addr" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || { cat "$tmp/daemon.log" >&2; fail "the installed daemon did not start"; }
	sleep 0.05
done
curl -fsS "http://$addr/api/sloptimize/status" >"$tmp/status.json" || fail "GET /api/sloptimize/status"
grep -q '"pageDir": *"/usr/share/sloptimize/page-runtime"' "$tmp/status.json" ||
	fail "the installed daemon does not serve /usr/share/sloptimize/page-runtime: $(grep -o '"pageDir":[^,]*' "$tmp/status.json")"
/usr/bin/sloptimize watch --project "$P" >"$tmp/watch.out" 2>"$tmp/watch.err" &
pids="$pids $!"
i=0
until grep -q "connected to" "$tmp/watch.err"; do
	i=$((i + 1)); [ $i -lt 200 ] || { cat "$tmp/watch.err" >&2; fail "the installed watch did not connect"; }
	sleep 0.05
done
printf '{"type":"hitch","at":"%s","frame":7,"frameMs":240.5,"phase":"play","build":"deb-1","minted":["mat_a@rock"],"classification":[{"guess":"shader-compile","confidence":"medium","evidence":"programs +2"}]}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" >>"$P/.sloptimize/perf.jsonl"
i=0
until grep -q '^sloptimize hitch ' "$tmp/watch.out"; do
	i=$((i + 1)); [ $i -lt 200 ] || { cat "$tmp/watch.out" "$tmp/watch.err" "$tmp/daemon.log" >&2; fail "no wake line for the appended hitch"; }
	sleep 0.05
done
ok "the installed daemon woke the installed watch: $(grep -m1 '^sloptimize hitch ' "$tmp/watch.out")"

# the page runtime it serves is the npm tarball's, byte for byte
mkdir -p "$tmp/npm"
tar -xzf "/usr/share/sloptimize/npm/sloptimize-$V.tgz" -C "$tmp/npm"
for f in recorder.js panel.js fold.js; do
	curl -fsS "http://$addr/page-runtime/$f" -o "$tmp/served.$f" || fail "GET /page-runtime/$f"
	cmp -s "$tmp/served.$f" "$tmp/npm/package/$f" || fail "the daemon serves a $f that is not the npm tarball's"
done
ok "the daemon serves the npm tarball's own files"

set +e
/usr/bin/sloptimize doctor --project "$P" >"$tmp/doctor.out" 2>&1
rc=$?
set -e
[ $rc -le 1 ] || { cat "$tmp/doctor.out" >&2; fail "doctor exited $rc"; }
grep -q '^ok *project' "$tmp/doctor.out" || { cat "$tmp/doctor.out" >&2; fail "doctor did not check the project"; }
grep -q "daemon" "$tmp/doctor.out" || fail "doctor said nothing of the daemon"
ok "sloptimize doctor (exit $rc)"

for p in $pids; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=""

# --- purge ---------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive $APT purge sloptimize >"$tmp/purge.out" 2>&1 ||
	{ cat "$tmp/purge.out" >&2; fail "apt-get purge sloptimize"; }
! dpkg -s sloptimize >/dev/null 2>&1 || fail "still installed after purge"
while IFS= read -r f; do
	[ -d "$f" ] && continue		# /usr, /usr/bin: not ours alone
	[ -e "$f" ] || [ -L "$f" ] && echo "$f"
done <"$tmp/files" >"$tmp/left"
for d in /usr/share/sloptimize /usr/share/doc/sloptimize; do
	[ ! -e "$d" ] || echo "$d" >>"$tmp/left"
done
[ ! -s "$tmp/left" ] || fail "left after purge: $(cat "$tmp/left")"
ok "apt-get purge: nothing of it is left"
