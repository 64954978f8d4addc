// The panel in a real browser (DESIGN §12, seed §8.5): Debian's chromium
// driven by playwright-core, against the real daemon on generated ledgers.
// Each test states what a user of the panel relies on and checks it
// against the daemon's own API (the whole-ledger view) or fold.js's
// fold of /ledger (the tail view).  Screenshots of every tab land in
// tests/artifacts/.  No chromium is a failure (make deps installs it).
//
// The time from Ctrl+F12 to a rendered Issues tab on a ledger over 2 MiB
// is measured and printed (console.log), never asserted: see
// docs/performance.md, "Panel".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Daemon, CLI, appendFromProcess, perfPath, tmpdir, top, waitFor } from '../lib.mjs';
import { Fold } from '../../page-runtime/fold.js';
import { bucketsFor } from '../../page-runtime/panel.js';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.join(top, 'tests', 'artifacts');
const GENLEDGER = path.join(top, 'tests', 'genledger.py');
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-extensions'];
const HOUR = 3600e3;

let browser;            // one persistent context (fresh --user-data-dir) for the file
let main;               // {daemon, project, base, top, spike, gap}
let big;                // the ledger over 2 MiB
let gamePort, gameServer;
let profile;            // the browser's fresh --user-data-dir

// --- fixtures ---------------------------------------------------------------

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/*
 * A generated ledger re-stamped to end two minutes ago, so "last seen"
 * reads like a live game.  With `gap`, the second half is moved `gap` ms
 * later (buckets with no evidence in between) and one heartbeat with a
 * p95 of 400 ms sits alone in the middle of the hole: a gap on each side
 * of a spike.
 */
function makeLedger({ records, mb, causes = 80, gap = 0 }) {
  const project = tmpdir('panel-proj');
  const args = [GENLEDGER, project, '--causes', String(causes)];
  if (mb) args.push('--mb', String(mb));
  else args.push('--records', String(records));
  sh('python3', args);
  const perf = perfPath(project);
  const recs = fs.readFileSync(perf, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const half = Math.floor(recs.length / 2);
  const t = recs.map((r, i) => Date.parse(r.at) + (gap && i >= half ? gap : 0));
  const shift = Date.now() - 2 * 60e3 - t[t.length - 1];
  const out = recs.map((r, i) => ({ ...r, at: new Date(t[i] + shift).toISOString() }));
  let spike = null;
  if (gap) {
    const prev = out[half - 1];
    spike = {
      type: 'heartbeat', at: new Date(Math.round((t[half - 1] + t[half]) / 2) + shift).toISOString(), phase: 'play',
      build: prev.build, window: { frames: 120, seconds: 2 },
      frame: { medianMs: 95, p95Ms: 400, insideRenderMs: 40, fps: 10 },
      render: { calls: 4000, triangles: 9000000, points: 0, lines: 12 }, memory: { geometries: 900, textures: 90, programs: 80 },
    };
    out.splice(half, 0, spike);
  }
  fs.writeFileSync(perf, out.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const fixes = path.join(project, '.sloptimize', 'fixes.jsonl');
  const fx = fs.readFileSync(fixes, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  fs.writeFileSync(fixes, fx.map((r) => JSON.stringify({ ...r, at: new Date(Date.parse(r.at) + shift + gap) .toISOString() })).join('\n') + '\n');
  return { project, spike };
}

async function startOn(project) {
  const daemon = await new Daemon(project).start();
  await daemon.caughtUp();
  return daemon;
}

// --- the browser --------------------------------------------------------------

async function launch() {
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  profile = tmpdir('chromium-profile');
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 900 },
  });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
  return ctx;
}

// A page with its errors collected: an uncaught exception or a CSP
// violation fails the test that opened it.
async function openPage(url) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.problems = problems;
  await page.goto(url);
  await page.waitForSelector('.sloptimize-panel-host', { state: 'attached' });
  return page;
}

function shot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

const panelOpen = (page) => page.evaluate(() => !document.querySelector('.sloptimize-panel-host').shadowRoot.querySelector('.backdrop').hidden);

// The deepest focused element's description, through shadow roots.
const focused = (page) => page.evaluate(() => {
  let a = document.activeElement;
  let inPanel = false;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) {
    if (a.classList.contains('sloptimize-panel-host')) inPanel = true;
    a = a.shadowRoot.activeElement;
  }
  return { inPanel, tag: a ? a.tagName : null, id: a ? a.id : null, tab: a && a.dataset ? a.dataset.tab || null : null,
    fk: a && a.dataset ? a.dataset.fk || null : null, role: a ? a.getAttribute('role') : null };
});

async function selectTab(page, id) {
  await page.click(`#tab-${id}`);
  await page.waitForSelector(`#panel-${id}[data-state="ready"]`);
}

// What the Issues tab shows, row by row, read from the screen's text.
const shownRows = (page) => page.$$eval('[data-row]', (lis) => lis.map((li) => ({
  id: li.querySelector('.fp').textContent.trim(),
  count: Number(li.querySelector('[data-n]').textContent.trim().replace('×', '')),
  type: li.querySelector('.type').textContent.trim(),
  status: li.querySelector('.badge').textContent.trim(),
  chips: [...li.querySelectorAll('.chips .chip:not(.dim)')].map((c) => c.textContent.trim()),
})));

const apiRows = (rows) => rows.map((r) => ({
  id: r.id, count: r.count, type: r.type, status: r.status,
  chips: Object.entries(r.situation).map(([k, v]) => `${k}=${v}`),
}));

async function api(base, p) {
  const r = await fetch(base + p);
  assert.ok(r.ok, `${p}: ${r.status}`);
  return r.json();
}

// --- setup --------------------------------------------------------------------

before(async () => {
  browser = await launch();
  const m = makeLedger({ records: 3000, gap: 2 * HOUR });
  main = { ...m, daemon: await startOn(m.project) };
  main.base = main.daemon.base;
  const issues = await api(main.base, '/api/sloptimize/issues');
  main.top = issues.issues[0];
  // an applied fix judged on windows given (the CLI measures them), one
  // recorded the README's way (pending: no build after it has run), and
  // a proposal
  const builds = JSON.parse(sh(CLI, ['history', '--json', '--project', m.project])).builds.map((w) => w.build);
  sh(CLI, ['fix', '--footprints', issues.issues[1].id, '--title', 'pool the hull materials', '--commit', 'abc1234',
    '--issue', 'shader compile on spawn', '--solution', 'warm the programs at load',
    '--before', builds.at(-2), '--after', builds.at(-1), '--project', m.project]);
  sh(CLI, ['fix', '--footprints', issues.issues[3].id, '--title', 'spread the spawns', '--project', m.project]);
  const prop = JSON.parse(sh(CLI, ['fix', 'propose', '--footprints', main.top.id, '--title', 'instance the rocks',
    '--json', '--project', m.project]));
  main.proposal = prop.id;
  await waitFor(async () => (await api(main.base, '/api/sloptimize/issues')).issues
    .some((r) => r.proposals.some((p) => p.id === main.proposal)), { what: 'the proposal folded' });

  const b = makeLedger({ mb: 3.5 });
  big = { ...b, daemon: await startOn(b.project) };
  big.base = big.daemon.base;

  // a "game" on another loopback origin that embeds the panel from the daemon
  gameServer = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const daemon = u.searchParams.get('daemon');
    const endpoint = u.searchParams.get('endpoint');
    // ?recorder=1: the page runs the real recorder (recorder.js from the
    // daemon) around a stand-in renderer, so the Session tab has one to show
    const recorder = u.searchParams.get('recorder') ? `
  const { createRecorder } = await import('${daemon}/page-runtime/recorder.js');
  const renderer = { render() {}, getContext() { return null; },
    info: { render: { calls: 3, triangles: 12, points: 0, lines: 0 }, memory: { geometries: 1, textures: 0 }, programs: [] } };
  window.rec = createRecorder({ renderer, endpoint: '${daemon}', build: 'v-panel' });
  (function loop() { renderer.render({}, {}); requestAnimationFrame(loop); })();` : '';
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><head><title>a game</title>
<style>body{margin:0;background:#203040;font:14px sans-serif;color:#fff} canvas{display:block}</style></head>
<body><canvas id="game" width="1280" height="820"></canvas><input id="chat" placeholder="game chat">
<script type="module">
  const c = document.getElementById('game').getContext('2d');
  const g = c.createLinearGradient(0, 0, 1280, 820); g.addColorStop(0, '#1b3a5a'); g.addColorStop(1, '#5a3a1b');
  c.fillStyle = g; c.fillRect(0, 0, 1280, 820); c.fillStyle = '#fff'; c.font = '28px sans-serif'; c.fillText('a three.js game (not really)', 40, 60);
  window.gameKeys = [];${recorder}
  window.addEventListener('keydown', (e) => window.gameKeys.push(e.key));
  const { createPanel } = await import('${daemon}/page-runtime/panel.js');
  window.panel = createPanel(${endpoint ? `{ endpoint: '${endpoint}' }` : ''});
  window.panelReady = true;
</script></body></html>`);
  });
  await new Promise((r) => gameServer.listen(0, '127.0.0.1', r));
  gamePort = gameServer.address().port;
});

after(async () => {
  await browser?.close();
  gameServer?.close();
  await main?.daemon.stop();
  await big?.daemon.stop();
  for (const p of [main?.project, big?.project, profile]) if (p) fs.rmSync(p, { recursive: true, force: true });
});

// --- the tests ------------------------------------------------------------------

test('the daemon serves the panel page, and it opens with its four tabs', async () => {
  const page = await openPage(`${main.base}/`);
  try {
    await waitFor(() => panelOpen(page), { what: 'the standalone page opens the panel' });
    const tabs = await page.$$eval('[role="tab"]', (t) => t.map((x) => x.textContent.replace(/\d+$/, '').trim()));
    assert.deepEqual(tabs, ['Current Session', 'Issues', 'Optimizations', 'Settings']);
    // index.html loads its script as a module file, under the daemon's CSP
    const r = await fetch(`${main.base}/`);
    assert.match(r.headers.get('content-security-policy') || '', /script-src|default-src 'self'/);
    assert.doesNotMatch(await r.text(), /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'events socket live' });
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('keyboard only: Tab and arrows reach every tab, Enter activates, focus stays inside, Esc restores it', async () => {
  const page = await openPage(`http://127.0.0.1:${gamePort}/?daemon=${main.base}`);
  try {
    await page.waitForFunction(() => window.panelReady === true);
    await page.focus('#chat');
    await page.keyboard.press('Control+F12');
    await waitFor(() => panelOpen(page), { what: 'Ctrl+F12 opens' });
    let f = await focused(page);
    assert.ok(f.inPanel && f.role === 'tab', `focus on a tab: ${JSON.stringify(f)}`);
    const order = ['session', 'issues', 'optimizations', 'settings'];
    // go to the first tab with Home, then visit each with → and Enter
    await page.keyboard.press('Home');
    await page.keyboard.press('Enter');
    for (let i = 0; i < order.length; i++) {
      f = await focused(page);
      assert.equal(f.tab, order[i]);
      await page.keyboard.press('Enter');
      await page.waitForSelector(`#panel-${order[i]}[data-state="ready"]`);
      assert.equal(await page.getAttribute(`#tab-${order[i]}`, 'aria-selected'), 'true');
      assert.equal(await page.isVisible(`#panel-${order[i]}`), true);
      if (i < order.length - 1) await page.keyboard.press('ArrowRight');
    }
    await page.keyboard.press('ArrowRight'); // wraps around
    assert.equal((await focused(page)).tab, 'session');
    await page.keyboard.press('ArrowLeft');
    assert.equal((await focused(page)).tab, 'settings');
    // Tab cycles through the dialog and never leaves it, both ways
    const seen = new Set();
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press(i < 25 ? 'Tab' : 'Shift+Tab');
      f = await focused(page);
      assert.ok(f.inPanel, `Tab ${i} left the panel: ${JSON.stringify(f)}`);
      seen.add(f.fk || f.tab || f.tag);
    }
    assert.ok(seen.size >= 5, `Tab reaches the controls: ${[...seen]}`);
    // keys typed in the panel are not the game's
    const before = await page.evaluate(() => window.gameKeys.length);
    await page.click('#tab-session');
    await page.click('textarea[data-note]');
    await page.keyboard.type('wasd');
    assert.equal(await page.evaluate(() => window.gameKeys.length), before, 'the game saw keys typed into the note');
    await page.keyboard.press('Escape');
    assert.equal(await panelOpen(page), false, 'Esc closes');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'chat', 'focus is back where it was');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('Issues (whole ledger) shows the daemon catalogue, row for row, and says so', async () => {
  const page = await openPage(`${main.base}/?source=daemon&tab=issues`);
  try {
    await page.waitForSelector('#panel-issues[data-state="ready"]');
    assert.equal(await page.getAttribute('#panel-issues', 'data-view'), 'daemon');
    assert.match(await page.textContent('#panel-issues .source'), /whole ledger, folded by the daemon/);
    const want = await api(main.base, '/api/sloptimize/issues');
    const rows = await shownRows(page);
    assert.equal(rows.length, Math.min(want.issues.length, 200));
    assert.deepEqual(rows, apiRows(want.issues).slice(0, rows.length));
    // "last Nm ago" from the row's last
    const ago = await page.textContent(`[data-row="${want.issues[0].id}"] [data-ago]`);
    assert.match(ago, /^last (just now|\d+m ago|\d+h ago|\d+d ago)$/);
    // a row opens its history: key, builds, worst, verdict, and the fixes or the command
    const opened = want.issues.find((r) => r.fixes.length === 0);
    await page.click(`[data-fk="row-${opened.id}"]`);
    const detail = page.locator(`[data-detail="${opened.id}"]`);
    await detail.waitFor();
    const text = await detail.textContent();
    assert.ok(text.includes(opened.key), 'key');
    for (const b of opened.builds) assert.ok(text.includes(b), `build ${b}`);
    assert.ok(text.includes(opened.verdict.guess), 'verdict');
    assert.match(await detail.locator('[data-fix-command]').textContent(),
      new RegExp(`^sloptimize fix --footprints ${opened.id} --title ".+"$`));
    await detail.locator('text=/Last occurrences \\(\\d+\\)/').waitFor();
    const fixed = want.issues.find((r) => r.fixes.some((x) => x.title === 'pool the hull materials'));
    await page.click(`[data-fk="row-${fixed.id}"]`);
    await page.locator(`[data-detail="${fixed.id}"] [data-fix]`).first().waitFor();
    assert.match(await page.textContent(`[data-detail="${fixed.id}"]`), /pool the hull materials.*abc1234/s);
    await shot(page, 'panel-issues');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('live: an appended record shows in Current Session and moves the Issues count, without a reload', async () => {
  const page = await openPage(`${main.base}/?source=daemon&tab=issues`);
  try {
    await page.waitForSelector('#panel-issues[data-state="ready"]');
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'socket live' });
    const row = (await api(main.base, '/api/sloptimize/issues')).issues[2];
    const count = async () => Number((await page.textContent(`[data-row="${row.id}"] [data-n]`)).replace('×', ''));
    assert.equal(await count(), row.count);
    const loads = await page.evaluate(() => performance.getEntriesByType('navigation').length);
    const rec = {
      type: 'hitch', at: new Date().toISOString(), phase: 'play', build: row.builds[row.builds.length - 1], frameMs: 187.5,
      medianMs: 8.2, classification: { guess: 'shader-compile', confidence: 'high', evidence: 'programs +4 in the hitch frame' },
      footprint: { v: 2, id: row.id, key: row.key }, ctx: Object.entries(row.situation).map(([k, v]) => `${k}=${v}`).join(','),
    };
    appendFromProcess(perfPath(main.project), JSON.stringify(rec) + '\n');
    await waitFor(async () => (await count()) === row.count + 1, { what: `×${row.count + 1} on ${row.id}` });
    assert.equal((await api(main.base, '/api/sloptimize/issues')).issues.find((r) => r.id === row.id).count, row.count + 1);
    await selectTab(page, 'session');
    const li = page.locator(`[data-incident][data-fp="${row.id}"]`);
    await li.waitFor();
    const t = await li.textContent();
    assert.match(t, /hitch/);
    assert.match(t, /188 ms|187\.5/);
    assert.match(t, /shader-compile/);
    assert.match(t, new RegExp(`×${row.count + 1}`));
    // copy for the agent: footprints, verdicts and the note in one block
    await page.fill('textarea[data-note]', 'stutters when the rocks spawn');
    await page.click('[data-action="copy-session"]');
    await page.waitForSelector('[data-copied]:has-text("copied")');
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    assert.match(clip, /note: stutters when the rocks spawn/);
    assert.match(clip, new RegExp(`${row.id} ×1 here, ×${row.count + 1} in the ledger`));
    assert.match(clip, /shader-compile\/high "programs \+4 in the hitch frame"/);
    // a new footprint while the Session tab shows: the Issues badge moves too
    const badge = async () => Number(await page.textContent('[data-count="issues"]'));
    const before = await badge();
    const fresh = { ...rec, at: new Date().toISOString(), frameMs: 133.3, footprint: undefined, minted: ['mat_new@badge_probe'] };
    appendFromProcess(perfPath(main.project), JSON.stringify(fresh) + '\n');
    await waitFor(async () => (await badge()) === before + 1, { what: `the Issues badge at ${before + 1}` });
    // (the badge follows the daemon's fold, the list the record's own
    // message: either may land first on a loaded machine)
    await waitFor(async () => /133\.3 ms/.test(await page.textContent('[data-incidents]')),
      { what: async () => `the new hitch in Current Session, rounded as the CLI rounds it: ${await page.textContent('[data-incidents]')}` });
    assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').length), loads, 'no reload');
    await shot(page, 'panel-session');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('Optimizations: strips on one axis, gaps drawn as gaps, the spike at the ceiling with its real value', async () => {
  const page = await openPage(`${main.base}/?source=daemon&tab=optimizations`);
  try {
    await page.waitForSelector('#panel-optimizations[data-state="ready"]');
    // the panel sizes its buckets by the evidence (round widths, enough heartbeats in each)
    const want = bucketsFor(await api(main.base, '/api/sloptimize/history?buckets=1'));
    assert.ok(want > 1 && want <= 48, `buckets: ${want}`);
    const hist = await api(main.base, `/api/sloptimize/history?buckets=${want}`);
    const n = hist.buckets.length;
    assert.equal(n, want);
    assert.match(await page.textContent('.axis'), new RegExp(`^${n} buckets of `));
    assert.match(await page.textContent('#panel-optimizations [data-view="daemon"]'), /GET \/api\/sloptimize\/history\?buckets=\d+/,
      'the header names the route the tab reads');
    const strips = await page.$$eval('svg.strip', (s) => s.map((x) => ({
      metric: x.dataset.metric, width: Number(x.getAttribute('width')), segments: Number(x.dataset.segments),
      gaps: [...x.querySelectorAll('[data-gap]')].map((g) => Number(g.dataset.gap)),
      moves: ((x.querySelector('path.series') || { getAttribute: () => '' }).getAttribute('d').match(/M/g) || []).length,
      spikes: [...x.querySelectorAll('[data-spike]')].map((c) => ({ i: Number(c.dataset.spike), v: Number(c.dataset.value) })),
    })));
    assert.deepEqual(strips.map((s) => s.metric), ['p95Ms', 'medianMs', 'calls', 'triangles', 'programs', 'hitches']);
    assert.equal(new Set(strips.map((s) => s.width)).size, 1, 'one time axis: every strip the same width');
    for (const s of strips) {
      const values = hist.buckets.map((b) => b[s.metric]);
      const nulls = values.map((v, i) => (v === null ? i : -1)).filter((i) => i >= 0);
      assert.deepEqual(s.gaps, nulls, `${s.metric}: a null bucket is a gap`);
      const runs = values.reduce((acc, v, i) => acc + (v !== null && (i === 0 || values[i - 1] === null) ? 1 : 0), 0);
      assert.equal(s.moves, runs, `${s.metric}: the path breaks at every gap (one M per run)`);
      assert.equal(s.segments, runs);
    }
    const p95 = strips[0];
    assert.ok(p95.gaps.length > 0 && p95.moves > 1, 'the two-hour hole is drawn as a gap');
    const spikeAt = hist.buckets.findIndex((b) => b.p95Ms === 400);
    assert.ok(spikeAt > 0, 'the lone 400 ms heartbeat has its own bucket');
    assert.deepEqual(p95.spikes, [{ i: spikeAt, v: 400 }], 'drawn at the ceiling, with a caret carrying 400');
    // the shared crosshair reads the real value out, in every strip
    await page.focus('.strips');
    await page.keyboard.press('Home');
    for (let i = 0; i < spikeAt; i++) await page.keyboard.press('ArrowRight');
    assert.match(await page.textContent('[data-readout="p95Ms"]'), /^400 ms ▲$/);
    assert.match(await page.textContent('[data-readout="calls"]'), /4000/);
    const gapAt = p95.gaps[0];
    const box = await page.locator('svg.strip[data-metric="medianMs"]').boundingBox();
    await page.mouse.move(box.x + ((gapAt + 0.5) * box.width) / n, box.y + 20);
    assert.equal(await page.textContent('[data-readout="p95Ms"]'), 'gap: no evidence');
    assert.equal(await page.textContent('[data-readout="hitches"]'), 'gap: no evidence');
    const crosses = await page.$$eval('svg.strip line.cross', (l) => l.map((x) => x.getAttribute('x1')));
    assert.equal(new Set(crosses).size, 1, 'one crosshair across the strips');
    // build boundaries are marked
    assert.ok((await page.$$('[data-build-boundary]')).length >= hist.builds.length - 1);
    // one card per fix, the applied one with was → now and coloured deltas
    const ledger = await api(main.base, '/api/sloptimize/ledger');
    const cards = await page.$$eval('[data-card]', (c) => c.map((x) => x.dataset.card));
    assert.equal(cards.length, new Set(ledger.fixes.records.filter((r) => !r.ref).map((r) => r.id || r.title)).size);
    // the card says the fix's verdict on its windows (issue 22): was → now
    // with each noise interval; a timing's delta is coloured only past the
    // noise, a counter's (exact) by its direction
    const applied = page.locator('[data-card]', { hasText: 'pool the hull materials' });
    const fixDoc = (await api(main.base, '/api/sloptimize/issues')).issues.flatMap((r) => r.fixes).find((f) => f.title === 'pool the hull materials');
    const verdict = await applied.locator('[data-verdict]').getAttribute('data-verdict');
    assert.equal(verdict, fixDoc.judgement.verdict, 'the daemon\'s verdict');
    if (verdict !== 'software' && verdict !== 'incomparable') {
      assert.match(await applied.locator('[data-was]').textContent(),
        /^was \d+(\.\d)? ms( \[[\d.]+–[\d.]+\])? → now \d+(\.\d)? ms( \[[\d.]+–[\d.]+\])? p95 /);
    }
    const past = verdict === 'improved' || verdict === 'regressed';
    for (const d of await applied.locator('tr[data-metric] .delta').evaluateAll((e) => e.map((x) => [x.dataset.direction, x.textContent, x.closest('tr').dataset.metric]))) {
      const timing = ['p95Ms', 'medianMs', 'worstHitchMs'].includes(d[2]);
      const dir = timing && !(past && d[2] === 'p95Ms') && d[1] !== 'no evidence' ? 'noise'
        : d[1].startsWith('+') ? 'worse' : d[1].startsWith('−') ? 'better' : d[1].startsWith('±') ? 'same' : 'none';
      assert.equal(d[0], dir, `a delta is coloured by its direction, a timing's only past the noise: ${d}`);
    }
    assert.equal(await applied.locator('.spark svg').count(), 2, 'before and after sparklines');
    // the fix recorded the README's way waits for a build after it: no delta
    const waiting = page.locator('[data-card]', { hasText: 'spread the spawns' });
    assert.equal(await waiting.locator('[data-waiting]').textContent(), 'waiting for a build after this fix');
    assert.equal(await waiting.locator('.delta').count(), 0, 'a pending fix shows no delta');
    assert.equal(await waiting.locator('.badge').first().textContent(), 'pending');
    await page.mouse.move(box.x + box.width * 0.3, box.y + 20);
    await shot(page, 'panel-optimizations');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('a proposal is merged from its card, and the card changes', async () => {
  const page = await openPage(`${main.base}/?source=daemon&tab=optimizations`);
  try {
    await page.waitForSelector('#panel-optimizations[data-state="ready"]');
    const card = page.locator(`[data-card="${main.proposal}"]`);
    assert.equal(await card.getAttribute('data-status'), 'proposed');
    await card.locator('[data-action="decide"][data-decision="merged"]').click();
    await page.waitForSelector(`[data-card="${main.proposal}"][data-status="merged"]`);
    assert.equal(await page.locator(`[data-card="${main.proposal}"] [data-action="decide"]`).count(), 0, 'no buttons once merged');
    const lines = fs.readFileSync(path.join(main.project, '.sloptimize', 'fixes.jsonl'), 'utf8').trim().split('\n');
    const last = JSON.parse(lines[lines.length - 1]);
    assert.deepEqual([last.type, last.status, last.ref], ['fix', 'merged', main.proposal]);
    await waitFor(async () => (await api(main.base, '/api/sloptimize/issues')).issues.find((r) => r.id === main.top.id)
      .fixes.some((f) => f.id === main.proposal && f.status === 'merged'), { what: 'the daemon lists the merged proposal as a fix' });
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('Settings: the fix loop level goes through GET/PUT /settings', async () => {
  const page = await openPage(`${main.base}/?tab=settings`);
  try {
    await page.waitForSelector('#panel-settings[data-state="ready"]');
    await page.waitForSelector('[data-level-msg]:has-text("now:")');
    const was = (await api(main.base, '/api/sloptimize/settings')).loop;
    assert.equal(await page.isChecked(`input[data-level="${was}"]`), true);
    await page.check('input[data-level="propose"]');
    await page.waitForSelector('[data-level-msg]:has-text("saved: propose")');
    assert.equal((await api(main.base, '/api/sloptimize/settings')).loop, 'propose');
    assert.match(await page.textContent('[data-status]'), new RegExp(main.project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    await shot(page, 'panel-settings');
    await page.check('input[data-level="off"]');
    await page.waitForSelector('[data-level-msg]:has-text("saved: off")');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('a game on another origin embeds the panel from the daemon (module, API and socket cross-origin)', async () => {
  const page = await openPage(`http://127.0.0.1:${gamePort}/?daemon=${main.base}`);
  try {
    await page.waitForFunction(() => window.panelReady === true);
    assert.equal(await page.evaluate(() => window.panel.endpoint), main.base, 'the endpoint defaults to where panel.js came from');
    await page.keyboard.press('Control+F12');
    await selectTab(page, 'issues');
    const want = await api(main.base, '/api/sloptimize/issues');
    assert.deepEqual((await shownRows(page)).slice(0, 20), apiRows(want.issues).slice(0, 20));
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'socket live cross-origin' });
    await shot(page, 'panel-embedded');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('an unreachable daemon is an error state, never an exception', async () => {
  const page = await openPage(`http://127.0.0.1:${gamePort}/?daemon=${main.base}&endpoint=http://127.0.0.1:9`);
  try {
    await page.waitForFunction(() => window.panelReady === true);
    await page.keyboard.press('Control+F12');
    for (const tab of ['issues', 'optimizations', 'settings']) {
      await page.click(`#tab-${tab}`);
      await page.waitForSelector(`#panel-${tab} [data-error]`);
      assert.match(await page.textContent(`#panel-${tab} [data-error]`), /cannot reach http:\/\/127\.0\.0\.1:9/);
    }
    await waitFor(async () => ['retry', 'offline'].includes(await page.getAttribute('[data-conn]', 'data-state')), { what: 'socket retrying' });
    await shot(page, 'panel-unreachable');
    assert.deepEqual(page.problems.filter((p) => p.startsWith('pageerror')), []);
  } finally {
    await page.close();
  }
});

test('the events socket reconnects by itself after the daemon restarts, and the session goes on', async () => {
  const { project } = makeLedger({ records: 400 });
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const d = new Daemon(project, { args: ['--listen', `127.0.0.1:${port}`] });
  await d.start();
  const page = await openPage(`http://127.0.0.1:${gamePort}/?daemon=${d.base}`);
  try {
    await page.waitForFunction(() => window.panelReady === true);
    const state = () => page.getAttribute('[data-conn]', 'data-state');
    await waitFor(async () => (await state()) === 'live', { what: 'live' });
    await d.stop();
    await waitFor(async () => ['retry', 'offline'].includes(await state()), { what: 'the panel sees the daemon go' });
    await d.start();
    await waitFor(async () => (await state()) === 'live', { timeout: 40000, what: 'reconnected by itself' });
    const row = (await api(d.base, '/api/sloptimize/issues')).issues[0];
    appendFromProcess(perfPath(project), JSON.stringify({
      type: 'usermark', at: new Date().toISOString(), phase: 'play', note: 'after the restart',
      worst: [{ frameMs: 64, classification: { guess: 'long-script', confidence: 'low', evidence: 'frame delta dominates' } }],
      footprint: { v: 2, id: row.id, key: row.key },
    }) + '\n');
    await page.keyboard.press('Control+F12');
    await page.click('#tab-session');
    await page.locator(`[data-incident][data-fp="${row.id}"]`).waitFor();
    assert.match(await page.textContent('[data-incidents]'), /events socket closed; reconnecting/);
    // the player's own words are shown with the press
    assert.equal(await page.textContent(`[data-incident][data-fp="${row.id}"] [data-note-text]`), 'after the restart');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
    await d.stop();
    fs.rmSync(project, { recursive: true, force: true });
  }
});

// --- over 2 MiB: the tail view, and the time to a rendered Issues tab ---------

// Open the panel with Ctrl+F12 and wait for its `sloptimize:rendered`
// event (the Issues tab's DOM is in place and the next frame has begun).
async function hotkeyToRendered(page) {
  const k = await page.evaluate(() => {
    window.renders = window.renders || [];
    if (!window.rendersHooked) {
      document.querySelector('.sloptimize-panel-host').addEventListener('sloptimize:rendered', (e) => window.renders.push(e.detail));
      window.rendersHooked = true;
    }
    return window.renders.length;
  });
  await page.keyboard.press('Control+F12');
  await page.waitForFunction((n) => window.renders.length > n, k);
  return page.evaluate((n) => window.renders[n], k);
}

async function timeOpen(url, n) {
  const first = [], again = [];
  let view = null;
  for (let i = 0; i < n; i++) {
    const page = await openPage(url);
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'socket live' });
    const d = await hotkeyToRendered(page);
    assert.equal(d.cached, false, 'a first open fetches');
    first.push(d.ms);
    view = d.view;
    // reopened: what the panel holds shows at once, then the fetch settles it
    for (let k = 0; k < 3; k++) {
      await page.waitForSelector('#panel-issues[data-state="ready"]');
      await page.waitForTimeout(200);
      await page.keyboard.press('Escape');
      const w = await hotkeyToRendered(page);
      assert.equal(w.cached, true, 'a reopen shows what it holds');
      again.push(w.ms);
    }
    await page.close();
  }
  const med = (a) => a.slice().sort((x, y) => x - y)[Math.ceil(a.length / 2) - 1];
  return { view, cold: med(first), coldMax: Math.max(...first), warm: med(again), n };
}

test('tail view over 2 MiB: the panel folds /ledger, equals fold.js on the same records, and says which view it is', async () => {
  const page = await openPage(`${big.base}/?source=tail&tab=issues`);
  try {
    await page.waitForSelector('#panel-issues[data-state="ready"]');
    assert.equal(await page.getAttribute('#panel-issues', 'data-view'), 'tail');
    const ledger = await api(big.base, '/api/sloptimize/ledger');
    assert.equal(ledger.perf.truncated, true, 'the ledger is over 2 MiB');
    const f = new Fold();
    for (const r of ledger.perf.records) f.addRecord(r);
    for (const r of ledger.fixes.records) f.addFix(r);
    const mine = f.issues({ now: Date.now() });
    const rows = await shownRows(page);
    assert.deepEqual(rows, apiRows(mine.issues).slice(0, rows.length));
    const whole = await api(big.base, '/api/sloptimize/issues');
    assert.ok(whole.counts.incidents > mine.counts.incidents, 'the tail holds fewer incidents than the whole ledger');
    const label = await page.textContent('#panel-issues .source');
    assert.match(label, /the last 2\.0 MiB of 3\.\d MiB/);
    assert.match(label, /folded in this page/);
    await shot(page, 'panel-issues-tail');
  } finally {
    await page.close();
  }
});

test('measure: Ctrl+F12 to a rendered Issues tab with a ledger over 2 MiB', async () => {
  const size = fs.statSync(perfPath(big.project)).size;
  const daemon = await timeOpen(`${big.base}/?open=0&tab=issues&source=daemon`, 5);
  const tail = await timeOpen(`${big.base}/?open=0&tab=issues&source=tail`, 5);
  const fmt = (r) => `first open median ${r.cold.toFixed(1)} ms (max ${r.coldMax.toFixed(1)}, ${r.n} page loads), reopened median ${r.warm.toFixed(1)} ms`;
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`panel: Ctrl+F12 → Issues rendered, perf.jsonl ${(size / 1048576).toFixed(1)} MiB (load average ${load})`);
  console.log(`panel:   whole-ledger view (GET /issues): ${fmt(daemon)}`);
  console.log(`panel:   tail view (GET /ledger 2 MiB, folded in the page): ${fmt(tail)}`);
  assert.equal(daemon.view, 'daemon');
  assert.equal(tail.view, 'tail');
});

test('a short session: a few round buckets with heartbeats in each, not 48 slivers', async () => {
  const project = tmpdir('panel-short');
  const perf = perfPath(project);
  fs.mkdirSync(path.dirname(perf), { recursive: true });
  const t0 = Date.now() - 60e3;
  const lines = [];
  for (let i = 0; i < 16; i++) {
    lines.push(JSON.stringify({ type: 'heartbeat', at: new Date(t0 + i * 2000).toISOString(), phase: 'play', build: 'v1',
      frame: { medianMs: 16.7, p95Ms: 18 + (i % 3), insideRenderMs: 2, fps: 60 }, render: { calls: 40, triangles: 9000, points: 0, lines: 0 },
      memory: { geometries: 10, textures: 4, programs: 6 }, window: { frames: 120, seconds: 2 } }));
  }
  fs.writeFileSync(perf, lines.join('\n') + '\n');
  const daemon = await startOn(project);
  const page = await openPage(`${daemon.base}/?source=daemon&tab=optimizations`);
  try {
    await page.waitForSelector('#panel-optimizations[data-state="ready"]');
    const axis = await page.textContent('.axis');
    const n = Number(axis.match(/^(\d+) buckets of/)[1]);
    // 30 s of heartbeats, one every 2 s: three buckets of 10 s, five heartbeats each
    assert.equal(n, 3, axis);
    assert.match(axis, /^3 buckets of 10 s/);
    const hist = await api(daemon.base, `/api/sloptimize/history?buckets=${n}`);
    for (const b of hist.buckets) assert.ok(b.heartbeats >= 5, `a bucket with ${b.heartbeats} heartbeats`);
    assert.equal(await page.$$eval('svg.strip[data-metric="p95Ms"] [data-gap]', (g) => g.length), 0, 'no gaps in a steady session');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
    await daemon.stop();
  }
});

test('Current Session shows the page recorder\'s own state: recording, sent, queued, dropped, the daemon reachable', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  try {
    await page.goto(`http://127.0.0.1:${gamePort}/?daemon=${encodeURIComponent(main.base)}&recorder=1`);
    await page.waitForFunction(() => window.panelReady && window.rec);
    // the first heartbeat goes to the daemon within about 2 s (a daemon
    // without the ingest route refuses it, or fails its CORS preflight)
    await waitFor(() => page.evaluate(() => window.rec.state().reachable !== null), { what: 'the recorder tried the daemon' });
    await page.keyboard.press('Control+F12');
    await page.waitForSelector('#panel-session[data-state="ready"]');
    const rec = page.locator('#panel-session [data-recorder]');
    assert.equal(await rec.getAttribute('data-recorder'), 'recording');
    const st = await page.evaluate(() => window.rec.state());
    assert.equal(await rec.getAttribute('data-reachable'), String(st.reachable));
    const text = await rec.textContent();
    assert.match(text, /Recorder recording · frame \d+/);
    assert.match(text, /build v-panel/);
    assert.match(text, /\d+ records sent · \d+ queued/);
    // what was dropped is what the recorder says (on a loaded machine the
    // stand-in game's slow frames can pass its one-hitch-a-second limit)
    const dropped = Object.entries(st.dropped || {}).filter(([, n]) => n > 0);
    if (dropped.length === 0) assert.match(text, /none dropped/);
    else assert.match(text, /dropped \d+ \w+/, `the recorder dropped ${JSON.stringify(st.dropped)}: the panel says so`);
    assert.match(text, st.reachable ? /daemon reachable/ : /daemon unreachable \(.*\), retrying/);
    if (st.refused) assert.match(text, /refused/, 'what the daemon refused is said');
    // it moves while the tab is open
    const frame = async () => Number((await rec.textContent()).match(/frame (\d+)/)[1]);
    const f0 = await frame();
    await waitFor(async () => (await frame()) > f0, { what: 'the frame count moves' });
    await page.evaluate(() => window.rec.stop());
    await waitFor(async () => (await rec.getAttribute('data-recorder')) === 'none' || (await rec.getAttribute('data-recorder')) === 'stopped',
      { what: 'a stopped recorder is said' });
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
