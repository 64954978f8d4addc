// N boxes, one draw call each (separate meshes sharing one material: one
// program, N calls), rendered every frame.  The count comes from
// count.js, which the test rewrites: doubling it is the change CI must
// fail (seed M2).  The recorder is made by the plugin on its own, through
// three's __THREE_DEVTOOLS__ announcement: the game has no sloptimize code.
import * as THREE from 'three';
import { N } from './count.js';

const renderer = new THREE.WebGLRenderer({ antialias: false });
renderer.setPixelRatio(1);
renderer.setSize(320, 240);
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(60, 320 / 240, 0.1, 100);
camera.position.set(0, 0, 24);
const geometry = new THREE.BoxGeometry(0.6, 0.6, 0.6);
const material = new THREE.MeshBasicMaterial({ color: 0x66aaff });
for (let i = 0; i < N; i++) {
  const m = new THREE.Mesh(geometry, material);
  // a grid in view: nothing culled, so every mesh is a draw call
  m.position.set((i % 16) - 7.5, Math.floor(i / 16) - 4, 0);
  scene.add(m);
}
let frames = 0;
function frame() {
  for (const m of scene.children) m.rotation.y += 0.01;
  renderer.render(scene, camera);
  frames++;
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
window.page = { N, frames: () => frames, calls: () => renderer.info.render.calls };
