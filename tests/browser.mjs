// Shared by the browser tests and benchmarks: chromium's flags (WebGL on
// SwiftShader, NOTES.md) and the demo game's Vite dev server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { top, waitFor } from './lib.mjs';

export const DEMO = path.join(top, 'demo');
export const VITE = path.join(DEMO, 'node_modules', 'vite', 'bin', 'vite.js');
export const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic', '--disable-extensions',
  '--enable-unsafe-swiftshader', '--use-angle=swiftshader'];

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

// The demo's dev server, proxying to `daemonBase`.
export async function startVite(daemonBase, { log = false, env = {} } = {}) {
  assert.ok(fs.existsSync(VITE), `no vite in ${DEMO}/node_modules: make deps runs npm ci there`);
  const port = await freePort();
  const proc = spawn(process.execPath, [VITE, '--port', String(port), '--strictPort', '--host', '127.0.0.1'], {
    cwd: DEMO, env: { ...process.env, SLOPTIMIZE_DAEMON: daemonBase, SLOPTIMIZE_VITE_LOG: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => { out += d; if (log) process.stderr.write(d); });
  proc.stderr.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/`)).ok, { timeout: 30000, what: `vite on ${url}\n${out}` });
  return { proc, url, log: () => out, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

