/*
 * ledger_types — the fold's limits and the plain structs its callers fill
 * in or read (options, the verdict's thresholds, streams, counters).  See
 * ledger.h, which includes this.
 *
 * A header of their own, below ledger.h, so that the fold's state
 * (ledger_impl.h, which ledger.c, checkpoint.c and render.c include) can
 * embed them without including ledger.h: ledger.c includes the state, and
 * the state included ledger.h back, an include circle (issue 21).
 */
#ifndef LEDGER_LEDGER_TYPES_H
#define LEDGER_LEDGER_TYPES_H

#include <stdint.h>

#define LEDGER_MAX_LINE		(1024 * 1024)	/* longer lines are skipped */
#define LEDGER_NO_TIME		INT64_MIN
#define LEDGER_SKIPS_KEPT	32	/* the last N skipped lines are listed */
#define LEDGER_NOTE_MAX		1024	/* bytes of a note kept, with its NUL */
#define LEDGER_ENTITY_MAX	160	/* bytes of an event's entity, with its NUL */

/*
 * What a fix's verdict needs (docs/json.md, "Fix verdicts"): each window
 * at least min_heartbeats heartbeats of its regime and min_play_s seconds
 * of play, and a change of at least min_effect_pct % of the before value
 * whose noise intervals do not overlap.  0 (or less): the default.
 */
#define LEDGER_JUDGE_HEARTBEATS	30
#define LEDGER_JUDGE_PLAY_S	60.0
#define LEDGER_JUDGE_EFFECT_PCT	10.0
struct ledger_judge {
	unsigned	 min_heartbeats;
	double		 min_play_s;
	double		 min_effect_pct;
};

struct ledger_opts {
	int64_t		 from_ms;	/* LEDGER_NO_TIME: unbounded */
	int64_t		 to_ms;		/* LEDGER_NO_TIME: unbounded */
	int		 include_automated;
	int		 want_timeline;	/* keep samples for history/windows */
	const char	*occurrences_of; /* 8-hex id: keep its occurrences */
};

/* Streams: where a line came from (for skip reports). */
enum ledger_stream { LEDGER_PERF = 0, LEDGER_FIXES = 1 };

/* Counters, for status and doctor. */
struct ledger_counts {
	uint64_t	lines;		/* complete lines seen, both streams */
	uint64_t	folded;		/* perf records folded */
	uint64_t	incidents;	/* of which catalogue incidents */
	uint64_t	fixes;		/* fixes.jsonl records folded */
	uint64_t	skipped;	/* both streams */
	uint64_t	malformed_footprints;
	uint64_t	rows;
	uint64_t	builds;
};

#endif
