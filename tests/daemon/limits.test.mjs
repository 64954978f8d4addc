// --max-connections and the open-file limit (docs/api.md, "Security
// model", rule 2): past RLIMIT_NOFILE accept(2) fails with EMFILE, the
// listening socket stays readable and libwebsockets 4.1.6 went round the
// loop at full speed, logging `accept: errno 24` each time (81 MB in
// 20 s).  The cap is fitted to the limit at start, and said; that line is
// said at most every 10 s.  Both under prlimit(1), with connections held
// open from this process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Daemon, tmpdir, waitFor, VALGRIND } from '../lib.mjs';

function project() {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  return p;
}

// n connections, each open (or refused) before the next; kept open.
async function hold(base, n) {
  const port = Number(new URL(base).port);
  const socks = [];
  for (let i = 0; i < n; i++) {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => {});
    await new Promise((r) => { s.once('connect', r); s.once('error', r); });
    socks.push(s);
  }
  return socks;
}

const accepts = (log) => (log.match(/lws: accept: errno/g) || []).length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('--max-connections beyond the open-file limit: fitted to it at start and said; no accept(2) fails while it is exceeded',
  { timeout: 120000, skip: VALGRIND && 'valgrind keeps descriptors of its own' }, async () => {
  const d = await new Daemon(project(), {
    wrap: ['prlimit', '--nofile=256:256'], args: ['--desktop', '0', '--max-connections', '4096'],
  }).start();
  let socks = [];
  try {
    assert.match(d.log, /--max-connections 4096 does not fit the open-file limit \(RLIMIT_NOFILE 256, .*\): serving 128 connections at once/);
    const st = await d.status();
    assert.equal(st.http.maxConnections, 128);
    assert.equal(st.http.maxConnectionsAsked, 4096);
    // far more connections than the limit: those past the cap and its
    // slack are closed at accept, and no accept fails for want of a
    // descriptor
    socks = await hold(d.base, 400);
    await sleep(2000);
    assert.equal(accepts(d.log), 0, `accept(2) failed:\n${d.log.slice(-500)}`);
    for (const s of socks) s.destroy();
    socks = [];
    // the loop is as it was
    await waitFor(async () => (await d.status()).http.connections <= 2, { what: 'the connections gone' });
  } finally {
    for (const s of socks) s.destroy();
    await d.stop();
  }
});

test('a limit too low to fit even the smallest cap: said at start, and accept(2) failing is said at most every 10 s',
  { timeout: 120000, skip: VALGRIND && 'valgrind keeps descriptors of its own' }, async () => {
  const d = await new Daemon(project(), {
    wrap: ['prlimit', '--nofile=60:60'], args: ['--desktop', '0', '--max-connections', '256'],
  }).start();
  let socks = [];
  try {
    assert.match(d.log, /the limit is too low to serve safely: raise it/);
    // descriptors run out: accept(2) fails again and again while they
    // are held; the log says it once, not once per turn of the loop
    const t0 = Date.now();
    socks = await hold(d.base, 150);
    await waitFor(() => accepts(d.log) >= 1, { timeout: 30000, what: `accept(2) failing\n${d.log.slice(-500)}` });
    await sleep(3000);
    const secs = (Date.now() - t0) / 1000;
    assert.ok(accepts(d.log) <= Math.ceil(secs / 10) + 1, `${accepts(d.log)} lines in ${secs.toFixed(1)} s`);
    assert.match(d.log, /more like it in the last 10 s; the open-file limit\?/);
    for (const s of socks) s.destroy();
    socks = [];
    await waitFor(async () => {
      try { return (await d.status()).ready; } catch { return false; }
    }, { what: 'answers again once the descriptors are back' });
  } finally {
    for (const s of socks) s.destroy();
    await d.stop();
  }
});
