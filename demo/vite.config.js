// The demo's dev server: one line wires sloptimize in (page-runtime/vite.js).
// SLOPTIMIZE_DAEMON names the daemon to proxy to (tests/demo.sh and the
// browser tests set it; the default is the daemon's default address).
// SLOPTIMIZE_PROJECT is the game project whose .sloptimize/dev.json the
// plugin writes for `sloptimize bench --launch` (default: this folder).
import { defineConfig } from 'vite';
import sloptimize from '../page-runtime/vite.js';

export default defineConfig({
  plugins: [sloptimize({ daemon: process.env.SLOPTIMIZE_DAEMON || 'http://127.0.0.1:7567', build: process.env.SLOPTIMIZE_BUILD_ID || 'demo-1',
    project: process.env.SLOPTIMIZE_PROJECT || undefined })],
  // SLOPTIMIZE_ISOLATE=1 (make bench-recorder): a cross-origin isolated
  // page, whose performance.now() resolves 5 µs instead of 100 µs
  server: { host: '127.0.0.1', strictPort: false,
    headers: process.env.SLOPTIMIZE_ISOLATE ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {} },
  build: { chunkSizeWarningLimit: 1024 },   // three.js is one big chunk, on purpose
  clearScreen: false,
  logLevel: process.env.SLOPTIMIZE_VITE_LOG || 'info',
});
