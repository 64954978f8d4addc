//# allFunctionsCalledOnLoad
// delivery.js — the recorder's outbox: records go to the daemon's ingest
// route (POST {endpoint}/api/sloptimize/records, a JSON array) in batches,
// in the order they were made, retried with a backoff while the daemon is
// down.  Nothing here ever blocks a frame: a send is a fetch, and the
// frame loop only pushes onto an array.
//
// Two requests may be under way at once, and the daemon keeps the order
// (docs/recorder.md, "Delivery"; docs/api.md): each batch is sealed when
// it is first sent — its records, its body and its sequence number fixed
// — and carries the page's delivery id, that number and the oldest of the
// page's batches still without an answer (?page=&seq=&first=).  The
// daemon appends a batch only after its predecessor (or after a short
// deadline, if the predecessor never comes), and a batch it has appended
// already is answered and not appended again — so a retry after a lost
// answer never duplicates records.  Why two: a stutter's record is made
// at the end of a long frame, and the request under way then (a
// heartbeat's) has its answer read only on the main thread, which the
// next frame's stall may hold for hundreds of milliseconds; the record
// must not wait for that answer to leave.
//
// Memory is bounded: past `maxQueued` records the oldest not yet sealed
// are dropped and counted; the count is handed to the next record made
// (takeDropped()), so the ledger says what was lost.  At most `maxFlying`
// batches are sealed at a time.  A record can be queued not ready (a
// long-script hitch waiting for its Long Animation Frames entry): the
// batch stops before it, which keeps the order.
//
// The daemon's answer, where it says which records it refused, is kept
// (refused count, last reason) and those are not retried: a refused record
// would be refused again.

export const ROUTE = '/api/sloptimize/records';

// The daemon's error codes (schemas/error.json): an error answer carrying
// one of them came from the daemon.  Anything else — a dev server's proxy
// answering 500 or 502 in plain text because it could not reach the
// daemon — did not, and the daemon is not "reachable" for it.
const DAEMON_CODES = new Set(['bad_path', 'bad_parameter', 'bad_length', 'unexpected_body', 'invalid_json', 'invalid_fix',
  'invalid_settings', 'no_host', 'bad_host', 'bad_origin', 'forbidden', 'not_found', 'method_not_allowed', 'length_required',
  'body_too_large', 'unsupported_media_type', 'upgrade_required', 'bad_upgrade', 'busy', 'not_regular_file', 'internal',
  'no_space', 'no_sink', 'invalid_command', 'no_page', 'page_busy', 'page_hidden', 'invalid_snapshot', 'bad_header',
  'cross_site', 'sink_unavailable', 'too_many_subscribers']);

// Did this answer come from the daemon?  A success is the ingest's JSON
// ({accepted, …} or {duplicate}); an error is {error: {code, message}}
// with one of the daemon's codes.
export function fromDaemon(status, answer) {
  if (answer === null || typeof answer !== 'object') return false;
  if (status >= 200 && status < 300) return 'accepted' in answer || 'duplicate' in answer || 'records' in answer;
  const e = answer.error;
  return e !== null && typeof e === 'object' && DAEMON_CODES.has(e.code);
}
const MAX_BODY = 512 * 1024;      // the route takes up to 1 MiB; half of it leaves room

// A page's delivery id: 16 of [0-9a-z], random per recorder (the daemon
// takes 1–32 of [A-Za-z0-9_-]).
export function newPageId() {
  const a = new Uint8Array(16);
  const c = globalThis.crypto;
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(a);
  else for (let i = 0; i < a.length; i++) a[i] = Math.floor(Math.random() * 256);
  return Array.from(a, (b) => (b % 36).toString(36)).join('');
}

export class Outbox {
  constructor({ endpoint = '', fetch: fetchFn = globalThis.fetch?.bind(globalThis), maxQueued = 5000, maxBatch = 200,
    maxFlying = 2, pageId = newPageId(),
    backoffMinMs = 250, backoffMaxMs = 30000, now = () => Date.now(), setTimer = (fn, ms) => setTimeout(fn, ms),
    clearTimer = (id) => clearTimeout(id), onChange = () => {}, onOwn = null, ownNow = () => performance.now() } = {}) {
    this.url = `${String(endpoint).replace(/\/+$/, '')}${ROUTE}`;
    this.fetch = fetchFn;
    this.maxQueued = maxQueued;
    this.maxBatch = maxBatch;
    this.maxFlying = Math.max(1, maxFlying);
    this.pageId = pageId;
    this.seq = 0;             // the last batch sealed
    this.backoffMinMs = backoffMinMs;
    this.backoffMaxMs = backoffMaxMs;
    this.now = now;
    this.setTimer = setTimer;
    this.clearTimer = clearTimer;
    this.onChange = onChange;
    // the recorder counts its own main-thread time (recorder.js, ownAdd)
    this.onOwn = typeof onOwn === 'function' ? onOwn : null;
    this.ownNow = ownNow;     // the clock of that time (a test's own)
    this.queue = [];          // {rec, ready}, not yet in a batch
    this.sealed = [];         // {seq, n, body, flying}, by seq: sent, no answer yet
    this.flying = 0;          // requests under way
    this.timer = null;
    this.soon = false;        // a send is queued for the end of this task
    this.backoffMs = 0;
    this.retryAt = 0;
    this.stopped = false;
    this.waiters = [];
    this.stats = { sent: 0, batches: 0, refused: 0, dropped: 0, failures: 0, duplicates: 0, reachable: null,
      lastError: null, lastSentAt: null, lastRefusal: null, maxFlying: 0 };
    this.undeclaredDrops = 0;
  }

  // Queue a record; `ready: false` holds it (and all after it) until ready(entry).
  push(rec, { ready = true } = {}) {
    const entry = { rec, ready };
    this.queue.push(entry);
    while (this.queue.length > this.maxQueued) {
      // the oldest not sealed: what is sealed is under way, or its retry
      this.queue.shift();
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

  // Records not yet answered: queued, and in sealed batches.
  queued() {
    let n = this.queue.length;
    for (const b of this.sealed) n += b.n;
    return n;
  }

  // Is there a request to make now?  A sealed batch waiting for its retry,
  // or ready records and room for another batch.
  canSend() {
    if (this.flying >= this.maxFlying) return false;
    if (this.sealed.some((b) => !b.flying)) return true;
    return this.sealed.length < this.maxFlying && this.readyPrefix() > 0;
  }

  // Send soon: in a task of its own if there is room for a request and no
  // backoff runs.  `urgent` (a record that wakes the agent): at the end of
  // this task instead — it does not wait another turn of an event loop the
  // stall left busy.  Otherwise never in the task that made the record:
  // sealing and the fetch() call are some tenths of a millisecond, and
  // added to a record's task they made it the page's long one.
  kick(delayMs = 0, urgent = false) {
    if (this.stopped || this.soon || !this.canSend()) return;
    const wait = Math.max(delayMs, this.retryAt - this.now());
    if (wait <= 0 && urgent && typeof queueMicrotask === 'function') {
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

  // The ready prefix of the queue, as many as fit in MAX_BODY (one record
  // alone always goes), becomes the next batch.
  seal() {
    const n = this.readyPrefix();
    const parts = [];
    let bytes = 2, k = 0;
    for (; k < n; k++) {
      const j = JSON.stringify(this.queue[k].rec);
      if (k > 0 && bytes + j.length + 1 > MAX_BODY) break;
      parts.push(j);
      bytes += j.length + 1;
    }
    this.queue.splice(0, k);
    const b = { seq: ++this.seq, n: k, body: `[${parts.join(',')}]`, flying: false };
    this.sealed.push(b);
    return b;
  }

  // The batch's address: the page, its number, and the oldest batch the
  // page has no answer for (docs/api.md).
  batchUrl(b) {
    const first = this.sealed.length ? Math.min(this.sealed[0].seq, b.seq) : b.seq;
    return `${this.url}?page=${this.pageId}&seq=${b.seq}&first=${first}`;
  }

  // Start what may start now: retries first (in order), then a new batch.
  // The task's time goes to onOwn(ms, part): 'seal' when most of it was
  // sealing (JSON.stringify of the records), else 'fetch' (the fetch()
  // calls), so that the recorder can say what its longest task was.
  send() {
    if (!this.onOwn) { this.sendNow(); return; }
    const t0 = this.ownNow();
    const sealMs = this.sendNow();
    const ms = this.ownNow() - t0;
    this.onOwn(ms, sealMs * 2 > ms ? 'seal' : 'fetch');
  }

  // What may start now, started; the time sealing took (onOwn's clock).
  sendNow() {
    let sealMs = 0;
    if (this.stopped) return sealMs;
    if (this.retryAt > this.now()) { this.kick(0); return sealMs; }
    let started = false;
    while (this.flying < this.maxFlying) {
      let b = this.sealed.find((x) => !x.flying);
      if (!b && this.sealed.length < this.maxFlying && this.readyPrefix() > 0) {
        const t = this.ownNow();
        b = this.seal();
        sealMs += this.ownNow() - t;
      }
      if (!b) break;
      started = true;
      this.fly(b);
    }
    if (!started && this.flying === 0) this.settle(true);
    return sealMs;
  }

  async fly(b) {
    b.flying = true;
    this.flying++;
    if (this.flying > this.stats.maxFlying) this.stats.maxFlying = this.flying;
    const url = this.batchUrl(b);
    let ok = false, retry = true;
    try {
      const r = await this.fetch(url, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: b.body,
        credentials: 'omit', keepalive: false,
      });
      let answer = null;
      try { answer = await r.json(); } catch { /* an answer without JSON */ }
      const daemon = fromDaemon(r.status, answer);
      if (!daemon && (r.status >= 500 || r.status === 404 || r.status === 405)) {
        // not the daemon's answer: a proxy in front of it (Vite's answers
        // 500 or 502 when nothing listens) or another server — the daemon
        // was not reached; kept and retried like a failed connection
        this.stats.reachable = false;
        this.stats.lastError = `${r.status} ${r.statusText || ''} from ${r.headers?.get?.('server') || 'something that is not the daemon'} (the daemon did not answer: is sloptimized running for this project?)`.replace(/\s+/g, ' ').trim().slice(0, 200);
        throw Object.assign(new Error(this.stats.lastError), { notDaemon: true });
      }
      if (r.ok) {
        ok = true;
        if (answer?.duplicate === true) {
          // appended already: the answer to an earlier send was lost
          this.stats.duplicates++;
          this.stats.sent += b.n;
        } else {
          // {accepted, refused: N, refusals: [{index, reason}]} (docs/api.md)
          const refusals = Array.isArray(answer?.refusals) ? answer.refusals : Array.isArray(answer?.refused) ? answer.refused : [];
          const refused = typeof answer?.refused === 'number' ? answer.refused : refusals.length;
          this.stats.refused += refused;
          if (refusals.length) {
            const x = refusals[0];
            this.stats.lastRefusal = (x && x.reason ? `record ${x.index}: ${x.reason}` : JSON.stringify(x)).slice(0, 200);
          }
          this.stats.sent += b.n - refused;
        }
      } else if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429) {
        // the daemon refused the batch as a whole: sending it again would
        // be refused again, so it is counted and let go
        ok = true; retry = false;
        this.stats.refused += b.n;
        const why = answer && (answer.error || answer.message);
        this.stats.lastRefusal = `${r.status} ${typeof why === 'string' ? why : why ? JSON.stringify(why) : r.statusText || ''}`.trim().slice(0, 200);
      } else {
        this.stats.lastError = `${r.status} ${r.statusText || ''}`.trim();
      }
      this.stats.reachable = true;
    } catch (e) {
      this.stats.reachable = false;
      if (!e || !e.notDaemon) this.stats.lastError = String(e && e.message ? e.message : e).slice(0, 200);
    }
    const t0 = this.onOwn ? this.ownNow() : 0;
    this.flying--;
    b.flying = false;
    if (this.stopped && !ok) { this.settle(true); return; }
    if (ok) {
      const i = this.sealed.indexOf(b);
      if (i >= 0) this.sealed.splice(i, 1);
      this.stats.batches++;
      this.stats.lastSentAt = this.now();
      this.backoffMs = 0;
      this.retryAt = 0;
    } else if (retry) {
      // the same batch goes again, with the same number: if the daemon
      // did append it, it says so and appends nothing
      this.stats.failures++;
      this.backoffMs = Math.min(this.backoffMaxMs, this.backoffMs ? this.backoffMs * 2 : this.backoffMinMs);
      this.retryAt = this.now() + this.backoffMs;
    }
    this.onChange();
    if (!ok) {
      this.settle(true);
      this.kick(0);
    } else if (this.canSend()) this.kick(0);
    else this.settle();
    if (this.onOwn) this.onOwn(this.ownNow() - t0, 'answer');
  }

  // Resolve flush() waiters once nothing is left to send or under way, or
  // when a send has failed since they asked (the daemon is down: they are
  // told, not kept waiting).
  settle(failed = false) {
    if (!failed && (this.readyPrefix() > 0 || this.sealed.length > 0)) return;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  // Send everything ready now; resolves when it went, or a send failed.
  flush() {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      if (this.readyPrefix() === 0 && this.sealed.length === 0) { this.settle(); return; }
      this.retryAt = 0;
      if (this.timer !== null) { this.clearTimer(this.timer); this.timer = null; }
      this.send();
    }).then(() => this.status());
  }

  // The page is going away: hand what is left to the browser, which sends
  // it after the page is gone (sendBeacon, or a keepalive fetch where the
  // beacon is refused, e.g. a cross-origin JSON body).  Each batch keeps
  // its number, so one the daemon has already is not appended twice.
  beacon() {
    while (this.readyPrefix() > 0 || this.queue.length > 0) {
      // a record still not ready goes as it is: the page will not wait
      for (const e of this.queue) e.ready = true;
      this.seal();
    }
    // every batch's address first: each says the oldest still unanswered
    const go = this.sealed.filter((b) => !b.flying).map((b) => ({ b, url: this.batchUrl(b) }));
    let sent = 0;
    for (const { b, url } of go) {
      if (!this.beaconOne(url, b.body)) break;
      sent += b.n;
      this.stats.sent += b.n;
      this.sealed.splice(this.sealed.indexOf(b), 1);
    }
    return sent;
  }

  beaconOne(url, body) {
    if (body.length >= 60000) return false;
    try {
      const nav = globalThis.navigator;
      if (nav && typeof nav.sendBeacon === 'function' && sameOrigin(url) &&
          nav.sendBeacon(url, new Blob([body], { type: 'application/json' }))) return true;
    } catch { /* the keepalive fetch below */ }
    try {
      this.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, keepalive: true, credentials: 'omit' })
        .catch(() => {});
      return true;
    } catch { return false; }
  }

  status() {
    return { ...this.stats, queued: this.queued(), inFlight: this.flying, backoffMs: this.backoffMs, url: this.url,
      pageId: this.pageId };
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
