// A town built to be attributed (tests/browser/attribute.test.mjs): each cost a
// census must find, made on a line of its own that the test looks up by
// its text — 500 rocks sharing one geometry and material (not
// instanced), ten crates with ten identical materials, a shadow-casting
// point light, a 4096² texture, the pixel ratio of the device uncapped,
// a hero named with sloptimize.track(), and a spark made every second
// (60 frames) and removed the next frame without dispose() — a leak.
import * as THREE from 'three';

const renderer = new THREE.WebGLRenderer({ antialias: false });
renderer.setPixelRatio(devicePixelRatio);
renderer.setSize(640, 360);
renderer.shadowMap.enabled = true;
document.body.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(60, 640 / 360, 0.1, 200);
camera.position.set(0, 18, 30);
camera.lookAt(0, 0, 0);
scene.add(new THREE.AmbientLight(0xffffff, 0.4));

const rocks = new THREE.Group();
rocks.name = 'rocks';
scene.add(rocks);
const rockGeometry = new THREE.IcosahedronGeometry(0.3, 1);
const rockMaterial = new THREE.MeshStandardMaterial({ color: 0x777777, flatShading: true });
for (let i = 0; i < 500; i++) {
  const rock = new THREE.Mesh(rockGeometry, rockMaterial);
  rock.position.set((i % 25) - 12, 0.3, Math.floor(i / 25) - 10);
  rock.castShadow = true;
  rocks.add(rock);
}

const crates = new THREE.Group();
crates.name = 'crates';
scene.add(crates);
const crateGeometry = new THREE.BoxGeometry(1, 1, 1);
for (let i = 0; i < 10; i++) {
  const crate = new THREE.Mesh(crateGeometry, new THREE.MeshStandardMaterial({ color: 0x8b5a2b, roughness: 0.9 }));
  crate.position.set(i * 1.5 - 7, 0.5, 12);
  crates.add(crate);
}

const lamp = new THREE.PointLight(0xffeecc, 40, 60);
lamp.position.set(0, 8, 0);
lamp.castShadow = true;
scene.add(lamp);

const pixels = new Uint8Array(4096 * 4096 * 4).fill(128);
const groundTexture = new THREE.DataTexture(pixels, 4096, 4096);
groundTexture.needsUpdate = true;
const ground = new THREE.Mesh(new THREE.PlaneGeometry(40, 40), new THREE.MeshStandardMaterial({ map: groundTexture }));
ground.rotation.x = -Math.PI / 2;
ground.receiveShadow = true;
scene.add(ground);

const hero = new THREE.Group();
hero.add(new THREE.Mesh(new THREE.BoxGeometry(1, 2, 1), new THREE.MeshStandardMaterial({ color: 0x3366ff })));
hero.position.set(0, 1, 6);
globalThis.sloptimize?.track(hero, 'hero_1');
scene.add(hero);

let frames = 0, spark = null;
function frame() {
  hero.rotation.y += 0.01;
  if (spark) { scene.remove(spark); spark = null; }       // never disposed
  if (++frames % 60 === 30) {
    spark = new THREE.Mesh(new THREE.SphereGeometry(0.2, 8, 6), rockMaterial);
    spark.position.set(0, 3, 6);
    scene.add(spark);
  }
  renderer.render(scene, camera);
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

globalThis.sloptimize?.scene('town', () => ({ renderer, settleFrames: 1 }));
