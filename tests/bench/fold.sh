#!/bin/sh
# bench-fold: the full fold of a 500 MB ledger (DESIGN §14), beside jq and
# Python counting footprint ids over the same bytes in the same run.
# Figures, not a pass/fail test: the machine is shared and noisy.
#
#   sh tests/bench/fold.sh BUILD_DIR [MB]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
MB=${2:-500}
S="$top/$BUILD/sloptimize"
gen="$top/tests/genledger.py"
dir="$top/$BUILD/bench-ledger-$MB"
if [ ! -s "$dir/.sloptimize/perf.jsonl" ]; then
	echo "generating a ${MB} MB ledger (once) in $dir"
	python3 "$gen" "$dir" --mb "$MB" --causes 5000
fi
perf="$dir/.sloptimize/perf.jsonl"
bytes=$(stat -c %s "$perf")
cat "$perf" > /dev/null	# every contender reads from the page cache

# run NAME TIMES CMD...: best wall time of TIMES runs, peak RSS of that run
run() {
	name=$1; times=$2; shift 2
	best=""; rss=""
	for i in $(seq "$times"); do
		/usr/bin/time -f "%e %M" -o "$dir/time" "$@" > /dev/null
		read -r t m < "$dir/time"
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then
			best=$t; rss=$m
		fi
	done
	mbs=$(echo "scale=0; $bytes / 1000000 / $best" | bc -l 2>/dev/null || echo "-")
	printf '%-34s %8.2f s %8s MB/s %8.1f MB RSS\n' "$name" "$best" "$mbs" \
	    "$(echo "scale=1; $rss / 1024" | bc -l)"
}

echo "ledger: $perf ($bytes bytes), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %10s %13s %15s\n' "" "best time" "throughput" "peak"
run "sloptimize issues --json" 3 "$S" issues --json --project "$dir"
run "sloptimize history --json" 3 "$S" history --json --project "$dir"
# the anchors are slow: one run each
run "anchor: python3 json, count fp ids" 1 python3 -c '
import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1], "rb"):
    r = json.loads(line)
    fp = r.get("footprint")
    if fp: c[fp.get("id")] += 1
print(len(c))' "$perf"
if command -v jq >/dev/null; then
	run "anchor: jq, count fp ids" 1 jq -n \
	    'reduce (inputs | .footprint.id? // empty) as $id ({}; .[$id] += 1) | length' "$perf"
else
	echo "anchor: jq not installed (make deps installs it)"
fi
echo "targets (DESIGN §14): catalogue >= 500 MB/s, <= 32 MB peak RSS"
