// The loop never waits on a big answer (docs/api.md, "Answers built from
// the ledger"): /issues, /history and /ledger are built on the thread pool
// once per change and served from memory; /status is answered while a
// catalogue of ~50,000 rows is folded again and again, by a loop that is
// not the one folding; /ledger is rebuilt a few times a second at most
// however many pollers ask while it grows.  A request the daemon accepted
// is answered — with its answer, or 503 busy with Retry-After — never cut
// by the client timeout while the daemon is the one working; the folds
// are bounded, and dropped when nobody waits for them.  No timing is
// asserted here: /status's latency under this load is a figure of `make
// bench` (tests/bench/http.sh).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import {
  Daemon, appendFromProcess, hitch, perfPath, tmpdir, top, waitFor, VALGRIND,
} from '../lib.mjs';

const API = '/api/sloptimize';
const GEN = path.join(top, 'tests', 'genledger.py');

function project() {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  return p;
}

// Causes drawn evenly, nearly every line an incident: a catalogue of
// ~50,000 rows in ~90 MB, whose fold takes seconds.  Made once, copied
// for each test that writes to it.
let bigLedger = null;
function big() {
  if (bigLedger === null) {
    bigLedger = project();
    const g = spawnSync('python3', [GEN, bigLedger, '--records', '130000', '--causes', '150000', '--zipf', '0',
      '--heartbeats', '0', '--fixes', '0'], { encoding: 'utf8' });
    assert.equal(g.status, 0, g.stderr);
  }
  const p = project();
  for (const f of ['perf.jsonl', 'fixes.jsonl'])
    fs.copyFileSync(path.join(bigLedger, '.sloptimize', f), path.join(p, '.sloptimize', f));
  return p;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

// One GET, its status, headers, body (as bytes: bodies run to 20 MB) and
// how long it took; a connection closed without an answer rejects.
function get(base, p, headers = {}, { fresh = false } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    http.get(base + p, { agent: fresh ? false : agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks),
        ms: Number(process.hrtime.bigint() - t0) / 1e6,
      }));
    }).on('error', reject);
  });
}

const json = (r) => JSON.parse(r.body.toString('utf8'));

// A 503 is an answer too, when it says when to come back: asked again
// after Retry-After until the answer comes.
async function getAnswered(base, p, what) {
  for (;;) {
    const r = await get(base, p, {}, { fresh: true });
    if (r.status !== 503) return r;
    assert.equal(json(r).error.code, 'busy', `${what}: ${r.body}`);
    assert.match(r.headers['retry-after'] || '', /^\d+$/, `${what}: a 503 says when to retry`);
    await new Promise((res) => setTimeout(res, Number(r.headers['retry-after']) * 1000));
  }
}

test('/status is answered while /issues with ~50,000 rows is folded in a loop, by a loop that is not the one folding',
  { timeout: 600000, skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = big();
  const d = await new Daemon(p, { args: ['--desktop', '0'] }).start();
  try {
    const first = await get(d.base, `${API}/issues`);
    assert.equal(first.status, 200);
    const rows = json(first).issues.length;
    assert.ok(rows > 45000, `rows: ${rows}`);

    // the load: two clients asking for the whole catalogue back to back,
    // while records arrive so that it keeps being folded again
    let stop = false;
    let served = 0;
    const askers = [0, 1].map(async () => {
      while (!stop) {
        const r = await get(d.base, `${API}/issues`);
        assert.equal(r.status, 200);
        served++;
      }
    });
    const writer = (async () => {
      while (!stop) {
        appendFromProcess(perfPath(p), hitch(150) + '\n');
        await new Promise((res) => setTimeout(res, 200));
      }
    })();
    // every /status is answered while the folds run; some of them are
    // answered *during* a fold — the loop built them while the fold
    // thread was busy, which a loop that folded could never do
    let statuses = 0;
    let duringFold = 0;
    await waitFor(async () => {
      const r = await get(d.base, `${API}/status`);
      assert.equal(r.status, 200);
      statuses++;
      if (json(r).http.folds.running > 0) duringFold++;
      return duringFold >= 20 && served >= 2;
    }, { timeout: 300000, interval: 5, what: `/status answers during a fold (${duringFold} of ${statuses}; ${served} /issues)` });
    stop = true;
    await Promise.all([...askers, writer]);

    const st = json(await get(d.base, `${API}/status`));
    assert.ok(st.http.answerBuilds >= 2, `the catalogue was folded again as it changed (${st.http.answerBuilds})`);
    assert.equal(st.http.expired, 0, 'no /issues waited out its bound');
    console.log(`${statuses} /status answered, ${duringFold} of them while a fold ran; ${served} /issues answers of ` +
      `${(first.body.length / 1e6).toFixed(1)} MB; ${st.http.folds.done} folds`);
  } finally {
    await d.stop();
  }
});

test('--http-timeout 1: answers that take longer to build are answered, not cut; five distinct /issues at once all answered',
  { timeout: 600000, skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = big();
  const d = await new Daemon(p, { args: ['--desktop', '0', '--http-timeout', '1'] }).start();
  try {
    // the first: its fold alone outlasts the client timeout
    const first = await get(d.base, `${API}/issues`, {}, { fresh: true });
    assert.equal(first.status, 200, `an answer, not an empty reply: ${first.body.slice(0, 200)}`);
    assert.ok(json(first).issues.length > 45000);
    // five distinct keys at once: folds one at a time, so the last waits
    // for four folds before its own (with the client timeout in force it
    // was dropped at 1 s)
    const keys = ['limit=1', 'limit=2', 'status=open', 'type=hitch', 'include-automated=1'];
    const t0 = Date.now();
    const got = await Promise.all(keys.map((k) => getAnswered(d.base, `${API}/issues?${k}`, k)));
    const slowest = Date.now() - t0;
    for (const [i, r] of got.entries()) {
      assert.equal(r.status, 200, `${keys[i]}: ${r.body.slice(0, 200)}`);
      assert.ok(Array.isArray(json(r).issues), keys[i]);
    }
    // (what makes this a test of the timeout: the wait outlasted it)
    assert.ok(slowest > 1000, `five folds took ${slowest} ms: longer than --http-timeout 1`);
    const st = (await d.status()).http;
    assert.ok(st.folds.done >= 6, `every answer was built: ${JSON.stringify(st.folds)}`);
  } finally {
    await d.stop();
  }
});

test('--answer-wait 1: a read whose answer is not ready in time gets 503 busy with Retry-After, and the answer is kept for the retry',
  { timeout: 600000, skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = big();
  const d = await new Daemon(p, { args: ['--desktop', '0', '--answer-wait', '1'] }).start();
  try {
    // seven folds, one fewer than the daemon queues (a full queue would
    // refuse, which is another test's): the last ones cannot be ready
    // within a second unless the machine folds 130,000 records seven times
    // over in it (five were, once, on an idle machine: docs/robustness.md)
    const keys = ['limit=3', 'limit=4', 'limit=5', 'limit=6', 'limit=7', 'limit=8', 'limit=9'];
    const got = await Promise.all(keys.map((k) => get(d.base, `${API}/issues?${k}`, {}, { fresh: true })));
    const late = got.map((r, i) => [keys[i], r]).filter(([, r]) => r.status === 503);
    assert.ok(late.length >= 1, `some waited past --answer-wait: ${got.map((r) => r.status)}`);
    for (const [k, r] of late) {
      assert.equal(json(r).error.code, 'busy', k);
      assert.match(r.headers['retry-after'], /^\d+$/, `${k}: Retry-After`);
    }
    // their builds went on: once every fold is done, a retry is answered
    // from memory, without a fold of its own
    await waitFor(async () => {
      const f = (await d.status()).http.folds;
      return f.running === 0 && f.queued === 0;
    }, { timeout: 300000, what: 'the folds done' });
    const before = (await d.status()).http;
    assert.equal(before.expired, late.length);
    for (const [k] of late) {
      const r = await get(d.base, `${API}/issues?${k}`, {}, { fresh: true });
      assert.equal(r.status, 200, k);
    }
    const after = (await d.status()).http;
    assert.equal(after.answerBuilds, before.answerBuilds, 'no new fold for the retries');
    assert.equal(after.answerHits - before.answerHits, late.length, 'each retry served from memory');
  } finally {
    await d.stop();
  }
});

test('the fold queue is bounded (503 busy with Retry-After past it), and folds whose clients left are dropped',
  { timeout: 600000, skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = big();
  const d = await new Daemon(p, { args: ['--desktop', '0'] }).start();
  try {
    // twelve distinct queries at once: eight folds are taken (one runs,
    // seven wait), the other four are refused at once
    const keys = Array.from({ length: 12 }, (_, i) => `limit=${100 + i}`);
    const got = await Promise.all(keys.map((k) => get(d.base, `${API}/issues?${k}`, {}, { fresh: true })));
    const refused = got.filter((r) => r.status === 503);
    assert.equal(got.filter((r) => r.status === 200).length + refused.length, 12, got.map((r) => r.status).join(' '));
    assert.ok(refused.length >= 4, `past the bound: ${got.map((r) => r.status)}`);
    for (const r of refused) {
      assert.equal(json(r).error.code, 'busy');
      assert.match(r.headers['retry-after'], /^\d+$/);
    }
    let st = (await d.status()).http;
    assert.ok(st.folds.refused >= 4, `refused at once: ${JSON.stringify(st.folds)}`);
    assert.equal(st.folds.max, 8);

    // six more distinct queries, whose clients hang up once the daemon has
    // them: nobody waits, so no fold runs to its end for them
    await waitFor(async () => {
      const f = (await d.status()).http.folds;
      return f.running === 0 && f.queued === 0;
    }, { timeout: 300000, what: 'the first folds done' });
    const done0 = (await d.status()).http.folds.done;
    const port = Number(new URL(d.base).port);
    const socks = Array.from({ length: 6 }, (_, i) => {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => {});
      s.write(`GET ${API}/issues?limit=${200 + i} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      return s;
    });
    await waitFor(async () => {
      const f = (await d.status()).http.folds;
      return f.running + f.queued === 6;
    }, { timeout: 60000, what: 'six folds taken' });
    for (const s of socks) s.destroy();
    await waitFor(async () => {
      const f = (await d.status()).http.folds;
      return f.running === 0 && f.queued === 0;
    }, { timeout: 120000, what: 'the folds given up' });
    st = (await d.status()).http;
    assert.equal(st.folds.dropped + (st.folds.done - done0), 6, JSON.stringify(st.folds));
    assert.ok(st.folds.dropped >= 5, `dropped before or during their fold: ${JSON.stringify(st.folds)}`);
    // and the daemon answers as before
    assert.equal((await get(d.base, `${API}/issues?limit=1`)).status, 200);
  } finally {
    await d.stop();
  }
});

test('/issues and /history on an unchanged ledger: built once, then served from memory with a strong ETag', async () => {
  const p = project();
  const g = spawnSync('python3', [GEN, p, '--records', '3000'], { encoding: 'utf8' });
  assert.equal(g.status, 0, g.stderr);
  const d = await new Daemon(p, { args: ['--desktop', '0'] }).start();
  try {
    const before = (await d.status()).http;
    const a = await get(d.base, `${API}/issues`);
    const b = await get(d.base, `${API}/issues`);
    assert.equal(a.status, 200);
    assert.match(a.headers.etag, /^"f[0-9a-f]+"$/, 'a strong ETag');
    assert.equal(b.headers.etag, a.headers.etag);
    assert.ok(a.body.equals(b.body), 'the same bytes');
    const c = await get(d.base, `${API}/issues`, { 'If-None-Match': a.headers.etag });
    assert.equal(c.status, 304);
    // the same parameters in another order are the same answer
    const x = await get(d.base, `${API}/issues?status=open&limit=5`);
    const y = await get(d.base, `${API}/issues?limit=5&status=open`);
    assert.equal(x.headers.etag, y.headers.etag);
    const h1 = await get(d.base, `${API}/history?buckets=12`);
    const h2 = await get(d.base, `${API}/history?buckets=12`);
    assert.equal(h1.status, 200);
    assert.equal(h2.headers.etag, h1.headers.etag);
    const after = (await d.status()).http;
    assert.equal(after.answerBuilds - before.answerBuilds, 3, 'issues, issues?limit&status, history: one build each');
    assert.ok(after.answerHits - before.answerHits >= 4);
    // a change makes the next answer a new one, with the new record in it
    appendFromProcess(perfPath(p), hitch(150, { minted: ['mat_new@thing'] }) + '\n');
    await d.caughtUp();
    const n = await get(d.base, `${API}/issues`);
    assert.notEqual(n.headers.etag, a.headers.etag);
    assert.ok(JSON.parse(n.body.toString('utf8')).issues.some((r) => r.count === 1 && r.type === 'hitch'));
  } finally {
    await d.stop();
  }
});

test('/ledger under a crowd of pollers while the file grows: a few builds a second, never one per poll, and never stale',
  { timeout: 180000 }, async () => {
  const p = project();
  const g = spawnSync('python3', [GEN, p, '--mb', '1'], { encoding: 'utf8' });
  assert.equal(g.status, 0, g.stderr);
  const d = await new Daemon(p, { args: ['--desktop', '0'] }).start();
  try {
    const before = (await d.status()).http;
    let stop = false;
    let polls = 0;
    const t0 = Date.now();
    // one writer process: a line every 5 ms, one write(2) each
    const writer = spawn('python3', ['-c', `
import json, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
i = 0
while True:
    os.write(fd, (json.dumps({"type": "heartbeat", "at": "2026-11-29T12:00:00.000Z", "n": i}) + "\\n").encode())
    i += 1
    time.sleep(0.005)
`, perfPath(p)], { stdio: 'ignore' });
    const pollers = Array.from({ length: 10 }, async () => {
      let last = 0;
      while (!stop) {
        // what the daemon has folded when we ask: the answer shows at least that
        const st = JSON.parse((await get(d.base, `${API}/status`)).body.toString('utf8'));
        // a small tail: a build takes a moment, so only the rule bounds them
        const r = await get(d.base, `${API}/ledger?bytes=65536`);
        assert.equal(r.status, 200);
        const size = JSON.parse(r.body.toString('utf8')).perf.size;
        assert.ok(size >= st.files.perf.cursor, `a body as new as the request: ${size} < ${st.files.perf.cursor}`);
        assert.ok(size >= last, 'never older than the one before');
        last = size;
        polls++;
      }
    });
    // a hundred polls, and builds held back while the file grew, however
    // long this machine takes for them (a loaded one starves the writer):
    // the bound below is a rate, which a slower machine only meets more
    // easily
    await waitFor(async () => polls >= 100 && (await d.status()).http.buildsHeldBack > before.buildsHeldBack,
      { timeout: 120000, interval: 100, what: `100 polls (${polls}) and a build held back` });
    stop = true;
    writer.kill();
    await Promise.all(pollers);
    const secs = (Date.now() - t0) / 1000;
    const after = (await d.status()).http;
    const builds = after.ledgerBuilds - before.ledgerBuilds;
    console.log(`${polls} polls, ${builds} builds in ${secs.toFixed(1)} s`);
    assert.ok(polls >= 100, `polls: ${polls}`);
    // at most one build per 250 ms (a slot), and a little slack
    assert.ok(builds <= secs * 4 + 3, `${builds} builds for ${polls} polls in ${secs.toFixed(1)} s`);
    assert.ok(after.buildsHeldBack > before.buildsHeldBack, 'builds were held back, not skipped');
  } finally {
    await d.stop();
  }
});
