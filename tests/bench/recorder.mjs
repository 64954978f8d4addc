// make bench-recorder: what the recorder costs a frame, what it allocates
// on the steady path, and how long a stutter takes to become a wake line
// at `sloptimize watch` (DESIGN §14).  Figures, never pass/fail.
//
// In the demo game (Vite + the plugin, headless chromium on SwiftShader),
// `?bench=1`: the page runs no recorder of its own.  Two timing shims go
// around renderer.render — one outside, one inside — and the recorder is
// made between them, so per frame (outer − inner) is the recorder's own
// time inside render; to it is added the time between a microtask the
// inner shim queues (it runs first at the end of the frame's task) and
// one the outer shim queues (it runs last): the recorder's close of a long
// frame, which runs there, and none of the host's own code after render.
// The same shims without a recorder between them are the anchor (what the
// measuring costs), in the same page, phases alternated.  The after-frame
// task (the census, the records) runs between frames and is timed on its
// own.
// Allocation: CDP's sampling heap profiler over consecutive windows of
// recorder frames (no timing shims), every sample kept (collected ones
// too), attributed by where its stack enters the recorder's modules, with
// the V8 tier its per-frame functions had (chromium's own
// --trace-opt/--trace-deopt lines), beside a probe that only reads
// performance.now() twice a frame (the clock's own cost).
// Stutter → wake: new shader materials, the first meaningful hitch's `at`
// (its frame's end: the first moment page script runs after the stall) to
// the line's arrival at a real `sloptimize watch`, with the stall itself
// and the woken frame's after-frame task timed from the page.
//
// Besides the lines for people, one `BENCH measure=… ours=… anchor=…
// unit=… target=… met=yes|no` line per figure, for `make bench`.
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { Daemon, Watch, tmpdir } from '../lib.mjs';
import { startVite, FLAGS } from '../browser.mjs';
import { bench } from './benchlib.mjs';

// BENCH_QUICK=1: short phases and a few stutters (checks the machinery)
const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const FRAMES = Number(process.env.BENCH_FRAMES || (QUICK ? 120 : 600));     // per phase
const ROUNDS = Number(process.env.BENCH_ROUNDS || (QUICK ? 1 : 3));
const WAKES = Number(process.env.BENCH_WAKES || (QUICK ? 4 : 30));
const ALLOC_FRAMES = Number(process.env.BENCH_ALLOC_FRAMES || (QUICK ? 240 : 1200));   // per window
const ALLOC_WINDOWS = Number(process.env.BENCH_ALLOC_WINDOWS || (QUICK ? 1 : 3));
const SAMPLING = Number(process.env.BENCH_SAMPLING || 64);      // bytes between heap samples
const WARM = 60;                                               // frames not measured at the start of a phase
// the recorder's first frames, before the rounds: V8 compiles its code
// through its tiers (and deoptimises some of it once) meanwhile
const FIRST = Number(process.env.BENCH_FIRST || (QUICK ? 120 : 1200));

const pct = (a, q) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.min(s.length, Math.max(1, Math.ceil(q * s.length))) - 1] : NaN; };
const f3 = (v) => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');

// Where an allocation sample's stack enters the recorder's modules says
// whose it is: the steady path is what every frame runs (the render
// wrapper, the animation-frame tick) unless the frame has something to
// say — a long frame's close queued, work queued for the after-frame
// task, a motion event or burst, a hitch waiting for its LoAF entry.
const FRAME_ROOTS = new Set(['recordedRender', 'onTick']);
const SAYS = new Set(['queueClose', 'closeSoon', 'addWork', 'queueWork', 'onPending', 'event', 'close', 'build',
  'resolvePending', 'hitchAt', 'emit']);
// Those whose names are the recorder's alone: their tier is read from V8's trace.
const TIERED = ['recordedRender', 'onRenderStart', 'onRenderEnd', 'openFrame', 'closeFrame'];

const project = tmpdir('bench-rec');
const daemon = await new Daemon(project, { args: ['--global-max', '0', '--per-fp-ms', '0'] }).start();
const vite = await startVite(daemon.base, { env: { SLOPTIMIZE_ISOLATE: '1' } });
// V8's own account of what it optimized and deoptimized, from the browser's stdout
const server = await chromium.launchServer({ executablePath: process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: [...FLAGS, '--js-flags=--trace-opt --trace-deopt'] });
const tiers = new Map();          // function name → last tier V8 reported for it
let v8buf = '';
const onV8 = (d) => {
  v8buf += d;
  let i;
  while ((i = v8buf.indexOf('\n')) >= 0) {
    const l = v8buf.slice(0, i);
    v8buf = v8buf.slice(i + 1);
    let m = /^\[completed compiling .*?<JSFunction (\S+) .*\(target (\w+)\)/.exec(l);
    if (m) { tiers.set(m[1], m[2].replace('TURBOFAN_JS', 'TURBOFAN')); continue; }
    m = /^\[bailout .*deoptimizing .*?<JSFunction (\S+) /.exec(l);
    if (m) tiers.set(m[1], 'deoptimized');
  }
};
server.process().stdout.on('data', onV8);
server.process().stderr.on('data', () => {});
const tierLine = () => TIERED.map((n) => `${n} ${tiers.get(n) || 'interpreted'}`).join(', ');
const browser = await chromium.connect(server.wsEndpoint());
let watch = null;
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  await page.goto(`${vite.url}/?bench=1`);
  await page.waitForFunction(() => window.demo && window.demo.renderer && window.sloptimize);

  // shims: outer(recorder(inner(render)))
  await page.evaluate(([warmFrames]) => {
    window.sloptimize.rec?.stop();                 // the plugin's automatic one
    const r = window.demo.renderer;
    const render = r.render;
    const B = { inner: 0, outer: [], tail: [], deltas: [], tasks: [], rec: null, on: false, lastEnd: NaN, timing: false, markAt: NaN, marked: false,
      queued: false, kinds: [] };
    window.bench = B;
    // the inner shim also queues a mark: it runs first among the frame's
    // microtasks (before the recorder's close of a long frame, queued
    // after it), so mark → the outer shim's microtask is what the
    // recorder did there and nothing of the host's own code after render
    const mark = () => { B.markAt = performance.now(); B.marked = false; };
    const inner = function (s, c) {
      const t = performance.now();
      try { return render.call(this, s, c); } finally {
        B.inner += performance.now() - t;
        if (B.timing && B.on && !B.marked) { B.marked = true; queueMicrotask(mark); }
      }
    };
    // the after-frame task's own time (the recorder names it afterFrame)
    const st = window.setTimeout;
    const timedTimeout = function (fn, ms, ...a) {
      if (typeof fn !== 'function' || fn.name !== 'afterFrame') return st.call(window, fn, ms, ...a);
      if (B.on) B.queued = true;      // this frame queued the after-frame task
      return st.call(window, function () { const t = performance.now(); try { return fn.apply(this, arguments); } finally { if (B.on) B.tasks.push(performance.now() - t); } }, ms, ...a);
    };
    B.install = (withRecorder, timing) => {
      window.setTimeout = timing ? timedTimeout : st;
      B.timing = timing;
      // without timing (the allocation windows) no inner shim either: the
      // sampler names a physical frame's function, so an allocation of a
      // shim V8 inlined into the recorder's wrapper would count as the
      // recorder's (the shim holds a double across its try: a heap number)
      r.render = timing ? inner : render;
      const make = () => {
        const rec = window.sloptimize.createRecorder({ renderer: r });
        rec.track('unit', () => window.demo.unit.position);
        rec.track('camera', () => window.demo.camera.position, { follows: 'unit' });
        return rec;
      };
      let mid = r.render;
      if (withRecorder && timing) {
        // the cost rounds: one recorder for all of them, as a game has one
        // for its session (each new one starts its code over: a second
        // closure of the render wrapper drops the code V8 specialised for
        // the first); the anchor phases go around it
        if (!B.costRec) { B.costRec = make(); B.costMid = r.render; }
        B.rec = B.costRec;
        mid = B.costMid;
      } else if (withRecorder) {
        B.rec = make();
        mid = r.render;
      }
      // timing: outer − inner, plus the end of render → the end of the
      // frame's task (a microtask queued after the recorder's); without
      // timing (the allocation windows) the shim allocates nothing itself
      r.render = timing ? function (s, c) {
        B.inner = 0;
        const t = performance.now();
        let end = 0;
        try { return mid.call(this, s, c); } finally {
          end = performance.now();
          if (B.on) {
            const own = end - t - B.inner, delta = end - B.lastEnd;
            queueMicrotask(() => {
              B.outer.push(own); B.tail.push(performance.now() - B.markAt); B.deltas.push(delta);
              B.kinds.push(B.queued ? 1 : 0); B.queued = false;
            });
          }
          B.lastEnd = end;
        }
      } : mid;
    };
    B.uninstall = () => { if (B.rec && B.rec !== B.costRec) B.rec.stop(); B.rec = null; r.render = render; window.setTimeout = st; };
    B.endCost = () => { if (B.costRec) { B.costRec.stop(); B.costRec = null; } };
    B.phase = (withRecorder, frames, timing = true) => new Promise((resolve) => {
      B.uninstall();
      B.install(withRecorder, timing);
      B.outer = []; B.tail = []; B.deltas = []; B.tasks = []; B.kinds = []; B.queued = false;
      // let the first frames (ring filling, first census) pass unmeasured
      let warm = warmFrames;
      let n = 0;
      const tick = () => {
        if (warm > 0) { warm--; requestAnimationFrame(tick); return; }
        B.on = true;
        if (++n > frames) {
          B.on = false;
          resolve({ own: B.outer.map((v, i) => v + B.tail[i]), deltas: B.deltas.slice(), tasks: B.tasks.slice(), kinds: B.kinds.slice(), tail: B.tail.slice() });
          return;
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    // the clock's own cost, beside the recorder for as long: a function run
    // once an animation frame (as the recorder's are, so at the tier V8
    // gives such code) that reads performance.now() twice into a typed
    // array, as the render wrapper does
    const clock = new Float64Array(2);
    const clockFrame = function clockFrame(out) { out[0] = performance.now(); out[1] = performance.now(); };
    const clockTick = () => { clockFrame(clock); requestAnimationFrame(clockTick); };
    requestAnimationFrame(clockTick);
    // more frames of the recorder that is there (the allocation windows)
    B.frames = (n) => new Promise((resolve) => { const t = () => (--n > 0 ? requestAnimationFrame(t) : resolve()); requestAnimationFrame(t); });
  }, [WARM]);

  // cost: anchor and recorder phases alternated, no profiler running
  const rec = [], anchor = [], recDeltas = [], tasks = [], kinds = [], tails = [], atails = [];
  const first = (await page.evaluate((n) => window.bench.phase(true, n), FIRST)).own;
  let recFrames = FIRST + WARM;   // frames the recorder's code has seen so far
  for (let round = 0; round < ROUNDS; round++) {
    { const a = await page.evaluate((n) => window.bench.phase(false, n), FRAMES); anchor.push(...a.own); atails.push(...a.tail); }
    const p = await page.evaluate((n) => window.bench.phase(true, n), FRAMES);
    rec.push(...p.own); recDeltas.push(...p.deltas); tasks.push(...p.tasks); kinds.push(...p.kinds); tails.push(...p.tail);
    recFrames += FRAMES + WARM;
  }
  const over = rec.map((v, i) => [v, recDeltas[i], kinds[i]]).filter(([v]) => v > 0.2);

  const median = pct(recDeltas, 0.5);
  const isLong = (d) => d > Math.max(2 * median, 25.05);
  const longOver = over.filter(([, d]) => isLong(d)).length;
  const workOver = over.filter(([, d, q]) => !isLong(d) && q === 1).length;
  const queuedFrames = kinds.filter((q) => q === 1).length;
  const anchorOver = anchor.filter((v) => v > 0.2).length;
  const hitchCost = rec.filter((v, i) => isLong(recDeltas[i])), hitchTail = tails.filter((v, i) => isLong(recDeltas[i]));

  // allocation: windows of recorder frames (its code warm from the rounds
  // above), each under its own run of CDP's sampling heap profiler
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  await page.evaluate(() => { window.bench.uninstall(); window.bench.endCost(); window.bench.install(true, false); });
  const windows = [];
  for (let w = 0; w < ALLOC_WINDOWS; w++) {
    await cdp.send('HeapProfiler.collectGarbage');
    const before = await page.evaluate(() => window.bench.rec.state());
    await cdp.send('HeapProfiler.startSampling', { samplingInterval: SAMPLING, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await page.evaluate((n) => window.bench.frames(n), ALLOC_FRAMES);
    const { profile } = await cdp.send('HeapProfiler.stopSampling');
    const after = await page.evaluate(() => window.bench.rec.state());
    let steady = 0, says = 0, other = 0, clockBytes = 0, steadyN = 0, clockN = 0;
    const sites = new Map();
    // samples per node: a byte total from n samples is known to about 1/√n
    const nSamples = new Map();
    for (const x of profile.samples || []) nSamples.set(x.nodeId, (nSamples.get(x.nodeId) || 0) + 1);
    // root: the outermost of the recorder's functions on the stack; said:
    // one of the stack's is a frame saying something
    const walk = (node, root, said) => {
      const cf = node.callFrame;
      if (cf.functionName === 'clockFrame' || cf.functionName === 'clockTick') { clockBytes += node.selfSize; clockN += nSamples.get(node.id) || 0; }
      const ours = /\/@sloptimize\/(recorder|frames|motion|delivery)\.js/.test(cf.url);
      if (ours) {
        if (root === null) root = cf.functionName || '(anonymous)';
        if (SAYS.has(cf.functionName)) said = true;
      }
      if (ours && node.selfSize > 0) {
        const kind = FRAME_ROOTS.has(root) ? (said ? 'says' : 'steady') : 'other';
        const k = `${cf.functionName || '(anonymous)'} ${cf.url.split('/').pop()}:${cf.lineNumber + 1} (${kind}${root !== cf.functionName ? `, under ${root}` : ''})`;
        sites.set(k, (sites.get(k) || 0) + node.selfSize);
        if (kind === 'steady') { steady += node.selfSize; steadyN += nSamples.get(node.id) || 0; } else if (kind === 'says') says += node.selfSize; else other += node.selfSize;
      }
      for (const c of node.children) walk(c, root, said);
    };
    walk(profile.head, null, false);
    windows.push({ from: recFrames, to: recFrames + ALLOC_FRAMES, steady, says, other, clockBytes, steadyN, clockN, sites, tiers: tierLine(),
      made: Object.fromEntries(Object.entries(after.made).map(([k, v]) => [k, v - before.made[k]])), censuses: after.censuses - before.censuses });
    recFrames += ALLOC_FRAMES;
  }
  await page.evaluate(() => window.bench.uninstall());
  // What a performance.now() costs the heap, in this page: the recorder
  // reads the clock twice a frame (render's start and end, into a typed
  // array); a probe that does only that, warm, under the same sampler,
  // beside one storing a computed double the same way
  await page.evaluate(() => {
    window.nowProbe = function nowProbe(out, n) { for (let i = 0; i < n; i++) out[i & 7] = performance.now(); };
    window.mathProbe = function mathProbe(out, n) { for (let i = 0; i < n; i++) out[i & 7] = out[(i + 1) & 7] * 0.5 + i; };
    const out = new Float64Array(8);
    for (let k = 0; k < 200; k++) { window.nowProbe(out, 500); window.mathProbe(out, 500); }
  });
  const PROBE_CALLS = 200000;
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.startSampling', { samplingInterval: SAMPLING, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await page.evaluate((n) => { const out = new Float64Array(8); window.nowProbe(out, n); window.mathProbe(out, n); }, PROBE_CALLS);
  const probeProfile = (await cdp.send('HeapProfiler.stopSampling')).profile;
  const probeBytes = { nowProbe: 0, mathProbe: 0 };
  const probeWalk = (node) => {
    if (node.callFrame.functionName in probeBytes) probeBytes[node.callFrame.functionName] += node.selfSize;
    for (const c of node.children) probeWalk(c);
  };
  probeWalk(probeProfile.head);

  console.log(`recorder cost per frame, ${rec.length} frames in ${ROUNDS} rounds after its first ${FIRST + WARM} (outer − inner around renderer.render, plus the recorder's microtask at the task's end, ms):`);
  const line = (a) => `p50 ${f3(pct(a, 0.5))}  p90 ${f3(pct(a, 0.9))}  p99 ${f3(pct(a, 0.99))}  p99.9 ${f3(pct(a, 0.999))}  max ${f3(Math.max(...a))}  mean ${f3(a.reduce((x, y) => x + y, 0) / a.length)}`;
  console.log(`  recorder: ${line(rec)}`);
  console.log(`  the recorder's first ${FIRST} frames, before the rounds (V8 compiling its code meanwhile): ${line(first)}`);
  console.log(`  anchor (no recorder, the same shims, the same page): ${line(anchor)}`);
  // the two parts apart: inside render (outer − inner) and the task's end
  // (mark → the outer shim's microtask: nothing runs there in a frame
  // that closes nothing), each beside the anchor's own
  const body = rec.map((v, i) => v - tails[i]), abody = anchor.map((v, i) => v - atails[i]);
  const over2 = (a) => a.filter((v) => v > 0.2).length;
  console.log(`  inside render: recorder p50 ${f3(pct(body, 0.5))} p99 ${f3(pct(body, 0.99))}, anchor p50 ${f3(pct(abody, 0.5))} p99 ${f3(pct(abody, 0.99))};` +
    ` the task's end: recorder p50 ${f3(pct(tails, 0.5))} p99 ${f3(pct(tails, 0.99))}, anchor p50 ${f3(pct(atails, 0.5))} p99 ${f3(pct(atails, 0.99))};` +
    ` over 0.2 ms: ${over2(body)} / ${over2(abody)} inside render, ${over2(tails)} / ${over2(atails)} at the task's end (recorder / anchor)`);
  console.log(`  timer resolution in this page: ${await page.evaluate(() => { let a = performance.now(), b; do { b = performance.now(); } while (b === a); return (b - a).toFixed(3); })} ms`);
  console.log(`  frames over 0.2 ms: ${over.length} of ${rec.length}: ${longOver} hitch frames (a delta over the hitch threshold, median delta ${f3(median)} ms),` +
    ` ${workOver} that queued the after-frame task (a census; ${queuedFrames} frames queued it), ${over.length - longOver - workOver} others; the anchor's: ${anchorOver} of ${anchor.length}`);
  console.log(`  hitch frames: ${hitchCost.length}, their cost p50 ${f3(pct(hitchCost, 0.5))} max ${f3(Math.max(...hitchCost))}, of which the close at the task's end p50 ${f3(pct(hitchTail, 0.5))} max ${f3(Math.max(...hitchTail))} ms`);
  console.log(`  off the frame, the after-frame task (census, hitch and jitter records): ${tasks.length} runs, ${tasks.length ? `p50 ${f3(pct(tasks, 0.5))}  p99 ${f3(pct(tasks, 0.99))}  max ${f3(Math.max(...tasks))} ms` : 'none'}`);
  console.log(`  target: p99 ≤ 0.2 ms (seed §3.1)`);
  bench('recorder time per frame, p99', pct(anchor, 0.99), pct(rec, 0.99), 'ms', '<= 0.2 ms', pct(rec, 0.99) <= 0.2, 'the timing shims alone');
  bench('recorder time per frame, p50', pct(anchor, 0.5), pct(rec, 0.5), 'ms', '-', null, 'the timing shims alone');

  const last = windows[windows.length - 1];
  console.log(`allocations attributed to the recorder's modules (a sample every ${SAMPLING} bytes, collected objects kept), windows of ${ALLOC_FRAMES} frames after ${FIRST + WARM + ROUNDS * (FRAMES + WARM)} warm ones:`);
  for (const w of windows) {
    console.log(`  frames ${w.from}–${w.to} of the recorder's code: steady path ${w.steady} bytes (${(w.steady / ALLOC_FRAMES).toFixed(2)} bytes/frame), frames with something to say ${w.says} bytes, off the frame ${w.other} bytes` +
      ` (${w.made.hitch} hitch, ${w.made.jitter} jitter, ${w.made.heartbeat} heartbeat records, ${w.censuses} censuses)`);
    console.log(`    V8 tiers at the window's end: ${w.tiers}, clockFrame ${tiers.get('clockFrame') || 'interpreted'}`);
    console.log(`    the clock alone (two performance.now() a frame, once-a-frame code): ${w.clockBytes} bytes (${(w.clockBytes / ALLOC_FRAMES).toFixed(2)} bytes/frame)`);
    for (const [k, v] of [...w.sites].filter(([k2]) => k2.includes('(steady')).sort((a, b) => b[1] - a[1]).slice(0, 4)) console.log(`    ${String(v).padStart(8)}  ${k}`);
  }
  console.log(`  steady path (per-frame functions), the last window: ${last.steady} bytes (${(last.steady / ALLOC_FRAMES).toFixed(2)} bytes/frame)`);
  console.log(`  everything else (heartbeats, records, delivery, census), the last window: ${last.other} bytes`);
  for (const [k, v] of [...last.sites].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`    ${String(v).padStart(8)}  ${k}`);
  const perNow = probeBytes.nowProbe / PROBE_CALLS;
  console.log(`  the clock: two performance.now() a frame from once-a-frame code, the last window: ${(last.clockBytes / ALLOC_FRAMES).toFixed(2)} bytes/frame;` +
    ` the same read in a hot loop (optimized further): ${perNow.toFixed(2)} bytes a call (a computed double stored the same way: ${(probeBytes.mathProbe / PROBE_CALLS).toFixed(2)})`);
  // The sampler's own error: a total of b bytes from n samples is known to
  // about b/√n (Poisson), so the difference of the two totals to the root
  // of their squares; an excess within twice that is none the sampler can see.
  const excess = (last.steady - last.clockBytes) / ALLOC_FRAMES;
  const sigma = (b, n) => (n > 0 ? b / Math.sqrt(n) : 0);
  const err2 = 2 * Math.hypot(sigma(last.steady, last.steadyN), sigma(last.clockBytes, last.clockN)) / ALLOC_FRAMES;
  console.log(`  steady path beyond the clock's two reads: ${excess.toFixed(2)} bytes/frame, the sampler's error ±${err2.toFixed(2)} (2σ; ${last.steadyN} and ${last.clockN} samples)`);
  bench('recorder allocation, steady path', null, last.steady / ALLOC_FRAMES, 'B/frame', '0 B/frame', last.steady === 0);
  bench('recorder allocation beyond the clock', null, Math.max(0, excess), 'B/frame', `0 B/frame (±${err2.toFixed(1)}, 2σ)`, excess <= err2,
    'two performance.now() a frame');

  // The recorder's main-thread time all in (heartbeats, census slices,
  // records, sends, the observer — not only inside render): (a) as it
  // measures itself, task by task (state().own), over a session of play;
  // (b) CDP's TaskDuration per frame, the same page with and without it,
  // phases alternated — the anchor is the page without it.  On a loaded
  // machine (b)'s difference carries the noise of the whole page's tasks;
  // (a) is the figure the target is read on, (b) is printed beside it.
  {
    const SESSION = QUICK ? 600 : 3600;
    const cdp2 = await page.context().newCDPSession(page);
    await cdp2.send('Performance.enable');
    await page.evaluate(() => {
      window.bench.uninstall(); window.bench.endCost();
      const r = window.demo.renderer;
      window.allIn = { frames: 0, rec: null };
      // each phase (with the recorder and without) plays the same stutters,
      // one of each kind the demo makes, spread over it: a session of play
      // whose hitches, censuses with finds and jitter are in the figure
      window.allIn.plan = null;
      const tick = () => {
        const a = window.allIn, p = a.plan;
        a.frames++;
        if (p && p.next < p.kinds.length && a.frames - p.from >= (p.next + 0.5) * p.every) window.demo.stutter(p.kinds[p.next++]);
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      window.allIn.start = () => {
        const rec = window.sloptimize.createRecorder({ renderer: r });
        rec.track('unit', () => window.demo.unit.position);
        window.allIn.rec = rec;
      };
      window.allIn.stop = () => { const st = window.allIn.rec.state(); window.allIn.rec.stop(); window.allIn.rec = null; return st.own; };
    });
    const taskMs = async () => Object.fromEntries((await cdp2.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value])).TaskDuration * 1000;
    const phase = async (withRec) => {
      if (withRec) await page.evaluate(() => window.allIn.start());
      const f0 = await page.evaluate((n) => {
        const kinds = ['compile', 'texture', 'spawn', 'script', 'snap'];
        window.allIn.plan = { from: window.allIn.frames, every: Math.floor(n / kinds.length), kinds, next: 0 };
        return window.allIn.frames;
      }, SESSION / 2), t0 = await taskMs();
      await page.waitForFunction((n) => window.allIn.frames >= n, f0 + SESSION / 2, { timeout: 600000, polling: 200 });
      const f1 = await page.evaluate(() => window.allIn.frames), t1 = await taskMs();
      const own = withRec ? await page.evaluate(() => window.allIn.stop()) : null;
      return { perFrame: (t1 - t0) / (f1 - f0), frames: f1 - f0, own };
    };
    const withR = [], without = [], owns = [];
    for (let k = 0; k < 2; k++) {
      const a = await phase(true); withR.push(a.perFrame); owns.push(a.own);
      const b = await phase(false); without.push(b.perFrame);
    }
    // all in: its tasks and the render wrapper's own time (a frame's close)
    const ownMs = owns.reduce((a, o) => a + o.ms + o.renderMs, 0), ownFrames = SESSION;
    const renderMs = owns.reduce((a, o) => a + o.renderMs, 0);
    const perFrame = ownMs / ownFrames, maxTask = Math.max(...owns.map((o) => o.maxTaskMs));
    const maxKind = owns.find((o) => o.maxTaskMs === maxTask)?.maxTaskKind || 'not said';
    const ab = withR.reduce((a, b) => a + b, 0) / withR.length - without.reduce((a, b) => a + b, 0) / without.length;
    console.log(`recorder main-thread time, all in, over ${ownFrames} frames of the demo in 2 sessions, each with one stutter of each kind (ms/frame):`);
    console.log(`  as it measures itself (its tasks, sends, census slices, and the render wrapper's ${f3(renderMs / ownFrames)} ms/frame): ${f3(perFrame)} ms/frame, its longest task ${f3(maxTask)} ms (${maxKind}), ${owns.reduce((a, o) => a + o.tasks, 0)} tasks`);
    console.log(`  the page's task time per frame (CDP TaskDuration): with it ${withR.map(f3).join(', ')}, without it ${without.map(f3).join(', ')}: difference ${f3(ab)} (the whole page's noise is in it)`);
    // each task of 1 ms or more: its kind, the frame it ran after and how
    // many hitch records the session had made before it (0: the first one)
    owns.forEach((o, k) => console.log(`  session ${k + 1}: ${o.over1ms} tasks of its own ≥ 1 ms, ${o.deferredWakes ?? 'not said:'} waking hitches whose census went on after their frame` +
      (o.long.length ? `; the last ${o.long.length}: ${o.long.map((t) => `${f3(t.ms)} ms ${t.kind} after frame ${t.frame} (${t.hitchesMade} hitch records before)`).join('; ')}` : '')));
    console.log('  target: ≤ 0.05 ms per frame over a session; no task of its own ≥ 1 ms');
    bench('recorder main-thread time, all in (self-measured)', null, perFrame, 'ms/frame', '<= 0.05 ms/frame', perFrame <= 0.05);
    bench('recorder main-thread time, A/B task time difference', without.reduce((a, b) => a + b, 0) / without.length, ab, 'ms/frame', '-', null,
      'the same page without it, task time per frame');
    bench('recorder longest task of its own', null, maxTask, 'ms', '< 1 ms', maxTask < 1, `the longest: ${maxKind}`);
    await cdp2.detach();
  }

  // The view snapshots' share of the frame (docs/attribute.md, "A hitch
  // replayed"): the one thing they add to every frame is writing the
  // frame's camera into the ring (FrameRing.camInto: sixteen numbers into
  // a typed array).  Timed in the page on the demo's own camera, in
  // batches, beside the same number of calls that read performance.now()
  // twice (the clock the recorder reads every frame anyway).  The snapshot
  // itself is made only for a hitch, in the after-frame task, and is in
  // the all-in figure above.
  {
    const r = await page.evaluate(async () => {
      const { FrameRing } = await import('/@sloptimize/frames.js');
      const ring = new FrameRing();
      const cam = window.demo.camera;
      const out = new Float64Array(2);
      const clock2 = function clock2(o) { o[0] = performance.now(); o[1] = performance.now(); };
      const N = 20000, ROUNDS = 15, per = { ring: [], clock: [] };
      for (let k = 0; k < ROUNDS; k++) {
        let t = performance.now();
        for (let i = 0; i < N; i++) ring.camInto(i % 600, cam);
        per.ring.push(((performance.now() - t) / N) * 1000);
        t = performance.now();
        for (let i = 0; i < N; i++) clock2(out);
        per.clock.push(((performance.now() - t) / N) * 1000);
      }
      return per;
    });
    const med = (a) => pct(a.slice(3), 0.5);      // the first rounds are V8's tiers
    console.log(`view snapshots: the camera written into the ring ${f3(med(r.ring))} µs a frame; two performance.now() reads ${f3(med(r.clock))} µs`);
    bench('view snapshot camera ring, per frame', med(r.clock), med(r.ring), 'µs/frame', '-', null, 'two performance.now() reads');
  }

  // stutter → wake line
  const probe = await fetch(`${daemon.base}/api/sloptimize/records`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
  if (probe.status === 404 || probe.status === 405) {
    console.log(`stutter → wake: not measured: the daemon answers ${probe.status} to POST /api/sloptimize/records (no ingest route in this build)`);
  } else {
    watch = new Watch(daemon);
    await watch.connected();
    await page.evaluate(() => {
      const B = window.bench;
      // when each POST carrying a hitch left the page and was answered
      B.posts = [];
      B.flying = 0;
      // a POST leaving: the hitches it carries (their `at`), its batch
      // number, when, and how many requests were already under way
      const leaving = (url, body) => ({
        hitches: typeof body === 'string' ? [...body.matchAll(/"type":"hitch".*?"at":"([^"]+)"/g)].map((m) => m[1]) : [],
        seq: /[?&]seq=(\d+)/.exec(String(url))?.[1] ?? null, sent: Date.now(), beside: B.flying++,
      });
      const f = window.fetch;
      window.fetch = function (url, opts) {
        const o = leaving(url, opts && opts.body);
        const p = f.apply(this, arguments);
        const done = () => { B.flying--; };
        p.then(done, done);
        if (o.hitches.length) p.then(() => B.posts.push({ ...o, answered: Date.now() }), () => {});
        return p;
      };
      // the recorder's own sends leave from a worker (page-runtime/
      // sender.js): a POST is "sent" when the page hands it to the worker
      // and "answered" when the worker's reply comes back to the page
      const W = window.Worker;
      if (typeof W === 'function') {
        window.Worker = function (...a) {
          const w = new W(...a);
          const open = new Map();
          const post = w.postMessage;
          w.postMessage = function (m) {
            open.set(m && m.id, leaving(m && m.url, m && m.init && m.init.body));
            return post.apply(this, arguments);
          };
          w.addEventListener('message', (e) => {
            const o = open.get(e.data && e.data.id);
            if (!o) return;
            open.delete(e.data.id);
            B.flying--;
            if (o.hitches.length && e.data.error === undefined) B.posts.push({ ...o, answered: Date.now() });
          });
          return w;
        };
        window.Worker.prototype = W.prototype;
      }
      B.install(true, false);      // after the wraps: the outbox takes fetch, and makes its worker, when it is made
      // when each after-frame task (the records' maker) began
      B.afterRuns = [];
      const st = window.setTimeout;
      window.setTimeout = function (fn, ms, ...a) {
        if (typeof fn !== 'function' || fn.name !== 'afterFrame') return st.call(window, fn, ms, ...a);
        return st.call(window, function () { B.afterRuns.push(performance.timeOrigin + performance.now()); return fn.apply(this, arguments); }, ms, ...a);
      };
      // the render calls around each stutter, outside the recorder: when
      // the compile's frame ended and when the next one did
      const r = window.demo.renderer, rec = r.render;
      B.calls = [];
      r.render = function (s, c) {
        const t0 = performance.now(), p0 = r.info.programs ? r.info.programs.length : 0;
        try { return rec.call(this, s, c); } finally {
          B.calls.push([t0, performance.now(), (r.info.programs ? r.info.programs.length : 0) - p0]);
          if (B.calls.length > 600) B.calls.splice(0, 300);
        }
      };
    });
    // A stutter wakes through the first hitch of it that is meaningful
    // (frameMs ≥ 100, DESIGN §9).  On SwiftShader the compile's own frame
    // is often under 100 ms (three.js links inside render); the GPU
    // process then holds the next animation frame back by a few hundred
    // ms, and that frame's hitch is the wake.  Its `at` is the end of the
    // first render after the stall — the first moment page script runs
    // again, so the first moment the stutter is observable to it.
    const wokenAll = [], lat = [], guesses = new Map(), compileMs = [], stallMs = [], atVsEnd = [], byOffset = { own: [], after: [] }, taskWait = [], nextStart = [], woken = [];
    for (let i = 0; i < WAKES; i++) {
      const before = watch.lines.length;
      const t0 = await page.evaluate(() => { window.bench.calls.length = 0; window.bench.afterRuns.length = 0; window.demo.stutter('compile'); return performance.timeOrigin + performance.now(); });
      const end = Date.now() + 10000;
      let k = -1;
      while (Date.now() < end) {
        k = watch.lines.findIndex((x, j) => j >= before && x.record && x.record.type === 'hitch' && x.record.value >= 100 && Date.parse(x.record.at) > t0);
        if (k >= 0) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      if (k >= 0) {
        const w = watch.lines[k].record;
        lat.push(watch.arrivals[k] - Date.parse(w.at));
        wokenAll.push({ at: w.at, guess: w.guess, off: null, sinceMs: Date.parse(w.at) - t0 });
        guesses.set(w.guess, (guesses.get(w.guess) || 0) + 1);
        const calls = await page.evaluate(() => window.bench.calls.map(([a, b, p]) => [performance.timeOrigin + a, performance.timeOrigin + b, p]));
        const c = calls.findIndex(([, , p]) => p > 0);
        if (c >= 0 && c + 1 < calls.length) {
          compileMs.push(calls[c][1] - calls[c][0]);
          stallMs.push(calls[c + 1][1] - calls[c][1]);
          // the woken hitch's at against the render ends: 0 when it is the frame after the compile's
          const near = calls.reduce((b, x) => (Math.abs(x[1] - Date.parse(w.at)) < Math.abs(b - Date.parse(w.at)) ? x[1] : b), Infinity);
          const off = calls.findIndex((x) => x[1] === near) - c;
          atVsEnd.push(off);
          wokenAll[wokenAll.length - 1].off = off;
          woken.push({ off, at: w.at, line: watch.arrivals[k] });
          if (off === 0 || off === 1) {
            byOffset[off === 0 ? 'own' : 'after'].push(lat[lat.length - 1]);
            // the woken frame's end → the first after-frame task after it; → the next render call's start
            const runs = await page.evaluate(() => window.bench.afterRuns.map((x) => x));
            const end = calls[c + off][1];
            const run = runs.find((x) => x >= end);
            if (run !== undefined) taskWait.push(run - end);
            if (c + off + 1 < calls.length) nextStart.push(calls[c + off + 1][0] - end);
          }
        }
      }
      await new Promise((r) => setTimeout(r, 1300));
    }
    const ok = lat.filter(Number.isFinite);
    // where the time goes: the frame's end → the POST leaving the page → its answer → the line
    const posts = await page.evaluate(() => window.bench.posts);
    const byAt = new Map();
    for (const p of posts) for (const at of p.hitches) byAt.set(at, p);
    const toPost = [], inFlight = [], toLine = [];
    watch.lines.forEach((w, k) => {
      const p = w.record && w.record.type === 'hitch' && w.record.value >= 100 ? byAt.get(w.record.at) : null;
      if (!p) return;
      toPost.push(p.sent - Date.parse(w.record.at));
      inFlight.push(p.answered - p.sent);
      toLine.push(watch.arrivals[k] - p.answered);
    });
    console.log(`stutter → wake line at sloptimize watch (new shader materials; the first meaningful hitch's at → its line read), ${ok.length}/${WAKES} stutters, ms:`);
    console.log(`  p50 ${f3(pct(ok, 0.5))}  p99 ${f3(pct(ok, 0.99))}  max ${f3(Math.max(...ok))}   (anchor: the seed's 20 s poll, ~10 s mean; target p99 ≤ 250 ms)`);
    console.log(`  of which: frame end → POST sent p50 ${f3(pct(toPost, 0.5))} p99 ${f3(pct(toPost, 0.99))}; POST → answer p50 ${f3(pct(inFlight, 0.5))} p99 ${f3(pct(inFlight, 0.99))}; answer → line p50 ${f3(pct(toLine, 0.5))} p99 ${f3(pct(toLine, 0.99))} (${toPost.length} matched)`);
    console.log(`  the stall, before it is observable: the compile's render call p50 ${f3(pct(compileMs, 0.5))} p99 ${f3(pct(compileMs, 0.99))}, then its end → the next render call's end p50 ${f3(pct(stallMs, 0.5))} p99 ${f3(pct(stallMs, 0.99))}`);
    for (const key of [0, 1]) {
      const ws = woken.filter((x) => x.off === key && byAt.has(x.at));
      const a2s = ws.map((x) => byAt.get(x.at).sent - Date.parse(x.at)), s2l = ws.map((x) => x.line - byAt.get(x.at).sent);
      console.log(`  the compile's frame +${key}: its frame end → its POST sent p50 ${f3(pct(a2s, 0.5))} max ${f3(Math.max(...a2s))}; POST sent → line p50 ${f3(pct(s2l, 0.5))} max ${f3(Math.max(...s2l))} (${ws.length})`);
    }
    // the wakes that were the compile's own (its frame or the stall's
    // next few), apart from those where the first meaningful hitch after
    // the stutter was some other frame (an ordinary slow frame of a
    // loaded machine: a long-script hitch, which waits up to 250 ms for
    // its script by design)
    const own = lat.filter((l, i) => wokenAll[i] && wokenAll[i].off !== null && wokenAll[i].off >= 0 && wokenAll[i].off <= 3);
    const other = lat.filter((l, i) => wokenAll[i] && !(wokenAll[i].off !== null && wokenAll[i].off >= 0 && wokenAll[i].off <= 3));
    const beside = posts.filter((p) => p.beside > 0).length;
    console.log(`  woken by the compile's own frames (+0…+3): ${own.length}, p50 ${f3(pct(own, 0.5))} p99 ${f3(pct(own, 0.99))} max ${f3(Math.max(...own))}; by another frame: ${other.length}, p50 ${f3(pct(other, 0.5))} max ${f3(Math.max(...other))}; hitch POSTs sent beside another under way: ${beside} of ${posts.length}`);
    // The stutter's own wakes: a meaningful hitch whose frame ended
    // within OWN_MS of the stutter (the compile's frame, the stall after
    // it).  When neither reached 100 ms the first meaningful hitch after
    // it is some other frame, seconds later — an ordinary slow frame of
    // the machine, most often a long-script hitch waiting up to 250 ms
    // for its script — and the line above counts it as the stutter's.
    const OWN_MS = 1000;
    const mine = lat.filter((l, i) => wokenAll[i] && wokenAll[i].sinceMs <= OWN_MS);
    console.log(`  the stutter's own wakes (a meaningful hitch ending within ${OWN_MS} ms of it): ${mine.length}/${WAKES}, p50 ${f3(pct(mine, 0.5))}  p99 ${f3(pct(mine, 0.99))}  max ${f3(Math.max(...mine))}; the ${WAKES - mine.length} others made no hitch of 100 ms or more in that window (their first meaningful hitch after: ${lat.filter((l, i) => wokenAll[i] && wokenAll[i].sinceMs > OWN_MS).map((l, i) => l).join(', ') || 'none'} ms)`);
    // the slowest stutters, each: where its time went
    const slow = lat.map((l, i) => ({ l, w: wokenAll[i] })).filter((x) => x.w).sort((a, b) => b.l - a.l).slice(0, 5);
    console.log(`  the slowest: ${slow.map(({ l, w }) => {
      const p = byAt.get(w.at);
      return `${l} ms (${w.guess}, frame +${w.off ?? '?'}${p ? `: at → POST ${p.sent - Date.parse(w.at)}, POST → answer ${p.answered - p.sent}, ${p.beside} under way beside it, seq ${p.seq}` : ''})`;
    }).join('; ')}`);
    console.log(`  woken by the compile's own frame (≥ 100 ms itself): ${byOffset.own.length}, p50 ${f3(pct(byOffset.own, 0.5))} p99 ${f3(pct(byOffset.own, 0.99))}; by the frame after it, held back: ${byOffset.after.length}, p50 ${f3(pct(byOffset.after, 0.5))} p99 ${f3(pct(byOffset.after, 0.99))}`);
    console.log(`  the woken frame's end → its after-frame task (a 0 ms timer) p50 ${f3(pct(taskWait, 0.5))} p99 ${f3(pct(taskWait, 0.99))}; → the next render call's start p50 ${f3(pct(nextStart, 0.5))} p99 ${f3(pct(nextStart, 0.99))}`);
    console.log(`  the woken hitch: ${[...guesses].map(([g, n]) => `${g} ×${n}`).join(', ')}; its frame, counted from the compile's: ${[...new Set(atVsEnd)].sort().map((d) => `+${d} ×${atVsEnd.filter((x) => x === d).length}`).join(', ')}`);
    // The target is the stutter's own line (issue 9: "the time from a
    // stutter to its wake line"); the first meaningful hitch after a
    // stutter that made none is another frame's line, printed beside
    // without a target.
    bench('stutter -> wake at watch, p99', 10000, mine.length ? pct(mine, 0.99) : null, 'ms', '<= 250 ms',
      mine.length ? pct(mine, 0.99) <= 250 : null, "the seed's 20 s poll, mean");
    bench('first meaningful hitch after a stutter, any frame -> wake, p99', 10000, ok.length ? pct(ok, 0.99) : null, 'ms', '-', null,
      "the seed's 20 s poll, mean");
  }
} finally {
  await browser.close();
  await server.close();
  await vite.stop();
  if (watch) await watch.stop();
  await daemon.stop();
  fs.rmSync(project, { recursive: true, force: true });
}
