#!/bin/sh
# linked — what the two programs link: libuv, libwebsockets, libcjson, and
# not libcurl, libnotify or glib, which are dlopen()ed when the sink or
# desktop bubbles are used (sink/lazycurl.h, notifier/lazynotify.h; the
# memory that costs is in docs/performance.md).  Read from the dynamic
# section (what the loader maps at exec) and from ldd (with everything
# those pull in).  And that only the daemon defines recv(2) (its tap).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${SLOPTIMIZE_BUILD:-$top/build}
status=0
fail() { echo "FAIL: $*"; status=1; }

for p in sloptimized sloptimize; do
	bin="$B/$p"
	[ -x "$bin" ] || { fail "no $bin"; continue; }
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	all=$(ldd "$bin") || { fail "ldd $bin"; continue; }
	# the check reads what it claims to: the libraries that must be there
	for want in libuv libwebsockets libcjson; do
		echo "$needed" | grep -q "^$want\." || fail "$p does not link $want: $needed"
	done
	for lib in libcurl libnotify libglib-2.0 libgio-2.0 libgobject-2.0 \
	    libgdk_pixbuf-2.0 libgnutls libgssapi_krb5 libldap; do
		if echo "$needed" | grep -q "^$lib[.-]"; then
			fail "$p links $lib"
		fi
		if echo "$all" | grep -q "^[[:space:]]*$lib[.-]"; then
			fail "$p maps $lib at exec: $(echo "$all" | grep "$lib")"
		fi
	done
	[ "$status" -eq 0 ] &&
	    echo "ok: $p links $(echo "$needed" | wc -l) libraries, $(echo "$all" | wc -l) with theirs; none of libcurl, libnotify, glib"
done

# recv(2) is interposed for the daemon's raw header checks (daemon/tap.h)
# and nowhere else: the CLI, its libwebsockets and a dlopen()ed libcurl
# call libc's.  A definition (T) in sloptimize would put every one of
# their reads through the daemon's tap.  Where the system cannot
# interpose (macOS, docs/api.md) the daemon defines none either.
defines_recv() { nm "$1" 2>/dev/null | grep -q '^[0-9a-f]* T _\{0,1\}recv$'; }
if command -v nm >/dev/null; then
	if [ -x "$B/sloptimize" ] && defines_recv "$B/sloptimize"; then
		fail "sloptimize defines recv(): $(nm "$B/sloptimize" | grep ' recv$')"
	elif [ -x "$B/sloptimize" ]; then
		nm "$B/sloptimize" | grep -q '^[0-9a-f]* T _*main$' ||
		    fail "nm shows no main in sloptimize: is it reading the symbols?"
		echo "ok: sloptimize defines no recv (libc's is the one it calls)"
	fi
	if [ -x "$B/sloptimized" ]; then
		if [ "$(uname -s)" = Darwin ]; then
			defines_recv "$B/sloptimized" &&
			    fail "sloptimized defines recv() on macOS, where it cannot interpose"
		elif defines_recv "$B/sloptimized"; then
			echo "ok: sloptimized defines recv (the tap)"
		else
			fail "sloptimized does not define recv: its raw header checks see nothing"
		fi
	fi
else
	fail "no nm to read the programs' symbols"
fi
exit "$status"
