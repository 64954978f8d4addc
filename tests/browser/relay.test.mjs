// The open tab, with real parts: the daemon, the demo game on Vite with
// the plugin, a page of it open in Debian's chromium (SwiftShader) — the
// developer's tab — and `sloptimize bench`, `gate` and `attribute`
// without --launch, which reach that tab through the daemon's relay
// (daemon/relay.c, page-runtime/relay.js).  What is held:
//
//   - the page registers on the events socket, is listed by GET /relay
//     with its URL, and is sent no wakes;
//   - bench in the open tab: written with environment.launched false and
//     the tab's browser and window; the same code benched again → exit 5
//     (counters are exact under the virtual clock in the open tab too);
//     the tab loaded again with the crates instanced → improved, draw
//     calls down by exactly 3,998; the recorder the bench stopped is
//     running again afterwards; a banner in the tab says so while it runs;
//   - attribute --static and gate --record/gate in the open tab: the
//     census is the tab's (source "open-tab", valid against its schema),
//     served by the daemon as written and shown as a table of entities
//     by the panel's Issues tab; the gate passes its own golden at SSIM 1;
//   - a command without the token or an allowed Origin → 403, nothing sent;
//     another command while the tab runs one → 409;
//   - a tab whose scene setup blocks its main thread → exit 4 "stopped
//     answering" within the watch's bound, and the tab takes the next
//     command once it is free again;
//   - a tab loaded again under a bench (Vite's reload) → the bench run
//     again from the start on it, said; a tab that goes to another
//     address under one → exit 4 saying where it went, not run again;
//   - a hidden tab → exit 4 saying to bring it to the front; no tab → 4
//     saying to open the game or pass --launch; --url without --launch →
//     2 (it names a launched browser's page).
//
// Timing takes no part: the benches are tiny and judged by counters.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { FLAGS, startVite } from '../browser.mjs';
import { Daemon, runCli, tmpdir, top, waitFor } from '../lib.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const SMALL = ['--frames', '2', '--warmup', '1', '--runs', '2'];
let daemon, vite, browser, page, project, scratch;
const problems = [];

const cli = (args) => runCli([...args, '--project', project], { env: daemon.env });

const pages = async () => (await daemon.get('/api/sloptimize/relay')).pages;

function validate(schema, doc) {
  const v = spawnSync(process.execPath, [path.join(top, 'tests', 'validate.mjs'), path.join(top, 'schemas', schema), '-'],
    { input: JSON.stringify(doc), encoding: 'utf8' });
  assert.equal(v.status, 0, `${schema}: ${v.stderr}`);
}

async function openTab() {
  page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${vite.url}/`);
  // registered, and its scenes said: the page registers when the events
  // socket opens and says a scene when the game names it, which on a
  // loaded machine can be a while after
  await waitFor(async () => { const p = await pages(); return p.length === 1 && p[0].scenes.includes('crates'); },
    { timeout: 60000, what: 'the tab registered on the relay with its scene crates' });
}

before(async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  scratch = tmpdir('relay');
  project = path.join(scratch, 'game');
  fs.mkdirSync(project);
  daemon = await new Daemon(project).start();
  vite = await startVite(daemon.base, { env: { SLOPTIMIZE_PROJECT: project } });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  await openTab();
});

after(async () => {
  if (browser) await browser.close();
  if (vite) await vite.stop();
  if (daemon) {
    // a clean exit: under `make asan` a sanitizer's report is not one
    const end = await daemon.stop();
    assert.deepEqual(end, { code: 0, sig: null }, daemon.log.slice(-3000));
  }
});

test('the tab registers, is listed with its url, and is sent no wakes', async () => {
  const [p] = await pages();
  assert.equal(p.url, `${vite.url}/`);
  assert.equal(p.visible, true);
  assert.match(p.userAgent, /Chrome\//);
  assert.ok(p.scenes.includes('crates'), JSON.stringify(p.scenes));
  validate('relay.json', await daemon.get('/api/sloptimize/relay'));
  const st = await daemon.status();
  validate('status.json', st);
  assert.equal(st.relay.pages, 1);
  // a write without the token or an allowed Origin is refused, nothing sent
  const r = await fetch(`${daemon.base}/api/sloptimize/relay`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://evil.example' },
    body: JSON.stringify({ verb: 'run', options: { scene: 'crates' } }),
  });
  assert.equal(r.status, 403);
  assert.equal((await daemon.status()).relay.commands, 0);
  // doctor says where bench, gate and attribute without --launch would run
  const doc = await cli(['doctor']);
  assert.match(doc.out, new RegExp(`open tab.*1 game tab connected, the newest ${vite.url}/ \\(visible\\)`), doc.out);
  // no census yet: the daemon says how to make one
  const c = await fetch(`${daemon.base}/api/sloptimize/census`);
  assert.equal(c.status, 404);
  assert.match((await c.json()).error.message, /no census\.json yet: `sloptimize attribute --static --scene S`/);
});

test('bench in the open tab: written as the tab\'s, A/A is exit 5, the recorder runs again after', { timeout: 900000 }, async () => {
  assert.equal(await page.evaluate(() => !!globalThis.sloptimize.recorder), true, 'the tab records before');
  // the person at the tab is told while the bench drives the game
  const seen = new Set();
  let benching = true;
  const watchBanner = (async () => {
    while (benching) {
      const t = await page.evaluate(() => document.querySelector('.sloptimize-relay-banner')?.textContent || null).catch(() => null);
      if (t) seen.add(t);
      await new Promise((res) => setTimeout(res, 50));
    }
  })();
  let r = await cli(['bench', '--scene', 'crates', '--json', ...SMALL]);
  benching = false;
  await watchBanner;
  assert.ok([...seen].some((t) => /^sloptimize: bench of scene 'crates' asked by the CLI — the game is stepped by the bench/.test(t)), JSON.stringify([...seen]));
  assert.equal(await page.evaluate(() => document.querySelector('.sloptimize-relay-banner')), null, 'and the banner goes with the bench');
  assert.ok(r.code === 0 || r.code === 1, `${r.code}: ${r.err}`);
  const b0 = JSON.parse(fs.readFileSync(r.doc.run.path, 'utf8'));
  assert.equal(b0.environment.launched, false);
  assert.equal(b0.environment.headless, undefined, 'nothing said of a headless mode it was not in');
  assert.match(b0.environment.browser, /^Chrome\//);
  assert.equal(b0.runs, 2);
  assert.equal(b0.perRun.length, 2);
  assert.deepEqual(b0.environment.viewport, { width: 640, height: 400 }, 'the tab\'s own window');
  assert.equal(await page.evaluate(() => !!globalThis.sloptimize.recorder), true, 'the tab records again');
  r = await cli(['bench', '--scene', 'crates', '--compare', 'last', '--json', ...SMALL]);
  assert.equal(r.code, 5, `the same code again in the same tab: ${r.err}`);
  assert.equal(r.doc.compare.verdict, 'no-detectable-change');
  // the developer loads the instanced crates in the tab: it goes from the
  // relay and comes back, and the change is a verdict now
  await page.goto(`${vite.url}/?instanced=1`);
  await waitFor(async () => { const p = await pages(); return p.length === 1 && /instanced=1/.test(p[0].url); },
    { timeout: 60000, what: 'the reloaded tab registered again' });
  r = await cli(['bench', '--scene', 'crates', '--compare', 'last', '--json', ...SMALL]);
  assert.equal(r.code, 0, `instancing in the open tab: ${r.err}`);
  assert.equal(r.doc.compare.verdict, 'improved');
  assert.equal(r.doc.compare.metrics.find((m) => m.name === 'render.calls').delta, -2 * (2000 - 1), 'draw calls down by exactly 3,998');
  await page.goto(`${vite.url}/`);
  await waitFor(async () => { const p = await pages(); return p.length === 1 && !/instanced/.test(p[0].url); },
    { timeout: 60000, what: 'the tab back at the plain crates' });
  assert.deepEqual(problems, []);
});

test('census and gate in the open tab', { timeout: 900000 }, async () => {
  let r = await cli(['attribute', '--static', '--scene', 'crates', '--json']);
  assert.equal(r.code, 0, r.err);
  const census = JSON.parse(fs.readFileSync(path.join(project, '.sloptimize', 'census.json'), 'utf8'));
  assert.equal(census.source, 'open-tab');
  assert.equal(census.url, `${vite.url}/`);
  assert.ok(census.entities.length > 0);
  validate('census.json', census);
  // the daemon serves it as written, and the panel's Issues tab shows it
  assert.deepEqual(await daemon.get('/api/sloptimize/census'), census);
  const panel = await browser.newPage();
  try {
    await panel.goto(`${daemon.base}/?source=daemon&tab=issues`);
    const row = panel.locator('[data-census-table] tr[data-entity]').first();
    await row.waitFor({ timeout: 30000 });
    assert.equal(await row.getAttribute('data-entity'), census.entities[0].id);
    const site = census.entities[0].site;
    assert.ok((await row.textContent()).includes(site === 'unknown' ? 'unknown: name it' : site), await row.textContent());
    assert.match(await panel.textContent('[data-census]'), /Census of scene crates.*the open tab/s);
  } finally {
    await panel.close();
  }
  // the measured bisection, in the open tab and launched: the 2,000
  // crates (not instanced) first by draw calls, the world as it was
  const group = census.entities.find((e) => e.meshes >= 2000);
  assert.ok(group, `the crates in the census: ${JSON.stringify(census.entities.slice(0, 5))}`);
  for (const where of [[], ['--launch', '--url', `${vite.url}/`]]) {
    r = await cli(['attribute', '--scene', 'crates', '--top', '3', '--frames', '2', '--json', ...where]);
    assert.equal(r.code, 0, r.err);
    const att = JSON.parse(fs.readFileSync(path.join(project, '.sloptimize', 'attribution.json'), 'utf8'));
    validate('attribution.json', att);
    const show = JSON.stringify(att.entities.map((e) => [e.id, e.dCalls]));
    assert.equal(att.source, where.length ? 'launch' : 'open-tab');
    assert.equal(att.entities[0].id, group.id, show);
    assert.ok(att.entities[0].dCalls >= 2000, show);
    assert.equal(att.baseline.stable, true);
    assert.equal(att.restored, true);
    assert.equal(att.pixelsIdentical, true, 'the frame after the bisection is the frame before it');
  }
  r = await cli(['gate', '--record', '--yes', '--scene', 'crates']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out + r.err, /640×400/, 'the tab\'s own size');
  r = await cli(['gate', '--scene', 'crates', '--json']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.doc.verdict, 'pass');
});

test('a tab that blocks its main thread is exit 4 in bound, and takes the next command when free', { timeout: 600000 }, async () => {
  // a scene whose setup holds the main thread 40 s (on the real clock)
  await page.evaluate(() => globalThis.sloptimize.scene('stuck', () => {
    const t = globalThis.sloptimize.realNow();
    while (globalThis.sloptimize.realNow() - t < 40000) { /* a script that does not return */ }
  }));
  const busy = cli(['bench', '--scene', 'stuck', '--setup-timeout', '2', ...SMALL]);
  // while the tab is stuck, a second command is refused: it runs one
  await waitFor(async () => (await pages())[0].busy !== undefined, { timeout: 30000, what: 'the tab busy' });
  const second = await cli(['bench', '--scene', 'crates', ...SMALL]);
  assert.equal(second.code, 4, second.err);
  assert.match(second.err, /still running command/);
  const r = await busy;
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /stopped answering in its (scene|setup) phase/);
  assert.ok(r.ms < 35000, `said before the tab came back (${r.ms} ms)`);
  // once the script returns the tab answers (its own setup deadline) and is free
  await waitFor(async () => (await pages())[0].busy === undefined, { timeout: 120000, what: 'the tab free again' });
  const next = await cli(['attribute', '--static', '--scene', 'crates']);
  assert.equal(next.code, 0, next.err);
});

test('a tab loaded again under the run is run again from the start; one that goes to another address is exit 4, said', { timeout: 900000 }, async () => {
  // long enough that the tab is still at it when it is loaded again
  const LONG = ['--frames', '200', '--warmup', '1', '--runs', '2'];
  const running = () => waitFor(async () => (await pages())[0]?.busy !== undefined, { timeout: 60000, interval: 50, what: 'the tab running the command' });
  let busy = cli(['bench', '--scene', 'crates', ...LONG]);
  await running();
  await page.reload();
  let r = await busy;
  assert.ok(r.code === 0 || r.code === 1, `${r.code}: ${r.err}`);
  assert.match(r.err, /the game's tab was loaded again under the run .*running again from the start/);
  // the tab goes to another address of the game while it runs one
  await waitFor(async () => (await pages()).length === 1 && (await pages())[0].busy === undefined, { timeout: 60000, what: 'the tab free' });
  busy = cli(['bench', '--scene', 'crates', ...LONG]);
  await running();
  await page.goto(`${vite.url}/?elsewhere=1`);
  r = await busy;
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, new RegExp(`the game's tab went to another address under the run \\(${vite.url}/\\?elsewhere=1, was ${vite.url}/\\): the game left the page it was run on, so nothing was measured`));
  assert.doesNotMatch(r.err, /loaded again under the run/);
  // the tab back where it was, for what follows
  await page.goto(`${vite.url}/`);
  await waitFor(async () => { const p = await pages(); return p.length === 1 && p[0].url === `${vite.url}/` && p[0].busy === undefined; },
    { timeout: 60000, what: 'the tab back at the game' });
});

test('a hidden tab, and no tab, are exit 4 saying what to do', { timeout: 300000 }, async () => {
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { get: () => 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  await waitFor(async () => (await pages())[0].visible === false, { what: 'the tab said it is hidden' });
  let r = await cli(['bench', '--scene', 'crates', ...SMALL]);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /hidden, and a browser draws no frames for a hidden tab: bring it to the front, or pass --launch/);
  await page.close();
  await waitFor(async () => (await pages()).length === 0, { what: 'the tab gone from the relay' });
  assert.match((await cli(['doctor'])).out, /open tab.*no game tab is connected to the daemon/);
  r = await cli(['gate', '--scene', 'crates']);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /no game page is connected to the daemon: open the game .*or pass --launch/);
  // a URL names the page a launched browser opens: without --launch it is a usage error, not ignored
  r = await cli(['bench', '--scene', 'crates', '--url', `${vite.url}/`]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /--url names the page a launched browser opens: pass --launch with it/);
  r = await cli(['attribute', '--static', '--scene', 'crates', '--url', `${vite.url}/`]);
  assert.equal(r.code, 2, r.err);
});
