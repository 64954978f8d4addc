#!/bin/sh
# init — `sloptimize init` on fresh Vite games (issue 24): a js config, a
# ts config with plugins of its own, configs it cannot edit (they get the
# lines to paste, and are not touched), a second run that changes nothing,
# the user's own text kept byte for byte around what is added; without a
# terminal nothing is written unless --yes; and what it writes works: npm
# installs the package from the copy, and the config loads the plugin.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${SLOPTIMIZE_BUILD:-$top/build}
S=$B/sloptimize
V=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' "$top/Makefile")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/init-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
expect_rc() {	# rc, command...
	want=$1; shift
	set +e; "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; got=$?; set -e
	[ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, want $want"; }
}
same() { cmp -s "$1" "$2" || { diff -u "$1" "$2" >&2 || true; fail "$3"; }; }

# the tarball init copies: make dist, in a make of our own
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top" dist BUILD="$B" >/dev/null
TGZ=$B/sloptimize-$V.tgz
[ -f "$TGZ" ] || fail "make dist made no $TGZ"
SPEC="file:.sloptimize/npm/sloptimize-$V.tgz"

# --- a js config: defineConfig without plugins -------------------------------
P=$tmp/js
mkdir -p "$P"
cat >"$P/package.json" <<'EOF'
{
    "name": "my-game",
    "version": "1.2.3",
    "scripts": { "dev": "vite" },
    "devDependencies": {
        "vite": "8.3.8"
    }
}
EOF
cat >"$P/vite.config.js" <<'EOF'
// @ts-check
import { defineConfig } from 'vite';

// my own comment, kept
export default defineConfig({
  server: { port: 3000 },
});
EOF
printf 'node_modules/\ndist\n*.tgz' >"$P/.gitignore"	# no final newline
for f in package.json vite.config.js .gitignore; do cp "$P/$f" "$tmp/js.$f"; done

# not a terminal, no --yes: shown, nothing written, exit 1 (not set up)
expect_rc 1 "$S" init --project "$P"
grep -q "update .*package.json" "$tmp/out" || fail "the plan does not name package.json"
grep -q "\"sloptimize\": \"$SPEC\"" "$tmp/out" || fail "the plan does not show the devDependency"
grep -q "Nothing written" "$tmp/out" || fail "no word that nothing was written"
grep -q "sloptimized --project $P" "$tmp/out" || fail "no word on how to start the daemon: $(cat "$tmp/out")"
for f in package.json vite.config.js .gitignore; do same "$tmp/js.$f" "$P/$f" "$f written without --yes"; done
[ ! -e "$P/.sloptimize" ] && [ ! -e "$P/sloptimize.budgets.json" ] || fail "files made without --yes"
expect_rc 1 "$S" init --project "$P" --dry-run --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["written"] is False, d; assert len(d["files"]) == 5, d' "$tmp/out" ||
	fail "--dry-run --json: $(cat "$tmp/out")"
ok "without a terminal or --yes: the plan, nothing written, exit 1"

expect_rc 0 "$S" init --project "$P" --yes
cmp -s "$TGZ" "$P/.sloptimize/npm/sloptimize-$V.tgz" || fail "the package copy is not the installed tarball"
python3 - "$P" "$tmp/js.package.json" "$SPEC" <<'EOF' || fail "package.json: $(cat "$P/package.json")"
import json, sys
P, orig, spec = sys.argv[1:]
old, new = json.load(open(orig)), json.load(open(P + "/package.json"))
assert new["devDependencies"].pop("sloptimize") == spec
assert new == old, (new, old)
text = open(P + "/package.json").read()
assert text.startswith('{\n    "name": "my-game",'), text      # the user's layout
assert '        "sloptimize": "' in text, text                  # at the user's indent
EOF
grep -qx "import sloptimize from 'sloptimize/vite';" "$P/vite.config.js" || fail "no import: $(cat "$P/vite.config.js")"
grep -q "plugins: \[sloptimize()\]" "$P/vite.config.js" || fail "no plugins line: $(cat "$P/vite.config.js")"
head -n 1 "$P/vite.config.js" | grep -qx "// @ts-check" || fail "// @ts-check is no longer first"
# the user's lines are all there, in order, with ours between them
grep -vx "import sloptimize from 'sloptimize/vite';" "$P/vite.config.js" | grep -vx "  plugins: \[sloptimize()\]," >"$tmp/js.rest"
same "$tmp/js.vite.config.js" "$tmp/js.rest" "vite.config.js: a line of the user's changed"
head -c "$(wc -c <"$tmp/js..gitignore")" "$P/.gitignore" | cmp -s - "$tmp/js..gitignore" || fail ".gitignore: the user's text changed"
for e in .sloptimize/bench/ .sloptimize/goldens/ '!.sloptimize/npm/*.tgz'; do
	grep -qxF "$e" "$P/.gitignore" || fail ".gitignore lacks $e: $(cat "$P/.gitignore")"
done
grep -qxF 'dist*.tgz' "$P/.gitignore" && fail "the user's last line was run into ours"
if grep -E '^/?\.sloptimize/?$|perf\.jsonl|fixes\.jsonl|\*\.jsonl' "$P/.gitignore" | grep -v '^#'; then
	fail "a ledger is ignored"
fi
python3 - "$P/sloptimize.budgets.json" <<'EOF' || fail "budgets: $(cat "$P/sloptimize.budgets.json")"
import json, sys
b = json.load(open(sys.argv[1]))
keys = {"perf.budget.draw_calls", "perf.budget.frame_ms_p95", "perf.budget.triangles", "perf.budget.programs", "perf.budget.gpu_ms_p95"}
assert set(b) == keys, b
for k, v in b.items():
    assert isinstance(v, (int, float)) or (set(v) == {"max", "level"} and v["level"] in ("error", "warn")), (k, v)
EOF
ok "--yes: the copy, the devDependency, the plugin, .gitignore, budgets; the user's text kept"

# a second run: nothing to do, nothing changed
find "$P" -type f | sort | xargs md5sum >"$tmp/sums1"
expect_rc 0 "$S" init --project "$P" --yes
grep -q "Nothing to write" "$tmp/out" || fail "a second run wanted to write: $(cat "$tmp/out")"
find "$P" -type f | sort | xargs md5sum | cmp -s - "$tmp/sums1" || fail "a second run changed a file"
expect_rc 0 "$S" init --project "$P"
ok "idempotent: a second run changes nothing and says so (exit 0, even without --yes)"

# what it wrote works: npm installs the package from the copy, and the
# config loads the plugin (npm's cache has vite: make deps ran npm ci)
( cd "$P" && npm install --prefer-offline --no-audit --no-fund --loglevel=error ) >"$tmp/npm.out" 2>&1 ||
	fail "npm install in the set-up game: $(cat "$tmp/npm.out")"
[ "$(node -p "require('$P/node_modules/sloptimize/package.json').version")" = "$V" ] || fail "the installed package is not $V"
[ ! -L "$P/node_modules/sloptimize" ] || fail "node_modules/sloptimize is a link"
grep -q "\"resolved\": \"$SPEC\"" "$P/package-lock.json" 2>/dev/null ||
	grep -q "\"sloptimize\": \"$SPEC\"" "$P/package-lock.json" || fail "the lockfile does not name the copy"
grep -q "$tmp" "$P/package.json" "$P/package-lock.json" && fail "an absolute path in package.json or the lockfile"
( cd "$P" && node --input-type=module -e "
const c = (await import('./vite.config.js')).default;
const p = c.plugins.find((x) => x && x.name === 'sloptimize');
if (!p || p.apply !== 'serve') throw new Error('no sloptimize plugin: ' + JSON.stringify(c));
" ) || fail "the written config does not load the plugin"
ok "npm install takes the package from the copy; the config loads the plugin"

# --- a ts config with plugins of its own, a multi-line import -----------------
P=$tmp/ts
mkdir -p "$P"
printf '{"name":"ts-game","devDependencies":{"typescript":"7.0.2","vite":"8.3.8"},"dependencies":{}}\n' >"$P/package.json"
cat >"$P/vite.config.ts" <<'EOF'
import { defineConfig } from 'vite';
import {
  somePlugin,
  otherPlugin,
} from './plugins';

export default defineConfig(({ mode }) => ({
  plugins: [somePlugin(), otherPlugin({ mode })],
  build: { target: 'es2022' },
}));
EOF
cp "$P/vite.config.ts" "$tmp/ts.vite.config.ts"
expect_rc 0 "$S" init --project "$P" --yes
sed -n '6p' "$P/vite.config.ts" | grep -qx "import sloptimize from 'sloptimize/vite';" ||
	fail "the import is not after the last import: $(cat "$P/vite.config.ts")"
grep -q "plugins: \[sloptimize(), somePlugin(), otherPlugin({ mode })\]," "$P/vite.config.ts" ||
	fail "sloptimize() is not first in the plugins: $(cat "$P/vite.config.ts")"
[ "$(grep -vx "import sloptimize from 'sloptimize/vite';" "$P/vite.config.ts" | sed 's/sloptimize(), //')" = "$(cat "$tmp/ts.vite.config.ts")" ] ||
	fail "vite.config.ts: a line of the user's changed"
grep -q '^{"name":"ts-game","devDependencies":{"sloptimize": ' "$P/package.json" || fail "one-line package.json: $(cat "$P/package.json")"
[ "$(wc -l <"$P/package.json")" = 1 ] || fail "a one-line package.json became several"
expect_rc 0 "$S" init --project "$P" --yes
grep -q "Nothing to write" "$tmp/out" || fail "ts: a second run wanted to write"
ok "vite.config.ts: after the last import, first in the plugins, the rest as it was"

# no config at all, TypeScript: a vite.config.ts of ours
P=$tmp/noconf
mkdir -p "$P"
printf '{"devDependencies":{"typescript":"7.0.2","vite":"8.3.8"}}\n' >"$P/package.json"
expect_rc 0 "$S" init --project "$P" --yes
grep -q "plugins: \[sloptimize()\]" "$P/vite.config.ts" || fail "no vite.config.ts made"
ok "no config: one is made (.ts in a TypeScript game)"

# --- configs it cannot edit: the exact lines, the file untouched ------------
for shape in spread cjs; do
	P=$tmp/$shape
	mkdir -p "$P"
	printf '{\n  "devDependencies": {\n    "vite": "8.3.8"\n  }\n}\n' >"$P/package.json"
	case $shape in
	spread)	conf=vite.config.mjs
		cat >"$P/$conf" <<'EOF'
import { defineConfig } from 'vite';
import { basePlugins } from './base.mjs';

export default defineConfig({
  plugins: basePlugins,
});
EOF
		;;
	cjs)	conf=vite.config.cjs
		printf "const { defineConfig } = require('vite');\nmodule.exports = defineConfig({ plugins: [] });\n" >"$P/$conf"
		;;
	esac
	cp "$P/$conf" "$tmp/$shape.conf"
	expect_rc 1 "$S" init --project "$P" --yes
	same "$tmp/$shape.conf" "$P/$conf" "$conf was edited though it cannot be safely"
	grep -q "by hand .*$conf" "$tmp/out" || fail "$shape: not said: $(cat "$tmp/out")"
	grep -qF "import sloptimize from 'sloptimize/vite';" "$tmp/out" || fail "$shape: the import line to paste is not shown"
	grep -qF "sloptimize()" "$tmp/out" || fail "$shape: the plugin call to paste is not shown"
	grep -q "\"sloptimize\": \"$SPEC\"" "$P/package.json" || fail "$shape: the rest was not written"
	expect_rc 1 "$S" init --project "$P" --yes
	same "$tmp/$shape.conf" "$P/$conf" "$conf was edited on a second run"
done
ok "a config it cannot edit: left as it is, the lines to paste shown, exit 1; the rest written"

# --- the user's own: a sloptimize dependency, budgets, .gitignore lines ------
P=$tmp/own
mkdir -p "$P"
printf '{\n  "devDependencies": {\n    "sloptimize": "file:../sloptimize/page-runtime",\n    "vite": "8.3.8"\n  }\n}\n' >"$P/package.json"
printf '{ "perf.budget.draw_calls": 40 }\n' >"$P/sloptimize.budgets.json"
printf '/.sloptimize/bench\n.sloptimize/goldens/\n' >"$P/.gitignore"
for f in package.json sloptimize.budgets.json; do cp "$P/$f" "$tmp/own.$f"; done
expect_rc 1 "$S" init --project "$P" --yes
same "$tmp/own.package.json" "$P/package.json" "the user's own sloptimize dependency was replaced"
grep -q "left alone .*package.json" "$tmp/out" || fail "the user's dependency was not said"
same "$tmp/own.sloptimize.budgets.json" "$P/sloptimize.budgets.json" "the user's budgets were replaced"
[ "$(grep -c 'sloptimize/bench' "$P/.gitignore")" = 1 ] || fail "an equivalent .gitignore line was added again"
[ "$(grep -c 'sloptimize/goldens' "$P/.gitignore")" = 1 ] || fail "an existing .gitignore line was added again"
ok "the user's own dependency, budgets and .gitignore lines are theirs"

# an older copy of ours is ours to move on
P=$tmp/older
mkdir -p "$P"
printf '{\n  "devDependencies": {\n    "sloptimize": "file:.sloptimize/npm/sloptimize-0.0.1.tgz",\n    "vite": "8.3.8"\n  }\n}\n' >"$P/package.json"
expect_rc 0 "$S" init --project "$P" --yes
grep -q "\"sloptimize\": \"$SPEC\"," "$P/package.json" || fail "an older copy of ours was not moved on: $(cat "$P/package.json")"
ok "an older copy of ours is updated, and said"

# --- not a Vite game; no tarball ----------------------------------------------
expect_rc 4 "$S" init --project "$tmp/nowhere"	# as every verb: no such project
mkdir -p "$tmp/empty"
expect_rc 2 "$S" init --project "$tmp/empty"
grep -q "no package.json" "$tmp/err" || fail "no package.json is not said"
P=$tmp/novite
mkdir -p "$P"
printf '{"name":"plain"}\n' >"$P/package.json"
expect_rc 1 "$S" init --project "$P" --yes
grep -q "no vite in package.json" "$tmp/out" || fail "a game without Vite is not told so"
[ ! -e "$P/vite.config.js" ] || fail "a vite config was made for a game without Vite"
ok "no project: exit 4; no package.json: exit 2; no Vite: said, no config made"

if [ -e "/usr/local/share/sloptimize/npm/sloptimize-$V.tgz" ]; then
	echo "skip the no-tarball case: /usr/local/share/sloptimize/npm has one"
else
	mkdir -p "$tmp/bin"
	cp "$S" "$tmp/bin/sloptimize"
	P=$tmp/notgz
	mkdir -p "$P"
	printf '{"devDependencies":{"vite":"8.3.8"}}\n' >"$P/package.json"
	cp "$P/package.json" "$tmp/notgz.json"
	expect_rc 1 "$tmp/bin/sloptimize" init --project "$P" --yes
	grep -q "no npm tarball" "$tmp/out" || fail "a missing tarball is not said: $(cat "$tmp/out")"
	grep -q "make dist" "$tmp/out" || fail "no word of make dist"
	same "$tmp/notgz.json" "$P/package.json" "package.json names a copy that was not made"
	grep -q "plugins: \[sloptimize()\]" "$P/vite.config.js" || fail "the rest was not written"
	ok "no tarball: said, with how to make one; package.json untouched; exit 1"
fi
echo "init: all passed"
