/*
 * order — the ingest route's batch order (docs/recorder.md, "Delivery"):
 * a page may have two batches under way at once, and the daemon, not the
 * network, decides the order they reach perf.jsonl in.
 *
 * Each batch of a page carries the page's delivery id, its sequence
 * number (1, 2, 3, … in the order the page made them) and `first`, the
 * oldest of the page's batches it has had no answer for (itself, when
 * nothing before it is outstanding).  Per page id the table keeps the
 * next sequence number it expects and which of the 64 before it were
 * appended:
 *
 *   - the next expected batch is appended at once (handed to `dispatch`),
 *     and after it any held successors, one at a time per page — two
 *     appends of one page never race on the thread pool;
 *   - one that arrives ahead of a missing predecessor is held, bounded in
 *     count and bytes, until the predecessor comes or its deadline passes
 *     (the loop's timer: nothing ever blocks); then it is appended anyway
 *     and a log line names the batches that never came;
 *   - one already appended is a duplicate: the caller answers it as
 *     accepted and nothing is appended twice (a retry after a lost
 *     answer);
 *   - one that comes after its successors were let go (it was late past
 *     the deadline) is appended when it comes: late, but not lost.
 *
 * `first` is what makes the table safe to forget: a page the table has
 * never seen, or evicted (least recently used, idle pages only), or a
 * daemon restarted since, starts at `first`, so nothing waits for
 * batches the page already had answered.
 *
 * Forgetting a page also forgets which of its batches were appended, so
 * who gets forgotten matters: each page belongs to its writer (the
 * Origin it was sent with, or the token), and when the table is full the
 * page given up is the least recently used idle one of the writer that
 * holds the most pages.  A writer flooding the table with page ids
 * forgets its own, never another writer's: a recorder's retry of an
 * answered batch is still answered as a duplicate.  (Within one writer
 * a flood still pushes its own pages out: the daemon cannot tell a
 * page's own recorders from another script sending the same Origin.)
 *
 * On the loop thread only.
 */
#ifndef DAEMON_ORDER_H
#define DAEMON_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#define ORDER_ID_MAX		32		/* [A-Za-z0-9_-]{1,32} */
#define ORDER_SEQ_MAX		9007199254740991ull	/* 2^53 - 1: a JS number */
#define ORDER_PAGES		256
#define ORDER_HOLD_MS		750
#define ORDER_HELD_MAX		64
#define ORDER_HELD_BYTES	(8u << 20)

/* An item's turn has come (dispatch), or the table lets go of an item it
 * never dispatched (release, in order_free only). */
typedef void order_fn(void *arg, void *item);

struct order_limits {
	unsigned	 pages;		/* page ids remembered */
	uint64_t	 hold_ms;	/* how long a batch waits for its
					   predecessor */
	unsigned	 held_max;	/* batches held, all pages together */
	size_t		 held_bytes;	/* their bytes */
};

struct order_held;

struct order_page {
	char			 id[ORDER_ID_MAX + 1];	/* "": a free slot */
	uint64_t		 next;	/* the lowest seq neither appended
					   nor passed over */
	uint64_t		 done;	/* bit i: seq next-1-i was appended */
	uint64_t		 cur;	/* being appended, when busy */
	int			 busy;
	uint64_t		 used;	/* LRU tick */
	uint64_t		 writer;	/* hash of its writer */
	struct order_held	*held;	/* by seq */
};

struct order {
	uv_loop_t		*loop;
	uv_timer_t		 timer;
	int			 timer_up, closing;
	struct order_limits	 lim;
	order_fn		*dispatch, *release;
	void			*arg;
	struct order_page	*pages;
	uint64_t		 tick;
	unsigned		 nheld;
	size_t			 held_bytes;
	/* counters (/status) */
	uint64_t		 batches;	/* taken by the table */
	uint64_t		 held_total;	/* of which had to wait */
	uint64_t		 duplicates;	/* answered, not appended */
	uint64_t		 missing;	/* batches that never came */
	uint64_t		 late;		/* appended after their
						   successors */
	uint64_t		 full;		/* refused: the hold was full */
	uint64_t		 evicted;	/* page ids forgotten */
};

/* What order_offer did with a batch. */
enum order_verdict {
	ORDER_TAKEN,	/* the table has it: `dispatch` ran or will run */
	ORDER_DUPLICATE,/* already appended: answer it, append nothing */
	ORDER_UNDER_WAY,/* the same batch is held or being appended: busy */
	ORDER_FULL,	/* it would wait and the hold is full: busy */
	ORDER_UNTRACKED	/* no slot for its page: append it as it comes */
};

/* Set up; lim NULL: the defaults above.  0 or a libuv error. */
int	order_init(struct order *o, uv_loop_t *loop,
	    const struct order_limits *lim, order_fn *dispatch,
	    order_fn *release, void *arg);
/* Stopping: nothing waits for a missing batch any more (what is held is
 * dispatched as its page's appends finish) and the timer closes. */
void	order_close(struct order *o);
/* After the loop has run out: items still held go to `release`.  Accepts
 * a zeroed struct. */
void	order_free(struct order *o);

/* A page id as the route takes it: 1 to ORDER_ID_MAX of [A-Za-z0-9_-]. */
int	order_id_valid(const char *id);

/*
 * Batch seq of page id (first: the page's oldest unanswered batch, 1 ≤
 * first ≤ seq), `bytes` long, as `item`, from `writer` (the request's
 * allowed Origin, "" for the token: whose pages a flood may push out).  With ORDER_TAKEN the table owns
 * item until it passes it to `dispatch` (maybe before this returns); with
 * any other verdict the caller keeps it.
 */
enum order_verdict order_offer(struct order *o, const char *id,
	    const char *writer, uint64_t seq, uint64_t first, void *item,
	    size_t bytes);
/* The dispatched batch seq of page id is over: appended, or not (refused,
 * failed — its successors do not wait for it either way). */
void	order_done(struct order *o, const char *id, uint64_t seq,
	    int appended);
/* A held item's request went away: the table lets go of it (the caller
 * frees it).  1 if it was held, 0 if not (dispatched already). */
int	order_forget(struct order *o, void *item);

#endif
