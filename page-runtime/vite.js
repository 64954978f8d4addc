// vite.js — sloptimize in a game's Vite dev server, in one line:
//
//   // vite.config.js
//   import sloptimize from 'PATH/TO/page-runtime/vite.js';
//   export default { plugins: [sloptimize({ daemon: 'http://127.0.0.1:7567' })] };
//
// Dev only (`apply: 'serve'`): `vite build` sees nothing of it.  It
//  - proxies /api/sloptimize (HTTP and the events WebSocket) to the daemon,
//    so the page talks to its own origin;
//  - serves this folder (recorder, panel, the fold) under /@sloptimize/;
//  - injects a small bootstrap into the dev page, ahead of the game's own
//    modules: the Ctrl+F12 panel, and `globalThis.sloptimize`, whose
//    createRecorder(options) makes the recorder with the plugin's defaults
//    (endpoint: same origin, build).  With `auto: true` (the default) a
//    THREE.WebGLRenderer made without a recorder gets one by itself,
//    through three's own __THREE_DEVTOOLS__ announcement;
//  - installs the bench runtime (bench.js: the virtual clock in
//    passthrough, `sloptimize.scene`, `sloptimize.bench`) unless the
//    launched browser installed it first; a page opened for a bench
//    (?sloptimize=bench:NAME) gets no recorder and no panel by itself;
//  - writes .sloptimize/dev.json ({url, pid, at}) when the dev server
//    listens, for `sloptimize bench --launch` (docs/bench.md).
//
// docs/recorder.md says what the game writes and what it does not.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PREFIX = '/@sloptimize/';
const SERVED = new Set(['recorder.js', 'frames.js', 'motion.js', 'delivery.js', 'panel.js', 'history.js', 'footprint.js', 'clock.js', 'bench.js']);

function bootstrap({ build, budgetFrameMs, auto, panel }) {
  const defaults = JSON.stringify({ endpoint: '', ...(build ? { build } : {}), ...(budgetFrameMs ? { budgetFrameMs } : {}) });
  return `// sloptimize's dev bootstrap, made by page-runtime/vite.js
import { createRecorder } from './recorder.js';
import { installBench } from './bench.js';
${panel ? `import { createPanel } from './panel.js';` : ''}
const defaults = ${defaults};
// the clock and the scenes first (a launched bench put them there already)
const api = Object.assign(installBench(globalThis, { mode: 'passthrough' }), {
  recorder: null,
  panel: null,
  createRecorder(options = {}) {
    if (api.recorder && api.recorder.auto && api.recorder.renderer === options.renderer) api.recorder.rec.stop();
    const rec = createRecorder({ ...defaults, ...options });
    api.recorder = { rec, renderer: options.renderer, auto: false };
    return rec;
  },
});
Object.defineProperty(api, 'rec', { get() { return api.recorder ? api.recorder.rec : null; }, configurable: true });
const benchPage = api.bench.urlScene() !== null;
${auto ? `// three announces every WebGLRenderer to __THREE_DEVTOOLS__ as it is made
const devtools = globalThis.__THREE_DEVTOOLS__ || (globalThis.__THREE_DEVTOOLS__ = new EventTarget());
devtools.addEventListener('observe', (e) => {
  const r = e.detail;
  if (!r || !r.isWebGLRenderer || api.recorder || benchPage) return;
  queueMicrotask(() => {
    if (api.recorder) return;
    api.recorder = { rec: createRecorder({ ...defaults, renderer: r }), renderer: r, auto: true };
  });
});` : ''}
${panel ? `if (!benchPage) api.panel = createPanel({ endpoint: location.origin });` : ''}
`;
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
  const http = server.httpServer;
  if (!http) return;
  http.once('listening', () => {
    // from the bound address (resolvedUrls comes after this event)
    const a = http.address();
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
  http.once('close', () => {
    try {
      if (JSON.parse(fs.readFileSync(file, 'utf8')).pid === process.pid) fs.unlinkSync(file);
    } catch { /* gone or another server's */ }
  });
}

export default function sloptimize({ daemon = 'http://127.0.0.1:7567', build = process.env.SLOPTIMIZE_BUILD_ID || undefined,
  budgetFrameMs, auto = true, panel = true, project } = {}) {
  const target = String(daemon).replace(/\/+$/, '');
  return {
    name: 'sloptimize',
    apply: 'serve',
    config() {
      return {
        server: {
          proxy: {
            '/api/sloptimize': { target, ws: true, changeOrigin: false },
          },
        },
      };
    },
    configureServer(server) {
      const fromFile = frameBudget(server.config.root, (m) => server.config.logger.warn(m));
      if (budgetFrameMs !== undefined && fromFile !== undefined && Number(budgetFrameMs) !== fromFile)
        server.config.logger.warn(`sloptimize: budgetFrameMs ${budgetFrameMs} (the plugin's option) wins over sloptimize.budgets.json's frame_ms_p95 ${fromFile}: the recorder's hitches and sloptimize check disagree`);
      const budget = budgetFrameMs ?? fromFile;
      devJson(server, project);
      server.middlewares.use((req, res, next) => {
        if (!req.url || !req.url.startsWith(PREFIX)) return next();
        const name = req.url.slice(PREFIX.length).split(/[?#]/)[0];
        if (name === 'bootstrap.js') {
          res.setHeader('content-type', 'text/javascript; charset=utf-8');
          res.setHeader('cache-control', 'no-cache');
          res.end(bootstrap({ build, budgetFrameMs: budget, auto, panel }));
          return;
        }
        if (!SERVED.has(name)) {
          res.statusCode = 404;
          res.end('not a page-runtime module');
          return;
        }
        fs.readFile(path.join(HERE, name), (err, body) => {
          if (err) { res.statusCode = 500; res.end(String(err.message)); return; }
          res.setHeader('content-type', 'text/javascript; charset=utf-8');
          res.setHeader('cache-control', 'no-cache');
          res.end(body);
        });
      });
    },
    transformIndexHtml: {
      order: 'pre',
      handler() {
        // a src, not an inline script: Vite would try to resolve its imports
        return [{ tag: 'script', attrs: { type: 'module', src: `${PREFIX}bootstrap.js` }, injectTo: 'head-prepend' }];
      },
    },
  };
}
