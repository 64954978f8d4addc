// A react-three-fiber game (no JSX: React.createElement, so no React plugin
// is needed), adopted with nothing but the plugin line in vite.config.ts:
// r3f makes its own WebGLRenderer and calls gl.render from its own loop,
// and the bootstrap's automatic recorder has to see those calls.
// window.game lets the test cause a stutter and a spawn burst.
import { createElement as h, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Canvas, useFrame } from '@react-three/fiber';

const game = window.game = { frames: 0, stutterMs: 0, gl: null, setCrowd: null };

// a named function: Long Animation Frames can name it as the hitch's script
function simulateCrowd(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* the stutter the test asks for */ }
}

function Spinner() {
  const ref = useRef(null);
  useFrame((_, dt) => {
    game.frames++;
    if (game.stutterMs > 0) {
      simulateCrowd(game.stutterMs);
      game.stutterMs = 0;
    }
    if (ref.current) ref.current.rotation.y += dt;
  });
  return h('mesh', { ref, name: 'spinner' }, h('boxGeometry'), h('meshStandardMaterial', { color: 'orange' }));
}

function Crowd() {
  const [n, setN] = useState(0);
  game.setCrowd = setN;
  const kids = [];
  for (let i = 0; i < n; i++) {
    // all in the camera's view, so each is a draw call (three culls the rest)
    kids.push(h('mesh', { key: i, name: `walker${i}`, position: [(i % 20) * 0.5 - 5, -1, -2 - Math.floor(i / 20) * 0.5] },
      h('boxGeometry', { args: [0.3, 0.3, 0.3] }), h('meshStandardMaterial', { color: 'hotpink' })));
  }
  return h('group', { name: 'crowd' }, kids);
}

createRoot(document.getElementById('root')).render(
  h(Canvas, { camera: { position: [0, 2, 6] }, onCreated: ({ gl }) => { game.gl = gl; } },
    h('ambientLight', { intensity: 1 }), h('directionalLight', { position: [2, 4, 3] }), h(Spinner), h(Crowd)));
