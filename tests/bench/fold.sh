#!/bin/sh
# bench-fold: the full fold (DESIGN §14) of generated 500 MB and 1 GB
# ledgers — `sloptimize issues --json` and `history --json` — beside
# anchors measured in the same run on the same bytes: `wc -l`, Python's
# json and jq counting footprint ids.  Then the catalogue's memory on a
# ledger with many causes.  Figures, not a pass/fail test: the machine is
# shared and noisy, so each of ours is the best of 3 runs, and CPU time
# (user + sys) is printed beside the wall time.
#
#   sh tests/bench/fold.sh BUILD_DIR [MB …]      (default: 500 1000)
#
# Ledgers come from tests/genledger.py and are made once, under
# BUILD_DIR/bench/ (a few minutes for 1 GB); reruns reuse them.
# BENCH_QUICK=1: a 20 MB ledger, one run each (checks the machinery).
# Prints BENCH lines for tests/bench/table.py (see benchlib.py).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/bench/lib.sh"
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD="$top/$BUILD" ;; esac
[ $# -gt 0 ] && shift
if bench_quick; then
	SIZES=${*:-20}; TIMES=1; CAUSES_MB=20
else
	SIZES=${*:-500 1000}; TIMES=3; CAUSES_MB=200
fi
S="$BUILD/sloptimize"
gen="$top/tests/genledger.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -x "$S" ] || { echo "bench-fold: no $S (make all)" >&2; exit 1; }

# measure TIMES CMD…: sets wall, cpu (best of TIMES by wall) and rss (MB,
# that run's peak, from /usr/bin/time -v)
measure() {
	times=$1; shift
	wall=""; cpu=""; rss=""
	for i in $(seq "$times"); do
		/usr/bin/time -v -o "$tmp/time" "$@" > /dev/null
		w=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time" |
		    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
		u=$(sed -n 's/.*User time (seconds): //p' "$tmp/time")
		k=$(sed -n 's/.*System time (seconds): //p' "$tmp/time")
		m=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
		if [ -z "$wall" ] || [ "$(echo "$w < $wall" | bc -l)" = 1 ]; then
			wall=$w; cpu=$(echo "$u + $k" | bc -l)
			rss=$(echo "scale=1; $m / 1024" | bc -l)
		fi
	done
}

# row NAME BYTES TIMES CMD…: one line of the table
row() {
	name=$1; bytes=$2; times=$3; shift 3
	measure "$times" "$@"
	# /usr/bin/time says 0.00 s below 5 ms (a quick run's wc -l)
	[ "$(echo "$wall > 0" | bc -l)" = 1 ] || wall=0.005
	mbs=$(echo "scale=0; $bytes / 1000000 / $wall" | bc -l)
	cmbs=$(echo "scale=0; $bytes / 1000000 / ($cpu + 0.0001)" | bc -l)
	printf '%-40s %7.2f s %6s MB/s   cpu %6.2f s %6s MB/s %7.1f MB\n' \
	    "$name" "$wall" "$mbs" "$cpu" "$cmbs" "$rss"
	last_mbs=$mbs last_rss=$rss last_cmbs=$cmbs
}

# size MB: how a ledger's size is named in the table
size() { [ "$1" -ge 1000 ] && echo "$(echo "scale=1; $1 / 1000" | bc -l | sed 's/\.0$//') GB" || echo "$1 MB"; }

pycount='
import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1], "rb"):
    r = json.loads(line)
    fp = r.get("footprint")
    if fp: c[fp.get("id")] += 1
print(len(c))'

echo "bench-fold: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -m)"
for mb in $SIZES; do
	dir=$(bench_ledger "$BUILD" "$mb" 5000)
	perf="$dir/.sloptimize/perf.jsonl"
	bytes=$(stat -c %s "$perf")
	echo
	echo "ledger: $perf ($bytes bytes, $(wc -l < "$perf") records)"
	printf '%-40s %16s %25s %10s\n' "" "wall, best of 3" "CPU (user+sys)" "peak RSS"
	row "sloptimize issues --json" "$bytes" $TIMES "$S" issues --json --project "$dir"
	issues=$last_mbs issues_rss=$last_rss issues_c=$last_cmbs
	row "sloptimize history --json" "$bytes" $TIMES "$S" history --json --project "$dir"
	history=$last_mbs history_rss=$last_rss history_c=$last_cmbs
	row "anchor: wc -l" "$bytes" $TIMES wc -l "$perf"
	row "anchor: python3 json, count fp ids" "$bytes" 1 python3 -c "$pycount" "$perf"
	python=$last_mbs python_rss=$last_rss python_c=$last_cmbs
	jq=-
	if command -v jq > /dev/null; then
		# jq is ~4 MB/s here: it gets the first 100 MB, which says the
		# same per byte
		head -c 100000000 "$perf" | sed '$d' > "$tmp/head.jsonl"
		row "anchor: jq, count fp ids (first 100 MB)" \
		    "$(stat -c %s "$tmp/head.jsonl")" 1 jq -n \
		    'reduce (inputs | .footprint.id? // empty) as $id ({}; .[$id] += 1) | length' \
		    "$tmp/head.jsonl"
		jq=$last_mbs
	else
		echo "anchor: jq not installed (make deps installs it)"
	fi
	echo "ratios: issues $(echo "scale=1; $issues / $python" | bc -l)x, history" \
	    "$(echo "scale=1; $history / $python" | bc -l)x python's json"
	n=$(size "$mb")
	bench_line "issues --json, $n: throughput" "$python" "$issues" MB/s ">= 1000 MB/s" \
	    "$(bench_ge "$issues" 1000)" "python3 json, same bytes"
	[ "$jq" = - ] || bench_line "issues --json, $n: throughput vs jq" "$jq" "$issues" MB/s \
	    ">= 1000 MB/s" "$(bench_ge "$issues" 1000)" "jq, first 100 MB"
	# the same by CPU time (user + sys): what a shared machine's load
	# does not move much
	bench_line "issues --json, $n: throughput by CPU time" "$python_c" "$issues_c" MB/s \
	    ">= 1000 MB/s" "$(bench_ge "$issues_c" 1000)" "python3 json, by CPU time"
	bench_line "issues --json, $n: peak RSS" "$python_rss" "$issues_rss" MB "<= 32 MB" \
	    "$(bench_le "$issues_rss" 32)" "python3 json"
	bench_line "history --json, $n: throughput" "$python" "$history" MB/s ">= 500 MB/s" \
	    "$(bench_ge "$history" 500)" "python3 json, same bytes"
	[ "$jq" = - ] || bench_line "history --json, $n: throughput vs jq" "$jq" "$history" MB/s \
	    ">= 500 MB/s" "$(bench_ge "$history" 500)" "jq, first 100 MB"
	bench_line "history --json, $n: throughput by CPU time" "$python_c" "$history_c" MB/s \
	    ">= 500 MB/s" "$(bench_ge "$history_c" 500)" "python3 json, by CPU time"
	bench_line "history --json, $n: peak RSS" "$python_rss" "$history_rss" MB "<= 32 MB" \
	    "$(bench_le "$history_rss" 32)" "python3 json"
done

# The catalogue's memory does not grow with its output: a ledger whose
# catalogue has some 12,000 rows (genledger's causes are Zipf-distributed:
# 60,000 possible, 12,249 seen in 200 MB).
dir=$(bench_ledger "$BUILD" "$CAUSES_MB" 60000)
perf="$dir/.sloptimize/perf.jsonl"
rows=$("$S" issues --json --project "$dir" | python3 -c \
    'import json, sys; print(json.load(sys.stdin)["counts"]["rows"])')
echo
echo "ledger: $perf ($(stat -c %s "$perf") bytes, $rows catalogue rows)"
row "sloptimize issues --json, $rows rows" "$(stat -c %s "$perf")" 1 \
    "$S" issues --json --project "$dir"
bench_line "issues --json, $rows rows: peak RSS" - "$last_rss" MB "<= 32 MB" "$(bench_le "$last_rss" 32)"
echo
echo "targets (DESIGN §14, issue 12): issues --json >= 1000 MB/s; history --json"
echo ">= 500 MB/s and <= 32 MB; <= 32 MB peak at any number of causes"
