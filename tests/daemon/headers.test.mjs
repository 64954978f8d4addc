// Header lines libwebsockets 4.1.6 misreads (docs/api.md, "Headers
// libwebsockets misreads"), over raw sockets: each request whose header
// block lws did not read as it was sent is refused with 400 bad_header and
// the connection closed — an Origin hidden behind `Acc: a` no longer gets
// 200 or 101 — while the same requests written plainly get what they
// always got, and keep-alive and pipelined requests still work; and a
// request with a body is never served while more bytes wait behind it
// (two such requests in one write once hung the daemon's loop).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  Daemon, Watch, appendFromProcess, hitch, perfPath, tmpdir, waitFor, VALGRIND,
} from '../lib.mjs';

const API = '/api/sloptimize';
const EVIL = 'http://evil.example';
const WS = 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

function project() {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  return p;
}

// Bytes on their own socket; everything that came back once the server
// closed, or went quiet for `wait` ms after answering.
function raw(d, data, { wait = 400 } = {}) {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(new URL(d.base).port), '127.0.0.1');
    let buf = '';
    let quiet;
    let closed = false;
    const done = () => { clearTimeout(quiet); clearTimeout(dead); s.destroy(); resolve({ text: buf, closed }); };
    const dead = setTimeout(done, 10000);
    s.on('data', (c) => {
      buf += c.toString('latin1');
      clearTimeout(quiet);
      quiet = setTimeout(done, wait);
    });
    s.on('end', () => { closed = true; done(); });
    s.on('close', () => { closed = true; done(); });
    s.on('error', (e) => (e.code === 'ECONNRESET' || e.code === 'EPIPE' ? done() : reject(e)));
    s.write(Buffer.from(data, 'latin1'));
  });
}

const statuses = (text) => [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
const code = (text) => (/"code":"([a-z_]+)"/.exec(text) || [])[1];

test('libwebsockets 4.1.6 header quirks are refused: the guard accounts for every header sent', async () => {
  const d = await new Daemon(project(), { args: ['--desktop', '0'] }).start();
  try {
    const cases = [
      // [what, the quirky request, its status before, the plain twin, its status]
      ['an Origin after a header that is a prefix of a known one (GET)',
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nAcc: a\r\nOrigin: ${EVIL}\r\n\r\n`, 200,
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin: ${EVIL}\r\n\r\n`, 403],
      ['the same on the WebSocket upgrade',
        `GET ${API}/events HTTP/1.1\r\nHost: localhost\r\nAcc: a\r\nOrigin: ${EVIL}\r\n${WS}\r\n`, 101,
        `GET ${API}/events HTTP/1.1\r\nHost: localhost\r\nOrigin: ${EVIL}\r\n${WS}\r\n`, 403],
      ['a Host behind another prefix ("Ho")',
        `GET ${API}/status HTTP/1.1\r\nHo: x\r\nHost: evil.example\r\n\r\n`, 400,
        `GET ${API}/status HTTP/1.1\r\nHost: evil.example\r\n\r\n`, 421],
      ['Transfer-Encoding with a space before the colon (POST)',
        `POST ${API}/fixes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
        `Content-Length: 16\r\nTransfer-Encoding : chunked\r\n\r\n{"title":"sm"}\r\n`, 403,
        `POST ${API}/fixes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
        `Content-Length: 16\r\nTransfer-Encoding: chunked\r\n\r\n{"title":"sm"}\r\n`, 411],
      ['Transfer-Encoding with a space before the colon (GET)',
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding : chunked\r\n\r\n`, 200,
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n`, 411],
      ['an Origin with a space before the colon',
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin : ${EVIL}\r\n\r\n`, 200,
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin: ${EVIL}\r\n\r\n`, 403],
      ['a NUL inside Host',
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\0.evil.com\r\n\r\n`, 200,
        `GET ${API}/status HTTP/1.1\r\nHost: localhost.evil.com\r\n\r\n`, 421],
      ['a folded header line',
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:1\r\n ${EVIL}\r\n\r\n`, null,
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:1\r\n\r\n`, 200],
      ['two Origins',
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:1\r\nOrigin: ${EVIL}\r\n\r\n`, null,
        `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:1\r\n\r\n`, 200],
    ];
    for (const [what, quirky, , plain, want] of cases) {
      const q = await raw(d, quirky);
      assert.deepEqual(statuses(q.text), [400], `${what}: ${q.text.slice(0, 300)}`);
      assert.equal(code(q.text), 'bad_header', what);
      assert.ok(q.closed, `${what}: the connection is closed after it`);
      const r = await raw(d, plain);
      assert.equal(statuses(r.text)[0], want, `${what}, written plainly: ${r.text.slice(0, 300)}`);
    }
    // nothing was appended by the smuggled POST
    assert.equal(fs.existsSync(path.join(d.project, '.sloptimize', 'fixes.jsonl')) &&
      fs.readFileSync(path.join(d.project, '.sloptimize', 'fixes.jsonl'), 'utf8'), false);
    const st = await d.status();
    assert.ok(st.http.refused >= cases.length);
  } finally {
    await d.stop();
  }
});

test('keep-alive and pipelined requests are each checked, and still answered', async () => {
  const d = await new Daemon(project(), { args: ['--desktop', '0'] }).start();
  try {
    // requests without bodies, pipelined in one write: each answered
    const g = await raw(d,
      `GET ${API}/settings HTTP/1.1\r\nHost: localhost\r\n\r\n` +
      `GET ${API}/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` +
      `HEAD ${API}/settings HTTP/1.1\r\nHost: localhost\r\n\r\n`, { wait: 1500 });
    assert.deepEqual(statuses(g.text), [200, 200, 200], g.text.slice(0, 500));
    // a good request, then a quirky one, on one connection: the second
    // is refused on its own
    const k = await raw(d,
      `GET ${API}/settings HTTP/1.1\r\nHost: localhost\r\n\r\n` +
      `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nAcc: a\r\nOrigin: ${EVIL}\r\n\r\n`, { wait: 1000 });
    assert.deepEqual(statuses(k.text), [200, 400], k.text.slice(0, 500));
    // fetch keeps its connection: requests in a row on it work, and a
    // POST with nothing behind it keeps the connection too
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${d.base}${API}/issues`)).status, 200);
    const token = fs.readFileSync(path.join(d.stateDir(), 'token'), 'utf8').trim();
    const body = '{"title":"kept alive"}';
    const post = `POST ${API}/fixes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const alone = await raw(d, post, { wait: 1000 });
    assert.deepEqual(statuses(alone.text), [201], alone.text.slice(0, 500));
    assert.doesNotMatch(alone.text, /connection: close/i, 'nothing behind it: kept alive');
    assert.equal(alone.closed, false);
  } finally {
    await d.stop();
  }
});

// SIGTERM, and the exit within a deadline: a daemon whose loop is stuck
// never gets there (it is then killed, and the test fails).
async function stopWithin(d, ms) {
  d.proc.kill('SIGTERM');
  let timer;
  const end = await Promise.race([d.exited,
    new Promise((r) => { timer = setTimeout(() => r(null), ms); })]);
  clearTimeout(timer);
  if (end === null) {
    d.proc.kill('SIGKILL');
    await d.exited;
  }
  return end;
}

test('two requests with bodies in one write: the first is answered with Connection: close; the loop, the tailer and SIGTERM survive every mix',
  { timeout: 180000 }, async () => {
  const d = await new Daemon(project(), { args: ['--desktop', '0', '--per-fp-ms', '0', '--global-max', '0'] }).start();
  let w = null;
  let stopped = false;
  try {
    w = new Watch(d);
    await w.connected();
    const token = fs.readFileSync(path.join(d.stateDir(), 'token'), 'utf8').trim();
    const batch = `[{"type":"heartbeat","at":"${new Date().toISOString()}"}]`;
    const req = (method, route, headers, body) => `${method} ${API}/${route} HTTP/1.1\r\nHost: localhost\r\n` +
      `${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const json = 'Content-Type: application/json\r\n';
    const auth = `Authorization: Bearer ${token}\r\n`;
    // over 1 MiB, under the 64 MiB the daemon drains: answered 413, the
    // body read and thrown away
    const big = '[' + ' '.repeat(1024 * 1024 + 16) + ']';
    const mixes = [
      ['200+POST', req('POST', 'records', json + auth, batch), 200],
      ['403+POST', req('POST', 'records', json, batch), 403],
      ['415+POST', req('POST', 'records', 'Content-Type: text/plain\r\n', batch), 415],
      ['PUT+PUT', req('PUT', 'settings', json, '{"loop":"off"}'), 403],
      ['drained 413+POST', req('POST', 'records', json + auth, big), 413],
    ];
    let wakes = 0;
    for (const [what, first, want] of mixes) {
      const second = req('POST', 'records', json + auth, batch);
      const r = await raw(d, first + second, { wait: 1500 });
      assert.deepEqual(statuses(r.text), [want], `${what}: ${r.text.slice(0, 300)}`);
      assert.match(r.text, /\r\nconnection: close\r\n/i, `${what}: the answer says the connection closes`);
      assert.ok(r.closed, `${what}: and it closes`);
      // the loop still answers
      const st = await fetch(`${d.base}${API}/status`, { signal: AbortSignal.timeout(5000 * (VALGRIND ? 20 : 1)) });
      assert.equal(st.status, 200, `${what}: /status after it`);
      // the tailer still reads, and a wake still reaches the watcher
      appendFromProcess(perfPath(d.project), hitch(150) + '\n');
      wakes++;
      await waitFor(() => w.ids().length >= wakes, { timeout: 10000, what: `${what}: wake ${wakes} at the watcher\n${w.err}` });
    }
    await w.stop();
    w = null;
    const end = await stopWithin(d, 10000 * (VALGRIND ? 20 : 1));
    stopped = true;
    assert.ok(end !== null, 'SIGTERM ended the daemon (it had to be killed)');
    assert.equal(end.code, 0, `exit status after SIGTERM\n${d.log.slice(-1000)}`);
  } finally {
    if (w) await w.stop();
    if (!stopped) await stopWithin(d, 10000);
  }
});
