// The panel over a game that fights for the mouse (issue 22, item 5): a
// pointer-locked FPS and a game at 1 fps, in Debian's chromium through
// playwright-core, with the real daemon feeding the events socket.
//
// The "game" is a page made here: the panel loaded first, as the Vite
// plugin's bootstrap does, then the game's own listeners — on window in
// the capture phase, on document, on its canvas — a click on the canvas
// takes the pointer lock (as three.js's games_fps.html does) and a
// mousedown anywhere "throws a ball".  ?fps=1 holds every animation frame
// ~900 ms on the main thread.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { chromium } from 'playwright-core';
import { Daemon, appendFromProcess, perfPath, tmpdir, waitFor } from '../lib.mjs';
import { FLAGS } from '../browser.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';

let daemon, project, server, port, browser, profile;
let n = 0;

function record(extra = {}) {
  n++;
  return JSON.stringify({
    type: 'hitch', at: new Date().toISOString(), frame: n, frameMs: 40 + (n % 7), phase: 'play', build: 'v1',
    minted: [`mat_${n % 5}@obj`], classification: { guess: 'shader-compile', confidence: 'medium', evidence: `programs +${n % 3}` },
    ...extra,
  }) + '\n';
}

before(async () => {
  project = tmpdir('panel-game');
  fs.mkdirSync(`${project}/.sloptimize`);
  appendFromProcess(perfPath(project), record() + record());
  daemon = await new Daemon(project).start();
  await daemon.caughtUp();
  server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const fps = Number(u.searchParams.get('fps') || 60);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><html><head><title>an FPS</title>
<style>body{margin:0;background:#102030} canvas{display:block}</style></head>
<body><canvas id="game" width="1280" height="880"></canvas>
<script type="module">
  import { createPanel } from '${daemon.base}/page-runtime/panel.js';
  window.panel = createPanel({ endpoint: '${daemon.base}', tab: 'session' });
</script>
<script type="module">
  const canvas = document.getElementById('game');
  window.game = { thrown: 0, seen: [], keys: [], frames: 0 };
  const seen = (where) => (e) => window.game.seen.push(where + ':' + e.type);
  for (const t of ['pointerdown', 'mousedown', 'click', 'mouseup', 'wheel'])
    window.addEventListener(t, seen('window-capture'), true);
  for (const t of ['pointerdown', 'mousedown', 'click', 'mouseup'])
    document.addEventListener(t, seen('document'));
  document.addEventListener('mousedown', () => { window.game.thrown++; });
  window.addEventListener('keydown', (e) => window.game.keys.push(e.key), true);
  canvas.addEventListener('click', () => canvas.requestPointerLock());
  const hold = ${fps < 2 ? 900 : 0};
  (function frame() {
    const end = performance.now() + hold;
    while (performance.now() < end) { /* the game's frame */ }
    window.game.frames++;
    requestAnimationFrame(frame);
  })();
  window.gameReady = true;
</script></body></html>`);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  profile = tmpdir('chromium-profile');
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: { width: 1280, height: 880 },
  });
});

after(async () => {
  await browser?.close();
  server?.close();
  await daemon?.stop();
  for (const p of [project, profile]) if (p) fs.rmSync(p, { recursive: true, force: true });
});

async function openGame(fps = 60) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.problems = problems;
  await page.goto(`http://127.0.0.1:${port}/?fps=${fps}`);
  await page.waitForFunction(() => window.gameReady === true && window.panel);
  return page;
}

const locked = (page) => page.evaluate(() => !!document.pointerLockElement);
const isOpen = (page) => page.evaluate(() => window.panel.isOpen);

test('opening the panel gives the pointer back; a click in it never reaches the game', async () => {
  const page = await openGame();
  try {
    await page.mouse.click(640, 440);
    await waitFor(() => locked(page), { what: 'the game took the pointer lock' });
    await page.keyboard.press('Control+F12');
    await waitFor(() => isOpen(page), { what: 'the panel opened' });
    await waitFor(async () => !(await locked(page)), { what: 'the pointer lock given back' });
    await page.evaluate(() => { window.game.seen = []; window.game.thrown = 0; window.game.keys = []; });
    // the Issues tab, then the backdrop beside the dialog: the game hears nothing
    await page.click('#tab-issues');
    await waitFor(async () => (await page.getAttribute('#tab-issues', 'aria-selected')) === 'true', { what: 'Issues selected' });
    await page.mouse.click(4, 870);
    await page.mouse.wheel(0, 200);
    await page.click('#tab-session');
    await page.click('textarea[data-note]');
    await page.keyboard.type('felt it');
    assert.equal(await page.inputValue('textarea[data-note]'), 'felt it', 'typing in the panel works');
    const g = await page.evaluate(() => window.game);
    assert.deepEqual(g.seen, [], `the game saw the panel's events: ${g.seen}`);
    assert.equal(g.thrown, 0, 'no ball thrown');
    assert.deepEqual(g.keys, [], 'keys typed in the panel are not the game\'s');
    assert.equal(await locked(page), false, 'the panel keeps the pointer while open');
    // closed, the game has its mouse back
    await page.keyboard.press('Escape');
    await waitFor(async () => !(await isOpen(page)), { what: 'the panel closed' });
    await page.mouse.click(640, 440);
    await waitFor(async () => (await page.evaluate(() => window.game.thrown)) === 1, { what: 'the game hears its click again' });
    await waitFor(() => locked(page), { what: 'the game takes the pointer again' });
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('a flood of live records re-renders the panel a few times a second, not once per record', async () => {
  const page = await openGame();
  try {
    await page.keyboard.press('Control+F12');
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'events socket live' });
    // count the session list's re-renders (each replaces its children)
    await page.evaluate(() => {
      const list = window.panel.root.querySelector('[data-session-list]');
      window.renders = 0;
      new MutationObserver(() => { window.renders++; }).observe(list, { childList: true });
    });
    // k records, one every 40 ms, each one whole line in one write(2) on
    // an O_APPEND descriptor (as a game writing its own ledger does): the
    // socket brings a record message every 40 ms
    const t0 = Date.now();
    const k = 60;
    await new Promise((resolve) => {
      let i = 0;
      const fd = fs.openSync(perfPath(project), 'a');
      const t = setInterval(() => {
        fs.writeSync(fd, record());
        if (++i === k) {
          clearInterval(t);
          fs.closeSync(fd);
          resolve();
        }
      }, 40);
    });
    await waitFor(async () => (await page.evaluate(() => window.panel.root.querySelectorAll('[data-incident]').length)) >= k,
      { timeout: 20000, what: `${k} incidents shown` });
    const ms = Date.now() - t0;
    const renders = await page.evaluate(() => window.renders);
    // one every 250 ms at most, the first at once, the last one settling
    assert.ok(renders <= Math.ceil(ms / 250) + 2, `${renders} renders in ${ms} ms for ${k} records`);
    assert.ok(renders < k / 2, `${renders} renders for ${k} records: not one per record`);
  } finally {
    await page.close();
  }
});

test('closed, the panel renders nothing for live records: its badge counts them, opening shows them all', async () => {
  const page = await openGame();
  try {
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'events socket live, the panel closed' });
    assert.equal(await isOpen(page), false);
    await page.evaluate(() => {
      // the Current Session tab's region (its list is not made until it renders)
      const region = window.panel.root.querySelector('#panel-session');
      window.renders = 0;
      new MutationObserver(() => { window.renders++; }).observe(region, { childList: true, subtree: true, characterData: true });
    });
    const badge = async () => Number((await page.textContent('[data-count="session"]')) || 0);
    const before = await badge();
    const k = 12;
    const fd = fs.openSync(perfPath(project), 'a');
    try {
      for (let i = 0; i < k; i++) fs.writeSync(fd, record());
    } finally {
      fs.closeSync(fd);
    }
    await waitFor(async () => (await badge()) === before + k, { timeout: 20000, what: async () => `the Session badge at ${before + k} (${await badge()})` });
    // a render asked for would have run by now: the panel renders at most
    // every 250 ms, in an animation frame — so 400 ms of the page's clock
    // and two game frames after the badge moved, none was asked for
    await page.waitForFunction(({ t0, f0 }) => performance.now() >= t0 + 400 && window.game.frames >= f0 + 2,
      await page.evaluate(() => ({ t0: performance.now(), f0: window.game.frames })), { timeout: 20000, polling: 50 });
    assert.equal(await page.evaluate(() => window.renders), 0, 'the closed panel re-rendered its session list');
    await page.keyboard.press('Control+F12');
    await waitFor(() => isOpen(page), { what: 'the panel opened' });
    await waitFor(async () => (await page.evaluate(() => window.panel.root.querySelectorAll('[data-incident]').length)) >= before + k,
      { timeout: 20000, what: `${before + k} incidents shown once open` });
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});

test('in a 1 fps game the panel stays clickable: a press held across a re-render still clicks', async () => {
  const page = await openGame(1);
  try {
    await page.keyboard.press('Control+F12');
    await waitFor(() => isOpen(page), { timeout: 20000, what: 'the panel opened at 1 fps' });
    await waitFor(async () => (await page.getAttribute('[data-conn]', 'data-state')) === 'live', { timeout: 20000, what: 'socket live' });
    appendFromProcess(perfPath(project), record());
    const at = await waitFor(() => page.evaluate(() => {
      const b = window.panel.root.querySelector('[data-incident] button[data-action="goto-issue"]');
      if (!b) return null;
      const r = b.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
    }), { timeout: 20000, what: 'an incident with its footprint button' });
    await page.mouse.move(at.x, at.y);
    await page.mouse.down();
    // the button under the pointer as it went down
    const fp = await page.evaluate(({ x, y }) => window.panel.root.elementFromPoint(x, y).closest('button').dataset.id, at);
    // while the button is held, more records arrive and a re-render is due
    const before = await page.evaluate(() => window.game.frames);
    appendFromProcess(perfPath(project), record() + record());
    await waitFor(async () => Number(await page.textContent('[data-count="session"]')) >= 3, { timeout: 20000, what: 'the records arrived' });
    await waitFor(async () => (await page.evaluate(() => window.game.frames)) >= before + 2, { timeout: 20000, what: 'two game frames (a render had its turn)' });
    await page.mouse.up();
    await waitFor(async () => (await page.getAttribute('#tab-issues', 'aria-selected')) === 'true', { timeout: 20000, what: 'the click went to the button held' });
    await waitFor(async () => (await page.$(`[data-row="${fp}"] [data-detail]`)) !== null, { timeout: 20000, what: 'its row opened' });
    // and a plain click on a tab, between two of the game's long frames
    await page.click('#tab-settings');
    await waitFor(async () => (await page.getAttribute('#tab-settings', 'aria-selected')) === 'true', { timeout: 20000, what: 'Settings selected at 1 fps' });
    assert.equal(await page.evaluate(() => window.game.thrown), 0, 'no ball thrown at 1 fps either');
    assert.deepEqual(page.problems, []);
  } finally {
    await page.close();
  }
});
