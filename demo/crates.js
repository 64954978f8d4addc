// crates.js — the demo's heavy bench scene: 2,000 crates in view, drawn
// the slow way (one mesh and one material each, every crate casting a
// shadow), with switches that each make one real change to how they are
// drawn.  main.js names it `sloptimize.scene('crates', …)`; docs/bench.md
// walks through it.
//
// The switches are what a change looks like to the bench.  A scripted
// agent loop flips one by editing SWITCHES below (a code change, as any
// optimisation is); a test flips one without touching a file, with the
// page's query string, which wins over the constant:
//
//   instanced       ?instanced=1  one InstancedMesh for all the crates:
//                                 2 draw calls (main pass + shadow pass)
//                                 instead of 4,000
//   mergeMaterials  ?merged=1     one material shared by every crate
//                                 instead of 2,000 identical copies: the
//                                 same draw calls, fewer state changes
//   noop            ?noop=1       a refactor that changes nothing drawn:
//                                 the crates are built by another path
//   shadows         ?shadows=0    the sun casts no shadow: no shadow pass
//   burnMs          ?burn=MS      a known extra cost: MS ms of script a
//                                 frame (how tests/bench/verify.mjs
//                                 measures what the bench can detect)
//   cullHalf        ?cull=1       a "fix" that wins by drawing less:
//                                 every second crate is not built, half
//                                 the draw calls — the picture changes,
//                                 and the gate (docs/gate.md) must fail it
import * as THREE from 'three';

export const SWITCHES = {
  instanced: false,
  mergeMaterials: false,
  noop: false,
  shadows: true,
  burnMs: 0,
  cullHalf: false,
};

export const CRATES = 2000;
const COLS = 50;          // 50 × 40 on the ground, all in the camera's view
const SPACING = 1.1;

// The switches in force: the constant, overridden by the page's query.
export function switches(search = globalThis.location ? location.search : '') {
  const q = new URLSearchParams(search);
  const flag = (name, def) => (q.has(name) ? !['0', 'false', 'off', 'no'].includes(q.get(name)) : def);
  const burn = Number(q.get('burn'));
  return {
    instanced: flag('instanced', SWITCHES.instanced),
    mergeMaterials: flag('merged', SWITCHES.mergeMaterials),
    noop: flag('noop', SWITCHES.noop),
    shadows: flag('shadows', SWITCHES.shadows),
    burnMs: q.has('burn') && Number.isFinite(burn) && burn >= 0 ? burn : SWITCHES.burnMs,
    cullHalf: flag('cull', SWITCHES.cullHalf),
  };
}

// Where crate i stands: a grid, each crate turned by turns[i].
function place(i, turns, m) {
  const col = i % COLS, row = Math.floor(i / COLS);
  const pos = new THREE.Vector3((col - (COLS - 1) / 2) * SPACING, 0.25, (row - (CRATES / COLS - 1) / 2) * SPACING);
  const rot = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(0, 1, 0), turns[i]);
  return m.compose(pos, rot, new THREE.Vector3(1, 1, 1));
}

/*
 * Build the crates into `scene` and point `camera` at them.  Returns the
 * field: its group (turned slowly each frame by tick()), what it is made
 * of, and dispose().
 */
export function buildCrates({ scene, camera, renderer, sun, ground, sw = switches() }) {
  const group = new THREE.Group();
  group.name = 'crates';
  const geometry = new THREE.BoxGeometry(0.5, 0.5, 0.5);
  const base = new THREE.MeshLambertMaterial({ color: 0xb0813f, name: 'mat_crate' });
  const materials = [];
  const m = new THREE.Matrix4();
  // Every crate's turn, drawn before anything else is made: a seeded
  // Math.random under the bench's clock, so every load draws the same —
  // and three gives each new Object3D and Material a uuid from
  // Math.random, so drawn between the meshes the turns would depend on
  // how many objects a switch makes, and the instanced crates would stand
  // turned otherwise than the separate ones (the gate saw it: SSIM 0.895)
  const turns = Array.from({ length: CRATES }, () => Math.random() * Math.PI);
  // cullHalf: the crates kept stand exactly where they stood, every
  // second one left out
  const kept = (i) => !sw.cullHalf || i % 2 === 0;
  if (sw.instanced) {
    const mesh = new THREE.InstancedMesh(geometry, base, sw.cullHalf ? CRATES / 2 : CRATES);
    for (let i = 0, k = 0; i < CRATES; i++) {
      place(i, turns, m);
      if (kept(i)) mesh.setMatrixAt(k++, m);
    }
    mesh.instanceMatrix.needsUpdate = true;
    mesh.computeBoundingSphere();
    mesh.castShadow = sw.shadows;
    mesh.name = 'crates_instanced';
    group.add(mesh);
  } else if (sw.noop) {
    // the same crates, made by another path: matrices first, then meshes
    const matrices = Array.from({ length: CRATES }, (_, i) => place(i, turns, new THREE.Matrix4()));
    matrices.forEach((mat, i) => {
      if (!kept(i)) return;
      const material = sw.mergeMaterials ? base : base.clone();
      if (material !== base) materials.push(material);
      const c = new THREE.Mesh(geometry, material);
      mat.decompose(c.position, c.quaternion, c.scale);
      c.castShadow = sw.shadows;
      c.name = `crate_${i}`;
      group.add(c);
    });
  } else {
    for (let i = 0; i < CRATES; i++) {
      place(i, turns, m);
      if (!kept(i)) continue;
      const material = sw.mergeMaterials ? base : base.clone();
      if (material !== base) materials.push(material);
      const c = new THREE.Mesh(geometry, material);
      m.decompose(c.position, c.quaternion, c.scale);
      c.castShadow = sw.shadows;
      c.name = `crate_${i}`;
      group.add(c);
    }
  }
  scene.add(group);

  renderer.shadowMap.enabled = sw.shadows;
  sun.castShadow = sw.shadows;
  if (sw.shadows) {
    // the shadow camera covers the whole field, so no caster is culled
    const s = sun.shadow.camera;
    s.left = -40; s.right = 40; s.top = 40; s.bottom = -40; s.near = 1; s.far = 120;
    s.updateProjectionMatrix();
    sun.shadow.mapSize.set(512, 512);
    renderer.shadowMap.type = THREE.BasicShadowMap;   // one tap: a software renderer pays for every one
  }
  // the same light with or without its shadow; a low sun, so each
  // crate's shadow reaches most of the way to the next one: turning the
  // shadows off must change the picture past the gate's threshold (with
  // the sun at (10, 30, 5) the shadows hid under the crates, and the
  // frame without them still scored SSIM 0.9804 — a pass)
  // (far along that direction, so the nearest crates are still past the
  // shadow camera's near plane: a caster it culls makes the separate
  // crates' shadow pass draw less than the instanced one's)
  sun.position.set(48, 24, 16);
  sun.target.position.set(0, 0, 0);
  scene.add(sun.target);
  ground.receiveShadow = sw.shadows;

  // high above the field's middle, looking down at all of it
  camera.position.set(0, 38, 30);
  camera.lookAt(0, 0, 0);

  let turn = 0;
  return {
    group,
    switches: sw,
    // the field turns slowly (matrices to update each frame, as a game's
    // world moves); the field stays in view at every angle
    tick(dt) {
      turn += dt * 0.1;
      group.rotation.y = Math.sin(turn) * 0.05;
      if (sw.burnMs > 0) {
        // a known cost: real time, whatever clock the game is under
        const real = (import.meta.env.DEV && globalThis.sloptimize?.realNow) || (() => performance.now());
        const end = real() + sw.burnMs;
        while (real() < end) { /* burn */ }
      }
    },
    dispose() {
      scene.remove(group);
      geometry.dispose();
      base.dispose();
      for (const mat of materials) mat.dispose();
    },
  };
}
