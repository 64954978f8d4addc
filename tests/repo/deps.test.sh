#!/bin/sh
# deps — `make run` installs only what it runs (issue 24), proved without
# uninstalling anything from this shared machine:
#  1. in a clean copy of the tree (the files a clone has), with dpkg-query
#     answering "not installed" for everything and apt-get and npm
#     recording what they are asked: `make deps` asks for the build and run
#     packages and no package of the test lab (chromium only without a
#     display); `make deps-test` asks for the test lab;
#  2. `make -n run` builds the two programs and no test binary (those need
#     cmocka, a test package);
#  3. the demo — what `make run` runs after building — reaches its first
#     wake line with a PATH holding only commands of packages `make deps`
#     installs or every Debian system has (Essential: yes).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${SLOPTIMIZE_BUILD:-$top/build}
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
command -v dpkg-query >/dev/null || { echo "skip: not a Debian system"; exit 0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/deps-test.XXXXXX")
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT

# What only the tests need: none of it may be asked for by `make deps`.
# Each name is checked against the Makefile's APT_TEST below, so this list
# cannot silently fall behind it.
TEST_ONLY="libcmocka-dev dbus dunst libnotify-bin xvfb nginx-light wrk valgrind
systemd curl jq bc time clang libclang-rt-14-dev clickhouse-server strace
lintian dpkg-dev groff-base python3"
BUILD_RUN="pkg-config libuv1-dev libwebsockets-dev libwebsockets-evlib-uv
libcjson-dev libnotify-dev libcurl4-openssl-dev libpng-dev"

# --- 1. a clean copy, the package tools recording --------------------------
mkdir "$tmp/copy"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	    tar --null -T - -cf -) | tar -xf - -C "$tmp/copy"
else
	# CI's tree is itself a copy without .git (.ci/run): all but what
	# building and installing made
	(cd "$top" && tar --exclude='./build*' --exclude=node_modules \
	    --exclude=./.deps-stamp --exclude=./.deps-test-stamp \
	    --exclude=./tests/artifacts -cf - .) | tar -xf - -C "$tmp/copy"
fi
[ -f "$tmp/copy/Makefile" ] && [ ! -e "$tmp/copy/build" ] && [ ! -e "$tmp/copy/demo/node_modules" ] ||
	fail "the copy is not a clean tree"
for p in $TEST_ONLY; do
	case $p in python3) continue ;; esac
	sed -n '/^APT_TEST :=/,/^[^[:space:]]/p' "$tmp/copy/Makefile" | grep -qw -- "$p" ||
		fail "$p is not in the Makefile's APT_TEST (update this test's list)"
done

mkdir "$tmp/stub"
cat >"$tmp/stub/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$tmp/stub/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/apt.log"
EOF
cat >"$tmp/stub/npm" <<EOF
#!/bin/sh
echo "\$PWD \$*" >>"$tmp/npm.log"
EOF
cat >"$tmp/stub/sudo" <<'EOF'
#!/bin/sh
exec "$@"
EOF
chmod 755 "$tmp/stub"/*

asked() {	# what `make TARGET` asked apt-get to install, one per line
	rm -f "$tmp/apt.log" "$tmp/npm.log" "$tmp/copy/.deps-stamp" "$tmp/copy/.deps-test-stamp"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$tmp/stub:$PATH" "$@" \
	    make -s -C "$tmp/copy" "$target" >"$tmp/make.out" 2>&1 ||
		{ cat "$tmp/make.out" >&2; fail "make $target with the package tools stubbed"; }
	sed -n 's/.*install .*--no-install-recommends //p' "$tmp/apt.log" 2>/dev/null | tr ' ' '\n' | sed '/^$/d' | sort -u
}

target=deps
asked env -u DISPLAY -u WAYLAND_DISPLAY >"$tmp/run.pkgs"
for p in $TEST_ONLY; do
	grep -qx -- "$p" "$tmp/run.pkgs" && fail "make deps asks for $p, which only the tests need: $(tr '\n' ' ' <"$tmp/run.pkgs")"
done
for p in $BUILD_RUN chromium; do
	grep -qx -- "$p" "$tmp/run.pkgs" || fail "make deps does not ask for $p: $(tr '\n' ' ' <"$tmp/run.pkgs")"
done
grep -q "/demo ci " "$tmp/npm.log" && grep -q "/tests ci " "$tmp/npm.log" || fail "make deps did not npm ci demo/ and tests/: $(cat "$tmp/npm.log")"
grep -q "/tests/adopt " "$tmp/npm.log" && fail "make deps ran npm in tests/adopt (a test's game)"
ok "make deps, no display: $(tr '\n' ' ' <"$tmp/run.pkgs")— nothing of the test lab"

asked env DISPLAY=:0 >"$tmp/run-display.pkgs"
grep -qx chromium "$tmp/run-display.pkgs" && fail "make deps asks for chromium though there is a display"
ok "make deps with a display: no chromium"

target=deps-test
asked env DISPLAY=:0 >"$tmp/test.pkgs"
for p in $TEST_ONLY $BUILD_RUN chromium; do
	case $p in python3) continue ;; esac	# a command: asked for only when absent
	grep -qx -- "$p" "$tmp/test.pkgs" || fail "make deps-test does not ask for $p"
done
grep -q '^CMD_TEST := .*python3:python3' "$tmp/copy/Makefile" && ! grep -q '^CMD_RUN := .*python3' "$tmp/copy/Makefile" ||
	fail "python3 must be a test command, not a run one"
grep -q "/tests/adopt ci " "$tmp/npm.log" || fail "make deps-test did not npm ci tests/adopt"
ok "make deps-test asks for the test lab too"

# --- 2. make -n run: the programs, no test binary ---------------------------
touch "$tmp/copy/.deps-stamp"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$tmp/stub:$PATH" \
    make -n -C "$tmp/copy" run >"$tmp/run-n.out" 2>&1 || { cat "$tmp/run-n.out" >&2; fail "make -n run"; }
grep -q -- "-o build/sloptimized " "$tmp/run-n.out" && grep -q -- "-o build/sloptimize " "$tmp/run-n.out" ||
	fail "make -n run does not build the programs: $(tail -5 "$tmp/run-n.out")"
if grep -e 'build/tests/' -e 'cmocka' "$tmp/run-n.out"; then
	fail "make run would build test binaries (cmocka is a test package)"
fi
grep -q "sh tests/demo.sh" "$tmp/run-n.out" || fail "make -n run does not run the demo"
ok "make -n run: the two programs and the demo, no test binary"

# --- 3. the demo with only run packages' commands --------------------------
# Essential packages, and what make deps installs (node, npm, chromium)
allowed=$(dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" {print $1}')
allowed="$allowed nodejs npm chromium chromium-common"
mkdir "$tmp/path"
for pkg in $allowed; do
	dpkg -L "$pkg" 2>/dev/null | grep -E '^/(usr/)?s?bin/[^/]+$' || true
done | sort -u | while IFS= read -r f; do
	[ -x "$f" ] && [ ! -d "$f" ] && ln -sf "$f" "$tmp/path/${f##*/}"
done
for c in sh sed node cat kill sleep; do
	[ -x "$tmp/path/$c" ] || command -v "$c" | grep -q '^[a-z]*$' || fail "$c is not among the allowed commands"
done
for c in python3 curl jq Xvfb dunst clickhouse-server nginx wrk; do
	[ ! -e "$tmp/path/$c" ] || fail "$c is among the allowed commands: the restriction is void"
done
unset DISPLAY WAYLAND_DISPLAY
SLOPTIMIZE_DEMO_ONCE=1 SLOPTIMIZE_BUILD="$B" PATH="$tmp/path" \
    timeout 240 sh "$top/tests/demo.sh" "$tmp/demo" >"$tmp/demo.out" 2>&1 || {
	cat "$tmp/demo.out" >&2; fail "the demo failed with only the run packages' commands"; }
grep -Eq '^sloptimize (hitch|usermark|jitter) ' "$tmp/demo.out" || { cat "$tmp/demo.out" >&2; fail "no wake line"; }
for pid in $(cat "$tmp/demo/pids" 2>/dev/null); do pids="$pids $pid"; done
ok "the demo reaches its wake lines with only commands of Essential packages, nodejs, npm and chromium: $(grep -Em1 '^sloptimize (hitch|usermark|jitter) ' "$tmp/demo.out" | cut -c1-60)…"
