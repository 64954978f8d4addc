// `sloptimize bench` with real parts: Debian's chromium (SwiftShader)
// launched by the CLI itself, the demo game on Vite, its 2,000-crate
// scene, the MCP server through the official SDK client.  What is held:
//
//   - the same code benched again → exit 5, every time (ten A/A
//     comparisons: four benched one after another with --compare last,
//     one through MCP run_bench, and the other pairs of those benches
//     compared as files);
//   - instancing the crates → improved, exit 0, draw calls down by
//     exactly 2 × (2,000 − 1) (each crate was drawn in the main pass and
//     the shadow pass; the instanced mesh once in each), triangles equal;
//   - a bench over a budget at level error → 1; with --compare the
//     budgets' distances are printed and recorded and the exit stays the
//     verdict's; a timing budget is not judged on SwiftShader;
//   - a bench from another regime with the same configHash → 3;
//   - no browser → 4 with the install hint; no --launch and no daemon → 4; nothing to
//     compare with → 4 before any browser starts;
//   - a page whose scene setup never returns → 4 within its deadline, a
//     renderer killed under the bench → 4 "crashed", SIGINT → 130: each
//     time no process of the browser left (/proc) and its profile gone;
//   - a torn bench file → 4 naming it; a torn history line → the next
//     line still whole on a line of its own;
//   - dev.json: without --url the bench goes to the URL Vite recorded.
//
// Timing takes no part: SwiftShader's timing is reported and never
// compared, so every verdict here is decided by counters, which the
// virtual clock makes exact.  Benches are tiny (2 frames × 2 runs): the
// page load dominates on a loaded machine.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { launchedBrowsers, startVite } from '../browser.mjs';
import { CLI, tmpdir, waitFor } from '../lib.mjs';

const CRATES = 2000;
const SMALL = ['--frames', '2', '--warmup', '1', '--runs', '2'];
let vite, project, scratch, env;

// the browsers the CLI starts (browser.mjs)
let sample, seen, ours, profiles;

// Run the CLI; resolves {code, signal, out, err, ms}.  onSpawn gets the child.
function cli(args, { extraEnv = {}, onSpawn } = {}) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const p = spawn(CLI, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    const sampler = setInterval(() => sample(), 500);
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    if (onSpawn) onSpawn(p);
    p.on('close', (code, signal) => { clearInterval(sampler); resolve({ code, signal, out, err, ms: Date.now() - t0 }); });
  });
}

async function bench(args, extraEnv) {
  const r = await cli(['bench', '--project', project, '--json', ...args], { extraEnv });
  let doc = null;
  try { doc = JSON.parse(r.out); } catch { /* said below */ }
  return { ...r, doc };
}

const benches = () => fs.readdirSync(path.join(project, '.sloptimize', 'bench')).filter((n) => n.endsWith('.json')).sort();
const metric = (doc, name) => doc.compare.metrics.find((m) => m.name === name);

before(async () => {
  scratch = tmpdir('bench-verb');
  ({ sample, seen, ours, profiles } = launchedBrowsers(scratch));
  project = path.join(scratch, 'game');
  fs.mkdirSync(project);
  env = { ...process.env, TMPDIR: scratch, SLOPTIMIZE_BROWSER_ARGS: '--use-angle=swiftshader' };
  delete env.SLOPTIMIZE_BROWSER;
  vite = await startVite('http://127.0.0.1:9', { env: { SLOPTIMIZE_PROJECT: project } });
});

after(async () => {
  if (vite) await vite.stop();
  assert.deepEqual(ours(), [], 'no browser process outlives the tests');
});

test('bench_needs_a_browser_a_launch_and_a_before_bench_each_said_with_exit_4', async () => {
  let r = await bench(['--scene', 'crates', '--launch'], { SLOPTIMIZE_BROWSER: '/nonexistent' });
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /SLOPTIMIZE_BROWSER=\/nonexistent is not an executable file: install Chromium \(Debian\/Ubuntu: sudo apt-get install chromium/);
  assert.equal(r.doc.meaning, 'environment');
  r = await bench(['--scene', 'crates', '--launch'], { PATH: '/nonexistent-bin' });
  assert.equal(r.code, 4);
  assert.match(r.err, /no browser found \(chromium, chromium-browser or google-chrome on PATH\)/);
  r = await bench(['--scene', 'crates']);
  assert.equal(r.code, 4);
  assert.match(r.err, /no daemon serves this project, and the game's open tab is reached through it: start it .*or pass --launch/);
  r = await bench(['--scene', 'crates', '--launch', '--compare', 'last']);
  assert.equal(r.code, 4);
  assert.match(r.err, /nothing to compare with: no bench yet/);
  assert.ok(r.ms < 5000, `said before any browser started (${r.ms} ms)`);
  r = await bench(['--scene', 'crates', '--frames', '0']);
  assert.equal(r.code, 2);
  assert.equal(profiles().length, 0);
});

test('bench_a_a_is_exit_5_every_time_and_instancing_is_improved_by_the_exact_draw_calls', { timeout: 900000 }, async () => {
  // budgets: draw calls at level error (the crates are far over), frame
  // time too (not judged on a software renderer)
  fs.writeFileSync(path.join(project, 'sloptimize.budgets.json'),
    JSON.stringify({ 'perf.budget.draw_calls': 100, 'perf.budget.frame_ms_p95': { max: 16.7, level: 'error' } }));
  // the baseline, at the URL the dev server recorded in dev.json
  const dev = JSON.parse(fs.readFileSync(path.join(project, '.sloptimize', 'dev.json'), 'utf8'));
  let r = await bench(['--scene', 'crates', '--launch', ...SMALL]);
  assert.equal(r.code, 1, `a budget at level error is breached: ${r.err}`);
  assert.equal(r.doc.meaning, 'budget breached');
  assert.deepEqual(r.doc.budgets.breached, ['perf.budget.draw_calls']);
  const frameBudget = r.doc.budgets.items.find((i) => i.key === 'perf.budget.frame_ms_p95');
  assert.equal(frameBudget.state, 'not-judged');
  assert.match(frameBudget.text, /not judged \(software regime/);
  const b0 = r.doc.run.bench;
  assert.equal(b0.environment.url, `${dev.url}?sloptimize=bench:crates`);
  assert.equal(b0.regime, 'software');
  assert.match(b0.environment.gpu, /SwiftShader/);
  assert.equal(b0.grade.counters, 'exact');
  assert.equal(b0.grade.timing, 'software');
  assert.equal(b0.environment.viewport.width, 1280);
  assert.equal(b0.environment.viewport.height, 720);
  assert.equal(b0.environment.pixelRatio, 1);
  assert.equal(b0.perRun.length, 2);
  assert.ok(b0.render.calls >= 2 * CRATES, `every crate drawn twice (main and shadow pass): ${b0.render.calls}`);

  // A/A, benched one after another
  const verdicts = [];
  for (let i = 0; i < 4; i++) {
    r = await bench(['--scene', 'crates', '--launch', ...SMALL, '--compare', 'last', '--change', `a/a ${i}`]);
    assert.equal(r.code, 5, `A/A ${i}: ${r.err}\n${r.out.slice(0, 2000)}`);
    assert.equal(r.doc.compare.verdict, 'no-detectable-change');
    assert.match(r.doc.compare.history.line.distances['perf.budget.draw_calls'], /over by/,
      'the distance is recorded; the breach does not turn 5 into 1');
    assert.equal(r.doc.run.bench.environment.configHash, b0.environment.configHash);
    assert.equal(r.doc.run.bench.render.calls, b0.render.calls);
    verdicts.push(r.code);
  }

  // A/A through MCP: run_bench on the pool, the same checks and exits
  const client = new Client({ name: 'bench-verb-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: CLI, args: ['mcp', '--project', project], env, stderr: 'pipe' }));
  try {
    const res = await client.callTool({ name: 'run_bench', arguments: { scene: 'crates', launch: true, frames: 2, warmup: 1, runs: 2, compare: 'last', change: 'a/a mcp' } },
      undefined, { timeout: 600000 });
    assert.equal(res.isError, false, JSON.stringify(res.content));
    assert.equal(res.structuredContent.exit, 5, JSON.stringify(res.structuredContent).slice(0, 2000));
    assert.equal(res.structuredContent.compare.verdict, 'no-detectable-change');
    verdicts.push(res.structuredContent.exit);
    const ledger = (await client.callTool({ name: 'get_bench_ledger', arguments: { scene: 'crates' } })).structuredContent;
    assert.equal(ledger.lines.length, 5);
    assert.deepEqual(ledger.lines.map((l) => l.change.description), ['a/a 0', 'a/a 1', 'a/a 2', 'a/a 3', 'a/a mcp']);
    assert.deepEqual(ledger.skipped, []);
    const bad = await client.callTool({ name: 'run_bench', arguments: { scene: 'crates', frames: 0 } });
    assert.equal(bad.isError, true, 'a nonsense request is a tool error');
  } finally {
    await client.close();
  }

  // the other pairs of the same code, compared as files
  const files = benches();
  assert.equal(files.length, 6);
  for (const [a, b] of [[0, 2], [0, 3], [1, 4], [2, 5], [0, 5]]) {
    r = await bench(['--compare', files[a], files[b]]);
    assert.equal(r.code, 5, `${files[a]} vs ${files[b]}: ${r.err}`);
    verdicts.push(r.code);
  }
  assert.deepEqual(verdicts, Array(10).fill(5), 'ten A/A comparisons, ten times no-detectable-change');

  // instancing: one change, a verdict now
  r = await bench(['--scene', 'crates', '--launch', ...SMALL, '--url', `${dev.url}?instanced=1`,
    '--compare', 'last', '--change-ref', 'git:0000000', '--change', 'instance the crates']);
  assert.equal(r.code, 0, `${r.err}\n${r.out.slice(0, 3000)}`);
  assert.equal(r.doc.compare.verdict, 'improved');
  assert.deepEqual(r.doc.compare.decidedBy, ['render.calls', 'render.triangles']);
  const calls = metric(r.doc, 'render.calls');
  assert.equal(calls.delta, -2 * (CRATES - 1), 'draw calls down by exactly 3,998');
  assert.equal(calls.verdict, 'improved');
  assert.equal(metric(r.doc, 'render.triangles').delta, 0);
  assert.equal(metric(r.doc, 'frame.medianMs').verdict, 'not-compared');
  const programs = metric(r.doc, 'render.programs');
  assert.equal(programs.verdict, 'regressed', 'instancing adds programs: reported');
  assert.equal(programs.decisive, false);
  const line = fs.readFileSync(path.join(project, '.sloptimize', 'bench-history.jsonl'), 'utf8').trim().split('\n').map(JSON.parse).at(-1);
  assert.deepEqual(line.change, { ref: 'git:0000000', description: 'instance the crates' });
  assert.equal(line.verdict, 'improved');
  assert.equal(line.after.calls, line.before.calls - 2 * (CRATES - 1));
  assert.equal(line.budgets['perf.budget.draw_calls'], 'inside');
  assert.equal(line.budgets['perf.budget.frame_ms_p95'], 'not-judged');
  fs.rmSync(path.join(project, 'sloptimize.budgets.json'));

  // a bench from another regime with the same configHash: incomparable
  const last = benches().at(-1);
  const hw = JSON.parse(fs.readFileSync(path.join(project, '.sloptimize', 'bench', last), 'utf8'));
  hw.regime = 'hardware';
  hw.grade.timing = 'hardware';
  const hwPath = path.join(scratch, 'hardware.json');
  fs.writeFileSync(hwPath, JSON.stringify(hw));
  r = await bench(['--compare', path.join(project, '.sloptimize', 'bench', last), hwPath]);
  assert.equal(r.code, 3, r.err);
  assert.equal(r.doc.compare.verdict, 'incomparable');
  assert.match(r.doc.compare.why, /software regime, the other in a hardware one/);
  assert.deepEqual(ours(), []);
  assert.deepEqual(profiles(), []);
});

test('bench_torn_files_are_said_and_the_history_stays_whole', async () => {
  const dir = path.join(project, '.sloptimize', 'bench');
  const files = benches();
  const torn = path.join(dir, files[0]);
  const text = fs.readFileSync(torn, 'utf8');
  fs.writeFileSync(torn, text.slice(0, Math.floor(text.length / 2)));
  let r = await bench(['--compare', files[0], files[1]]);
  assert.equal(r.code, 4);
  assert.match(r.err, new RegExp(`${files[0]}: not whole JSON`));
  // a writer died mid-line in the history; the next comparison is whole
  const hist = path.join(project, '.sloptimize', 'bench-history.jsonl');
  fs.appendFileSync(hist, '{"at":"2026-12-01T00:00:00Z","verd');
  r = await bench(['--compare', files[1], files[2]]);
  assert.equal(r.code, 5, r.err);
  const lines = fs.readFileSync(hist, 'utf8').split('\n');
  assert.equal(lines.at(-1), '', 'ends with a newline');
  assert.equal(JSON.parse(lines.at(-2)).verdict, 'no-detectable-change');
  assert.equal(lines.at(-3), '{"at":"2026-12-01T00:00:00Z","verd', 'the torn line stays a line of its own');
  // the words a person reads
  const h = await cli(['bench', '--project', project, '--compare', files[2], files[3]]);
  assert.equal(h.code, 5);
  assert.match(h.out, /^compare crates-\S+ → crates-\S+: no-detectable-change$/m);
  assert.match(h.out, /^ {2}draw calls +[\d,]+ → [\d,]+ +0 +no-detectable-change \(decisive\)$/m);
  assert.match(h.out, /^ {2}not-compared: software regime: timing is reported, never compared$/m);
  assert.match(h.out, /^exit 5: no-detectable-change \(a result, not a failure\)$/m);
});

function hangPage(name, setupJs) {
  const file = path.join(scratch, `${name}.html`);
  fs.writeFileSync(file, `<!doctype html><title>${name}</title><script>globalThis.sloptimize.scene('${name}', ${setupJs});</script>`);
  return `file://${file}`;
}

test('bench_a_setup_that_never_returns_is_exit_4_within_its_deadline_and_nothing_is_left', async () => {
  const url = hangPage('hang', '() => { for (;;) {} }');
  const r = await bench(['--scene', 'hang', '--launch', '--url', url, '--setup-timeout', '3', '--frames', '1', '--runs', '1', '--warmup', '0']);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /stopped answering .*a script that never returns/);
  // the deadline: the setup's 3 s and 10 s of grace, after a start and a
  // load that take their own time on a loaded machine
  assert.ok(r.ms < 90000, `${r.ms} ms`);
  assert.ok(seen() > 0, 'the browser was seen while it ran');
  assert.deepEqual(ours(), [], 'no process of the browser left');
  assert.deepEqual(profiles(), [], 'its profile removed');
});

test('bench_a_renderer_that_dies_is_a_crash_exit_4_and_sigint_takes_the_browser_down', async () => {
  // the setup says it has begun (a request to this server) and then waits
  // for ever: the page is open and its bench waits on the setup — a
  // condition, not a guess at how long a loaded machine takes to get there
  let entered = 0;
  const mark = http.createServer((req, res) => { entered++; res.end(); });
  await new Promise((res) => mark.listen(0, '127.0.0.1', res));
  const url = hangPage('wait', `() => { fetch('http://127.0.0.1:${mark.address().port}/entered', { mode: 'no-cors' }).catch(() => {}); return new Promise(() => {}); }`);
  const args = ['bench', '--project', project, '--scene', 'wait', '--launch', '--url', url, '--setup-timeout', '120',
    '--frames', '1', '--runs', '1', '--warmup', '0'];
  const inSetup = async (n) => waitFor(() => entered >= n, { timeout: 90000, interval: 50, what: 'the scene\'s setup begun' });
  // the page's renderer killed from outside: Inspector.targetCrashed.
  // Every renderer of ours then: the one that runs the page among them
  // (the first one seen may have been about:blank's, replaced since)
  let killed = null;
  let r = await cli(args, {
    onSpawn: (child) => {
      killed = (async () => {
        await inSetup(1);
        const renderers = ours().filter((p) => /--type=renderer/.test(p.cmd) && !/top-chrome/.test(p.cmd));
        assert.ok(renderers.length > 0, 'a renderer runs the page');
        for (const p of renderers) try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
      })().catch((e) => { child.kill('SIGTERM'); throw e; });
    },
  });
  await killed;
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /the page crashed \(Inspector\.targetCrashed\)/);
  assert.deepEqual(ours(), []);
  assert.deepEqual(profiles(), []);

  // SIGINT while the bench waits: 130, the browser taken down
  let interrupted = null;
  r = await cli(args, {
    onSpawn: (child) => {
      interrupted = (async () => {
        await inSetup(2);
        child.kill('SIGINT');
      })().catch((e) => { child.kill('SIGTERM'); throw e; });
    },
  });
  await interrupted;
  mark.close();
  assert.equal(r.code, 130, r.err);
  assert.match(r.err, /interrupted/);
  assert.deepEqual(ours(), []);
  assert.deepEqual(profiles(), []);
});
