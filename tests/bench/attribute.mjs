// make bench-attribute: what attribution costs (issue 19 item 7), in
// Debian's chromium on SwiftShader with three from npm and the page
// runtime injected as the launched browser injects it (virtual clock):
//
//   1. the census's walk (sloptimize.bench.census, its own walkMs) of a
//      scene of 1,000 / 10,000 / 50,000 meshes (ten geometries, ten
//      materials, named in groups of 50), beside the anchor of a plain
//      traverse() of the same scene that only counts — what any walk of
//      that many objects costs here;
//   2. the measured bisection of 20 candidates × 5 frames
//      (sloptimize.bench.attribute, wall time of the call) in the 1,000
//      mesh scene, beside the anchor of the frames it draws, drawn as
//      plainly: (20 + 3 baselines) × 5 renders of the same scene.
//
// The walk runs with the game paused (the virtual clock does not step
// while it runs), so it adds nothing to a frame the game shows: the
// "≤ 2 ms added to the frame" bound of a live walk does not arise; the
// figure is how long the page is held.  One `BENCH measure=…` line per
// figure, for `make bench`.  BENCH_QUICK=1: 1,000 and 10,000 only.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { FLAGS, DEMO } from '../browser.mjs';
import { build } from '../lib.mjs';

const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const SIZES = QUICK ? [1000, 10000] : [1000, 10000, 50000];
const num = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : Math.round(x * 1000) / 1000);
const bench = (measure, anchor, ours, unit, target, met, vs) =>
  console.log(`BENCH measure=${measure} anchor=${num(anchor)} ours=${num(ours)} unit=${unit} target=${target} met=${met === null ? '-' : met ? 'yes' : 'no'}${vs ? ` vs=${vs}` : ''}`);

const THREE_DIR = path.join(DEMO, 'node_modules', 'three', 'build');
const PAGE = `<!doctype html><meta charset="utf-8"><title>attribute bench</title><body style="margin:0">
<script type="module">
import * as THREE from '/three/three.module.js';
const n = Number(new URLSearchParams(location.search).get('n'));
const renderer = new THREE.WebGLRenderer();
renderer.setSize(640, 400);
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(60, 640 / 400, 0.1, 2000);
camera.position.set(0, 60, 160);
camera.lookAt(0, 0, 0);
const geos = Array.from({ length: 10 }, (_, i) => new THREE.BoxGeometry(1, 1 + i * 0.1, 1));
const mats = Array.from({ length: 10 }, (_, i) => new THREE.MeshBasicMaterial({ color: 0x336699 + i * 1000 }));
let group;
for (let i = 0; i < n; i++) {
  if (i % 50 === 0) { group = new THREE.Group(); group.name = 'g' + (i / 50); scene.add(group); }
  const m = new THREE.Mesh(geos[i % 10], mats[(i / 7 | 0) % 10]);
  m.position.set((i % 100) - 50, 0, ((i / 100) | 0) % 100 - 50);
  m.name = 'm' + (i % 100);
  group.add(m);
}
globalThis.benchScene = scene;
globalThis.benchRenderer = renderer;
globalThis.benchDraw = () => renderer.render(scene, camera);
globalThis.sloptimize.scene('bench', () => ({ renderer }));
renderer.setAnimationLoop(() => renderer.render(scene, camera));
globalThis.ready = true;
</script>`;

function serve() {
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    if (u.pathname === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(PAGE);
      return;
    }
    const m = /^\/three\/([a-z.]+\.js)$/.exec(u.pathname);
    if (m && fs.existsSync(path.join(THREE_DIR, m[1]))) {
      res.writeHead(200, { 'Content-Type': 'text/javascript' });
      res.end(fs.readFileSync(path.join(THREE_DIR, m[1])));
      return;
    }
    res.writeHead(404);
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const server = await serve();
const base = `http://127.0.0.1:${server.address().port}/`;
const inject = `(function(){${fs.readFileSync(path.join(build, 'gen', 'pagebench.js'), 'utf8')}\ninstallBench(globalThis,{mode:'virtual',seed:1});})();`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: FLAGS });

async function open(n) {
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  await page.addInitScript(inject);
  await page.goto(`${base}?n=${n}&sloptimize=bench:bench`);
  await page.waitForFunction(() => globalThis.ready === true, null, { timeout: 600000 });
  return page;
}

try {
  console.log(`attribute: census walks of ${SIZES.join(', ')} meshes; bisection of 20 × 5 frames`);
  for (const n of SIZES) {
    const page = await open(n);
    const r = await page.evaluate(async () => {
      const s = globalThis.sloptimize;
      const c = await s.bench.census({ scene: 'bench', watchFrames: 0 });
      // the anchor: a traverse of the same scene that only counts
      let t = s.realNow(), k = 0;
      globalThis.benchScene.traverse(() => { k++; });
      const traverseMs = s.realNow() - t;
      return { walkMs: c.walkMs, traverseMs, objects: k, entities: c.entities.length, meshes: c.totals ? c.totals.meshes : null };
    });
    console.log(`  ${n} meshes: walk ${r.walkMs} ms (a counting traverse: ${num(r.traverseMs)} ms over ${r.objects} objects), ` +
      `${r.entities} entities, meshes ${r.meshes}`);
    bench(`attribute: the census's walk, ${n.toLocaleString('en')} meshes`, r.traverseMs, r.walkMs, 'ms', '-', null, 'a traverse that only counts');
    if (n === 1000) {
      const b = await page.evaluate(async () => {
        const s = globalThis.sloptimize;
        const t = s.realNow();
        const a = await s.bench.attribute({ scene: 'bench', top: 20, frames: 5 });
        const ms = s.realNow() - t;
        // the anchor: the renders it replays ((20 + 3 baselines) × 5),
        // drawn plainly, the GPU waited for at the end as a read does
        const gl = globalThis.benchRenderer.getContext();
        const t2 = s.realNow();
        for (let i = 0; i < (a.entities.length + 3) * 5; i++) globalThis.benchDraw();
        gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
        return { ms, plainMs: s.realNow() - t2, entities: a.entities.length, restored: a.restored };
      });
      console.log(`  bisection: ${b.entities} candidates × 5 frames in ${num(b.ms)} ms (the same renders drawn plainly: ` +
        `${num(b.plainMs)} ms), restored ${b.restored}`);
      bench(`attribute: the bisection of ${b.entities} candidates × 5 frames, 1,000 meshes`, b.plainMs, b.ms, 'ms', '-', null,
        'its renders drawn plainly');
    }
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
