// The game's dev server, with sloptimize's plugin line (docs/recorder.md).
// SLOPTIMIZE_DAEMON: the test's daemon (a user leaves the default).
import { defineConfig } from 'vite';
import sloptimize from 'sloptimize/vite';

export default defineConfig({
  plugins: [sloptimize({ daemon: process.env.SLOPTIMIZE_DAEMON ?? 'http://127.0.0.1:7567', build: 'adopt-1' })],
  server: { host: '127.0.0.1' },
  clearScreen: false,
  logLevel: 'warn',
});
