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
printf '\001sloptimize-cursor 1\ngeneration 3\noffset 10\ndev 2049\nino 1234\nsize 20\nhashlen 10\nhash 00000000deadbeef\n' >"$tmp/c"
seed fuzz_cursor "$tmp/c"
"$B/sloptimized" -n --project /tmp 2>/dev/null | sed '$d' >"$tmp/conf" ||
    printf '{"hitch-ms": 120, "allow-host": ["a.test"]}' >"$tmp/conf"
seed fuzz_config "$tmp/conf"
printf '{"listen": "[::1]:0", "loop": "propose", "allow-origin": ["http://x.test:*"]}' >"$tmp/conf"
seed fuzz_config "$tmp/conf"

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

for h in "$B"/fuzz/fuzz_*; do
	[ -x "$h" ] || continue
	name=${h##*/}
	mkdir -p "$corpus/$name" "$B/fuzz/crashes/$name"
	reg="tests/fuzz/regress/$name"
	if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
		if "$h" "$reg"/* >"$B/fuzz/$name.regress.log" 2>&1; then
			echo "ok   $name: $(ls "$reg" | wc -l) regression inputs"
		else
			echo "FAIL $name: a regression input crashes it again"
			tail -n 30 "$B/fuzz/$name.regress.log"
			fail=1
			continue
		fi
	fi
	if "$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
	    -max_len=8192 -print_final_stats=1 \
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
