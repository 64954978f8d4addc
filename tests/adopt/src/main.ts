// A small three.js game in TypeScript that adopts sloptimize as its docs
// say: the plugin line in vite.config.ts, and these lines for a recorder
// with a situation, a phase and a tracked point (dropped by `vite build`
// with the rest of import.meta.env.DEV).  window.game lets the test cause
// a stutter and look at the recorder.
import * as THREE from 'three';
import type { Recorder } from 'sloptimize/recorder';

const renderer = new THREE.WebGLRenderer({ antialias: false });
renderer.setSize(640, 400);
document.body.appendChild(renderer.domElement);

const scene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(60, 640 / 400, 0.1, 100);
camera.position.set(0, 3, 8);
camera.lookAt(0, 0, 0);
const player = new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshStandardMaterial({ color: 0x44aa88 }));
player.name = 'player';
scene.add(player, new THREE.HemisphereLight(0xffffff, 0x444444, 2));

let view: 'chase' | 'top' = 'chase';

// sloptimize: the recorder with this game's situation
const rec: Recorder | undefined = import.meta.env.DEV
  ? globalThis.sloptimize?.createRecorder({ renderer, context: () => ({ view }) })
  : undefined;
rec?.setPhase('play');
rec?.track('player', () => player.position);

let stutterMs = 0;
let frames = 0;

// a named function: Long Animation Frames can name it as the hitch's script
function pathfindAll(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* the stutter the test asks for */ }
}

renderer.setAnimationLoop((t: number) => {
  if (stutterMs > 0) {
    pathfindAll(stutterMs);
    stutterMs = 0;
  }
  player.rotation.y = t / 1000;
  frames++;
  renderer.render(scene, camera);
});

interface Game {
  readonly recorder: Recorder | undefined;
  readonly frames: number;
  stutter(ms: number): void;
  setView(v: 'chase' | 'top'): void;
}

declare global {
  interface Window { game: Game }
}

window.game = {
  recorder: rec,
  get frames() { return frames; },
  stutter(ms) { stutterMs = ms; },
  setView(v) { view = v; },
};
