// identity.test.mjs — entity ids, construction sites and the census walk
// (identity.js, census.js) against three.js from npm (the demo's), in
// node: the id order, the auto hash stable across two builds of one
// scene, the site from synthetic stacks of V8 and Firefox, the site of a
// real Object3D.add, and a census's exact totals and hints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  entityId, namePath, autoId, siteFromStack, siteOfError, stackFrames, isThreeUrl, urlPath, installIdentity, pageIdentity, fnv1a32, SITE_UNKNOWN,
  ownBase, ownUrl,
} from '../../page-runtime/identity.js';
import { takeCensus, materialSignature, INSTANCING_MIN } from '../../page-runtime/census.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// installed before three is loaded, as the dev bootstrap is: three
// announces its first Scene on __THREE_DEVTOOLS__ and add() is wrapped
const identity = installIdentity(globalThis);
const THREE = await import(pathToFileURL(path.join(HERE, '../../demo/node_modules/three/build/three.module.js')).href);

test('identity: fnv1a32 is the standard FNV-1a 32', () => {
  assert.equal(fnv1a32(''), '811c9dc5');
  assert.equal(fnv1a32('a'), 'e40c292c');
  assert.equal(fnv1a32('foobar'), 'bf9cf968');
});

test('identity: the id order — track, then the asset, then the name path, then auto', () => {
  const scene = new THREE.Scene();
  const town = new THREE.Group(); town.name = 'town';
  const rocks = new THREE.Group(); rocks.name = 'rocks';
  const geo = new THREE.BoxGeometry(), mat = new THREE.MeshBasicMaterial();
  scene.add(town); town.add(rocks);
  const list = [];
  for (let i = 0; i < 20; i++) { const m = new THREE.Mesh(geo, mat); m.name = 'rock'; rocks.add(m); list.push(m); }
  assert.deepEqual(entityId(list[12]), { id: 'town/rocks/rock[12]', via: 'name', root: list[12] });
  // a child of a tracked object is that entity
  const enemy = new THREE.Group();
  const body = new THREE.Mesh(geo, mat);
  enemy.add(body); scene.add(enemy);
  identity.track(enemy, 'enemy_17');
  assert.equal(entityId(body).id, 'enemy_17');
  assert.equal(entityId(body).root, enemy);
  assert.equal(enemy.userData.sloptimize.id, 'enemy_17');
  // the asset: a loaded scene's root, when no tracked ancestor is nearer
  const loaded = new THREE.Group(); const part = new THREE.Mesh(geo, mat);
  loaded.add(part); scene.add(loaded);
  const assets = new WeakMap([[loaded, 'models/tree.glb']]);
  assert.equal(entityId(part, { assets }).id, 'gltf:models/tree.glb');
  identity.track(part, 'the-tree-trunk');
  assert.equal(entityId(part, { assets }).id, 'the-tree-trunk', 'track wins over the asset');
  // nothing named anywhere: auto, never the uuid
  const anon = new THREE.Mesh(geo, mat); scene.add(anon);
  const a = entityId(anon);
  assert.equal(a.via, 'auto');
  assert.match(a.id, /^auto:[0-9a-f]{8}$/);
  assert.ok(!a.id.includes(anon.uuid));
  assert.throws(() => identity.track(anon, ''), /id is 1-128/);
  assert.throws(() => identity.track({}, 'x'), /Object3D/);
});

test('identity: auto ids are stable across two builds of the same scene and differ with the geometry', () => {
  const build = (Geo) => {
    const scene = new THREE.Scene();
    const g = new THREE.Group(); scene.add(g);
    const out = [];
    for (let i = 0; i < 3; i++) { const m = new THREE.Mesh(new Geo(), new THREE.MeshStandardMaterial()); g.add(m); out.push(m); }
    return out;
  };
  const one = build(THREE.BoxGeometry), two = build(THREE.BoxGeometry), sphere = build(THREE.SphereGeometry);
  assert.notEqual(one[1].uuid, two[1].uuid);
  assert.deepEqual(one.map((m) => autoId(m)), two.map((m) => autoId(m)));
  assert.equal(new Set(one.map((m) => autoId(m))).size, 3, 'siblings get their own ids ([k])');
  assert.notEqual(autoId(one[0]), autoId(sphere[0]));
  assert.equal(namePath(one[2]).path, 'Group/Mesh[2]');
  assert.equal(namePath(one[2]).named, false);
});

test('identity: the site is the first stack frame outside three.js and the runtime, as a path', () => {
  const v8 = [
    'Error: site',
    '    at Mesh.add (http://localhost:5173/node_modules/.vite/deps/three.js?v=1a2b3c:8123:10)',
    '    at Group.add (http://localhost:5173/node_modules/three/build/three.core.js:900:3)',
    '    at track (http://localhost:5173/@sloptimize/identity.js:99:5)',
    '    at buildTown (http://localhost:5173/src/town.js?t=1700000000:42:11)',
    '    at http://localhost:5173/src/main.js:7:1',
  ].join('\n');
  const own = (u) => /\/@sloptimize\//.test(u);
  assert.equal(siteFromStack(v8, own), 'src/town.js:42');
  const ff = 'add@http://localhost:5173/node_modules/.vite/deps/three.js?v=9:1:1\nbuild@http://localhost:5173/src/spawn.js:88:4\n';
  assert.equal(siteFromStack(ff), 'src/spawn.js:88');
  assert.equal(siteFromStack('Error\n    at <anonymous>:3:4\n    at Object.add (http://h/three.module.js:1:1)'), SITE_UNKNOWN);
  assert.equal(siteFromStack(''), SITE_UNKNOWN);
  assert.deepEqual(stackFrames('    at f (http://h/a.js:1:2)'), [{ url: 'http://h/a.js', line: 1, column: 2 }]);
  assert.ok(isThreeUrl('http://h/node_modules/.vite/deps/three_examples_jsm_loaders_GLTFLoader.js?v=1'));
  assert.ok(!isThreeUrl('http://h/src/threes.js'));
  assert.equal(urlPath('http://localhost:5173/src/town.js?t=1#x'), 'src/town.js');
});

test('identity: a stack\'s site read from V8\'s frames is the one its text names; the page\'s own Error.prepareStackTrace is left as it was', () => {
  const lineOf = (e) => Number(e.stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]);
  const scene = new THREE.Scene();
  scene.add(new THREE.Group());
  // two stacks taken at the same place: one read as frames, one as text
  const got = [];
  const grab = () => {
    // a: as the runtime captures (a plain object); b: an Error's text
    const a = {}, b = new Error('site');
    Error.captureStackTrace(a, grab); Error.captureStackTrace(b, grab);
    got.push([a, b]);
  };
  const line = lineOf(new Error()) + 1;
  scene.traverse(grab);           // called from inside three: its frames come first
  grab();                         // called from here
  assert.equal(got.length, 3);
  assert.match(got[0][1].stack.split('\n')[1], /three\.(module|core)\.js/, 'the first frame is three\'s');
  for (const [a, b] of got) assert.equal(siteOfError(a, ownUrl), siteFromStack(b.stack, ownUrl));
  assert.equal(siteFromStack(got[0][1].stack, ownUrl), `${urlPath(import.meta.url)}:${line}`, 'three\'s frames are passed over');
  assert.equal(siteFromStack(got[2][1].stack, ownUrl), `${urlPath(import.meta.url)}:${line + 1}`);
  // the page's own hook: still there after, and still what its errors use
  const page = (err) => `page:${err.message}`;
  const at = lineOf(new Error()) + 3;
  Error.prepareStackTrace = page;
  try {
    const c = new Error('site');
    assert.equal(siteOfError(c, ownUrl), `${urlPath(import.meta.url)}:${at}`);
    assert.equal(Error.prepareStackTrace, page);
    assert.equal(new Error('x').stack, 'page:x');
  } finally { delete Error.prepareStackTrace; }
  // a hook the page made read-only: never a throw, the hook untouched,
  // and the site from the text it makes
  const fixed = (err, frames) => `Error: site\n${frames.map((f) => `    at ${f.getFileName()}:${f.getLineNumber()}:1`).join('\n')}`;
  Object.defineProperty(Error, 'prepareStackTrace', { value: fixed, writable: false, configurable: true });
  try {
    const at2 = lineOf(new Error()) + 1;
    const d = new Error('site');
    assert.equal(siteOfError(d, ownUrl), `${urlPath(import.meta.url)}:${at2}`);
    assert.equal(Error.prepareStackTrace, fixed);
  } finally { delete Error.prepareStackTrace; }
  // not V8's frames (another engine's Error, already text): the text is parsed
  assert.equal(siteOfError({ stack: 'build@http://localhost:5173/src/spawn.js:88:4\n' }), 'src/spawn.js:88');
});

test('identity: the runtime\'s own scripts are known from a stack, served as files, as Vite\'s virtual modules, or injected with no URL', () => {
  // served from the package (the plugin's fs path) and as a virtual module
  assert.equal(ownBase('Error\n    at http://localhost:5173/@fs/w/page-runtime/identity.js?v=1a2b:49:19\n    at f (http://h/a.js:1:1)'),
    'http://localhost:5173/@fs/w/page-runtime/');
  assert.equal(ownBase('Error\n    at http://localhost:5173/@id/__x00__sloptimize:identity.js:49:19'),
    'http://localhost:5173/@id/__x00__sloptimize:');
  assert.equal(ownBase('@http://localhost:5173/@id/__x00__sloptimize:identity.js:49:19\n'), 'http://localhost:5173/@id/__x00__sloptimize:');
  // injected before the page by the CLI: no URL, so no base (never the site's root)
  assert.equal(ownBase('Error\n    at <anonymous>:49:19'), '');
  assert.equal(ownBase(''), '');
  // here, in node: this checkout's page-runtime/, its modules but not a
  // test beside them
  const RT = path.join(HERE, '..', '..', 'page-runtime');
  assert.ok(ownUrl(pathToFileURL(path.join(RT, 'recorder.js')).href));
  assert.ok(!ownUrl(pathToFileURL(path.join(RT, 'identity.test.mjs')).href));
  assert.ok(!ownUrl(pathToFileURL(path.join(HERE, '../../demo/main.js')).href));
  assert.ok(ownUrl('http://localhost:5173/@sloptimize/bootstrap.js'));
});

test('identity: a real Object3D.add records the line that called it; the first add wins', () => {
  assert.equal(pageIdentity(), identity);
  const scene = new THREE.Scene();
  assert.equal(identity.patched, true, 'the Scene three announced gave add() to wrap');
  const m = new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshBasicMaterial());
  const line = Number(new Error().stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]) + 1;
  scene.add(m);
  const g = new THREE.Group(); g.add(m);         // a move: the first add stays the site
  const before = identity.addMs;
  for (let i = 0; i < 50; i++) scene.add(new THREE.Mesh());
  assert.ok(identity.addMs > before, `the wrapper's time is counted (for the recorder's own): ${before} → ${identity.addMs}`);
  assert.equal(identity.siteOf(m), `${urlPath(import.meta.url)}:${line}`);
  const never = new THREE.Mesh();
  assert.equal(identity.siteOf(never), SITE_UNKNOWN);
});

test('census: exact totals and each hint, naming the line that built it', () => {
  const scene = new THREE.Scene();
  const rocks = new THREE.Group(); rocks.name = 'rocks'; scene.add(rocks);
  const geo = new THREE.IcosahedronGeometry(1, 0), mat = new THREE.MeshStandardMaterial({ color: 0x888888 });
  const rockLine = Number(new Error().stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]) + 1;
  for (let i = 0; i < 500; i++) { const m = new THREE.Mesh(geo, mat); m.castShadow = true; rocks.add(m); }
  const crates = new THREE.Group(); crates.name = 'crates'; scene.add(crates);
  const box = new THREE.BoxGeometry();
  const crateLine = Number(new Error().stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]) + 1;
  for (let i = 0; i < 10; i++) crates.add(new THREE.Mesh(box, new THREE.MeshStandardMaterial({ color: 0xaa7744, roughness: 0.8 })));
  const light = new THREE.PointLight(0xffffff, 1); light.castShadow = true;
  const lightLine = Number(new Error().stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]) + 1;
  scene.add(light);
  const tex = new THREE.Texture({ width: 4096, height: 4096 });
  const ground = new THREE.Mesh(new THREE.PlaneGeometry(10, 10), new THREE.MeshBasicMaterial({ map: tex }));
  const groundLine = Number(new Error().stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]) + 1;
  scene.add(ground);
  const renderer = { shadowMap: { enabled: true }, getPixelRatio: () => 2, getContext: () => null };
  const doc = takeCensus([scene], { renderer, identity, g: { devicePixelRatio: 2 } });
  const file = urlPath(import.meta.url);
  assert.deepEqual({ ...doc.totals }, {
    objects: 514, meshes: 511, hiddenMeshes: 0, triangles: 500 * 20 + 10 * 12 + 2, materials: 12, geometries: 3,
    textures: 1, textureBytesEstimate: Math.round(4096 * 4096 * 4 * 4 / 3), calls: null, shadowCasters: 500, shadowCastingLights: 1,
  });
  const hint = (k) => doc.hints.filter((h) => h.kind === k);
  assert.equal(hint('instancing-candidate').length, 1);
  const inst = hint('instancing-candidate')[0];
  assert.equal(inst.site, `${file}:${rockLine}`);
  assert.deepEqual([inst.estimate.callsBefore, inst.estimate.callsAfter], [500, 1]);
  assert.match(inst.fix, new RegExp(`InstancedMesh at ${file.replace(/[.]/g, '\\.')}:${rockLine}$`));
  assert.deepEqual(inst.entities, ['rocks']);
  const dedup = hint('material-dedup-candidate');
  assert.equal(dedup.length, 1);
  assert.equal(dedup[0].evidence.materials, 10);
  assert.equal(dedup[0].site, `${file}:${crateLine}`);
  const sh = hint('shadow-caster-light');
  assert.equal(sh.length, 1);
  assert.equal(sh[0].evidence.passes, 6);
  assert.equal(sh[0].site, `${file}:${lightLine}`);
  assert.equal(sh[0].estimate.extraCallsAtMost, 3000);
  const big = hint('oversized-texture');
  assert.equal(big.length, 1);
  assert.deepEqual([big[0].evidence.width, big[0].evidence.height], [4096, 4096]);
  assert.equal(big[0].site, `${file}:${groundLine}`);
  const pr = hint('uncapped-pixel-ratio');
  assert.equal(pr.length, 1);
  assert.equal(pr[0].evidence.followsDevice, true);
  // per entity: the rocks first, one shared group, not instanced
  assert.equal(doc.entities[0].id, 'rocks');
  assert.deepEqual(doc.entities[0].groups, [{ geometry: 'IcosahedronGeometry', material: 'MeshStandardMaterial', meshes: 500, instanced: false }]);
  assert.equal(doc.entities[0].castShadow, true);
});

test('census: no hint below its threshold, an InstancedMesh is not a candidate, a different colour is not a duplicate', () => {
  const scene = new THREE.Scene();
  const geo = new THREE.BoxGeometry(), mat = new THREE.MeshBasicMaterial();
  for (let i = 0; i < INSTANCING_MIN - 1; i++) scene.add(new THREE.Mesh(geo, mat));
  const im = new THREE.InstancedMesh(geo, new THREE.MeshBasicMaterial(), 1000);
  scene.add(im);
  scene.add(new THREE.Mesh(geo, new THREE.MeshBasicMaterial({ color: 0xff0000 })));
  const doc = takeCensus([scene], { renderer: { getPixelRatio: () => 1, shadowMap: { enabled: false } }, identity, g: { devicePixelRatio: 1 } });
  assert.deepEqual(doc.hints.map((h) => h.kind), ['material-dedup-candidate']);
  assert.equal(doc.hints[0].evidence.materials, 2, 'the plain white one and the instanced one are alike; the red one is not');
  assert.equal(doc.totals.triangles, (INSTANCING_MIN - 1) * 12 + 1000 * 12 + 12);
  const a = new THREE.MeshStandardMaterial({ color: 0x00ff00 }), b = new THREE.MeshStandardMaterial({ color: 0x00ff00 });
  assert.equal(materialSignature(a), materialSignature(b));
  b.roughness = 0.5;
  assert.notEqual(materialSignature(a), materialSignature(b));
});

test('namePath: a sibling\'s [k] is its rank among same-named siblings, with or without the walk\'s cache, asked in any order', () => {
  // the rule written out plainly: count the siblings of the same segment;
  // two or more, the rank among them in the parent's order
  const plain = (o) => {
    const base = o.name || o.type || 'Object3D';
    const same = o.parent.children.filter((c) => (c.name || c.type || 'Object3D') === base);
    return same.length > 1 ? `${base}[${same.indexOf(o)}]` : base;
  };
  const scene = { isScene: true, type: 'Scene', children: [] };
  const names = ['crate', '', 'rock', 'crate', 'lamp', '', 'crate', 'rock'];
  for (let i = 0; i < 2000; i++) {
    const name = names[i % names.length] || (i % 3 ? '' : 'crate');
    scene.children.push({ name, type: i % 5 ? 'Mesh' : 'Points', parent: scene, children: [] });
  }
  const order = scene.children.map((_, i) => (i * 7919) % scene.children.length);
  const cache = new WeakMap();
  for (const i of order) {
    const o = scene.children[i];
    assert.equal(namePath(o, cache).path, plain(o), `child ${i}`);
    assert.equal(namePath(o).path, plain(o), `child ${i}, no cache`);
  }
});
