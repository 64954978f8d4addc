#!/bin/sh
# standalone — the repository stands alone: what a clone holds does not
# lead outside it.  A symbolic link committed by accident (a worktree's
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
