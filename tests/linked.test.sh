#!/bin/sh
# linked — what the two programs link: libuv, libwebsockets, libcjson, and
# not libcurl, libnotify or glib, which are dlopen()ed when the sink or
# desktop bubbles are used (sink/lazycurl.h, notifier/lazynotify.h; the
# memory that costs is in docs/performance.md).  Read from the dynamic
# section (what the loader maps at exec) and from ldd (with everything
# those pull in).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
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
exit "$status"
