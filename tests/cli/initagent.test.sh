#!/bin/sh
# initagent — `sloptimize init-agent` on a project: shows before it writes
# (and, without a terminal, writes nothing unless --yes), merges into a
# user's own .claude/settings.json and .mcp.json without changing a single
# entry of theirs, leaves an entry of theirs under our name alone, refuses
# to touch a file that is not JSON, is idempotent, and what it writes
# works: the hook command runs, the MCP entry starts a server that answers.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
S=${SLOPTIMIZE_BUILD:-$top/build}/sloptimize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {	# rc, command...
	want=$1; shift
	set +e; "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; got=$?; set -e
	[ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, want $want"; }
}
py() { python3 -c "$@"; }

P="$tmp/game"
mkdir -p "$P/.claude"
# the user's own settings: permissions, another hook on the same event,
# a hook on another event — all must survive byte-for-byte in meaning
cat >"$P/.claude/settings.json" <<'JSON'
{
  "permissions": { "allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"] },
  "hooks": {
    "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "echo mine" } ] } ],
    "PostToolUse": [ { "matcher": "Edit", "hooks": [ { "type": "command", "command": "npm run lint" } ] } ]
  },
  "model": "opus"
}
JSON
cat >"$P/.mcp.json" <<'JSON'
{ "mcpServers": { "playwright": { "command": "npx", "args": ["@playwright/mcp"] } } }
JSON
# the user's own CLAUDE.md, without a final newline
printf '# Orbit run\n\nUse tabs. Run `npm test` before committing.' >"$P/CLAUDE.md"
cp "$P/.claude/settings.json" "$tmp/settings.orig"
cp "$P/.mcp.json" "$tmp/mcp.orig"
cp "$P/CLAUDE.md" "$tmp/claude.orig"

# not a terminal, no --yes: it shows, it does not write
expect_rc 0 "$S" init-agent --project "$P"
grep -q "update .*settings.json" "$tmp/out" || fail "the plan does not name settings.json"
grep -q "hook-status --project $P" "$tmp/out" || fail "the plan does not show the hook"
grep -q "watch --project $P" "$tmp/out" || fail "the plan does not show the Monitor command"
grep -q "Nothing written" "$tmp/out" || fail "no word that nothing was written"
cmp -s "$P/.claude/settings.json" "$tmp/settings.orig" || fail "settings.json written without --yes"
cmp -s "$P/.mcp.json" "$tmp/mcp.orig" || fail ".mcp.json written without --yes"
[ ! -e "$P/.claude/skills" ] || fail "the skill was written without --yes"
cmp -s "$P/CLAUDE.md" "$tmp/claude.orig" || fail "CLAUDE.md written without --yes"
# the fragment is shown before anything is written, exactly as it will be
grep -q "update .*CLAUDE.md" "$tmp/out" || fail "the plan does not name CLAUDE.md"
grep -q "^<!-- sloptimize:begin" "$tmp/out" || fail "the plan does not show the CLAUDE.md fragment"
expect_rc 2 "$S" init-agent --project "$P" --scene 'no/such scene'
expect_rc 0 "$S" init-agent --project "$P" --dry-run --json
[ "$(py 'import json,sys; print(json.load(open(sys.argv[1]))["written"])' "$tmp/out")" = False ] || fail "--dry-run wrote"

# --yes: merged, the user's entries intact
expect_rc 0 "$S" init-agent --project "$P" --yes --scene crates
py '
import json, sys
P = sys.argv[1]
old = json.load(open(sys.argv[2])); new = json.load(open(P + "/.claude/settings.json"))
assert new["permissions"] == old["permissions"] and new["model"] == "opus", new
assert new["hooks"]["PostToolUse"] == old["hooks"]["PostToolUse"], new
ups = new["hooks"]["UserPromptSubmit"]
assert ups[0] == old["hooks"]["UserPromptSubmit"][0], ups
ours = [h for g in ups for h in g["hooks"] if "hook-status" in h["command"]]
assert len(ours) == 1 and ours[0]["type"] == "command", ups
assert ours[0]["command"].endswith("hook-status --project " + P), ours
oldm = json.load(open(sys.argv[3])); newm = json.load(open(P + "/.mcp.json"))
assert newm["mcpServers"]["playwright"] == oldm["mcpServers"]["playwright"], newm
s = newm["mcpServers"]["sloptimize"]
assert s["args"] == ["mcp", "--project", P] and s["type"] == "stdio", s
open(sys.argv[4], "w").write(ours[0]["command"] + "\n" + s["command"] + "\n")
' "$P" "$tmp/settings.orig" "$tmp/mcp.orig" "$tmp/cmds"
skill="$P/.claude/skills/sloptimize/SKILL.md"
[ -f "$skill" ] || fail "no SKILL.md"
grep -q "^name: sloptimize" "$skill" || fail "SKILL.md has no front matter"
grep -q "Never claim a fix without evidence" "$skill" || fail "SKILL.md lacks the doctrine"
grep -q "watch --project $P" "$skill" || fail "SKILL.md lacks the Monitor command"
# CLAUDE.md: the user's text first, byte for byte, then one fragment with
# the loop's commands, exit codes, stop conditions and hard rules
py '
import sys
old = open(sys.argv[1]).read(); new = open(sys.argv[2] + "/CLAUDE.md").read()
assert new.startswith(old + "\n\n"), new[:200]
frag = new[len(old) + 2:]
assert frag.startswith("<!-- sloptimize:begin") and frag.endswith("<!-- sloptimize:end -->\n"), frag
assert new.count("sloptimize:begin") == 1, new
for want in ["check --project " + sys.argv[2], "bench --scene crates --launch --compare last",
             "gate --scene crates --launch", "5 no detectable change", "3 no-detectable-change in a row",
             "2 gate failures", "iteration cap", "Never re-record a golden", "own measuring script",
             "shows reverted", "Bench scene: `crates`"]:
    assert want in frag, (want, frag)
' "$tmp/claude.orig" "$P"

# idempotent: nothing to do, nothing changed
for f in "$P/.claude/settings.json" "$P/.mcp.json" "$skill" "$P/CLAUDE.md"; do cp "$f" "$f.before"; done
expect_rc 0 "$S" init-agent --project "$P" --yes --scene crates
grep -q "Nothing to write" "$tmp/out" || fail "a second run wanted to write: $(cat "$tmp/out")"
grep -q "unchanged .*CLAUDE.md" "$tmp/out" || fail "CLAUDE.md not said unchanged: $(cat "$tmp/out")"
for f in "$P/.claude/settings.json" "$P/.mcp.json" "$skill" "$P/CLAUDE.md"; do
	cmp -s "$f" "$f.before" || fail "a second run changed $f"
done

# what it wrote works: the hook runs (silent, exit 0: no ledger yet), and
# the MCP entry starts a server that answers initialize
hook=$(sed -n 1p "$tmp/cmds")
sh -c "$hook" >"$tmp/hook.out" || fail "the hook command failed: $hook"
py '
import json, subprocess, sys
m = json.load(open(sys.argv[1] + "/.mcp.json"))["mcpServers"]["sloptimize"]
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
r = subprocess.run([m["command"]] + m["args"], input=json.dumps(init) + "\n", capture_output=True, text=True, timeout=10)
assert r.returncode == 0, r.stderr
ans = json.loads(r.stdout.splitlines()[0])
assert ans["result"]["serverInfo"]["name"] == "sloptimize", ans
' "$P"

# an entry of the user's under our name, an edited skill: left alone
Q="$tmp/other"
mkdir -p "$Q/.claude/skills/sloptimize"
printf '{"mcpServers":{"sloptimize":{"command":"/opt/mine/sloptimize","args":["mcp"]}}}\n' >"$Q/.mcp.json"
printf 'my own notes\n' >"$Q/.claude/skills/sloptimize/SKILL.md"
# a fragment of ours the user edited between the markers: theirs now
printf 'Mine.\n<!-- sloptimize:begin (written by `sloptimize init-agent`) -->\nbench only on Fridays\n<!-- sloptimize:end -->\nAfter.\n' >"$Q/CLAUDE.md"
cp "$Q/.mcp.json" "$tmp/q.mcp"
cp "$Q/CLAUDE.md" "$tmp/q.claude"
expect_rc 0 "$S" init-agent --project "$Q" --yes
grep -q "left alone .*\.mcp\.json" "$tmp/out" || fail "a differing entry of ours was not said: $(cat "$tmp/out")"
cmp -s "$Q/.mcp.json" "$tmp/q.mcp" || fail "the user's sloptimize entry was overwritten"
[ "$(cat "$Q/.claude/skills/sloptimize/SKILL.md")" = "my own notes" ] || fail "an edited SKILL.md was replaced"
cmp -s "$Q/CLAUDE.md" "$tmp/q.claude" || fail "an edited CLAUDE.md fragment was replaced"
grep -q "left alone .*CLAUDE.md" "$tmp/out" || fail "an edited CLAUDE.md fragment was not said: $(cat "$tmp/out")"
[ -f "$Q/.claude/settings.json" ] || fail "settings.json was not created beside them"

# a settings.json that is not JSON: not touched, exit 1, said
R="$tmp/broken"
mkdir -p "$R/.claude"
printf '{ "hooks": { oops\n' >"$R/.claude/settings.json"
cp "$R/.claude/settings.json" "$tmp/r.orig"
expect_rc 1 "$S" init-agent --project "$R" --yes
grep -q "not valid JSON" "$tmp/out" || fail "a broken settings.json was not said"
cmp -s "$R/.claude/settings.json" "$tmp/r.orig" || fail "a broken settings.json was rewritten"
[ -f "$R/.mcp.json" ] || fail "the other files were not written"
# a CLAUDE.md that did not exist: the fragment alone, naming no scene
# until a person does
head -1 "$R/CLAUDE.md" | grep -q "^<!-- sloptimize:begin" || fail "a new CLAUDE.md does not start with the fragment"
grep -q "none named yet" "$R/CLAUDE.md" || fail "without --scene the fragment names a scene"

# a symlinked settings.json (a dotfiles checkout) is written through
L="$tmp/linked"
mkdir -p "$L/.claude" "$tmp/dotfiles"
printf '{"model":"sonnet"}\n' >"$tmp/dotfiles/settings.json"
ln -s "$tmp/dotfiles/settings.json" "$L/.claude/settings.json"
expect_rc 0 "$S" init-agent --project "$L" --yes
[ -L "$L/.claude/settings.json" ] || fail "the symlink was replaced by a file"
grep -q hook-status "$tmp/dotfiles/settings.json" || fail "the hook did not reach the link's target"
echo "initagent: merged without touching the user's entries (CLAUDE.md too), idempotent, and what it wrote works"
