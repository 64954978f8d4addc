//# allFunctionsCalledOnLoad
// identity.js — which entity an object is, and where in the source it was
// built (DESIGN §16, docs/attribute.md).  Dev only; never imports three.
//
// The id, in this order (the first that applies wins):
//
//   1. `userData.sloptimize.id` on the object or its nearest ancestor that
//      has one — set by the host's one line `sloptimize.track(obj, 'enemy_17')`
//   2. the asset it came from, `gltf:<url>` — three announces each loader
//      it makes on __THREE_DEVTOOLS__; a glTF loader's load() is wrapped so
//      the scene it delivers is remembered with its URL
//   3. its name path under the scene, `town/rocks/rock[12]` (an unnamed
//      level by its type; `[k]` when siblings share the segment), when at
//      least one level has a name
//   4. `auto:<hash>` — FNV-1a 32 of the type path, geometry and material
//      kinds: the same scene built the same way gets the same ids on every
//      load.  Never three's per-load `uuid` or `id`.
//
// The site: `Object3D.prototype.add` is wrapped (found through the first
// Object3D three announces — a Scene — so three is never imported) and the
// stack of the call that first added each object is kept, unformatted
// (V8 formats a stack only when it is read).  Its first frame outside
// three.js, as the URL's path without origin or query (`src/town.js:42`:
// Vite serves the original modules, no source map needed), is the site;
// else "unknown".  What was added before the first Scene was made has no
// site: track() it (track() keeps its caller's site until an add names
// the object's own).
//
// Injected as a classic script too (bench.js's rule): no import lines,
// exports only `export function` / `export const`.

export const SITE_UNKNOWN = 'unknown';

// The runtime's own modules, wherever they are served from: this module's
// URL up to its file name (its siblings share it), read from a stack
// trace.  Not import.meta.url: this file is also injected as a classic
// script (above), where `import.meta` is a syntax error; and Vite rewrites
// `new URL('.', import.meta.url)` as an asset URL, which in the plugin's
// virtual modules ('/@id/__x00__sloptimize:identity.js') became the site's
// root — every script of the game was then the runtime's own, and the
// recorder never named one.  Injected, the script has no URL of its own,
// and the base is empty.  Besides, the plugin's entry (/@sloptimize/…).
export function ownBase(stack) {
  const f = stackFrames(stack)[0];
  const u = f ? f.url.replace(/[?#].*$/, '') : '';
  const cut = Math.max(u.lastIndexOf('/'), u.lastIndexOf(':'));
  return cut > u.indexOf('//') + 1 ? u.slice(0, cut + 1) : '';
}
const OWN_BASE = ownBase(new Error().stack);

// Is a script URL (a stack frame's, a Long Animation Frames script's) the
// runtime's own?  Never a site, never a cause handed to the agent.
// (A module of it: a lowercase name.js beside this one — not the tests
// that live beside them in the checkout.)
export function ownUrl(u) {
  if (u.includes('/@sloptimize/')) return true;
  return OWN_BASE !== '' && u.startsWith(OWN_BASE) && /^[a-z]+\.js([?#]|$)/.test(u.slice(OWN_BASE.length));
}
export const TRACK_ID = /^[A-Za-z0-9][A-Za-z0-9_.:/[\]#@-]{0,127}$/;
// objects a view snapshot can say the visibility of (the newest kept)
export const TRACKED_MAX = 1024;
const IDENTITY_KEY = Symbol.for('sloptimize.identity');

// FNV-1a 32 over a string's UTF-16 code units, as 8 hex digits.
export function fnv1a32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

// A frame belongs to three.js when its script is three's: the npm package
// (node_modules/three/…, its addons included), Vite's pre-bundle of it
// (.vite/deps/three.js, three_addons_….js) or a copy named three*.js.
export function isThreeUrl(url) {
  const path = String(url).split(/[?#]/)[0];
  return /\/node_modules\/three\//.test(path) || /\/\.vite\/deps\/three[^/]*\.js$/.test(path) ||
    /(?:^|\/)three(?:\.[a-z]+)*\.(?:m?js)$/i.test(path);
}

// "http://localhost:5173/src/town.js?t=123" → "src/town.js"
export function urlPath(url) {
  let s = String(url);
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(s);
  if (m) s = s.slice(m[0].length);
  s = s.split(/[?#]/)[0];
  return s.replace(/^\/+/, '');
}

// The frames of a V8 or SpiderMonkey/JSC stack: [{url, line, column}].
export function stackFrames(stack) {
  const out = [];
  for (const raw of String(stack || '').split('\n')) {
    const line = raw.trim();
    // V8: "at fn (url:12:3)" or "at url:12:3"; Firefox/Safari: "fn@url:12:3"
    const m = /(?:^at\s+(?:.*?\()?|@)((?:[a-z][a-z0-9+.-]*:\/\/|\/)[^\s()]*?):(\d+):(\d+)\)?$/i.exec(line);
    if (m) out.push({ url: m[1], line: Number(m[2]), column: Number(m[3]) });
  }
  return out;
}

// The site a list of V8 call sites names (Error.prepareStackTrace's
// frames), by siteFromStack's rule.  A frame's script is what V8's text
// would print (`//# sourceURL` first), and only a URL or a path counts,
// as in the text.
const URLISH = /^(?:[a-z][a-z0-9+.-]*:\/\/|\/)/i;
function siteFromFrames(frames, own) {
  for (const f of Array.isArray(frames) ? frames : []) {
    if (!f || typeof f.getFileName !== 'function') continue;
    const url = (typeof f.getScriptNameOrSourceURL === 'function' ? f.getScriptNameOrSourceURL() : null) || f.getFileName();
    if (typeof url !== 'string' || !URLISH.test(url) || isThreeUrl(url) || own(url)) continue;
    const p = urlPath(url);
    if (p === '') continue;
    return `${p}:${f.getLineNumber()}`;
  }
  return SITE_UNKNOWN;
}

// The site of a captured Error not read yet.  V8 hands such a stack's
// frames to Error.prepareStackTrace when it is first read: the site comes
// from the first frames' script and line, and no text is made for any of
// them — formatting ten frames and parsing them back cost ~20 µs a stack,
// most of naming a crowd's 32 spawned entities in the census's last task.
// The page's own hook, if it has one, is back before this returns; where
// there is no such hook (not V8), or the page's cannot be replaced, the
// text is parsed.
export function siteOfError(e, own = () => false) {
  let found = null;
  const prev = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (err, frames) => { found = siteFromFrames(frames, own); return ''; };
  } catch { /* a hook the page made read-only: its text, below */ }
  let text;
  try { text = e.stack; } finally { if (Error.prepareStackTrace !== prev) Error.prepareStackTrace = prev; }
  return found !== null ? found : siteFromStack(text, own);
}

// The site a stack names: its first frame outside three.js and outside
// the runtime's own scripts (`own(url)`), as "path:line"; else "unknown".
export function siteFromStack(stack, own = () => false) {
  for (const f of stackFrames(stack)) {
    if (isThreeUrl(f.url) || own(f.url)) continue;
    const p = urlPath(f.url);
    if (p === '') continue;
    return `${p}:${f.line}`;
  }
  return SITE_UNKNOWN;
}

export function trackedId(o) {
  const u = o && o.userData;
  const s = u && typeof u === 'object' ? u.sloptimize : null;
  return s && typeof s === 'object' && typeof s.id === 'string' && s.id !== '' ? s.id : null;
}

// The segment of o under its parent: its name (or type), with [k] when a
// sibling has the same segment (k: its rank among them, in the parent's
// order).  `cache` (a WeakMap, per walk) keeps, per parent, the children
// of each segment asked for: one pass of string compares over the
// siblings for each (a flat scene of thousands of crates is one pass,
// no map of them all), and the rank found from the end of the list (what
// is asked about is most often what was added last).
const baseOf = (o) => o.name || o.type || 'Object3D';
function segment(o, cache) {
  const base = baseOf(o);
  const p = o.parent;
  if (!p || !Array.isArray(p.children) || p.children.length < 2) return base;
  let byBase = cache ? cache.get(p) : null;
  if (!byBase) {
    byBase = new Map();
    if (cache) cache.set(p, byBase);
  }
  let same = byBase.get(base);
  if (!same) {
    same = [];
    for (const c of p.children) if (baseOf(c) === base) same.push(c);
    byBase.set(base, same);
  }
  const k = same.length > 1 ? same.lastIndexOf(o) : -1;
  return k >= 0 ? `${base}[${k}]` : base;
}

// The path of o under its scene (the scene itself not included), and
// whether any level of it is named.
export function namePath(o, cache) {
  const parts = [];
  let named = false;
  for (let a = o; a && !a.isScene; a = a.parent) {
    if (a.name) named = true;
    parts.push(segment(a, cache));
    if (!a.parent) break;
  }
  return { path: parts.reverse().join('/'), named };
}

function kindOf(m) {
  if (!m) return '';
  if (Array.isArray(m)) return m.map(kindOf).join('+');
  return m.type || 'Material';
}

// auto:<hash of the type path, the geometry's kind and size, the
// material's kind>
export function autoId(o, cache) {
  const g = o.geometry;
  const pos = g && g.attributes && g.attributes.position;
  const key = `${namePath(o, cache).path}|${g ? `${g.type || 'BufferGeometry'}:${pos ? pos.count : 0}` : ''}|${kindOf(o.material)}`;
  return `auto:${fnv1a32(key)}`;
}

/*
 * The id of o: {id, via, root} — via 'track', 'gltf', 'name' or 'auto';
 * root the object the id belongs to (the tracked ancestor, the glTF
 * scene, or o).  `assets` maps a loaded root to its URL (a WeakMap, or
 * null); `cache` as namePath's.
 */
export function entityId(o, { assets = null, cache = null } = {}) {
  for (let a = o; a; a = a.parent) {
    const t = trackedId(a);
    if (t) return { id: t, via: 'track', root: a };
    if (assets && assets.has(a)) return { id: `gltf:${assets.get(a)}`, via: 'gltf', root: a };
    if (a.isScene) break;
  }
  const np = namePath(o, cache);
  if (np.named) return { id: np.path, via: 'name', root: o };
  return { id: autoId(o, cache), via: 'auto', root: o };
}

// The Object3D prototype that owns add(), from any object three made.
export function object3DProto(o) {
  for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    if (Object.prototype.hasOwnProperty.call(p, 'add') && Object.prototype.hasOwnProperty.call(p, 'traverse')) return p;
  return null;
}

/*
 * installIdentity(g) → the page's identity (once per global): sites and
 * assets, and track().  Listens on g.__THREE_DEVTOOLS__ (made when
 * missing, as three expects) for the first Object3D (to wrap add), every
 * renderer (to wrap setPixelRatio: the census names where the ratio was
 * set) and every loader (glTF URLs).  `own(url)`: the runtime's scripts,
 * never a site.
 */
export function installIdentity(g = globalThis, { own = null } = {}) {
  if (g[IDENTITY_KEY]) return g[IDENTITY_KEY];
  const stacks = new WeakMap();       // object → Error (formatted on read)
  const sites = new WeakMap();        // object → "path:line" (read once)
  const assets = new WeakMap();       // loaded root → URL path
  const named = new WeakSet();        // stacks taken by track(): an add() after it is the site
  const isOwn = typeof own === 'function' ? own : ownUrl;
  // V8 walks the stack once, onto a plain object, from the caller of the
  // wrapper: new Error() before it would walk it twice (half of add()'s
  // cost for a crowd).  Elsewhere the Error's own stack, wrapper and all.
  const capture = typeof Error.captureStackTrace === 'function'
    ? (fn) => { const e = {}; Error.captureStackTrace(e, fn); return e; }
    : () => new Error('site');
  const tracked = [];                 // WeakRef of every object track()ed (a view snapshot's visibility)
  const id = {
    patched: false,
    // the ms add()'s wrapper has spent capturing stacks, in the game's
    // own task: the recorder counts it as its own time (the frame it
    // landed in is judged without it)
    addMs: 0,
    addProto: null,           // the Object3D prototype whose add() is watched
    pixelRatioSite: null,
    assets,
    // the track()ed objects still alive, at most `max`, oldest first
    trackedObjects(max = TRACKED_MAX) {
      const out = [];
      for (let i = 0; i < tracked.length && out.length < max; i++) {
        const o = tracked[i].deref();
        if (o !== undefined) out.push(o);
      }
      return out;
    },
    siteOf(o) {
      if (!o) return SITE_UNKNOWN;
      let s = sites.get(o);
      if (s === undefined) {
        const e = stacks.get(o);
        s = e ? siteOfError(e, isOwn) : SITE_UNKNOWN;
        if (e) { sites.set(o, s); stacks.delete(o); }
      }
      return s;
    },
    entityId(o, cache) { return entityId(o, { assets, cache }); },
    track(o, name) {
      if (!o || typeof o !== 'object' || !o.isObject3D)
        throw new TypeError('sloptimize.track(object, id): object is a three.js Object3D');
      if (typeof name !== 'string' || !TRACK_ID.test(name))
        throw new TypeError(`sloptimize.track(object, id): id is 1-128 letters, digits or _ . : / [ ] # @ -, not ${JSON.stringify(name)}`);
      if (!o.userData || typeof o.userData !== 'object') o.userData = {};
      const prev = o.userData.sloptimize && typeof o.userData.sloptimize === 'object' ? o.userData.sloptimize : {};
      o.userData.sloptimize = { ...prev, id: name };
      if (typeof g.WeakRef === 'function' && !prev.id) {
        // bounded: the dead go first, then the oldest
        if (tracked.length >= TRACKED_MAX) {
          const live = tracked.filter((r) => r.deref() !== undefined);
          tracked.length = 0;
          tracked.push(...live.slice(-(TRACKED_MAX - 1)));
        }
        tracked.push(new g.WeakRef(o));
      }
      if (!stacks.has(o) && !sites.has(o)) { stacks.set(o, capture(id.track)); named.add(o); }
      return o;
    },
  };

  function patchAdd(proto) {
    if (id.patched || !proto) return;
    const add = proto.add;
    if (typeof add !== 'function') return;
    proto.add = function add_sloptimize(...objs) {
      const t0 = performance.now();
      for (let i = 0; i < objs.length; i++) {
        const o = objs[i];
        if (o && typeof o === 'object' && ((!stacks.has(o) && !sites.has(o)) || named.has(o))) {
          stacks.set(o, capture(add_sloptimize));
          sites.delete(o);
          named.delete(o);
        }
      }
      id.addMs += performance.now() - t0;
      return add.apply(this, objs);
    };
    id.patched = true;
    id.addProto = proto;
  }
  function patchRenderer(r) {
    if (typeof r.setPixelRatio !== 'function' || r.setPixelRatio.sloptimize) return;
    const set = r.setPixelRatio;
    const wrapped = function setPixelRatio_sloptimize(v) {
      id.pixelRatioSite = siteOfError(capture(setPixelRatio_sloptimize), isOwn);
      return set.apply(this, arguments);
    };
    wrapped.sloptimize = true;
    r.setPixelRatio = wrapped;
  }
  function patchLoader(l) {
    if (typeof l.load !== 'function' || l.load.sloptimize) return;
    const glTF = (l.constructor && /gltf/i.test(l.constructor.name || '')) || typeof l.register === 'function';
    if (!glTF) return;
    const load = l.load;
    const wrapped = function load_sloptimize(url, onLoad, ...rest) {
      const where = urlPath(new URL(String((this.path || '') + url), g.location ? g.location.href : 'http://x/').href);
      return load.call(this, url, (res) => {
        try {
          if (res && res.scene && res.scene.isObject3D) assets.set(res.scene, where);
          if (res && Array.isArray(res.scenes)) for (const s of res.scenes) if (s && s.isObject3D && !assets.has(s)) assets.set(s, where);
        } catch { /* never in the game's way */ }
        if (onLoad) onLoad(res);
      }, ...rest);
    };
    wrapped.sloptimize = true;
    l.load = wrapped;
  }

  const devtools = g.__THREE_DEVTOOLS__ || (typeof g.EventTarget === 'function' ? (g.__THREE_DEVTOOLS__ = new g.EventTarget()) : null);
  if (devtools && typeof devtools.addEventListener === 'function')
    devtools.addEventListener('observe', (e) => {
      const d = e && e.detail;
      if (!d || typeof d !== 'object') return;
      try {
        if (d.isObject3D && !id.patched) patchAdd(object3DProto(d));
        else if (d.isWebGLRenderer || d.isWebGPURenderer) patchRenderer(d);
        else if (d.manager && typeof d.load === 'function') patchLoader(d);
      } catch { /* never in the game's way */ }
    });
  Object.defineProperty(g, IDENTITY_KEY, { value: id, configurable: true });
  return id;
}

// The page's identity if installed, else null (the recorder asks this).
export function pageIdentity(g = globalThis) {
  return g[IDENTITY_KEY] || null;
}
