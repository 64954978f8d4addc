// Orbit run — a small three.js game that causes each stutter sloptimize
// records, for real: new shader programs, a large texture upload, a spawn
// burst, a long script frame and a snap of the unit the camera follows.
// Buttons cause one each; ?scripted=1 (or the "Scripted run" button) plays
// them all in order, a couple of seconds apart, so that each lands in its
// own second (the recorder makes at most one hitch record a second).
//
// The sloptimize lines are the ones marked "sloptimize:" below; under
// `vite build` they are dropped (import.meta.env.DEV is false there), and
// so is everything the dev plugin injects.
import * as THREE from 'three';
import { buildCrates } from './crates.js';

const renderer = new THREE.WebGLRenderer({ antialias: false });
renderer.setPixelRatio(1);
renderer.setSize(innerWidth, innerHeight);
document.body.appendChild(renderer.domElement);

const scene = new THREE.Scene();
scene.background = new THREE.Color(0x0b1016);
scene.fog = new THREE.Fog(0x0b1016, 30, 80);
const camera = new THREE.PerspectiveCamera(60, innerWidth / innerHeight, 0.1, 200);
scene.add(new THREE.HemisphereLight(0xbfd4ff, 0x202830, 1.2));
const sun = new THREE.DirectionalLight(0xffffff, 1.5);
sun.position.set(10, 20, 5);
scene.add(sun);

const ground = new THREE.Mesh(new THREE.PlaneGeometry(120, 120), new THREE.MeshLambertMaterial({ color: 0x1d2a33, name: 'mat_ground' }));
ground.name = 'ground';
ground.rotation.x = -Math.PI / 2;
scene.add(ground);

const rockMat = new THREE.MeshLambertMaterial({ color: 0x56606b, name: 'mat_rock' });
for (let i = 0; i < 24; i++) {
  const rock = new THREE.Mesh(new THREE.DodecahedronGeometry(0.6 + (i % 5) * 0.3), rockMat);
  const a = (i / 24) * Math.PI * 2;
  rock.position.set(Math.cos(a) * (14 + (i % 3) * 4), 0.5, Math.sin(a) * (14 + (i % 3) * 4));
  rock.name = `rock_${i}`;
  scene.add(rock);
}

const crateMat = new THREE.MeshLambertMaterial({ color: 0xb0813f, name: 'mat_crate' });
const crateProto = new THREE.Mesh(new THREE.BoxGeometry(0.5, 0.5, 0.5), crateMat);
crateProto.name = 'crate';
crateProto.position.set(0, 0.25, 0);
scene.add(crateProto);   // one crate from the start: its program is warm

const unit = new THREE.Mesh(new THREE.ConeGeometry(0.5, 1.4, 12), new THREE.MeshLambertMaterial({ color: 0x4fa3ff, name: 'mat_hull' }));
unit.name = 'unit';
unit.rotation.x = Math.PI / 2;
scene.add(unit);

const BOOM = new THREE.Vector3(0, 6, 9);   // the camera rides on a fixed boom behind the unit
const ORBIT_R = 10, ORBIT_SPEED = 0.45;    // rad/s
let angle = 0;
let snapOffset = 0;
let spawned = [];

// ?bench=1 leaves the recorder to tests/bench/recorder.mjs, which makes
// and stops its own around the same renderer; a page opened for a bench
// scene (?sloptimize=bench:NAME, what `sloptimize bench --launch` opens)
// records nothing: its frames run on the bench's virtual clock
// (every use of sloptimize sits behind import.meta.env.DEV, so a production
// build carries none of it: tests/browser/game.test.mjs checks the bundle)
const bench = new URLSearchParams(location.search).has('bench') ||
  (import.meta.env.DEV && globalThis.sloptimize?.bench?.urlScene() != null);
// sloptimize: the recorder (present in the dev server only; see docs/recorder.md)
const rec = import.meta.env.DEV && !bench ? globalThis.sloptimize?.createRecorder({
  renderer, context: () => ({ view: 'tps', crowd: spawned.length ? 'busy' : 'calm' }),
}) : undefined;
// sloptimize: the unit the view is arranged around, and the camera on its boom
rec?.track('unit', () => unit.position);
rec?.track('camera', () => camera.position, { follows: 'unit', reach: { name: 'boom', get: () => BOOM.length() } });

// sloptimize: the bench scene — 2,000 crates in view, each its own mesh
// (crates.js; its switches are the changes a bench compares)
let crates = null;
if (import.meta.env.DEV) globalThis.sloptimize?.scene('crates', () => {
  crates?.dispose();   // set up again (a second bench in this page): the same view, not twice the crates
  crates = buildCrates({ scene, camera, renderer, sun, ground });
  return { renderer, settleFrames: 2 };
});

// sloptimize: the game as it is at load, with its timeline of crowds
// (one every 4 s of the game's clock): the workload `repro --launch`
// replays a crowd's hitch in
if (import.meta.env.DEV) globalThis.sloptimize?.scene('waves', () => {
  waveEvery = waveEvery || 4000;
  return { renderer };
});

const log = document.getElementById('log');
const say = (s) => { log.textContent = `${s}\n${log.textContent}`.split('\n').slice(0, 8).join('\n'); };

// --- the stutters ------------------------------------------------------------

let shaderGen = 0;
// New ShaderMaterials with code no program has yet: each compiles and links
// on its first render, inside renderer.render.
function newShaders(n = 12) {
  const g = ++shaderGen;
  for (let i = 0; i < n; i++) {
    const mat = new THREE.ShaderMaterial({
      name: `mat_glow_${i}`,
      defines: { GEN: g, VARIANT: i, STEPS: 24 + i },
      uniforms: { time: { value: 0 } },
      vertexShader: `varying vec3 vP; void main() { vP = position; gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0); }`,
      fragmentShader: `uniform float time; varying vec3 vP;
        float h(vec3 p) { return fract(sin(dot(p, vec3(12.9898, 78.233, 37.719))) * 43758.5453); }
        void main() { vec3 c = vec3(0.0); for (int k = 0; k < STEPS; k++) { c += h(vP * float(k + VARIANT + GEN)) * vec3(0.02, 0.03, 0.05); }
          gl_FragColor = vec4(c, 1.0); }`,
    });
    const m = new THREE.Mesh(new THREE.IcosahedronGeometry(0.4, 1), mat);
    m.name = `beacon_${i}`;
    const a = (i / n) * Math.PI * 2;
    m.position.set(Math.cos(a) * 6, 1.5, Math.sin(a) * 6);
    scene.add(m);
  }
  say(`${n} new shader materials`);
}

// A 4096² texture: 64 MB uploaded on its first render.
const TEX = 4096;
const texData = new Uint8Array(TEX * TEX * 4);
for (let i = 0; i < texData.length; i += 4) { texData[i] = (i >> 10) & 255; texData[i + 1] = (i >> 14) & 255; texData[i + 2] = 160; texData[i + 3] = 255; }
// The billboard starts with a tiny texture, so its program is warm: the
// big one costs an upload and nothing else.
const tiny = new THREE.DataTexture(new Uint8Array([90, 90, 160, 255]), 1, 1);
tiny.needsUpdate = true;
const billboard = new THREE.Mesh(new THREE.PlaneGeometry(8, 4), new THREE.MeshBasicMaterial({ name: 'mat_billboard', map: tiny }));
billboard.name = 'billboard';
billboard.position.set(0, 3, 0);
scene.add(billboard);
function bigTexture() {
  const tex = new THREE.DataTexture(texData, TEX, TEX);
  tex.needsUpdate = true;
  tex.name = 'billboard_tex';
  const old = billboard.material.map;
  billboard.material.map = tex;
  if (old !== tiny) old.dispose();
  say('a 4096² texture');
}

// A crowd: a thousand crates in one frame around the unit (in view), each
// with its own geometry — a thousand uploads and draw calls more — gone
// 1.5 s later.  It arrives on the game's own clock, the way a level's
// timeline brings its waves: asking for one schedules it for the next
// frame, and the loop brings in every wave whose time it crosses.  So a
// replay of the frames before it (`sloptimize repro`, which steps the
// game at the recorded times) brings the same crowd in the same frame.
const waves = [];          // {at, until, crates} on the loop's clock (ms)
function spawnBurst() {
  waves.push({ at: last + 1, until: last + 1500, crates: [] });
  if (waves.length > 16) waves.shift();
  say('a crowd of 1000 crates is coming');
}
function crowdArrives(w, n = 1000) {
  for (let i = 0; i < n; i++) {
    const c = new THREE.Mesh(new THREE.BoxGeometry(0.3, 0.3, 0.3, 2, 2, 2), crateMat);
    c.name = 'crate';
    const a = Math.random() * Math.PI * 2, d = 1.5 + Math.random() * 5;
    c.position.set(unit.position.x + Math.cos(a) * d, 0.15 + Math.random() * 3, unit.position.z + Math.sin(a) * d);
    scene.add(c);
    w.crates.push(c);
  }
  spawned = w.crates;
  say(`${n} crates spawned`);
}
function crowdLeaves(w) {
  for (const c of w.crates) { scene.remove(c); c.geometry.dispose(); }
  w.crates = [];
  if (waves.every((x) => x.crates.length === 0)) spawned = [];
}
// ?waves=S (or the bench scene 'waves'): a level timeline besides — a
// crowd every S seconds of the game's clock, counted from the page's start
let waveEvery = Number(new URLSearchParams(location.search).get('waves')) * 1000 || 0;
// the waves whose times lie in (from, to]; a jump of more than a second
// (a hidden tab, a replay reaching its first recorded time) brings no
// crowd, only sends one off
function waveTimes(from, to) {
  if (waveEvery > 0 && to - from <= 1000 && Math.floor(to / waveEvery) > Math.floor(from / waveEvery)) {
    const at = Math.floor(to / waveEvery) * waveEvery;
    waves.push({ at, until: at + 1500, crates: [] });
    if (waves.length > 16) waves.shift();
  }
  for (const w of waves) {
    if (from < w.at && w.at <= to && to - from <= 1000) crowdArrives(w);
    if (from < w.until && w.until <= to && w.crates.length) crowdLeaves(w);
  }
}

// Game logic that ran long: 250 ms of crowd simulation in one callback —
// or four of the game's frames, if those are longer (a loaded machine
// with a software renderer can run this at 2 fps: 250 ms would then be
// an ordinary frame, no stutter).
function simulateCrowdAI(ms = Math.max(250, 4 * medianFrameMs())) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) for (let i = 0; i < 1000; i++) x += Math.sqrt(i * x + 1);
  return x;
}
function longScript() {
  // its own animation-frame callback, so the browser names it
  requestAnimationFrame(function crowdTick() { simulateCrowdAI(); });
  say('250 ms of crowd AI in one frame');
}

// The unit lands 2.5 units off its path for good (a bad network correction),
// in a calm frame: the loop applies it on the first frame no longer than
// 1.5 × the median and a second after the unit's last jitter record.  On
// a loaded machine a long frame makes the unit jump by itself (its step
// is clamped at 100 ms), and a snap landing in one would be that stall's
// catch-up, not a snap — or share its second of the jitter limit.
let snapDue = 0;           // when asked (performance.now()), 0: none
function snap() {
  snapDue = performance.now();
  say('the unit will snap 2.5 units');
}
function snapNow(frameMs) {
  if (snapDue === 0) return;
  const lastJitter = rec?.state().incidents.filter((i) => i.type === 'jitter' && i.key?.startsWith('jitter|unit|')).pop();
  const calm = frameMs <= 1.5 * medianFrameMs() && (!lastJitter || Date.now() - Date.parse(lastJitter.at) > 1100);
  if (!calm && performance.now() - snapDue < 20000) return;
  snapDue = 0;
  snapOffset += 2.5;
  say('the unit snapped 2.5 units');
}

const STUTTERS = { compile: newShaders, texture: bigTexture, spawn: spawnBurst, script: longScript, snap };
for (const b of document.querySelectorAll('[data-stutter]')) b.addEventListener('click', () => STUTTERS[b.dataset.stutter]());

// --- the scripted run ----------------------------------------------------------

const wait = (ms) => new Promise((r) => setTimeout(r, ms));
// n frames of the game (the loop's own count): the run is paced by frames
// as well as by time, so on a machine slow enough to make a frame last
// half a second the recorder still knows the game's level (30 frames)
// before the first stutter, and each lands on a level of its own
const frames = (n) => { const end = frameCount + n; return new Promise((r) => { const f = () => (frameCount >= end ? r() : setTimeout(f, 50)); f(); }); };
// The recorder makes one hitch record a second, and one jitter record a
// second per track: on a loaded machine an ordinary slow frame (and the
// catch-up jump it makes the unit take) could take the second a stutter
// lands in, so each stutter waits for a second with neither first.
async function quiet() {
  const end = performance.now() + 10000;
  for (;;) {
    const last = rec?.state().incidents.filter((i) => i.type === 'hitch' || i.type === 'jitter').pop();
    if (!last || Date.now() - Date.parse(last.at) > 1200 || performance.now() > end) return;
    await wait(100);
  }
}
async function scripted() {
  window.demo.running = true;
  say('scripted run: each stutter, 2 s apart');
  await wait(3000);                 // a few calm heartbeats first
  await frames(45);                 // and the level known (the recorder warms up over 30 frames)
  for (const name of ['compile', 'texture', 'spawn', 'script', 'snap']) {
    await quiet();
    STUTTERS[name]();
    while (snapDue !== 0) await wait(50);     // the snap waits for a calm frame
    window.demo.done.push(name);
    await wait(2200);
    await frames(40);
  }
  window.demo.running = false;
  window.demo.finished = true;
  say('scripted run finished');
}
document.getElementById('b-scripted').addEventListener('click', () => { if (!window.demo.running) scripted(); });

window.demo = { stutter: (n) => STUTTERS[n](), scripted, done: [], running: false, finished: false, recorder: rec,
  renderer, unit, camera, get crates() { return crates; } };

// --- the loop --------------------------------------------------------------------

let last = performance.now();
let frameCount = 0;
const recent = new Float64Array(31);          // the last frames' times, for the crowd tick's length
function medianFrameMs() { return [...recent].sort((a, b) => a - b)[15]; }
function loop(t) {
  requestAnimationFrame(loop);
  recent[frameCount++ % recent.length] = t - last;
  snapNow(t - last);        // (this frame's length, near enough: the time since the last one began)
  const dt = Math.max(0, Math.min(0.1, (t - last) / 1000));  // the sim clamps its step at 100 ms
  waveTimes(last, t);
  last = t;
  if (crates) {
    // the bench's view: the camera holds still over the crates
    crates.tick(dt);
  } else {
    angle += ORBIT_SPEED * dt;
    unit.position.set(Math.cos(angle) * ORBIT_R + snapOffset, 0.7, Math.sin(angle) * ORBIT_R);
    unit.rotation.z = -angle;
    camera.position.copy(unit.position).add(BOOM);
    camera.lookAt(unit.position);
  }
  renderer.render(scene, camera);
}
requestAnimationFrame(loop);
rec?.setPhase('play');   // sloptimize: the moment axis

addEventListener('resize', () => {
  camera.aspect = innerWidth / innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(innerWidth, innerHeight);
});

if (new URLSearchParams(location.search).has('scripted')) scripted();
