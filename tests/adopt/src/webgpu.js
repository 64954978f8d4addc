// A game on three's WebGPURenderer (three/webgpu), adopted with the plugin
// line.  Its info.render.calls counts passes, not draw calls, so the
// recorder must not pass it off as draws.  ?explicit=1: the game also
// makes its recorder with the bootstrap's createRecorder, as the docs
// show for a game that gives a situation.  window.game says what this
// browser gave the game (a WebGPU adapter, or three's WebGL 2 fallback).
import * as THREE from 'three/webgpu';

const game = window.game = { frames: 0, ready: false, gpu: typeof navigator.gpu !== 'undefined', adapter: null, backend: null, rec: null, recError: null, error: null };
try {
  if (game.gpu) {
    const a = await navigator.gpu.requestAdapter();
    game.adapter = a ? (a.info ? `${a.info.vendor} ${a.info.architecture} ${a.info.description}`.trim() || 'yes' : 'yes') : null;
  }
  const renderer = new THREE.WebGPURenderer({ antialias: false });
  renderer.setSize(640, 400);
  document.body.appendChild(renderer.domElement);
  await renderer.init();
  game.backend = renderer.backend && renderer.backend.isWebGPUBackend ? 'webgpu' : 'webgl2-fallback';
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(60, 640 / 400, 0.1, 100);
  camera.position.set(0, 2, 6);
  camera.lookAt(0, 0, 0);
  const mat = new THREE.MeshBasicNodeMaterial({ color: 0x3366ff });
  for (let i = 0; i < 12; i++) {
    const m = new THREE.Mesh(new THREE.BoxGeometry(0.5, 0.5, 0.5), mat);
    m.position.set((i % 4) - 1.5, Math.floor(i / 4) - 1, 0);
    scene.add(m);
  }
  // a recorder may refuse this renderer: what it says is what the game is told
  if (new URLSearchParams(location.search).has('explicit')) {
    try { game.rec = globalThis.sloptimize?.createRecorder({ renderer }) ?? null; }
    catch (e) { game.recError = String(e && e.message || e); }
  }
  game.renderer = renderer;
  renderer.setAnimationLoop(() => {
    game.frames++;
    renderer.render(scene, camera);
  });
  game.ready = true;
} catch (e) {
  game.error = String(e && e.stack || e);
}
