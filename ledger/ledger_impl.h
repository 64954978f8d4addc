/*
 * ledger_impl — the fold's state, shared by the files of ledger/ and by
 * nothing else: ledger.c folds lines into it, render.c answers from it
 * (catalogue, timeline, windows), checkpoint.c saves and restores it.
 * What it declares is ledger.c's (render.c's where marked): checkpoint.c
 * calls down into it, and nothing here calls the checkpoint.
 * Everything in struct ledger is either folded state (saved by a
 * checkpoint) or a cache the fold can rebuild (marked so).
 */
#ifndef LEDGER_LEDGER_IMPL_H
#define LEDGER_LEDGER_IMPL_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "footprint.h"
#include "jscan.h"
#include "ledger_types.h"	/* not ledger.h: ledger.c includes this */
#include "samples.h"

#define VERDICT_GUESS	64
#define VERDICT_CONF	32
#define VERDICT_EVID	256
#define NO_BUILD	SAMPLES_NO_BUILD
#define SERIES_SLICES	32
#define SKIP_REASON	64
#define NMETRICS	5	/* p95, median, calls, triangles, programs */
/* Heartbeat columns: the metrics, then the seconds of play a heartbeat
 * stands for (window.seconds) and its regime's code; hitch columns:
 * frameMs and the hitch's own regime (none when it names none). */
#define HB_SECONDS	5
/* A heartbeat's window longer than a day is not a measurement: kept as
 * not measured, so that no writer's figure can make a window's play time
 * (a sum, and the evidence rule's 60 s) absurd or overflow it. */
#define HB_SECONDS_MAX	86400.0
#define HB_REGIME	6
#define HB_COLS		7
#define HP_REGIME	1
#define HP_COLS		2
/* Regime codes (samples' code column): what the renderer was. */
#define REGIME_UNKNOWN	0	/* "unknown", or a heartbeat without one */
#define REGIME_HARDWARE	1
#define REGIME_SOFTWARE	2
#define REGIME_NONE	SAMPLES_CODE_NONE	/* a hitch that names none */

struct row {
	uint32_t	 id;
	uint32_t	 idx;		/* its place in ledger.rows */
	char		 hex[9];
	char		*key;
	char		*type;
	char		*phase;		/* NULL when the record had none */
	char		*ctx;		/* the last occurrence's, "" if none */
	uint64_t	 count;
	int64_t		 first_ms, last_ms;	/* LEDGER_NO_TIME if none */
	uint32_t	*builds;	/* build indices, first-seen order */
	uint32_t	 nbuilds, capbuilds;
	uint32_t	 max_build;	/* NO_BUILD if none */
	int64_t		 last_unbuilt_ms;
	int		 has_worst;
	double		 worst;
	int64_t		 worst_ms;
	int		 has_verdict;
	char		*guess;		/* the verdict's, cut; NULL if none */
	char		*conf;
	char		*evid;
};

struct build {
	char		*name;
	uint32_t	 len;
	uint32_t	 hash;
	int64_t		 first_ms;	/* `at` of its first record */
	uint64_t	 heartbeats;	/* its evidence, whatever the time filter */
	int		 watched;	/* judges a waiting fix: keep its samples */
	/* its timeline samples (want_timeline or watched): counts, span,
	 * worst hitch */
	uint64_t	 nhb, nhp;
	int64_t		 ts_min, ts_max;	/* LEDGER_NO_TIME if none */
	double		 worst;			/* NAN if none */
	/* cache: the regime of its last heartbeat folded (REGIME_* + 1, 0:
	 * none seen since this ledger was made or read) — what a record of
	 * this build that names no regime of its own ran on */
	uint8_t		 last_regime;
};

enum fix_state { FIX_APPLIED, FIX_PROPOSED, FIX_MERGED, FIX_REJECTED, FIX_OTHER };

struct fix {
	cJSON		*rec;
	char		 id[9];
	enum fix_state	 state;
	int64_t		 at_ms;		/* when it took effect */
	int		 has_after;	/* the record carries an after window */
	char		*after_build;
	uint32_t	*fps;
	size_t		 nfps;
};

struct skip {
	enum ledger_stream	 stream;
	uint64_t		 offset, length;
	char			 reason[SKIP_REASON];
};

struct ledger {
	struct ledger_opts	 opts;		/* occurrences_of not kept */
	struct ledger_judge	 judge;		/* rendering: fix verdicts */
	uint32_t		 occ_id;
	int			 want_occ;
	cJSON			*occ;

	struct row		**slots;	/* open addressing by id (cache) */
	size_t			 nslots;
	struct row		**rows;
	size_t			 nrows, caprows;

	struct build		*builds;
	size_t			 nbuilds, capbuilds;
	uint32_t		*bslots;	/* build index + 1 (cache) */
	size_t			 nbslots;
	uint32_t		 last_build;	/* cache */

	struct samples		 hb;		/* heartbeats: NMETRICS columns */
	struct samples		 hp;		/* hitches: frameMs */
	int64_t			 tmin, tmax;

	struct fix		*fixes;
	size_t			 nfixes, capfixes;

	struct skip		 skips[LEDGER_SKIPS_KEPT];
	size_t			 nskips;	/* total ever; ring index mod */

	struct ledger_counts	 c;

	/*
	 * The checkpoint's rows section, serialised by runs of CKPT_RUN_ROWS
	 * rows and kept between saves, so a save serialises only the runs
	 * whose rows the fold changed since the last one.  The fold owns the
	 * cache (it marks a run stale when it changes one of its rows,
	 * row_touch, and lets the runs go with the ledger); the checkpoint
	 * makes the runs (a run short of rows is stale too).
	 */
	struct rows_run		**runs;
	uint8_t			 *run_stale;
	size_t			  nruns, capruns;

	/* caches */
	struct jscan_shapes	*shapes;
	char			 at_day[10];	/* date of at_base, or "" */
	int64_t			 at_base;	/* ms of at_day's midnight */

	/* scratch for ledger_event strings */
	char			 s_key[FOOTPRINT_KEY_MAX];
	char			 s_type[64], s_phase[128], s_build[128];
	char			 s_note[LEDGER_NOTE_MAX];
	char			 s_entity[LEDGER_ENTITY_MAX];
};

#define CKPT_RUN_ROWS	16

/*
 * A run of CKPT_RUN_ROWS rows as the checkpoint's rows section holds
 * them: bytes the checkpoint made.  Shared by the ledger's cache and
 * every snapshot that refers to it, so a run made again while a snapshot
 * is being written stays alive until that write is done; the count is
 * atomic because a snapshot may be freed on another thread than the
 * ledger's.
 */
struct rows_run {
	unsigned	 refs;
	size_t		 nrows;		/* the rows it holds */
	unsigned char	*p;
	size_t		 len;
};

/* The fold changed r: its run of the checkpoint is made again. */
static inline void
row_touch(struct ledger *l, const struct row *r)
{
	size_t	k = r->idx / CKPT_RUN_ROWS;

	if (k < l->nruns)
		l->run_stale[k] = 1;
}

/* ledger.c */
/* One reference to a run let go; the last frees it.  Accepts NULL. */
void		 rows_run_unref(struct rows_run *r);
struct row	*row_find(const struct ledger *l, uint32_t id);
struct row	*row_insert(struct ledger *l, struct row *r);
int		 build_insert(struct ledger *l, const char *name, size_t len,
		    int64_t first_ms);
const char	*row_status(struct ledger *l, const struct row *r);
uint32_t	 fix_build(const struct ledger *l, const struct fix *fx);
int		 fix_counts(const struct fix *fx);
/* The build a fix without an after window is judged on: the first from
 * its fix build on with heartbeats; NO_BUILD while it waits for one. */
uint32_t	 fix_evidence(const struct ledger *l, const struct fix *fx);
/* A fix without an after window whose build has not run yet. */
int		 fix_pending(const struct ledger *l, const struct fix *fx);
int		 fix_names(const struct fix *fx, uint32_t id);
void		 note_skip(struct ledger *l, enum ledger_stream s,
		    uint64_t offset, uint64_t len, const char *reason);

/* render.c */
const char	*fix_state_name(enum fix_state s);

/* ledger.c: a record's regime as a code (REGIME_*), or REGIME_NONE when
 * `v` names none (not a string); `dflt` for a string we do not know */
int		 regime_code(struct jspan v, int dflt);
const char	*regime_name(int code);	/* NULL for REGIME_NONE */

#endif
