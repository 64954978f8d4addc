// panel-connection.js — the panel's line to the daemon: JSON requests to
// its HTTP API and the events socket, which reconnects by itself with a
// backoff and resumes where it left off (`?since=`).  No DOM and no view:
// what the panel shows of it goes out through callbacks (onState, onEvent,
// onLost), and fetch, WebSocket, the timers and the random source are
// handed in, so the backoff and the resuming run in node
// (panel-connection.test.mjs) against a fake socket and fake timers.
//
// Nothing here throws at the host page but request(), whose caller makes
// its error a tab's state: a socket that cannot be made, or closes, is a
// retry; a page without WebSocket is "offline" for good.
import { parseEvent } from './events.js';

export const API = '/api/sloptimize';
const FETCH_TIMEOUT_MS = 10000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30000;

// The daemon that served this module (the panel's modules are served side
// by side, so it is where panel.js came from), else the page's origin.
export function defaultEndpoint() {
  try {
    const u = new URL(import.meta.url);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
  } catch { /* not a URL: bundled some other way */ }
  if (globalThis.location && /^https?:$/.test(location.protocol)) return location.origin;
  return 'http://127.0.0.1:7567';
}

// http://host:port, no path and no trailing slash; anything else throws.
export function normalizeEndpoint(e) {
  const s = String(e || '').trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/.test(s)) throw new Error(`an endpoint is http://host:port, not "${e}"`);
  return s;
}

/*
 * How long to wait before reconnect number n (0 for the first after a
 * loss): doubling from BACKOFF_MIN_MS up to BACKOFF_MAX_MS, spread by
 * ±20 % (`random` in [0, 1)) so that the panels of several tabs do not
 * knock on a restarted daemon all at once.
 */
export function backoffMs(n, random = Math.random) {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** n);
  return Math.round(base * (0.8 + random() * 0.4));
}

/*
 * One daemon's API and events socket.  Options: endpoint (normalized by
 * the caller), fetch, WebSocket, onState(state, text) (the header's
 * line: 'connecting', 'retry', 'offline', 'live'), onEvent(message) (each
 * message parseEvent takes, after the socket's own bookkeeping), onLost()
 * (a socket that had said hello closed), and for tests setTimeout,
 * clearTimeout and random.  The socket is not opened until connect().
 */
export class Connection {
  constructor(opts = {}) {
    this.endpoint = opts.endpoint;
    this.fetch = opts.fetch || globalThis.fetch?.bind(globalThis);
    this.WebSocket = opts.WebSocket || globalThis.WebSocket;
    this.onState = opts.onState || (() => {});
    this.onEvent = opts.onEvent || (() => {});
    this.onLost = opts.onLost || (() => {});
    this.setTimeout = opts.setTimeout || ((fn, ms) => setTimeout(fn, ms));
    this.clearTimeout = opts.clearTimeout || ((t) => clearTimeout(t));
    this.random = opts.random || Math.random;
    // resume: the id of the last wake or record taken (or a gap's resume
    // point), sent as ?since= so the daemon replays what was missed
    this.ws = null;
    this.state = 'connecting';
    this.retries = 0;
    this.timer = null;
    this.resume = null;
    this.lastError = null;
    this.hello = null;
    this.closed = false;
  }

  url(path) {
    return this.endpoint + API + path;
  }

  // JSON over HTTP.  `known`: the ETag of what we hold; when the answer
  // carries the same one (the browser revalidated it: cache 'no-cache'
  // sends If-None-Match by itself, also cross-origin), the body is not
  // parsed again and {status: 304} comes back.  Throws an Error whose
  // `unreachable` is set when the daemon did not answer, whose `status`
  // is the HTTP status of a refusal.
  async request(method, path, body, { known = null, timeout = FETCH_TIMEOUT_MS } = {}) {
    if (!this.fetch) throw new Error('this page has no fetch()');
    const ctl = typeof AbortController === 'function' ? new AbortController() : null;
    const timer = ctl ? setTimeout(() => ctl.abort(), timeout) : null;
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let r;
    try {
      r = await this.fetch(this.url(path), {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        signal: ctl ? ctl.signal : undefined, cache: method === 'GET' ? 'no-cache' : 'no-store', credentials: 'omit',
      });
    } catch (err) {
      const why = err && err.name === 'AbortError' ? `no answer in ${timeout / 1000} s` : (err && err.message) || String(err);
      const e = new Error(`cannot reach ${this.endpoint}: ${why}`);
      e.unreachable = true;
      throw e;
    } finally {
      if (timer) clearTimeout(timer);
    }
    const etag = r.headers.get('ETag');
    if (r.status === 304 || (known && r.ok && etag === known)) {
      if (ctl) ctl.abort(); // the body is what we have
      return { status: 304, etag };
    }
    let doc = null;
    const text = await r.text();
    try {
      doc = text ? JSON.parse(text) : null;
    } catch {
      doc = null;
    }
    if (!r.ok) {
      const msg = doc && doc.error ? `${doc.error.code}: ${doc.error.message}` : `${r.status} ${r.statusText}`;
      const e = new Error(`${method} ${API}${path}: ${msg}`);
      e.status = r.status;
      throw e;
    }
    if (doc === null) throw new Error(`${method} ${API}${path}: the answer is not JSON`);
    return { status: r.status, doc, etag };
  }

  setState(state, text) {
    this.state = state;
    this.onState(state, text);
  }

  // Open the events socket (a pending retry is dropped): from the resume
  // point when there is one, else live from now.
  connect() {
    if (this.closed) return;
    if (!this.WebSocket) {
      this.setState('offline', 'this page has no WebSocket');
      return;
    }
    this.clearTimeout(this.timer);
    const base = this.endpoint.replace(/^http/, 'ws') + API + '/events';
    const url = this.resume ? `${base}?since=${encodeURIComponent(this.resume)}` : base;
    let ws;
    try {
      ws = new this.WebSocket(url);
    } catch (err) {
      this.lastError = err.message;
      this.retry();
      return;
    }
    this.ws = ws;
    this.setState('connecting', this.retries ? 'reconnecting…' : 'connecting…');
    ws.onmessage = (ev) => {
      const m = parseEvent(ev.data);
      if (m) this.take(m);
    };
    ws.onerror = () => {
      this.lastError = 'the events socket failed';
    };
    ws.onclose = (ev) => {
      // a socket let go of (a new endpoint, the end) is nobody's loss
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.closed) return;
      if (ev && ev.reason) this.lastError = ev.reason;
      if (this.hello) {
        this.hello = null;
        this.onLost();
      }
      this.retry();
    };
  }

  // The next try, after backoffMs; past the third the header says offline.
  retry() {
    const n = this.retries++;
    const wait = backoffMs(n, this.random);
    this.setState(n > 2 ? 'offline' : 'retry', `${n > 2 ? 'offline' : 'reconnecting'} — retry in ${Math.ceil(wait / 1000)} s${this.lastError ? ` (${this.lastError})` : ''}`);
    this.timer = this.setTimeout(() => this.connect(), wait);
  }

  // The socket's own bookkeeping of a message, then the panel's turn.
  take(m) {
    if (!m || typeof m !== 'object') return;
    if (m.type === 'hello') {
      this.hello = m;
      this.retries = 0;
      this.lastError = null;
      // resume after the last line folded before we came: what follows is live
      if (!this.resume && typeof m.generation === 'number' && typeof m.cursor === 'number') {
        this.resume = `${m.generation}:${m.cursor - 1}`;
      }
      this.setState('live', m.ready === false ? 'live (daemon still folding the ledger)' : 'live');
    } else if (m.type === 'gap') {
      if (typeof m.resume === 'string') this.resume = m.resume;
    } else if ((m.type === 'record' || m.type === 'wake') && typeof m.id === 'string') {
      this.resume = m.id;
    }
    this.onEvent(m);
  }

  // Another daemon: nothing of the old one's stream is resumed.  Throws,
  // changing nothing, on an endpoint normalizeEndpoint refuses.
  setEndpoint(ep) {
    this.endpoint = normalizeEndpoint(ep);
    this.resume = null;
    this.retries = 0;
    this.drop();
    this.connect();
  }

  // Let go of the socket without a retry.
  drop() {
    const ws = this.ws;
    this.ws = null;
    if (ws) try { ws.close(); } catch { /* already closed */ }
  }

  // The end: no socket, no retry, nothing after.
  close() {
    this.closed = true;
    this.clearTimeout(this.timer);
    this.drop();
  }
}
