#!/bin/sh
# launchd/install.sh — `make install-service` on macOS: one LaunchAgent per
# game project, with its paths filled in, then (only on a live install)
# bootstrapped into the user's GUI domain.  Every step is printed.
#
# launchd has no templates, so the agent is per project and PROJECT is
# required.  Its label is dev.sloptimize.sloptimized.<name>-<id>, where
# <name>-<id> is the daemon's state-directory name (DESIGN §4: the folder's
# name and the FNV-1a 32 of its absolute path): two projects both called
# "game" get two agents, two logs, two state directories.
#
# Environment (the Makefile passes all of it):
#   DESTDIR   staging root; when set, launchctl is never run and PROJECT
#             need not exist on this machine (it must be absolute)
#   AGENTDIR  where the plist goes (~/Library/LaunchAgents)
#   LOGDIR    where the agent's log goes (~/Library/Logs/sloptimize)
#   BINDIR    where sloptimized is installed
#   PROJECT   the game project
set -eu

say() { printf 'install-service: %s\n' "$*"; }
die() { printf 'install-service: %s\n' "$*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
: "${DESTDIR=}" "${PROJECT=}"
for v in AGENTDIR LOGDIR BINDIR; do
	eval "[ -n \"\${$v:-}\" ]" || die "$v is not set"
done
[ -n "$PROJECT" ] || die "the LaunchAgent is per project:" \
    "make install-service PROJECT=/path/to/game"

# The project's physical absolute path, as the daemon resolves it.
if [ -d "$PROJECT" ]; then
	proj=$(cd "$PROJECT" && pwd -P)
elif [ -n "$DESTDIR" ]; then
	case $PROJECT in
	/*) proj=$PROJECT ;;
	*) die "PROJECT must be absolute when it does not exist here" ;;
	esac
else
	die "PROJECT=$PROJECT is not a directory"
fi
while [ "${proj%/}" != "$proj" ] && [ "$proj" != / ]; do
	proj=${proj%/}
done

# FNV-1a 32 of the path's bytes, in shell arithmetic (64-bit in every
# shell we meet, and the product never exceeds 2^57).
fnv1a32() {
	h=2166136261
	for b in $(printf '%s' "$1" | od -An -v -tu1); do
		h=$(( ((h ^ b) * 16777619) & 4294967295 ))
	done
	printf '%08x' "$h"
}
name=${proj##*/}
[ -n "$name" ] || name=root
# The label and file names keep to [A-Za-z0-9._-].
safe=$(printf '%s' "$name" | LC_ALL=C tr -c 'A-Za-z0-9._-' '_')
id=$(fnv1a32 "$proj")
label="dev.sloptimize.sloptimized.$safe-$id"
logfile="$LOGDIR/$safe-$id.log"

# Values go into XML text (escape & < >) through sed (escape \ | &).
xml() {
	printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' \
	    -e 's/>/\&gt;/g' -e 's/[\\|&]/\\&/g'
}

dir="$DESTDIR$AGENTDIR"
plist="$dir/$label.plist"
mkdir -p "$dir"
sed -e "s|@LABEL@|$(xml "$label")|g" -e "s|@BINDIR@|$(xml "$BINDIR")|g" \
    -e "s|@PROJECT@|$(xml "$proj")|g" -e "s|@LOGFILE@|$(xml "$logfile")|g" \
    "$here/dev.sloptimize.sloptimized.plist" >"$plist.tmp"
if grep -q '@[A-Z]*@' "$plist.tmp"; then
	rm -f "$plist.tmp"
	die "placeholder left unsubstituted in $plist"
fi
chmod 644 "$plist.tmp"
mv -f "$plist.tmp" "$plist"
say "installed $plist"
say "  label $label, project $proj, log $logfile"

if [ -n "$DESTDIR" ]; then
	say "DESTDIR is set: launchctl is left alone"
	exit 0
fi

[ -x "$BINDIR/sloptimized" ] ||
	say "warning: $BINDIR/sloptimized is not installed yet (make install)"
mkdir -p "$LOGDIR"
command -v plutil >/dev/null 2>&1 && plutil -lint "$plist" >/dev/null
domain="gui/$(id -u)"
# Replace a loaded copy (a re-install after an upgrade) rather than fail.
if launchctl print "$domain/$label" >/dev/null 2>&1; then
	launchctl bootout "$domain/$label"
	say "ran: launchctl bootout $domain/$label"
fi
launchctl bootstrap "$domain" "$plist"
say "ran: launchctl bootstrap $domain $plist"
say "see: launchctl print $domain/$label; tail -f '$logfile'"
