// The bench loop (bench.js) on a plain object standing for the page: a
// fake renderer spends the test's own "real" milliseconds, so the frame
// statistics, counters and GPU timings the loop reports are exact.  The
// real browser, three.js and the CLI are tests/browser/bench-verb.test.mjs's.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { classifyRegime, compareHitch, counterStats, installBench, median, nearestRank, replayTarget, summarize, urlScene } from '../../page-runtime/bench.js';

// What `sloptimize bench --launch` injects (the Makefile joins clock.js,
// identity.js, census.js and bench.js): a classic script, where
// `import.meta` or an import line is a syntax error the page reports only
// as "no bench runtime".
test('bench: the runtime the CLI injects is a classic script that installs the bench', () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const build = process.env.SLOPTIMIZE_BUILD || path.join(here, '..', '..', 'build');
  const src = fs.readFileSync(path.join(build, 'gen', 'pagebench.js'), 'utf8');
  const script = new vm.Script(src, { filename: 'injected' });
  const ctx = vm.createContext({});
  script.runInContext(ctx);
  assert.equal(typeof vm.runInContext('installBench', ctx), 'function');
});

const TIME_ELAPSED = 0x88bf, GPU_DISJOINT = 0x8fbb;
const CURRENT_QUERY = 0x8865, QUERY_RESULT = 0x8866, QUERY_RESULT_AVAILABLE = 0x8867;

// A page whose real clock moves only when something spends time, and whose
// browser frames come one macrotask apart.
function page({ search = '' } = {}) {
  let t = 0;
  const p = {
    g: {
      performance: { now: () => t },
      Date,
      Math: Object.create(Math),
      requestAnimationFrame: (cb) => setImmediate(() => cb(t)),
      cancelAnimationFrame: () => {},
      EventTarget,
      location: { search },
      innerWidth: 1280, innerHeight: 720, devicePixelRatio: 1,
    },
    spend(ms) { t += ms; },
    get now() { return t; },
  };
  return p;
}

// A WebGL2 context as far as the GPU timer and the regime use it: each
// query measures gpuMs(frame) and is available `lag` polls after it ended.
function fakeGl(p, { renderer = 'ANGLE (NVIDIA GeForce RTX 3060)', timer = true, gpuMs = () => 2, lag = 1, disjoint = () => false } = {}) {
  let active = null, ended = 0;
  const gl = {
    CURRENT_QUERY, QUERY_RESULT, QUERY_RESULT_AVAILABLE,
    canvas: { width: 1280, height: 720 },
    createQuery: () => ({ ns: 0, polls: 0, ended: false }),
    deleteQuery() {},
    getExtension(name) {
      if (name === 'WEBGL_debug_renderer_info') return { UNMASKED_RENDERER_WEBGL: 1, UNMASKED_VENDOR_WEBGL: 2 };
      if (name === 'EXT_disjoint_timer_query_webgl2' && timer) return { TIME_ELAPSED_EXT: TIME_ELAPSED, GPU_DISJOINT_EXT: GPU_DISJOINT };
      return null;
    },
    getParameter(k) {
      if (k === 1) return renderer;
      if (k === 2) return 'Google Inc.';
      if (k === GPU_DISJOINT) return disjoint(ended);
      return null;
    },
    beginQuery(target, q) {
      if (active) throw new Error('INVALID_OPERATION: another query is active');
      active = q; q.ended = false; q.polls = 0;
    },
    endQuery() { active.ns = gpuMs(ended) * 1e6; active.ended = true; active = null; ended++; },
    getQuery: (target, pname) => (pname === CURRENT_QUERY ? active : null),
    getQueryParameter(q, pname) {
      if (pname === QUERY_RESULT_AVAILABLE) return q.ended && ++q.polls > lag;
      return q.ns;
    },
  };
  return gl;
}

// A three.js renderer as the bench sees it: each render() spends
// cost(n) real ms and draws calls(n) times.
function fakeRenderer(p, { cost = () => 5, calls = () => 10, gl = null } = {}) {
  let n = 0;
  const info = { autoReset: true, render: { calls: 0, triangles: 0, points: 0, lines: 0 },
    memory: { geometries: 4, textures: 2 }, programs: [{}, {}, {}] };
  return {
    isWebGLRenderer: true,
    info,
    getContext: () => gl,
    renders: () => n,
    render() {
      p.spend(cost(n));
      info.render.calls = calls(n);
      info.render.triangles = calls(n) * 12;
      info.render.points = 0;
      info.render.lines = 0;
      n++;
    },
  };
}

// The game: its loop spends 1 ms of logic, then renders.
// Returns a stop(): a game on a released clock runs on real frames again.
function game(p, renderer, { logicMs = 1 } = {}) {
  let on = true;
  const loop = () => { if (!on) return; p.g.requestAnimationFrame(loop); p.spend(logicMs); renderer.render(); };
  p.g.requestAnimationFrame(loop);
  return () => { on = false; };
}

test('bench_statistics_nearest_rank_on_a_known_distribution', () => {
  const v = Float64Array.from({ length: 100 }, (_, i) => 100 - i);   // 100 … 1
  const s = summarize(v);
  assert.equal(s.n, 100);
  assert.equal(s.medianMs, 50.5);
  assert.equal(s.p95Ms, 95);
  assert.equal(s.p99Ms, 99);
  assert.equal(s.maxMs, 100);
  assert.equal(s.meanMs, 50.5);
  const sorted = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.equal(nearestRank(sorted, 10, 0.95), 10, 'rank ceil(9.5) = 10: a measured value');
  assert.equal(nearestRank(sorted, 10, 0.5), 5);
  assert.equal(nearestRank(sorted, 1, 0.99), 1);
  assert.ok(Number.isNaN(nearestRank(sorted, 0, 0.5)));
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(summarize([NaN, NaN]), null, 'nothing measured is null, never 0');
  assert.deepEqual(summarize([NaN, 4, NaN, 2]), { n: 2, medianMs: 3, p95Ms: 4, p99Ms: 4, maxMs: 4, meanMs: 3 });
  assert.deepEqual(counterStats(Float64Array.from([5, 5, 6, 5])), { median: 5, min: 5, max: 6 });
});

test('bench_regime_from_the_unmasked_renderer_string', () => {
  assert.equal(classifyRegime('ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)'), 'software');
  assert.equal(classifyRegime('llvmpipe (LLVM 15.0.6, 256 bits)'), 'software');
  assert.equal(classifyRegime('ANGLE (Apple, ANGLE Metal Renderer: Apple M2, Unspecified Version)'), 'hardware');
  assert.equal(classifyRegime('ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)'), 'hardware');
  assert.equal(classifyRegime(null), 'unknown');
  assert.equal(classifyRegime(''), 'unknown');
});

test('bench_scene_named_in_the_url', () => {
  assert.equal(urlScene('?sloptimize=bench:crates'), 'crates');
  assert.equal(urlScene('?instanced=1&sloptimize=bench%3Atown.square'), 'town.square');
  assert.equal(urlScene('?sloptimize=panel'), null);
  assert.equal(urlScene(''), null);
});

test('bench_run_measures_each_frame_exactly_and_sums_counters_over_render_calls', async () => {
  const p = page();
  const api = installBench(p.g, { mode: 'virtual' });
  const gl = fakeGl(p);
  // two render calls a frame (a composer's passes), 10 draw calls each;
  // one render call in twenty costs 20 ms more: every 10th frame
  const r = fakeRenderer(p, { gl, cost: (n) => (n % 20 === 19 ? 22 : 2) });
  let setups = 0;
  api.scene('crates', async (ctx) => {
    setups++;
    game(p, { render: () => { r.render(); r.render(); } });
    await ctx.frames(2);
    return { renderer: r, settleFrames: 3 };
  });
  const res = await api.bench.run({ scene: 'crates', frames: 20, warmup: 5, runs: 3 });
  assert.equal(setups, 1);
  assert.equal(res.scene, 'crates');
  assert.equal(res.frames, 20);
  assert.equal(res.warmup, 5);
  assert.equal(res.runs, 3);
  assert.equal(res.perRun.length, 3);
  assert.equal(res.regime, 'hardware');
  assert.equal(res.device.renderer, 'ANGLE (NVIDIA GeForce RTX 3060)');
  assert.equal(res.clock.engagedBy, 'page-load');
  for (const run of res.perRun) {
    // 1 ms logic + 2 × 2 ms render; one frame in ten has a 20 ms render
    assert.equal(run.frame.medianMs, 5);
    assert.equal(run.frame.maxMs, 25);
    assert.equal(run.frame.p95Ms, 25, 'rank 19 of 20 is one of the two slow frames');
    assert.equal(run.frame.p99Ms, 25);
    assert.equal(run.render.insideMs, 4);
    assert.equal(run.counters.calls, 20, 'summed over the two render calls');
    assert.equal(run.counters.triangles, 240);
    assert.equal(run.counters.programs, 3);
    assert.equal(run.counters.geometries, 4);
    assert.equal(run.countersVary, false);
    assert.deepEqual(run.gpu, { medianMs: 2, p95Ms: 2, frames: 20 }, 'every frame has its GPU time, read late');
  }
  // 2 frames in setup, 3 settle, 5 warm-up, 3 × 20 measured
  assert.equal(r.renders(), 2 * (2 + 3 + 5 + 60));
  assert.equal(res.gpuTimer.available, true);
  assert.equal(res.gpuTimer.frames, 60);
  assert.equal(res.errors.count, 0);
  assert.equal(api.bench.progress().phase, 'done');
  assert.equal(api.clock.mode, 'virtual', 'a clock the page load engaged stays engaged');
});

test('bench_counters_that_move_are_reported_with_their_range', async () => {
  const p = page();
  const api = installBench(p.g, { mode: 'virtual' });
  const r = fakeRenderer(p, { calls: (n) => (n < 20 ? 10 : 11) });
  api.scene('s', () => { game(p, r); return { renderer: r }; });
  const res = await api.bench.run({ scene: 's', frames: 10, warmup: 5, runs: 3 });
  // frames 0-4 warm-up, 5-14 run 1 (10 draw calls), 15-24 run 2, 25-34 run 3
  assert.equal(res.perRun[0].counters.calls, 10);
  assert.equal(res.perRun[0].countersVary, false);
  assert.equal(res.perRun[1].countersVary, true);
  assert.deepEqual(res.perRun[1].counters.callsRange, [10, 11]);
  assert.equal(res.perRun[2].counters.calls, 11);
  assert.equal(res.gpuTimer.available, false, 'no GL context: no GPU timer');
  assert.ok(!('gpu' in res.perRun[0]), 'GPU time unmeasured is absent, never 0');
  assert.equal(res.regime, 'unknown');
});

test('bench_gpu_results_dropped_when_disjoint_and_off_when_the_page_times_its_own', async () => {
  const p = page();
  const api = installBench(p.g, { mode: 'virtual' });
  const gl = fakeGl(p, { renderer: 'ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)',
    disjoint: (ended) => ended % 4 === 0, gpuMs: (n) => 3 });
  const r = fakeRenderer(p, { gl });
  api.scene('s', () => { game(p, r); return { renderer: r }; });
  const res = await api.bench.run({ scene: 's', frames: 12, warmup: 2, runs: 1 });
  assert.equal(res.regime, 'software', 'the extension is there and the regime is still software');
  assert.ok(res.gpuTimer.dropped.disjoint > 0);
  assert.equal(res.gpuTimer.frames + res.gpuTimer.dropped.disjoint + res.gpuTimer.dropped.late + res.gpuTimer.dropped.busy, 12);
  assert.equal(res.perRun[0].gpu.medianMs, 3);
  assert.ok(res.perRun[0].gpu.frames < 12);

  // stats-gl style: the game begins its own TIME_ELAPSED query in a frame
  const q = page();
  const api2 = installBench(q.g, { mode: 'virtual' });
  const gl2 = fakeGl(q);
  const mine = gl2.createQuery();
  let n = 0;
  const r2 = fakeRenderer(q, { gl: gl2 });
  const render = () => {
    if (++n === 4) { gl2.beginQuery(TIME_ELAPSED, mine); gl2.endQuery(TIME_ELAPSED); }
    r2.render();
  };
  api2.scene('s', () => { game(q, { render }); return { renderer: r2 }; });
  const res2 = await api2.bench.run({ scene: 's', frames: 8, warmup: 0, runs: 1 });
  assert.match(res2.gpuTimer.why, /its own timer queries/);
  assert.equal(res2.gpuTimer.dropped.foreign, 1);
  assert.ok(!('gpu' in res2.perRun[0]), 'a timer that gave way measures nothing for the bench');
});

test('bench_unknown_scene_names_the_ones_the_page_has', async () => {
  const p = page({ search: '?sloptimize=bench:crate' });
  const api = installBench(p.g, { mode: 'virtual' });
  api.scene('crates', () => ({}));
  await assert.rejects(api.bench.run({ scene: 'crate', frames: 1, warmup: 0, runs: 1, waitSceneMs: 50 }),
    /no scene 'crate' on this page \(it has: crates\)/);
  assert.equal(api.bench.progress().phase, 'failed');
  await assert.rejects(api.bench.run({ scene: '../x', frames: 1 }), /scene must be a name/);
  await assert.rejects(api.bench.run({ scene: 'crates', frames: 0 }), /frames is a whole number from 1/);
  await assert.rejects(api.bench.run({ scene: 'crates', runs: 21 }), /runs is a whole number from 1 to 20/);
  assert.throws(() => api.scene('a b', () => {}), /a name of letters/);
});

test('bench_setup_that_hangs_or_throws_fails_with_the_reason', async () => {
  const p = page();
  const api = installBench(p.g, { mode: 'passthrough' });
  api.scene('hang', () => new Promise(() => {}));
  api.scene('bad', () => { throw new Error('no level loaded'); });
  api.scene('nothing', () => ({}));
  await assert.rejects(api.bench.run({ scene: 'hang', frames: 1, setupTimeoutMs: 30 }),
    /setup of scene 'hang' did not finish in 0.03 s/);
  assert.equal(api.clock.mode, 'passthrough', 'the bench released the clock it engaged');
  await assert.rejects(api.bench.run({ scene: 'bad', frames: 1 }), /setup of scene 'bad' threw: no level loaded/);
  await assert.rejects(api.bench.run({ scene: 'nothing', frames: 1 }), /no three.js renderer to measure/);
});

// The Navigation API's events as the browser fires them on a page.
function navigate(p, type, url) {
  const e = new Event(type);
  if (type === 'navigate') Object.assign(e, { destination: { url, sameDocument: false }, downloadRequest: null });
  p.g.navigation.dispatchEvent(e);
}

// A game that starts going to `url` after two frames of its scene's
// setup; then() runs after that navigate event.
function leaver(url, leaveWaitMs, then = () => {}) {
  const p = page();
  p.g.navigation = new EventTarget();
  const api = installBench(p.g, { mode: 'virtual', leaveWaitMs });
  const r = fakeRenderer(p);
  api.scene('s', async (ctx) => {
    game(p, r);
    await ctx.frames(2);
    navigate(p, 'navigate', url);
    then(p);
    return { renderer: r };
  });
  return { api, r };
}

test('bench_a_navigation_the_page_keeps_or_cancels_gives_the_frames_back_one_that_leaves_ends_the_run', { timeout: 20000 }, async () => {
  // a router's intercept() keeps a cross-document URL in this document
  // (navigatesuccess); a preventDefault() or a later navigation aborts it
  // (navigateerror): the run goes on at once, never waits out the leave
  // (a minute here: past the test's own deadline)
  for (const ends of ['navigatesuccess', 'navigateerror']) {
    const { api } = leaver('http://game.test/level2', 60000, (p) => setTimeout(() => navigate(p, ends), 20));
    const res = await api.bench.run({ scene: 's', frames: 5, warmup: 1, runs: 1 });
    assert.equal(res.perRun[0].frame.medianMs, 6, ends);
  }
  // a page that began to go and is still here: the run ends, said so
  const { api, r } = leaver('http://game.test/gone', 50);
  await assert.rejects(api.bench.run({ scene: 's', frames: 5, warmup: 1, runs: 1 }),
    /the page began to go to http:\/\/game.test\/gone under the run and was still here 0.05 s later/);
  // the leave is forgotten once its wait ended: the next run measures
  api.scene('t', () => ({ renderer: r }));
  const res = await api.bench.run({ scene: 't', frames: 5, warmup: 1, runs: 1 });
  assert.equal(res.perRun[0].frame.medianMs, 6);
});

test('bench_in_a_passthrough_page_engages_the_clock_and_stops_the_recorder', async () => {
  const p = page();
  p.g.sloptimize = { panel: 'kept' };
  const raf = p.g.requestAnimationFrame;
  const api = installBench(p.g, { mode: 'passthrough' });
  assert.equal(p.g.sloptimize.panel, 'kept', 'merged into what the dev bootstrap made');
  // until a bench runs, the page's own requestAnimationFrame: a wrapper
  // would be the script Long Animation Frames names for the game's frames
  assert.equal(p.g.requestAnimationFrame, raf, 'no clock before the first bench');
  assert.equal(api.bench.progress().clock, 'none');
  let stopped = 0;
  api.recorder = { rec: { stop: () => stopped++ }, auto: true };
  const r = fakeRenderer(p);
  // the renderer is found the way the dev bootstrap finds it
  p.g.__THREE_DEVTOOLS__.dispatchEvent(Object.assign(new Event('observe'), { detail: r }));
  api.scene('s');
  const stop = game(p, r);
  const res = await api.bench.run({ scene: 's', frames: 4, warmup: 1, runs: 2 });
  const before = r.renders();
  await new Promise((res) => setImmediate(res));
  await new Promise((res) => setImmediate(res));
  assert.ok(r.renders() > before, 'released, the game runs on the browser frames again');
  stop();
  assert.equal(stopped, 1);
  assert.match(res.notes.join(' '), /recorder was running and is stopped/);
  assert.equal(res.clock.engagedBy, 'bench');
  assert.equal(res.sceneSetup, 'at-load');
  assert.equal(api.clock.mode, 'passthrough');
  assert.equal(res.perRun[1].frame.medianMs, 6);
  assert.equal(installBench(p.g), api, 'installed once');
});

test('bench_progress_while_running', async () => {
  const p = page();
  const api = installBench(p.g, { mode: 'virtual' });
  const r = fakeRenderer(p);
  api.scene('s', () => { game(p, r); return { renderer: r }; });
  const seen = new Set();
  const running = api.bench.run({ scene: 's', frames: 30, warmup: 10, runs: 2 });
  await assert.rejects(api.bench.run({ scene: 's' }), /already running/);
  while (api.bench.progress().phase !== 'done') {
    const pr = api.bench.progress();
    seen.add(`${pr.phase}:${pr.run}`);
    await new Promise((res) => setImmediate(res));
  }
  await running;
  assert.ok(seen.has('run:1') && seen.has('run:2'), [...seen].join(' '));
});

test('repro: a hitch whose record names the frame before as its stall\'s cause is held against that frame', () => {
  const crowd = { calls: 1000, geometries: 1000 };
  assert.deepEqual(replayTarget(110, { frameMs: 300, delta: { calls: 1, geometries: 1 }, guess: 'spawn-burst', before: { frame: 109, delta: crowd } }),
    { frame: 109, delta: crowd, why: 'frame-before' });
  assert.deepEqual(replayTarget(110, { frameMs: 300, delta: crowd, guess: 'spawn-burst' }), { frame: 110, delta: crowd, why: 'hitch' });
  // a before that names no frame or no counters (an older recorder's): the hitch's own
  assert.equal(replayTarget(110, { delta: crowd, before: { frame: 109 } }).why, 'hitch');
  assert.equal(replayTarget(110, { delta: crowd, before: { frame: 'x', delta: crowd } }).why, 'hitch');
  assert.deepEqual(replayTarget(110, null), { frame: 110, delta: {}, why: 'hitch' });
});

test('repro: a replayed hitch moved "the same way" only in the same direction and by at least half as much', () => {
  const K = ['calls', 'triangles', 'programs', 'geometries', 'textures'];
  const crowd = { calls: 1000, geometries: 1000, triangles: 12000 };
  // the crowd is back: reproduced
  assert.equal(compareHitch(crowd, { calls: 1000, geometries: 1000, triangles: 12000 }, K).reproduced, true);
  assert.equal(compareHitch(crowd, { calls: 620, geometries: 500, triangles: 7000 }, K).reproduced, true);
  // a follow camera brought three crates into view: not the crowd (this
  // is what a loaded machine's replay of the crates scene gave)
  const cam = compareHitch(crowd, { calls: 3, triangles: 36 }, K);
  assert.equal(cam.reproduced, false);
  assert.deepEqual(cam.compared.calls, { recorded: 1000, replayed: 3, moved: false });
  assert.equal(cam.compared.geometries.moved, false);
  // the other way, or not at all
  assert.equal(compareHitch(crowd, { calls: -1000, geometries: -1000, triangles: -12000 }, K).reproduced, false);
  assert.equal(compareHitch({ programs: 12 }, { programs: 0 }, K).reproduced, false);
  // nothing moved when recorded: a time-only hitch, never a verdict; no frame replayed: none either
  assert.equal(compareHitch({ calls: 0 }, { calls: 5 }, K).reproduced, null);
  assert.equal(compareHitch(crowd, null, K).reproduced, null);
  assert.equal(compareHitch(crowd, null, K).compared.calls.replayed, null);
});
