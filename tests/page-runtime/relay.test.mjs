// relay.js: the open tab's end of the daemon's relay, driven through a
// scripted WebSocket and a scripted bench (no timers run: the fake
// setInterval and setTimeout are recorded and fired by hand).  The page
// registers when the socket opens and again when it is hidden; a command
// runs the bench's call with its options, says its progress first and
// answers with the result; a bench that throws answers ok: false with its
// words; a verb that is not a bench call, a second command while busy and
// a page runtime without the call each answer an error without running
// anything; after() sees every end; a closed socket is dialled again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startRelay } from '../../page-runtime/relay.js';

function harness({ bench } = {}) {
  const sockets = [];
  class FakeWS {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.sent = [];
      sockets.push(this);
    }
    send(t) { this.sent.push(JSON.parse(t)); }
    close() { this.readyState = 3; }
    open() { this.readyState = 1; this.onopen(); }
    deliver(m) { this.onmessage({ data: JSON.stringify(m) }); }
    drop() { this.readyState = 3; this.onclose({}); }
  }
  const listeners = {};
  const document = {
    visibilityState: 'visible',
    title: 'the game',
    addEventListener: (t, f) => { listeners[t] = f; },
    removeEventListener: (t) => { delete listeners[t]; },
  };
  const timers = [];
  const intervals = new Set();
  const calls = [];
  const ends = [];
  let progress = { phase: 'idle' };
  const b = bench || {
    scenes: () => ['crates'],
    progress: () => progress,
    async run(o) { calls.push(['run', o]); progress = { phase: 'measure', frame: 3 }; return { v: 1, runs: [] }; },
    async capture(o) { calls.push(['capture', o]); throw new Error("bench: no scene 'nope' on this page"); },
  };
  const relay = startRelay({
    api: { bench: b },
    endpoint: 'http://127.0.0.1:5173',
    WebSocket: FakeWS,
    document,
    location: { href: 'http://127.0.0.1:5173/?x=1', origin: 'http://127.0.0.1:5173' },
    before: (verb) => ends.push(['before', verb]),
    after: (verb, result) => ends.push([verb, result]),
    setTimeout: (f, ms) => { timers.push({ f, ms }); return timers.length; },
    clearTimeout: () => {},
    setInterval: (f) => { const t = { f }; intervals.add(t); return t; },
    clearInterval: (t) => intervals.delete(t),
  });
  return { sockets, document, listeners, timers, intervals, calls, ends, relay };
}

const settle = () => new Promise((r) => setImmediate(r));

test('the page registers on the events socket with what the CLI shows', () => {
  const h = harness();
  assert.equal(h.sockets.length, 1);
  assert.equal(h.sockets[0].url, 'ws://127.0.0.1:5173/api/sloptimize/events');
  assert.equal(h.sockets[0].sent.length, 0, 'nothing before the socket is open');
  h.sockets[0].open();
  const m = h.sockets[0].sent[0];
  assert.equal(m.type, 'page');
  assert.equal(m.url, 'http://127.0.0.1:5173/?x=1');
  assert.equal(m.visible, true);
  assert.deepEqual(m.scenes, ['crates']);
  h.relay.update();
  assert.equal(h.sockets[0].sent[1].type, 'page', 'said again when asked (a scene named later)');
  h.sockets[0].sent.pop();
  h.document.visibilityState = 'hidden';
  h.listeners.visibilitychange();
  assert.equal(h.sockets[0].sent[1].visible, false, 'hidden is said at once');
  h.relay.stop();
});

test('a command runs the bench call and answers with its result', async () => {
  const h = harness();
  const ws = h.sockets[0];
  ws.open();
  ws.deliver({ type: 'command', id: 7, verb: 'run', options: { scene: 'crates', frames: 5 } });
  await settle();
  assert.deepEqual(h.calls, [['run', { scene: 'crates', frames: 5 }]]);
  const kinds = ws.sent.map((m) => m.type);
  assert.deepEqual(kinds.slice(1, 2), ['progress'], 'progress first: the CLI hears the page took it');
  assert.equal(ws.sent[1].progress.phase, 'measure', "the first progress is this command's, not the last one's end");
  const ans = ws.sent.find((m) => m.type === 'answer');
  assert.deepEqual(ans, { type: 'answer', id: 7, ok: true, result: { v: 1, runs: [] } });
  assert.equal(h.intervals.size, 0, 'the progress timer is stopped');
  assert.deepEqual(h.ends, [['before', 'run'], ['run', { v: 1, runs: [] }]]);
  assert.equal(ws.sent[ws.sent.length - 1].type, 'page', 'and it says it is free again');
  h.relay.stop();
});

test('a bench that throws answers ok: false with its words', async () => {
  const h = harness();
  const ws = h.sockets[0];
  ws.open();
  ws.deliver({ type: 'command', id: 2, verb: 'capture', options: { scene: 'nope' } });
  await settle();
  const ans = ws.sent.find((m) => m.type === 'answer');
  assert.equal(ans.ok, false);
  assert.equal(ans.error, "bench: no scene 'nope' on this page");
  assert.deepEqual(h.ends, [['before', 'capture'], ['capture', null]]);
  h.relay.stop();
});

test('what the page cannot or must not do is answered, not run', async () => {
  let release;
  const calls = [];
  const h = harness({
    bench: {
      scenes: () => [],
      progress: () => ({ phase: 'measure' }),
      run: (o) => { calls.push(o); return new Promise((r) => { release = r; }); },
    },
  });
  const ws = h.sockets[0];
  ws.open();
  ws.deliver({ type: 'command', id: 1, verb: 'eval', options: { code: 'alert(1)' } });
  ws.deliver({ type: 'command', id: 2, verb: 'census' });
  ws.deliver({ type: 'command', id: 3, verb: 'run' });
  ws.deliver({ type: 'command', id: 4, verb: 'run' });
  ws.deliver({ type: 'command', id: 'x', verb: 'run' });
  await settle();
  const answers = ws.sent.filter((m) => m.type === 'answer');
  assert.deepEqual(answers.map((a) => [a.id, a.ok]), [[1, false], [2, false], [4, false]]);
  assert.match(answers[0].error, /no command 'eval'/);
  assert.match(answers[1].error, /no bench\.census\(\)/);
  assert.match(answers[2].error, /running command 3/);
  assert.equal(calls.length, 1, 'only command 3 ran');
  h.intervals.forEach((t) => t.f());
  assert.equal(ws.sent.filter((m) => m.type === 'progress' && m.id === 3).length, 2, 'progress while it runs');
  release({ v: 1 });
  await settle();
  assert.deepEqual(ws.sent.filter((m) => m.type === 'answer').pop(), { type: 'answer', id: 3, ok: true, result: { v: 1 } });
  h.relay.stop();
});

test('a closed socket is dialled again, and registers again', () => {
  const h = harness();
  h.sockets[0].open();
  h.sockets[0].drop();
  assert.equal(h.timers.length, 1);
  assert.ok(h.timers[0].ms >= 800 && h.timers[0].ms <= 1200);
  h.timers[0].f();
  assert.equal(h.sockets.length, 2);
  h.sockets[1].open();
  assert.equal(h.sockets[1].sent[0].type, 'page');
  h.relay.stop();
  h.sockets[1].drop();
  assert.equal(h.timers.length, 1, 'stopped: not dialled again');
});
