#!/bin/sh
# gate — every exit of `sloptimize gate` (docs/gate.md), with the frame
# from a PNG file (--frame: no browser here; tests/browser/gate-launch.test.mjs
# captures real frames) and the pairs of tests/fixtures/ssim/:
#   usage 2; no golden 4; --record refused off a terminal and with --json
#   (2, nothing written), declined at the terminal's prompt (1), accepted
#   there and with --yes (0, a goldens.jsonl line whose SHA-256 is the
#   file's); pass 0; the tint that luma passes fails per channel (1);
#   sizes that differ 3; a golden edited by hand, or never recorded, 3
#   even against a frame it matches; a golden that is not a PNG 3; a FIFO
#   golden 3 without a hang; a frame that is not a PNG, truncated or
#   missing 4; no --launch 4; no browser 4.  Every --json document against
#   schemas/gate-output.json, every goldens.jsonl line against
#   schemas/record.golden.json.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
S=$(cd "${SLOPTIMIZE_BUILD:-build}" && pwd)/sloptimize
F=$top/tests/fixtures/ssim
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gate-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; sed 's/^/     /' "$tmp/err" 2>/dev/null | head -n 20; }
export USER=tester

# run EXPECTED LABEL ARGS…: sloptimize gate ARGS, stdin from /dev/null (no
# terminal), its exit compared; stdout in $tmp/out, stderr in $tmp/err
run() {
	want=$1 label=$2; shift 2
	rc=0
	timeout 60 "$S" gate "$@" </dev/null >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$label (exit $rc)"; else
		echo "exit $rc, not $want: sloptimize gate $*" >>"$tmp/err"; bad "$label"; fi
}
# check LABEL SHELL-CONDITION
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
# field JSON-FILE EXPRESSION: a value of the document, through node
field() { node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(eval(process.argv[2]))' "$1" "$2"; }
schema() {	# LABEL FILE: the --json document is valid
	if node tests/validate.mjs schemas/gate-output.json "$2" >"$tmp/verr" 2>&1; then ok "$1: the document fits its schema"; else cat "$tmp/verr" >>"$tmp/err"; bad "$1: schema"; fi
}

P=$tmp/game
mkdir -p "$P"
G=$P/.sloptimize/goldens/crates.png
L=$P/.sloptimize/goldens.jsonl

# --- usage ------------------------------------------------------------------
run 0 "--help" --help
check "--help: the usage and the exits" 'grep -q "usage: sloptimize gate --scene S" "$tmp/out" && grep -q "3 not comparable" "$tmp/out"'
run 4 "a project that is not there" --scene crates --project "$tmp/absent"
check "no project: said" 'grep -q "no project at $tmp/absent" "$tmp/err"'
run 2 "no --scene" --project "$P" --frame "$F/same.a.png"
run 2 "a scene name that is a path" --scene ../x --project "$P"
run 2 "a scene name with a dot" --scene crates.actual --project "$P"
run 2 "threshold 0" --scene crates --threshold 0 --project "$P"
run 2 "threshold above 1" --scene crates --threshold 1.5 --project "$P"
run 2 "threshold not a number" --scene crates --threshold high --project "$P"
run 2 "--yes without --record" --scene crates --yes --project "$P"
run 2 "an unknown option" --scene crates --golden x --project "$P"

# --- no golden --------------------------------------------------------------
run 4 "no golden" --scene crates --project "$P" --frame "$F/same.a.png" --json
check "no golden: the verdict says so" '[ "$(field "$tmp/out" d.verdict)" = no-golden ]'
check "no golden: it says who records one" 'grep -q "gate --record --scene crates" "$tmp/err"'
schema "no golden" "$tmp/out"

# --- recording is the human's ------------------------------------------------
run 2 "--record off a terminal, without --yes" --record --scene crates --project "$P" --frame "$F/tint.b.png"
check "refused: it says why" 'grep -q "not on a terminal" "$tmp/err"'
run 2 "--record with --json, even with --yes" --record --yes --json --scene crates --project "$P" --frame "$F/tint.b.png"
check "refused: nothing written" '[ ! -e "$G" ] && [ ! -e "$L" ]'
run 4 "--record of a frame that is not a PNG" --record --yes --scene crates --project "$P" --frame "$top/tests/fixtures/png/not-png.png"
check "a bad frame: nothing written" '[ ! -e "$G" ] && [ ! -e "$L" ]'

if script -qec true /dev/null >/dev/null 2>&1; then
	# a terminal: the frame is shown, the person answers
	rc=0
	printf 'n\n' | timeout 60 script -qec "'$S' gate --record --scene crates --project '$P' --frame '$F/tint.b.png'" /dev/null >"$tmp/err" 2>&1 || rc=$?
	check "on a terminal, answered no: exit 1, nothing recorded" '[ "$rc" -eq 1 ] && [ ! -e "$G" ] && [ ! -e "$L" ]'
	check "on a terminal: the frame was put where the person can look" 'grep -q "crates.actual.png: look at it" "$tmp/err" && [ -s "$P/.sloptimize/gate/crates.actual.png" ]'
	rc=0
	printf 'y\n' | timeout 60 script -qec "'$S' gate --record --scene crates --project '$P' --frame '$F/tint.b.png'" /dev/null >"$tmp/err" 2>&1 || rc=$?
	check "on a terminal, answered yes: exit 0, recorded" '[ "$rc" -eq 0 ] && [ -s "$G" ] && [ "$(wc -l <"$L")" -eq 1 ]'
	check "the line says a person confirmed at the terminal" 'grep -q "\"confirmed\":\"terminal\"" "$L"'
	first=$(sha256sum "$G" | cut -d' ' -f1)
else
	echo "skip the terminal's prompt: no util-linux script(1) here"
	run 0 "--record --yes" --record --yes --scene crates --project "$P" --frame "$F/tint.b.png"
	first=$(sha256sum "$G" | cut -d' ' -f1)
fi
run 0 "--record --yes again (the same frame)" --record --yes --scene crates --project "$P" --frame "$F/tint.b.png"
check "two lines, the second replacing the first" '[ "$(wc -l <"$L")" -eq 2 ] && tail -n1 "$L" | grep -q "\"replaces\":\"$first\""'
check "the line's SHA-256 is the golden file's" 'tail -n1 "$L" | grep -q "\"sha256\":\"$(sha256sum "$G" | cut -d" " -f1)\""'
check "the line names who, the scene, the size and the source" 'tail -n1 "$L" | grep "\"who\":\"tester\"" | grep "\"scene\":\"crates\"" | grep "\"width\":160,\"height\":120" | grep -q "\"source\":\"file\""'
if node tests/validate.mjs --jsonl schemas/record.golden.json "$L" >"$tmp/err" 2>&1; then ok "goldens.jsonl fits its schema"; else bad "goldens.jsonl schema"; fi

# --- comparisons --------------------------------------------------------------
run 0 "the same frame: pass" --scene crates --project "$P" --frame "$F/tint.b.png" --json
schema "pass" "$tmp/out"
check "pass: SSIM 1 on every channel, nothing changed" '[ "$(field "$tmp/out" "[d.verdict, d.ssim.r, d.ssim.g, d.ssim.b, d.ssim.min, d.changed.pixels].join()")" = "pass,1,1,1,1,0" ]'
check "pass: the frame and the difference picture written, out of git" '[ -s "$P/.sloptimize/gate/crates.actual.png" ] && [ -s "$P/.sloptimize/gate/crates.diff.png" ] && grep -qx "\*" "$P/.sloptimize/gate/.gitignore"'
check "pass: the frame is labelled a file, not a capture" '[ "$(field "$tmp/out" d.frame.source)" = file ] && field "$tmp/out" "d.warnings.join()" | grep -q "not a capture"'

# the tint luma lets through
ref=$(node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const c = d.cases.find((c) => c.name === "tint"); console.log(c.luma, c.ssim[2], c.changedShare)' "$F/ssim.json")
luma=${ref%% *} ref=${ref#* } blue=${ref%% *} share=${ref#* }
run 1 "a tint luma passes (luma SSIM $luma): fail" --scene crates --project "$P" --frame "$F/tint.a.png" --json
schema "fail" "$tmp/out"
check "fail: luma would have passed at 0.98" 'node -e "process.exit($luma >= 0.98 ? 0 : 1)"'
check "fail: blue is the weakest, scikit-image's value" 'node -e "const d = JSON.parse(require(\"fs\").readFileSync(\"$tmp/out\", \"utf8\")); process.exit(d.ssim.weakest === \"blue\" && Math.abs(d.ssim.b - $blue) < 1e-9 && d.ssim.min === d.ssim.b && d.ssim.min < 0.98 ? 0 : 1)"'
check "fail: the changed share is the fixture's" 'node -e "const d = JSON.parse(require(\"fs\").readFileSync(\"$tmp/out\", \"utf8\")); process.exit(Math.abs(d.changed.share - $share) < 1e-12 && d.changed.maxDelta > 0 ? 0 : 1)"'
check "fail: a difference picture, a PNG of the frame's size" 'od -An -tx1 -j16 -N8 "$P/.sloptimize/gate/crates.diff.png" | tr -d " \n" | grep -qx "000000a000000078"'
run 1 "the text output says FAIL and names the channel" --scene crates --project "$P" --frame "$F/tint.a.png"
check "the text: FAIL, blue, the pictures" 'grep -q "FAIL — SSIM 0.95[0-9]* (blue) < 0.98" "$tmp/out" && grep -q "diff .*crates.diff.png" "$tmp/out" && grep -q "a file (--frame), not a capture" "$tmp/out"'
run 0 "the same tint at --threshold 0.95: pass" --scene crates --threshold 0.95 --project "$P" --frame "$F/tint.a.png"

run 3 "sizes differ: not comparable" --scene crates --project "$P" --frame "$F/odd.a.png" --json
schema "sizes differ" "$tmp/out"
check "sizes differ: said with both sizes, nothing judged" '[ "$(field "$tmp/out" d.verdict)" = incomparable ] && grep -q "37×23 and the golden 160×120" "$tmp/err" && [ "$(field "$tmp/out" "d.ssim === undefined")" = true ]'
run 4 "a frame that is not a PNG" --scene crates --project "$P" --frame "$top/tests/fixtures/png/not-png.png" --json
check "not a PNG: environment, said" '[ "$(field "$tmp/out" d.verdict)" = environment ] && grep -q "not a picture the gate can read" "$tmp/err"'
run 4 "a truncated frame" --scene crates --project "$P" --frame "$top/tests/fixtures/png/truncated.png"
run 4 "a frame file that is not there" --scene crates --project "$P" --frame "$tmp/nothing.png"
run 4 "no --launch and no daemon: the open tab is not reachable, the environment's" --scene crates --project "$P" --json
check "no --launch: environment, never a pass, said with what to do" '[ "$(field "$tmp/out" d.verdict)" = environment ] && grep -q "no daemon serves this project, and the game.s open tab is reached through it: .*or pass --launch" "$tmp/err"'
schema "no --launch" "$tmp/out"
export SLOPTIMIZE_BROWSER=/nonexistent
run 4 "--launch with no browser" --scene crates --project "$P" --launch --url http://127.0.0.1:9/ --json
unset SLOPTIMIZE_BROWSER
check "no browser: environment, with the install line" '[ "$(field "$tmp/out" d.verdict)" = environment ] && grep -q "SLOPTIMIZE_BROWSER=/nonexistent is not an executable file: install Chromium" "$tmp/err"'
schema "no browser" "$tmp/out"
run 2 "--timeout is whole seconds" --scene crates --project "$P" --launch --timeout 0

# --- goldens changed outside --record ----------------------------------------
cp "$G" "$tmp/golden.keep"
cp "$F/tint.a.png" "$G"
run 3 "a golden edited by hand, against the very frame it now is" --scene crates --project "$P" --frame "$F/tint.a.png" --json
schema "golden changed" "$tmp/out"
check "edited: golden-changed, loudly, nothing judged" '[ "$(field "$tmp/out" d.verdict)" = golden-changed ] && grep -q "CHANGED OUTSIDE \`gate --record\`" "$tmp/err" && [ "$(field "$tmp/out" "d.ssim === undefined && d.golden.sha256 !== d.golden.recorded.sha256")" = true ]'
run 3 "the text output says it too" --scene crates --project "$P" --frame "$F/tint.a.png"
check "the text: loud" 'grep -q "THE GOLDEN FOR SCENE .crates. WAS CHANGED OUTSIDE" "$tmp/err"'
cp "$tmp/golden.keep" "$G"
run 0 "the recorded golden put back: pass again" --scene crates --project "$P" --frame "$F/tint.b.png"

Q=$tmp/unrecorded
mkdir -p "$Q/.sloptimize/goldens"
cp "$F/tint.b.png" "$Q/.sloptimize/goldens/crates.png"
run 3 "a golden nobody recorded" --scene crates --project "$Q" --frame "$F/tint.b.png" --json
check "unrecorded: golden-changed, with no record" '[ "$(field "$tmp/out" "d.verdict + \" \" + d.golden.recorded")" = "golden-changed null" ] && grep -q "not recorded by \`gate --record\`" "$tmp/err"'
printf 'not json\n{"type":"golden","scene":"other","sha256":"x"}\n' >"$Q/.sloptimize/goldens.jsonl"
run 3 "lines of goldens.jsonl for nothing or other scenes do not make it trusted" --scene crates --project "$Q" --frame "$F/tint.b.png" --json
check "the unreadable line is said" 'field "$tmp/out" "d.warnings.join()" | grep -q "1 line(s) of .* are not golden records"'

# not a PNG, though its line matches (both written by hand)
R=$tmp/junk
mkdir -p "$R/.sloptimize/goldens"
printf 'GIF89a not a png\n' >"$R/.sloptimize/goldens/crates.png"
printf '{"type":"golden","at":"2026-12-01T00:00:00.000Z","scene":"crates","who":"x","sha256":"%s","width":160,"height":120,"source":"file","confirmed":"--yes"}\n' \
    "$(sha256sum "$R/.sloptimize/goldens/crates.png" | cut -d' ' -f1)" >"$R/.sloptimize/goldens.jsonl"
run 3 "a golden that is not a PNG" --scene crates --project "$R" --frame "$F/tint.b.png" --json
check "not a PNG: incomparable, said" '[ "$(field "$tmp/out" d.verdict)" = incomparable ] && grep -q "is not a readable PNG" "$tmp/err"'
rm "$R/.sloptimize/goldens/crates.png"
mkfifo "$R/.sloptimize/goldens/crates.png"
run 3 "a FIFO where the golden should be: refused, no hang" --scene crates --project "$R" --frame "$F/tint.b.png"
check "the FIFO: said" 'grep -q "cannot read the golden" "$tmp/err"'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
