/*
 * samples — the timeline's evidence, kept small and exact.
 *
 * Exact nearest-rank medians over any time window need every sample: no
 * summary of a window answers for a sub-window.  So every heartbeat (and
 * every hitch) is kept, but packed: samples are appended to a block of
 * SAMPLES_BLOCK; a full block is sealed into columns — time as deltas,
 * the build, and each metric — each packed with the fewest bits its range
 * in the block needs.  A metric is stored as the decimal mantissa the
 * writer printed (8.58 is 858 at scale 2), checked at sealing to give the
 * same double back bit for bit; a column where some value is no short
 * decimal is kept as raw doubles.  A ledger's heartbeat costs about 9
 * bytes instead of 56, and every answer is what the doubles would give.
 *
 * Queries decode block by block (blocks outside the time range or the
 * build asked for are skipped) and select medians in a bounded scratch:
 * groups that fit are gathered and selected, a group that does not is
 * narrowed by histogram passes first.  Memory is the packed samples plus
 * SAMPLES_SCRATCH doubles while a query runs.
 *
 * Pure: no I/O.  Not thread-safe: one owner at a time.
 */
#ifndef LEDGER_SAMPLES_H
#define LEDGER_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#define SAMPLES_BLOCK		512
#define SAMPLES_MAXCOLS		8
#define SAMPLES_SCRATCH		(128 * 1024)	/* keys a query may gather */
#define SAMPLES_NO_BUILD	UINT32_MAX

struct sblock;

struct samples {
	int		  ncols;
	struct sblock	**blocks;	/* sealed, in append order */
	size_t		  nblocks, capblocks;
	size_t		  sealed;	/* samples in sealed blocks */
	size_t		  bytes;	/* their packed size */
	/* the block being filled */
	size_t		  np;
	int64_t		  pt[SAMPLES_BLOCK];
	uint32_t	  pb[SAMPLES_BLOCK];
	double		  pv[SAMPLES_MAXCOLS][SAMPLES_BLOCK];
};

/* ncols values per sample (1..SAMPLES_MAXCOLS). */
void	samples_init(struct samples *s, int ncols);
void	samples_free(struct samples *s);
/* One sample: time, build index (SAMPLES_NO_BUILD: none), ncols values
 * (NAN: not measured).  0 or -ENOMEM (nothing added). */
int	samples_add(struct samples *s, int64_t t, uint32_t build,
	    const double *v);
size_t	samples_count(const struct samples *s);
/* Bytes held (packed blocks and their index; the open block aside). */
size_t	samples_bytes(const struct samples *s);

/*
 * Which samples a query looks at, and how it groups them: samples whose
 * build is `build` (when by_build), whose time is in [from, to] (when
 * from/to are not SAMPLES_NO_TIME) and, when codes is not 0, whose code in
 * column `ccol` is one of `codes` (bit k: code k; a column's code is its
 * value as a small integer, SAMPLES_CODE_NONE when not measured — the
 * regime of a heartbeat, say); then, when ngroups > 1 or t0/width are set,
 * group g = (t - t0) / width for 0 <= g < ngroups (others are left out);
 * else everything selected is group 0.
 */
#define SAMPLES_NO_TIME		INT64_MIN
#define SAMPLES_CODES		4	/* codes 0..2, and NONE */
#define SAMPLES_CODE_NONE	3
struct sgroups {
	int		by_build;
	uint32_t	build;
	int64_t		from, to;
	int64_t		t0, width;	/* width 0: one group */
	int		ngroups;
	int		ccol;		/* the code column, when codes != 0 */
	unsigned	codes;		/* 0: every code */
};

/* A value's code: 0..SAMPLES_CODES-2 as written, NONE for NAN or any
 * other value. */
int	samples_code(double v);

/* Per group: how many samples (count, may be NULL), how many have column
 * `col` measured (measured, may be NULL), and its largest value there
 * (max, NAN if none; may be NULL).  0 or -ENOMEM. */
int	samples_tally(const struct samples *s, const struct sgroups *q, int col,
	    size_t *count, size_t *measured, double *max);
/* Per group and column c < ncols: the nearest-rank median (rank
 * ceil(n/2) of the sorted measured values) in median[c][group], NAN when
 * none; all columns in the same passes.  0 or -ENOMEM. */
int	samples_medians(const struct samples *s, const struct sgroups *q,
	    int ncols, double *const *median);
/* Per group g and code k < SAMPLES_CODES, how many samples selected
 * have code k in column col: counts[g * SAMPLES_CODES + k].  0 or -ENOMEM. */
int	samples_codes(const struct samples *s, const struct sgroups *q, int col,
	    size_t *counts);
/* The sum of column col over the samples selected (one group) and how
 * many were measured; sums in append order, so every reader that adds
 * the same values in the same order gets the same double.  0 or -ENOMEM. */
int	samples_sum(const struct samples *s, const struct sgroups *q, int col,
	    double *sum, size_t *measured);
/*
 * The measured values of column col over the samples selected (one
 * group), in append order, thinned to at most `cap` evenly spaced ones:
 * of n measured, value j = floor(i * n / cap) for i < cap when n > cap.
 * *n is how many were written.  0 or -ENOMEM.
 */
int	samples_values(const struct samples *s, const struct sgroups *q, int col,
	    double *out, size_t cap, size_t *n);
/* Call fn(arg, group, build) for every sample selected (builds may
 * repeat).  0, or the first non-zero return of fn. */
int	samples_each_build(const struct samples *s, const struct sgroups *q,
	    int (*fn)(void *, int, uint32_t), void *arg);

/*
 * For checkpoints: the blocks as opaque byte strings, and the open block.
 * samples_block_add() checks a block's own consistency (it came from
 * outside) and returns -EINVAL for one that is not whole or whose header
 * does not say what its samples are: it decodes the block and checks the
 * time and build ranges, and each column's count of measured values and
 * their key range — the queries trust
 * those (they size their buffers by the counts, skip blocks by the
 * ranges), so a header that lies would make them write past an end.
 */
size_t	samples_nblocks(const struct samples *s);
void	samples_block(const struct samples *s, size_t i, const void **p,
	    size_t *len);
int	samples_block_add(struct samples *s, const void *p, size_t len);
/*
 * What the samples span, blocks and open block alike: the earliest and
 * latest times, and the largest build index (SAMPLES_NO_BUILD when every
 * sample has none).  0, or -ENOENT when there is no sample.  A reader of
 * a checkpoint checks these against the ledger's span and builds.
 */
int	samples_bounds(const struct samples *s, int64_t *tmin, int64_t *tmax,
	    uint32_t *max_build);

#endif
