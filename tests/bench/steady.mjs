// The recorder's per-frame work in V8 alone (node, no browser, no GPU):
// what a frame's wrapped render costs beyond the bare render, warm (frame
// after frame, as a loop runs it) and cold (a sweep of SWEEP_MB between
// frames, more than this machine's last-level cache: what a game's own
// work and a software renderer's threads leave of the caches between two
// of its frames).  Run by bench/games.mjs beside the real game's figure:
// the gap between the two says how much of the recorder's time per frame
// is its work and how much is memory it has to fetch again each frame.
//
// The clock the recorder reads is a frame clock moved 16.7 ms a frame
// (the recorder then sees a steady 60 fps game), but each read also reads
// the real clock, so its cost is in the figure.  Figures, never pass/fail.
import http from 'node:http';
import { createRecorder } from '../../page-runtime/recorder.js';
import { bench } from './benchlib.mjs';

const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const FRAMES = Number(process.env.BENCH_STEADY_FRAMES || (QUICK ? 300 : 2000));   // per phase
const ROUNDS = QUICK ? 1 : 3;
const SWEEP_MB = Number(process.env.BENCH_SWEEP_MB || 64);

// the daemon's part: an endpoint that takes what it is sent (a calm game
// sends little: no heartbeat in the phases, heartbeatMs is an hour)
const srv = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end('{"v":1,"records":0,"accepted":0,"refused":0,"refusals":[],"bytes":0}'); });
});
await new Promise((r) => srv.listen(0, '127.0.0.1', r));

let vt = 10000;
const realNow = performance.now.bind(performance);
performance.now = () => { realNow(); return vt; };
let raf = null;
globalThis.requestAnimationFrame = (fn) => { raf = fn; return 1; };
globalThis.cancelAnimationFrame = () => { raf = null; };

// a renderer with what the recorder reads (info, a canvas, a camera it
// renders with); its render writes the camera's world matrix, as three's does
const canvas = { width: 320, height: 240 };
const camera = { isPerspectiveCamera: true, fov: 50, aspect: 4 / 3, near: 0.1, far: 100, zoom: 1,
  position: { x: 0, y: 2, z: 5 }, quaternion: { x: 0, y: 0, z: 0, w: 1 }, matrixWorld: { elements: new Array(16).fill(0) } };
const scene = { isScene: true, type: 'Scene', visible: true, children: [] };
const renderer = {
  domElement: canvas, properties: { has: () => true, get: () => ({}) },
  info: { render: { calls: 40, triangles: 12000, points: 0, lines: 0 }, memory: { geometries: 12, textures: 4 }, programs: [1, 2, 3, 4] },
  render(sc, cam) { const e = cam.matrixWorld.elements; e[12] = cam.position.x; e[13] = cam.position.y; e[14] = cam.position.z; },
};
const bare = renderer.render;
const rec = createRecorder({ renderer, endpoint: `http://127.0.0.1:${srv.address().port}`, confirm: false, heartbeatMs: 3600000, askNote: false });
const wrapped = renderer.render;

const sweep = new Float64Array(SWEEP_MB * 131072);
// one frame: the animation frame, the game's camera moving smoothly, its render
let i = 0;
function frame() {
  vt += 16.7;
  if (raf) raf(vt);
  camera.position.x = Math.sin(++i / 120);
  renderer.render(scene, camera);
}
// frames' time in render (the sweep between them is not timed), µs a frame
function phase(withIt, cold) {
  renderer.render = withIt ? wrapped : bare;
  let ms = 0;
  for (let k = 0; k < FRAMES; k++) {
    if (cold) for (let j = 0; j < sweep.length; j += 8) sweep[j] += 1;
    const a = realNow();
    frame();
    ms += realNow() - a;
  }
  return (ms / FRAMES) * 1000;
}
// the after-frame tasks a calm frame queues (none, but the first census's)
const drain = () => new Promise((r) => setTimeout(r, 0));

for (let k = 0; k < 30000; k++) frame();    // V8 tiers the per-frame code up meanwhile
await drain();
const made0 = rec.state().made.hitch;
const out = { warm: [], warmBare: [], cold: [], coldBare: [] };
for (let r = 0; r < ROUNDS; r++) {
  out.warm.push(phase(true, false)); out.warmBare.push(phase(false, false));
  out.cold.push(phase(true, true)); out.coldBare.push(phase(false, true));
  await drain();
}
renderer.render = wrapped;
const st = rec.state();
rec.stop();
srv.close();
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const f2 = (v) => v.toFixed(2);
const warm = med(out.warm) - med(out.warmBare), cold = med(out.cold) - med(out.coldBare);
console.log(`the recorder's per-frame work in V8 alone (node, a stand-in renderer), ${ROUNDS} × ${FRAMES} frames a phase, phases alternated with the bare render:`);
console.log(`  warm (frame after frame): ${f2(warm)} µs a frame (wrapped ${out.warm.map(f2).join(', ')}; bare ${out.warmBare.map(f2).join(', ')})`);
console.log(`  cold (a ${SWEEP_MB} MB sweep between frames): ${f2(cold)} µs a frame (wrapped ${out.cold.map(f2).join(', ')}; bare ${out.coldBare.map(f2).join(', ')})`);
console.log(`  (hitches made meanwhile: ${st.made.hitch - made0}; the recorder's tiers and caches are node's, the page's are chromium's)`);
bench('recorder per-frame work in V8, warm', med(out.warmBare), warm, 'µs/frame', '-', null, 'the bare render, warm');
bench('recorder per-frame work in V8, caches swept between frames', med(out.coldBare), cold, 'µs/frame', '-', null, `the bare render, a ${SWEEP_MB} MB sweep between frames`);
process.exit(0);
