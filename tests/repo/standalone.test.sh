#!/bin/sh
# standalone — the repository stands alone: what a clone holds does not
# lead outside it, nor to a file it does not have.  A symbolic link committed by accident (a worktree's
# node_modules pointing at another checkout's, say) works on the machine
# that made it and dangles, or worse reaches into another tree, on every
# other one; .gitignore's "node_modules" names the link as well as the
# folder, and this checks what got past it anyway.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "skip: not a git checkout"; exit 0; }

n=0
bad=""
# mode 120000 is a symbolic link; its blob is the target's text
for p in $(git ls-files -s | awk '$1 == "120000" { print $4 }'); do
	n=$((n + 1))
	t=$(git cat-file blob ":$p")
	case "$t" in
	/*)	bad="$bad $p->$t" ;;
	*)	# relative: resolve against the link's folder, lexically
		d=$(dirname "$p")
		r=$(cd "$d" 2>/dev/null && realpath -m "$t") || r=""
		case "$r" in
		"$top"/*) ;;
		*) bad="$bad $p->$t" ;;
		esac ;;
	esac
done
[ -z "$bad" ] || fail "links leading outside the repository:$bad"
echo "ok   $n committed links, none leading outside the repository"

m=$(git ls-files | grep -c '\(^\|/\)node_modules\(/\|$\)' || true)
[ "$m" = 0 ] || fail "$m committed paths under a node_modules"
echo "ok   no committed node_modules"

# Every relative import of the runtime's and the tests' modules names a
# file the clone has (a module a test writes itself, as budgets-page's
# count.js, is listed): a moved file whose importer still names the old
# place fails here, not only when its suite happens to run.
git ls-files -z '*.mjs' '*.js' | node -e '
const fs = require("fs"), path = require("path");
const made = new Set(["tests/budgets-page/count.js"]);
let n = 0, bad = [];
for (const f of fs.readFileSync(0, "utf8").split("\0")) {
  if (!f || f.includes("node_modules/")) continue;
  const s = fs.readFileSync(f, "utf8");
  for (const m of s.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["\x27](\.{1,2}\/[^"\x27]+)["\x27]/g)) {
    const t = path.normalize(path.join(path.dirname(f), m[1]));
    n++;
    if (!fs.existsSync(t) && !made.has(t)) bad.push(`${f}: ${m[1]}`);
  }
}
if (bad.length) { console.error("FAIL: relative imports that name no file:\n  " + bad.join("\n  ")); process.exit(1); }
console.log(`ok   ${n} relative imports, each naming a file the clone has`);
'
