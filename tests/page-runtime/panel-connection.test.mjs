// panel-connection.js in node: the events socket's backoff, its resume
// points and its reconnects, driven through a fake WebSocket and fake
// timers (nothing waits on real time), and the HTTP request's answers
// through a fake fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection, backoffMs, normalizeEndpoint } from '../../page-runtime/panel-connection.js';

// A socket the test opens, feeds and closes by hand.
function fakeSocketClass() {
  const made = [];
  class FakeSocket {
    constructor(url) {
      this.url = url;
      this.closed = false;
      made.push(this);
    }
    close() {
      this.closed = true;
    }
    say(msg) {
      this.onmessage({ data: typeof msg === 'string' ? msg : JSON.stringify(msg) });
    }
    lose(reason = '') {
      this.onclose({ reason });
    }
  }
  return { FakeSocket, made };
}

// Timers held in a list: the test runs the next one.
function fakeTimers() {
  const t = { pending: [], cleared: 0 };
  t.setTimeout = (fn, ms) => {
    const h = { fn, ms };
    t.pending.push(h);
    return h;
  };
  t.clearTimeout = (h) => {
    const i = t.pending.indexOf(h);
    if (i >= 0) {
      t.pending.splice(i, 1);
      t.cleared++;
    }
  };
  t.runNext = () => {
    const h = t.pending.shift();
    h.fn();
    return h.ms;
  };
  return t;
}

function setup(extra = {}) {
  const { FakeSocket, made } = fakeSocketClass();
  const timers = fakeTimers();
  const states = [], events = [];
  let lost = 0;
  const conn = new Connection({
    endpoint: 'http://127.0.0.1:7567', WebSocket: FakeSocket,
    setTimeout: timers.setTimeout, clearTimeout: timers.clearTimeout, random: () => 0.5,
    onState: (state, text) => states.push({ state, text }),
    onEvent: (m) => events.push(m),
    onLost: () => lost++,
    ...extra,
  });
  return { conn, made, timers, states, events, lost: () => lost };
}

test('backoff doubles from 500 ms to 30 s, spread by ±20 %', () => {
  assert.equal(backoffMs(0, () => 0.5), 500);
  assert.equal(backoffMs(1, () => 0.5), 1000);
  assert.equal(backoffMs(3, () => 0.5), 4000);
  assert.equal(backoffMs(20, () => 0.5), 30000, 'capped');
  assert.equal(backoffMs(0, () => 0), 400);
  assert.equal(backoffMs(20, () => 0.999999), 36000);
});

test('an endpoint is http(s)://host:port; a trailing slash goes, a path is refused', () => {
  assert.equal(normalizeEndpoint(' http://127.0.0.1:7567/ '), 'http://127.0.0.1:7567');
  assert.throws(() => normalizeEndpoint('http://127.0.0.1:7567/api'), /an endpoint is http:\/\/host:port/);
  assert.throws(() => normalizeEndpoint('ftp://x'), /an endpoint/);
});

test('connect opens the events socket at the endpoint, live once hello comes', () => {
  const { conn, made, states } = setup();
  conn.connect();
  assert.equal(made.length, 1);
  assert.equal(made[0].url, 'ws://127.0.0.1:7567/api/sloptimize/events');
  assert.deepEqual(states.at(-1), { state: 'connecting', text: 'connecting…' });
  made[0].say({ type: 'hello', generation: 1, cursor: 10112, ready: false });
  assert.deepEqual(states.at(-1), { state: 'live', text: 'live (daemon still folding the ledger)' });
  assert.equal(conn.state, 'live');
  assert.equal(conn.resume, '1:10111', 'resumes after the last line folded before it came');
});

test('a lost socket is retried with the backoff; past the third try it says offline', () => {
  const { conn, made, timers, states } = setup();
  conn.connect();
  made[0].lose('going away');
  assert.equal(states.at(-1).state, 'retry');
  assert.equal(states.at(-1).text, 'reconnecting — retry in 1 s (going away)');
  const waits = [timers.runNext()];
  const said = [];
  for (let i = 1; i < 5; i++) {
    assert.equal(made.length, i + 1, 'the timer reconnects');
    assert.equal(states.at(-1).text, 'reconnecting…');
    made[i].lose();
    said.push(states.at(-1).state);
    waits.push(timers.runNext());
  }
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 8000]);
  assert.deepEqual(said, ['retry', 'retry', 'offline', 'offline'], 'from the fourth wait on, offline');
  assert.match(states.at(-2).text, /^offline — retry in 8 s \(going away\)$/);
});

test('hello resets the backoff; a socket that said hello and closes is a loss, reconnected with ?since=', () => {
  const { conn, made, timers, lost } = setup();
  conn.connect();
  made[0].lose();
  timers.runNext();
  made[1].lose();
  timers.runNext();
  assert.equal(conn.retries, 2);
  made[2].say({ type: 'hello', generation: 2, cursor: 5, ready: true });
  assert.equal(conn.retries, 0);
  made[2].say({ type: 'record', id: '2:7', record: { type: 'hitch', fp: 'a1' } });
  assert.equal(conn.resume, '2:7', 'a record moves the resume point');
  assert.equal(lost(), 0);
  made[2].lose();
  assert.equal(lost(), 1, 'the loss is said once');
  assert.equal(timers.runNext(), 500, 'the first retry after a live socket waits the least');
  assert.equal(made[3].url, 'ws://127.0.0.1:7567/api/sloptimize/events?since=2%3A7');
});

test('a gap moves the resume point to where the daemon says; the panel gets every message taken', () => {
  const { conn, made, events } = setup();
  conn.connect();
  made[0].say({ type: 'hello', generation: 1, cursor: 1 });
  made[0].say({ type: 'gap', after: '1:40950', resume: '2:-1', lost: 101 });
  made[0].say('not json');
  made[0].say({ type: 'wake', id: 'nope', line: 'x' });
  assert.equal(conn.resume, '2:-1');
  assert.deepEqual(events.map((m) => m.type), ['hello', 'gap'], 'what parseEvent refuses goes nowhere');
});

test('a socket that cannot be made is retried, not thrown', () => {
  let tries = 0;
  class Refused {
    constructor() {
      tries++;
      throw new Error('blocked');
    }
  }
  const { conn, timers, states } = setup({ WebSocket: Refused });
  conn.connect();
  assert.equal(tries, 1);
  assert.equal(states.at(-1).text, 'reconnecting — retry in 1 s (blocked)');
  timers.runNext();
  assert.equal(tries, 2);
});

test('a page without WebSocket is offline and tries nothing', () => {
  const { conn, timers, states } = setup({ WebSocket: null });
  conn.WebSocket = null;
  conn.connect();
  assert.deepEqual(states, [{ state: 'offline', text: 'this page has no WebSocket' }]);
  assert.equal(timers.pending.length, 0);
});

test('a new endpoint drops the old socket without a retry and starts afresh', () => {
  const { conn, made, timers, lost } = setup();
  conn.connect();
  made[0].say({ type: 'hello', generation: 1, cursor: 100 });
  conn.setEndpoint('http://127.0.0.1:9000/');
  assert.equal(made[0].closed, true);
  made[0].lose();
  assert.equal(lost(), 0, 'a socket let go of is nobody\'s loss');
  assert.equal(timers.pending.length, 0, 'and no retry');
  assert.equal(made[1].url, 'ws://127.0.0.1:9000/api/sloptimize/events', 'no ?since= into another daemon');
  assert.throws(() => conn.setEndpoint('nonsense'));
  assert.equal(conn.endpoint, 'http://127.0.0.1:9000', 'a refused endpoint changes nothing');
});

test('close stops the retries for good', () => {
  const { conn, made, timers } = setup();
  conn.connect();
  made[0].lose();
  assert.equal(timers.pending.length, 1);
  conn.close();
  assert.equal(timers.pending.length, 0);
  conn.connect();
  assert.equal(made.length, 1);
});

// --- HTTP -------------------------------------------------------------------

function answer(status, body, headers = {}) {
  return {
    status, ok: status >= 200 && status < 300, statusText: status === 404 ? 'Not Found' : 'OK',
    headers: { get: (h) => headers[h] ?? null },
    text: async () => body,
  };
}

test('request: JSON in and out, an ETag we hold is not parsed again', async () => {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, init });
    return answer(200, '{"issues":[]}', { ETag: '"v1"' });
  };
  const conn = new Connection({ endpoint: 'http://127.0.0.1:7567', fetch });
  const r = await conn.request('PUT', '/settings', { loop: 'off' });
  assert.deepEqual(r, { status: 200, doc: { issues: [] }, etag: '"v1"' });
  assert.equal(seen[0].url, 'http://127.0.0.1:7567/api/sloptimize/settings');
  assert.equal(seen[0].init.body, '{"loop":"off"}');
  assert.equal(seen[0].init.headers['Content-Type'], 'application/json');
  assert.equal(seen[0].init.credentials, 'omit');
  assert.deepEqual(await conn.request('GET', '/issues', undefined, { known: '"v1"' }), { status: 304, etag: '"v1"' });
  assert.equal(seen[1].init.cache, 'no-cache');
});

test('request: a refusal carries the daemon\'s error and status; no answer is unreachable', async () => {
  const conn = new Connection({
    endpoint: 'http://127.0.0.1:7567',
    fetch: async () => answer(404, '{"error":{"code":"not-found","message":"no such footprint"}}'),
  });
  await assert.rejects(conn.request('GET', '/issues/x'), (e) => e.status === 404 && e.message === 'GET /api/sloptimize/issues/x: not-found: no such footprint');
  conn.fetch = async () => { throw new Error('connection refused'); };
  await assert.rejects(conn.request('GET', '/status'), (e) => e.unreachable === true && e.message === 'cannot reach http://127.0.0.1:7567: connection refused');
  conn.fetch = async () => answer(200, '<html>');
  await assert.rejects(conn.request('GET', '/status'), /the answer is not JSON/);
});
