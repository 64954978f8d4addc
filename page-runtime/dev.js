// dev.js — what a game's Vite dev page runs first: the Ctrl+F12 panel and
// `globalThis.sloptimize`, whose createRecorder(options) makes the recorder
// with the plugin's defaults.  page-runtime/vite.js serves it, and starts
// it from its entry module (/@sloptimize/bootstrap.js) with the defaults
// as parameters:
//
//   import { start } from '/@sloptimize/dev.js';
//   start({ endpoint: '', build: '1a2b3c4+5e6f7a8b', auto: true, panel: true }, { hot: import.meta.hot });
//
// The build moves while the dev server runs (an edit is a new build:
// docs/recorder.md, "The build"): the plugin says so on Vite's HMR channel
// (`sloptimize:build`), and every recorder made here that did not get a
// build of its own is made again with the new one — the handle the game
// holds forwards to it, and its phase, tracks and subscribers carry over.
// A fixed build would freeze the fix loop: a fix's after window is the
// first build after it, and there would never be one.
//
// ES module, no dependencies; nothing here runs outside `start`.
import { createRecorder } from './recorder.js';
import { createPanel } from './panel.js';
import { installBench } from './bench.js';
import { startRelay } from './relay.js';

const VERBS = ['setPhase', 'track', 'hold', 'cut', 'usermark', 'flush', 'stop', 'state', 'subscribe'];

/*
 * start(defaults, {hot}) → globalThis.sloptimize.  defaults: endpoint
 * ('' = the page's origin, the plugin's proxy), build, budgetFrameMs,
 * auto (a recorder for the first THREE.WebGLRenderer the game makes,
 * through three's __THREE_DEVTOOLS__ announcement), panel.  hot: Vite's
 * import.meta.hot, or null.
 */
export function start(defaults = {}, { hot = null } = {}) {
  const { auto = true, panel = true, relay = true, ...recDefaults } = defaults;
  const live = new Set();          // the recorders made here
  let build = recDefaults.build;

  // One recorder, behind a handle that outlives it: made again when the
  // build moves, with what the game told the last one.
  function make(options, isAuto) {
    const own = options.build !== undefined;
    // renderer, rec and auto are the public shape (client.d.ts); the rest is ours
    const entry = { options, own, auto: isAuto, renderer: options.renderer, rec: null, phase: undefined, tracks: new Map(), subs: new Map() };
    const spawn = () => createRecorder({ ...recDefaults, build, ...options });
    entry.rec = spawn();
    entry.rebuild = () => {
      entry.rec.stop();
      entry.rec = spawn();
      if (entry.phase !== undefined) entry.rec.setPhase(entry.phase);
      for (const [name, [get, o]] of entry.tracks) entry.rec.track(name, get, o);
      for (const [fn] of entry.subs) entry.subs.set(fn, entry.rec.subscribe(fn));
    };
    const handle = {};
    for (const v of VERBS) handle[v] = (...a) => entry.rec[v](...a);
    handle.setPhase = (p) => {
      entry.phase = p;
      return entry.rec.setPhase(p);
    };
    handle.track = (name, get, o) => {
      entry.tracks.set(name, [get, o]);
      return entry.rec.track(name, get, o);
    };
    handle.subscribe = (fn) => {
      entry.subs.set(fn, entry.rec.subscribe(fn));
      return () => {
        const off = entry.subs.get(fn);
        entry.subs.delete(fn);
        if (off) off();
      };
    };
    handle.stop = () => {
      live.delete(entry);
      return entry.rec.stop();
    };
    entry.handle = Object.freeze(handle);
    live.add(entry);
    return entry;
  }

  // the clock and the scenes first (a launched bench put them there
  // already); a page opened for a bench gets no recorder and no panel
  // (descriptors, not Object.assign: `build` and `rec` stay getters)
  const api = globalThis.sloptimize = Object.defineProperties(installBench(globalThis, { mode: 'passthrough' }), Object.getOwnPropertyDescriptors({
    recorder: null,
    panel: null,
    get build() { return build; },
    createRecorder(options = {}) {
      const cur = api.recorder;
      if (cur && cur.auto && cur.options.renderer === options.renderer) cur.handle.stop();
      const entry = make(options, false);
      api.recorder = entry;
      return entry.handle;
    },
    get rec() { return api.recorder ? api.recorder.handle : null; },
    // A new build: every recorder without a build of its own stamps it
    // from now on (the plugin calls this through the HMR channel).
    setBuild(next) {
      if (typeof next !== 'string' || next === '' || next === build) return;
      build = next;
      for (const entry of live) if (!entry.own) entry.rebuild();
    },
  }));
  const benchPage = api.bench.urlScene() !== null;

  if (auto) {
    // three announces every WebGLRenderer to __THREE_DEVTOOLS__ as it is made
    const devtools = globalThis.__THREE_DEVTOOLS__ || (globalThis.__THREE_DEVTOOLS__ = new EventTarget());
    devtools.addEventListener('observe', (e) => {
      const r = e.detail;
      if (!r || !r.isWebGLRenderer || api.recorder || benchPage) return;
      queueMicrotask(() => {
        if (api.recorder) return;
        api.recorder = make({ renderer: r }, true);
      });
    });
  }
  if (panel && !benchPage) api.panel = createPanel({ endpoint: globalThis.location ? location.origin : undefined });
  // the open tab's end of the daemon's relay (relay.js): a bench stops the
  // recorder (its heartbeats would carry virtual time); the tab goes on
  // being recorded once the command is over
  if (relay && !benchPage) {
    let held = null;              // the recorder when the command began
    api.relay = startRelay({
      api,
      endpoint: globalThis.location ? location.origin : '',
      before() { held = api.recorder; },
      after(verb, result) {
        const was = held;
        held = null;
        if (!was || api.recorder) return;
        was.rebuild();
        api.recorder = was;
        if (result && Array.isArray(result.notes)) result.notes.push('the recorder was started again after it');
      },
    });
    // the game names its scenes after this runs: the daemon's list says them
    const scene = api.scene;
    api.scene = (...a) => {
      const out = scene(...a);
      api.relay.update();
      return out;
    };
  }
  if (hot && typeof hot.on === 'function') hot.on('sloptimize:build', (d) => api.setBuild(d && d.build));
  return api;
}
