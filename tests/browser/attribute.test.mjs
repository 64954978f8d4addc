// `sloptimize attribute --static --launch` with real parts: Debian's
// chromium (SwiftShader, at a device pixel ratio of 2) launched by the
// CLI, three from npm, the page of tests/attribute/ on Vite with the
// plugin's one line.  What is held:
//
//   - the census's totals are exact (counted by hand from src/town.js);
//   - each hint is there — instancing-candidate (500 → 1 calls),
//     material-dedup-candidate (10), shadow-caster-light (6 passes),
//     oversized-texture (4096²), uncapped-pixel-ratio — and names the
//     line of src/town.js that built its cause;
//   - .sloptimize/census.json is what --json printed, valid against
//     schemas/census.json;
//   - a page loaded again (a second launch) gives the same entities: the
//     track()ed hero keeps its id and site, the auto ids do not move;
//   - a page loaded again under the run (Vite's full reload) is run again
//     from the start, once, and said; one that keeps reloading is exit 4,
//     said too (the launcher is bench's, gate's and attribute's);
//   - a game that goes to another page in the middle of a bisection →
//     exit 4 saying where it went (not taken for a reload, not run
//     again), attribution.json as it was;
//   - no --launch and no daemon → exit 4 saying how the open tab is reached; a
//     scene the page does not name → 4, nothing written; no page → 4.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { VITE, DEMO, freePort } from '../browser.mjs';
import { CLI, tmpdir, top, waitFor } from '../lib.mjs';

const FLAGS = '--use-angle=swiftshader --enable-unsafe-swiftshader --disable-background-networking '
  + '--disable-component-update --disable-sync --no-first-run';
const PAGE = path.join(top, 'tests', 'attribute');
let scratch, project, env, vite, base;

function cli(args) {
  return new Promise((resolve) => {
    const p = spawn(CLI, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

function validate(schema, file) {
  const r = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'), path.join(top, 'schemas', schema), file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${schema}: ${r.stdout}${r.stderr}`);
}

// the line of src/town.js holding `text` (once), as a site
function siteOf(text) {
  const lines = fs.readFileSync(path.join(PAGE, 'src', 'town.js'), 'utf8').split('\n');
  const at = lines.map((l, i) => (l.includes(text) ? i + 1 : 0)).filter(Boolean);
  assert.equal(at.length, 1, `one line of town.js holds ${text}`);
  return `src/town.js:${at[0]}`;
}

before(async () => {
  scratch = tmpdir('attribute');
  project = path.join(scratch, 'game');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.copyFileSync(path.join(PAGE, 'index.html'), path.join(project, 'index.html'));
  for (const f of ['reload.html', 'src/town.js', 'src/reload.js']) fs.copyFileSync(path.join(PAGE, f), path.join(project, f));
  const three = path.join(DEMO, 'node_modules', 'three', 'build', 'three.module.js');
  assert.ok(fs.existsSync(three), `no three in ${DEMO}/node_modules: make deps runs npm ci there`);
  fs.writeFileSync(path.join(project, 'vite.config.mjs'), `// the one line of docs/recorder.md
import sloptimize from ${JSON.stringify(path.join(top, 'page-runtime', 'vite.js'))};
export default {
  plugins: [sloptimize({ daemon: 'http://127.0.0.1:9', build: 'attr-1', project: ${JSON.stringify(project)} })],
  resolve: { alias: { three: ${JSON.stringify(three)} } },
  cacheDir: ${JSON.stringify(path.join(scratch, '.vite-cache'))},
  server: { host: '127.0.0.1', fs: { allow: [${JSON.stringify(project)}, ${JSON.stringify(top)}] } },
  clearScreen: false, logLevel: 'warn',
};
`);
  env = { ...process.env, TMPDIR: scratch, SLOPTIMIZE_BROWSER_ARGS: FLAGS };
  delete env.SLOPTIMIZE_BROWSER;
  const port = await freePort();
  const proc = spawn(process.execPath, [VITE, '--config', path.join(project, 'vite.config.mjs'), '--port', String(port),
    '--strictPort', '--host', '127.0.0.1'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  base = url;
  vite = { proc, stop: () => new Promise((r) => { if (proc.exitCode !== null) r(); else { proc.once('exit', r); proc.kill('SIGTERM'); } }) };
  await waitFor(async () => (await fetch(`${url}/`)).ok, { timeout: 60000, what: `vite on ${url}\n${out}` });
  await waitFor(() => fs.existsSync(path.join(project, '.sloptimize', 'dev.json')), { timeout: 30000, what: 'dev.json' });
});

after(async () => {
  if (vite) await vite.stop();
  const left = scratch ? fs.readdirSync(scratch).filter((n) => n.startsWith('sloptimize-browser-')) : [];
  assert.deepEqual(left, [], 'every launched browser took its profile with it');
});

test('attribute_static_census_has_exact_totals_and_every_hint_naming_its_line', { timeout: 900000 }, async () => {
  const r = await cli(['attribute', '--static', '--scene', 'town', '--launch', '--dpr', '2', '--json', '--project', project]);
  assert.equal(r.code, 0, r.err);
  const file = path.join(project, '.sloptimize', 'census.json');
  validate('census.json', file);
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.deepEqual(JSON.parse(r.out), doc, '--json prints what was written');
  assert.equal(doc.scene, 'town');
  assert.equal(doc.source, 'launch');
  assert.equal(doc.sites.patched, true);
  assert.deepEqual(doc.totals, {
    objects: 517, meshes: 512, hiddenMeshes: 0, triangles: 500 * 80 + 10 * 12 + 2 + 12, materials: 13, geometries: 4,
    textures: 1, textureBytesEstimate: 4096 * 4096 * 4, calls: null, shadowCasters: 500, shadowCastingLights: 1,
  });
  assert.equal(doc.renderer.pixelRatio, 2);
  assert.equal(doc.renderer.devicePixelRatio, 2);
  assert.deepEqual(doc.renderer.drawingBuffer, [1280, 720]);

  const one = (kind) => {
    const hs = doc.hints.filter((h) => h.kind === kind);
    assert.equal(hs.length, 1, `one ${kind}: ${JSON.stringify(doc.hints.map((h) => h.kind))}`);
    return hs[0];
  };
  const inst = one('instancing-candidate');
  assert.equal(inst.site, siteOf('rocks.add(rock)'));
  assert.deepEqual([inst.evidence.meshes, inst.estimate.callsBefore, inst.estimate.callsAfter], [500, 500, 1]);
  assert.ok(inst.fix.endsWith(`at ${inst.site}`), inst.fix);
  assert.deepEqual(inst.entities, ['rocks']);
  const dedup = one('material-dedup-candidate');
  assert.equal(dedup.evidence.materials, 10);
  assert.equal(dedup.site, siteOf('crates.add(crate)'));
  const light = one('shadow-caster-light');
  assert.equal(light.site, siteOf('scene.add(lamp)'));
  assert.deepEqual([light.evidence.type, light.evidence.passes, light.estimate.extraCallsAtMost], ['PointLight', 6, 3000]);
  const tex = one('oversized-texture');
  assert.equal(tex.site, siteOf('scene.add(ground)'));
  assert.deepEqual([tex.evidence.width, tex.evidence.height, tex.evidence.bytesEstimate], [4096, 4096, 4096 * 4096 * 4]);
  const pr = one('uncapped-pixel-ratio');
  assert.equal(pr.site, siteOf('renderer.setPixelRatio(devicePixelRatio)'));
  assert.equal(pr.evidence.followsDevice, true);
  // the spark made every second and removed without dispose(): two in the
  // 120 frames watched after the walk, kept by three for nothing
  const leak = one('undisposed-suspect');
  assert.equal(leak.site, siteOf('scene.add(spark)'));
  assert.deepEqual([leak.evidence.geometries, leak.evidence.watchedFrames], [2, 120]);
  assert.equal(leak.evidence.rendererGeometries.after - leak.evidence.rendererGeometries.before, 2);
  for (const h of doc.hints) assert.match(h.fix, /at src\/town\.js:\d+/, `${h.kind} names its site`);

  // the entities: the rocks cost most, one shared group, not instanced;
  // the hero is the id track() gave it, at the line that added it
  assert.equal(doc.entities[0].id, 'rocks');
  assert.deepEqual(doc.entities[0].groups, [{ geometry: 'IcosahedronGeometry', material: 'MeshStandardMaterial', meshes: 500, instanced: false }]);
  const hero = doc.entities.find((e) => e.id === 'hero_1');
  assert.ok(hero, JSON.stringify(doc.entities.map((e) => e.id)));
  assert.deepEqual([hero.via, hero.site, hero.meshes, hero.triangles], ['track', siteOf('scene.add(hero)'), 1, 12]);
  const ground = doc.entities.find((e) => e.via === 'auto');
  assert.ok(ground && /^auto:[0-9a-f]{8}$/.test(ground.id), 'the unnamed ground gets an auto id');

  // loaded again: the same entities, ids and sites
  const again = await cli(['attribute', '--static', '--scene', 'town', '--launch', '--dpr', '2', '--json', '--project', project]);
  assert.equal(again.code, 0, again.err);
  const doc2 = JSON.parse(again.out);
  assert.deepEqual(doc2.entities, doc.entities, 'a reload keeps every id and site');
  assert.deepEqual(doc2.hints, doc.hints);
});

test('attribute_bisection_ranks_the_rocks_first_by_measured_draw_calls_and_leaves_the_world_as_it_was', { timeout: 900000 }, async () => {
  const r = await cli(['attribute', '--scene', 'town', '--launch', '--top', '6', '--frames', '3', '--json', '--project', project]);
  assert.equal(r.code, 0, r.err);
  const doc = JSON.parse(r.out);
  const file = path.join(project, '.sloptimize', 'attribution.json');
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), doc, 'what is printed is what is written');
  validate('attribution.json', file);
  const of = (id) => doc.entities.find((e) => e.id === id);
  // the rocks first: 500 draws in the main pass and more in the point
  // light's shadow passes (each rock casts); the others are exact
  assert.equal(doc.entities[0].id, 'rocks', JSON.stringify(doc.entities.map((e) => [e.id, e.dCalls])));
  assert.ok(doc.entities[0].dCalls >= 1000 && doc.entities[0].dCalls <= 3500, `rocks: ${doc.entities[0].dCalls}`);
  assert.equal(doc.entities[0].site, siteOf('scene.add(rocks)'));
  assert.deepEqual([of('crates').dCalls, of('crates').dTriangles], [10, 120], 'ten boxes, no shadow');
  assert.deepEqual([of('hero_1').dCalls, of('hero_1').dTriangles], [1, 12]);
  const ground = doc.entities.find((e) => e.id.startsWith('auto:'));
  assert.deepEqual([ground.dCalls, ground.dTriangles], [1, 2]);
  // a ranking with its evidence, and the world as it was
  assert.equal(doc.sumsToBaseline, false);
  assert.equal(doc.regime, 'software');
  assert.equal(doc.baseline.stable, true);
  assert.ok(doc.baseline.calls >= doc.entities[0].dCalls + 12);
  assert.equal(doc.restored, true);
  assert.equal(doc.pixelsIdentical, true, 'the frame after the bisection is the frame before it, byte for byte');
  for (const e of doc.entities) assert.equal(typeof e.noisy, 'boolean');
  // GPU time: SwiftShader answers the timer queries, so it is measured —
  // and said to time the emulation, not a GPU
  assert.equal(doc.gpuTimer.available, true, JSON.stringify(doc.gpuTimer));
  assert.ok(doc.gpuTimer.frames >= 3 * 3, `every baseline replay read: ${JSON.stringify(doc.gpuTimer)}`);
  assert.equal(typeof doc.baseline.gpuMs, 'number', JSON.stringify(doc.baseline));
  assert.ok(doc.baseline.gpuSpreadMs >= 0);
  for (const e of doc.entities) {
    assert.equal(typeof e.dGpuMs, 'number', JSON.stringify(e));
    assert.equal(e.gpuNoisy, e.dGpuMs <= 0 || e.dGpuMs <= doc.baseline.gpuSpreadMs, JSON.stringify(e));
  }
  assert.ok(doc.notes.some((n) => /software renderer times its emulation, not a GPU/.test(n)), doc.notes.join('\n'));
  assert.ok(!doc.notes.some((n) => /GPU time is not measured/.test(n)), doc.notes.join('\n'));

  // ids given: those only; an id the scene does not have is said, not guessed
  const some = await cli(['attribute', '--scene', 'town', '--launch', '--ids', 'hero_1,nope', '--frames', '2', '--project', project]);
  assert.equal(some.code, 0, some.err);
  assert.match(some.out, /hero_1 +\+1 +\+12 +[+-]\d+\.\d\d[~ ] *[+-]\d+\.\d{3}[~ ] /, 'the GPU column beside the render time');
  assert.match(some.out, /GPU time per replay \d+\.\d{3} ms \(spread \d+\.\d{3} ms\); a software renderer times its emulation/);
  assert.match(some.out, /note: no entity has the id nope: not measured/);
  assert.match(some.out, /world restored: .*pixels identical/);
  const none = await cli(['attribute', '--scene', 'town', '--launch', '--ids', 'nope', '--project', project]);
  assert.equal(none.code, 4, none.err);
  assert.match(none.err, /no entity of scene 'town' has the id nope \(it has: rocks, /);

  // the same through MCP (the official SDK client): attribute_cost, and
  // get_census fresh and then from the file it wrote
  const client = new Client({ name: 'attribute-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: CLI, args: ['mcp', '--project', project], env, stderr: 'pipe' }));
  try {
    const res = await client.callTool({ name: 'attribute_cost', arguments: { scene: 'town', launch: true, ids: ['crates'], frames: 2 } },
      undefined, { timeout: 600000 });
    assert.equal(res.isError, false, JSON.stringify(res.content));
    const a = res.structuredContent;
    assert.deepEqual([a.exit, a.meaning], [0, 'written'], JSON.stringify(a).slice(0, 1000));
    assert.deepEqual(a.attribution.entities.map((e) => [e.id, e.dCalls, e.dTriangles]), [['crates', 10, 120]]);
    const off = (await client.callTool({ name: 'attribute_cost', arguments: { scene: 'town' } })).structuredContent;
    assert.deepEqual([off.exit, off.meaning], [4, 'environment']);
    assert.match(off.error, /no daemon serves this project, and the game's open tab is reached through it/);
    const bad = await client.callTool({ name: 'attribute_cost', arguments: { scene: 'town', launch: true, ids: ['rocks'], top: 3 } });
    assert.equal(bad.isError, true, 'ids with top is a tool error');
    const fresh = (await client.callTool({ name: 'get_census', arguments: { scene: 'town', launch: true } },
      undefined, { timeout: 600000 })).structuredContent;
    assert.equal(fresh.exit, 0, JSON.stringify(fresh).slice(0, 500));
    assert.equal(fresh.census.entities[0].id, 'rocks');
    const kept = (await client.callTool({ name: 'get_census', arguments: {} })).structuredContent;
    assert.equal(kept.exit, 0, JSON.stringify(kept).slice(0, 500));
    assert.deepEqual(kept.census, fresh.census, 'without a scene: the census last written');
  } finally {
    await client.close();
  }
});

test('attribute_refuses_without_launch_a_missing_scene_and_a_missing_page_with_exit_4', { timeout: 600000 }, async () => {
  const file = path.join(project, '.sloptimize', 'census.json');
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  let r = await cli(['attribute', '--static', '--scene', 'town', '--project', project]);
  assert.equal(r.code, 4);
  assert.match(r.err, /no daemon serves this project, and the game's open tab is reached through it: start it .*or pass --launch/);
  r = await cli(['attribute', '--scene', 'town', '--project', project]);
  assert.equal(r.code, 4);
  assert.match(r.err, /no attribution of scene 'town': no daemon serves this project, and the game's open tab is reached through it/);
  r = await cli(['attribute', '--static', '--scene', 'town', '--ids', 'rocks', '--launch', '--project', project]);
  assert.equal(r.code, 2);
  assert.match(r.err, /--ids, --top and --frames are the bisection's/);
  r = await cli(['attribute', '--scene', 'town', '--ids', 'a,,b', '--launch', '--project', project]);
  assert.equal(r.code, 2);
  r = await cli(['attribute', '--static', '--scene', 'nope', '--launch', '--project', project]);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /no scene 'nope' on this page \(it has: town\)/);
  const dead = await freePort();
  r = await cli(['attribute', '--static', '--scene', 'town', '--launch', '--url', `http://127.0.0.1:${dead}/`, '--project', project]);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /no census of scene 'town'/);
  assert.equal(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null, before, 'a failed census writes nothing');
});

test('the launcher: a page loaded again under the run is run again from the start, once, and said; one that keeps reloading is exit 4', { timeout: 600000 }, async () => {
  const size = ['--frames', '2', '--warmup', '1', '--runs', '2'];
  const once = await cli(['bench', '--scene', 'reloader', '--launch', '--url', `${base}/reload.html`, ...size, '--json', '--project', project]);
  assert.equal(once.code, 0, once.err);
  assert.match(once.err, /the page was loaded again under the run .*running again from the start/);
  const doc = JSON.parse(once.out);
  assert.equal(doc.exit, 0);
  assert.equal(doc.run.bench.scene, 'reloader');
  assert.equal(doc.run.bench.perRun.length, 2, 'a whole bench, on the page as loaded again');
  const always = await cli(['bench', '--scene', 'reloader', '--launch', '--url', `${base}/reload.html?always`, ...size, '--json', '--project', project]);
  assert.equal(always.code, 4, always.err);
  assert.match(always.err, /loaded again under the run 2 times: is the dev server reloading it on its own\?/);
});

test('a game whose router keeps the page (intercept) navigates under a bench: the run goes on and measures', { timeout: 300000 }, async () => {
  const r = await cli(['bench', '--scene', 'router', '--launch', '--url', `${base}/reload.html`, '--frames', '6', '--warmup', '1', '--runs', '2', '--json', '--project', project]);
  assert.equal(r.code, 0, r.err);
  const doc = JSON.parse(r.out);
  assert.equal(doc.run.bench.scene, 'router');
  assert.equal(doc.run.bench.perRun.length, 2, 'a whole bench past the navigation');
  // before, the frames were held for the 30 s a leave may take, then the
  // run failed as a page that left
  assert.doesNotMatch(r.err, /another address|began to go/);
});

test('a page that goes to another page in the middle of a bisection: a clear error, exit 4, nothing written half', { timeout: 600000 }, async () => {
  const file = path.join(project, '.sloptimize', 'attribution.json');
  const before = fs.existsSync(file) ? fs.readFileSync(file) : null;
  // the page it goes to answers 10 s late: the old page goes on drawing
  // meanwhile, long enough to finish the bisection (the navigation is
  // what the runtime sees, not the new document's arrival)
  const held = [];
  const slow = http.createServer((req, res) => {
    const t = setTimeout(() => { res.setHeader('content-type', 'text/html'); res.end('<!doctype html><title>gone</title>'); }, 10000);
    held.push(t);
    req.on('close', () => clearTimeout(t));
  });
  await new Promise((ok) => slow.listen(0, '127.0.0.1', ok));
  const to = `http://127.0.0.1:${slow.address().port}/gone.html`;
  let r;
  try {
    r = await cli(['attribute', '--scene', 'leaver', '--launch', '--url', `${base}/reload.html?to=${encodeURIComponent(to)}`, '--frames', '3', '--project', project]);
  } finally {
    for (const t of held) clearTimeout(t);
    slow.closeAllConnections();
    slow.close();
  }
  assert.equal(r.code, 4, `${r.code}: ${r.err}`);
  assert.match(r.err, /^sloptimize attribute: no attribution of scene 'leaver': the page went to another address under the run \(http:\/\/127\.0\.0\.1:\d+\/gone\.html\): the game left the page it was run on, so nothing was measured/m);
  assert.doesNotMatch(r.err, /loaded again under the run/, 'another address is not a reload, and is not run again');
  const after = fs.existsSync(file) ? fs.readFileSync(file) : null;
  assert.deepEqual(after, before, 'attribution.json is as it was: nothing written, nothing half');
  assert.equal(fs.existsSync(`${file}.tmp`), false);
});
