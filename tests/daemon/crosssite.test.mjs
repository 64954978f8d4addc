// Cross-site reads that cost work (docs/api.md, "Security model", rule
// 4b): a `no-cors` GET from any web page carries no Origin, yet each
// distinct query cost a full fold — a page on another site kept both
// cores busy and left hundreds of folds queued.  A request the browser
// says came from another site's page (Sec-Fetch-Site: cross-site or
// same-site) without an allowed Origin is refused before any work; a
// top-level navigation to the panel's page is not.  Raw requests first,
// then a real Chromium page on another origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { FLAGS } from '../browser.mjs';
import { Daemon, tmpdir, top, waitFor } from '../lib.mjs';

const API = '/api/sloptimize';
const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';

function project() {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  const g = spawnSync('python3', [path.join(top, 'tests', 'genledger.py'), p, '--records', '2000'], { encoding: 'utf8' });
  assert.equal(g.status, 0, g.stderr);
  return p;
}

function get(d, p, headers) {
  return new Promise((resolve, reject) => {
    http.get(d.base + p, { agent: false, headers }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    }).on('error', reject);
  });
}

const code = (r) => (/"code":"([a-z_]+)"/.exec(r.body) || [])[1];

// The upgrade's status line, over a raw socket.
function upgrade(d, headers) {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(new URL(d.base).port), '127.0.0.1');
    let buf = '';
    s.on('data', (c) => {
      buf += c;
      if (buf.includes('\r\n')) { s.destroy(); resolve(Number(buf.split(' ')[1])); }
    });
    s.on('error', reject);
    s.write(`GET ${API}/events HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${headers}\r\n`);
  });
}

const work = async (d) => {
  const h = (await d.status()).http;
  const f = h.folds || { done: 0, running: 0, queued: 0, dropped: 0 };
  return { builds: h.answerBuilds, folds: f.done + f.running + f.queued + f.dropped, refused: h.refused };
};

test('Sec-Fetch-Site cross-site or same-site without an allowed Origin: 403 cross_site, before any work', async () => {
  const d = await new Daemon(project(), { args: ['--desktop', '0'] }).start();
  try {
    const w0 = await work(d);
    const nav = { 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' };
    const refused = [
      ['a no-cors GET from another site', `${API}/issues?limit=1`, { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'empty' }],
      ['the same from a same-site page', `${API}/issues?limit=2`, { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'no-cors' }],
      ['an <img> of /history', `${API}/history?buckets=7`, { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors', 'Sec-Fetch-Dest': 'image' }],
      ['a navigation of the API (a link, window.open)', `${API}/issues?limit=3`, { 'Sec-Fetch-Site': 'cross-site', ...nav }],
      ['the panel in an iframe', '/', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'iframe' }],
      ['any case', `${API}/issues?limit=4`, { 'Sec-Fetch-Site': 'Cross-Site' }],
    ];
    for (const [what, p, h] of refused) {
      const r = await get(d, p, h);
      assert.equal(r.status, 403, `${what}: ${r.body}`);
      assert.equal(code(r), 'cross_site', what);
      assert.equal(r.headers['access-control-allow-origin'], undefined, what);
    }
    assert.equal(await upgrade(d, 'Sec-Fetch-Site: cross-site\r\n'), 403, 'an upgrade with no Origin from another site');
    const w1 = await work(d);
    assert.equal(w1.builds, w0.builds, 'no answer was built for them');
    assert.equal(w1.folds, w0.folds, 'no fold was started for them');
    assert.equal(w1.refused - w0.refused, refused.length + 1);

    const allowed = [
      ['the panel\'s own fetch', `${API}/issues?limit=1`, { 'Sec-Fetch-Site': 'same-origin', 'Sec-Fetch-Mode': 'cors' }],
      ['typed in the address bar', `${API}/issues?limit=2`, { 'Sec-Fetch-Site': 'none', ...nav }],
      ['no fetch metadata (curl, an agent)', `${API}/issues?limit=3`, {}],
      ['a CORS fetch from an allowed origin on another site', `${API}/issues?limit=4`,
        { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'cors', Origin: 'http://localhost:5173' }],
      ['a link to the panel\'s page from another site', '/', { 'Sec-Fetch-Site': 'cross-site', ...nav }],
    ];
    for (const [what, p, h] of allowed) {
      const r = await get(d, p, h);
      assert.equal(r.status, 200, `${what}: ${r.body.slice(0, 200)}`);
    }
    // an Origin that is not allowed is still bad_origin
    const evil = await get(d, `${API}/status`, { 'Sec-Fetch-Site': 'cross-site', Origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(code(evil), 'bad_origin');
    // and the header the decision rests on may not come twice
    const two = await new Promise((resolve) => {
      const s = net.connect(Number(new URL(d.base).port), '127.0.0.1');
      let buf = '';
      s.on('data', (c) => { buf += c; });
      s.on('close', () => resolve(buf));
      s.write(`GET ${API}/status HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n\r\n`);
    });
    assert.match(two, /^HTTP\/1\.[01] 400 /);
    assert.match(two, /"code":"bad_header"/);
  } finally {
    await d.stop();
  }
});

test('a page on another site firing no-cors GETs at the daemon starts no fold; the panel\'s own /issues still works',
  { timeout: 180000 }, async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  const d = await new Daemon(project(), { args: ['--desktop', '0'] }).start();
  // the other site: a page of its own, on a name Chromium maps to loopback
  const page = `<!doctype html><title>elsewhere</title><body><script>
    const base = new URLSearchParams(location.search).get('d');
    window.fired = Promise.all(Array.from({ length: 40 }, (_, i) =>
      fetch(base + '/api/sloptimize/issues?limit=' + (i + 1), { mode: 'no-cors' }).then((r) => r.type, (e) => 'error')));
    const img = new Image(); img.src = base + '/api/sloptimize/history?buckets=9';
    const f = document.createElement('iframe'); f.src = base + '/api/sloptimize/issues?limit=99'; document.body.append(f);
  </script>`;
  const site = http.createServer((req, res) => { res.setHeader('content-type', 'text/html'); res.end(page); });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  const profile = tmpdir('chromium-profile');
  let ctx = null;
  try {
    ctx = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM, headless: true,
      args: [...FLAGS, '--host-resolver-rules=MAP evil.test 127.0.0.1'],
    });
    const w0 = await work(d);
    const p = await ctx.newPage();
    await p.goto(`http://evil.test:${site.address().port}/?d=${encodeURIComponent(d.base)}`);
    const types = await p.evaluate(() => window.fired);
    assert.equal(types.length, 40);
    // 40 fetches, the image and the iframe: each refused as it came
    await waitFor(async () => (await work(d)).refused - w0.refused >= 42, { timeout: 30000, what: 'the page\'s requests refused' });
    const w1 = await work(d);
    assert.equal(w1.builds, w0.builds, 'no answer built for the other site');
    assert.equal(w1.folds, w0.folds, 'no fold started for the other site');
    // the panel, from the daemon's own origin, gets its catalogue
    const panel = await ctx.newPage();
    await panel.goto(`${d.base}/`);
    const own = await panel.evaluate(async () => {
      const r = await fetch('/api/sloptimize/issues?limit=5');
      return { status: r.status, rows: (await r.json()).issues.length };
    });
    assert.equal(own.status, 200);
    assert.equal(own.rows, 5);
  } finally {
    if (ctx) await ctx.close();
    site.close();
    await d.stop();
  }
});
