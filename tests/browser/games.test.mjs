// Real games (issue 22, item 6): two open-source three.js programs nobody
// here wrote, from npm, pinned in lockfiles (tests/games/*/), adopted
// exactly as docs/recorder.md says — the one Vite plugin line, nothing in
// their code — played by a scripted driver in Debian's chromium on
// SwiftShader, their records folded by the real daemon and the real C
// fold.  tests/games/README.md says what each is and what the driver does.
//
// What is asserted is what a user of the catalogue relies on, never a
// timing: a stutter caused twice across a reload is one footprint; two
// different scripts that run long are two; a large upload is a
// texture-upload; a resize of the page is one resize record, not a flood;
// no record names the recorder; a fix that changed nothing is not
// `fixed`.  Every wait has a deadline and waits on a condition (frames
// the recorder counted, a roll the game finished), so a loaded machine
// makes this slower, never wrong: the stutters the driver causes are
// sized from the game's own frame time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { CLI, Daemon, perfPath, tmpdir, waitFor } from '../lib.mjs';
import { FLAGS } from '../browser.mjs';
import { startGame as startGame0, chartRoutes, openChart, HIGHWAY } from '../games/driver.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const OWN = /@sloptimize|page-runtime|recorder\.js|delivery\.js|frames\.js|motion\.js|footprint\.js|panel\.js/;

let browser;
const cleanup = [];

before(async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});

after(async () => {
  for (const f of cleanup.reverse()) await f();
  if (browser) await browser.close();
});

// --- the game's dev server, the daemon, the page -------------------------------

// `vite` in tests/games/NAME, proxying to the daemon, records stamped `build`.
async function startGame(name, daemon, build) {
  const game = await startGame0(name, { daemon: daemon.base, build });
  cleanup.push(game.stop);
  return game;
}

async function startDaemon(name) {
  const project = tmpdir(`games-${name}`);
  // the wake limits are not what is tested here
  const daemon = await new Daemon(project, { args: ['--global-max', '0', '--per-fp-ms', '0'] }).start();
  cleanup.push(() => daemon.stop());
  return { project, daemon };
}

async function newPage(viewport) {
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  cleanup.push(() => page.close().catch(() => {}));
  return { page, problems };
}

// The automatic recorder the plugin made for the game's renderer.
const recState = (page) => page.evaluate(() => globalThis.sloptimize && globalThis.sloptimize.rec ? globalThis.sloptimize.rec.state() : null);

// Wait until the recorder has closed `n` more frames than `from`.
async function frames(page, n, what, timeout = 120000) {
  const from = (await recState(page)).frames;
  return waitFor(async () => { const s = await recState(page); return s && s.frames >= from + n ? s : null; },
    { timeout, interval: 50, what: `${n} frames ${what}` });
}

// Everything the recorder holds, delivered (flush resolves once sent).
async function delivered(page) {
  const st = await page.evaluate(() => globalThis.sloptimize.rec.flush());
  assert.equal(st.reachable, true, JSON.stringify(st));
  assert.equal(st.refused, 0, `the daemon refused records: ${st.lastRefusal}`);
  // a real game adopted with the plugin line: its records leave from a worker
  assert.equal(st.sender.offThread, true, `sent from the page's thread: ${st.sender.why}`);
  return st;
}

function ledger(project) {
  return fs.readFileSync(perfPath(project), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

function catalogue(project) {
  const r = spawnSync(CLI, ['issues', '--json', '--project', project], { encoding: 'utf8' });
  assert.equal(r.status === 0 || r.status === 1, true, `sloptimize issues: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// What the recorder cost the game before the reload, for the log: its
// censuses are queued by what a frame drew (docs/recorder.md), and a real
// game's camera moves its draw calls.
function ownCost(st) {
  const slices = st.own.byKind['after-frame (a census slice)'] || { tasks: 0, ms: 0 };
  return `${st.frames} frames, ${st.censuses} censuses given finds, census slices ${slices.tasks} (${slices.ms} ms); ` +
    `the recorder's own ${st.own.ms} ms in its tasks and ${st.own.renderMs} in the render wrapper (${st.own.msPerFrame} ms a frame all in), ${st.own.over1ms} tasks of 1 ms or more`;
}

const top1 = (r) => r.classification[0].guess;
const show = (recs) => JSON.stringify(recs.filter((r) => r.type === 'hitch').map((r) => [r.frame, r.frameMs, top1(r), r.footprint.key]));

// Page script that holds the main thread `ms`, its result kept in
// window[into] so that no engine drops the loop as dead code.
const busy = (ms, into) => `const end = performance.now() + ${ms}; let x = 0;
    while (performance.now() < end) for (let i = 0; i < 1000; i++) x += Math.sqrt(i * x + 1);
    window.${into} = x;`;

// A named function that runs `ms` in its own animation-frame callback, as
// a game's system that ran long would: the browser names it.
function longScript(page, name, ms) {
  return page.addScriptTag({ content: `requestAnimationFrame(function ${name}() {
    ${busy(ms, `__${name}`)}
  });` });
}

// No record hands the recorder on as a cause.
function assertNeverTheRecorder(recs) {
  for (const r of recs.filter((x) => x.type === 'hitch')) {
    assert.ok(!OWN.test(JSON.stringify(r.script || {})), `a record names the recorder: ${JSON.stringify(r.script)}`);
    for (const c of r.classification) assert.ok(!OWN.test(c.evidence), `evidence names the recorder: ${c.evidence}`);
    assert.ok(!OWN.test(r.footprint.key), r.footprint.key);
  }
}

// The page resized to `size`, its reallocation made costly.  A drawing
// buffer reallocated on SwiftShader at these sizes costs a few ms — less
// than a loaded machine's own frame-to-frame spread — so whether the
// resize frame is a stutter at all would be the machine's load, not the
// recorder's.  The canvas's width setter holds the main thread `ms` (four
// of this machine's frames at least) once, when the game sets the new
// size: synchronously, so in the very frame whose render sees that size,
// however the game schedules its resize (a listener, a debounced
// animation-frame callback that renders at once).  The frame is one to
// judge whatever the load; what the test holds is how it is named and
// what the frames after it are judged against.
async function costlyResize(page, canvasExpr, size, ms) {
  await page.addScriptTag({ content: `(() => {
    const cv = ${canvasExpr};
    const width = Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, 'width');
    Object.defineProperty(cv, 'width', { configurable: true, get() { return width.get.call(this); }, set(v) {
      delete cv.width;
      ${busy(ms, '__reallocated')}
      width.set.call(this, v);
    } });
  })();` });
  await page.setViewportSize(size);
}

// One resize record, and no flood after it: the frames of the new size
// are judged against their own level (warming up first), never against
// the old one — when the level moved, every hitch after the resize says a
// median from the new level, or that it is warming up.  (Hitches there
// are not ruled out: a software renderer at a bigger size waits on the
// GPU process now and then, and says so.)
function assertOneResize(recs, n) {
  const hitches = recs.filter((r) => r.type === 'hitch');
  const resizes = hitches.filter((r) => top1(r) === 'resize');
  assert.equal(resizes.length, 1, `one resize record: ${show(recs)}`);
  const [rz] = resizes;
  assert.ok(rz.resize && rz.resize.to[0] > rz.resize.from[0], JSON.stringify(rz.resize));
  assert.match(rz.footprint.key, /\|resize\|-\|ctx:/);
  const beats = recs.filter((r) => r.type === 'heartbeat');
  const old = beats.filter((r) => r.at < rz.at).at(-1)?.frame.medianMs;
  const later = beats.filter((r) => r.at > rz.at).map((r) => r.frame.medianMs).sort((x, y) => x - y);
  const level = later[later.length >> 1];
  const afterIt = hitches.filter((r) => r.frame > rz.frame && r.frame <= rz.frame + n && r.at > rz.at);
  assert.ok(afterIt.length < n / 2, `no flood after the resize (${afterIt.length} hitches in ${n} frames): ${show(recs)}`);
  if (old > 0 && level > 1.5 * old) {
    for (const r of afterIt) {
      assert.ok(r.warmup || r.medianMs > 1.5 * old,
        `a frame of the new size (level ${level} ms) judged against the old level (${old} ms): ${JSON.stringify([r.frame, r.frameMs, r.medianMs])}`);
    }
  }
}

// A 4096² RGBA texture handed to the game's scene on a plane, made with
// the scene's own three (the constructors of what it already holds: the
// page has no three of the test's): 64 MiB on its first render.
function bigUpload(page, sceneExpr) {
  return page.evaluate((expr) => {
    const scene = new Function(`return (${expr})`)();   // eslint-disable-line no-new-func
    let mesh = null, mat = null;
    scene.traverse((o) => {
      const m = o.isMesh && (Array.isArray(o.material) ? o.material.find((x) => x && x.map) : o.material);
      if (!mesh && m && m.map) { mesh = o; mat = m; }
    });
    if (!mesh) throw new Error('no textured mesh in the scene to copy three\'s constructors from');
    const canvas = document.createElement('canvas');
    canvas.width = 4096; canvas.height = 4096;
    const g = canvas.getContext('2d');
    g.fillStyle = '#3a6'; g.fillRect(0, 0, 4096, 4096);
    const tex = new mat.map.constructor(canvas);
    tex.needsUpdate = true;
    const plane = new mesh.constructor(mesh.geometry, new mat.constructor({ map: tex }));
    plane.name = 'driver_billboard';
    plane.position.copy(mesh.position); plane.quaternion.copy(mesh.quaternion); plane.scale.copy(mesh.scale);
    (mesh.parent || scene).add(plane);
    return mat.type;
  }, sceneExpr);
}

// --- @3d-dice/dice-box-threejs: physics every frame, compiles on the first roll

test('dice-box-threejs: the first roll\'s compile is one footprint across a reload; a 4096² upload is texture-upload; a resize is one record; never the recorder', async (t) => {
  const { project, daemon } = await startDaemon('dice');
  const game = await startGame('dice-box', daemon, 'dice-1');
  const { page, problems } = await newPage({ width: 320, height: 240 });
  const play = async (what, viewport) => {
    if (viewport) {
      // a new load at the first size (set on a blank page: a resize of
      // the old one would be a resize of its own)
      await page.goto('about:blank');
      await page.setViewportSize(viewport);
    }
    await page.goto(`${game.url}/`);
    await page.waitForFunction(() => window.game && window.game.ready && globalThis.sloptimize && globalThis.sloptimize.rec,
      null, { timeout: 120000 });
    const rolls = await page.evaluate(() => window.game.rolls.length);
    await page.evaluate(() => { window.game.roll('4d6'); });
    await waitFor(() => page.evaluate((n) => window.game.rolls.length > n, rolls), { timeout: 180000, interval: 100, what: `the ${what} roll` });
  };
  await play('first');
  // a roll of the same dice again: nothing new to compile
  await page.evaluate(() => { window.game.roll('4d6'); });
  await waitFor(() => page.evaluate(() => window.game.rolls.length >= 2), { timeout: 180000, interval: 100, what: 'the second roll' });
  // a 4096² texture on a plane in the box, drawn by the next roll
  await bigUpload(page, 'window.game.box.scene');
  await page.evaluate(() => { window.game.roll('4d6'); });
  await waitFor(() => page.evaluate(() => window.game.rolls.length >= 3), { timeout: 180000, interval: 100, what: 'the roll that uploads' });
  // the page resized: the box re-renders at the new size, then rolls there
  const st = await recState(page);
  await costlyResize(page, 'window.game.box.renderer.domElement', { width: 640, height: 480 }, Math.max(250, 4 * (st.medianMs || 0)));
  await waitFor(() => page.evaluate(() => window.game.box.renderer.domElement.width === 640), { timeout: 60000, interval: 100, what: 'the box at its new size' });
  await page.evaluate(() => { window.game.roll('4d6'); });
  await waitFor(() => page.evaluate(() => window.game.rolls.length >= 4), { timeout: 180000, interval: 100, what: 'the roll after the resize' });
  await delivered(page);
  // a reload: the same first roll, the same compile
  t.diagnostic(ownCost(await recState(page)));
  const reloadAt = Date.now();
  await play('reloaded first', { width: 320, height: 240 });
  await delivered(page);
  assert.deepEqual(problems, []);
  await daemon.caughtUp();

  const recs = ledger(project);
  const hitches = recs.filter((r) => r.type === 'hitch');
  // the first roll's compile, on each page load: one footprint, named by
  // the dice's material, never a runtime id
  const compiles = hitches.filter((r) => top1(r) === 'shader-compile' && r.delta.programs > 0 && r.warmup);
  assert.ok(compiles.some((r) => Date.parse(r.at) < reloadAt) && compiles.some((r) => Date.parse(r.at) > reloadAt),
    `the first roll compiled on each load: ${show(recs)}`);
  const ids = new Set(compiles.map((r) => r.footprint.id));
  assert.equal(ids.size, 1, `one footprint for the first roll's compile: ${show(recs)}`);
  assert.ok(compiles.every((r) => r.sites && r.sites.length > 0), `named by its sites: ${show(recs)}`);
  assert.doesNotMatch(compiles[0].footprint.key, /#\d/);
  const row = catalogue(project).issues.find((i) => i.id === compiles[0].footprint.id);
  assert.ok(row && row.count >= 2, `the catalogue holds the compile as one row seen twice: ${JSON.stringify(row)}`);

  const upload = hitches.find((r) => top1(r) === 'texture-upload' && (r.uploadBytes ?? r.before?.uploadBytes ?? 0) >= 4096 * 4096 * 4);
  assert.ok(upload, `the 4096² upload is a texture-upload: ${show(recs)}`);
  assert.match(upload.classification[0].evidence, /MB uploaded|MB\)/);

  assertOneResize(recs, 30);
  assertNeverTheRecorder(recs);
});

// --- chart-preview: a rhythm-game highway, animated every frame -----------------

async function chartPage() {
  const { page, problems } = await newPage({ width: 320, height: 240 });
  await chartRoutes(page);
  return { page, problems };
}

// The chart played (driver.mjs), then `n` frames of it recorded.
async function playChart(game, page, n) {
  await openChart(page, game.url);
  return frames(page, n, 'of play');
}

let chartRun = null;      // the first test's daemon and project, for the fix test after it

test('chart-preview: a 4096² upload is texture-upload, one footprint across a reload; two scripts that run long are two; a resize is one record; never the recorder', async (t) => {
  const { project, daemon } = await startDaemon('chart');
  const game = await startGame('chart-preview', daemon, 'chart-1');
  const { page, problems } = await chartPage();
  // past the recorder's warm-up (30 frames), on a level of its own
  let st = await playChart(game, page, 90);
  // two of the game's systems run long, a second apart or less: each its
  // own cause.  Long for this machine: four of its frames at least.
  const ms = () => Math.max(250, 4 * (st.medianMs || 0));
  await longScript(page, 'pathfind', ms());
  st = await frames(page, 10, 'after pathfind');
  await longScript(page, 'crowdTick', ms());
  st = await frames(page, 10, 'after crowdTick');
  await longScript(page, 'pathfind', ms());          // the first again: the same cause
  st = await frames(page, 30, 'after pathfind again');
  // a 4096² texture on a plane in the highway's scene
  await bigUpload(page, HIGHWAY);
  st = await frames(page, 30, 'after the upload');
  // the page grows: the drawing buffer is reallocated, the level moves
  await costlyResize(page, "document.querySelector('chart-preview-player').shadowRoot.querySelector('canvas')", { width: 960, height: 720 }, ms());
  await waitFor(() => page.evaluate(() => document.querySelector('chart-preview-player').shadowRoot.querySelector('canvas').width >= 900),
    { timeout: 60000, interval: 100, what: 'the highway at its new size' });
  st = await frames(page, 90, 'at the new size');
  await delivered(page);
  // a reload: the same play, the same upload (the browser keeps compiled
  // programs across loads, so the first play's compile may not come
  // again; the upload always does)
  t.diagnostic(ownCost(await recState(page)));
  const reloadAt = Date.now();
  await playChart(game, page, 40);
  await bigUpload(page, HIGHWAY);
  await frames(page, 30, 'after the second upload');
  await delivered(page);
  assert.deepEqual(problems, []);
  await daemon.caughtUp();

  const recs = ledger(project);
  const hitches = recs.filter((r) => r.type === 'hitch');
  const big = (r) => top1(r) === 'texture-upload' && (r.uploadBytes ?? r.before?.uploadBytes ?? 0) >= 4096 * 4096 * 4;
  const uploads = hitches.filter(big);
  assert.ok(uploads.some((r) => Date.parse(r.at) < reloadAt) && uploads.some((r) => Date.parse(r.at) > reloadAt),
    `the 4096² upload is a texture-upload, on each load: ${show(recs)}`);
  assert.equal(new Set(uploads.map((r) => r.footprint.id)).size, 1, `one footprint for the upload across the reload: ${show(recs)}`);
  assert.match(uploads[0].footprint.key, /\|texture-upload\|MeshBasicMaterial@driver_billboard\|ctx:$/);

  const scripts = hitches.filter((r) => top1(r) === 'long-script' && r.script && ['pathfind', 'crowdTick'].includes(r.script.name));
  const byName = (n) => scripts.filter((r) => r.script.name === n);
  assert.ok(byName('pathfind').length >= 1 && byName('crowdTick').length >= 1, `both scripts named: ${show(recs)}`);
  for (const r of scripts) {
    assert.equal(r.classification[0].confidence, 'high', JSON.stringify(r.classification[0]));
    assert.match(r.footprint.key, new RegExp(`\\|long-script\\|${r.script.name}@`));
  }
  assert.equal(new Set(byName('pathfind').map((r) => r.footprint.id)).size, 1, 'the same script is one footprint');
  assert.notEqual(byName('pathfind')[0].footprint.id, byName('crowdTick')[0].footprint.id, 'two scripts, two footprints');
  const rows = catalogue(project).issues;
  assert.ok(rows.find((i) => i.id === byName('pathfind')[0].footprint.id) && rows.find((i) => i.id === byName('crowdTick')[0].footprint.id),
    'the catalogue has a row for each');

  assertOneResize(recs, 90);
  assertNeverTheRecorder(recs);
  chartRun = { project, daemon, cause: uploads[0].footprint.id, page };
  await game.stop();
});

// DESIGN §7: a fix is `fixed` when its cause does not occur in the fix's
// build or later.  A "fix" that changed nothing — the same code run again
// under a new build label — meets the cause again, under the same
// footprint (v2 keys it by stable identity), so it is not fixed.  (That a
// fix's was → now is judged past the noise is the fix-verdict work: not
// here.)
test('a no-op fix is not fixed: the same code as a new build meets the same cause, under the same footprint', async (t) => {
  if (!chartRun) { t.skip('the chart-preview run before it did not finish'); return; }
  const { project, daemon, cause, page } = chartRun;
  const r = spawnSync(CLI, ['fix', '--footprints', cause, '--title', 'upload the billboard at load', '--project', project, '--json'],
    { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  // the same code under a new build label, played the same way
  const game = await startGame('chart-preview', daemon, 'chart-2');
  await playChart(game, page, 40);
  await bigUpload(page, HIGHWAY);
  await frames(page, 30, 'after the upload');
  await delivered(page);
  await daemon.caughtUp();
  const again = ledger(project).filter((x) => x.type === 'hitch' && x.build === 'chart-2' && x.footprint.id === cause);
  assert.ok(again.length >= 1, 'the cause occurred again in the new build, under its footprint');
  const row = catalogue(project).issues.find((i) => i.id === cause);
  assert.ok(row, 'the row is there');
  assert.notEqual(row.status, 'fixed', JSON.stringify(row));
  assert.equal(row.status, 'regressed', JSON.stringify({ status: row.status, fixes: row.fixes }));
  await game.stop();
});
