#!/bin/sh
# bench-http: GET /api/sloptimize/ledger (2 MiB) against nginx serving the
# same bytes as a static file (one worker, sendfile), in the same run, with
# `wrk -t1 -c8`; then 304 revalidations per second and /issues latency on
# a catalogue of about 10,000 footprints (DESIGN §14: >= 70 % of nginx).
# /issues repeat requests against nginx serving the /issues body (issue
# 12: >= 50 % of nginx on an unchanged catalogue), and /status latency
# while /issues is requested in a loop on a catalogue of ~12,000 rows
# (issue 12: p99 <= 2 ms), beside /status alone; and /status's p50 and
# p90 while a catalogue of ~50,000 rows is asked for in a loop and the
# ledger grows, beside /status alone (the target tests/daemon/http.test.mjs held
# until issue 23: p90 <= 10 x idle p90 + 60 ms, p50 <= 10 x idle p50 +
# 20 ms; a latency target belongs here, not in `make test`).
# Figures, not a pass/fail test: the machine is shared and noisy.
#
#   sh tests/bench/http.sh BUILD_DIR [SECONDS]
#
# BENCH_QUICK=1: 2 s runs, one round, small ledgers.  Prints BENCH lines
# for tests/bench/table.py.  Ledgers are made once under BUILD_DIR/bench/.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD="$top/$BUILD" ;; esac
if bench_quick; then
	SECS=${2:-2}; ROUNDS=${ROUNDS:-1}; CAUSES_MB=20; STATUS_MB=20
else
	SECS=${2:-10}; ROUNDS=${ROUNDS:-3}; CAUSES_MB=150; STATUS_MB=200
fi
D="$BUILD/sloptimized"
tmp=$(mktemp -d)
chmod 755 "$tmp"	# nginx's worker drops root and must read www/
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

for tool in wrk nginx curl python3; do
	command -v "$tool" >/dev/null || { echo "bench-http: $tool is missing (make deps)"; exit 2; }
done

# ledgers, made once: 20 MB for /ledger, one whose catalogue has about
# 10,000 rows (genledger's causes are Zipf-distributed: 32,000 possible
# causes give ~10,000 seen in 150 MB), and fold.sh's with ~12,000 rows
# (60,000 possible in 200 MB) for /status under /issues
led_dir=$(bench_ledger "$BUILD" 20 400)
causes_dir=$(bench_ledger "$BUILD" "$CAUSES_MB" 32000)
status_dir=$(bench_ledger "$BUILD" "$STATUS_MB" 60000)

# Two cores or more: the servers on CPU 0, wrk on CPU 1, so neither
# server competes with the load generator (the same for both).
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	SRV="taskset -c 0"; CLI="taskset -c 1"
else
	SRV=""; CLI=""
fi

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_daemon PROJECT: sets $base once it answers and has folded everything
start_daemon() {
	port=$(free_port)
	XDG_STATE_HOME="$tmp/state-$port" $SRV "$D" --project "$1" \
	    --listen "127.0.0.1:$port" --desktop 0 2>"$tmp/daemon-$port.log" &
	pids="$pids $!"
	base="http://127.0.0.1:$port"
	i=0
	until curl -sf "$base/api/sloptimize/status" 2>/dev/null | grep -q '"ready":true'; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "the daemon did not get ready:"; cat "$tmp/daemon-$port.log"; exit 1; }
		sleep 0.1
	done
}

# rps URL [wrk args]: requests per second (and transfer) from wrk's summary
rps() {
	url=$1; shift
	$CLI wrk -t1 -c8 -d"${SECS}s" "$@" "$url" >"$tmp/wrk.out" 2>&1
	awk '/Requests\/sec/ {r=$2} /Transfer\/sec/ {t=$2} END {print r, t}' "$tmp/wrk.out"
}

echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); wrk -t1 -c8 -d${SECS}s," \
    "best of $ROUNDS alternating rounds${SRV:+; servers on CPU 0, wrk on CPU 1}"

# --- /ledger vs nginx ------------------------------------------------------
start_daemon "$led_dir"
mkdir -p "$tmp/www" "$tmp/nginx"
curl -sf -D "$tmp/headers" "$base/api/sloptimize/ledger" -o "$tmp/www/ledger.json"
etag=$(awk 'tolower($1) == "etag:" {print $2}' "$tmp/headers" | tr -d '\r')
bytes=$(stat -c %s "$tmp/www/ledger.json")
nport=$(free_port)
cat >"$tmp/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	default_type application/json;
	server {
		listen 127.0.0.1:$nport;
		root $tmp/www;
	}
}
CONF
$SRV nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" 2>"$tmp/nginx/stderr" &
pids="$pids $!"
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$nport/ledger.json"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat "$tmp/nginx/stderr" "$tmp/nginx/error.log"; exit 1; }
	sleep 0.05
done
echo "body: $bytes bytes (the last 2 MiB of a 20 MB perf.jsonl, as JSON)"
# best of ROUNDS, alternating, so a noisy neighbour hurts both alike
best() { echo "$1 $2" | awk '{print ($1 > $2) ? $1 : $2}'; }
ng=0 sl=0 r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	set -- $(rps "http://127.0.0.1:$nport/ledger.json"); ng=$(best "$ng" "$1")
	set -- $(rps "$base/api/sloptimize/ledger"); sl=$(best "$sl" "$1")
done
mb() { echo "scale=0; $1 * $bytes / 1048576" | bc -l; }
printf '%-40s %10s req/s %6s MiB/s\n' "nginx 1 worker, sendfile, same bytes" "$ng" "$(mb "$ng")"
printf '%-40s %10s req/s %6s MiB/s\n' "sloptimized GET /ledger" "$sl" "$(mb "$sl")"
echo "ratio: $(echo "scale=1; 100 * $sl / $ng" | bc -l) % of nginx (target >= 70 %)"
bench_line "GET /ledger (2 MiB), repeat requests" "$ng" "$sl" req/s ">= 70 % of nginx" \
    "$(bench_ge "$sl" "0.7 * $ng")" "nginx, same bytes"
set -- $(rps "$base/api/sloptimize/ledger" -H "If-None-Match: $etag")
printf '%-40s %10s req/s\n' "sloptimized 304 revalidation" "$1"
bench_line "GET /ledger, 304 revalidations" - "$1" req/s - -

# --- /issues with ~10,000 footprints ---------------------------------------
start_daemon "$causes_dir"
curl -sf "$base/api/sloptimize/issues" -o "$tmp/www/issues.json"
rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["issues"]))' "$tmp/www/issues.json")
size=$(stat -c %s "$tmp/www/issues.json")
ng=0 sl=0 r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	set -- $(rps "http://127.0.0.1:$nport/issues.json"); ng=$(best "$ng" "$1")
	set -- $(rps "$base/api/sloptimize/issues"); sl=$(best "$sl" "$1")
done
printf '%-40s %10s req/s\n' "nginx, the same /issues bytes" "$ng"
printf '%-40s %10s req/s\n' "sloptimized GET /issues, $rows rows" "$sl"
echo "ratio: $(echo "scale=1; 100 * $sl / $ng" | bc -l) % of nginx (target >= 50 %)"
bench_line "GET /issues ($rows rows), repeat requests" "$ng" "$sl" req/s ">= 50 % of nginx" \
    "$(bench_ge "$sl" "0.5 * $ng")" "nginx, same bytes"
$CLI wrk -t1 -c1 -d"${SECS}s" --latency "$base/api/sloptimize/issues" >"$tmp/wrk.out" 2>&1
echo "/issues: $rows rows, $size bytes; wrk -t1 -c1:"
awk '/Requests\/sec/ {print "  " $0} /^ +(50|90|99)%/ {print "  p" $0}' "$tmp/wrk.out"
$CLI wrk -t1 -c1 -d"${SECS}s" --latency "$base/api/sloptimize/issues?include-automated=1" >"$tmp/wrk.out" 2>&1
echo "/issues?include-automated=1 (a fresh fold of $(du -m "$causes_dir/.sloptimize/perf.jsonl" | cut -f1) MB on the thread pool):"
awk '/Requests\/sec/ {print "  " $0} /^ +(50|90|99)%/ {print "  p" $0}' "$tmp/wrk.out"

# --- /status while /issues is served ----------------------------------------
# wrk's latency in ms ("850.00us", "1.20ms", "2.01s")
p99ms() {
	awk '/^ +99%/ { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
	    print (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v }' "$1"
}
start_daemon "$status_dir"
rows=$(curl -sf "$base/api/sloptimize/issues" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["issues"]))')
$CLI wrk -t1 -c1 -d"${SECS}s" --latency "$base/api/sloptimize/status" >"$tmp/alone.out" 2>&1
$CLI wrk -t1 -c2 -d"$((SECS + 2))s" "$base/api/sloptimize/issues" >"$tmp/load.out" 2>&1 &
loadpid=$!
sleep 1	# the /issues loop under way before /status is timed
$CLI wrk -t1 -c1 -d"${SECS}s" --latency "$base/api/sloptimize/status" >"$tmp/under.out" 2>&1
wait "$loadpid"
alone=$(p99ms "$tmp/alone.out") under=$(p99ms "$tmp/under.out")
echo "/status p99: alone ${alone} ms; while /issues ($rows rows) is requested in a loop" \
    "(wrk -c2: $(awk '/Requests\/sec/ {print $2}' "$tmp/load.out") req/s) ${under} ms (target <= 2 ms)"
bench_line "GET /status p99 while /issues ($rows rows) is served" "$alone" "$under" ms "<= 2 ms" \
    "$(bench_le "$under" 2)" "/status alone"

# --- /status while /issues of ~50,000 rows is asked for, the ledger growing --
# wrk's latency at a percentile (50, 90, 99), in ms
pct() {
	awk -v q="$2" '$1 == q "%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
	    print (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v }' "$1"
}
if bench_quick; then REC=20000; else REC=130000; fi
wide="$BUILD/bench/ledger-wide-${REC}r"
if [ ! -s "$wide/.sloptimize/perf.jsonl" ]; then
	echo "generating $wide (once): genledger.py --records $REC --causes 150000 --zipf 0" >&2
	rm -rf "$wide.tmp"
	python3 "$top/tests/genledger.py" "$wide.tmp" --records "$REC" --causes 150000 --zipf 0 \
	    --heartbeats 0 --fixes 0 >/dev/null && mv "$wide.tmp" "$wide"
fi
# a copy: the writer below appends to it
mkdir -p "$tmp/wide/.sloptimize"
cp "$wide/.sloptimize/perf.jsonl" "$wide/.sloptimize/fixes.jsonl" "$tmp/wide/.sloptimize/"
start_daemon "$tmp/wide"
rows=$(curl -sf "$base/api/sloptimize/issues" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["issues"]))')
$CLI wrk -t1 -c1 -d"${SECS}s" --latency "$base/api/sloptimize/status" >"$tmp/alone.out" 2>&1
# the load: two clients asking for the whole catalogue back to back while
# a hitch is appended every 200 ms, so that it keeps being folded again
$CLI wrk -t1 -c2 -d"$((SECS + 3))s" --timeout 60s "$base/api/sloptimize/issues" >"$tmp/load.out" 2>&1 &
loadpid=$!
python3 -c '
import json, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
end = time.time() + float(sys.argv[2])
i = 0
while time.time() < end:
    i += 1
    os.write(fd, (json.dumps({"type": "hitch", "at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "frame": i, "frameMs": 150, "phase": "play", "build": "v1", "minted": ["mat_%d@obj" % (i % 7)],
        "classification": {"guess": "shader-compile", "confidence": "medium", "evidence": "programs +1"}}) + "\n").encode())
    time.sleep(0.2)
' "$tmp/wide/.sloptimize/perf.jsonl" "$((SECS + 3))" &
writepid=$!
sleep 1	# the /issues loop under way before /status is timed
$CLI wrk -t1 -c1 -d"${SECS}s" --latency "$base/api/sloptimize/status" >"$tmp/under.out" 2>&1
wait "$loadpid" "$writepid"
a50=$(pct "$tmp/alone.out" 50) a90=$(pct "$tmp/alone.out" 90)
u50=$(pct "$tmp/under.out" 50) u90=$(pct "$tmp/under.out" 90)
builds=$(curl -sf "$base/api/sloptimize/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["http"]["folds"]["done"])')
echo "/status p50/p90: alone ${a50}/${a90} ms; while /issues ($rows rows) is asked in a loop and folded" \
    "again $builds times (wrk -c2: $(awk '/Requests\/sec/ {print $2}' "$tmp/load.out") req/s) ${u50}/${u90} ms"
bench_line "GET /status p90 while /issues ($rows rows) is folded again and again" "$a90" "$u90" ms \
    "<= 10x idle p90 + 60 ms" "$(bench_le "$u90" "10 * $a90 + 60")" "/status alone"
bench_line "GET /status p50 while /issues ($rows rows) is folded again and again" "$a50" "$u50" ms \
    "<= 10x idle p50 + 20 ms" "$(bench_le "$u50" "10 * $a50 + 20")" "/status alone"
