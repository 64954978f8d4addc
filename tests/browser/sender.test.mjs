// The recorder's sends made off the page's main thread (page-runtime/
// sender.js), in Debian's chromium against the real daemon: the outbox's
// batches reach the ledger with the page's own fetch never called; a
// keepalive request still goes from the page; and a page whose
// Content-Security-Policy refuses workers gets every record delivered
// from its own thread, with the reason said in `mode`.  The page is the
// daemon's own origin (it serves page-runtime/), so the ingest's origin
// rules are the ones a game behind Vite's proxy meets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { Daemon, hitch, perfPath, tmpdir } from '../lib.mjs';
import { FLAGS } from '../browser.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';

let browser, daemon, project;

before(async () => {
  project = tmpdir('sender-proj');
  daemon = await new Daemon(project).start();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
});

after(async () => {
  await browser?.close();
  await daemon?.stop();
});

// Records marked with `mark`, pushed through an Outbox whose fetch is
// offThreadFetch over a counted page fetch; what the page saw.
async function deliver(page, mark, n) {
  const recs = Array.from({ length: n }, (_, i) => JSON.parse(hitch(120 + i, { phase: mark })));
  return page.evaluate(async (recs) => {
    const { Outbox } = await import('/page-runtime/delivery.js');
    const { offThreadFetch } = await import('/page-runtime/sender.js');
    let pageCalls = 0;
    const send = offThreadFetch({ fallback: (...a) => { pageCalls++; return fetch(...a); } });
    // small batches: several requests, two under way at once
    const o = new Outbox({ fetch: send, maxBatch: 3 });
    for (const r of recs) o.push(r);
    const st = await o.flush();
    const mode = { ...send.mode };
    const before = pageCalls;
    const r = await send('/api/sloptimize/status', { keepalive: true });
    const keepalive = { calls: pageCalls - before, ok: r.ok };
    send.close();
    return { st, mode, pageCalls: before, keepalive };
  }, recs);
}

function inLedger(mark) {
  const file = perfPath(project);
  if (!fs.existsSync(file)) return 0;
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.includes(`"phase":"${mark}"`)).length;
}

test('records go from a worker: every batch reaches the ledger and the page fetch is never called', async () => {
  const page = await browser.newPage();
  try {
    // a document of the test's own: the daemon's panel page has a policy
    // (default-src 'self') that refuses blob: workers, as it should
    await page.route(`${daemon.base}/plain`, (route) => route.fulfill({
      status: 200, contentType: 'text/html', body: '<!doctype html><title>plain</title>',
    }));
    await page.goto(`${daemon.base}/plain`);
    const got = await deliver(page, 'off-thread', 10);
    assert.equal(got.mode.offThread, true, `not off the thread: ${got.mode.why}`);
    assert.equal(got.st.sent, 10, JSON.stringify(got.st));
    assert.equal(got.st.reachable, true, JSON.stringify(got.st));
    assert.ok(got.st.batches >= 4, `10 records in batches of 3: ${got.st.batches} batches`);
    assert.equal(got.pageCalls, 0, 'the page fetch was called for a batch');
    assert.deepEqual(got.keepalive, { calls: 1, ok: true }, 'a keepalive request goes from the page');
    assert.equal(inLedger('off-thread'), 10);
  } finally {
    await page.close();
  }
});

test('a page whose policy refuses workers sends from its own thread, says why, and loses nothing', async () => {
  const page = await browser.newPage();
  try {
    // the daemon's origin, a document of the test's own with the policy
    await page.route(`${daemon.base}/csp`, (route) => route.fulfill({
      status: 200, contentType: 'text/html',
      body: '<!doctype html><meta http-equiv="Content-Security-Policy" content="worker-src \'none\'"><title>csp</title>',
    }));
    await page.goto(`${daemon.base}/csp`);
    const got = await deliver(page, 'csp-refused', 7);
    assert.equal(got.mode.offThread, false);
    assert.match(got.mode.why || '', /worker/, `no reason said: ${JSON.stringify(got.mode)}`);
    assert.equal(got.st.sent, 7, JSON.stringify(got.st));
    assert.ok(got.pageCalls >= 3, `7 records in batches of 3 went from the page: ${got.pageCalls} calls`);
    assert.equal(got.st.duplicates, 0, 'a batch the worker never sent was not sent twice');
    assert.equal(inLedger('csp-refused'), 7);
  } finally {
    await page.close();
  }
});
