// make bench-trace: sloptimize's code on the game's main thread, as the
// browser's own trace sees it — the demo adopted as docs/recorder.md says
// (the plugin's recorder, the in-game panel closed), one stutter of each
// kind the demo makes.  Figures, never pass/fail.
//
// The recorder's self-measure (state().own, bench/recorder.mjs) counts the
// tasks it opens itself; it cannot see the panel's, its animation-frame
// tick, nor tell V8's garbage collector from its own work.  The trace
// can: every top-level FunctionCall whose script is one of the runtime's
// modules (served by the plugin under /@id/__x00__sloptimize:), its
// duration, and the collector's events inside it on the same thread.
// BENCH_QUICK=1: two stutters; TRACE_DUMP=FILE keeps the trace's events
// (with TRACE_PROFILE, the profile: a .cpuprofile DevTools opens);
// TRACE_JS_FLAGS=… V8 flags for the page (an experiment, never a figure).
// TRACE_PROFILE=1: the same stutters under V8's sampling profiler instead
// (every 25 µs), and where the time of each entry point into the runtime
// went, by function — what a trace cannot say (its calls have no inside).
// Sampling slows the page: proportions, not figures.
import { chromium } from 'playwright-core';
import { Daemon, tmpdir } from '../lib.mjs';
import { startVite, FLAGS } from '../browser.mjs';
import { bench } from './benchlib.mjs';

const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const KINDS = QUICK ? ['compile', 'spawn'] : ['compile', 'texture', 'spawn', 'script', 'snap', 'compile', 'spawn'];
const GAP_MS = 4000;                    // between stutters: each settles (records sent, LoAF waits over)

const PROFILE = !['', '0', undefined].includes(process.env.TRACE_PROFILE);
const f2 = (v) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');

// The runtime's modules as the plugin serves them (and as a build inlines
// them under the same names).
const OURS = /__x00__sloptimize:|\/page-runtime\//;
const isGc = (e) => e.cat.includes('v8.gc') || /^(MinorGC|MajorGC|V8\.GC)/.test(e.name);
const isJit = (e) => /^V8\.(Compile|LazyCompile|BytecodeBudgetInterrupt|Optimize|Maglev|Turbofan|ParseFunction|DeoptimizeCode)/.test(e.name);

// The stutters, one of each kind, GAP_MS apart (what is measured is the
// runtime's work around them, so the gap is the bench's design).
async function playStutters(page) {
  for (const k of KINDS) {
    await page.evaluate((k) => window.demo.stutter(k), k);
    await page.waitForTimeout(GAP_MS);
  }
}

// The anchors: tasks of fixed work of the kind a record is (small
// objects, a JSON string), each calibrated in the page to its size,
// queued the way the recorder's after-frame task is (a 0 ms timer after
// a frame), every ANCHOR_EVERY frames (in different frames), traced
// beside it.  Their calls over 1 ms are what the machine does to a small
// task in this page during the stutters (the software renderer's threads,
// V8's interrupts and tier-ups, tracing): the 0.25 ms one is about the
// after-frame task's median; the 0.5 ms one says how often this machine
// takes a task of half a millisecond's work past 1 ms.  The recorder's
// calls beyond those are its own.
const ANCHORS = [{ ms: 0.25, fn: 'benchAnchorTask', at: 0 }, { ms: 0.5, fn: 'benchAnchorHalf', at: 4 }];
const ANCHOR_EVERY = 8;
const anchorScript = ({ ms, fn, at }) => `(() => {
  let s = 0, k = 1, frame = 0;
  const work = (k) => { for (let j = 0; j < k; j++) { const o = []; for (let i = 0; i < 20; i++) o.push({ frame: i + j, name: 'crate#' + i, at: [i * 0.5, j, s & 7], note: \`the \${i} of \${j}\` }); s += JSON.stringify(o).length; } };
  // calibrated as it runs (a task now and then, caches cold from the
  // frames between): the rounds whose median of 15 tasks is within 15 %
  // of its size; then the rounds stay fixed
  const times = [];
  function ${fn}() {
    if (window.${fn}Rounds) { work(k); return; }
    const t0 = performance.now(); work(k); times.push(performance.now() - t0);
    if (times.length < 15) return;
    const m = times.sort((x, y) => x - y)[7];
    times.length = 0;
    if (Math.abs(m - ${ms}) <= 0.15 * ${ms}) window.${fn}Rounds = k;
    else k = Math.max(1, Math.round(k * ${ms} / Math.max(m, 0.005)));
  }
  function tick() { if (++frame % ${ANCHOR_EVERY} === ${at}) setTimeout(${fn}, 0); requestAnimationFrame(tick); }
  requestAnimationFrame(tick);
  window.${fn}Sum = () => s;     // (its work is used: never optimised away)
})();`;

// And a task that only hands a body of the outbox's size (3 KB) to a
// worker, as the outbox's sender does (sender.js): what the browser's
// postMessage alone costs a task, beside the recorder's sends.
const POST_FN = 'benchAnchorPost';
const postScript = `(() => {
  const w = new Worker(URL.createObjectURL(new Blob(['onmessage = (e) => postMessage(e.data.id)'], { type: 'text/javascript' })));
  const body = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ type: 'hitch', frame: i, note: 'x'.repeat(50) })));
  let id = 0, frame = 0;
  function ${POST_FN}() { w.postMessage({ id: ++id, url: location.href, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body, credentials: 'omit' } }); }
  function tick() { if (++frame % ${ANCHOR_EVERY} === 2) setTimeout(${POST_FN}, 0); requestAnimationFrame(tick); }
  requestAnimationFrame(tick);
})();`;

// TRACE_PROFILE: each sample under a call into the runtime's modules
// counts for that entry point, for its leaf (self) and for every function
// on its stack (inclusive).
async function profile(page, cdp) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 25 });
  await cdp.send('Profiler.start');
  await playStutters(page);
  const { profile: prof } = await cdp.send('Profiler.stop');
  if (process.env.TRACE_DUMP) (await import('node:fs')).writeFileSync(process.env.TRACE_DUMP, JSON.stringify(prof));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*[/:]/, '')}:${n.callFrame.lineNumber + 1}`;
  const entry = new Map(), self = new Map(), incl = new Map();
  const add = (m, k, v) => m.set(k, (m.get(k) || 0) + v);
  for (let i = 0; i < prof.samples.length; i++) {
    const ms = (prof.timeDeltas[i + 1] ?? 0) / 1000;
    const chain = [];
    for (let id = prof.samples[i]; id !== undefined; id = parent.get(id)) chain.push(byId.get(id));
    // ours: the leaf and the frames above it while they are the
    // runtime's or native (a WeakMap lookup, a timer); the outermost of
    // the runtime's among them is the entry point — the game's render
    // under the render wrapper, or its add() under add's, is not ours
    let j = 0;
    while (j < chain.length && (chain[j].callFrame.url === '' || OURS.test(chain[j].callFrame.url))) j++;
    const top = chain.slice(0, j).findLast((n) => OURS.test(n.callFrame.url));
    if (!top) continue;
    const e = name(top);
    add(entry, e, ms);
    add(self, `${e} ← ${name(chain[0])}`, ms);
    for (const k of new Set(chain.slice(0, chain.indexOf(top)).map(name))) add(incl, `${e} ⊃ ${k}`, ms);
  }
  const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`sloptimize's code on the demo's main thread, sampled every 25 µs: stutters ${KINDS.join(', ')} (${GAP_MS / 1000} s apart), ms by entry point:`);
  for (const [k, v] of top(entry, 8)) console.log(`  ${f2(v).padStart(8)}  ${k}`);
  console.log('  inside them, by function (inclusive):');
  for (const [k, v] of top(incl, 30)) console.log(`  ${f2(v).padStart(8)}  ${k}`);
  console.log('  by the function the sample was in (self):');
  for (const [k, v] of top(self, 30)) console.log(`  ${f2(v).padStart(8)}  ${k}`);
}

// The trace: every top-level call into the runtime's modules, its thread
// time less V8's collector (whose steps land in whichever task allocates:
// the game's garbage as much as ours).  The compiler's time stays in: V8
// compiling the runtime's code is the runtime's cost to the game.
async function trace(page, cdp) {
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => { for (const x of e.value) events.push(x); });
  const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  // (V8's lazy compiles of a function's first call are only in its
  // compile category: without it they counted as the recorder's own)
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: ['toplevel', 'devtools.timeline', 'v8', 'v8.execute',
    'disabled-by-default-v8.gc', 'disabled-by-default-v8.compile'] } });
  const f0 = await page.evaluate(() => window.sloptimize.rec.state().frames);
  await playStutters(page);
  const st = await page.evaluate(() => window.sloptimize.rec.state());
  await cdp.send('Tracing.end');
  let timer;
  await Promise.race([complete, new Promise((_, no) => { timer = setTimeout(() => no(new Error('the trace did not complete in 60 s')), 60000); })]);
  clearTimeout(timer);
  if (process.env.TRACE_DUMP) (await import('node:fs')).writeFileSync(process.env.TRACE_DUMP, JSON.stringify(events));
  const frames = st.frames - f0;

  // the renderer's main thread
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) throw new Error(`the trace names no renderer main thread (${events.length} events)`);
  const ev = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X');
  // V8's own work inside a call, from its trace events (they nest: a
  // union): the collector's, and the compiler's — a function compiled or
  // tiered up in that call (lazy compiles, bytecode budget interrupts)
  const spans = (pick) => ev.filter(pick).map((g) => [g.ts, g.ts + (g.tdur ?? g.dur)]).sort((a, b) => a[0] - b[0]);
  const gcs = spans(isGc), jits = spans(isJit);
  const within = (list, from, to) => {
    let sum = 0, end = -Infinity;
    for (const [a0, b0] of list) {
      if (a0 >= to) break;
      const a = Math.max(a0, from, end), b = Math.min(b0, to);
      if (b > a) { sum += b - a; end = b; }
    }
    return sum;
  };
  // top-level calls only: a FunctionCall inside another is in its parent's time
  const calls = ev.filter((e) => e.name === 'FunctionCall').sort((a, b) => a.ts - b.ts);
  const top = [];
  let until = -Infinity;
  for (const c of calls) { if (c.ts >= until) { top.push(c); until = c.ts + c.dur; } }
  // a call's time is the thread's CPU time in it (tdur: a loaded machine
  // takes the thread away mid-call, and wall time would count that),
  // its own what V8's collector did not take of it
  const timed = (c) => {
    const d = c.args.data, to = c.ts + c.dur;
    // (never more than the wall time: a trace now and then gives a call
    // a thread time past its own duration — 20.6 ms for a 0.3 ms tick)
    const cpu = Math.min(c.tdur ?? c.dur, c.dur) / 1000, gcMs = within(gcs, c.ts, to) / 1000, jitMs = within(jits, c.ts, to) / 1000;
    return { wall: c.dur / 1000, cpu, gcMs, jitMs, own: Math.max(0, cpu - gcMs), fn: d.functionName || '(anonymous)',
      where: `${String(d.url).replace(/^.*[/:]/, '')}:${d.lineNumber}` };
  };
  // The browser's tasks (outermost), and the task each call ran in: what
  // the page waits on is a task — a call and the microtasks after it (an
  // outbox send it queued) are one
  const runs = [];
  until = -Infinity;
  for (const t of ev.filter((e) => e.name === 'ThreadControllerImpl::RunTask').sort((a, b) => a.ts - b.ts))
    if (t.ts >= until) { runs.push(t); until = t.ts + t.dur; }
  const taskOf = (c) => {
    let lo = 0, hi = runs.length - 1, k = -1;
    while (lo <= hi) { const m = (lo + hi) >> 1; if (runs[m].ts <= c.ts) { k = m; lo = m + 1; } else hi = m - 1; }
    return k >= 0 && c.ts + c.dur <= runs[k].ts + runs[k].dur ? k : -1;
  };
  const ours = top.filter((c) => OURS.test(c.args?.data?.url || '')).map((c) => ({ ...timed(c), task: taskOf(c) }));
  const anchors = ANCHORS.map((a) => top.filter((c) => c.args?.data?.functionName === a.fn).map(timed));
  const posts = top.filter((c) => c.args?.data?.functionName === POST_FN).map(timed);
  const sum = (k) => ours.reduce((a, c) => a + c[k], 0);
  const byWhere = new Map();
  for (const c of ours) {
    const k = `${c.fn} ${c.where}`;
    const o = byWhere.get(k) || { n: 0, own: 0, max: 0, over: 0 };
    o.n++; o.own += c.own; o.max = Math.max(o.max, c.own); if (c.own >= 1) o.over++;
    byWhere.set(k, o);
  }
  const long = ours.filter((c) => c.own >= 1).sort((a, b) => b.own - a.own);
  const longest = Math.max(0, ...ours.map((c) => c.own));
  const cpuTimes = events.some((e) => e.tdur !== undefined);
  // the trace's own cost per call: the recorder's animation-frame tick
  // does three statements, so its median is what tracing adds to a call
  const ticks = ours.filter((c) => c.fn === 'onTick').map((c) => c.own).sort((a, b) => a - b);
  const perCall = ticks.length ? ticks[Math.floor(ticks.length / 2)] : 0;
  console.log(`sloptimize's code on the demo's main thread, traced: ${frames} frames, stutters ${KINDS.join(', ')} (${GAP_MS / 1000} s apart), panel closed`);
  console.log(`  ${ours.length} top-level calls into the runtime's modules: wall ${f2(sum('wall'))} ms, ${cpuTimes ? 'thread CPU' : 'wall (no thread times in this trace)'} ${f2(sum('cpu'))} ms — of it V8's collector ${f2(sum('gcMs'))}, the rest ${f2(sum('own'))} ms, of it the compiler's ${f2(sum('jitMs'))} (${f2(sum('own') / frames)} ms/frame)`);
  console.log(`  the trace's own cost per call (the median of the recorder's three-statement tick): ${f2(perCall)} ms; ${ours.length} calls: ${f2(perCall * ours.length / frames)} ms/frame of the figure above is tracing's`);
  console.log(`  the recorder's self-measure since its start: own.ms ${st.own.ms}, longest ${st.own.maxTaskMs} ms (${st.own.maxTaskKind}), ${st.own.over1ms} of 1 ms or more (wall time, all of V8's work in it); ${st.own.deferredWakes ?? 'not said:'} waking hitches whose census went on after their frame`);
  if (st.own.byKind) {
    console.log('  its tasks by kind (self-measured, wall time: tasks, mean ms, the longest, how many ≥ 1 ms):');
    for (const [k, o] of Object.entries(st.own.byKind).sort((a, b) => b[1].maxMs - a[1].maxMs))
      console.log(`    ${String(o.tasks).padStart(5)}  mean ${f2(o.ms / o.tasks)}  max ${f2(o.maxMs)}  ≥1 ms ×${o.over1ms}  ${k}`);
  }
  if (st.own.long?.length)
    console.log(`  its last tasks of 1 ms or more (kind, wall ms, at frame, hitches made by then): ${st.own.long.map((t) => `${t.kind} ${t.ms} ms @${t.frame} (${t.hitchesMade})`).join('; ')}`);
  console.log('  by entry point (calls, ms without the collector, the longest, how many ≥ 1 ms):');
  for (const [k, o] of [...byWhere].sort((a, b) => b[1].own - a[1].own).slice(0, 12))
    console.log(`    ${String(o.n).padStart(5)} ${f2(o.own).padStart(8)} ms  max ${f2(o.max)}  ≥1 ms ×${o.over}  ${k}`);
  console.log(`  calls of 1 ms or more without the collector: ${long.length}${long.length ? ` — ${long.slice(0, 10).map((c) => `${f2(c.own)} ms ${c.fn} ${c.where} (wall ${f2(c.wall)}, GC ${f2(c.gcMs)}; the compiler's ${f2(c.jitMs)} of it)`).join('; ')}` : ''}`);
  bench('sloptimize main-thread time, traced (recorder and panel), without the collector', perCall * ours.length / frames, sum('own') / frames, 'ms/frame', '<= 0.05 ms/frame',
    null, "tracing's own cost at its calls (the tick's median per call)");
  // the anchor beside the recorder's own tasks (the after-frame ones:
  // queued the same way), each as its calls' median, longest and share ≥ 1 ms
  const tail = (list) => {
    const v = list.map((c) => c.own).sort((a, b) => a - b);
    return { n: v.length, med: v.length ? v[Math.floor(v.length / 2)] : NaN, max: v.length ? v[v.length - 1] : NaN, over: v.filter((x) => x >= 1).length };
  };
  const say = (t) => `${t.n} calls, median ${f2(t.med)} ms, longest ${f2(t.max)}, ${t.over} of 1 ms or more (${f2(100 * t.over / Math.max(1, t.n))} %)`;
  // an after-frame task: every call of ours in the browser's task that
  // ran the after-frame call (a call outside any task stands alone)
  const inTask = new Map();
  for (const c of ours) if (c.task >= 0) inTask.set(c.task, (inTask.get(c.task) || 0) + c.own);
  const afterTasks = ours.filter((c) => c.fn === 'afterFrame').map((c) => ({ own: c.task >= 0 ? inTask.get(c.task) : c.own }));
  const tails = anchors.map(tail), [an, half] = tails, af = tail(afterTasks);
  for (let i = 0; i < ANCHORS.length; i++)
    console.log(`  an anchor, a task of fixed work (calibrated to ~${ANCHORS[i].ms} ms, a 0 ms timer every ${ANCHOR_EVERY} frames): ${say(tails[i])}`);
  console.log(`  an anchor, a task that only posts a 3 KB body to a worker (the sender's way), every ${ANCHOR_EVERY} frames: ${say(tail(posts))}`);
  // the outbox's sends in tasks of their own (its timer's): not a waking
  // hitch's, sent at the end of the game's task on purpose
  const closing = new Set(ours.filter((c) => c.fn === 'closeSoon').map((c) => c.task));
  const sends = tail(ours.filter((c) => /^delivery\.js:/.test(c.where) && c.fn === '(anonymous)' && !closing.has(c.task))
    .map((c) => ({ own: c.task >= 0 ? inTask.get(c.task) : c.own })));
  console.log(`  the outbox's sends in tasks of their own: ${say(sends)}`);
  console.log(`  the recorder's after-frame tasks, the same way (its calls in the browser's task: the after-frame call and what ran after it, an outbox send): ${say(af)}`);
  // the longest: of a call, and of the runtime's calls in one task
  const longestTask = Math.max(longest, ...inTask.values());
  const longTasks = [...inTask].filter(([, ms]) => ms >= 1).sort((a, b) => b[1] - a[1]);
  const callsIn = (k) => ours.filter((c) => c.task === k).map((c) => `${c.fn} ${f2(c.own)}`).join(' + ');
  console.log(`  tasks in which the runtime's calls took 1 ms or more: ${longTasks.length}${longTasks.length ? ` — ${longTasks.slice(0, 8).map(([k, ms]) =>
    `${f2(ms)} ms (${callsIn(k)})`).join('; ')}` : ''}`);
  bench('sloptimize longest call without the collector, traced', an.n ? an.max : null, longest, 'ms', '< 1 ms', longest < 1,
    long.length ? `${long[0].fn} ${long[0].where}; anchor: the longest of ${an.n} calls of a fixed ~${ANCHORS[0].ms} ms task` : null);
  bench('sloptimize longest task without the collector, traced (its calls in one browser task)', an.n ? an.max : null, longestTask, 'ms', '< 1 ms',
    longestTask < 1, `${longTasks.length ? `${callsIn(longTasks[0][0])}; ` : ''}anchor: the longest of ${an.n} calls of a fixed ~${ANCHORS[0].ms} ms task`);
  bench('sloptimize after-frame tasks of 1 ms or more, traced', an.n ? 100 * an.over / an.n : null, af.n ? 100 * af.over / af.n : null, '%', '0 %', af.n ? af.over === 0 : null,
    `the ${ANCHORS[0].ms} ms anchor's calls of 1 ms or more (${an.over} of ${an.n})`);
  bench(`sloptimize after-frame tasks of 1 ms or more beside a fixed ${ANCHORS[1].ms} ms task, traced`, half.n ? 100 * half.over / half.n : null,
    af.n ? 100 * af.over / af.n : null, '%', '-', null,
    `the ${ANCHORS[1].ms} ms anchor's calls of 1 ms or more (${half.over} of ${half.n}, longest ${f2(half.max)} ms): how often this machine stretches half a millisecond's work past 1 ms`);
}

// The page's load, traced from the navigation to its 60th frame: V8's
// compile time on the main thread and on its background threads (the
// runtime's modules are compiled whole when they load: their compile hint,
// docs/recorder.md).  A figure to compare with the hint taken off.
async function loadCompile(browser, url) {
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  try {
    const cdp = await page.context().newCDPSession(page);
    const events = [];
    cdp.on('Tracing.dataCollected', (e) => { for (const x of e.value) events.push(x); });
    const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
    await cdp.send('Tracing.start', { traceConfig: { includedCategories: ['v8', 'disabled-by-default-v8.compile', '__metadata'] } });
    await page.goto(url);
    await page.waitForFunction(() => window.sloptimize?.rec?.state().frames >= 60, null, { timeout: 60000, polling: 100 });
    await cdp.send('Tracing.end');
    let timer;
    await Promise.race([complete, new Promise((_, no) => { timer = setTimeout(() => no(new Error('the load\'s trace did not complete in 60 s')), 60000); })]);
    clearTimeout(timer);
    const names = new Map(events.filter((e) => e.name === 'thread_name').map((e) => [`${e.pid}:${e.tid}`, e.args.name]));
    // the outermost compile events only (they nest)
    const compile = events.filter((e) => e.ph === 'X' && /^V8\.(CompileCode|ParseFunction|ParseProgram|CompileScript|StreamingFinalization|CompileLazy)/.test(e.name))
      .sort((a, b) => a.ts - b.ts);
    const by = new Map(), until = new Map();
    for (const e of compile) {
      const th = `${e.pid}:${e.tid}`;
      if (e.ts < (until.get(th) ?? -Infinity)) continue;
      until.set(th, e.ts + e.dur);
      const k = names.get(th) === 'CrRendererMain' ? 'main' : 'off';
      by.set(k, (by.get(k) || 0) + (e.tdur ?? e.dur) / 1000);
    }
    console.log(`the page's load (to its 60th frame): V8 compiled for ${f2(by.get('main') ?? 0)} ms on the main thread, ${f2(by.get('off') ?? 0)} ms off it (the whole page: three.js, the game, the runtime)`);
  } finally {
    await page.close();
  }
}

const project = tmpdir('bench-trace');
const daemon = await new Daemon(project, { args: ['--global-max', '0', '--per-fp-ms', '0'] }).start();
const vite = await startVite(daemon.base, { env: { SLOPTIMIZE_ISOLATE: '1' } });
let browser = null;
try {
  // TRACE_JS_FLAGS: V8 flags for an experiment (say, --always-sparkplug:
  // what of the tail is code run cold)
  const jsFlags = process.env.TRACE_JS_FLAGS ? [`--js-flags=${process.env.TRACE_JS_FLAGS}`] : [];
  browser = await chromium.launch({ executablePath: process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium', headless: true, args: [...FLAGS, ...jsFlags] });
  if (!PROFILE) await loadCompile(browser, `${vite.url}/`);
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  await page.goto(`${vite.url}/`);
  await page.waitForFunction(() => window.demo && window.sloptimize && window.sloptimize.rec, null, { timeout: 60000 });
  // past the page's load and the recorder's first census
  await page.waitForFunction(() => window.sloptimize.rec.state().frames >= 120, null, { timeout: 60000, polling: 100 });
  if (!PROFILE) {
    for (const a of ANCHORS) await page.addScriptTag({ content: anchorScript(a) });
    await page.addScriptTag({ content: postScript });
    await page.waitForFunction((fns) => fns.every((fn) => window[`${fn}Rounds`] > 0), ANCHORS.map((a) => a.fn), { timeout: 120000, polling: 200 });
  }
  const cdp = await page.context().newCDPSession(page);
  await (PROFILE ? profile : trace)(page, cdp);
} finally {
  await browser?.close();
  await vite.stop();
  await daemon.stop();
}
