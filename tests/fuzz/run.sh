#!/bin/sh
# Run every libFuzzer harness for SECONDS each, from a corpus seeded with
# the project's own fixtures, after replaying every input that ever
# crashed one (tests/fuzz/regress/<harness>/).  A crash leaves its input in
# BUILD/fuzz/crashes/<harness>/: copy it into regress/ under a name that
# says what it found, fix the bug, and it is a regression test for ever.
#
#   sh tests/fuzz/run.sh BUILD SECONDS
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-build-fuzz}" && pwd)
secs=${2:-60}
cd "$top"
corpus="$B/fuzz/corpus"
fail=0

# --- seed corpora (rebuilt every run: cheap, and they follow the fixtures)
seed() {	# harness, file
	mkdir -p "$corpus/$1"
	cp "$2" "$corpus/$1/seed-$(cksum <"$2" | cut -d' ' -f1)"
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-seed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 tests/genledger.py "$tmp/g" --records 300 --causes 40 >/dev/null
i=0
for f in tests/fixtures/*.jsonl "$tmp/g/.sloptimize/perf.jsonl" \
    "$tmp/g/.sloptimize/fixes.jsonl"; do
	while IFS= read -r line; do
		i=$((i + 1))
		[ $((i % 7)) -eq 0 ] || [ "${f#"$tmp"}" = "$f" ] || continue
		printf '%s' "$line" >"$tmp/line"
		seed fuzz_jscan "$tmp/line"
		seed fuzz_record "$tmp/line"
	done <"$f"
	{ printf '\003'; head -c 4000 "$f"; } >"$tmp/stream"
	seed fuzz_linesplit "$tmp/stream"
done
# checkpoints of the fixtures and of the generated ledger, under four
# sets of fold options (the harness writes them: fuzz_checkpoint.c)
if [ -x "$B/fuzz/fuzz_checkpoint" ]; then
	mkdir -p "$corpus/fuzz_checkpoint"
	for f in tests/fixtures/*.jsonl "$tmp/g/.sloptimize/perf.jsonl"; do
		case "$f" in *.fixes.jsonl) continue ;; esac
		b=${f##*/}
		FUZZ_CKPT_SEED="$f" FUZZ_CKPT_OUT="$corpus/fuzz_checkpoint/seed-${b%.jsonl}" \
		    "$B/fuzz/fuzz_checkpoint" >/dev/null 2>&1 || true
	done
fi
printf '\001sloptimize-cursor 1\ngeneration 3\noffset 10\ndev 2049\nino 1234\nsize 20\nhashlen 10\nhash 00000000deadbeef\n' >"$tmp/c"
seed fuzz_cursor "$tmp/c"
"$B/sloptimized" -n --project /tmp 2>/dev/null | sed '$d' >"$tmp/conf" ||
    printf '{"hitch-ms": 120, "allow-host": ["a.test"]}' >"$tmp/conf"
seed fuzz_config "$tmp/conf"
printf '{"listen": "[::1]:0", "loop": "propose", "allow-origin": ["http://x.test:*"]}' >"$tmp/conf"
seed fuzz_config "$tmp/conf"

# PNGs: the codec's and the SSIM's fixtures; a first byte of 1 has the
# harness put right CRCs in, 0 leaves the file as it is
for f in tests/fixtures/png/*.png tests/fixtures/ssim/*.png; do
	[ "$(wc -c <"$f")" -le 8000 ] || continue
	{ printf '\001'; cat "$f"; } >"$tmp/p"
	seed fuzz_png "$tmp/p"
	{ printf '\000'; cat "$f"; } >"$tmp/p"
	seed fuzz_png "$tmp/p"
done

# requests as a connection sends them: good ones, keep-alive with a body,
# and the header lines libwebsockets 4.1.6 misreads (docs/api.md)
printf '\007GET /api/sloptimize/status HTTP/1.1\r\nHost: localhost:7567\r\nOrigin: http://localhost:5173\r\nAccept: */*\r\n\r\n' >"$tmp/r"
seed fuzz_rawhdr "$tmp/r"
printf '\003POST /api/sloptimize/fixes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n{"title":"x"}\nGET / HTTP/1.1\r\nHost: [::1]\r\n\r\n' >"$tmp/r"
seed fuzz_rawhdr "$tmp/r"
printf '\040GET /api/sloptimize/events HTTP/1.1\r\nHost: localhost\r\nAcc: a\r\nOrigin: http://evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' >"$tmp/r"
seed fuzz_rawhdr "$tmp/r"
printf '\001POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\nHost: localhost\000.evil.com\r\n\r\n' >"$tmp/r"
seed fuzz_rawhdr "$tmp/r"

# the guards, the router and the write routes, seeded with the requests
# tests/daemon/api.test.mjs and tests/daemon/headers.test.mjs send (method byte, then
# the request, the target or the body; each harness's comment says how)
tok=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
n=0
guard() {	# flags byte (octal), the request's header lines
	n=$((n + 1)); f=$1; shift
	{ printf "\\$f"; for l in "$@"; do printf '%s\r\n' "$l"; done
	  printf '\r\n'; } >"$tmp/g$n"
	seed fuzz_guard "$tmp/g$n"
}
guard 000 'GET /api/sloptimize/status HTTP/1.1' 'Host: localhost:7567' \
    'Origin: http://localhost:5173' 'Accept: */*'
guard 001 'HEAD /api/sloptimize/status HTTP/1.1' 'Host: 127.0.0.1:7567'
guard 000 'OPTIONS /api/sloptimize/records HTTP/1.1' 'Host: [::1]:7567' \
    'Origin: http://localhost:5173' 'Access-Control-Request-Method: POST'
guard 000 'POST /api/sloptimize/fixes HTTP/1.1' 'Host: localhost:7567' \
    'Content-Type: application/json' 'Content-Length: 24' \
    "Authorization: Bearer $tok"
guard 001 'POST /api/sloptimize/fixes HTTP/1.1' 'Host: localhost' \
    'Content-Type: application/json; charset=utf-8 ' 'Content-Length: 24' \
    'Origin: http://localhost:5173'
guard 000 'PUT /api/sloptimize/settings HTTP/1.1' 'Host: a.test:80' \
    'Content-Type: application/json' 'Content-Length: 18' \
    'Origin: http://127.0.0.1:5173'
guard 000 'GET /api/sloptimize/ledger HTTP/1.1' 'Host: localhost:7567' \
    'Origin: http://evil.example' 'If-None-Match: "x", W/"f1"'
guard 000 'GET / HTTP/1.1' 'Host: rebind.evil.example:7567'
guard 000 'GET /api/sloptimize/events HTTP/1.1' 'Host: my.host' \
    'Sec-WebSocket-Origin: https://y.test:8443' 'Upgrade: websocket' \
    'Connection: Upgrade' 'Sec-WebSocket-Version: 13'
guard 000 'POST /api/sloptimize/records HTTP/1.1' 'Host: localhost' \
    'Transfer-Encoding: chunked' 'Origin: http://x.test:5173'
guard 000 'DELETE /api/sloptimize/fixes HTTP/1.1' 'Host: localhost' \
    'Content-Length: 5'
# what Chromium sends: a no-cors GET from another site's page (no
# Origin), the panel's own fetch, a link to the panel's page
guard 000 'GET /api/sloptimize/issues?limit=7 HTTP/1.1' 'Host: 127.0.0.1:7567' \
    'Sec-Fetch-Site: cross-site' 'Sec-Fetch-Mode: no-cors' 'Sec-Fetch-Dest: empty'
guard 001 'GET /api/sloptimize/issues HTTP/1.1' 'Host: 127.0.0.1:7567' \
    'Sec-Fetch-Site: same-origin' 'Sec-Fetch-Mode: cors' 'Sec-Fetch-Dest: empty'
guard 000 'GET / HTTP/1.1' 'Host: localhost:7567' 'Sec-Fetch-Site: same-site' \
    'Sec-Fetch-Mode: navigate' 'Sec-Fetch-Dest: document'
guard 000 'GET /api/sloptimize/events HTTP/1.1' 'Host: localhost:7567' \
    'Origin: http://localhost:5173' 'Sec-Fetch-Site: same-site' \
    'Sec-Fetch-Mode: websocket' 'Upgrade: websocket' 'Connection: Upgrade'

query() {	# method byte (octal: 0 GET 1 HEAD 2 POST 3 PUT 4 OPTIONS), path, query
	n=$((n + 1))
	if [ $# -gt 2 ]; then printf "\\$1%s\n%s" "$2" "$3"
	else printf "\\$1%s" "$2"; fi >"$tmp/q$n"
	seed fuzz_query "$tmp/q$n"
}
A=/api/sloptimize
query 000 $A/status
query 001 $A/status x=1
query 000 $A/ledger bytes=5000
query 000 $A/issues 'type=hitch&limit=3'
query 000 $A/issues 'status=open'
query 000 $A/issues 'include-automated=1&limit=10'
query 000 $A/issues 'from=2026-11-29T12:00:00Z&to=2026-11-29T13:00:00.500Z'
query 000 $A/issues 'type=x%26status%3Dopen'
query 000 $A/issues/A1B2C3D4 'include-automated=true'
query 000 $A/history 'buckets=48'
query 000 $A/history 'include-automated=1&buckets=12'
query 000 $A/events 'since=3:-1'
query 000 $A/events 'since=2:18446744073709551615'
query 002 $A/fixes
query 002 $A/records
query 002 $A/records 'page=k3v9q2x8m1c7b4za&seq=12&first=11'
query 002 $A/records 'page=tab-1&seq=9007199254740991&first=1'
query 002 $A/records 'page=a_b&seq=2&first=3'
query 002 $A/records 'seq=1&first=1&page=x&page=y'
query 003 $A/settings
query 004 $A/records
query 000 /page-runtime/lib/panel.js
query 000 /index.html
query 000 /

body() {	# route byte (octal: 0 fixes, 1 records, 2 settings), the body
	n=$((n + 1)); printf "\\$1%s" "$2" >"$tmp/b$n"
	seed fuzz_body "$tmp/b$n"
}
body 000 '{"title":"kept \u00e9\u4e2d","at":"2026-11-29T12:06:00Z"}'
body 000 '{"status":"proposed","title":"cache the program","footprints":["a1b2c3d4"]}'
body 000 '{"status":"merged","ref":"0badf00d"}'
body 000 '{"title":"Pool the particle buffers","issue":"a1b2c3d4","solution":"reuse","commit":"abc123","files":["src/fx.js"],"id":"deadbeef"}'
body 001 '[{"type":"hitch","at":"2026-11-29T12:00:00.000Z","ms":120,"frame":7},{"type":"usermark","at":"2026-11-29T12:00:01Z","label":"boss"}]'
body 001 "$(printf '{"type":"hitch","at":"2026-11-29T12:00:00Z","ms":80}\n\n{"type":"hitch"}\n[1]')"
body 002 '{"loop":"propose"}'
body 002 '{"v":1,"loop":"apply","source":"settings"}'
i=0
while IFS= read -r line; do	# real records, a few, as ingest batches
	i=$((i + 1))
	[ $((i % 40)) -eq 0 ] || continue
	body 001 "$line"
done <"$tmp/g/.sloptimize/perf.jsonl"

# seeds kept as files, one folder per harness (tests/fuzz/seeds/<harness>/)
for d in tests/fuzz/seeds/*/; do
	[ -d "$d" ] || continue
	for f in "$d"*; do [ -f "$f" ] && seed "$(basename "$d")" "$f"; done
done
# MCP requests, one a line (the first byte odd: initialize goes first);
# what tests/cli/mcp.test.mjs sends, and the ids and bytes that once broke it
mcp() {	# first byte (octal), lines
	n=$((n + 1)); f=$1; shift
	{ printf "\\$f"; for l in "$@"; do printf '%s\n' "$l"; done; } >"$tmp/m$n"
	seed fuzz_mcp "$tmp/m$n"
}
mcp 000 '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
mcp 001 '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"get_issues","arguments":{"limit":3,"status":"open"}}}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_history","arguments":{"buckets":4}}}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_issue","arguments":{"id":"0badf00d"}}}' \
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_ledger","arguments":{"records":5}}}' \
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}'
mcp 001 '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}' \
    '{"jsonrpc":"2.0","id":-8.4e52,"method":"tools/call","params":{"name":"wait_for_wake","arguments":{"timeout_ms":1e300,"max":2}}}' \
    '{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"propose_fix","arguments":{"title":"pool","footprints":["0badf00d"],"force":true}}}' \
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_status"}}'
mcp 000 'this is not JSON' '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' '"a string"' \
    '{"jsonrpc":"2.0","id":null,"method":"ping"}' '{"jsonrpc":"2.0","id":1.5,"method":"ping"}' \
    '{"jsonrpc":"2.0","id":7,"result":{}}' '{"jsonrpc":"2.0","id":8,"method":"pi\u0000ng"}'

# the harnesses' scratch files go where the trap above removes them
mkdir "$tmp/scratch"
TMPDIR=$tmp/scratch
export TMPDIR
for h in "$B"/fuzz/fuzz_*; do
	[ -x "$h" ] || continue
	name=${h##*/}
	mkdir -p "$corpus/$name" "$B/fuzz/crashes/$name"
	reg="tests/fuzz/regress/$name"
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		# (under the fuzzing run's memory limit: an input found out
		# of memory there must fail its replay too)
		if "$h" -rss_limit_mb=1024 "$reg"/* >"$B/fuzz/$name.regress.log" 2>&1; then
			echo "ok   $name: $(ls "$reg" | wc -l) regression inputs"
		else
			echo "FAIL $name: a regression input crashes it again"
			tail -n 30 "$B/fuzz/$name.regress.log"
			fail=1
			continue
		fi
	fi
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
	if "$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
	    -max_len=8192 -print_final_stats=1 $dict \
	    -artifact_prefix="$B/fuzz/crashes/$name/" "$corpus/$name" \
	    >"$B/fuzz/$name.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' \
		    "$B/fuzz/$name.log")
		echo "ok   $name: ${runs:-?} runs in ${secs}s, corpus $(ls "$corpus/$name" | wc -l)"
	else
		echo "FAIL $name — crash input in $B/fuzz/crashes/$name/"
		grep -m 20 -e ERROR -e SUMMARY -e '#[0-9] ' -e 'jscan ' \
		    "$B/fuzz/$name.log" || tail -n 30 "$B/fuzz/$name.log"
		fail=1
	fi
done
exit $fail
