#!/bin/sh
# systemd/install.sh — `make install-service` on Linux: install the user
# unit template with its paths filled in, then (only on a live install)
# tell the user's service manager and, given PROJECT, enable that
# project's instance.  Every step is printed; nothing is done silently.
#
# Environment (the Makefile passes all of it):
#   DESTDIR   staging root for packages; when set, the service manager is
#             never touched
#   UNITDIR   where the unit goes (without DESTDIR)
#   BINDIR    where sloptimized is installed (without DESTDIR): @BINDIR@
#   DOCDIR    where docs/service.md is installed: @DOCDIR@
#   PROJECT   optional: a game project to enable an instance for
set -eu

say() { printf 'install-service: %s\n' "$*"; }
die() { printf 'install-service: %s\n' "$*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
: "${DESTDIR=}" "${PROJECT=}"
[ -n "${UNITDIR:-}" ] || die "UNITDIR is not set"
[ -n "${BINDIR:-}" ] || die "BINDIR is not set"
[ -n "${DOCDIR:-}" ] || die "DOCDIR is not set"

# Paths go into ExecStart= unquoted; systemd would split them on blanks and
# expand '%', and sed below would trip on '|' and '&'.
for p in "$BINDIR" "$DOCDIR"; do
	case $p in
	/*) ;;
	*) die "not an absolute path: $p" ;;
	esac
	case $p in
	*[[:space:]%\\\"\'\|\&]*) die "unsupported character in path: $p" ;;
	esac
done

dir="$DESTDIR$UNITDIR"
unit="$dir/sloptimized@.service"
mkdir -p "$dir"
sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@DOCDIR@|$DOCDIR|g" \
    "$here/sloptimized@.service" >"$unit.tmp"
if grep -q '@[A-Z]*@' "$unit.tmp"; then
	rm -f "$unit.tmp"
	die "placeholder left unsubstituted in $unit"
fi
chmod 644 "$unit.tmp"
mv -f "$unit.tmp" "$unit"
say "installed $unit (ExecStart=$BINDIR/sloptimized)"

escape_hint='"$(systemd-escape --template=sloptimized@.service'
escape_hint="$escape_hint --path /path/to/game)\""
if [ -n "$DESTDIR" ]; then
	say "DESTDIR is set: the service manager is left alone"
	exit 0
fi

[ -x "$BINDIR/sloptimized" ] ||
	say "warning: $BINDIR/sloptimized is not installed yet (make install)"

# Is the unit directory one the user manager reads?  Only a warning: the
# manager might be configured in ways unit-paths cannot see from here.
if command -v systemd-analyze >/dev/null 2>&1 &&
    paths=$(systemd-analyze --user unit-paths 2>/dev/null); then
	printf '%s\n' "$paths" | grep -qx "$UNITDIR" ||
		say "warning: $UNITDIR is not in the user manager's unit" \
		    "path; set UNITDIR, or: systemctl --user link $unit"
fi

# A user manager is reachable when systemctl can talk to it: a desktop or
# ssh login session has one; root in a container, a CI job or `sudo make`
# usually has none (and reloading root's own manager is not the point).
if command -v systemctl >/dev/null 2>&1 &&
    systemctl --user show-environment >/dev/null 2>&1; then
	systemctl --user daemon-reload
	say "ran: systemctl --user daemon-reload"
	live=1
else
	say "no user service manager reachable from here; in your session run:"
	say "  systemctl --user daemon-reload"
	live=0
fi

if [ -z "$PROJECT" ]; then
	say "then enable it per project:"
	say "  systemctl --user enable --now $escape_hint"
	exit 0
fi

proj=$(cd "$PROJECT" 2>/dev/null && pwd -P) ||
	die "PROJECT=$PROJECT is not a directory"
inst=$(systemd-escape --template=sloptimized@.service --path "$proj")
if [ "$live" = 1 ]; then
	systemctl --user enable --now "$inst"
	say "ran: systemctl --user enable --now '$inst'"
	say "see: systemctl --user status '$inst'; journalctl --user -u '$inst'"
else
	say "  systemctl --user enable --now '$inst'"
fi
