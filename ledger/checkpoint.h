/*
 * checkpoint — the fold's whole state as bytes, and back.  Above the
 * fold (ledger.h): it reads a ledger's state and builds a new ledger
 * through the fold's own functions; the fold knows nothing of it beyond
 * keeping the rows' serialised runs between saves (ledger_impl.h).
 */
#ifndef LEDGER_CHECKPOINT_H
#define LEDGER_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"

/*
 * Checkpoints: everything the fold holds (rows, builds, fix state, the
 * timeline's samples, counters, skipped lines) as a versioned,
 * checksummed byte string, so a reader that saved one folds only the
 * bytes after it.  Where the bytes go, and which file offset they stand
 * for, is the caller's business: no I/O here.
 *
 * ledger_checkpoint_write() hands the bytes to cb in pieces (cb returns
 * 0 or -errno; the first error stops the write and is returned).  Can be
 * called at any point between folds; the ledger is not changed.
 *
 * ledger_checkpoint_read() makes a new ledger from a checkpoint, folded
 * with `opts` (which must be the options it was written with).  0 and
 * *out, or no ledger and *why (if not NULL) set to a static reason:
 *	-EBADMSG	not a checkpoint, torn (short) or damaged
 *	-EPROTO		another format version, or another byte order
 *	-ESTALE		folded with other options
 *	-ENOMEM
 * A checkpoint is never half used: on any refusal the caller folds the
 * ledger from its start.
 */
#define LEDGER_CHECKPOINT_VERSION	4	/* 2: fix evidence per build;
					   3: rows keyed by footprint v2 (an
					   older one holds v1 ids: refused,
					   folded again);
					   4: heartbeats' seconds and regime */
int	ledger_checkpoint_write(const struct ledger *l,
	    int (*cb)(void *arg, const void *data, size_t len), void *arg);
int	ledger_checkpoint_read(const struct ledger_opts *opts,
	    const void *data, size_t len, struct ledger **out,
	    const char **why);

/*
 * The same read from a source that hands the `len` bytes over in pieces
 * (a file read as it goes), so the reader never holds the whole
 * checkpoint beside the ledger it builds.  pull(arg, buf, n) must fill
 * buf with the next n bytes and return 0, or return -errno (-EBADMSG if
 * the source ended early); the reader asks for exactly `len` bytes in
 * all, in order.  Returns as ledger_checkpoint_read, or pull's error
 * (*why "could not be read").  The trailer is checked last: a torn or
 * damaged checkpoint costs the reading of it, and is still never used.
 */
int	ledger_checkpoint_read_stream(const struct ledger_opts *opts,
	    uint64_t len, int (*pull)(void *arg, void *buf, size_t n),
	    void *arg, struct ledger **out, const char **why);

/*
 * The write in two steps, for an owner that must not stall (the daemon's
 * loop): ledger_checkpoint_begin() copies, on the owner's thread, what
 * folding changes — counters, builds, fixes, skipped lines, the open
 * sample blocks — and only refers to the sealed sample blocks, which
 * never change once sealed and are most of the bytes.  The rows are kept
 * serialised in the ledger between saves, by runs of a few rows: begin
 * serialises again only the runs whose rows the fold changed since the
 * last begin (or prepare), and refers to the others.  The snapshot is
 * then written by ledger_snap_write() on any thread while the owner
 * folds on: the bytes are those ledger_checkpoint_write() gave at begin.
 * The ledger must not be destroyed before the snapshot is freed (it owns
 * the sample blocks).  begin: 0 or -ENOMEM.  ledger_snap_size() is the
 * length snap_write will write; ledger_snap_free accepts NULL (on any
 * thread).
 *
 * ledger_checkpoint_prepare() does begin's row work ahead, at most
 * `budget` rows of it, so an owner can spread the first save (every row
 * to serialise) or a save after many changed rows over several turns of
 * its loop; *left (if not NULL) is how many rows begin would still
 * serialise now.  0 or -ENOMEM.  Rows changed after a prepare are made
 * again at begin: the snapshot is always of the ledger at begin.
 */
struct ledger_snap;
int	ledger_checkpoint_prepare(struct ledger *l, size_t budget,
	    size_t *left);
int	ledger_checkpoint_begin(struct ledger *l, struct ledger_snap **out);
uint64_t ledger_snap_size(const struct ledger_snap *s);
int	ledger_snap_write(const struct ledger_snap *s,
	    int (*cb)(void *arg, const void *data, size_t len), void *arg);
void	ledger_snap_free(struct ledger_snap *s);

#endif
