#!/bin/sh
# packaging/deb/build.sh — `make deb`: sloptimize_VERSION_ARCH.deb with
# dpkg-deb, from a build of its own (docs/packaging.md).
#
#  - The programs are built with PREFIX=/usr in OBJ/obj, apart from the
#    source tree's build/: the daemon finds its page runtime at the share
#    path compiled in from PREFIX, and build/ keeps serving the checkout.
#  - Debian's hardening flags (dpkg-buildflags, hardening=+all) go in
#    through the Makefile's OPT and LDFLAGS: CFLAGS on make's command line
#    would replace the Makefile's own.
#  - `make install` and `make install-service` fill the tree, exactly as
#    they would /usr; then what Debian asks of a binary package: stripped
#    programs, compressed manual pages and changelog, a copyright file,
#    md5sums, root-owned files with fixed times (SOURCE_DATE_EPOCH).
#  - Depends: what dpkg-shlibdeps finds the programs linked against, plus
#    libwebsockets-evlib-uv, the event-loop plugin libwebsockets loads at
#    run time for the libuv loop.  Recommends: what they dlopen() on first
#    use (libnotify4, libcurl4) and chromium (--launch, the bench).
#
# Environment: VERSION, OUT (where the .deb goes), OBJ (scratch), MAKE.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${VERSION:?}" "${OUT:?}" "${OBJ:?}"
MAKE=${MAKE:-make}
say() { printf 'deb: %s\n' "$*"; }
die() { printf 'deb: %s\n' "$*" >&2; exit 1; }

for t in dpkg-deb dpkg-shlibdeps dpkg-buildflags strip gzip; do
	command -v "$t" >/dev/null || die "$t is missing: make deps-deb installs dpkg-dev"
done
arch=$(dpkg --print-architecture)
maint=${DEB_MAINTAINER:-"sloptimize developers <sloptimize@users.noreply.github.com>"}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || date +%s)}
deb=$OUT/sloptimize_${VERSION}_$arch.deb
root=$OBJ/root
rm -rf "$root" "$OBJ/shlibs"
mkdir -p "$root" "$OUT"

# --- build and install into the tree ---------------------------------------
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
opt="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$MAKE" -C "$top" --no-print-directory "$@"; }
say "building with PREFIX=/usr in $OBJ/obj"
mk BUILD="$OBJ/obj" PREFIX=/usr OPT="$opt" LDFLAGS="$ldflags" \
    install DESTDIR="$root" >"$OBJ/install.log" ||
	{ cat "$OBJ/install.log" >&2; die "make install failed"; }
mk BUILD="$OBJ/obj" PREFIX=/usr install-service DESTDIR="$root" \
    UNITDIR=/usr/lib/systemd/user BINDIR=/usr/bin \
    DOCDIR=/usr/share/doc/sloptimize >>"$OBJ/install.log" ||
	{ cat "$OBJ/install.log" >&2; die "make install-service failed"; }

# --- what Debian asks of the tree ------------------------------------------
for b in "$root"/usr/bin/*; do
	strip --remove-section=.comment --remove-section=.note --strip-unneeded "$b"
done
find "$root/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +
doc=$root/usr/share/doc/sloptimize
install -d "$doc"
install -m 644 "$here/copyright" "$doc/copyright"
date=$(LC_ALL=C date -u -R -d "@$epoch" 2>/dev/null || LC_ALL=C date -u -R)
sed -e "s|@VERSION@|$VERSION|g" -e "s|@MAINTAINER@|$maint|g" \
    -e "s|@DATE@|$date|g" "$here/changelog.in" | gzip -9n >"$doc/changelog.gz"

# Depends, from the programs' NEEDED libraries (dpkg-shlibdeps reads a
# debian/control, so it runs in a scratch one)
mkdir -p "$OBJ/shlibs/debian"
printf 'Source: sloptimize\n\nPackage: sloptimize\nArchitecture: any\n' \
    >"$OBJ/shlibs/debian/control"
shlibs=$(cd "$OBJ/shlibs" && dpkg-shlibdeps -O -e"$root/usr/bin/sloptimize" \
    -e"$root/usr/bin/sloptimized" 2>"$OBJ/shlibdeps.log" |
    sed -n 's/^shlibs:Depends=//p') ||
	{ cat "$OBJ/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
[ -n "$shlibs" ] || { cat "$OBJ/shlibdeps.log" >&2; die "dpkg-shlibdeps found no libraries"; }
depends="$shlibs, libwebsockets-evlib-uv"

find "$root" -type d -exec chmod 755 {} +
find "$root" -type f -exec chmod 644 {} +
chmod 755 "$root"/usr/bin/*
mkdir -p "$root/DEBIAN"
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
size=$(du -sk "$root/usr" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maint|" \
    -e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$depends|" "$here/control.in" \
    >"$root/DEBIAN/control"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$epoch" {} +

rm -f "$deb"
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
say "$deb"
say "Depends: $depends"
if command -v lintian >/dev/null; then
	# (TMPDIR: lintian 2.116 leaves an mldbm-elf-* file behind a run)
	mkdir -p "$OBJ/lintian"
	TMPDIR=$OBJ/lintian lintian --tag-display-limit 0 "$deb" |
	    sed 's/^/lintian: /' || true
	rm -rf "$OBJ/lintian"
	say "lintian ran (docs/packaging.md explains each tag it may still give)"
fi
