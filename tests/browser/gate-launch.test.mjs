// `sloptimize gate --launch` with real parts: Debian's chromium
// (SwiftShader) launched by the CLI, the demo game on Vite, its
// 2,000-crate scene.  What is held:
//
//   - a golden recorded with --yes from a real capture (source "capture",
//     the configHash of a default bench), then gate → exit 0 with SSIM 1
//     on every channel and no pixel changed;
//   - two captures of unchanged code are byte-identical PNGs;
//   - a "fix" that culls half the crates (the demo's ?cull=1) → exit 1;
//   - no browser → 4 with the install line;
//   - a scene whose setup never returns → 4 within the capture's deadline
//     (--timeout), and SIGINT while it waits → 130: each time no process
//     of the browser left (/proc) and its profile gone.
//
// Each capture steps the scene through 120 warm-up frames of 4,000 draw
// calls on SwiftShader: most of a minute on a loaded machine, so the
// captures are few.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { launchedBrowsers, startVite } from '../browser.mjs';
import { CLI, tmpdir, waitFor } from '../lib.mjs';

const top = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FLAGS = '--use-angle=swiftshader --enable-unsafe-swiftshader --disable-background-networking '
  + '--disable-component-update --disable-sync --no-first-run';
let vite, project, scratch, env, devUrl;

// the browsers the CLI starts (browser.mjs)
let sample, seen, ours, profiles;

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

async function gate(args, extraEnv) {
  const r = await cli(['gate', '--project', project, '--json', ...args], { extraEnv });
  let doc = null;
  try { doc = JSON.parse(r.out); } catch { /* said by the asserts */ }
  return { ...r, doc };
}

function validate(schema, doc) {
  const file = path.join(scratch, 'doc.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  const r = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'), path.join(top, 'schemas', schema), file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${schema}: ${r.stdout}${r.stderr}`);
}

const actual = () => fs.readFileSync(path.join(project, '.sloptimize', 'gate', 'crates.actual.png'));

before(async () => {
  scratch = tmpdir('gate-launch');
  ({ sample, seen, ours, profiles } = launchedBrowsers(scratch));
  project = path.join(scratch, 'game');
  fs.mkdirSync(project);
  env = { ...process.env, TMPDIR: scratch, USER: 'tester', SLOPTIMIZE_BROWSER_ARGS: FLAGS };
  delete env.SLOPTIMIZE_BROWSER;
  vite = await startVite('http://127.0.0.1:9', { env: { SLOPTIMIZE_PROJECT: project } });
  devUrl = JSON.parse(fs.readFileSync(path.join(project, '.sloptimize', 'dev.json'), 'utf8')).url;
});

after(async () => {
  if (vite) await vite.stop();
  assert.deepEqual(ours(), [], 'no browser process outlives the tests');
});

test('gate_launch_records_a_real_frame_passes_it_at_ssim_1_byte_for_byte_and_fails_half_the_crates', { timeout: 1200000 }, async () => {
  // a person records the golden (--yes: approved beforehand), captured
  const rec = await cli(['gate', '--project', project, '--record', '--yes', '--scene', 'crates', '--launch']);
  assert.equal(rec.code, 0, rec.err);
  assert.match(rec.out + rec.err, /recorded the golden of scene 'crates'.*1280×720/);
  const line = JSON.parse(fs.readFileSync(path.join(project, '.sloptimize', 'goldens.jsonl'), 'utf8').trim());
  validate('record.golden.json', line);
  assert.equal(line.source, 'capture');
  assert.equal(line.width, 1280);
  assert.equal(line.height, 720);
  assert.match(line.configHash, /^sha256:[0-9a-f]{64}$/);

  // unchanged code: a pass at SSIM 1 on every channel, nothing changed
  let r = await gate(['--scene', 'crates', '--launch']);
  assert.equal(r.code, 0, r.err);
  validate('gate-output.json', r.doc);
  assert.equal(r.doc.verdict, 'pass');
  assert.deepEqual([r.doc.ssim.r, r.doc.ssim.g, r.doc.ssim.b, r.doc.ssim.min], [1, 1, 1, 1]);
  assert.equal(r.doc.changed.pixels, 0);
  assert.equal(r.doc.frame.source, 'capture');
  assert.equal(r.doc.frame.configHash, line.configHash, 'the same environment, the same configHash');
  const first = actual();
  assert.deepEqual([...first.subarray(1, 4)].map((c) => String.fromCharCode(c)).join(''), 'PNG');

  // again: the same bytes, the PNG exactly as the browser encoded it
  r = await gate(['--scene', 'crates', '--launch']);
  assert.equal(r.code, 0, r.err);
  assert.ok(actual().equals(first), 'two captures of unchanged code are byte-identical');

  // a "fix" that draws half the crates: the picture changed, the gate fails
  r = await gate(['--scene', 'crates', '--launch', '--url', `${devUrl}?cull=1`]);
  assert.equal(r.code, 1, r.err);
  validate('gate-output.json', r.doc);
  assert.equal(r.doc.verdict, 'fail');
  assert.ok(r.doc.ssim.min < 0.98, `SSIM ${r.doc.ssim.min}`);
  assert.ok(r.doc.changed.pixels > 0);
  assert.ok(!actual().equals(first));
  assert.deepEqual(ours(), []);
  assert.deepEqual(profiles(), []);
});

test('gate_launch_without_a_browser_or_without_launch_is_exit_4', async () => {
  let r = await gate(['--scene', 'crates', '--launch'], { SLOPTIMIZE_BROWSER: '/nonexistent' });
  assert.equal(r.code, 4, r.err);
  assert.equal(r.doc.verdict, 'environment');
  assert.match(r.err, /SLOPTIMIZE_BROWSER=\/nonexistent is not an executable file: install Chromium/);
  r = await gate(['--scene', 'crates']);
  assert.equal(r.code, 4);
  assert.match(r.err, /no daemon serves this project, and the game's open tab is reached through it: start it .*or pass --launch/);
  assert.equal(profiles().length, 0);
});

function page(name, setupJs) {
  const file = path.join(scratch, `${name}.html`);
  fs.writeFileSync(file, `<!doctype html><title>${name}</title><script>globalThis.sloptimize.scene('${name}', ${setupJs});</script>`);
  return `file://${file}`;
}

test('gate_launch_a_setup_that_never_returns_is_exit_4_within_the_deadline_and_sigint_is_130', { timeout: 600000 }, async () => {
  const url = page('hang', '() => { for (;;) {} }');
  let r = await cli(['gate', '--project', project, '--record', '--yes', '--scene', 'hang', '--launch', '--url', url, '--timeout', '30']);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /no frame of scene 'hang'.*(stopped answering|deadline)/);
  // the deadline covers the start and the load too; the take-down adds
  // at most a few seconds
  assert.ok(r.ms < 45000, `${r.ms} ms`);
  assert.ok(seen() > 0, 'the browser was seen while it ran');
  assert.deepEqual(ours(), [], 'no process of the browser left');
  assert.deepEqual(profiles(), [], 'its profile removed');
  assert.equal(fs.existsSync(path.join(project, '.sloptimize', 'goldens', 'hang.png')), false, 'nothing recorded');

  // SIGINT while the capture waits on a setup: 130, the browser taken down
  const wait = page('wait', '() => new Promise(() => {})');
  let interrupted = null;
  r = await cli(['gate', '--project', project, '--record', '--yes', '--scene', 'wait', '--launch', '--url', wait], {
    onSpawn: (child) => {
      interrupted = (async () => {
        await waitFor(() => ours().some((p) => /--type=renderer/.test(p.cmd)), { timeout: 60000, what: 'a renderer' });
        await new Promise((res) => setTimeout(res, 3000));
        child.kill('SIGINT');
      })().catch((e) => { child.kill('SIGTERM'); throw e; });
    },
  });
  await interrupted;
  assert.equal(r.code, 130, r.err);
  assert.match(r.err, /interrupted/);
  assert.deepEqual(ours(), []);
  assert.deepEqual(profiles(), []);
});
