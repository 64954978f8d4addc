// The game side end to end (issue 9): the demo game (demo/, three.js from
// npm) in Debian's chromium with WebGL on SwiftShader, served by Vite with
// the sloptimize plugin, its records going through the plugin's proxy to
// the real daemon's ingest route, folded by the real C fold and woken at a
// real `sloptimize watch`.  Nothing here is a stand-in.
//
// Also: `vite build` of the demo carries nothing of the plugin, and the
// runtime modules carry nothing the production page could load.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CLI, Daemon, Watch, offlineIssues, perfPath, tmpdir, top, waitFor, meaningfulOffsets } from '../lib.mjs';
import { FLAGS, startVite, VITE, DEMO } from '../browser.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = path.join(top, 'tests', 'artifacts');


let daemon, watch, vite, browser, project;
let ingest = null;        // null: not probed; true; or the reason it is missing

before(async () => {
  project = tmpdir('game-proj');
  // the wake limits off: this test checks that every meaningful record
  // wakes (docs/notifications.md tests the limits themselves)
  daemon = await new Daemon(project, { args: ['--global-max', '0', '--per-fp-ms', '0'] }).start();
  // Is the ingest route there?  An empty batch is a valid request.
  const r = await fetch(`${daemon.base}/api/sloptimize/records`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]',
  });
  ingest = r.status === 404 || r.status === 405 ? `the daemon answers ${r.status} to POST /api/sloptimize/records (no ingest route in this build)` : true;
});

after(async () => {
  if (browser) await browser.close();
  if (vite) await vite.stop();
  if (watch) await watch.stop();
  if (daemon) await daemon.stop();
});

test('vite build: nothing of the plugin, the recorder or the panel in the production bundle', () => {
  const out = tmpdir('demo-dist');
  const r = spawnSync(process.execPath, [VITE, 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'],
    { cwd: DEMO, encoding: 'utf8', env: { ...process.env, SLOPTIMIZE_DAEMON: 'http://127.0.0.1:1' } });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  const files = [];
  const walk = (d) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) (e.isDirectory() ? walk : (p) => files.push(p))(path.join(d, e.name)); };
  walk(out);
  assert.ok(files.some((f) => f.endsWith('.js')), 'the game itself was built');
  const all = files.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  assert.match(all, /WebGLRenderer|three/i, 'three.js is in the bundle (the build is real)');
  for (const s of ['globalThis.sloptimize', '@sloptimize', 'api/sloptimize', 'createRecorder', 'MotionMonitor', 'createPanel', '__THREE_DEVTOOLS__ ='])
    assert.ok(!all.includes(s), `"${s}" is not in the production build`);
});

test('dev server: the plugin serves the runtime and injects its bootstrap ahead of the game', async () => {
  const v = await startVite(daemon.base);
  try {
    const html = await (await fetch(`${v.url}/`)).text();
    const boot = html.indexOf('/@sloptimize/bootstrap.js');
    assert.ok(boot > 0, 'the bootstrap is injected');
    assert.ok(boot < html.indexOf('/main.js'), 'ahead of the game module');
    const rec = await fetch(`${v.url}/@sloptimize/recorder.js`);
    assert.equal(rec.status, 200);
    assert.match(rec.headers.get('content-type'), /javascript/);
    assert.equal((await fetch(`${v.url}/@sloptimize/..%2F..%2FMakefile`)).status, 404, 'only the runtime modules, no path out of page-runtime');
    assert.equal((await fetch(`${v.url}/@sloptimize/vite.js`)).status, 404, 'not the plugin itself');
    // the proxy reaches the daemon (its status route answers through it)
    const st = await fetch(`${v.url}/api/sloptimize/status`);
    assert.equal(st.status, 200);
    assert.ok((await st.json()).version);
  } finally { await v.stop(); }
});

test('the demo\'s scripted run, in chromium through the real daemon: every class, a snap, a usermark, footprints, wakes', async (t) => {
  if (ingest !== true) { t.skip(ingest); return; }
  assert.ok(fs.existsSync(CHROMIUM), `no browser at ${CHROMIUM}: make deps installs Debian's chromium`);
  watch = new Watch(daemon);
  await watch.connected();
  vite = await startVite(daemon.base);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${vite.url}/?scripted=1`);
  // (the run is paced by the game's frames as well as by time: a deadline,
  // long because a loaded machine can hold the demo at a few fps)
  await page.waitForFunction(() => window.demo && window.demo.finished, null, { timeout: 240000 });
  // the game's own key handling sees nothing typed into the note
  await page.evaluate(() => {
    window.gameKeys = [];
    document.addEventListener('keydown', (e) => window.gameKeys.push(e.key));
    window.addEventListener('keypress', (e) => window.gameKeys.push(`press:${e.key}`));
  });
  await page.keyboard.press('Control+F11');
  // Ctrl+F11 asks for an optional note in the page: typed, then Enter sends
  const input = await page.waitForSelector('.sloptimize-usermark-note input', { timeout: 5000 });
  assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.closest('.sloptimize-usermark-note') !== null), true, 'the note box has the keyboard');
  // (the Control of the chord itself went down before it was a chord)
  await page.evaluate(() => { window.gameKeys = []; });
  await page.keyboard.type('stutter when turning');
  assert.equal(await input.inputValue(), 'stutter when turning');
  await page.keyboard.press('Enter');
  assert.deepEqual(await page.evaluate(() => window.gameKeys), [], 'no key of the note reached the game');
  const toast = await page.waitForSelector('.sloptimize-usermark-toast', { timeout: 5000 });
  assert.match(await toast.textContent(), /marked the last 5 s — \d+ frames/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'demo-usermark.png') });
  // stop the recorder (it sends what it holds) and wait until it has
  // stopped: a hitch found in the last frames is made a task later, and
  // what stop() sends goes after it returns
  await page.evaluate(() => window.demo.recorder.stop());
  const st = await waitFor(() => page.evaluate(() => {
    const s = window.demo.recorder.state();
    return s.stopped && s.queued === 0 && s.held === 0 ? s : null;
  }), { timeout: 15000, what: 'the recorder delivered everything' });
  assert.equal(st.reachable, true, JSON.stringify(st));
  // the one-line adoption's records leave from a worker (page-runtime/sender.js)
  assert.equal(st.sender.offThread, true, `sent from the page's thread: ${st.sender.why}`);
  assert.equal(st.refused, 0, `the daemon refused records: ${st.lastRefusal}`);
  assert.deepEqual(problems, []);

  await daemon.caughtUp();
  const recs = fs.readFileSync(perfPath(project), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(recs.length, st.sent, 'every record sent is a line of perf.jsonl');
  // every record is a valid record (DESIGN §5, schemas/record.json)
  const v = spawnSync(process.execPath, [path.join(top, 'tests', 'validate.mjs'), '--jsonl', path.join(top, 'schemas', 'record.json'), perfPath(project)], { encoding: 'utf8' });
  assert.equal(v.status, 0, `the recorder's records against schemas/record.json:\n${v.stderr}`);
  const of = (type) => recs.filter((r) => r.type === type);
  assert.ok(of('heartbeat').length >= 5, `heartbeats: ${of('heartbeat').length}`);
  for (const r of recs) {
    assert.equal(r.build, 'demo-1');
    assert.equal(typeof r.ctx, 'string');
  }
  const hb = of('heartbeat').at(-1);
  assert.ok(hb.frame.medianMs > 0 && hb.frame.p95Ms >= hb.frame.medianMs && hb.window.frames > 0 && hb.memory.programs > 0);
  assert.equal(hb.regime, 'software', 'SwiftShader is a software regime');

  const hitch = (guess) => of('hitch').find((r) => r.classification[0].guess === guess);
  const show = () => JSON.stringify(of('hitch').map((r) => [r.frame, r.classification[0].guess, r.frameMs, r.delta.programs, r.minted, r.footprint.key]));
  // The button's compile (issue 23): the browser splits its cost across
  // frames as the machine's load has it — the compile's own frame, the
  // frame after it held back while the GPU process links — so what is
  // asserted is what does not depend on where the cost landed: every
  // hitch that carries the glow materials is a shader-compile hitch, they
  // all have one footprint, named by the stable sites (never a runtime
  // id), and the evidence is the programs of its frame or of the frame
  // before.
  // (a beacon out of view compiles when it comes into view, maybe beside
  // another stutter: such a hitch carries other sites too, and is that
  // frame's mix — but never a script's)
  const carries = of('hitch').filter((r) => (r.minted || []).some((m) => /^mat_glow_\d+@beacon_\d+$/.test(m)));
  for (const r of carries) {
    assert.notEqual(r.classification[0].guess, 'long-script', `the glow materials are a compile's, never a script's: ${show()}`);
  }
  const glow = carries.filter((r) => r.sites.every((x) => /^ShaderMaterial:mat_glow_\d+@beacon_\d+$/.test(x)));
  assert.ok(glow.length >= 1, `a hitch of the glow burst alone: ${show()}`);
  for (const r of glow) {
    assert.equal(r.classification[0].guess, 'shader-compile', show());
    assert.match(r.classification[0].evidence, /programs \+\d+ in the (hitch frame|frame before)|no script that explains it/, show());
  }
  // one footprint for the burst; a beacon that comes into view later
  // compiles on its own, maybe while the game's context is another
  // (crowd=busy under the long script): the same key but for its ctx,
  // which is part of a footprint by design (docs/footprint-v2.md)
  const noCtx = (k) => k.replace(/\|ctx:.*$/, '');
  assert.equal(new Set(glow.map((r) => noCtx(r.footprint.key))).size, 1, `one key for the glow compiles: ${show()}`);
  assert.equal(new Set(glow.filter((r) => r.ctx === glow[0].ctx).map((r) => r.footprint.id)).size, 1, `one footprint for the burst: ${show()}`);
  assert.match(glow[0].footprint.key, /^hitch\|play\|shader-compile\|ShaderMaterial:mat_glow_#@beacon_#\|ctx:/);
  const compile = glow[0];
  // the 4096² upload on a material whose program was warm: an upload, with
  // its bytes, whichever frame its cost landed in
  const upload = of('hitch').find((r) => r.classification[0].guess === 'texture-upload');
  assert.ok(upload, `a texture-upload hitch: ${show()}`);
  // (a beacon coming into view may compile in the same frame: its pair is there too)
  assert.ok(upload.minted.includes('mat_billboard@billboard'), JSON.stringify(upload.minted));
  assert.ok(upload.sites.includes('MeshBasicMaterial:mat_billboard@billboard'), JSON.stringify(upload.sites));
  const bytes = upload.uploadBytes ?? upload.before?.uploadBytes;
  assert.ok(bytes >= 4096 * 4096 * 4, `the upload's bytes, estimated: ${bytes}`);
  const spawn = hitch('spawn-burst');
  assert.ok(spawn, `a spawn-burst hitch: ${show()}`);
  assert.ok((spawn.world.spawnedCount || spawn.world.spawned.length) >= 50);
  assert.ok(spawn.world.spawned.every((n) => n === 'crate'));
  const script = of('hitch').find((r) => r.classification[0].guess === 'long-script' && r.script && r.script.name === 'crowdTick');
  assert.ok(script, `a long-script hitch naming the function: ${JSON.stringify(of('hitch').map((r) => [r.classification[0].guess, r.script]))}`);
  assert.match(script.classification[0].evidence, /crowdTick \(http:\/\/127\.0\.0\.1:\d+\/main\.js/);
  assert.equal(script.script.invoker, 'FrameRequestCallback');
  assert.ok(script.frameMs >= 200);
  assert.match(script.footprint.key, /^hitch\|play\|long-script\|crowdTick@\/main\.js\|ctx:/, 'keyed by the script the browser named');
  // the recorder is never the cause handed on
  for (const r of of('hitch')) {
    assert.ok(!/sloptimize|recorder\.js/.test(JSON.stringify(r.script || {})), `a record names the recorder: ${JSON.stringify(r.script)}`);
    assert.ok(!/@sloptimize|recorder\.js/.test(r.footprint.key), r.footprint.key);
  }

  const snap = of('jitter').find((r) => r.track === 'unit' && r.classification[0].guess === 'snap' && r.units > 2);
  assert.ok(snap, `the unit's snap: ${JSON.stringify(of('jitter').map((r) => [r.track, r.classification[0].guess, r.units]))}`);
  assert.equal(snap.kind, 'snap');
  const cam = of('jitter').find((r) => r.track === 'camera' && r.frame === snap.frame);
  assert.ok(cam && cam.classification[0].guess === 'follows-track', 'the camera says it only followed');

  const mark = of('usermark').at(-1);
  assert.ok(mark, 'the Ctrl+F11 usermark');
  assert.equal(mark.note, 'stutter when turning', 'with the note typed in the page');
  assert.equal(mark.worst.length, 5);
  for (let i = 1; i < 5; i++) assert.ok(mark.worst[i - 1].frameMs >= mark.worst[i].frameMs, 'ranked');
  assert.ok(mark.frames > 0 && mark.p95Ms >= mark.medianMs);

  // footprints: the writer's are the C fold's
  const rows = new Map(offlineIssues(project).map((r) => [r.id, r]));
  const incidents = recs.filter((r) => ['hitch', 'usermark', 'jitter'].includes(r.type));
  for (const r of incidents) {
    assert.equal(r.footprint.v, 2);
    const row = rows.get(r.footprint.id);
    assert.ok(row, `the catalogue has ${r.footprint.id}`);
    assert.equal(row.key, r.footprint.key);
  }
  assert.equal(rows.size, new Set(incidents.map((r) => r.footprint.id)).size, 'one row per footprint, no more');

  // wakes: one for each meaningful record, exactly once, in order
  const want = meaningfulOffsets(perfPath(project));
  assert.ok(want.length >= 6, `meaningful records: ${want.length}`);
  await waitFor(() => watch.ids().length >= want.length,
    { timeout: 15000, what: `${want.length} wakes (have ${watch.ids().length})` });
  assert.deepEqual(watch.ids().map((id) => Number(id.split(':')[1])), want);
  const shaderWake = watch.lines.find((w) => w.record && w.record.type === 'hitch' && /shader-compile/.test(w.line));
  if (glow.some((r) => r.frameMs >= 100)) assert.ok(shaderWake, 'the shader compile woke the agent');
  assert.ok(compile);
  assert.ok(watch.lines.some((w) => /^sloptimize usermark /.test(w.line)), 'the usermark woke the agent');
  assert.ok(watch.lines.some((w) => /^sloptimize jitter .*snap/.test(w.line)), 'the snap woke the agent');
  // the spawn burst names what was spawned and the line that added it:
  // in `issues --fp`, and in its wake line when it woke the agent
  const lines = fs.readFileSync(path.join(DEMO, 'main.js'), 'utf8').split('\n');
  const added = lines.map((l, i) => (l.includes('scene.add(c);') ? i + 1 : 0)).filter(Boolean);
  assert.equal(added.length, 1);
  // (each crate its own entity: siblings of one name are crate[1], crate[2]…)
  const crate = new RegExp(`^crate\\[\\d+\\] \\(main\\.js:${added[0]}\\)$`);
  const issue = JSON.parse(spawnSync(CLI, ['issues', '--fp', spawn.footprint.id, '--json', '--project', project], { encoding: 'utf8' }).stdout);
  assert.ok(issue.occurrences.some((o) => (o.entities || []).length === 8 && o.entities.every((e) => crate.test(e))),
    JSON.stringify(issue.occurrences.map((o) => o.entities)));
  const spawnWake = watch.lines.find((w) => w.record && w.record.fp === spawn.footprint.id);
  if (spawnWake) {
    // (the recorder lists 32 of what was spawned: the count is what is
    // said — the record's spawnedCount, what was first rendered that frame)
    assert.ok(spawnWake.line.includes(` entity="${spawnWake.record.entity}" fp=`), spawnWake.line);
    const m = new RegExp(`^crate\\[\\d+\\] \\(main\\.js:${added[0]}\\) \\+(\\d+) more spawned$`).exec(spawnWake.record.entity);
    assert.ok(m, spawnWake.record.entity);
    const counts = of('hitch').filter((r) => r.footprint.id === spawn.footprint.id).map((r) => r.world.spawnedCount);
    assert.ok(counts.includes(Number(m[1]) + 1), `${spawnWake.record.entity}: spawnedCount ${JSON.stringify(counts)}`);
  }
});
