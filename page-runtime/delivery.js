// delivery.js — the recorder's outbox: records go to the daemon's ingest
// route (POST {endpoint}/api/sloptimize/records, a JSON array) in batches,
// in the order they were made, one request at a time, retried with a
// backoff while the daemon is down.  Nothing here ever blocks a frame: a
// send is a fetch, and the frame loop only pushes onto an array.
//
// Memory is bounded: past `maxQueued` records the oldest are dropped and
// counted; the count is handed to the next record made (takeDropped()),
// so the ledger says what was lost.  A record can be queued not ready (a
// long-script hitch waiting for its Long Animation Frames entry): the
// batch stops before it, which keeps the order.
//
// The daemon's answer, where it says which records it refused, is kept
// (refused count, last reason) and those are not retried: a refused record
// would be refused again.

export const ROUTE = '/api/sloptimize/records';
const MAX_BODY = 512 * 1024;      // the route takes up to 1 MiB; half of it leaves room

export class Outbox {
  constructor({ endpoint = '', fetch: fetchFn = globalThis.fetch?.bind(globalThis), maxQueued = 5000, maxBatch = 200,
    backoffMinMs = 250, backoffMaxMs = 30000, now = () => Date.now(), setTimer = (fn, ms) => setTimeout(fn, ms),
    clearTimer = (id) => clearTimeout(id), onChange = () => {} } = {}) {
    this.url = `${String(endpoint).replace(/\/+$/, '')}${ROUTE}`;
    this.fetch = fetchFn;
    this.maxQueued = maxQueued;
    this.maxBatch = maxBatch;
    this.backoffMinMs = backoffMinMs;
    this.backoffMaxMs = backoffMaxMs;
    this.now = now;
    this.setTimer = setTimer;
    this.clearTimer = clearTimer;
    this.onChange = onChange;
    this.queue = [];          // {rec, ready}
    this.inFlight = 0;        // records in the request under way
    this.timer = null;
    this.soon = false;        // a send is queued for the end of this task
    this.backoffMs = 0;
    this.retryAt = 0;
    this.stopped = false;
    this.waiters = [];
    this.stats = { sent: 0, batches: 0, refused: 0, dropped: 0, failures: 0, reachable: null,
      lastError: null, lastSentAt: null, lastRefusal: null };
    this.undeclaredDrops = 0;
  }

  // Queue a record; `ready: false` holds it (and all after it) until ready(entry).
  push(rec, { ready = true } = {}) {
    const entry = { rec, ready };
    this.queue.push(entry);
    while (this.queue.length > this.maxQueued) {
      // drop the oldest that is not in the request under way
      const i = this.inFlight;
      if (i >= this.queue.length) break;
      this.queue.splice(i, 1);
      this.stats.dropped++;
      this.undeclaredDrops++;
    }
    return entry;
  }

  markReady(entry) {
    entry.ready = true;
    this.kick(0);
  }

  // Drops not yet said on a record; the caller puts them on the next one.
  takeDropped() {
    const n = this.undeclaredDrops;
    this.undeclaredDrops = 0;
    return n;
  }

  queued() { return this.queue.length; }

  // Send soon: now if nothing is under way and no backoff is running.
  kick(delayMs = 0) {
    if (this.stopped || this.inFlight > 0 || this.soon) return;
    const wait = Math.max(delayMs, this.retryAt - this.now());
    if (wait <= 0 && typeof queueMicrotask === 'function') {
      // at the end of this task rather than in a task of its own: what
      // this task made goes in one request, and a stutter's record does
      // not wait another turn of an event loop the stall left busy
      if (this.timer !== null) { this.clearTimer(this.timer); this.timer = null; }
      this.soon = true;
      queueMicrotask(() => { this.soon = false; this.send(); });
      return;
    }
    if (this.timer !== null) {
      if (this.timerAt <= this.now() + wait) return;
      this.clearTimer(this.timer);
    }
    this.timerAt = this.now() + wait;
    this.timer = this.setTimer(() => { this.timer = null; this.send(); }, wait);
  }

  readyPrefix() {
    let n = 0;
    while (n < this.queue.length && n < this.maxBatch && this.queue[n].ready) n++;
    return n;
  }

  async send() {
    if (this.stopped || this.inFlight > 0) return;
    let n = this.readyPrefix();
    if (n === 0) { this.settle(true); return; }
    // as many as fit in MAX_BODY (one record alone always goes)
    const parts = [];
    let bytes = 2, k = 0;
    for (; k < n; k++) {
      const j = JSON.stringify(this.queue[k].rec);
      if (k > 0 && bytes + j.length + 1 > MAX_BODY) break;
      parts.push(j);
      bytes += j.length + 1;
    }
    n = k;
    this.inFlight = n;
    const body = `[${parts.join(',')}]`;
    let ok = false, retry = true;
    try {
      const r = await this.fetch(this.url, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body,
        credentials: 'omit', keepalive: false,
      });
      let answer = null;
      try { answer = await r.json(); } catch { /* an answer without JSON */ }
      if (r.ok) {
        ok = true;
        // {accepted, refused: N, refusals: [{index, reason}]} (docs/api.md)
        const refusals = Array.isArray(answer?.refusals) ? answer.refusals : Array.isArray(answer?.refused) ? answer.refused : [];
        const refused = typeof answer?.refused === 'number' ? answer.refused : refusals.length;
        this.stats.refused += refused;
        if (refusals.length) {
          const r = refusals[0];
          this.stats.lastRefusal = (r && r.reason ? `record ${r.index}: ${r.reason}` : JSON.stringify(r)).slice(0, 200);
        }
        this.stats.sent += n - refused;
      } else if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) {
        // the daemon refused the batch as a whole: sending it again would
        // be refused again, so it is counted and let go
        ok = true; retry = false;
        this.stats.refused += n;
        const why = answer && (answer.error || answer.message);
        this.stats.lastRefusal = `${r.status} ${typeof why === 'string' ? why : why ? JSON.stringify(why) : r.statusText || ''}`.trim().slice(0, 200);
      } else {
        this.stats.lastError = `${r.status} ${r.statusText || ''}`.trim();
      }
      this.stats.reachable = true;
    } catch (e) {
      this.stats.reachable = false;
      this.stats.lastError = String(e && e.message ? e.message : e).slice(0, 200);
    }
    if (ok) {
      this.queue.splice(0, n);
      this.stats.batches++;
      this.stats.lastSentAt = this.now();
      this.backoffMs = 0;
      this.retryAt = 0;
    } else if (retry) {
      this.stats.failures++;
      this.backoffMs = Math.min(this.backoffMaxMs, this.backoffMs ? this.backoffMs * 2 : this.backoffMinMs);
      this.retryAt = this.now() + this.backoffMs;
    }
    this.inFlight = 0;
    this.onChange();
    if (!ok) {
      this.settle(true);
      this.kick(0);
    } else if (this.readyPrefix() > 0) this.kick(0);
    else this.settle();
  }

  // Resolve flush() waiters once nothing ready is left to send, or when a
  // send has failed since they asked (the daemon is down: they are told,
  // not kept waiting).
  settle(failed = false) {
    if (!failed && this.readyPrefix() > 0) return;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  // Send everything ready now; resolves when it went, or the send failed.
  flush() {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      if (this.readyPrefix() === 0 && this.inFlight === 0) { this.settle(); return; }
      this.retryAt = 0;
      if (this.timer !== null) { this.clearTimer(this.timer); this.timer = null; }
      if (this.inFlight === 0) this.send();
    }).then(() => this.status());
  }

  // The page is going away: hand what is left to the browser, which sends
  // it after the page is gone (sendBeacon, or a keepalive fetch where the
  // beacon is refused, e.g. a cross-origin JSON body).
  beacon() {
    const recs = this.queue.slice(this.inFlight).map((e) => e.rec);
    if (recs.length === 0) return 0;
    const body = JSON.stringify(recs);
    let sent = false;
    try {
      const nav = globalThis.navigator;
      if (nav && typeof nav.sendBeacon === 'function' && body.length < 60000 && sameOrigin(this.url))
        sent = nav.sendBeacon(this.url, new Blob([body], { type: 'application/json' }));
    } catch { sent = false; }
    if (!sent && body.length < 60000) {
      try {
        this.fetch(this.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, keepalive: true, credentials: 'omit' })
          .catch(() => {});
        sent = true;
      } catch { sent = false; }
    }
    if (sent) {
      this.stats.sent += recs.length;
      this.queue.length = this.inFlight;
    }
    return sent ? recs.length : 0;
  }

  status() {
    return { ...this.stats, queued: this.queue.length, backoffMs: this.backoffMs, url: this.url };
  }

  stop() {
    this.stopped = true;
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
    this.settle();
  }
}

function sameOrigin(url) {
  try {
    return new URL(url, globalThis.location?.href).origin === globalThis.location?.origin;
  } catch { return false; }
}
