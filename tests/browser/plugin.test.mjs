// The Vite plugin (page-runtime/vite.js) adopted in one line by a game
// nobody configured for it (issue 22, item 5; issue 21, item 6): a real
// Vite dev server (the demo's npm vite) on a temporary game project, the
// real daemon, Debian's chromium.
//
//  - the build: git's short HEAD, "+" a hash of the uncommitted changes;
//    an edit is a new build, in the page without a reload; outside git,
//    the dev server's start;
//  - no daemon: one line in Vite's terminal, 503 to the page, no stack
//    trace, no red "Pre-transform error", no "ws proxy error" on close;
//  - several projects on one machine: the daemon serving *this* project,
//    found through its daemon.json (--listen 127.0.0.1:0), followed when
//    it restarts elsewhere;
//  - the entry is a Vite module (resolveId/load), the runtime's modules
//    are found, not listed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Daemon, perfPath, tmpdir, top, waitFor } from '../lib.mjs';
import { FLAGS, VITE, freePort } from '../browser.mjs';
import { findDaemon, stateDirOf } from '../../page-runtime/vite.js';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const PLUGIN = path.join(top, 'page-runtime', 'vite.js');
const cleanup = [];
const heads = new Map();    // a git game's folder → its HEAD, short
let browser;

after(async () => {
  await browser?.close();
  for (const f of cleanup.reverse()) await f();
});

// A game: its page, a module that makes a recorder around a stand-in
// renderer, a module the page never loads, and the one plugin line.
function makeGame({ git = false } = {}) {
  const dir = tmpdir('plugin-game');
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html><head><title>a game</title></head><body><script type="module" src="/main.js"></script></body></html>\n');
  fs.writeFileSync(path.join(dir, 'main.js'), `// the game
const renderer = { render() {}, getContext() { return null },
  info: { render: { calls: 3, triangles: 12, points: 0, lines: 0 }, memory: { geometries: 1, textures: 0 }, programs: [] } };
window.rec = globalThis.sloptimize.createRecorder({ renderer });
window.rec.setPhase('play');
(function loop() { renderer.render({}, {}); requestAnimationFrame(loop); })();
window.gameReady = true;
`);
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'level.js'), 'export const level = 1;\n');
  fs.writeFileSync(path.join(dir, 'vite.config.mjs'), `import sloptimize from ${JSON.stringify(PLUGIN)};
export default { plugins: [sloptimize()], clearScreen: false, server: { host: '127.0.0.1' } };
`);
  if (git) {
    const g = (...a) => {
      const r = spawnSync('git', ['-C', dir, ...a], { encoding: 'utf8' });
      assert.equal(r.status, 0, `git ${a.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    g('init', '-q');
    g('-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'add', '.');
    g('-c', 'user.email=t@example.invalid', '-c', 'user.name=t', 'commit', '-qm', 'the game');
    heads.set(dir, g('rev-parse', '--short', 'HEAD'));
  }
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Vite on `dir`, with XDG_STATE_HOME=state (where daemons record
// themselves); its whole output kept.
async function startVite(dir, state) {
  const port = await freePort();
  const proc = spawn(process.execPath, [VITE, '--port', String(port), '--strictPort', '--host', '127.0.0.1'], {
    cwd: dir, env: { ...process.env, XDG_STATE_HOME: state, SLOPTIMIZE_BUILD_ID: '', FORCE_COLOR: '0', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/`)).ok, { timeout: 30000, what: `vite on ${url}\n${out}` });
  const v = { proc, url, log: () => out, stop: () => new Promise((r) => { if (proc.exitCode !== null) r(); else { proc.once('exit', r); proc.kill('SIGTERM'); } }) };
  cleanup.push(v.stop);
  return v;
}

async function page(url) {
  if (!browser) {
    assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  }
  const p = await browser.newPage();
  p.problems = [];
  p.on('pageerror', (e) => p.problems.push(e.message));
  await p.goto(url);
  await p.waitForFunction(() => window.gameReady === true, null, { timeout: 30000 });
  return p;
}

test('the daemon of a project is found in its state directory, as the daemon and the CLI name it', async () => {
  const state = tmpdir('plugin-state');
  const dir = makeGame();
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  assert.match(findDaemon(dir, { XDG_STATE_HOME: state }).error, /no daemon serves this project/);
  const d = await new Daemon(dir, { state }).start();
  cleanup.push(() => d.stop());
  assert.equal(stateDirOf(dir, { XDG_STATE_HOME: state }), d.stateDir(), 'the same state directory as the daemon');
  const at = findDaemon(dir, { XDG_STATE_HOME: state });
  assert.equal(`http://${at.host}:${at.port}`, d.base);
  // killed, it leaves its daemon.json behind: a pid that is gone is no daemon
  await d.stop('SIGKILL');
  assert.ok(fs.existsSync(path.join(d.stateDir(), 'daemon.json')));
  assert.match(findDaemon(dir, { XDG_STATE_HOME: state }).error, /is gone/);
});

test('the build comes from git: HEAD, then HEAD + the uncommitted changes, in the page without a reload', async () => {
  const state = tmpdir('plugin-state');
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  const dir = makeGame({ git: true });
  const head = heads.get(dir);
  const d = await new Daemon(dir, { state }).start();
  cleanup.push(() => d.stop());
  const v = await startVite(dir, state);
  const p = await page(v.url);
  assert.equal(await p.evaluate(() => globalThis.sloptimize.build), head, 'a clean tree: its HEAD');
  assert.equal(await p.evaluate(() => window.rec.state().build), head);
  await p.evaluate(() => { window.loads = (window.loads || 0) + 1; });
  // an edit of a module the page never loaded: no reload, a new build
  fs.writeFileSync(path.join(dir, 'src', 'level.js'), 'export const level = 2;\n');
  const next = await waitFor(async () => {
    const b = await p.evaluate(() => globalThis.sloptimize.build);
    return b !== head ? b : null;
  }, { timeout: 20000, what: `a new build after the edit\n${v.log()}` });
  assert.match(next, new RegExp(`^${head}\\+[0-9a-f]{8}$`));
  assert.equal(await p.evaluate(() => window.loads), 1, 'the page was not reloaded');
  // the game's own handle follows: its recorder stamps the new build, its phase kept
  await waitFor(async () => (await p.evaluate(() => window.rec.state().build)) === next, { what: 'the recorder rebuilt' });
  assert.equal(await p.evaluate(() => window.rec.state().phase), 'play');
  await p.evaluate(() => window.rec.flush());
  await waitFor(() => fs.existsSync(perfPath(dir)) && fs.readFileSync(perfPath(dir), 'utf8').includes(`"build":"${next}"`),
    { timeout: 20000, what: `a record of build ${next} in perf.jsonl` });
  // the same change is the same build; a reload gets it too
  await p.reload();
  await p.waitForFunction(() => window.gameReady === true);
  assert.equal(await p.evaluate(() => globalThis.sloptimize.build), next);
  // the ledger growing is not an edit
  const before = await p.evaluate(() => globalThis.sloptimize.build);
  fs.appendFileSync(perfPath(dir), '');
  fs.mkdirSync(path.join(dir, '.sloptimize', 'x'), { recursive: true });
  assert.equal(await p.evaluate(() => globalThis.sloptimize.build), before);
  assert.deepEqual(p.problems, []);
  await p.close();
});

test('outside git the build is the dev server\'s start', async () => {
  const state = tmpdir('plugin-state');
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  const dir = makeGame();
  const v = await startVite(dir, state);
  const entry = await (await fetch(`${v.url}/@sloptimize/bootstrap.js`)).text();
  assert.match(entry, /"build":"dev-\d{8}T\d{6}Z"/);
});

test('no daemon: one clear line in Vite\'s terminal, a 503 to the page, no stack trace, no red pre-transform error', async () => {
  const state = tmpdir('plugin-state');
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  const dir = makeGame();
  const v = await startVite(dir, state);
  const r = await fetch(`${v.url}/api/sloptimize/status`);
  assert.equal(r.status, 503);
  assert.equal(r.headers.get('x-sloptimize-proxy'), 'no-daemon');
  const body = await r.json();
  assert.match(body.error, /sloptimized is not running for this project/);
  assert.equal(body.start, `sloptimized --project ${fs.realpathSync(dir)}`);
  // a page: its recorder posts, its panel opens the events socket, then it closes
  const p = await page(v.url);
  await waitFor(() => p.evaluate(() => window.rec.state().lastError !== null || window.rec.state().reachable === false), { timeout: 15000, what: 'the recorder tried' });
  await p.close();
  // one more request through the proxy after the close: all before it is said
  assert.equal((await fetch(`${v.url}/api/sloptimize/issues`)).status, 503);
  const log = v.log();
  const lines = log.split('\n').filter((l) => /sloptimized is not running for this project/.test(l));
  assert.equal(lines.length, 1, `one line, not one per request:\n${log}`);
  assert.match(lines[0], new RegExp(`start it with +sloptimized --project ${fs.realpathSync(dir)}`));
  for (const bad of [/^\s+at /m, /Pre-transform error/, /Failed to load url/, /proxy error/, /ECONNREFUSED/, /Error:/])
    assert.doesNotMatch(log, bad, `Vite's terminal:\n${log}`);
});

test('several projects on one machine: the plugin talks to the daemon serving this one, and follows it', async () => {
  const state = tmpdir('plugin-state');
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  const other = makeGame();
  const dir = makeGame();
  const d1 = await new Daemon(other, { state }).start();
  cleanup.push(() => d1.stop());
  let d2 = await new Daemon(dir, { state }).start();
  cleanup.push(() => d2.stop());
  const v = await startVite(dir, state);
  const st = await (await fetch(`${v.url}/api/sloptimize/status`)).json();
  assert.equal(fs.realpathSync(st.project), fs.realpathSync(dir), 'this project\'s daemon, not the other one');
  // the events socket through the plugin reaches it too
  const p = await page(v.url);
  await p.keyboard.press('Control+F12');
  await waitFor(async () => (await p.getAttribute('[data-conn]', 'data-state')) === 'live', { what: 'the panel\'s socket live through the plugin' });
  await p.close();
  // it stops, and starts again on another port: the plugin follows
  await d2.stop();
  assert.equal((await fetch(`${v.url}/api/sloptimize/status`)).status, 503);
  d2 = await new Daemon(dir, { state }).start();
  cleanup.push(() => d2.stop());
  const again = await waitFor(async () => {
    const res = await fetch(`${v.url}/api/sloptimize/status`);
    return res.status === 200 ? res.json() : null;
  }, { what: 'the restarted daemon found' });
  assert.equal(again.pid, d2.proc.pid);
  const log = v.log();
  assert.equal(log.split('\n').filter((l) => /sloptimized is not running/.test(l)).length, 1, log);
  assert.doesNotMatch(log, /^\s+at |proxy error|Error:/m, log);
});

test('the entry is a Vite module with the defaults as parameters; the runtime modules are found, not listed', async () => {
  const state = tmpdir('plugin-state');
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  const dir = makeGame();
  const v = await startVite(dir, state);
  const html = await (await fetch(`${v.url}/`)).text();
  assert.ok(html.indexOf('/@sloptimize/bootstrap.js') > 0 && html.indexOf('/@sloptimize/bootstrap.js') < html.indexOf('/main.js'), 'injected ahead of the game');
  const entry = await fetch(`${v.url}/@sloptimize/bootstrap.js`);
  assert.equal(entry.status, 200);
  const code = await entry.text();
  assert.match(code, /start\(\{"endpoint":"","build":"dev-[^"]+","auto":true,"panel":true,"relay":true\}/);
  assert.match(code, /import\.meta\.hot/, 'Vite gave it its HMR context');
  // the recorder and the modules it imports run in the game's frames: each
  // reaches the page with V8's compile hint at its top (compiled at load,
  // off the main thread, not lazily inside a hitch's own task)
  const rec = fs.readFileSync(path.join(top, 'page-runtime', 'recorder.js'), 'utf8');
  const hot = new Set(['recorder.js', ...[...rec.matchAll(/from '\.\/([\w-]+\.js)'/g)].map((m) => m[1])]);
  assert.ok(hot.size >= 5, [...hot].join(' '));
  for (const f of fs.readdirSync(path.join(top, 'page-runtime')).filter((f) => f.endsWith('.js') && f !== 'vite.js')) {
    const r = await fetch(`${v.url}/@sloptimize/${f}`);
    assert.equal(r.status, 200, f);
    if (hot.has(f)) assert.equal((await r.text()).split('\n')[0], '//# allFunctionsCalledOnLoad', `${f} as served`);
  }
  assert.equal((await fetch(`${v.url}/@sloptimize/vite.js`)).status, 404, 'not the plugin itself');
  assert.equal((await fetch(`${v.url}/@sloptimize/..%2F..%2FMakefile`)).status, 404, 'no path out of page-runtime');
  assert.doesNotMatch(v.log(), /Pre-transform error|Failed to load url/, v.log());
});

test('a launched verb\'s sync: an edit Vite\'s watcher missed is taken from the disk, said once in Vite\'s terminal; a young edit gets its second first', async () => {
  const state = tmpdir('plugin-state');
  cleanup.push(() => fs.rmSync(state, { recursive: true, force: true }));
  const dir = makeGame();
  // The fault: chokidar missing an edit (seen after a `git checkout --`
  // revert) cannot be caused at will, so the watcher is told to forget
  // the game's file — the one test double here.  Its watchChange hook
  // takes its time, as a slow plugin's may: Vite invalidates a changed
  // module only after the plugins' hooks, so the sync must not leave the
  // invalidation to Vite's handler (a loaded machine once served the old
  // module right after the sync's answer).
  fs.writeFileSync(path.join(dir, 'vite.config.mjs'), `import path from 'node:path';
import sloptimize from ${JSON.stringify(PLUGIN)};
const deaf = { name: 'deaf', configureServer(s) { s.httpServer.once('listening', () => s.watcher.unwatch(path.join(${JSON.stringify(dir)}, 'main.js'))); },
  watchChange() { return new Promise((r) => setTimeout(r, 1500)); } };
export default { plugins: [deaf, sloptimize()], clearScreen: false, server: { host: '127.0.0.1' } };
`);
  const v = await startVite(dir, state);
  const main = () => fetch(`${v.url}/main.js`).then((r) => r.text());
  const sync = () => fetch(`${v.url}/@sloptimize/__sync`).then((r) => r.json());
  assert.match(await main(), /gameReady/);
  assert.deepEqual(await sync(), { taken: [] }, 'nothing to take');
  const file = path.join(dir, 'main.js');
  fs.appendFileSync(file, 'window.edited = 1;\n');
  // old enough that the watcher had its chance, and it did not take it:
  // an edit of a watched file after it is heard (Vite says so), so the
  // watcher has gone past main.js's edit without a word
  fs.utimesSync(file, new Date(), new Date(Date.now() - 5000));
  fs.appendFileSync(path.join(dir, 'index.html'), '\n');
  await waitFor(() => /page reload index\.html/.test(v.log()), { timeout: 20000, what: () => `Vite hearing index.html:\n${v.log()}` });
  assert.doesNotMatch(await main(), /window\.edited = 1/, 'the deaf watcher did not take the edit (else this test proves nothing)');
  assert.deepEqual(await sync(), { taken: ['main.js'] });
  assert.match(await main(), /window\.edited = 1/, 'served as on disk');
  assert.deepEqual(await sync(), { taken: [] }, 'taken once');
  // an edit younger than a second: the watcher may yet say it, so the
  // sync waits out its second before it decides
  fs.appendFileSync(file, 'window.edited = 2;\n');
  const t0 = Date.now();
  assert.deepEqual(await sync(), { taken: ['main.js'] });
  assert.ok(Date.now() - t0 >= 500, `waited ${Date.now() - t0} ms`);
  assert.match(await main(), /window\.edited = 2/);
  const lines = v.log().split('\n').filter((l) => /had missed an edit of main\.js/.test(l));
  assert.equal(lines.length, 2, v.log());
});
