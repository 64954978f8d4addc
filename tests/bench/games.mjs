// make bench-games: what the recorder costs a real game's main thread over
// a session of play (issue 22: "page script time rose 0.9 ms per frame
// with the plugin in a 30 fps game").  Figures, never pass/fail.
//
// chart-preview (tests/games/README.md), a rhythm-game highway animated
// every frame, adopted with the one plugin line, its chart played with no
// stutter asked for: (a) the recorder's own time as it measures itself
// (state().own: its tasks — census slices, sends, heartbeats — and the
// render wrapper's own time, a frame's close in it) over the measured
// frames; (b) CDP's TaskDuration and
// ScriptDuration per frame of the same page served with the plugin and
// without it (the same vite, a config without the plugin line), phases
// alternated, each a fresh load of the page — the anchor is the page
// without it; on a loaded machine the difference carries the whole
// page's noise, so the target is read on (a).  Frames are the page's
// animation frames, counted by the same init script in both.  Then
// bench/steady.mjs: the same per-frame work in V8 alone, warm and with the
// caches swept between frames — how much of (a) is the recorder's work
// and how much the memory it fetches again each frame.
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Daemon, tmpdir } from '../lib.mjs';
import { FLAGS } from '../browser.mjs';
import { bench } from './benchlib.mjs';
import { startGame, chartRoutes, openChart } from '../games/driver.mjs';

const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const WARM = QUICK ? 60 : 120;                   // frames of play not measured after the load
const FRAMES = Number(process.env.BENCH_FRAMES || (QUICK ? 200 : 600));
const ROUNDS = Number(process.env.BENCH_ROUNDS || (QUICK ? 1 : 3));
const f3 = (v) => (Number.isFinite(v) ? v.toFixed(3) : 'n/a');
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;

const project = tmpdir('bench-games');
const daemon = await new Daemon(project, { args: ['--global-max', '0', '--per-fp-ms', '0'] }).start();
const bare = path.join(tmpdir('bench-games-vite'), 'vite.config.mjs');
fs.writeFileSync(bare, '// chart-preview without the plugin line: the anchor\nexport default {};\n');
const withIt = await startGame('chart-preview', { daemon: daemon.base, build: 'bench' });
const without = await startGame('chart-preview', { config: bare });
const browser = await chromium.launch({ executablePath: process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });

async function phase(rec) {
  const page = await browser.newPage({ viewport: { width: 320, height: 240 } });
  try {
    await page.addInitScript(() => {
      window.__frames = 0;
      const tick = () => { window.__frames++; requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
    });
    await chartRoutes(page);
    await openChart(page, (rec ? withIt : without).url, { recorder: rec });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const read = async () => {
      const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
      const s = await page.evaluate(() => ({ frames: window.__frames, rec: globalThis.sloptimize?.rec ? globalThis.sloptimize.rec.state() : null }));
      return { task: m.TaskDuration * 1000, script: m.ScriptDuration * 1000, frames: s.frames, rec: s.rec, own: s.rec && s.rec.own };
    };
    const until = (n) => page.waitForFunction((k) => window.__frames >= k, n, { timeout: 600000, polling: 200 });
    await until(WARM);
    const a = await read();
    await until(a.frames + FRAMES);
    const b = await read();
    if (rec && (!b.rec || !b.rec.recording)) throw new Error(`the plugin's recorder is not recording: ${JSON.stringify(b.rec)}`);
    const n = b.frames - a.frames;
    const out = { frames: n, task: (b.task - a.task) / n, script: (b.script - a.script) / n };
    if (rec) {
      out.tasks = (b.own.ms - a.own.ms) / n;
      out.render = (b.own.renderMs - a.own.renderMs) / n;
      out.own = out.tasks + out.render;
      out.over1ms = b.own.over1ms - a.own.over1ms;
      out.maxTaskMs = b.own.maxTaskMs;
      out.maxKind = b.own.maxTaskKind;
      out.loadMs = b.own.loadMs;
      out.beatMaxMs = b.own.byKind?.heartbeat?.maxMs ?? null;
      out.medianMs = b.rec.medianMs;
      out.regime = b.rec.regime;
      out.hitches = b.rec.made?.hitch ?? null;
      // the tasks by what they were (a heartbeat, the every-second refresh, a census's slice…)
      out.kinds = {};
      for (const [k, v] of Object.entries(b.own.byKind || {})) {
        const ms = v.ms - (a.own.byKind?.[k]?.ms ?? 0), tasks = v.tasks - (a.own.byKind?.[k]?.tasks ?? 0);
        if (tasks > 0) out.kinds[k] = { tasks, ms };
      }
    }
    await cdp.detach();
    return out;
  } finally {
    await page.close();
  }
}

try {
  const w = [], wo = [];
  for (let k = 0; k < ROUNDS; k++) {
    w.push(await phase(true));
    wo.push(await phase(false));
  }
  const frames = w.reduce((a, r) => a + r.frames, 0);
  const own = w.reduce((a, r) => a + r.own * r.frames, 0) / frames;
  console.log(`chart-preview played ${ROUNDS} × ${FRAMES} frames with the plugin and as many without, each after ${WARM} frames of a fresh load` +
    ` (regime ${w[0].regime}, frame median ${w.map((r) => r.medianMs).join(' / ')} ms)`);
  console.log(`  the recorder as it measures itself: ${f3(own)} ms/frame (per phase ${w.map((r) => `${f3(r.own)} = tasks ${f3(r.tasks)} + in render ${f3(r.render)}`).join(', ')}),` +
    ` tasks of 1 ms or more ${w.map((r) => r.over1ms).join(', ')}, its longest ${Math.max(...w.map((r) => r.maxTaskMs))} ms (${w.map((r) => r.maxKind).join(' / ')}),` +
    ` hitches recorded ${w.map((r) => r.hitches).join(', ')}`);
  console.log(`  at the game's load, in its task: ${w.map((r) => r.loadMs).join(' / ')} ms (the recorder made, a heartbeat's code run once in it);` +
    ` the longest heartbeat of the session ${w.map((r) => r.beatMaxMs).join(' / ')} ms`);
  const kinds = {};
  for (const r of w) for (const [k, v] of Object.entries(r.kinds)) { kinds[k] ??= { tasks: 0, ms: 0 }; kinds[k].tasks += v.tasks; kinds[k].ms += v.ms; }
  console.log(`  its tasks by kind: ${Object.entries(kinds).sort((x, y) => y[1].ms - x[1].ms)
    .map(([k, v]) => `${k} ${f3(v.ms / frames)} ms/frame (${v.tasks} tasks, ${f3(v.ms / v.tasks)} ms each)`).join(', ')}`);
  console.log(`  the page's task time per frame (CDP TaskDuration): with it ${w.map((r) => f3(r.task)).join(', ')}, without it ${wo.map((r) => f3(r.task)).join(', ')}`);
  console.log(`  the page's script time per frame (CDP ScriptDuration): with it ${w.map((r) => f3(r.script)).join(', ')}, without it ${wo.map((r) => f3(r.script)).join(', ')}`);
  console.log('  target: ≤ 0.05 ms per frame over a session of play (read on the self-measure; the A/B difference holds the page\'s noise)');
  bench('recorder main-thread time on a real game (chart-preview), self-measured', null, own, 'ms/frame', '<= 0.05 ms/frame', own <= 0.05);
  bench('recorder task time on a real game, A/B difference', mean(wo.map((r) => r.task)), mean(w.map((r) => r.task)) - mean(wo.map((r) => r.task)),
    'ms/frame', '-', null, 'chart-preview without the plugin, task time per frame');
  bench('recorder script time on a real game, A/B difference', mean(wo.map((r) => r.script)), mean(w.map((r) => r.script)) - mean(wo.map((r) => r.script)),
    'ms/frame', '-', null, 'chart-preview without the plugin, script time per frame');
} finally {
  await browser.close();
  await withIt.stop();
  await without.stop();
  await daemon.stop();
}
// its own process: it replaces the clock and requestAnimationFrame
execFileSync(process.execPath, [path.join(import.meta.dirname, 'steady.mjs')], { stdio: 'inherit', timeout: 600000 });
