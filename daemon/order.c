/*
 * order — the ingest route's batch order (see order.h).
 *
 * The table is a plain array searched from end to end: 256 ids compared
 * once per batch cost less than the request's header parse, and an
 * array has no allocation to fail on the hot path.  Held batches are a
 * short list per page, sorted by seq (a page has at most a couple under
 * way); the one timer runs to the earliest deadline of any page's first
 * held batch — only a page's first held batch can be let go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/log.h"
#include "daemon/order.h"

struct order_held {
	struct order_held	*next;
	uint64_t		 seq;
	void			*item;
	size_t			 bytes;
	uint64_t		 deadline;	/* uv_now() ms */
};

static void	timer_arm(struct order *o);

int
order_id_valid(const char *id)
{
	size_t	i;

	for (i = 0; id[i] != '\0'; i++) {
		unsigned char	c = (unsigned char)id[i];

		if (i >= ORDER_ID_MAX || !((c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_'))
			return 0;
	}
	return i > 0;
}

static struct order_page *
page_find(struct order *o, const char *id)
{
	unsigned	i;

	for (i = 0; i < o->lim.pages; i++)
		if (o->pages[i].id[0] != '\0' && strcmp(o->pages[i].id, id) == 0)
			return &o->pages[i];
	return NULL;
}

/* FNV-1a 64 of a writer's name: pages compare writers by it. */
static uint64_t
writer_hash(const char *w)
{
	uint64_t	h = 0xcbf29ce484222325ull;

	for (; w != NULL && *w != '\0'; w++)
		h = (h ^ (unsigned char)*w) * 0x100000001b3ull;
	return h;
}

/* How many pages the table holds for writer w. */
static unsigned
writer_pages(const struct order *o, uint64_t w)
{
	unsigned	i, n = 0;

	for (i = 0; i < o->lim.pages; i++)
		n += o->pages[i].id[0] != '\0' && o->pages[i].writer == w;
	return n;
}

/*
 * A free slot, else an idle page's (forgotten: its next batch starts at
 * its own `first`): the least recently used one of the writer holding
 * the most pages, so a writer that floods the table forgets its own
 * pages and not another's.  The count is a pass per idle page (256 x
 * 256 compares), made only when a new id meets a full table.  NULL
 * when every page is busy.
 */
static struct order_page *
page_new(struct order *o, const char *id, uint64_t w, uint64_t first)
{
	struct order_page	*p, *lru = NULL;
	unsigned		 i, n, most = 0;

	for (i = 0; i < o->lim.pages; i++)
		if (o->pages[i].id[0] == '\0') {
			lru = &o->pages[i];
			goto take;
		}
	for (i = 0; i < o->lim.pages; i++) {
		p = &o->pages[i];
		if (p->busy || p->held != NULL)
			continue;
		n = writer_pages(o, p->writer);
		if (n > most || (n == most && p->used < lru->used)) {
			lru = p;
			most = n;
		}
	}
	if (lru == NULL)
		return NULL;
	o->evicted++;
	log_debug("order: forgot page %s (least recently used of the writer "
	    "with the most pages, %u)", lru->id, most);
take:
	memset(lru, 0, sizeof(*lru));
	strcpy(lru->id, id);
	lru->next = first;
	lru->writer = w;
	return lru;
}

/* next moves up to `to`; the seqs passed over are not appended. */
static void
page_advance(struct order_page *p, uint64_t to)
{
	uint64_t	k = to - p->next;

	p->done = k >= 64 ? 0 : p->done << k;
	p->next = to;
}

static int
page_appended(const struct order_page *p, uint64_t seq)
{
	uint64_t	back = p->next - 1 - seq;	/* seq < next */

	return back < 64 && (p->done >> back & 1);
}

static int
page_holds(const struct order_page *p, uint64_t seq)
{
	const struct order_held	*h;

	for (h = p->held; h != NULL; h = h->next)
		if (h->seq == seq)
			return 1;
	return 0;
}

/*
 * Dispatch what may go: one batch at a time per page, the first held
 * one, if it is the next expected (or late), or its deadline has passed,
 * or the table is closing.  `dispatch` may call order_done before it
 * returns (a job that could not start): then this runs again inside it,
 * and the loop here sees the page as it left it.
 */
static void
page_pump(struct order *o, struct order_page *p)
{
	struct order_held	*h;
	uint64_t		 now = uv_now(o->loop);
	void			*item;

	while (!p->busy && (h = p->held) != NULL) {
		if (h->seq > p->next && h->deadline > now && !o->closing)
			break;
		p->held = h->next;
		o->nheld--;
		o->held_bytes -= h->bytes;
		if (h->seq > p->next) {
			o->missing += h->seq - p->next;
			if (h->seq - p->next == 1)
				log_warnx("order: page %s: batch %llu never "
				    "came; appending %llu", p->id,
				    (unsigned long long)p->next,
				    (unsigned long long)h->seq);
			else
				log_warnx("order: page %s: batches %llu-%llu "
				    "never came; appending %llu", p->id,
				    (unsigned long long)p->next,
				    (unsigned long long)(h->seq - 1),
				    (unsigned long long)h->seq);
			page_advance(p, h->seq);
		} else if (h->seq < p->next) {
			o->late++;
			log_warnx("order: page %s: batch %llu came after its "
			    "successors; appending it late", p->id,
			    (unsigned long long)h->seq);
		}
		p->busy = 1;
		p->cur = h->seq;
		item = h->item;
		free(h);
		o->dispatch(o->arg, item);
	}
}

static void
pump_all(struct order *o)
{
	unsigned	i;

	for (i = 0; i < o->lim.pages; i++)
		if (o->pages[i].held != NULL)
			page_pump(o, &o->pages[i]);
	timer_arm(o);
}

static void
on_timer(uv_timer_t *t)
{
	pump_all(t->data);
}

/* To the earliest deadline of a page's first held batch, or stopped. */
static void
timer_arm(struct order *o)
{
	uint64_t	now, at = UINT64_MAX;
	unsigned	i;

	if (!o->timer_up)
		return;
	for (i = 0; i < o->lim.pages; i++)
		if (o->pages[i].held != NULL && !o->pages[i].busy &&
		    o->pages[i].held->deadline < at)
			at = o->pages[i].held->deadline;
	if (at == UINT64_MAX) {
		uv_timer_stop(&o->timer);
		return;
	}
	now = uv_now(o->loop);
	uv_timer_start(&o->timer, on_timer, at > now ? at - now : 0, 0);
}

int
order_init(struct order *o, uv_loop_t *loop, const struct order_limits *lim,
    order_fn *dispatch, order_fn *release, void *arg)
{
	static const struct order_limits def = { ORDER_PAGES, ORDER_HOLD_MS,
		ORDER_HELD_MAX, ORDER_HELD_BYTES };
	int	rc;

	memset(o, 0, sizeof(*o));
	o->loop = loop;
	o->lim = lim != NULL ? *lim : def;
	if (o->lim.pages == 0)
		o->lim.pages = 1;
	o->dispatch = dispatch;
	o->release = release;
	o->arg = arg;
	if ((o->pages = calloc(o->lim.pages, sizeof(*o->pages))) == NULL)
		return -ENOMEM;
	if ((rc = uv_timer_init(loop, &o->timer)) != 0) {
		free(o->pages);
		o->pages = NULL;
		return rc;
	}
	o->timer.data = o;
	o->timer_up = 1;
	return 0;
}

void
order_close(struct order *o)
{
	if (o->pages == NULL)
		return;
	o->closing = 1;
	pump_all(o);
	if (o->timer_up) {
		o->timer_up = 0;
		uv_close((uv_handle_t *)&o->timer, NULL);
	}
}

void
order_free(struct order *o)
{
	struct order_held	*h;
	unsigned		 i;

	if (o->pages == NULL)
		return;
	for (i = 0; i < o->lim.pages; i++)
		while ((h = o->pages[i].held) != NULL) {
			o->pages[i].held = h->next;
			if (o->release != NULL)
				o->release(o->arg, h->item);
			free(h);
		}
	free(o->pages);
	o->pages = NULL;
}

enum order_verdict
order_offer(struct order *o, const char *id, const char *writer, uint64_t seq,
    uint64_t first, void *item, size_t bytes)
{
	struct order_page	 *p;
	struct order_held	 *h, **pp;
	int			  waits;

	if ((p = page_find(o, id)) == NULL &&
	    (p = page_new(o, id, writer_hash(writer), first)) == NULL)
		return ORDER_UNTRACKED;
	p->used = ++o->tick;
	/* the page has had answers for everything before `first` */
	if (first > p->next)
		page_advance(p, first);
	if ((p->busy && p->cur == seq) || page_holds(p, seq))
		return ORDER_UNDER_WAY;
	if (seq < p->next && page_appended(p, seq)) {
		o->duplicates++;
		return ORDER_DUPLICATE;
	}
	waits = p->busy || seq > p->next;
	if (waits && (o->nheld >= o->lim.held_max ||
	    o->held_bytes + bytes > o->lim.held_bytes)) {
		o->full++;
		return ORDER_FULL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return ORDER_FULL;
	h->seq = seq;
	h->item = item;
	h->bytes = bytes;
	h->deadline = uv_now(o->loop) + o->lim.hold_ms;
	for (pp = &p->held; *pp != NULL && (*pp)->seq < seq;
	    pp = &(*pp)->next)
		;
	h->next = *pp;
	*pp = h;
	o->nheld++;
	o->held_bytes += bytes;
	o->batches++;
	if (waits)
		o->held_total++;
	page_pump(o, p);
	timer_arm(o);
	return ORDER_TAKEN;
}

void
order_done(struct order *o, const char *id, uint64_t seq, int appended)
{
	struct order_page	*p;
	uint64_t		 back;

	if (o->pages == NULL || (p = page_find(o, id)) == NULL || !p->busy ||
	    p->cur != seq)
		return;	/* a broken invariant: a busy page is never evicted */
	p->busy = 0;
	if (seq >= p->next) {
		page_advance(p, seq + 1);
		if (appended)
			p->done |= 1;
	} else if (appended && (back = p->next - 1 - seq) < 64)
		p->done |= (uint64_t)1 << back;
	page_pump(o, p);
	timer_arm(o);
}

int
order_forget(struct order *o, void *item)
{
	struct order_held	**pp, *h;
	unsigned		  i;

	if (o->pages == NULL)
		return 0;
	for (i = 0; i < o->lim.pages; i++)
		for (pp = &o->pages[i].held; (h = *pp) != NULL;
		    pp = &h->next) {
			if (h->item != item)
				continue;
			*pp = h->next;
			o->nheld--;
			o->held_bytes -= h->bytes;
			free(h);
			/* its successors may now be due */
			page_pump(o, &o->pages[i]);
			timer_arm(o);
			return 1;
		}
	return 0;
}
