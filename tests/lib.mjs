// Shared by the node tests: start the real daemon on a temp project,
// drive its files from other processes, wait on conditions with deadlines.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stateDirOf } from '../page-runtime/vite.js';

export const top = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const build = process.env.SLOPTIMIZE_BUILD || path.join(top, 'build');
export const DAEMON = path.join(build, 'sloptimized');
export const CLI = path.join(build, 'sloptimize');

// Under `make valgrind` the daemon runs inside valgrind, which is slow:
// every deadline stretches, and an exit status of 99 means it found errors.
export const VALGRIND = !!process.env.SLOPTIMIZE_VALGRIND;
const SLOW = VALGRIND ? 20 : 1;

// Each directory made here is removed when this process ends having
// passed (a test file's process: node --test runs each in its own); a
// process that failed keeps them and says where, for a look afterwards.
// (A suite's run made ~130 and left them all.)
const made = [];
export function tmpdir(name = 'slop') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  if (made.length === 0) process.on('exit', leaveTmpdirs);
  made.push(dir);
  return dir;
}

function leaveTmpdirs(code) {
  if (code !== 0) {
    process.stderr.write(`kept for a look (this process ended with ${code}): ${made.join(' ')}\n`);
    return;
  }
  // (a child the test left behind may still be writing: what it keeps
  // open or adds is not worth a failure of a test that passed)
  for (const dir of made) {
    try { fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 }); } catch { /* see above */ }
  }
}

// Poll fn() until it returns a truthy value; fail with `what` at the
// deadline (a function: called then, for what is known only at the end).
export async function waitFor(fn, { timeout = 10000, interval = 20, what = 'condition' } = {}) {
  const end = Date.now() + timeout * SLOW;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end)
      throw new Error(`timed out after ${timeout} ms waiting for ${typeof what === 'function' ? await what() : what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

// Run the CLI to its end: {code, signal, out, err, doc (stdout parsed
// as JSON, or null), ms}.  Never rejects: a test asserts on what it got.
export function runCli(args, { env = process.env } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(CLI, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code, signal) => {
      let doc = null;
      try { doc = JSON.parse(out); } catch { /* not --json, or said in err */ }
      resolve({ code, signal, out, err, doc, ms: Date.now() - t0 });
    });
  });
}

export function perfPath(project) {
  return path.join(project, '.sloptimize', 'perf.jsonl');
}

// Append with one write(2) from another process, as the game's runtime does.
export function appendFromProcess(file, text) {
  const r = spawnSync('python3', ['-c',
    'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY|os.O_APPEND|os.O_CREAT, 0o644); ' +
    'os.write(fd, sys.stdin.buffer.read()); os.close(fd)', file], { input: text });
  if (r.status !== 0) throw new Error(`append failed: ${r.stderr}`);
}

let seq = 0;
export function hitch(ms, extra = {}) {
  seq++;
  return JSON.stringify({
    type: 'hitch', at: new Date().toISOString(), frame: seq, frameMs: ms, phase: 'play',
    // seven causes: footprint v2 drops digit runs from a site, so the
    // materials are told apart by letters (mat_1 and mat_2 are one cause)
    build: 'v1', minted: [`mat_${'abcdefg'[seq % 7]}@obj`],
    classification: { guess: 'shader-compile', confidence: 'medium', evidence: `programs +${seq % 5}` },
    ...extra,
  });
}

export function meaningful(rec) {
  if (rec.automated) return false;
  if (rec.type === 'hitch') return typeof rec.frameMs === 'number' && rec.frameMs >= 100;
  return rec.type === 'usermark' || rec.type === 'jitter';
}

// Offsets of the meaningful records of a ledger file: their wake ids.
export function meaningfulOffsets(file) {
  const buf = fs.readFileSync(file);
  const out = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] !== 10) continue;
    try {
      if (meaningful(JSON.parse(buf.subarray(start, i).toString('utf8')))) out.push(start);
    } catch { /* skipped lines never wake */ }
    start = i + 1;
  }
  return out;
}

// A daemon run as another user (the test is root) must be able to reach
// its binary: a checkout under a private directory (CI's `mktemp -d` is
// 0700) is out of that user's reach, so it runs a copy kept in a directory
// anyone may enter.
let sharedDaemon = null;
function daemonFor(ids) {
  if (ids.uid === undefined) return DAEMON;
  if (sharedDaemon === null) {
    const dir = tmpdir('daemon-bin');
    fs.chmodSync(dir, 0o755);
    sharedDaemon = path.join(dir, 'sloptimized');
    fs.copyFileSync(DAEMON, sharedDaemon);
    fs.chmodSync(sharedDaemon, 0o755);
  }
  return sharedDaemon;
}

export class Daemon {
  // uid/gid: run the daemon as that user (the test is root); wrap: argv
  // put before the daemon's, e.g. unshare(1) to lower a limit for it alone.
  constructor(project, { state, args = [], env = {}, uid, gid, wrap = [] } = {}) {
    this.project = project;
    this.state = state || tmpdir('state');
    this.args = args;
    this.ids = uid === undefined ? {} : { uid, gid };
    this.wrap = wrap;
    this.env = { ...process.env, XDG_STATE_HOME: this.state, DBUS_SESSION_BUS_ADDRESS: '', ...env };
    this.log = '';
  }

  // This project's directory under the state home: the name the daemon,
  // the CLI and the plugin derive (stateDirOf).  Several daemons may share
  // one state home; the first directory there may be another project's.
  stateDir() {
    const mine = stateDirOf(this.project, { ...this.env, XDG_STATE_HOME: this.state });
    if (fs.existsSync(mine)) return mine;
    // a name the derivation does not reach (it is the contract's test,
    // not this helper's): the only project there, if one
    const dir = path.join(this.state, 'sloptimize');
    const names = fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory()).map((e) => e.name) : [];
    return names.length === 1 ? path.join(dir, names[0]) : null;
  }

  async start({ ready = true } = {}) {
    this.log = '';
    const argv = [...this.wrap, daemonFor(this.ids), '--project', this.project, '--listen', '127.0.0.1:0', ...this.args];
    if (VALGRIND)
      argv.unshift('valgrind', '--quiet', '--error-exitcode=99', '--leak-check=full',
        '--errors-for-leak-kinds=definite', '--show-leak-kinds=definite');
    this.proc = spawn(argv[0], argv.slice(1), { env: this.env, stdio: ['ignore', 'ignore', 'pipe'], ...this.ids });
    this.proc.stderr.on('data', (d) => { this.log += d; });
    this.exited = new Promise((r) => this.proc.on('exit', (code, sig) => r({ code, sig })));
    const pid = this.proc.pid;
    try {
      const info = await waitFor(() => {
        const sd = this.stateDir();
        if (!sd) return null;
        const j = JSON.parse(fs.readFileSync(path.join(sd, 'daemon.json'), 'utf8'));
        return j.pid === pid ? j : null;
      }, { what: `daemon.json of pid ${pid}\n${this.log}` });
      this.base = `http://${info.listen}`;
      if (ready) await waitFor(async () => (await this.status()).ready, { what: 'ready' });
    } catch (e) {
      // a daemon left running keeps the test's process alive for ever
      // (its stderr is a pipe of ours): the start failed, so it goes
      await this.stop('SIGKILL');
      throw e;
    }
    return this;
  }

  async get(p) {
    const r = await fetch(this.base + p);
    if (!r.ok) throw new Error(`${p}: ${r.status}`);
    return r.json();
  }

  status() { return this.get('/api/sloptimize/status'); }

  // Caught up: every byte of perf.jsonl is behind the cursor.
  async caughtUp() {
    const size = fs.existsSync(perfPath(this.project)) ? fs.statSync(perfPath(this.project)).size : 0;
    await waitFor(async () => {
      const s = await this.status();
      return s.ready && s.files.perf.cursor === size && s.files.perf.lag === 0;
    }, { what: `cursor at ${size}` });
  }

  async stop(sig = 'SIGTERM') {
    if (this.proc && this.proc.exitCode === null && !this.proc.signalCode) this.proc.kill(sig);
    const end = await this.exited;
    if (VALGRIND && end.code === 99) throw new Error(`valgrind found errors:\n${this.log}`);
    return end;
  }
}

// `sloptimize watch` as the agent runs it: the wake lines it printed.
export class Watch {
  constructor(daemon, args = []) {
    this.lines = [];
    this.arrivals = [];     // Date.now() as each line was read (benchmarks)
    this.err = '';
    this.proc = spawn(CLI, ['watch', '--project', daemon.project, '--json', ...args],
      { env: daemon.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    this.proc.stdout.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        this.lines.push(JSON.parse(buf.slice(0, i)));
        this.arrivals.push(Date.now());
        buf = buf.slice(i + 1);
      }
    });
    this.proc.stderr.on('data', (d) => { this.err += d; });
    this.exited = new Promise((r) => this.proc.on('exit', (code) => r(code)));
  }

  // The daemon has us as a subscriber: what is appended now reaches us.
  connected() {
    return waitFor(() => /connected to /.test(this.err), { what: `watch connected\n${this.err}` });
  }

  ids() { return this.lines.filter((w) => w.id).map((w) => w.id); }

  stop() {
    this.proc.kill('SIGTERM');
    return this.exited;
  }
}

// The catalogue an offline `sloptimize issues --json` gives, for comparing
// with the daemon's: times that depend on "now" are left out.
export function offlineIssues(project) {
  const r = spawnSync(CLI, ['issues', '--json', '--project', project], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sloptimize issues: ${r.stderr}`);
  return comparable(JSON.parse(r.stdout));
}

export function comparable(doc) {
  return doc.issues.map(({ lastAgoMs, ...row }) => row);
}
