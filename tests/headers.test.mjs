// Header lines libwebsockets 4.1.6 misreads (docs/api.md, "Headers
// libwebsockets misreads"), over raw sockets: each request whose header
// block lws did not read as it was sent is refused with 400 bad_header and
// the connection closed — an Origin hidden behind `Acc: a` no longer gets
// 200 or 101 — while the same requests written plainly get what they
// always got, and keep-alive and pipelined requests still work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Daemon, tmpdir } from './lib.mjs';

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
    const token = fs.readFileSync(path.join(d.stateDir(), 'token'), 'utf8').trim();
    const body = '{"title":"kept alive"}';
    // a POST with a body, then two GETs, in one write
    const r = await raw(d,
      `POST ${API}/fixes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
      `GET ${API}/settings HTTP/1.1\r\nHost: localhost\r\n\r\n` +
      `GET ${API}/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, { wait: 1500 });
    assert.deepEqual(statuses(r.text), [201, 200, 200], r.text.slice(0, 500));
    // a good request, then a quirky one, on one connection: the second
    // is refused on its own
    const k = await raw(d,
      `GET ${API}/settings HTTP/1.1\r\nHost: localhost\r\n\r\n` +
      `GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nAcc: a\r\nOrigin: ${EVIL}\r\n\r\n`, { wait: 1000 });
    assert.deepEqual(statuses(k.text), [200, 400], k.text.slice(0, 500));
    // fetch keeps its connection: requests in a row on it work
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${d.base}${API}/issues`)).status, 200);
  } finally {
    await d.stop();
  }
});
