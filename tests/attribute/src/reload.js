// The scene 'reloader': one cube.  Its setup loads the page again the
// first time (sessionStorage survives a reload of the tab), or every
// time with ?always — a dev server that never stops reloading.
import * as THREE from 'three';

const renderer = new THREE.WebGLRenderer();
renderer.setSize(320, 240);
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(50, 320 / 240, 0.1, 100);
camera.position.set(0, 0, 4);
scene.add(new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshBasicMaterial({ color: 0x44aa88 })));
(function loop() { renderer.render(scene, camera); requestAnimationFrame(loop); })();

const always = new URLSearchParams(location.search).has('always');
globalThis.sloptimize?.scene('reloader', async () => {
  sessionStorage.setItem('loads', String(Number(sessionStorage.getItem('loads') || 0) + 1));
  if (always || sessionStorage.getItem('loads') === '1') {
    location.reload();
    await new Promise(() => {});          // the page goes before this ends
  }
  return { renderer };
});

// The scene 'leaver': the same cube, and a game that goes to another page
// in the middle of a bisection — its render call counted (the replays
// are the game's own render), the page left on the eighth: after the
// settle frame, the kept frame and the first baseline.  Where it goes:
// ?to=URL (a server that answers late: the old page goes on drawing
// meanwhile), else /gone.html.
const leaveTo = new URLSearchParams(location.search).get('to') || '/gone.html';
globalThis.sloptimize?.scene('leaver', () => {
  let n = 0;
  const render = renderer.render;
  renderer.render = function (...a) {
    if (++n === 8) location.href = leaveTo;
    return render.apply(this, a);
  };
  return { renderer, settleFrames: 1 };
});

// The scene 'router': a game whose router keeps its levels in one
// document (the Navigation API's intercept()): on the fifth render it
// goes to /level2, which never leaves the page — the run goes on.
globalThis.sloptimize?.scene('router', () => {
  navigation.addEventListener('navigate', (e) => {
    if (e.canIntercept && !e.hashChange) e.intercept({ handler: async () => {} });
  });
  let n = 0;
  const render = renderer.render;
  renderer.render = function (...a) {
    if (++n === 5) location.href = '/level2';
    return render.apply(this, a);
  };
  return { renderer, settleFrames: 1 };
});
