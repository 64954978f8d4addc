// bench.js — named bench scenes and the bench loop (DESIGN §16, docs/bench.md).
//
// A game names its representative views in reviewed source (the agent
// must not invent its own workload, seed §8.3):
//
//   globalThis.sloptimize?.scene('crates', async (ctx) => {
//     buildCrates(); camera.position.set(0, 30, 40); camera.lookAt(0, 0, 0);
//     return { renderer, settleFrames: 10 };
//   });
//
// or reads `?sloptimize=bench:NAME` itself (bench.urlScene()), sets the
// view up at load, and then names it with `scene(NAME)` and no setup.
// `sloptimize.bench.run({scene, frames, warmup, runs})` then sets the
// scene up, steps the warm-up frames and R runs of N frames under the
// virtual clock (clock.js), each frame paced by the browser's own
// requestAnimationFrame, and measures per frame:
//
//   workMs    real time of the frame's work: clock.step(), which runs the
//             game's animation-frame callbacks (its logic and its render
//             calls, as far as the main thread does them)
//   insideMs  real time inside renderer.render (all calls of the frame)
//   counters  renderer.info: draw calls, triangles, points, lines (summed
//             over the frame's render calls), programs, geometries,
//             textures (at the frame's end)
//   gpuMs     where the browser gives it: a ring of TIME_ELAPSED queries
//             (EXT_disjoint_timer_query_webgl2) read frames late, never
//             blocking, never begun while another timer query is active,
//             dropped when GPU_DISJOINT is set
//
// and the regime from the unmasked renderer string
// (WEBGL_debug_renderer_info): software (SwiftShader, llvmpipe…),
// hardware, or unknown.  The extension's presence says nothing about the
// regime: SwiftShader has it too.
//
// The page needs nothing else: not the recorder (a recorder found running
// is stopped for the bench — its heartbeats would carry virtual time into
// the ledger — and the result says so), not the daemon.  The launched
// browser's CLI calls run() through CDP; the open tab's relay (relay.js)
// calls the same run().  progress() is what a driver polls while run() is under
// way: a page whose main thread hangs does not answer it.
//
// `sloptimize.bench.census({scene})` sets the scene up the same way, steps
// its settle frames and one more, and walks what that frame rendered
// (census.js): `sloptimize attribute --static --launch` calls it.  The
// identity (identity.js: ids, construction sites, track()) is installed
// here, before any game script, so the sites of what the game adds are
// known.
//
// Injected as a classic script too (see clock.js): imports only from
// ./clock.js, ./identity.js and ./census.js, each on one line; exports
// only `export function` / `export const`.
import { installClock, TICK_MS, CLOCK_MODE } from './clock.js';
import { installIdentity, object3DProto, SITE_UNKNOWN } from './identity.js';
import { takeCensus } from './census.js';

export const BENCH_DEFAULTS = Object.freeze({ frames: 600, warmup: 120, runs: 3 });
export const BENCH_LIMITS = Object.freeze({ frames: 100000, warmup: 100000, runs: 20 });
export const SCENE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
// frames a census watches after its walk for geometries removed and kept
export const WATCH_FRAMES = 120;
// how long a run waits for the document a page began to leave for (realFrame)
const LEAVE_WAIT_MS = 30000;
const GPU_RING = 8;          // queries in flight: results come ≥ 1 frame late
const GPU_DRAIN_FRAMES = 10; // real frames to wait for a run's last results

const SOFTWARE = /swiftshader|llvmpipe|softpipe|lavapipe|software rasterizer|microsoft basic render|mesa offscreen/i;

// The regime a renderer string puts timing in (seed §6.4).
export function classifyRegime(renderer) {
  if (typeof renderer !== 'string' || renderer === '') return 'unknown';
  return SOFTWARE.test(renderer) ? 'software' : 'hardware';
}

// Nearest-rank percentile of the first n values of an ascending array:
// the value at rank ceil(q × n) (1-based), a value that was measured —
// never an interpolation between two frames.
export function nearestRank(sorted, n, q) {
  if (n <= 0) return NaN;
  const rank = Math.min(n, Math.max(1, Math.ceil(q * n)));
  return sorted[rank - 1];
}

// Median of n values (the mean of the middle two for an even n).
export function median(values, n = values.length) {
  if (n <= 0) return NaN;
  const s = Float64Array.from(values.slice(0, n)).sort();
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// The statistics of one run's frame times: values[0..n), NaN entries (a
// frame without a measure) left out.  null when nothing was measured.
export function summarize(values, n = values.length) {
  const s = new Float64Array(n);
  let m = 0, sum = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (Number.isFinite(v)) { s[m++] = v; sum += v; }
  }
  if (m === 0) return null;
  const sorted = s.subarray(0, m).sort();
  return {
    n: m,
    medianMs: m % 2 ? sorted[(m - 1) / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2,
    p95Ms: nearestRank(sorted, m, 0.95),
    p99Ms: nearestRank(sorted, m, 0.99),
    maxMs: sorted[m - 1],
    meanMs: sum / m,
  };
}

// A counter over a run: its median, and its range (a counter that moves
// inside a run is animation; one whose medians differ between runs makes
// the bench's counters unstable).
export function counterStats(values, n = values.length) {
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < n; i++) { if (values[i] < lo) lo = values[i]; if (values[i] > hi) hi = values[i]; }
  return { median: median(values, n), min: lo, max: hi };
}

// Round for the result: a few decimals, never a long float tail.
const r3 = (x) => Math.round(x * 1000) / 1000;

function checkOptions(o) {
  const opt = { ...BENCH_DEFAULTS, setupTimeoutMs: 30000, waitSceneMs: 10000, seed: 1, ...o };
  if (typeof opt.scene !== 'string' || !SCENE_NAME.test(opt.scene))
    throw new Error(`bench: scene must be a name of letters, digits, '.', '_' or '-' (at most 64), not ${JSON.stringify(opt.scene)}`);
  for (const k of ['frames', 'warmup', 'runs']) {
    const v = opt[k], lo = k === 'warmup' ? 0 : 1;
    if (!Number.isInteger(v) || v < lo || v > BENCH_LIMITS[k])
      throw new Error(`bench: ${k} is a whole number from ${lo} to ${BENCH_LIMITS[k]}, not ${JSON.stringify(v)}`);
  }
  return opt;
}

/*
 * A replayed hitch frame's counters against the recorded ones: for each
 * counter that moved when recorded, whether it moved the same way in the
 * replay — in the same direction and by at least half as much (counters
 * are exact: a cause that is back moves them as it did; a follow camera's
 * few draw calls into or out of view are not a crowd's thousand).
 * `replayed` null: the replay never reached the frame.  reproduced: true
 * when every such counter moved the same way, false when one did not,
 * null when none moved when recorded (a time-only hitch) or no frame.
 */
export function compareHitch(recorded, replayed, keys) {
  const compared = {};
  for (const k of keys) {
    const want = recorded[k];
    if (typeof want !== 'number' || want === 0) continue;
    const got = replayed ? replayed[k] || 0 : null;
    compared[k] = { recorded: want, replayed: got,
      moved: got !== null && Math.sign(got) === Math.sign(want) && Math.abs(got) * 2 >= Math.abs(want) };
  }
  const moved = Object.keys(compared);
  return { compared, reproduced: replayed === null || moved.length === 0 ? null : moved.every((k) => compared[k].moved) };
}

// Where a replay is held against its record: the hitch's own frame and
// what moved in it — or, when the record says its stall was the frame
// before's work (`before`: a crowd, a compile, an upload the GPU process
// finished late), that frame and what moved there.
export function replayTarget(frame, hitch) {
  const b = hitch && hitch.before;
  if (b && Number.isInteger(b.frame) && b.delta && typeof b.delta === 'object') return { frame: b.frame, delta: b.delta, why: 'frame-before' };
  return { frame, delta: hitch && hitch.delta && typeof hitch.delta === 'object' ? hitch.delta : {}, why: 'hitch' };
}

// The query-parameter way of naming a scene: ?sloptimize=bench:NAME.
export function urlScene(search) {
  const m = /(?:^|[?&])sloptimize=bench(?::|%3A)([^&#]*)/i.exec(String(search || ''));
  if (!m) return null;
  try { return decodeURIComponent(m[1]); } catch { return null; }
}

/*
 * The GPU timer: one TIME_ELAPSED query around each frame's work, in a
 * ring, results read when the browser has them (the frame-profiler seed's
 * idiom).  begin() refuses while another timer query is active (the
 * game's own, stats-gl's); a game that begins one while ours is active
 * ends ours (its sample is void) and turns the timer off for the bench,
 * with the reason.  A disjoint result (the GPU's clock jumped) is dropped.
 */
function createGpuTimer(gl) {
  const none = (why) => ({ available: false, why, begin() {}, end() {}, poll() {}, stop() {}, frames: 0, dropped: null });
  if (!gl || typeof gl.createQuery !== 'function') return none('not a WebGL2 context');
  const ext = gl.getExtension('EXT_disjoint_timer_query_webgl2');
  if (!ext) return none('the browser does not expose EXT_disjoint_timer_query_webgl2');
  const slots = [];
  for (let i = 0; i < GPU_RING; i++) slots.push({ q: gl.createQuery(), frame: -1, busy: false });
  let head = 0, active = null, off = null;
  const dropped = { busy: 0, disjoint: 0, late: 0, foreign: 0 };
  let frames = 0;
  const origBegin = gl.beginQuery, origEnd = gl.endQuery;
  // another user of TIME_ELAPSED while ours is open: ours gives way
  gl.beginQuery = function (target, q) {
    if (active && target === ext.TIME_ELAPSED_EXT && q !== active.q) {
      origEnd.call(gl, ext.TIME_ELAPSED_EXT);
      active.busy = false; active.frame = -1; active = null;
      dropped.foreign++;
      off = 'the page runs its own timer queries (stats-gl?): GPU time is not measured while it does';
    }
    return origBegin.call(this, target, q);
  };
  const timer = {
    available: true,
    get why() { return off; },
    get frames() { return frames; },
    dropped,
    begin(frame) {
      if (off) return;
      if (gl.getQuery(ext.TIME_ELAPSED_EXT, gl.CURRENT_QUERY)) { dropped.busy++; return; }
      const s = slots[head];
      if (s.busy) { dropped.busy++; return; }     // ring full: results not back yet
      origBegin.call(gl, ext.TIME_ELAPSED_EXT, s.q);
      s.busy = true; s.frame = frame; active = s;
      head = (head + 1) % GPU_RING;
    },
    end() {
      if (!active) return;
      origEnd.call(gl, ext.TIME_ELAPSED_EXT);
      active = null;
    },
    // hand each result that is back to sink(frame, ms)
    poll(sink) {
      const disjoint = gl.getParameter(ext.GPU_DISJOINT_EXT);
      for (const s of slots) {
        if (!s.busy || s === active) continue;
        if (!gl.getQueryParameter(s.q, gl.QUERY_RESULT_AVAILABLE)) continue;
        const ns = gl.getQueryParameter(s.q, gl.QUERY_RESULT);
        s.busy = false;
        if (disjoint) { dropped.disjoint++; continue; }
        frames++;
        sink(s.frame, ns / 1e6);
      }
    },
    // the results still out are dropped: counted as late
    stop() {
      if (active) { origEnd.call(gl, ext.TIME_ELAPSED_EXT); active = null; }
      for (const s of slots) { if (s.busy) { dropped.late++; s.busy = false; } gl.deleteQuery(s.q); }
      gl.beginQuery = origBegin;
    },
  };
  return timer;
}

// What a run says of its GPU timer: results read and dropped, or why off.
function timerState(gpu) {
  return gpu.available
    ? { available: true, frames: gpu.frames, dropped: { ...gpu.dropped }, ...(gpu.why ? { why: gpu.why } : {}) }
    : { available: false, why: gpu.why };
}

function rendererInfo(gl) {
  const out = { renderer: null, vendor: null };
  if (!gl) return out;
  const dbg = gl.getExtension('WEBGL_debug_renderer_info');
  if (dbg) {
    out.renderer = String(gl.getParameter(dbg.UNMASKED_RENDERER_WEBGL));
    out.vendor = String(gl.getParameter(dbg.UNMASKED_VENDOR_WEBGL));
  }
  return out;
}

/*
 * installBench(g, {mode, seed, leaveWaitMs}) → the page's bench API on
 * g.sloptimize (merged into what is there: the dev bootstrap's
 * recorder and panel live beside it).  The clock is installed at once
 * when virtual, at the first bench when passthrough.  Once per global.
 */
export function installBench(g = globalThis, { mode = 'passthrough', seed = 1, leaveWaitMs = LEAVE_WAIT_MS } = {}) {
  const api = g.sloptimize && typeof g.sloptimize === 'object' ? g.sloptimize : (g.sloptimize = {});
  if (api.bench) return api;
  // A dev page's clock is installed when a bench first needs it, not at
  // load: in passthrough its requestAnimationFrame stands between the
  // browser and the game's callbacks, and Long Animation Frames then names
  // that wrapper — a script of ours, which the recorder never names —
  // instead of the game's own function.  The launched browser pins the
  // game from its first line ('virtual'), so it installs at once.
  let clock = mode === 'virtual' ? installClock(g, { mode, seed }) : null;
  const needClock = () => clock || (clock = installClock(g, { mode, seed }));
  const realNow = () => (clock ? clock.real() : g.performance.now());
  const identity = installIdentity(g);
  const scenes = new Map();
  const renderers = [];
  let state = { phase: 'idle', run: 0, runs: 0, frame: 0, frames: 0, scene: null, since: realNow(), error: null };

  // three announces each WebGLRenderer to __THREE_DEVTOOLS__ as it is made
  // (the dev bootstrap listens the same way); the last one is the default
  const devtools = g.__THREE_DEVTOOLS__ || (typeof g.EventTarget === 'function' ? (g.__THREE_DEVTOOLS__ = new g.EventTarget()) : null);
  if (devtools && typeof devtools.addEventListener === 'function')
    devtools.addEventListener('observe', (e) => { if (e.detail && e.detail.isWebGLRenderer) renderers.push(e.detail); });

  // A page that starts going to another document under a run (the game
  // set location.href, followed a link): the Navigation API says so as it
  // starts, while the old document may go on drawing until the new one
  // arrives — on a loaded machine long enough to finish the run and hand
  // back a measurement of a page that is leaving.  From then on no frame
  // is given: the run ends with the document (its caller sees the page go,
  // and where it went), or, if no new document comes (a response with no
  // page, a download), with an error after leaveWaitMs.  A navigation the
  // page keeps (a router's intercept(): navigatesuccess) or that does not
  // happen (preventDefault, a later one: navigateerror) gives the frames
  // back at once.
  let leaving = null;         // { url, held: frames waiting on the leave }
  const nav = g.navigation;
  if (nav && typeof nav.addEventListener === 'function') {
    nav.addEventListener('navigate', (e) => {
      const d = e.destination;
      if (d && d.sameDocument === false && !e.downloadRequest) leaving = { url: d.url, held: new Set() };
    });
    const stayed = () => {
      const l = leaving;
      leaving = null;
      if (l) for (const go of l.held) go();
    };
    nav.addEventListener('navigatesuccess', stayed);
    nav.addEventListener('navigateerror', stayed);
  }
  const realFrame = () => new Promise((resolve, reject) => {
    const l = leaving;
    if (l === null) {
      if (clock.realRaf) clock.realRaf(resolve);
      else setTimeout(resolve, 0);
      return;
    }
    const go = () => { clearTimeout(t); realFrame().then(resolve, reject); };
    // the page is still here: this run ends, a later one may go on
    const t = setTimeout(() => {
      l.held.delete(go);
      if (leaving === l) leaving = null;
      reject(new Error(`the page began to go to ${l.url} under the run and was still here ${leaveWaitMs / 1000} s later: ` +
        'the game left the page it was run on, so nothing was measured'));
    }, leaveWaitMs);
    l.held.add(go);
  });
  const setPhase = (phase, extra = {}) => { state = { ...state, ...extra, phase, since: realNow() }; };
  // one long call at a time: what every verb checks first
  const notRunning = (verb) => {
    if (state.phase !== 'idle' && state.phase !== 'done' && state.phase !== 'failed')
      throw new Error(`${verb}: a bench is already running (${state.phase})`);
  };

  function scene(name, setup, options = {}) {
    if (typeof name !== 'string' || !SCENE_NAME.test(name))
      throw new Error(`sloptimize.scene: a name of letters, digits, '.', '_' or '-' (at most 64), not ${JSON.stringify(name)}`);
    if (setup !== undefined && typeof setup !== 'function')
      throw new TypeError(`sloptimize.scene('${name}'): setup is a function`);
    scenes.set(name, { setup: setup || null, options });
  }

  // A scene counts once the game has named it: a game that sets its view
  // up at load from ?sloptimize=bench:NAME says so with scene(NAME) and
  // no setup.  The URL alone is not enough — the launched browser always
  // carries it, and a typo must not bench whatever view the page shows.
  async function waitScene(name, ms) {
    for (let waited = 0; ; waited += 25) {
      if (scenes.has(name)) return scenes.get(name);
      if (waited >= ms) {
        const known = [...scenes.keys()];
        throw new Error(`bench: no scene '${name}' on this page (${known.length ? `it has: ${known.join(', ')}` : 'it names none'}); ` +
          `a game names one with sloptimize.scene('${name}', setup) or reads ?sloptimize=bench:${name} (docs/bench.md)`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  // what setup gets: a way to run frames (a setup that needs the game's
  // loop to turn calls it; nothing runs frames behind its back, so the
  // number of frames before the bench is the same every time)
  const setupContext = {
    get clock() { return needClock(); },
    async frames(n = 1) {
      for (let i = 0; i < n; i++) { await realFrame(); clock.step(); }
    },
  };

  // A recorder found running is stopped: its heartbeats would carry
  // virtual time (the relay starts it again after the command).
  function stopRecorder(notes) {
    const rec = api.recorder && api.recorder.rec ? api.recorder.rec : api.rec;
    if (rec && typeof rec.stop === 'function') {
      rec.stop();
      if (api.recorder) api.recorder = null;
      notes.push('the recorder was running and is stopped for the bench (its heartbeats would carry virtual time)');
    }
  }

  // The scene brought to its view: named by the game, the recorder
  // stopped, setup() run under its deadline, the renderer found.  What
  // run() and capture() share.
  async function prepare(opt) {
    const entry = await waitScene(opt.scene, opt.waitSceneMs);
    const notes = [];
    stopRecorder(notes);

    setPhase('setup');
    let setupOut = {};
    if (entry.setup) {
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`bench: the setup of scene '${opt.scene}' did not finish in ${opt.setupTimeoutMs / 1000} s`)),
          opt.setupTimeoutMs);
      });
      try {
        setupOut = (await Promise.race([Promise.resolve().then(() => entry.setup(setupContext)), timeout])) || {};
      } catch (e) {
        if (/did not finish/.test(String(e && e.message))) throw e;
        throw new Error(`bench: the setup of scene '${opt.scene}' threw: ${(e && e.message) || e}`);
      } finally {
        clearTimeout(timer);
      }
    }
    const renderer = setupOut.renderer || entry.options.renderer || renderers[renderers.length - 1];
    if (!renderer || typeof renderer.render !== 'function' || !renderer.info)
      throw new Error(`bench: scene '${opt.scene}' has no three.js renderer to measure: return { renderer } from its setup`);
    const settle = Number.isInteger(setupOut.settleFrames) && setupOut.settleFrames >= 0 ? setupOut.settleFrames
      : Number.isInteger(entry.options.settleFrames) ? entry.options.settleFrames : 0;
    return { entry, renderer, settle, notes };
  }

  async function run(options = {}) {
    notRunning('bench');
    const opt = checkOptions(options);
    needClock();
    const t0 = clock.real();
    setPhase('scene', { scene: opt.scene, run: 0, runs: opt.runs, frame: 0, frames: opt.frames, error: null });
    const engaged = clock.engage({ seed: opt.seed });
    const errorsBefore = clock.errors.count;
    let restore = null, gpu = null;
    try {
      const { entry, renderer, settle, notes } = await prepare(opt);

      // inside render, and the frame's counters summed over its calls
      const info = renderer.info;
      const cur = { inside: 0, calls: 0, triangles: 0, points: 0, lines: 0, renders: 0 };
      const original = renderer.render;
      const wrapper = function (...args) {
        const a = clock.real();
        try {
          return original.apply(this, args);
        } finally {
          cur.inside += clock.real() - a;
          cur.renders++;
          if (info.autoReset !== false) {
            cur.calls += info.render.calls; cur.triangles += info.render.triangles;
            cur.points += info.render.points; cur.lines += info.render.lines;
          }
        }
      };
      renderer.render = wrapper;
      restore = () => { if (renderer.render === wrapper) renderer.render = original; };
      const gl = typeof renderer.getContext === 'function' ? renderer.getContext() : null;
      const device = rendererInfo(gl);
      gpu = createGpuTimer(gl);

      const N = opt.frames;
      const work = new Float64Array(N), inside = new Float64Array(N), gpuMs = new Float64Array(N);
      const K = ['calls', 'triangles', 'points', 'lines', 'programs', 'geometries', 'textures'];
      const counters = Object.fromEntries(K.map((k) => [k, new Float64Array(N)]));
      let gpuBase = 0;        // frame numbers of the run under way start here
      const gpuSink = (f, ms) => { const i = f - gpuBase; if (i >= 0 && i < N) gpuMs[i] = ms; };

      // one frame: paced by the browser's frame, timed on the real clock
      let frameNo = 0;
      async function frame(i, measuring) {
        await realFrame();
        cur.inside = 0; cur.calls = 0; cur.triangles = 0; cur.points = 0; cur.lines = 0; cur.renders = 0;
        if (measuring) gpu.begin(frameNo);
        const a = clock.real();
        clock.step();
        const w = clock.real() - a;
        if (measuring) gpu.end();
        frameNo++;
        if (measuring) {
          work[i] = w; inside[i] = cur.inside;
          if (info.autoReset === false) {
            cur.calls = info.render.calls; cur.triangles = info.render.triangles;
            cur.points = info.render.points; cur.lines = info.render.lines;
          }
          counters.calls[i] = cur.calls; counters.triangles[i] = cur.triangles;
          counters.points[i] = cur.points; counters.lines[i] = cur.lines;
          counters.programs[i] = Array.isArray(info.programs) ? info.programs.length : NaN;
          counters.geometries[i] = info.memory ? info.memory.geometries : NaN;
          counters.textures[i] = info.memory ? info.memory.textures : NaN;
        }
        gpu.poll(gpuSink);
        state.frame = i + 1;
      }

      setPhase('settle', { frames: settle, frame: 0 });
      for (let i = 0; i < settle; i++) await frame(i, false);
      setPhase('warmup', { frames: opt.warmup, frame: 0 });
      const w0 = clock.real();
      for (let i = 0; i < opt.warmup; i++) await frame(i, false);
      const warmupMs = clock.real() - w0;

      const runs = [];
      let framesWithoutRender = 0;
      for (let r = 0; r < opt.runs; r++) {
        setPhase('run', { run: r + 1, frames: N, frame: 0 });
        gpuMs.fill(NaN);
        gpuBase = frameNo;
        const r0 = clock.real();
        for (let i = 0; i < N; i++) {
          await frame(i, true);
          if (cur.renders === 0) framesWithoutRender++;
        }
        const wallMs = clock.real() - r0;
        // the last frames' GPU results come a few frames later: wait for
        // them without stepping the game, a bounded number of frames
        for (let k = 0; k < GPU_DRAIN_FRAMES && gpu.available && !gpu.why; k++) {
          await realFrame();
          gpu.poll(gpuSink);
        }
        const frameStats = summarize(work, N);
        const insideStats = summarize(inside, N);
        const gpuStats = gpu.available && !gpu.why ? summarize(gpuMs, N) : null;
        const c = {};
        let vary = false;
        for (const k of K) {
          const st = counterStats(counters[k], N);
          if (Number.isNaN(st.median)) continue;
          c[k] = st.median;
          if (st.min !== st.max) { vary = true; c[`${k}Range`] = [st.min, st.max]; }
        }
        const one = {
          frame: { medianMs: r3(frameStats.medianMs), p95Ms: r3(frameStats.p95Ms), p99Ms: r3(frameStats.p99Ms),
            maxMs: r3(frameStats.maxMs), meanMs: r3(frameStats.meanMs) },
          render: { insideMs: r3(insideStats.medianMs), insideP95Ms: r3(insideStats.p95Ms) },
          counters: c,
          countersVary: vary,
          wallMs: r3(wallMs),
        };
        if (gpuStats) one.gpu = { medianMs: r3(gpuStats.medianMs), p95Ms: r3(gpuStats.p95Ms), frames: gpuStats.n };
        runs.push(one);
      }
      gpu.stop();
      restore();
      restore = null;

      const errors = clock.errors.count - errorsBefore;
      if (framesWithoutRender > 0)
        notes.push(`${framesWithoutRender} measured frames made no render call: the game's loop did not run then`);
      const result = {
        v: 1,
        scene: opt.scene,
        sceneSetup: entry.setup ? 'setup' : 'at-load',
        frames: N,
        warmup: opt.warmup,
        settleFrames: settle,
        runs: opt.runs,
        clock: { mode: CLOCK_MODE, tickMs: r3(TICK_MS), seed: opt.seed, engagedBy: engaged ? 'bench' : 'page-load' },
        regime: classifyRegime(device.renderer),
        device,
        viewport: {
          width: g.innerWidth, height: g.innerHeight, devicePixelRatio: g.devicePixelRatio,
          canvas: gl && gl.canvas ? [gl.canvas.width, gl.canvas.height] : null,
        },
        gpuTimer: timerState(gpu),
        perRun: runs,
        setupMs: r3(w0 - t0),
        warmupMs: r3(warmupMs),
        errors: errors ? { count: errors, first: clock.errors.first } : { count: 0 },
        notes,
      };
      setPhase('done');
      return result;
    } catch (e) {
      setPhase('failed', { error: String((e && e.message) || e) });
      throw e;
    } finally {
      if (restore) restore();
      if (gpu && state.phase === 'failed') { try { gpu.stop(); } catch { /* the context may be lost */ } }
      if (engaged) clock.release();
    }
  }

  /*
   * The gate's frame (docs/gate.md): the scene set up as for a bench, its
   * settle frames and `warmup` frames stepped, then one more frame — the
   * first a bench would measure — and the canvas read as PNG in the same
   * task as that frame's render.  Same task matters: a game's canvas has
   * no preserveDrawingBuffer, so the drawing buffer is only sure to hold
   * the frame until the browser composites it, after this task; read here,
   * it is exactly what the game drew, with nothing of the page's HTML over
   * it and nothing of the compositor's scaling.  Resolves
   * {v, scene, frame, png (base64), width, height, …}.
   */
  async function capture(options = {}) {
    notRunning('gate');
    const opt = checkOptions(options);
    setPhase('scene', { scene: opt.scene, run: 0, runs: 0, frame: 0, frames: 0, error: null });
    const engaged = needClock().engage({ seed: opt.seed });
    const errorsBefore = clock.errors.count;
    let restore = null;
    try {
      const { entry, renderer, settle, notes } = await prepare(opt);
      let renders = 0;
      const original = renderer.render;
      const wrapper = function (...args) { renders++; return original.apply(this, args); };
      renderer.render = wrapper;
      restore = () => { if (renderer.render === wrapper) renderer.render = original; };
      const steps = async (phase, n) => {
        setPhase(phase, { frames: n, frame: 0 });
        for (let i = 0; i < n; i++) { await realFrame(); clock.step(); state.frame = i + 1; }
      };
      await steps('settle', settle);
      await steps('warmup', opt.warmup);
      setPhase('capture', { frames: 1, frame: 0 });
      await realFrame();
      renders = 0;
      clock.step();
      // no await between the step and the read: the same task
      const canvas = renderer.domElement;
      if (renders === 0)
        throw new Error(`gate: the game made no render call in frame ${clock.frame} of scene '${opt.scene}': its loop did not run then, nothing to capture`);
      if (!canvas || typeof canvas.toDataURL !== 'function')
        throw new Error(`gate: scene '${opt.scene}': the renderer's canvas cannot be read (an OffscreenCanvas?)`);
      const data = canvas.toDataURL('image/png');
      state.frame = 1;
      const comma = data.indexOf(',');
      if (!data.startsWith('data:image/png;base64,') || comma < 0)
        throw new Error(`gate: the canvas of scene '${opt.scene}' gave no PNG (${data.slice(0, 40)}…): a canvas of 0 pixels?`);
      restore();
      restore = null;
      const gl = typeof renderer.getContext === 'function' ? renderer.getContext() : null;
      const device = rendererInfo(gl);
      const errors = clock.errors.count - errorsBefore;
      const result = {
        v: 1,
        scene: opt.scene,
        sceneSetup: entry.setup ? 'setup' : 'at-load',
        frame: clock.frame,
        settleFrames: settle,
        warmup: opt.warmup,
        renders,
        clock: { mode: CLOCK_MODE, tickMs: r3(TICK_MS), seed: opt.seed, engagedBy: engaged ? 'bench' : 'page-load' },
        regime: classifyRegime(device.renderer),
        device,
        viewport: { width: g.innerWidth, height: g.innerHeight, devicePixelRatio: g.devicePixelRatio },
        width: canvas.width,
        height: canvas.height,
        png: data.slice(comma + 1),
        errors: errors ? { count: errors, first: clock.errors.first } : { count: 0 },
        notes,
      };
      setPhase('done');
      return result;
    } catch (e) {
      setPhase('failed', { error: String((e && e.message) || e) });
      throw e;
    } finally {
      if (restore) restore();
      if (engaged) clock.release();
    }
  }

  /*
   * The static census (docs/attribute.md): the scene set up as for a
   * bench, its settle frames stepped, then one more frame whose render
   * calls name the scenes drawn; those are walked (census.js) with the
   * clock still paused, so the walk is of exactly that frame's world.
   * Resolves the census document (schemas/census.json, less the CLI's
   * fields) with the scene, the clock and the frame.
   */
  async function census(options = {}) {
    notRunning('census');
    const opt = { setupTimeoutMs: 30000, waitSceneMs: 10000, seed: 1, watchFrames: WATCH_FRAMES, ...options };
    if (!Number.isInteger(opt.watchFrames) || opt.watchFrames < 0 || opt.watchFrames > 3600)
      throw new Error(`census: watchFrames must be a whole number from 0 to 3600, not ${JSON.stringify(opt.watchFrames)}`);
    if (typeof opt.scene !== 'string' || !SCENE_NAME.test(opt.scene))
      throw new Error(`census: scene must be a name of letters, digits, '.', '_' or '-' (at most 64), not ${JSON.stringify(opt.scene)}`);
    setPhase('scene', { scene: opt.scene, run: 0, runs: 0, frame: 0, frames: 0, error: null });
    const engaged = needClock().engage({ seed: opt.seed });
    try {
      const { entry, renderer, settle, notes } = await prepare(opt);
      const { drawn } = await keptFrame(renderer, settle, opt.scene, 'census');
      const t0 = clock.real();
      const doc = takeCensus(drawn, { renderer, identity, g });
      const walkMs = clock.real() - t0;
      state.frame = 1;
      const undisposed = await watchUndisposed(renderer, drawn, opt.watchFrames);
      if (undisposed.hint) doc.hints.push(undisposed.hint);
      doc.notes.push(undisposed.note);
      setPhase('done');
      return {
        ...doc,
        scene: opt.scene,
        sceneSetup: entry.setup ? 'setup' : 'at-load',
        frame: clock.frame,
        settleFrames: settle,
        scenesDrawn: drawn.length,
        clock: { mode: CLOCK_MODE, tickMs: r3(TICK_MS), seed: opt.seed, engagedBy: engaged ? 'bench' : 'page-load' },
        viewport: { width: g.innerWidth, height: g.innerHeight, devicePixelRatio: g.devicePixelRatio },
        sites: { patched: identity.patched },
        walkMs: r3(walkMs),
        notes: [...notes, ...doc.notes, ...(identity.patched ? [] : ['no three.js Scene was announced before the game built its objects: every site is unknown'])],
      };
    } catch (e) {
      setPhase('failed', { error: String((e && e.message) || e) });
      throw e;
    } finally {
      if (engaged) clock.release();
    }
  }

  /*
   * undisposed-suspect (docs/attribute.md): after the census's walk the
   * game runs `frames` more frames, and every mesh removed from the scene
   * in them is remembered with the site that added it; a geometry of one
   * that is neither disposed (three dispatches 'dispose') nor back in the
   * scene by the end is kept by three for nothing.  The renderer's own
   * count of geometries before and after is the corroborating evidence.
   * Resolves {hint (or null), note}.
   */
  async function watchUndisposed(renderer, scenes, frames) {
    const proto = scenes.length ? object3DProto(scenes[0]) : null;
    if (frames === 0 || !proto || typeof proto.remove !== 'function')
      return { hint: null, note: `undisposed-suspect was not watched (${frames === 0 ? 'watchFrames 0' : 'no three.js Object3D to watch'})` };
    const mem = () => (renderer.info && renderer.info.memory ? renderer.info.memory.geometries : NaN);
    const removed = new Map();      // geometry → {site, disposed, listener}
    const note = (o) => {
      const visit = (m) => {
        const geo = m.isMesh || m.isLine || m.isPoints ? m.geometry : null;
        if (!geo || removed.has(geo) || typeof geo.addEventListener !== 'function') return;
        const e = { site: identity.siteOf(m), disposed: false };
        e.listener = () => { e.disposed = true; };
        geo.addEventListener('dispose', e.listener);
        removed.set(geo, e);
      };
      if (typeof o.traverse === 'function') o.traverse(visit); else visit(o);
    };
    const original = proto.remove;
    const wrapper = function remove(...objs) {
      for (const o of objs) if (o && o.parent === this) note(o);
      return original.apply(this, objs);
    };
    const before = mem();
    proto.remove = wrapper;
    try {
      setPhase('watch', { frames, frame: 0 });
      for (let i = 0; i < frames; i++) { await realFrame(); clock.step(); state.frame = i + 1; }
    } finally {
      if (proto.remove === wrapper) proto.remove = original;
      for (const [geo, e] of removed) geo.removeEventListener('dispose', e.listener);
    }
    const after = mem();
    const inScene = new Set();
    for (const sc of scenes) sc.traverse((m) => { if (m.geometry) inScene.add(m.geometry); });
    const sites = new Map();
    let n = 0;
    for (const [geo, e] of removed) {
      if (e.disposed || inScene.has(geo)) continue;
      n++;
      sites.set(e.site, (sites.get(e.site) || 0) + 1);
    }
    const noteText = `undisposed-suspect: ${removed.size} geometries of meshes removed in ${frames} frames watched after the walk, ${n} neither disposed nor back in the scene`;
    if (n === 0) return { hint: null, note: noteText };
    const bySite = [...sites].sort((a, b) => b[1] - a[1]);
    const site = bySite[0][0];
    const fixText = `dispose() the geometry (and the material and textures nothing else uses) of what is removed from the scene, or reuse it`;
    return {
      note: noteText,
      hint: {
        kind: 'undisposed-suspect',
        site,
        evidence: { geometries: n, watchedFrames: frames, sites: bySite.slice(0, 3).map(([s, k]) => ({ site: s, geometries: k })),
          rendererGeometries: Number.isFinite(before) && Number.isFinite(after) ? { before, after } : null },
        estimate: null,
        entities: [],
        fix: site !== SITE_UNKNOWN ? `${fixText} at ${site}` : `${fixText} (site unknown: sloptimize.track() the objects where they are made to name it)`,
      },
    };
  }

  /*
   * The settle frames stepped, then one more whose render calls are kept
   * — [scene, camera, render target] each, in order — with the scenes
   * they drew.  What census() walks and attribute() replays (with
   * `original`, the render the game had).
   */
  async function keptFrame(renderer, settle, sceneName, verb) {
    const setTarget = typeof renderer.setRenderTarget === 'function' && typeof renderer.getRenderTarget === 'function';
    const kept = [];
    const original = renderer.render;
    const wrapper = function (sceneArg, cam, ...rest) {
      kept.push([sceneArg, cam, setTarget ? renderer.getRenderTarget() : null]);
      return original.call(this, sceneArg, cam, ...rest);
    };
    renderer.render = wrapper;
    try {
      setPhase('settle', { frames: settle, frame: 0 });
      for (let i = 0; i < settle; i++) { await realFrame(); clock.step(); state.frame = i + 1; }
      setPhase(verb, { frames: 1, frame: 0 });
      await realFrame();
      kept.length = 0;
      clock.step();
    } finally {
      if (renderer.render === wrapper) renderer.render = original;
    }
    if (kept.length === 0)
      throw new Error(`${verb}: the game made no render call in frame ${clock.frame} of scene '${sceneName}': its loop did not run then, nothing to ${verb === 'census' ? 'walk' : verb}`);
    const drawn = [];
    for (const [sc] of kept) if (sc && !drawn.includes(sc)) drawn.push(sc);
    return { kept, drawn, original, setTarget };
  }

  /*
   * The measured bisection (docs/attribute.md): the scene set up as for a
   * census, its settle frames and one more stepped; that frame's render
   * calls (scene, camera, render target) are kept and the census walks
   * what they drew.  Then the game is PAUSED — the clock does not step, no
   * callback of the game runs — and the kept calls are replayed: `frames`
   * of them for a baseline, then the same with each candidate entity
   * hidden (every root of it `visible = false`, put back after), the
   * baseline again half-way and at the end.  Counters are exact (the same
   * world drawn again); times are the real time inside the replays, and a
   * difference within the spread of the three baselines is `noisy`.  The
   * first and last baseline frames are read as PNG in the task that drew
   * them: identical bytes say the world was left as it was.  Resolves the
   * attribution document (schemas/attribution.json, less the CLI's fields).
   */
  async function attribute(options = {}) {
    notRunning('attribute');
    const opt = { setupTimeoutMs: 30000, waitSceneMs: 10000, seed: 1, frames: 5, top: 20, ids: null, ...options };
    if (typeof opt.scene !== 'string' || !SCENE_NAME.test(opt.scene))
      throw new Error(`attribute: scene must be a name of letters, digits, '.', '_' or '-' (at most 64), not ${JSON.stringify(opt.scene)}`);
    if (!Number.isInteger(opt.frames) || opt.frames < 1 || opt.frames > 600)
      throw new Error(`attribute: frames must be a whole number from 1 to 600, not ${JSON.stringify(opt.frames)}`);
    if (!Number.isInteger(opt.top) || opt.top < 1 || opt.top > 200)
      throw new Error(`attribute: top must be a whole number from 1 to 200, not ${JSON.stringify(opt.top)}`);
    if (opt.ids !== null && (!Array.isArray(opt.ids) || opt.ids.length === 0 || opt.ids.length > 200 || !opt.ids.every((i) => typeof i === 'string' && i !== '')))
      throw new Error('attribute: ids must be a list of 1 to 200 entity ids');
    setPhase('scene', { scene: opt.scene, run: 0, runs: 0, frame: 0, frames: 0, error: null });
    const engaged = needClock().engage({ seed: opt.seed });
    const hidden = [];          // [object, visible before] of the candidate hidden now
    const unhide = () => { for (const [o, v] of hidden) o.visible = v; hidden.length = 0; };
    const touched = new Map();  // every object hidden once → its flag before the first time
    let gpu = null;
    try {
      const { entry, renderer, settle, notes } = await prepare(opt);
      const info = renderer.info;
      const { kept, drawn, original, setTarget } = await keptFrame(renderer, settle, opt.scene, 'attribute');
      const rootsOf = new Map();
      const census = takeCensus(drawn, { renderer, identity, g, rootsOut: rootsOf });

      // the candidates: the ids asked for, or the census's first by triangles
      let ids, unknown = [];
      if (opt.ids) {
        ids = opt.ids.filter((i) => rootsOf.has(i));
        unknown = opt.ids.filter((i) => !rootsOf.has(i));
        if (ids.length === 0)
          throw new Error(`attribute: no entity of scene '${opt.scene}' has the id${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (it has: ${[...rootsOf.keys()].slice(0, 10).join(', ')}${rootsOf.size > 10 ? ', …' : ''})`);
      } else {
        ids = census.entities.slice(0, opt.top).map((e) => e.id);
      }

      // one replay of the kept frame, measured: draw calls and triangles
      // summed over its calls, programs at its end, real time inside
      const one = { calls: 0, triangles: 0, insideMs: 0 };
      const replay = () => {
        const before = setTarget ? renderer.getRenderTarget() : null;
        one.calls = 0; one.triangles = 0;
        const a = clock.real();
        for (const [sc, cam, target] of kept) {
          if (setTarget) renderer.setRenderTarget(target);
          original.call(renderer, sc, cam);
          if (info.autoReset !== false) { one.calls += info.render.calls; one.triangles += info.render.triangles; }
        }
        one.insideMs = clock.real() - a;
        if (setTarget) renderer.setRenderTarget(before);
        if (info.autoReset === false) { one.calls = info.render.calls; one.triangles = info.render.triangles; }
      };
      const canvas = renderer.domElement;
      const readable = canvas && typeof canvas.toDataURL === 'function';
      const gl = typeof renderer.getContext === 'function' ? renderer.getContext() : null;
      // GPU time per replay, as the bench takes it: a query around each
      // replay, results read frames later (no wait on the GPU)
      gpu = createGpuTimer(gl);
      let spent = 0;
      const measure = async (png = false) => {
        const calls = [], tris = [], ms = [], gpuMs = [];
        const first = spent;
        const sink = (f, v) => { if (f >= first && f < first + opt.frames) gpuMs.push(v); };
        let shot = null;
        for (let i = 0; i < opt.frames; i++) {
          await realFrame();
          gpu.begin(spent);
          replay();
          gpu.end();
          // read in the task that drew it (see capture())
          if (png && i === 0 && readable) shot = canvas.toDataURL('image/png');
          calls.push(one.calls); tris.push(one.triangles); ms.push(one.insideMs);
          state.frame = ++spent;
          gpu.poll(sink);
        }
        // these replays' last results, before the next entity is hidden
        for (let k = 0; k < GPU_DRAIN_FRAMES && gpuMs.length < opt.frames && gpu.available && !gpu.why; k++) {
          await realFrame();
          gpu.poll(sink);
        }
        return { calls: median(calls), callsRange: [Math.min(...calls), Math.max(...calls)], triangles: median(tris),
          programs: Array.isArray(info.programs) ? info.programs.length : undefined, insideMs: median(ms),
          gpuMs: gpuMs.length > 0 && gpu.available && !gpu.why ? median(gpuMs) : undefined, shot };
      };
      setPhase('attribute', { frames: opt.frames * (ids.length + 3), frame: 0 });
      const base0 = await measure(true);
      const rows = [];
      let base1 = null;
      for (let k = 0; k < ids.length; k++) {
        if (k === Math.floor(ids.length / 2)) base1 = await measure();
        for (const o of rootsOf.get(ids[k])) {
          if (!touched.has(o)) touched.set(o, o.visible);
          hidden.push([o, o.visible]);
          o.visible = false;
        }
        const m = await measure();
        unhide();
        rows.push({ id: ids[k], m });
      }
      if (!base1) base1 = await measure();
      const base2 = await measure(true);
      // every flag as it was before the first time it was touched (read
      // again, not assumed: a game's own code may hold a setter)
      let restored = true;
      for (const [o, v] of touched) if (o.visible !== v) restored = false;

      const bases = [base0, base1, base2];
      const spreadMs = Math.max(...bases.map((b) => b.insideMs)) - Math.min(...bases.map((b) => b.insideMs));
      // GPU time only where every baseline has it (a timer turned off
      // half-way — the game's own queries — leaves it out, said below)
      const gpuOn = gpu.available && !gpu.why && bases.every((b) => b.gpuMs !== undefined);
      const gpuSpread = gpuOn ? Math.max(...bases.map((b) => b.gpuMs)) - Math.min(...bases.map((b) => b.gpuMs)) : 0;
      const stable = bases.every((b) => b.calls === base0.calls && b.triangles === base0.triangles && b.callsRange[0] === b.callsRange[1]);
      const byId = new Map(census.entities.map((e) => [e.id, e]));
      const entities = rows.map(({ id, m }) => {
        const e = byId.get(id);
        const dInside = base0.insideMs - m.insideMs;
        const out = {
          id, site: e ? e.site : SITE_UNKNOWN, meshes: e ? e.meshes : 0, triangles: e ? e.triangles : 0,
          dCalls: base0.calls - m.calls, dTriangles: base0.triangles - m.triangles,
          // noisy within the baselines' spread, and below zero: drawing
          // less cannot cost more, so a negative time is noise the three
          // baselines did not catch
          dInsideRenderMs: r3(dInside), noisy: dInside <= 0 || dInside <= spreadMs,
        };
        if (m.programs !== undefined && base0.programs !== undefined) out.dPrograms = base0.programs - m.programs;
        if (gpuOn && m.gpuMs !== undefined) {
          const dGpu = base0.gpuMs - m.gpuMs;
          out.dGpuMs = r3(dGpu);
          out.gpuNoisy = dGpu <= 0 || dGpu <= gpuSpread;
        }
        return out;
      });
      // ranked by what is exact: draw calls, then triangles; the time is
      // beside it, marked noisy where the baselines disagree by as much
      entities.sort((a, b) => b.dCalls - a.dCalls || b.dTriangles - a.dTriangles || (a.id < b.id ? -1 : 1));
      const device = rendererInfo(gl);
      const regime = classifyRegime(device.renderer);
      const allNotes = [...notes];
      if (unknown.length) allNotes.push(`no entity has the id${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: not measured`);
      if (!stable) allNotes.push('the baselines drew different counts: something outside the game\'s frame changes what is drawn; the differences are not exact');
      if (!readable) allNotes.push('the canvas cannot be read: the world was not compared by its pixels');
      if (!gpuOn) allNotes.push(`GPU time is not measured: ${gpu.why || 'no timer query result came back for every baseline'}; dGpuMs is absent`);
      else if (regime !== 'hardware') allNotes.push('GPU time from a software renderer times its emulation, not a GPU: dGpuMs is reported, never a cost');
      setPhase('done');
      return {
        v: 1,
        scene: opt.scene,
        sceneSetup: entry.setup ? 'setup' : 'at-load',
        frame: clock.frame,
        frames: opt.frames,
        renderCalls: kept.length,
        regime,
        device,
        clock: { mode: CLOCK_MODE, tickMs: r3(TICK_MS), seed: opt.seed, engagedBy: engaged ? 'bench' : 'page-load', paused: true },
        viewport: { width: g.innerWidth, height: g.innerHeight, devicePixelRatio: g.devicePixelRatio },
        baseline: { calls: base0.calls, triangles: base0.triangles, insideRenderMs: r3(base0.insideMs), spreadMs: r3(spreadMs), repeats: 3, stable,
          ...(gpuOn ? { gpuMs: r3(base0.gpuMs), gpuSpreadMs: r3(gpuSpread) } : {}) },
        gpuTimer: timerState(gpu),
        entities,
        rankedBy: 'dCalls, then dTriangles',
        sumsToBaseline: false,
        restored,
        pixelsIdentical: readable ? base0.shot === base2.shot : null,
        notes: allNotes,
      };
    } catch (e) {
      setPhase('failed', { error: String((e && e.message) || e) });
      throw e;
    } finally {
      unhide();
      // the timer's queries deleted and the context's beginQuery given back
      if (gpu) { try { gpu.stop(); } catch { /* the context may be lost */ } }
      if (engaged) clock.release();
    }
  }

  /*
   * A hitch replayed (docs/attribute.md "A hitch replayed", seed §5): the
   * view snapshot the recorder made of a hitch (`view`: the camera and the
   * animation-frame time of the frames from 30 before it, the viewport,
   * the visibility of track()ed entities) restored, and `frames` frames
   * stepped under the virtual clock at the recorded times (1/60 s apart
   * past them).  The first frame draws with the camera recorded for it;
   * from the next, the game's own logic has its camera (a game that sets
   * it every frame takes it back, said in a note).  Per frame: the counters, the real time of the
   * frame's work and inside render, and what the game added to the scene
   * in it (entity ids and sites).  The game's own state (physics,
   * mixers, spawn queues, its random numbers) is not a view's: the game
   * runs its own logic from where it is now, at the recorded times.
   * In the open tab the page is paused the while (nothing else runs the
   * game's frames); with `scene`, that scene is set up first (the
   * launched browser).  Resolves {v, ref, fidelity, frames: [...], …}.
   */
  async function repro(options = {}) {
    notRunning('repro');
    const opt = { setupTimeoutMs: 30000, waitSceneMs: 10000, seed: 1, frames: 35, scene: null, ...options };
    const view = opt.view;
    if (!view || typeof view !== 'object' || view.v !== 1 || view.fidelity !== 'view' || !Array.isArray(view.frames) ||
        view.frames.length === 0 || !view.frames.every((f) => f && Number.isInteger(f.frame) && Number.isFinite(f.t)))
      throw new Error('repro: view must be a view snapshot (v 1, fidelity "view", frames [{frame, t, camera}]) as the recorder writes it');
    if (!Number.isInteger(opt.frames) || opt.frames < 1 || opt.frames > 600)
      throw new Error(`repro: frames must be a whole number from 1 to 600, not ${JSON.stringify(opt.frames)}`);
    if (opt.scene !== null && (typeof opt.scene !== 'string' || !SCENE_NAME.test(opt.scene)))
      throw new Error(`repro: scene must be a name of letters, digits, '.', '_' or '-' (at most 64), not ${JSON.stringify(opt.scene)}`);
    setPhase('scene', { scene: opt.scene, run: 0, runs: 0, frame: 0, frames: opt.frames, error: null });
    const notes = [];
    let renderer = null, settle = 0, entry = null;
    if (opt.scene === null) {
      // the open tab: the game as it is, paused from the snapshot's time
      stopRecorder(notes);
      renderer = renderers[renderers.length - 1];
    }
    const engaged = needClock().engage({ seed: opt.seed, at: opt.scene === null ? view.frames[0].t : null });
    const undo = [];
    try {
      if (opt.scene !== null) {
        const p = await prepare(opt);
        ({ entry, renderer, settle } = p);
        notes.push(...p.notes);
      }
      if (!renderer || typeof renderer.render !== 'function' || !renderer.info)
        throw new Error('repro: this page has no three.js renderer (none was announced)');
      if (opt.scene !== null) {
        setPhase('settle', { frames: settle, frame: 0 });
        for (let i = 0; i < settle; i++) { await realFrame(); clock.step(); state.frame = i + 1; }
      }
      const info = renderer.info;

      // the visibility of the track()ed entities, as in the snapshot
      const want = new Map();
      for (const v of Array.isArray(view.visibility) ? view.visibility : [])
        if (v && typeof v.id === 'string' && typeof v.visible === 'boolean') want.set(v.id, v.visible);
      let visSet = 0;
      for (const o of identity.trackedObjects()) {
        const id = o.userData && o.userData.sloptimize && o.userData.sloptimize.id;
        if (!want.has(id) || o.visible === want.get(id)) continue;
        const was = o.visible;
        undo.push(() => { o.visible = was; });
        o.visible = want.get(id);
        visSet++;
      }

      // the recorded camera put on the camera of the first render call,
      // just before it draws (after the game's logic of that frame: a
      // game that sets its camera every frame would undo it before it was
      // seen); from the next frame the game's own logic has the camera
      const first = view.frames[0].camera;
      const fields = ['fov', 'zoom', 'near', 'far', 'aspect', 'left', 'right', 'top', 'bottom'];
      const cur = { renders: 0, calls: 0, triangles: 0, inside: 0 };
      let restoredOn = null, restoredAt = null, gameMoved = 0;
      const original = renderer.render;
      const wrapper = function (sceneArg, camera, ...rest) {
        if (cur.renders === 0 && camera && camera.position && camera.quaternion) {
          if (restoredOn === null && first && Array.isArray(first.position) && Array.isArray(first.quaternion)) {
            camera.position.fromArray(first.position);
            camera.quaternion.fromArray(first.quaternion);
            for (const f of fields) if (typeof first[f] === 'number' && typeof camera[f] === 'number') camera[f] = first[f];
            if (typeof camera.updateProjectionMatrix === 'function') camera.updateProjectionMatrix();
            restoredOn = camera;
            restoredAt = [...first.position, ...first.quaternion];
          } else if (restoredOn !== null && gameMoved === 0) {
            const now = [...camera.position.toArray(), ...camera.quaternion.toArray()];
            if (camera !== restoredOn || now.some((v, i) => Math.abs(v - restoredAt[i]) > 1e-6)) gameMoved = state.frame + 1;
          }
        }
        const a = clock.real();
        try {
          return original.call(this, sceneArg, camera, ...rest);
        } finally {
          cur.inside += clock.real() - a;
          cur.renders++;
          if (info.autoReset !== false) { cur.calls += info.render.calls; cur.triangles += info.render.triangles; }
        }
      };
      renderer.render = wrapper;
      undo.push(() => { if (renderer.render === wrapper) renderer.render = original; });

      // what the game adds in a frame: entities and the line that built them
      const added = new Map();   // site → {meshes, id: the first entity's, ids: how many}
      let addedMeshes = 0;
      const addProto = identity.addProto;
      if (addProto && typeof addProto.add === 'function') {
        const addOriginal = addProto.add;
        const addWrapper = function (...objs) {
          const out = addOriginal.apply(this, objs);
          for (const o of objs) {
            if (!o || typeof o !== 'object') continue;
            const note = (m) => {
              if (!(m.isMesh || m.isLine || m.isPoints || m.isSprite)) return;
              addedMeshes++;
              const e = identity.entityId(m);
              const site = identity.siteOf(e.root);
              const a = added.get(site);
              if (a) { a.meshes++; if (a.last !== e.id) { a.ids++; a.last = e.id; } } else if (added.size < 64) added.set(site, { meshes: 1, id: e.id, last: e.id, ids: 1 });
            };
            if (typeof o.traverse === 'function') o.traverse(note); else note(o);
          }
          return out;
        };
        addProto.add = addWrapper;
        undo.push(() => { if (addProto.add === addWrapper) addProto.add = addOriginal; });
      }

      setPhase('repro', { frames: opt.frames, frame: 0 });
      const steps = [];
      let prev = null;
      const K = ['calls', 'triangles', 'programs', 'geometries', 'textures'];
      const byFrame = view.frames;
      const last = byFrame[byFrame.length - 1];
      for (let i = 0; i < opt.frames; i++) {
        const rec = i < byFrame.length ? byFrame[i] : null;
        cur.renders = 0; cur.calls = 0; cur.triangles = 0; cur.inside = 0;
        added.clear(); addedMeshes = 0;
        await realFrame();
        const a = clock.real();
        clock.step(rec ? rec.t : undefined);
        const workMs = clock.real() - a;
        if (info.autoReset === false) { cur.calls = info.render.calls; cur.triangles = info.render.triangles; }
        const c = {
          calls: cur.calls, triangles: cur.triangles,
          programs: Array.isArray(info.programs) ? info.programs.length : null,
          geometries: info.memory ? info.memory.geometries : null,
          textures: info.memory ? info.memory.textures : null,
        };
        const step = {
          step: i + 1, frame: rec ? rec.frame : last.frame + (i - byFrame.length + 1), t: r3(clock.now()),
          recordedTime: !!rec, renders: cur.renders,
          workMs: r3(workMs), insideRenderMs: r3(cur.inside), counters: c,
        };
        if (prev) {
          const d = {};
          for (const k of K) if (c[k] !== null && prev[k] !== null && c[k] !== prev[k]) d[k] = c[k] - prev[k];
          step.delta = d;
        }
        if (addedMeshes > 0) {
          step.added = { meshes: addedMeshes, sites: [...added].sort((x, y) => y[1].meshes - x[1].meshes).slice(0, 8)
            .map(([site, a]) => ({ site, meshes: a.meshes, id: a.id, ...(a.ids > 1 ? { entities: a.ids } : {}) })) };
        }
        steps.push(step);
        prev = c;
        state.frame = i + 1;
      }
      for (const u of undo.splice(0).reverse()) u();

      const gl = typeof renderer.getContext === 'function' ? renderer.getContext() : null;
      const device = rendererInfo(gl);
      // the step that replays the hitch's own frame, and whether the
      // counters moved the way the record says they did (replayTarget)
      const hitchStep = steps.find((s) => s.frame === view.frame) || null;
      const target = replayTarget(view.frame, view.hitch);
      const causeStep = steps.find((s) => s.frame === target.frame) || null;
      const { compared, reproduced } = compareHitch(target.delta, causeStep ? causeStep.delta || {} : null, K);
      if (!engaged && opt.scene === null) notes.push('the clock was already virtual: the recorded times were reached by steps, never backwards');
      if (restoredOn === null) notes.push(first ? 'no render call took a camera: the view was not restored' : 'the snapshot holds no camera: the view was not restored');
      if (gameMoved > 0) notes.push(`the game moved the camera itself from frame ${gameMoved} of the replay (its own logic): the view is the game's from there`);
      if (view.cameraParented) notes.push('the camera had a parent: its recorded position is relative to the parent as the parent is now');
      if (want.size && visSet === 0) notes.push('every track()ed entity of the snapshot already had its recorded visibility (or is gone)');
      setPhase('done');
      return {
        v: 1,
        ref: typeof view.ref === 'string' ? view.ref : null,
        fidelity: 'view',
        notRestored: 'the game\'s own state — physics, animation mixers, spawn queues, timers, its random numbers, what it loaded or disposed since: the game runs its own logic from where it is now, at the recorded times',
        where: opt.scene === null ? 'open-tab' : 'scene',
        scene: opt.scene,
        sceneSetup: entry ? (entry.setup ? 'setup' : 'at-load') : null,
        hitch: { frame: view.frame, step: hitchStep ? hitchStep.step : null, recorded: view.hitch || null },
        // where the counters were compared: the hitch's frame, or the one before it that did the work
        comparedAt: { frame: target.frame, step: causeStep ? causeStep.step : null, why: target.why },
        reproduced,
        compared,
        visibilitySet: visSet,
        cameraRestored: restoredOn !== null,
        regime: classifyRegime(device.renderer),
        device,
        clock: { mode: CLOCK_MODE, seed: opt.seed, engagedBy: engaged ? 'repro' : 'page-load', paused: true },
        viewport: { width: g.innerWidth, height: g.innerHeight, devicePixelRatio: g.devicePixelRatio,
          canvas: renderer.domElement ? [renderer.domElement.width, renderer.domElement.height] : null },
        recordedViewport: view.viewport || null,
        steps,
        notes,
      };
    } catch (e) {
      setPhase('failed', { error: String((e && e.message) || e) });
      throw e;
    } finally {
      for (const u of undo.reverse()) { try { u(); } catch { /* the page's own */ } }
      if (engaged) clock.release();
    }
  }

  // what a driver polls: the phase, the frame reached, and for how long
  // (real ms) the phase has lasted
  function progress() {
    return { phase: state.phase, scene: state.scene, run: state.run, runs: state.runs, frame: state.frame, frames: state.frames,
      phaseMs: r3(realNow() - state.since), error: state.error, clock: clock ? clock.mode : 'none', scenes: [...scenes.keys()] };
  }

  Object.defineProperty(api, 'clock', { get: needClock, configurable: true, enumerable: true });
  // the browser's own time whatever clock the game is under, without
  // installing one: a game's deliberate real-time cost reads this
  api.realNow = realNow;
  api.scene = scene;
  // the host's one line: sloptimize.track(object, 'enemy_17') (identity.js)
  api.track = (object, id) => identity.track(object, id);
  api.bench = { run, capture, census, attribute, repro, progress, scenes: () => [...scenes.keys()], urlScene: () => (g.location ? urlScene(g.location.search) : null) };
  return api;
}
