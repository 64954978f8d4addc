// vite.js — sloptimize in a game's Vite dev server, in one line:
//
//   // vite.config.js
//   import sloptimize from 'PATH/TO/page-runtime/vite.js';
//   export default { plugins: [sloptimize()] };
//
// Dev only (`apply: 'serve'`): `vite build` sees nothing of it.  It
//  - finds the daemon serving *this* project: `sloptimized --project DIR`
//    records its address in its state directory (daemon.json, DESIGN §4),
//    as `sloptimize watch` reads it, so `--listen 127.0.0.1:0` works and
//    another project's daemon on the default port is not this one's;
//  - proxies /api/sloptimize (HTTP and the events WebSocket) to it, so the
//    page talks to its own origin; with no daemon it says so in one line
//    of Vite's terminal and answers 503 {error}, never a stack trace;
//  - serves the page runtime (every module of this folder but this one)
//    as Vite modules under /@sloptimize/, and its entry,
//    /@sloptimize/bootstrap.js, injected into the dev page ahead of the
//    game's own modules: dev.js started with the plugin's defaults;
//  - installs the bench runtime (bench.js: `sloptimize.scene`,
//    `sloptimize.bench`, the virtual clock at the first bench) unless the
//    launched browser installed it first; a page opened for a bench
//    (?sloptimize=bench:NAME) gets no recorder and no panel by itself;
//  - writes .sloptimize/dev.json ({url, pid, at}) when the dev server
//    listens, for `sloptimize bench --launch` (docs/bench.md);
//  - reads sloptimize.budgets.json's frame_ms_p95 as the recorder's frame
//    budget, so its hitches and `sloptimize check` agree;
//  - stamps every record with the build: by default derived from git (the
//    short HEAD and a hash of the uncommitted changes, so an edit is a new
//    build and a fix has an after window) or, outside git, the dev
//    server's start; a new one reaches the page over Vite's HMR channel.
//
// docs/recorder.md ("With Vite") says what the game gets and what it
// does not.  Node built-ins only.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PREFIX = '/@sloptimize/';
const ENTRY = `${PREFIX}bootstrap.js`;
const API = '/api/sloptimize';
const VIRTUAL = '\0sloptimize:';      // a runtime module's id in Vite's graph
const SYNC = '__sync';                  // PREFIX + this: take what is on disk (sync())
const SYNC_SETTLE_MS = 1000;            // an edit younger than this may still be heard
const GIT_TIMEOUT_MS = 10000;
const DAEMON_JSON_TTL_MS = 1000;      // daemon.json is read again after this
const BUILD_SETTLE_MS = 300;          // edits within this are one new build

// The modules a page may load: this folder's ES modules, found, not
// listed, but for this file (Node's) and tests.
function runtimeModules() {
  try {
    return new Set(fs.readdirSync(HERE).filter((f) => f.endsWith('.js') && f !== 'vite.js' && !f.includes('.test.')));
  } catch {
    return new Set();
  }
}

// --- the daemon serving this project --------------------------------------

// FNV-1a 32 of the UTF-8 bytes, 8 hex: project/statedir.c's project id.
function fnv1a32(s) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s, 'utf8')) h = Math.imul(h ^ b, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

/*
 * The daemon's state directory for a project (project/statedir.c,
 * statedir_resolve): $XDG_STATE_HOME/sloptimize/<name>-<fnv1a32 of the
 * absolute path>, else ~/.local/state/….
 */
export function stateDirOf(project, env = process.env) {
  let abs = path.resolve(project);
  try {
    abs = fs.realpathSync(abs);
  } catch { /* as given */ }
  while (abs.length > 1 && abs.endsWith('/')) abs = abs.slice(0, -1);
  const name = abs === '/' ? 'root' : path.basename(abs);
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && xdg.startsWith('/') ? xdg : path.join(env.HOME && env.HOME.startsWith('/') ? env.HOME : os.homedir(), '.local', 'state');
  return path.join(base, 'sloptimize', `${name}-${fnv1a32(abs)}`);
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/*
 * Where the daemon serving `project` listens: {host, port, pid} from its
 * daemon.json, or {error} saying why not (none recorded, or the pid it
 * names is gone).
 */
export function findDaemon(project, env = process.env) {
  const file = path.join(stateDirOf(project, env), 'daemon.json');
  let j;
  try {
    j = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    return { error: e.code === 'ENOENT' ? 'no daemon serves this project' : `cannot read ${file}: ${e.message}` };
  }
  if (typeof j.pid === 'number' && !pidAlive(j.pid)) return { error: `its daemon (pid ${j.pid}) is gone` };
  const m = typeof j.listen === 'string' ? /^\[?([^\]]+?)\]?:(\d+)$/.exec(j.listen) : null;
  if (!m) return { error: `${file} names no address` };
  let host = m[1];
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return { host, port: Number(m[2]), pid: j.pid };
}

// --- the build ---------------------------------------------------------------

// Run git in `cwd`; resolves {code, hash} with the sha1 of its output
// (streamed: a diff of any size), or {code: -1} when git cannot run.
function gitHash(cwd, args) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn('git', ['-C', cwd, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      resolve({ code: -1 });
      return;
    }
    const h = crypto.createHash('sha1');
    let text = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), GIT_TIMEOUT_MS);
    child.stdout.on('data', (d) => {
      h.update(d);
      if (text.length < 4096) text += d;
    });
    child.on('error', () => {
      clearTimeout(timer);
      resolve({ code: -1 });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, hash: h.digest('hex'), text });
    });
  });
}

/*
 * The build of the code in `root` now: git's short HEAD, and when the
 * working tree differs from it (tracked changes, staged or not, and
 * untracked files: their names, sizes and times) "+" and 8 hex of that
 * difference — .sloptimize/, where the ledger grows, and `skip` (paths
 * relative to root: Vite's own cache, which it makes beside the game when
 * there is no node_modules) left out.  null outside git (or before its
 * first commit).
 */
export async function gitBuild(root, skip = []) {
  const head = await gitHash(root, ['rev-parse', '--short', 'HEAD']);
  if (head.code !== 0) return null;
  const short = head.text.trim();
  const spec = ['--', '.', ':(exclude).sloptimize', ...skip.map((p) => `:(exclude)${p}`)];
  const diff = await gitHash(root, ['diff', 'HEAD', '--binary', ...spec]);
  const others = await gitHash(root, ['ls-files', '--others', '--exclude-standard', '-z', ...spec]);
  if (diff.code !== 0 || others.code !== 0) return short;
  const h = crypto.createHash('sha1');
  let dirty = false;
  if (diff.text.length > 0) {
    h.update(diff.hash);
    dirty = true;
  }
  for (const f of others.text.split('\0').filter(Boolean).sort()) {
    dirty = true;
    try {
      const st = fs.statSync(path.join(root, f));
      h.update(`${f}\0${st.size}\0${st.mtimeMs}\0`);
    } catch {
      h.update(`${f}\0gone\0`);
    }
  }
  // the name list was cut at 4 KiB: the whole of it counts too
  if (others.text.length >= 4096) h.update(others.hash);
  return dirty ? `${short}+${h.digest('hex').slice(0, 8)}` : short;
}

function startStamp(d) {
  return `dev-${d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`;
}

// --- the proxy ------------------------------------------------------------------

function tell503(res, why, project) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: `sloptimized is not running for this project (${why})`, project, start: `sloptimized --project ${project}` });
  res.writeHead(503, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-sloptimize-proxy': 'no-daemon' });
  res.end(body);
}

// The hitch rule's frame budget from sloptimize.budgets.json (its
// perf.budget.frame_ms_p95, a number or {max}), read once as the dev server
// starts, so the recorder's hitches and `sloptimize check` use one number
// (docs/budgets.md).  A fault leaves the recorder's default and is said;
// `sloptimize check` names it fully.
function frameBudget(root, warn) {
  let text;
  try { text = fs.readFileSync(path.join(root, 'sloptimize.budgets.json'), 'utf8'); } catch { return undefined; }
  let b;
  try { b = JSON.parse(text.replace(/^\uFEFF/, ''))['perf.budget.frame_ms_p95']; } catch (e) {
    warn(`sloptimize: sloptimize.budgets.json is not valid JSON (${e.message}): the recorder keeps its default frame budget; sloptimize check says what is wrong`);
    return undefined;
  }
  const max = typeof b === 'number' ? b : b && typeof b === 'object' ? b.max : undefined;
  if (b === undefined) return undefined;
  if (typeof max === 'number' && Number.isFinite(max) && max > 0) return max;
  warn('sloptimize: perf.budget.frame_ms_p95 in sloptimize.budgets.json is not a number > 0: the recorder keeps its default frame budget');
  return undefined;
}

// .sloptimize/dev.json: where `sloptimize bench --launch` finds the dev
// server.  Written atomically (temp, rename), removed when the server
// closes if it is still this server's.
function devJson(server, project) {
  const dir = path.join(path.resolve(project || server.config.root), '.sloptimize');
  const file = path.join(dir, 'dev.json');
  const hs = server.httpServer;
  if (!hs) return;
  hs.once('listening', () => {
    // from the bound address (resolvedUrls comes after this event)
    const a = hs.address();
    const host = !a.address || a.address === '::' || a.address === '0.0.0.0' ? 'localhost'
      : String(a.address).includes(':') ? `[${a.address}]` : a.address;
    const url = `${server.config.server.https ? 'https' : 'http'}://${host}:${a.port}${server.config.base || '/'}`;
    try {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, `${JSON.stringify({ url, pid: process.pid, at: new Date().toISOString() })}\n`);
      fs.renameSync(tmp, file);
    } catch (e) {
      server.config.logger.warn(`sloptimize: could not write ${file}: ${e.message}`);
    }
  });
  hs.once('close', () => {
    try {
      if (JSON.parse(fs.readFileSync(file, 'utf8')).pid === process.pid) fs.unlinkSync(file);
    } catch { /* gone or another server's */ }
  });
}

export default function sloptimize({ daemon, project, build = process.env.SLOPTIMIZE_BUILD_ID || undefined,
  budgetFrameMs, auto = true, panel = true, relay = true } = {}) {
  const fixed = daemon ? new URL(String(daemon)) : null;
  let root = process.cwd();
  let skip = [];                  // Vite's cache, when it lies in root
  let logger = console;
  let server = null;
  let found = null;               // {host, port, pid} or {error}
  let foundAt = 0;
  let said = null;                // the last state said in the terminal
  const started = new Date();
  let frameMs = budgetFrameMs;    // the hitch rule's budget (budgets file)
  let autoBuild = null;           // the derived build, when `build` is not given
  let buildJob = null;
  let settle = null;

  const projectDir = () => project ? path.resolve(root, project) : root;

  // The daemon to talk to: the one given, else the one daemon.json names
  // (read again every second, and at once after a failure).
  function target() {
    if (fixed) return { host: fixed.hostname.replace(/^\[|\]$/g, ''), port: Number(fixed.port || 80) };
    if (!found || Date.now() - foundAt > DAEMON_JSON_TTL_MS) {
      found = findDaemon(projectDir());
      foundAt = Date.now();
    }
    return found;
  }

  // One line in Vite's terminal when the daemon goes or comes, never per
  // request and never a stack trace.
  function say(t, err) {
    const down = !!(t.error || err);
    const state = down ? 'down' : `${t.host}:${t.port}`;
    if (state === said) return;
    said = state;
    if (down) {
      const why = t.error || (err && err.code === 'ECONNREFUSED' ? 'nothing listens where it said' : err && (err.code || err.message));
      logger.warn(`sloptimized is not running for this project (${why}): start it with  sloptimized --project ${projectDir()}`, { timestamp: true });
    } else {
      logger.info(`sloptimize: talking to sloptimized at ${t.host}:${t.port}${t.pid ? ` (pid ${t.pid})` : ''} for ${projectDir()}`, { timestamp: true });
    }
  }

  function failed(err) {
    found = null;                 // read daemon.json again next time
    say({}, err);
  }

  function proxyHttp(req, res) {
    const t = target();
    if (t.error) {
      say(t);
      tell503(res, t.error, projectDir());
      return;
    }
    const up = http.request({ host: t.host, port: t.port, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      say(t);
      res.writeHead(ur.statusCode || 502, ur.headers);
      ur.pipe(res);
      ur.on('error', () => res.destroy());
    });
    up.on('error', (err) => {
      failed(err);
      tell503(res, err.code === 'ECONNREFUSED' ? 'nothing listens where it said' : (err.code || err.message), projectDir());
    });
    res.on('close', () => { if (!res.writableFinished) up.destroy(); });
    req.on('error', () => up.destroy());
    req.pipe(up);
  }

  // The events WebSocket: the upgrade request goes to the daemon as it
  // came, then bytes both ways.  A page that closes, a daemon that goes:
  // both sockets end quietly.
  function proxyUpgrade(req, socket, head) {
    const t = target();
    socket.on('error', () => { /* the page went away */ });
    if (t.error) {
      say(t);
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const up = net.connect(t.port, t.host, () => {
      say(t);
      let text = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) text += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      up.write(`${text}\r\n`);
      if (head && head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', (err) => {
      if (!up.connecting && up.bytesRead > 0) {
        socket.destroy();
        return;
      }
      failed(err);
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
    socket.on('close', () => up.destroy());
    up.on('close', () => socket.destroy());
  }

  // --- the build ---------------------------------------------------------------

  async function currentBuild() {
    if (build) return String(build);
    if (!autoBuild) autoBuild = (await gitBuild(root, skip)) || startStamp(started);
    return autoBuild;
  }

  // Something in the project changed: work the build out again once the
  // edits settle, and tell the page when it moved.
  function changed(file) {
    if (build || !file) return;
    const rel = path.relative(root, file);
    if (rel.startsWith('..') || /(^|\/)(\.sloptimize|\.git|node_modules)(\/|$)/.test(rel)) return;
    clearTimeout(settle);
    settle = setTimeout(() => {
      const job = (buildJob || Promise.resolve()).then(async () => {
        const before = autoBuild;
        const now = (await gitBuild(root, skip)) || startStamp(started);
        if (now === before) return;
        autoBuild = now;
        const graph = server && (server.environments?.client?.moduleGraph || server.moduleGraph);
        const mod = graph && graph.getModuleById(`${VIRTUAL}bootstrap.js`);
        if (mod) graph.invalidateModule(mod);
        logger.info(`sloptimize: build ${now}`, { timestamp: true });
        const ws = server && (server.environments?.client?.hot || server.ws);
        if (ws) ws.send({ type: 'custom', event: 'sloptimize:build', data: { build: now } });
      });
      buildJob = job.catch(() => {});
    }, BUILD_SETTLE_MS);
  }

  // What Vite was last told of each game file it transformed: the file's
  // mtime when it read it, or when its watcher said it changed.  Vite's
  // watcher (chokidar) can miss an edit made just after a change of the
  // same file — seen under the loop: a `git checkout --` revert, then the
  // next edit, and the dev server served the revert for ever.  A verb that
  // launches a browser asks first (SYNC): a file whose mtime moved without
  // a word from the watcher is handed to the watcher as changed, so the
  // page about to load gets what is on disk.
  const told = new Map();          // absolute path → mtimeMs
  function tell(file) {
    try { told.set(file, fs.statSync(file).mtimeMs); } catch { told.delete(file); }
  }
  async function sync() {
    const taken = [];
    for (const [file, was] of told) {
      let st;
      try { st = await fs.promises.stat(file); } catch { continue; }
      if (st.mtimeMs === was) continue;
      // edited a moment ago: the watcher's word may be on its way (it
      // says within ~100 ms); a second reload under a loading page would
      // navigate it away, so give the watcher its time first
      const age = Date.now() - st.mtimeMs;
      if (age < SYNC_SETTLE_MS) await new Promise((r) => setTimeout(r, SYNC_SETTLE_MS - age));
      if (told.get(file) !== was) continue;          // it said
      tell(file);
      taken.push(path.relative(root, file));
      // invalidated here, before the answer: Vite's own change handler
      // does it only after awaiting the plugins' watchChange, so a page
      // loaded the moment sync() answers could still get the old module
      const graph = server.environments?.client?.moduleGraph || server.moduleGraph;
      for (const mod of graph?.getModulesByFile?.(file) || []) graph.invalidateModule(mod);
      server.watcher.emit('change', file);      // and Vite's own handler: HMR, the page told
    }
    if (taken.length)
      logger.warn(`sloptimize: Vite's watcher had missed an edit of ${taken.join(', ')}: taken now (a launched bench asked)`, { timestamp: true });
    return taken;
  }

  return {
    name: 'sloptimize',
    apply: 'serve',
    config() {
      // the ledger grows in .sloptimize/: nothing there is the game's code
      return { server: { watch: { ignored: ['**/.sloptimize/**'] } } };
    },
    configResolved(config) {
      root = config.root || root;
      logger = config.logger || logger;
      const cache = config.cacheDir ? path.relative(root, config.cacheDir) : '';
      skip = cache && !cache.startsWith('..') && !path.isAbsolute(cache) ? [cache] : [];
    },
    // The entry and the runtime modules are Vite modules: the HTML's
    // pre-transform resolves them (no "Failed to load url"), and the entry
    // gets import.meta.hot for the build's updates.
    resolveId(source, importer) {
      const names = runtimeModules();
      if (source === ENTRY) return `${VIRTUAL}bootstrap.js`;
      if (source.startsWith(PREFIX)) {
        const name = source.slice(PREFIX.length).split(/[?#]/)[0];
        return names.has(name) ? `${VIRTUAL}${name}` : null;
      }
      if (importer && importer.startsWith(VIRTUAL) && source.startsWith('./')) {
        const name = source.slice(2).split(/[?#]/)[0];
        return names.has(name) ? `${VIRTUAL}${name}` : null;
      }
      return null;
    },
    async load(id) {
      if (!id.startsWith(VIRTUAL)) return null;
      const name = id.slice(VIRTUAL.length);
      if (name === 'bootstrap.js') {
        const defaults = { endpoint: '', build: await currentBuild(), auto, panel, relay };
        if (frameMs) defaults.budgetFrameMs = frameMs;
        return `// sloptimize's dev entry (page-runtime/vite.js): dev.js with the plugin's defaults
import { start } from '${PREFIX}dev.js';
start(${JSON.stringify(defaults)}, { hot: import.meta.hot });
`;
      }
      if (!runtimeModules().has(name)) return null;
      return fs.promises.readFile(path.join(HERE, name), 'utf8');
    },
    // (nothing changed: the file's mtime as Vite read it, for sync())
    transform(code, id) {
      if (id.startsWith('\0') || id.includes('/node_modules/')) return null;   // (VIRTUAL too)
      const file = id.split('?')[0];
      if (path.isAbsolute(file) && !path.relative(root, file).startsWith('..')) tell(file);
      return null;
    },
    configureServer(srv) {
      server = srv;
      const fromFile = frameBudget(root, (m) => logger.warn(m));
      if (budgetFrameMs !== undefined && fromFile !== undefined && Number(budgetFrameMs) !== fromFile)
        logger.warn(`sloptimize: budgetFrameMs ${budgetFrameMs} (the plugin's option) wins over sloptimize.budgets.json's frame_ms_p95 ${fromFile}: the recorder's hitches and sloptimize check disagree`);
      frameMs = budgetFrameMs ?? fromFile;
      devJson(srv, projectDir());
      currentBuild().then((b) => logger.info(`sloptimize: build ${b}${build ? '' : ' (from git, or the dev server\'s start outside git)'}`, { timestamp: true }))
        .catch(() => {});
      const t = target();
      if (t.error) say(t);
      srv.middlewares.use((req, res, next) => {
        if (!req.url) return next();
        if (req.url === API || req.url.startsWith(`${API}/`) || req.url.startsWith(`${API}?`)) return proxyHttp(req, res);
        if (!req.url.startsWith(PREFIX)) return next();
        // the runtime's modules, for a page that imports them by URL
        // (the entry itself is Vite's: it needs import.meta.hot)
        const name = req.url.slice(PREFIX.length).split(/[?#]/)[0];
        if (name === 'bootstrap.js') return next();
        if (name === SYNC) {
          sync().then((taken) => {
            res.setHeader('content-type', 'application/json');
            res.setHeader('cache-control', 'no-store');
            res.end(`${JSON.stringify({ taken })}\n`);
          }, (e) => { res.statusCode = 500; res.end(`${JSON.stringify({ error: String(e && e.message) })}\n`); });
          return;
        }
        if (!runtimeModules().has(name)) {
          res.statusCode = 404;
          res.end('not a page-runtime module');
          return;
        }
        fs.readFile(path.join(HERE, name), (err, body) => {
          if (err) {
            res.statusCode = 404;
            res.end('not a page-runtime module');
            return;
          }
          res.setHeader('content-type', 'text/javascript; charset=utf-8');
          res.setHeader('cache-control', 'no-cache');
          res.end(body);
        });
      });
      if (srv.httpServer) {
        srv.httpServer.on('upgrade', (req, socket, head) => {
          if (req.url && (req.url === API || req.url.startsWith(`${API}/`))) proxyUpgrade(req, socket, head);
        });
      }
      srv.watcher.on('change', changed);
      srv.watcher.on('add', changed);
      srv.watcher.on('unlink', changed);
      const heard = (file) => { if (told.has(file)) tell(file); };
      srv.watcher.on('change', heard);
      srv.watcher.on('add', heard);
    },
    transformIndexHtml: {
      order: 'pre',
      handler() {
        // a src, not an inline script: the entry is a module of its own
        return [{ tag: 'script', attrs: { type: 'module', src: ENTRY }, injectTo: 'head-prepend' }];
      },
    },
  };
}
