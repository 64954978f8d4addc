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
//    through three's own __THREE_DEVTOOLS__ announcement.
//
// docs/recorder.md says what the game writes and what it does not.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PREFIX = '/@sloptimize/';
const SERVED = new Set(['recorder.js', 'frames.js', 'motion.js', 'delivery.js', 'panel.js', 'history.js', 'footprint.js']);

function bootstrap({ build, budgetFrameMs, auto, panel }) {
  const defaults = JSON.stringify({ endpoint: '', ...(build ? { build } : {}), ...(budgetFrameMs ? { budgetFrameMs } : {}) });
  return `// sloptimize's dev bootstrap, made by page-runtime/vite.js
import { createRecorder } from './recorder.js';
${panel ? `import { createPanel } from './panel.js';` : ''}
const defaults = ${defaults};
const api = globalThis.sloptimize = {
  recorder: null,
  panel: null,
  createRecorder(options = {}) {
    if (api.recorder && api.recorder.auto && api.recorder.renderer === options.renderer) api.recorder.rec.stop();
    const rec = createRecorder({ ...defaults, ...options });
    api.recorder = { rec, renderer: options.renderer, auto: false };
    return rec;
  },
  get rec() { return api.recorder ? api.recorder.rec : null; },
};
${auto ? `// three announces every WebGLRenderer to __THREE_DEVTOOLS__ as it is made
const devtools = globalThis.__THREE_DEVTOOLS__ || (globalThis.__THREE_DEVTOOLS__ = new EventTarget());
devtools.addEventListener('observe', (e) => {
  const r = e.detail;
  if (!r || !r.isWebGLRenderer || api.recorder) return;
  queueMicrotask(() => {
    if (api.recorder) return;
    api.recorder = { rec: createRecorder({ ...defaults, renderer: r }), renderer: r, auto: true };
  });
});` : ''}
${panel ? `api.panel = createPanel({ endpoint: location.origin });` : ''}
`;
}

export default function sloptimize({ daemon = 'http://127.0.0.1:7567', build = process.env.SLOPTIMIZE_BUILD_ID || undefined,
  budgetFrameMs, auto = true, panel = true } = {}) {
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
      server.middlewares.use((req, res, next) => {
        if (!req.url || !req.url.startsWith(PREFIX)) return next();
        const name = req.url.slice(PREFIX.length).split(/[?#]/)[0];
        if (name === 'bootstrap.js') {
          res.setHeader('content-type', 'text/javascript; charset=utf-8');
          res.setHeader('cache-control', 'no-cache');
          res.end(bootstrap({ build, budgetFrameMs, auto, panel }));
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
