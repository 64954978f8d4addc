// The events socket (docs/daemon.md, "The events socket" and "Resuming"):
// a watch that resumes from an old id, or stops reading, gets every wake
// once and in order, paced from the ring and from perf.jsonl itself, with
// the daemon's memory bounded; what cannot be had any more is a gap the
// watch prints; and an idle daemon with no client never wakes up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import {
  Daemon, Watch, appendFromProcess, hitch, meaningfulOffsets, perfPath, tmpdir,
  waitFor, build, top, CLI, DAEMON, VALGRIND,
} from '../lib.mjs';

// What the daemon sends is held to schemas/events.json, the schema
// cli/watch.c and the panel are tested against through its vectors.
const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
addFormats(ajv);
const eventSchema = ajv.compile(JSON.parse(fs.readFileSync(path.join(top, 'schemas', 'events.json'), 'utf8')));
function assertEvent(m) {
  assert.ok(eventSchema(m), `events.json: ${JSON.stringify(eventSchema.errors?.slice(0, 5))}\n${JSON.stringify(m).slice(0, 600)}`);
}

// A bare WebSocket client (node 20 has none built in): the upgrade, then
// the server's frames (never masked) as text messages, in `msgs`.
function rawSocket(d, query = '') {
  const u = new URL(d.base);
  const s = net.connect(Number(u.port), u.hostname);
  const out = { msgs: [], upgraded: false, s };
  let buf = Buffer.alloc(0);
  let frag = [];
  s.on('connect', () => s.write(`GET /api/sloptimize/events${query} HTTP/1.1\r\nHost: localhost\r\n` +
    'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n'));
  s.on('error', () => {});
  s.on('data', (b) => {
    buf = Buffer.concat([buf, b]);
    if (!out.upgraded) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      assert.match(buf.subarray(0, end).toString(), /^HTTP\/1\.1 101 /);
      out.upgraded = true;
      buf = buf.subarray(end + 4);
    }
    for (;;) {
      if (buf.length < 2) return;
      let len = buf[1] & 0x7f, at = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); at = 4; }
      else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); at = 10; }
      if (buf.length < at + len) return;
      const op = buf[0] & 0x0f, fin = buf[0] & 0x80;
      if (op === 1 || op === 0) {
        frag.push(buf.subarray(at, at + len));
        if (fin) { out.msgs.push(JSON.parse(Buffer.concat(frag).toString())); frag = []; }
      }
      buf = buf.subarray(at + len);
    }
  });
  return out;
}

// Every meaningful record wakes: no rate limit holds one back.
const UNLIMITED = ['--per-fp-ms', '0', '--global-max', '0', '--desktop', '0'];

function project() {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  return p;
}

function heartbeat() {
  return JSON.stringify({ type: 'heartbeat', at: new Date().toISOString(), build: 'v1',
    frame: { p95Ms: 14, medianMs: 8 } });
}

// n hitches of 150 ms, after a heartbeat at offset 0 (so "since 1:0"
// leaves every hitch still to come), in one write.
function hitches(n) {
  const lines = [heartbeat()];
  for (let i = 0; i < n; i++) lines.push(hitch(150));
  return lines.join('\n') + '\n';
}

function rss(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]) * 1024;
}

// The watch printed exactly the wakes of these offsets, once each, in order.
function assertAll(w, offsets, gen = 1) {
  const got = w.ids();
  assert.equal(new Set(got).size, got.length, 'no wake printed twice');
  assert.deepEqual(got, offsets.map((o) => `${gen}:${o}`), 'every wake, in order');
}

test('6,000 old hitches and watch --since 1:0 after a restart: all 6,000 once, in order, made again from the file', async () => {
  const p = project();
  let d = await new Daemon(p, { args: UNLIMITED }).start();
  appendFromProcess(perfPath(p), hitches(6000));
  await d.caughtUp();
  await d.stop();
  // they are before the saved cursor now: folded at start, never formatted
  d = await new Daemon(p, { state: d.state, args: UNLIMITED }).start();
  const before = await d.status();
  const want = meaningfulOffsets(perfPath(p)).filter((o) => o > 0);
  assert.equal(want.length, 6000);
  const w = new Watch(d, ['--since', '1:0']);
  try {
    await waitFor(() => w.ids().length >= 6000, { timeout: 30000,
      what: `6000 wakes (have ${w.ids().length})\n${w.err}\n${d.log.slice(-2000)}` });
    assertAll(w, want);
    assert.doesNotMatch(w.err, /unreachable|reconnect/, 'one connection, no reconnects');
    assert.equal(before.events?.ring, 0, 'the ring is not filled at start-up');
    const st = await d.status();
    assert.equal(st.events.replayedFromFile, 6000);
    // a re-made wake says its issue as it stands now (docs/daemon.md)
    assert.equal(w.lines[0].replayed, true);
    assert.match(w.lines[0].line, /^sloptimize hitch 150(\.0)?ms .* id=1:\d+ → sloptimize issues --fp [0-9a-f]{8}$/);
    const fp = w.lines[0].record.fp;
    const row = (await d.get('/api/sloptimize/issues')).issues.find((r) => r.id === fp);
    assert.equal(w.lines[0].record.count, row.count, '×N is the count now');
    assert.equal(w.lines[0].record.status, row.status);
  } finally {
    await w.stop();
    await d.stop();
  }
});

test('a resume from 1:0 past the ring: the file, then the ring, then live, in order', async () => {
  const p = project();
  const d = await new Daemon(p, { args: UNLIMITED }).start();
  // folded live: the ring keeps the last 8,192 wakes, the rest is the file's
  appendFromProcess(perfPath(p), hitches(10000));
  await d.caughtUp();
  const st = await d.status();
  const w = new Watch(d, ['--since', '1:0']);
  try {
    await waitFor(() => w.ids().length >= 10000, { timeout: 30000,
      what: `10000 wakes (have ${w.ids().length})\n${w.err}` });
    // and live once caught up
    appendFromProcess(perfPath(p), hitch(333) + '\n');
    await waitFor(() => w.ids().length >= 10001, { what: 'the live wake' });
    assertAll(w, meaningfulOffsets(perfPath(p)).filter((o) => o > 0));
    assert.equal(st.events?.ring, 8192);
    assert.ok(st.events.ringFrom > 0);
    const after = await d.status();
    assert.equal(after.events.replayedFromFile, 10000 - 8192);
    assert.equal(after.events.replayedFromRing, 8192);
    assert.equal(w.lines.at(-1).record.value, 333);
    assert.equal(w.lines.at(-1).replayed, undefined, 'a live wake is not a replay');
  } finally {
    await w.stop();
    await d.stop();
  }
});

test('a watch stopped for 5 s during a 20,000-wake burst prints every wake once, in order; the daemon stays bounded',
  { timeout: 120000 }, async () => {
  const p = project();
  const d = await new Daemon(p, { args: UNLIMITED }).start();
  const w = new Watch(d);
  try {
    await w.connected();
    await waitFor(async () => (await d.status()).subscribers === 1, { what: 'subscribed' });
    const base = rss(d.proc.pid);
    w.proc.kill('SIGSTOP');
    const stoppedAt = Date.now();
    // the burst: 20,000 meaningful records in 40 writes while it sleeps
    for (let i = 0; i < 40; i++) {
      const lines = [];
      for (let k = 0; k < 500; k++) lines.push(hitch(120 + (k % 50)));
      appendFromProcess(perfPath(p), lines.join('\n') + '\n');
    }
    let peak = 0;
    while (Date.now() - stoppedAt < 5000) {
      peak = Math.max(peak, rss(d.proc.pid));
      await new Promise((r) => setTimeout(r, 50));
    }
    await d.caughtUp();
    const st = await d.status();
    w.proc.kill('SIGCONT');
    const want = meaningfulOffsets(perfPath(p));
    assert.equal(want.length, 20000);
    await waitFor(() => w.ids().length >= want.length, { timeout: 60000,
      what: `${want.length} wakes (have ${w.ids().length})\n${w.err}` });
    peak = Math.max(peak, rss(d.proc.pid));
    assertAll(w, want);
    assert.doesNotMatch(w.err, /unreachable|reconnect|dropped/, 'one connection, nothing dropped');
    assert.ok(st.events?.fellBehind >= 1, 'its queue reached the bound');
    const end = await d.status();
    assert.ok(end.events.replayedFromFile > 0, 'the oldest came from the file');
    // bounded: the ring (8,192 wakes), one full queue (8 MiB) and a chunk
    // in flight, whatever the burst; 20,000 wakes queued whole would be
    // ~20 MB on top of the ring's.  (AddressSanitizer's quarantine holds
    // freed memory on purpose, and valgrind's shadow memory and redzones
    // are in the daemon's RSS: no figure there — valgrind says its leaks.)
    const sanitized = /asan/.test(build) || process.env.ASAN_OPTIONS || VALGRIND;
    assert.ok(sanitized || peak - base < 40 * 1024 * 1024, `RSS grew by ${((peak - base) / 1048576).toFixed(1)} MB`);
  } finally {
    w.proc.kill('SIGCONT');
    await w.stop();
    await d.stop();
  }
});

test('a resume from a generation that was replaced is a gap the watch prints, then the new wakes', async () => {
  const p = project();
  const d = await new Daemon(p, { args: UNLIMITED }).start();
  const w0 = new Watch(d);
  let w;
  try {
    await w0.connected();
    appendFromProcess(perfPath(p), hitches(3));
    await waitFor(() => w0.ids().length === 3, { what: 'three wakes' });
    const last = w0.ids().at(-1);
    await w0.stop();
    // truncated: generation 2, the old lines are gone
    fs.writeFileSync(perfPath(p), '');
    await waitFor(async () => (await d.status()).generation === 2, { what: 'generation 2' });
    appendFromProcess(perfPath(p), hitch(210) + '\n');
    await d.caughtUp();
    w = new Watch(d, ['--since', last]);
    await waitFor(() => w.lines.some((x) => x.type === 'gap') && w.ids().some((id) => id.startsWith('2:')),
      { what: `a gap, then generation 2\n${JSON.stringify(w.lines)}\n${w.err}` });
    const gap = w.lines.find((x) => x.type === 'gap');
    assert.equal(gap.after, last);
    assert.equal(gap.resume, '2:-1');
    assert.ok(gap.reason.length > 0);
    assert.deepEqual(w.ids(), ['2:0']);
    assert.equal((await d.status()).events?.gaps, 1);
  } finally {
    if (w) await w.stop();
    await d.stop();
  }
  // the same in text: one line on stdout
  const d2 = await new Daemon(p, { state: d.state, args: UNLIMITED }).start();
  const txt = spawn(CLI, ['watch', '--project', p, '--since', '1:5'], { env: d2.env });
  let out = '';
  txt.stdout.on('data', (b) => { out += b; });
  try {
    await waitFor(() => /\n/.test(out), { what: 'a line' });
    assert.match(out.split('\n')[0], /^sloptimize gap: .* wakes after id=1:5 cannot be replayed \(.*\); resuming after id=2:-1$/);
  } finally {
    txt.kill();
    await d2.stop();
  }
});

// GET with the connection closed after it (fetch keeps it open for
// seconds, and an open connection is a client).
function getOnce(base, p) {
  return new Promise((resolve, reject) => {
    const req = http.get(base + p, { agent: false, headers: { Connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => { try { resolve(JSON.parse(body)); } catch (e) { reject(e); } });
    });
    req.on('error', reject);
  });
}

// strace's epoll_wait calls: when each began, its timeout, what it returned
// (a call is shown whole when it returns, or split around another line).
function epollCalls(text) {
  const calls = [];
  const began = {};
  for (const l of text.split('\n')) {
    let m = /^(\d+)\s+(\d+\.\d+) epoll_wait\(\d+, .*, (-?\d+)\) = (.*)$/.exec(l);
    if (m) { calls.push({ at: Number(m[2]), timeout: Number(m[3]), ret: m[4] }); continue; }
    m = /^(\d+)\s+(\d+\.\d+) epoll_wait\(\d+,\s*<unfinished \.\.\.>$/.exec(l);
    if (m) { began[m[1]] = Number(m[2]); continue; }
    m = /^(\d+)\s+(\d+\.\d+) <\.\.\. epoll_wait resumed>.*, (-?\d+)\) = (.*)$/.exec(l);
    if (m) calls.push({ at: began[m[1]], timeout: Number(m[3]), ret: m[4] });
  }
  return calls;
}

// strace shows each epoll_wait with its timeout once it returns: the call
// the daemon sleeps in is interrupted by SIGTERM at the end, and says
// whether any timer would have woken it (-1: none) — libwebsockets' own
// runs every 30 s, so this catches it without waiting 30 s.
test('idle with no client: no wake-up, and no timer armed to cause one', { skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = project();
  const state = tmpdir('state');
  const out = path.join(state, 'strace.out');
  const env = { ...process.env, XDG_STATE_HOME: state, DBUS_SESSION_BUS_ADDRESS: '' };
  const proc = spawn('strace', ['-f', '-ttt', '-e', 'trace=epoll_wait', '-o', out,
    DAEMON, '--project', p, '--listen', '127.0.0.1:0', '--desktop', '0'], { env, stdio: 'ignore' });
  const exited = new Promise((r) => proc.on('exit', r));
  const d = new Daemon(p, { state });
  let pid = 0;
  try {
    const info = await waitFor(() => {
      const sd = d.stateDir();
      return sd && fs.existsSync(path.join(sd, 'daemon.json')) &&
        JSON.parse(fs.readFileSync(path.join(sd, 'daemon.json'), 'utf8'));
    }, { what: 'daemon.json' });
    pid = info.pid;
    const base = `http://${info.listen}`;
    appendFromProcess(perfPath(p), heartbeat() + '\n');
    const size = fs.statSync(perfPath(p)).size;
    await waitFor(async () => {
      const st = await getOnce(base, '/api/sloptimize/status');
      return st.ready && st.cursor === size;
    }, { what: 'ready, the line folded' });
    // the last client has gone; what the activity still owes is done: the
    // cursor saved past the line and the checkpoint written (each at most
    // 1 s after the last line), and the daemon back in epoll_wait for a
    // moment (strace has written nothing more)
    const sd = d.stateDir();
    let seen = -1;
    await waitFor(() => {
      const cur = /^offset (\d+)$/m.exec(fs.readFileSync(path.join(sd, 'cursor'), 'utf8'));
      const n = fs.statSync(out).size;
      const quiet = n === seen;
      seen = n;
      return cur && Number(cur[1]) === size && fs.existsSync(path.join(sd, 'checkpoint')) && quiet;
    }, { interval: 250, what: 'the cursor and the checkpoint saved, and the daemon asleep' });
    const from = Date.now() / 1000;
    await new Promise((r) => setTimeout(r, 3000));
    const to = Date.now() / 1000;
    process.kill(pid, 'SIGTERM');
    await exited;
    const calls = epollCalls(fs.readFileSync(out, 'utf8'));
    const woke = calls.filter((c) => c.at >= from && c.at < to);
    assert.deepEqual(woke, [], 'no epoll_wait began during the idle window: nothing woke the daemon');
    const sleep = calls.filter((c) => c.at < from).at(-1);
    assert.ok(sleep, `the call it slept in\n${calls.slice(-5).map((c) => JSON.stringify(c)).join('\n')}`);
    assert.equal(sleep.timeout, -1, `it slept with no timeout (libwebsockets' 30 s timer is stopped): ${JSON.stringify(sleep)}`);
    assert.match(sleep.ret, /EINTR/, 'and only SIGTERM woke it');
  } finally {
    if (pid) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    proc.kill('SIGKILL');
  }
});

// A WebSocket upgrade over a raw socket: the status line and headers of
// the answer, the body of a refusal, and the socket (kept open on a 101:
// a subscriber).
function subscribe(base) {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(new URL(base).port), '127.0.0.1');
    let buf = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const [head, body = ''] = buf.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body, socket: s });
    };
    s.on('data', (c) => {
      buf += c.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (/^HTTP\/1\.1 101/.test(buf)) finish();
      else if (/content-length: (\d+)/i.test(buf) &&
        buf.length >= end + 4 + Number(/content-length: (\d+)/i.exec(buf)[1])) finish();
    });
    s.on('close', finish);
    s.on('error', (e) => (done ? null : reject(e)));
    s.write('GET /api/sloptimize/events HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
  });
}

test('a 65th subscriber is refused at the upgrade with 503 and the reason; watch says it; a SIGHUP raises the cap',
  { timeout: 120000 }, async () => {
  const p = project();
  const cfg = path.join(tmpdir('conf'), 'sloptimized.json');
  fs.writeFileSync(cfg, '{}');
  const d = await new Daemon(p, { args: [...UNLIMITED, '--config', cfg] }).start();
  const subs = [];
  let w = null;
  try {
    assert.equal((await d.status()).maxSubscribers, 64, 'the default cap');
    for (let i = 0; i < 64; i++) {
      const r = await subscribe(d.base);
      assert.equal(r.status, 101, `subscriber ${i + 1}: ${r.head}`);
      subs.push(r.socket);
    }
    await waitFor(async () => (await d.status()).subscribers === 64, { what: '64 subscribers' });
    // the 65th: refused before the switch, with a status and the reason
    const r = await subscribe(d.base);
    assert.equal(r.status, 503, r.head);
    assert.match(r.head, /\r\nretry-after: \d+/i);
    assert.match(r.head, /\r\nsloptimize-refused: too_many_subscribers: 64 subscribers/i);
    const err = JSON.parse(r.body).error;
    assert.equal(err.code, 'too_many_subscribers');
    assert.match(err.message, /max-subscribers 64/);
    r.socket.destroy();
    // watch says why, once, instead of looping "reconnected … unreachable"
    w = new Watch(d);
    await waitFor(() => /refused the events socket \(HTTP 503, too_many_subscribers: .*max-subscribers 64/.test(w.err),
      { what: `watch's reason\n${w.err}` });
    assert.doesNotMatch(w.err, /reconnected|unreachable/);
    const st = await d.status();
    assert.equal(st.subscribers, 64);
    assert.ok(st.subscribersRefused >= 2);
    // the cap is a setting: the config file, read again on SIGHUP, lets
    // the watch in (those already connected stay)
    fs.writeFileSync(cfg, '{"max-subscribers": 65}');
    d.proc.kill('SIGHUP');
    await waitFor(async () => (await d.status()).maxSubscribers === 65, { what: 'the new cap' });
    await waitFor(() => /connected to /.test(w.err), { timeout: 15000, what: `watch connected\n${w.err}` });
    appendFromProcess(perfPath(p), hitch(150) + '\n');
    await waitFor(() => w.ids().length === 1, { what: 'a wake at the watch' });
    assert.equal((await d.status()).subscribers, 65);
  } finally {
    if (w) await w.stop();
    for (const s of subs) s.destroy();
    await d.stop();
  }
});


test('what the daemon sends on the events socket is what schemas/events.json says: hello, record, wake, resumed wakes, gap', async () => {
  const p = project();
  const d = await new Daemon(p, { args: UNLIMITED }).start();
  let live, resumed, gapped;
  try {
    live = rawSocket(d);
    await waitFor(() => live.msgs.length >= 1, { what: 'hello' });
    assert.equal(live.msgs[0].type, 'hello');
    appendFromProcess(perfPath(p), hitches(2));
    await waitFor(() => live.msgs.filter((m) => m.type === 'wake').length >= 2 &&
      live.msgs.some((m) => m.type === 'record'), { what: `two wakes and a record\n${JSON.stringify(live.msgs)}` });
    resumed = rawSocket(d, '?since=1:0');
    await waitFor(() => resumed.msgs.filter((m) => m.type === 'wake').length >= 2, { what: 'the wakes again' });
    gapped = rawSocket(d, '?since=0:5');
    await waitFor(() => gapped.msgs.some((m) => m.type === 'gap'), { what: `a gap\n${JSON.stringify(gapped.msgs)}` });
    const all = [...live.msgs, ...resumed.msgs, ...gapped.msgs];
    for (const m of all) assertEvent(m);
    const types = new Set(all.map((m) => m.type));
    for (const t of ['hello', 'wake', 'record', 'gap']) assert.ok(types.has(t), t);
    const ids = (c) => c.msgs.filter((m) => m.type === 'wake').map((m) => m.id);
    assert.deepEqual(ids(resumed), ids(live), 'resumed from the ring: the same wakes');
    const gap = gapped.msgs.find((m) => m.type === 'gap');
    assert.equal(gap.after, '0:5');
    assert.equal(gap.resume, '1:-1');
  } finally {
    for (const c of [live, resumed, gapped]) if (c) c.s.destroy();
    await d.stop();
  }
});
