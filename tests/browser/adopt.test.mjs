// Adopting sloptimize as a user does (issue 24): `make dist` packs the page
// runtime with `npm pack`; a fresh copy of tests/adopt/ (a Vite game with a
// lockfile: three, vite, TypeScript, @types/three, react-three-fiber) gets
// `npm ci`, then `npm i -D ./sloptimize-X.tgz` — the tarball, never a path
// into this checkout.  Then:
//  - the tarball holds exactly the page runtime the daemon serves, byte for
//    byte, with a package.json that says what the package is;
//  - tsc --noEmit (strict) passes on the TypeScript game, its
//    vite.config.ts and the type checks whose errors must be errors;
//  - the TypeScript game plays in chromium and its hitch and usermark reach
//    the real daemon through the plugin and wake `sloptimize watch`;
//  - a react-three-fiber game (its own renderer, its own loop) is recorded
//    by nothing but the plugin line, like a plain three.js game;
//  - a WebGPURenderer game is told plainly what is and is not measured.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Daemon, Watch, build, perfPath, tmpdir, top, waitFor } from '../lib.mjs';
import { FLAGS, freePort } from '../browser.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const TEMPLATE = path.join(top, 'tests', 'adopt');
const VERSION = fs.readFileSync(path.join(top, 'Makefile'), 'utf8').match(/^VERSION\s*:=\s*(\S+)/m)[1];
const TGZ_NAME = `sloptimize-${VERSION}.tgz`;
const npmEnv = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

let tgz, game, browser;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300000, ...opts });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}${r.error ? ` (${r.error.message})` : ''}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

// The runtime files the daemon serves from the checkout: every file of
// page-runtime/ but the tests.
function runtimeFiles() {
  return fs.readdirSync(path.join(top, 'page-runtime'), { withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.') && !/\.test\./.test(e.name)).map((e) => e.name).sort();
}

before(async () => {
  // make dist, in a make of our own (not the caller's jobserver or flags)
  const env = { ...process.env };
  delete env.MAKEFLAGS; delete env.MFLAGS; delete env.MAKELEVEL;
  run('make', ['-s', '-C', top, 'dist', `BUILD=${build}`], { env });
  tgz = path.join(build, TGZ_NAME);
  assert.ok(fs.existsSync(tgz), `make dist made no ${tgz}`);

  // a fresh game: the template's own files, its lockfile's packages, then
  // the tarball beside package.json, as the docs say
  game = tmpdir('adopt-game');
  for (const e of fs.readdirSync(TEMPLATE, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    fs.cpSync(path.join(TEMPLATE, e.name), path.join(game, e.name), { recursive: true });
  }
  fs.copyFileSync(tgz, path.join(game, TGZ_NAME));
  // --prefer-offline: `make deps-test` ran npm ci in tests/adopt, so the
  // packages and their metadata are in npm's cache
  run('npm', ['ci', '--prefer-offline', '--loglevel=error'], { cwd: game, env: npmEnv });
  run('npm', ['i', '-D', `./${TGZ_NAME}`, '--prefer-offline', '--loglevel=error'], { cwd: game, env: npmEnv });
});

after(async () => {
  if (browser) await browser.close();
  if (game && !process.env.SLOPTIMIZE_KEEP) fs.rmSync(game, { recursive: true, force: true });
});

test('the tarball: the page runtime the daemon serves, byte for byte, and a package.json that says what it is', () => {
  const listed = run('tar', ['-tzf', tgz]).trim().split('\n').sort();
  assert.ok(listed.every((f) => f.startsWith('package/')), listed.join(' '));
  const inside = listed.map((f) => f.slice('package/'.length));
  assert.deepEqual(inside, runtimeFiles(), 'every runtime file and nothing else (no tests)');
  const unpacked = tmpdir('adopt-tgz');
  try {
    run('tar', ['-xzf', tgz, '-C', unpacked]);
    for (const f of inside)
      assert.ok(fs.readFileSync(path.join(unpacked, 'package', f)).equals(fs.readFileSync(path.join(top, 'page-runtime', f))),
        `${f} in the tarball is page-runtime/${f}`);
  } finally { fs.rmSync(unpacked, { recursive: true, force: true }); }

  const pkg = JSON.parse(fs.readFileSync(path.join(top, 'page-runtime', 'package.json'), 'utf8'));
  assert.equal(pkg.name, 'sloptimize');
  assert.equal(pkg.version, VERSION, 'the version is the Makefile\'s');
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.private, undefined, 'a package npm can install');
  assert.equal(pkg.dependencies, undefined, 'no runtime dependencies');
  for (const peer of ['three', 'vite']) {
    assert.ok(pkg.peerDependencies[peer], `${peer} is a peer`);
    assert.equal(pkg.peerDependenciesMeta[peer].optional, true, `${peer} is an optional peer`);
  }
  // the peers' ranges hold the versions this test installs
  const lock = JSON.parse(fs.readFileSync(path.join(TEMPLATE, 'package-lock.json'), 'utf8'));
  for (const [peer, range] of Object.entries(pkg.peerDependencies)) {
    const have = lock.packages[`node_modules/${peer}`].version;
    const m = range.match(/^[~^](\d+)\.(\d+)\.(\d+)$/);
    assert.ok(m, `a plain ~ or ^ range for ${peer}: ${range}`);
    const [maj, min] = have.split('.').map(Number);
    assert.ok(maj === Number(m[1]) && (range[0] === '^' ? min >= Number(m[2]) : min === Number(m[2])),
      `${peer} ${have} is inside ${range}`);
  }
  for (const sub of ['.', './vite', './recorder', './panel', './fold', './client']) {
    const e = pkg.exports[sub];
    assert.ok(e && e.types, `exports["${sub}"] has types`);
    assert.ok(inside.includes(e.types.slice(2)), `${e.types} is in the tarball`);
    if (sub !== './client') assert.ok(inside.includes(e.default.slice(2)), `${e.default} is in the tarball`);
  }
  // nothing of this machine in what is shipped
  for (const f of inside) {
    const text = fs.readFileSync(path.join(top, 'page-runtime', f), 'utf8');
    for (const p of [top, os.homedir(), '/work/', '/tmp/'])
      assert.ok(!text.includes(p), `${f} mentions ${p}`);
  }
});

test('npm i -D ./sloptimize-X.tgz: a relative file: spec, a real copy, every subpath resolves to it', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(game, 'package.json'), 'utf8'));
  assert.equal(pkg.devDependencies.sloptimize, `file:${TGZ_NAME}`);
  const installed = path.join(game, 'node_modules', 'sloptimize');
  assert.ok(!fs.lstatSync(installed).isSymbolicLink(), 'a copy, not a link into the checkout');
  for (const f of runtimeFiles())
    assert.ok(fs.readFileSync(path.join(installed, f)).equals(fs.readFileSync(path.join(top, 'page-runtime', f))), f);
  // the game's own files name no absolute path: they can be committed
  for (const f of ['package.json', 'package-lock.json', 'vite.config.ts']) {
    const text = fs.readFileSync(path.join(game, f), 'utf8');
    for (const p of [game, top, os.tmpdir() + '/', os.homedir() + '/'])
      assert.ok(!text.includes(p), `${f} names ${p}`);
  }
  // what node resolves, from the game
  const out = run(process.execPath, ['--input-type=module', '-e', `
    const subs = ['sloptimize', 'sloptimize/vite', 'sloptimize/recorder', 'sloptimize/panel', 'sloptimize/fold'];
    const where = subs.map((s) => import.meta.resolve(s));
    const vite = await import('sloptimize/vite');
    const rec = await import('sloptimize/recorder');
    const fold = await import('sloptimize/fold');
    const plugin = vite.default({ daemon: 'http://127.0.0.1:1' });
    console.log(JSON.stringify({ where, plugin: plugin.name, apply: plugin.apply, prefix: vite.PREFIX,
      ctx: rec.canonicalContext({ b: 2, a: 'x,y' }), create: typeof rec.createRecorder, fold: typeof fold.buildIssues,
      sameCtx: fold.canonicalContext === rec.canonicalContext }));
  `], { cwd: game });
  const r = JSON.parse(out);
  for (const u of r.where) assert.ok(u.startsWith(`file://${fs.realpathSync(installed)}/`), u);
  assert.equal(r.plugin, 'sloptimize');
  assert.equal(r.apply, 'serve');
  assert.equal(r.prefix, '/@sloptimize/');
  assert.equal(r.ctx, 'a=x_y,b=2');
  assert.equal(r.create, 'function');
  assert.equal(r.fold, 'function');
  assert.equal(r.sameCtx, true);
});

test('tsc --noEmit, strict: the TypeScript game, its vite.config.ts, and the misuses the types must reject', () => {
  const tsc = path.join(game, 'node_modules', '.bin', 'tsc');
  for (const cfg of ['tsconfig.app.json', 'tsconfig.node.json']) {
    const r = spawnSync(tsc, ['--noEmit', '-p', cfg], { cwd: game, encoding: 'utf8', timeout: 180000 });
    assert.equal(r.status, 0, `tsc -p ${cfg}:\n${r.stdout}${r.stderr}`);
  }
  // the checks can fail: a misuse the types reject, unmarked, is an error
  fs.writeFileSync(path.join(game, 'src', 'misuse.ts'),
    "import { createRecorder } from 'sloptimize/recorder';\ncreateRecorder({ renderer: { render: 1 } });\n");
  try {
    const r = spawnSync(tsc, ['--noEmit', '-p', 'tsconfig.app.json'], { cwd: game, encoding: 'utf8', timeout: 180000 });
    assert.notEqual(r.status, 0, 'tsc passed a recorder whose renderer has no render()');
    assert.match(r.stdout, /misuse\.ts\(2,/);
  } finally { fs.rmSync(path.join(game, 'src', 'misuse.ts')); }
});

// A daemon on a fresh project, `sloptimize watch` on it, the game's own
// Vite (from its node_modules) proxying to it, a page in chromium.
async function session(t, pagePath) {
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps-test installs Debian's chromium`);
  const project = tmpdir('adopt-proj');
  const daemon = await new Daemon(project, { args: ['--global-max', '0', '--per-fp-ms', '0'] }).start();
  const watch = new Watch(daemon);
  const port = await freePort();
  const vite = spawn(process.execPath, [path.join(game, 'node_modules', 'vite', 'bin', 'vite.js'), '--port', String(port), '--strictPort'],
    { cwd: game, env: { ...process.env, SLOPTIMIZE_DAEMON: daemon.base }, stdio: ['ignore', 'pipe', 'pipe'] });
  let viteLog = '';
  vite.stdout.on('data', (d) => { viteLog += d; });
  vite.stderr.on('data', (d) => { viteLog += d; });
  const viteExit = new Promise((r) => vite.once('exit', r));
  const url = `http://127.0.0.1:${port}`;
  t.after(async () => {
    if (ctx) await ctx.close().catch(() => {});
    vite.kill('SIGTERM');
    await viteExit;
    await watch.stop();
    await daemon.stop();
    fs.rmSync(project, { recursive: true, force: true });
  });
  let ctx = null;
  await watch.connected();
  await waitFor(async () => (await fetch(`${url}/`)).ok, { timeout: 30000, what: `vite on ${url}\n${viteLog}` });
  if (!browser) browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  ctx = await browser.newContext({ viewport: { width: 640, height: 400 } });
  const page = await ctx.newPage();
  const problems = [], consoleLines = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  await page.goto(`${url}${pagePath}`);
  const records = () => fs.existsSync(perfPath(project))
    ? fs.readFileSync(perfPath(project), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  return { project, daemon, watch, page, problems, consoleLines, records, viteLog: () => viteLog };
}

function validRecords(project) {
  const v = spawnSync(process.execPath, [path.join(top, 'tests', 'validate.mjs'), '--jsonl',
    path.join(top, 'schemas', 'record.json'), perfPath(project)], { encoding: 'utf8' });
  assert.equal(v.status, 0, `the records against schemas/record.json:\n${v.stderr}`);
}

// Cause a long frame and a usermark; wait until both are lines of
// perf.jsonl and both woke the agent.
async function stutterAndMark(s, { stutter }) {
  await s.page.evaluate(stutter);
  const hitch = await waitFor(() => s.records().find((r) => r.type === 'hitch' && r.frameMs >= 300),
    { timeout: 20000, what: `a hitch of 300 ms or more in perf.jsonl (have ${s.records().map((r) => r.type)})` });
  // the chord asks for an optional note in the page; Enter sends it empty
  await s.page.keyboard.press('Control+F11');
  await s.page.waitForFunction(() => globalThis.sloptimize?.rec?.state().noteOpen || window.game?.recorder?.state().noteOpen,
    null, { timeout: 10000 });
  await s.page.keyboard.press('Enter');
  const mark = await waitFor(() => s.records().find((r) => r.type === 'usermark'),
    { timeout: 20000, what: 'the usermark in perf.jsonl' });
  await waitFor(() => s.watch.lines.some((w) => /^sloptimize hitch /.test(w.line)) &&
    s.watch.lines.some((w) => /^sloptimize usermark /.test(w.line)),
  { timeout: 15000, what: `the hitch's and the usermark's wakes (have ${JSON.stringify(s.watch.lines.map((w) => w.line))})` });
  return { hitch, mark };
}

test('the TypeScript game in chromium: its records go through the plugin to the daemon, and wake the agent', async (t) => {
  const s = await session(t, '/');
  await s.page.waitForFunction(() => window.game && window.game.recorder && window.game.frames > 60, null, { timeout: 60000 });
  const { hitch, mark } = await stutterAndMark(s, { stutter: () => window.game.stutter(400) });
  assert.equal(hitch.build, 'adopt-1', 'the plugin\'s build');
  assert.equal(hitch.ctx, 'view=chase', 'the game\'s own situation, through the bootstrap\'s createRecorder');
  assert.equal(hitch.phase, 'play');
  assert.ok(hitch.footprint && /^[0-9a-f]{8}$/.test(hitch.footprint.id));
  assert.ok(mark.frames > 0);
  await waitFor(() => s.records().some((r) => r.type === 'heartbeat'), { timeout: 10000, what: 'a heartbeat' });
  const hb = s.records().find((r) => r.type === 'heartbeat');
  assert.ok(hb.render.calls >= 1, `a WebGL game's draw calls are counted: ${JSON.stringify(hb.render)}`);
  const st = await s.page.evaluate(() => window.game.recorder.state());
  assert.equal(st.reachable, true);
  assert.equal(st.refused, 0, st.lastRefusal);
  assert.deepEqual(s.problems, []);
  validRecords(s.project);
});

test('a react-three-fiber game, adopted with the plugin line alone: its own renderer and loop are recorded like a plain three.js game', async (t) => {
  const s = await session(t, '/r3f.html');
  await s.page.waitForFunction(() => window.game && window.game.gl && window.game.frames > 60 && globalThis.sloptimize?.rec,
    null, { timeout: 60000 });
  // the recorder the bootstrap made is on r3f's own WebGLRenderer, and
  // sees the frames r3f's loop renders (it calls gl.render itself)
  const seen = await s.page.evaluate(() => ({
    same: globalThis.sloptimize.recorder.renderer === window.game.gl,
    auto: globalThis.sloptimize.recorder.auto,
    wrapped: window.game.gl.render.name,
    f0: window.game.frames, r0: globalThis.sloptimize.rec.state().frames,
  }));
  assert.equal(seen.same, true, 'the automatic recorder records r3f\'s renderer');
  assert.equal(seen.auto, true);
  assert.equal(seen.wrapped, 'recordedRender', 'r3f calls the wrapped render');
  await s.page.waitForFunction((f0) => window.game.frames > f0 + 30, seen.f0, { timeout: 30000 });
  const after = await s.page.evaluate(() => ({ f: window.game.frames, r: globalThis.sloptimize.rec.state().frames }));
  const rendered = after.f - seen.f0, recorded = after.r - seen.r0;
  // frames counted are r3f's frames: each useFrame tick is one render
  assert.ok(recorded >= rendered - 2 && recorded <= rendered + 2, `r3f rendered ${rendered} frames, the recorder counted ${recorded}`);

  const { hitch, mark } = await stutterAndMark(s, { stutter: () => { window.game.stutterMs = 400; } });
  assert.equal(hitch.build, 'adopt-1');
  assert.ok(hitch.classification && hitch.classification.length >= 1 && hitch.delta && hitch.insideRenderMs >= 0,
    `a hitch record like a plain game's: ${JSON.stringify(hitch)}`);
  assert.ok(mark.worst.length >= 1 && mark.worst[0].frameMs >= 300, `the usermark's worst frame is the stutter: ${JSON.stringify(mark.worst)}`);
  // a spawn burst: 300 meshes mounted in one React commit
  await s.page.evaluate(() => window.game.setCrowd(300));
  await waitFor(() => s.records().some((r) => r.type === 'hitch' && r.world && r.world.spawnedCount >= 300) ||
    s.records().some((r) => r.type === 'heartbeat' && r.render.calls >= 300),
  { timeout: 20000, what: () => `the crowd in the records (a spawn burst hitch, or 300 more draw calls in a heartbeat): ${JSON.stringify(s.records().slice(-6).map((r) => [r.type, r.render?.calls, r.world?.spawnedCount ?? r.world?.spawned?.length, r.classification?.[0]?.guess]))}` });
  const st = await s.page.evaluate(() => globalThis.sloptimize.rec.flush());
  assert.equal(st.reachable, true);
  assert.equal(st.refused, 0, st.lastRefusal);
  assert.deepEqual(s.problems, []);
  validRecords(s.project);
});

test('a WebGPURenderer game is told plainly what is and is not measured', async (t) => {
  const s = await session(t, '/webgpu.html?explicit=1');
  await s.page.waitForFunction(() => window.game && (window.game.error || (window.game.ready && window.game.frames > 60)),
    null, { timeout: 60000 });
  const g = await s.page.evaluate(() => ({ error: window.game.error, gpu: window.game.gpu, adapter: window.game.adapter,
    backend: window.game.backend, rec: !!window.game.rec, recError: window.game.recError }));
  assert.equal(g.error, null, `the WebGPU game runs: ${g.error}`);
  t.diagnostic(`this browser: navigator.gpu ${g.gpu ? 'present' : 'absent'}, adapter ${g.adapter ?? 'none'}, three's backend ${g.backend}` +
    `${g.recError ? `; createRecorder refused it: ${g.recError}` : ''}`);
  const state = await s.page.evaluate(async () => {
    const rec = window.game.rec || globalThis.sloptimize?.rec;
    return rec ? rec.flush() : null;
  });
  await waitFor(async () => { await s.daemon.caughtUp(); return true; }, { what: 'the daemon caught up' });
  const recError = await s.page.evaluate(() => window.game.recError);
  const told = [...s.consoleLines, JSON.stringify(state ?? {}), recError ?? ''].join('\n');
  // plainly: the page (its console, the recorder's state the panel shows)
  // names WebGPU and says what its counters are not
  assert.match(told, /WebGPU/i, `nothing tells the page it is a WebGPU renderer:\n${told}`);
  assert.match(told, /pass|draw/i, `nothing says what info.render.calls counts:\n${told}`);
  // never misleading: a record that carries render counters of this
  // renderer says whose they are
  for (const r of s.records()) {
    const calls = r.render?.calls ?? r.delta?.calls;
    if (calls !== undefined) assert.match(JSON.stringify(r), /webgpu/i, `a ${r.type} record counts calls as if they were draws: ${JSON.stringify(r)}`);
  }
  assert.deepEqual(s.problems, []);
});
