// verify.mjs — make bench's figures for `sloptimize bench` (docs/bench.md,
// docs/performance.md), with the demo game on Vite and Debian's chromium
// launched by the CLI itself:
//
//   1. a default bench (3 × 600 frames after 120 of warm-up) of the demo's
//      crates scene: its wall time, and where it went
//      (SLOPTIMIZE_BENCH_TRACE: launch, load, run, close);
//   2. A/A: N benches of the same code, every pair compared — the verb's
//      own verdicts (here a software regime: decided by counters) and the
//      timing statistic's: the same pairs given to the verb as copies
//      relabelled `hardware`, so the rule that would judge frame time on
//      a GPU (pooled run spreads and 1 %) is applied by the real code to
//      this machine's numbers;
//   3. power: benches with a known extra cost (?burn=MS: MS ms of script
//      a frame) against the A/A benches, 10 pairs per cost: the smallest
//      cost the timing statistic calls regressed in at least 9 of 10;
//   4. the clock's own cost per frame, in the browser;
//   5. the same default bench in the open tab: a daemon, the demo's tab
//      open in chromium (playwright-core), `bench` without --launch
//      through the daemon's relay — its wall time beside the launched
//      one's, which pays a browser start and a page load the tab does not.
//
// The verb never compares software timing: (2) and (3) measure the
// statistic, not a verdict the verb would give here — the lines say so.
// Sizes: VERIFY_AA (benches, 8: 28 pairs), VERIFY_FRAMES (60),
// VERIFY_WARMUP (20), VERIFY_RUNS (3), VERIFY_BURNS (ms, "1,2,4,8"),
// VERIFY_PER_BURN (benches per cost, 3); BENCH_QUICK=1 makes each small;
// VERIFY_PARTS (a list of clock, wall, aa, power, tab; default all).
// The A/A and power benches run the cheap variant of the scene
// (?instanced=1&shadows=0): the statistic is what is measured, and the
// default scene costs about a second a frame on SwiftShader here.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { FLAGS, startVite } from '../browser.mjs';
import { CLI, Daemon, build, tmpdir, waitFor } from '../lib.mjs';

const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const env = (k, d) => (process.env[k] !== undefined ? process.env[k] : d);
const AA = Number(env('VERIFY_AA', QUICK ? 4 : 8));
const FRAMES = Number(env('VERIFY_FRAMES', QUICK ? 20 : 60));
const WARMUP = Number(env('VERIFY_WARMUP', QUICK ? 5 : 20));
const RUNS = Number(env('VERIFY_RUNS', 3));
const BURNS = env('VERIFY_BURNS', QUICK ? '4,16' : '1,2,4,8').split(',').map(Number);
const PER_BURN = Number(env('VERIFY_PER_BURN', QUICK ? 2 : 3));
const CHEAP = 'instanced=1&shadows=0';
const PARTS = new Set(env('VERIFY_PARTS', 'clock,wall,aa,power,tab').split(','));

const num = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : Math.round(x * 1000) / 1000);
const bench = (measure, anchor, ours, unit, target, met, vs) =>
  console.log(`BENCH measure=${measure} anchor=${num(anchor)} ours=${num(ours)} unit=${unit} target=${target} met=${met === null ? '-' : met ? 'yes' : 'no'}${vs ? ` vs=${vs}` : ''}`);

const scratch = tmpdir('bench-verify');
const project = path.join(scratch, 'game');
const judge = path.join(scratch, 'judge');   // relabelled copies and their history
fs.mkdirSync(project);
fs.mkdirSync(path.join(judge, '.sloptimize', 'bench'), { recursive: true });
const childEnv = { ...process.env, TMPDIR: scratch, SLOPTIMIZE_BROWSER_ARGS: '--use-angle=swiftshader', SLOPTIMIZE_BENCH_TRACE: '1' };

function run(args) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(CLI, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => {
      let doc = null;
      try { doc = JSON.parse(out); } catch { /* said by the caller */ }
      resolve({ code, doc, err, ms: Date.now() - t0 });
    });
  });
}

// trace lines: "bench trace: loaded    17.36 s"
function phases(err) {
  const t = {};
  for (const m of err.matchAll(/bench trace: (\w+)\s+([\d.]+) s/g)) t[m[1]] = Number(m[2]);
  return t;
}

async function benchOnce(url, frames, warmup, runs, label) {
  const r = await run(['bench', '--project', project, '--json', '--scene', 'crates', '--launch', '--url', url,
    '--frames', String(frames), '--warmup', String(warmup), '--runs', String(runs)]);
  if (r.code !== 0 || !r.doc || !r.doc.run) throw new Error(`${label}: exit ${r.code}: ${r.err.slice(0, 2000)}`);
  const b = r.doc.run.bench;
  console.log(`  ${label}: ${(r.ms / 1000).toFixed(1)} s, frame median ${b.frame.medianMs} ms (spread ${b.frame.noiseFloorMs}), ` +
    `p95 ${b.frame.p95Ms}, draw calls ${b.render.calls}; load ${JSON.stringify(phases(r.err))}`);
  return { path: r.doc.run.path, bench: b, ms: r.ms, phases: phases(r.err) };
}

// the verb's verdict on two files, as they are and relabelled hardware
async function compare(a, b) {
  const real = await run(['bench', '--project', judge, '--json', '--compare', a.path, b.path]);
  const relabel = (x, name) => {
    const d = JSON.parse(fs.readFileSync(x.path, 'utf8'));
    d.regime = 'hardware';
    d.grade.timing = 'hardware';
    d.environment.gpu = `relabelled for the harness: ${d.environment.gpu || 'none'}`;
    const p = path.join(judge, `${name}.json`);
    fs.writeFileSync(p, JSON.stringify(d));
    return p;
  };
  const hw = await run(['bench', '--project', judge, '--json', '--compare', relabel(a, 'a'), relabel(b, 'b')]);
  const m = hw.doc && hw.doc.compare ? hw.doc.compare.metrics.find((x) => x.name === 'frame.medianMs') : null;
  return { real: real.code, timing: hw.code, median: m };
}

async function clockCost() {
  const src = fs.readFileSync(path.join(build, 'gen', 'pagebench.js'), 'utf8');
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: FLAGS });
  try {
    const page = await browser.newPage();
    await page.addInitScript(`(function(){${src}\ninstallBench(globalThis,{mode:'virtual',seed:1});})();`);
    await page.goto('about:blank');
    return await page.evaluate(() => {
      const c = globalThis.sloptimize.clock;
      const N = 200000, M = 1000000;
      let n = 0;
      const cb = () => { n++; requestAnimationFrame(cb); };
      requestAnimationFrame(cb);
      for (let i = 0; i < 1000; i++) c.step();
      let t = c.real();
      for (let i = 0; i < N; i++) c.step();
      const stepUs = ((c.real() - t) * 1000) / N;
      // the floor: the same callback called directly, re-queued in an array
      const q = [];
      const cb2 = () => { n++; q.push(cb2); };
      q.push(cb2);
      t = c.real();
      for (let i = 0; i < N; i++) q.pop()(0);
      const directUs = ((c.real() - t) * 1000) / N;
      let s = 0;
      t = c.real();
      for (let i = 0; i < M; i++) s += performance.now();
      const nowNs = ((c.real() - t) * 1e6) / M;
      const real = c.real;
      t = real();
      for (let i = 0; i < M; i++) s += real();
      const nativeNs = ((real() - t) * 1e6) / M;
      return { stepUs, directUs, nowNs, nativeNs, n, s: s > 0 };
    });
  } finally {
    await browser.close();
  }
}

// A daemon, the demo on a Vite of its own proxying to it, one tab open in
// chromium: the bench goes through the relay, as a developer's would.
async function openTabBench([frames, warmup, runs]) {
  const tabProject = path.join(scratch, 'tab');
  fs.mkdirSync(tabProject, { recursive: true });
  const daemon = await new Daemon(tabProject).start();
  const tabVite = await startVite(daemon.base, { env: { SLOPTIMIZE_PROJECT: tabProject } });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: FLAGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`${tabVite.url}/`);
    await waitFor(async () => (await daemon.get('/api/sloptimize/relay')).pages.length === 1, { timeout: 120000, what: 'the tab on the relay' });
    const r = await new Promise((resolve) => {
      const t0 = Date.now();
      const p = spawn(CLI, ['bench', '--project', tabProject, '--json', '--scene', 'crates', '--frames', String(frames),
        '--warmup', String(warmup), '--runs', String(runs)], { env: { ...daemon.env, TMPDIR: scratch }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '', err = '';
      p.stdout.on('data', (x) => { out += x; });
      p.stderr.on('data', (x) => { err += x; });
      p.on('close', (code) => resolve({ code, out, err, ms: Date.now() - t0 }));
    });
    if (r.code !== 0 && r.code !== 1) throw new Error(`open tab: exit ${r.code}: ${r.err.slice(0, 2000)}`);
    const b = JSON.parse(r.out).run.bench;
    console.log(`  open tab: ${(r.ms / 1000).toFixed(1)} s, frame median ${b.frame.medianMs} ms, draw calls ${b.render.calls}`);
    return { ms: r.ms, bench: b };
  } finally {
    await browser.close();
    await tabVite.stop();
    await daemon.stop();
  }
}

const vite = await startVite('http://127.0.0.1:9');
try {
  console.log(`verify: ${QUICK ? 'BENCH_QUICK: ' : ''}A/A ${AA} benches, ${RUNS} × ${FRAMES} frames after ${WARMUP}, burns ${BURNS.join(', ')} ms × ${PER_BURN}`);

  // 4. the clock first: cheapest, and not disturbed by the benches
  if (PARTS.has('clock')) {
    const cc = await clockCost();
    console.log(`  clock: step ${cc.stepUs.toFixed(3)} µs (the callback called directly: ${cc.directUs.toFixed(3)} µs); ` +
      `performance.now() ${cc.nowNs.toFixed(1)} ns (native ${cc.nativeNs.toFixed(1)} ns)`);
    bench('clock: its cost per frame (a step running one callback)', cc.directUs, cc.stepUs, 'µs', '-', null, 'the callback called directly');
    bench('clock: performance.now() under the clock', cc.nativeNs, cc.nowNs, 'ns', '-', null, "the browser's own");
  }

  // 1. a default bench
  const full = QUICK ? [60, 12, 3] : [600, 120, 3];
  const totalFrames = full[0] * full[2] + full[1];
  let launchedMs = null;
  if (PARTS.has('wall')) {
    const d = await benchOnce(`${vite.url}/`, ...full, `default bench${QUICK ? ' (QUICK: 3 × 60 after 12)' : ''} of crates`);
    const fixed = (d.phases.launched || 0) + ((d.phases.loaded || 0) - (d.phases.launched || 0)) + ((d.phases.closed || 0) - (d.phases.ran || 0));
    launchedMs = d.ms;
    bench(`bench: a default bench (${full[2]} × ${full[0]} frames after ${full[1]}), crates, launched: wall`, (totalFrames / 60),
      d.ms / 1000, 's', '≤ 30 s', d.ms <= 30000, `${totalFrames} frames at 60 Hz, the floor of a bench paced by the browser's frames`);
    bench('bench: of it, launch + page load + close', null, fixed, 's', '-', null);
    bench('bench: the default scene\'s frame time on SwiftShader (median)', 1000 / 60, d.bench.frame.medianMs, 'ms', '-', null, 'one 60 Hz frame');
  }

  // 5. the same bench in the open tab, through the daemon's relay
  if (PARTS.has('tab')) {
    const t = await openTabBench(full);
    bench(`bench: a default bench (${full[2]} × ${full[0]} frames after ${full[1]}), crates, in the open tab: wall`, (totalFrames / 60),
      t.ms / 1000, 's', '≤ 30 s', t.ms <= 30000, launchedMs === null ? `${totalFrames} frames at 60 Hz` :
        `${totalFrames} frames at 60 Hz; launched: ${(launchedMs / 1000).toFixed(1)} s`);
  }

  // 2. A/A
  if (PARTS.has('aa') || PARTS.has('power')) {
    const aa = [];
    for (let i = 0; i < AA; i++) aa.push(await benchOnce(`${vite.url}/?${CHEAP}`, FRAMES, WARMUP, RUNS, `A/A ${i + 1}/${AA}`));
    const pairs = [];
    for (let i = 0; i < aa.length; i++) for (let j = i + 1; j < aa.length; j++) pairs.push([aa[i], aa[j]]);
    let verbAlarms = 0, timingAlarms = 0, real5 = 0;
    for (const [a, b] of pairs) {
      const c = await compare(a, b);
      if (c.real === 5) real5++;
      if (c.real === 0 || c.real === 1) verbAlarms++;
      if (c.timing === 0 || c.timing === 1) timingAlarms++;
    }
    console.log(`  A/A: ${pairs.length} pairs; the verb: ${real5} × exit 5, ${verbAlarms} false alarms; the timing statistic: ${timingAlarms} false alarms`);
    bench(`A/A: the verb's false alarms over ${pairs.length} pairs (software regime: counters decide)`, null, verbAlarms, 'pairs', '0', verbAlarms === 0);
    bench(`A/A: the timing statistic's false alarms over ${pairs.length} pairs (${RUNS} × ${FRAMES} frames; the verb would not compare them here)`,
      null, timingAlarms, 'pairs', '0', timingAlarms === 0);
    const spreads = aa.map((x) => x.bench.frame.noiseFloorMs).sort((x, y) => x - y);
    bench('A/A: the spread of the runs\' frame medians (median of the benches)', null, spreads[Math.floor(spreads.length / 2)], 'ms', '-', null);

    // 3. power: a known extra cost against the A/A benches
    let smallest = null;
    for (const ms of PARTS.has('power') ? BURNS : []) {
      const burned = [];
      for (let k = 0; k < PER_BURN; k++) burned.push(await benchOnce(`${vite.url}/?${CHEAP}&burn=${ms}`, FRAMES, WARMUP, RUNS, `burn ${ms} ms ${k + 1}/${PER_BURN}`));
      // ten pairs, each an A/A bench before and a burned one after
      const tries = Array.from({ length: 10 }, (_, i) => [aa[i % aa.length], burned[i % burned.length]]);
      let detected = 0;
      const verdicts = [], deltas = [];
      for (const [a, b] of tries) {
        const c = await compare(a, b);
        verdicts.push(c.timing);
        if (c.median) deltas.push(c.median.delta);
        if (c.timing === 1) detected++;
      }
      deltas.sort((x, y) => x - y);
      const rise = deltas.length ? deltas[Math.floor(deltas.length / 2)] : null;
      console.log(`  burn ${ms} ms: the timing statistic said regressed in ${detected} of 10 pairs (exits ${verdicts.join(' ')}); ` +
        `the frame median rose by ${num(rise)} ms (median of the pairs)`);
      bench(`power: ${ms} ms of extra script a frame, the frame median's rise`, ms, rise, 'ms', '-', null, 'the cost added');
      bench(`power: ${ms} ms of extra script a frame, detected (timing statistic)`, null, detected, 'of 10 pairs', '≥ 9', detected >= 9);
      if (detected >= 9 && smallest === null) smallest = ms;
    }
    bench(`power: the smallest extra cost detected in ≥ 9 of 10 pairs (of ${BURNS.join(', ')} ms)`, null, smallest, 'ms', '-', null);
  }
} finally {
  await vite.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
}
