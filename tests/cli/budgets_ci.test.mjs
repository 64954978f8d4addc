// The CI criterion of seed M2 (docs/budgets.md): `sloptimize check
// --counters-only` fails a change that doubles the draw calls, on a
// machine without a GPU.  All real: a three.js page (tests/budgets-page/)
// adopted with the one Vite plugin line, in Debian's chromium on
// SwiftShader driven by playwright-core, the recorder's heartbeats going
// through the plugin's proxy to the real daemon, which writes
// profile.json; then the CLI judges it.  N meshes: exit 0; the same page
// with 2N: exit 1.  Nothing is timed: each step waits for profile.json to
// carry the count it expects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

import { CLI, Daemon, tmpdir, top, waitFor } from '../lib.mjs';
import { FLAGS, VITE, DEMO, freePort } from '../browser.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const PAGE = path.join(top, 'tests', 'budgets-page');
const N = 40;

let dir, daemon, vite, browser;

// The game's dev server: the page's files in the project, a config with
// the plugin's one line (and three from the demo's install).
async function startVite() {
  for (const f of ['index.html', 'main.js']) fs.copyFileSync(path.join(PAGE, f), path.join(dir, f));
  const three = path.join(DEMO, 'node_modules', 'three', 'build', 'three.module.js');
  assert.ok(fs.existsSync(three), `no three in ${DEMO}/node_modules: make deps runs npm ci there`);
  fs.writeFileSync(path.join(dir, 'vite.config.mjs'), `// the one line of docs/recorder.md
import sloptimize from ${JSON.stringify(path.join(top, 'page-runtime', 'vite.js'))};
export default {
  plugins: [sloptimize({ daemon: ${JSON.stringify(daemon.base)}, build: 'ci-1' })],
  resolve: { alias: { three: ${JSON.stringify(three)} } },
  cacheDir: ${JSON.stringify(path.join(dir, '.vite-cache'))},
  server: { host: '127.0.0.1', fs: { allow: [${JSON.stringify(dir)}, ${JSON.stringify(top)}] } },
  clearScreen: false, logLevel: 'warn',
};
`);
  const port = await freePort();
  const proc = spawn(process.execPath, [VITE, '--config', path.join(dir, 'vite.config.mjs'), '--port', String(port),
    '--strictPort', '--host', '127.0.0.1'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/`)).ok, { timeout: 30000, what: `vite on ${url}\n${out}` });
  return { url, log: () => out, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

const profile = () => {
  try { return JSON.parse(fs.readFileSync(path.join(dir, '.sloptimize', 'profile.json'), 'utf8')); } catch { return null; }
};

function check(...args) {
  const r = spawnSync(CLI, ['check', '--project', dir, ...args], { encoding: 'utf8', env: daemon.env });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

before(async () => {
  dir = tmpdir('budgets-ci');
  fs.writeFileSync(path.join(dir, 'count.js'), `export const N = ${N};\n`);
  // reviewed source: a budget of 1.5 N draw calls, and a frame budget the
  // plugin hands the recorder (on SwiftShader check reports it, never
  // judges it)
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), JSON.stringify({
    'perf.budget.draw_calls': 1.5 * N,
    'perf.budget.programs': 10,
    'perf.budget.frame_ms_p95': { max: 25, level: 'error' },
  }, null, 2) + '\n');
  daemon = await new Daemon(dir, { args: ['--desktop', '0'] }).start();
  vite = await startVite();
});

after(async () => {
  if (browser) await browser.close();
  if (vite) await vite.stop();
  if (daemon) await daemon.stop();
});

test('check --counters-only passes N meshes and fails 2N, from the recorder\'s heartbeats on SwiftShader', async () => {
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  // the plugin read the budgets file: the recorder's frame budget is check's
  const boot = await (await fetch(`${vite.url}/@sloptimize/bootstrap.js`)).text();
  assert.match(boot, /"budgetFrameMs":25\b/, boot.slice(0, 400));

  // playwright's launch gives the browser a fresh profile of its own
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const page = await browser.newPage({ viewport: { width: 400, height: 300 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));

  // N meshes: inside
  await page.goto(`${vite.url}/`);
  await page.waitForFunction((n) => window.page && window.page.N === n && window.page.calls() === n, N, { timeout: 60000 });
  let p = await waitFor(() => { const q = profile(); return q && q.render && q.render.calls === N ? q : null; },
    { timeout: 60000, what: `profile.json with ${N} draw calls (last: ${JSON.stringify(profile())})` });
  assert.equal(p.regime, 'software', 'SwiftShader is a software regime');
  assert.equal(p.build, 'ci-1');
  assert.ok(p.frame.p95Ms > 0);
  assert.deepEqual(p.budgets.breached.filter((k) => k !== 'perf.budget.frame_ms_p95'), []);
  let r = check('--counters-only', '--max-age', '5m');
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, new RegExp(`perf\\.budget\\.draw_calls +${N} / ${1.5 * N} +inside`));
  assert.match(r.out, /regime software: timings not trusted/);
  assert.match(r.out, /perf\.budget\.frame_ms_p95 +.*--counters-only: timing is not judged/);
  // without --counters-only the frame budget is still only reported here
  r = check('--max-age', '5m');
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /perf\.budget\.frame_ms_p95 +[\d.]+ms \/ 25\.0ms +software regime: timings not trusted/);

  // the change: twice the meshes
  fs.writeFileSync(path.join(dir, 'count.js'), `export const N = ${2 * N};\n`);
  // Vite's watcher reloads the page itself on that write, at a time the
  // load of the machine picks: this reload may meet that one and lose
  // (ERR_ABORTED, or "interrupted by another navigation": the other one
  // won) — either brings the new count
  await page.reload().catch((e) => { if (!/ERR_ABORTED|frame was detached|interrupted by another navigation/.test(e.message)) throw e; });
  await page.waitForFunction((n) => window.page && window.page.N === n && window.page.calls() === n, 2 * N, { timeout: 60000 });
  p = await waitFor(() => { const q = profile(); return q && q.render && q.render.calls === 2 * N ? q : null; },
    { timeout: 60000, what: `profile.json with ${2 * N} draw calls (last: ${JSON.stringify(profile())})` });
  assert.deepEqual(p.budgets.errors.filter((k) => k !== 'perf.budget.frame_ms_p95'), ['perf.budget.draw_calls']);
  r = check('--counters-only', '--max-age', '5m');
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.out, new RegExp(`^ {2}perf\\.budget\\.draw_calls +${2 * N} / ${1.5 * N} +← over by 1\\.3×$`, 'm'));
  assert.match(r.out, /^budgets: 3 declared, 2 checked, 1 breached \(--counters-only\)$/m);
  const j = JSON.parse(spawnSync(CLI, ['check', '--project', dir, '--counters-only', '--max-age', '5m', '--json'],
    { encoding: 'utf8' }).stdout);
  assert.equal(j.exit, 1);
  assert.deepEqual(j.breached, ['perf.budget.draw_calls']);
  assert.equal(j.budgets.find((b) => b.key === 'perf.budget.programs').status, 'inside');
  assert.deepEqual(problems, []);
});
