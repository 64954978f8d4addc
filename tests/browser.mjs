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


// The browsers the CLI starts (bench, gate, attribute --launch) and
// everything they fork.  The browser and its crash reporter inherit the
// CLI's TMPDIR (`scratch`); the processes its zygote forks (renderers, the
// GPU process) get a fresh environment but stay in the browser's process
// group — the CLI starts it in a session of its own — so every group seen
// with --remote-debugging-pipe is remembered (sample(), every half second
// while a verb runs).  ours(): what of them is alive; profiles(): the
// profile folders left in `scratch`.
export function launchedBrowsers(scratch) {
  const groups = new Set();
  function procs() {
    const out = [];
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
      try {
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ');
        if (!/chrom/i.test(cmd)) continue;
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
        const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
        let env = '';
        try { env = fs.readFileSync(`/proc/${pid}/environ`, 'latin1'); } catch { /* not readable */ }
        out.push({ pid: Number(pid), pgid, cmd, mine: env.split('\0').includes(`TMPDIR=${scratch}`) });
      } catch { /* gone */ }
    }
    return out;
  }
  // remember the browsers' groups in a scan of /proc: while a verb runs,
  // and in ours()
  function sample(ps = procs()) {
    for (const p of ps) if (p.mine && /--remote-debugging-pipe/.test(p.cmd)) groups.add(p.pgid);
    return ps;
  }
  return {
    sample: () => { sample(); },
    seen: () => groups.size,          // browsers seen while a verb ran
    ours: () => sample().filter((p) => p.mine || groups.has(p.pgid)).map(({ pid, cmd }) => ({ pid, cmd })),
    profiles: () => fs.readdirSync(scratch).filter((n) => n.startsWith('sloptimize-browser-')),
  };
}
