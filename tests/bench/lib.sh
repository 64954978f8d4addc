# Shared by the shell benchmarks (fold.sh, http.sh); sourced, with $top
# set to the repository.  See benchlib.py for the BENCH line.

# BENCH_QUICK=1: small sizes and short runs, to check the machinery
bench_quick() { [ -n "${BENCH_QUICK:-}" ] && [ "${BENCH_QUICK}" != 0 ]; }

# bench_ledger BUILD MB CAUSES: prints the project directory of a genledger
# ledger made once under BUILD/bench/ (into a temporary name first, so an
# interrupted run leaves no half ledger), its perf.jsonl in the page cache
bench_ledger() {
	d="$1/bench/ledger-$2mb-$3c"
	if [ ! -s "$d/.sloptimize/perf.jsonl" ]; then
		echo "generating $d (once): genledger.py --mb $2 --causes $3" >&2
		rm -rf "$d.tmp"
		python3 "$top/tests/genledger.py" "$d.tmp" --mb "$2" --causes "$3" >/dev/null &&
		    mv "$d.tmp" "$d" || return 1
	fi
	cat "$d/.sloptimize/perf.jsonl" >/dev/null
	echo "$d"
}

# bench_line MEASURE ANCHOR OURS UNIT TARGET MET [VS]: one BENCH line
bench_line() {
	printf 'BENCH measure=%s anchor=%s ours=%s unit=%s target=%s met=%s' \
	    "$1" "$2" "$3" "$4" "$5" "$6"
	[ -n "${7:-}" ] && printf ' vs=%s' "$7"
	printf '\n'
}

# bench_ge A B / bench_le A B: yes or no, numerically
bench_ge() { [ "$(echo "$1 >= $2" | bc -l)" = 1 ] && echo yes || echo no; }
bench_le() { [ "$(echo "$1 <= $2" | bc -l)" = 1 ] && echo yes || echo no; }
