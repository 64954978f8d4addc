// Budgets end to end (docs/budgets.md): the real daemon writes
// .sloptimize/profile.json from the heartbeats it folds (live ones at
// once, a catch-up's last one once), and `sloptimize check`, `hook-status`
// and `doctor` judge it against sloptimize.budgets.json with the exit
// codes CI and the doctrine read.  No timing in here: every wait is on a
// condition the daemon reports (its /status, the file's source offset).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { CLI, Daemon, appendFromProcess, hitch, perfPath, tmpdir, top, waitFor } from '../lib.mjs';

const daemons = [];
after(async () => { for (const d of daemons) await d.stop(); });

function project(budgets) {
  const dir = tmpdir('budgets');
  fs.mkdirSync(path.join(dir, '.sloptimize'));
  if (budgets !== undefined)
    fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), typeof budgets === 'string' ? budgets : JSON.stringify(budgets, null, 2));
  return dir;
}

async function daemon(dir, state) {
  const d = await new Daemon(dir, { args: ['--desktop', '0'], state }).start();
  daemons.push(d);
  return d;
}

function heartbeat({ at = new Date().toISOString(), calls = 40, p95 = 20, regime = 'software', ...extra } = {}) {
  return JSON.stringify({
    type: 'heartbeat', at, regime, build: 'b1', ctx: '',
    window: { frames: 120, seconds: 2 },
    frame: { medianMs: 16.6, p95Ms: p95, fps: 60 },
    render: { calls, triangles: calls * 12, points: 0, lines: 0 },
    memory: { geometries: 1, textures: 0, programs: 2 },
    ...extra,
  });
}

// Append lines; the byte offset of the last one.
function append(dir, ...lines) {
  const file = perfPath(dir);
  const size = fs.existsSync(file) ? fs.statSync(file).size : 0;
  const text = lines.join('\n') + '\n';
  appendFromProcess(file, text);
  return size + Buffer.byteLength(text) - Buffer.byteLength(lines.at(-1)) - 1;
}

const profilePath = (dir) => path.join(dir, '.sloptimize', 'profile.json');
function readProfile(dir) {
  try { return JSON.parse(fs.readFileSync(profilePath(dir), 'utf8')); } catch { return null; }
}
// The profile made from the heartbeat at `offset`.
function profileAt(dir, offset) {
  return waitFor(() => { const p = readProfile(dir); return p && p.source.offset === offset ? p : null; },
    { what: `profile.json from the heartbeat at offset ${offset}` });
}

// /status once the loop has taken the write of the heartbeat at `offset`
// (the file is written on the pool first: docs/api.md, `profile`)
function accounted(d, offset) {
  return waitFor(async () => { const st = await d.status(); return st.profile.lastOffset === offset ? st : null; },
    { what: `/status's profile at offset ${offset}` });
}

function run(args, opts = {}) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', env: { ...process.env, ...opts.env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function valid(schema, doc) {
  const r = spawnSync(process.execPath, [path.join(top, 'tests', 'validate.mjs'), path.join(top, 'schemas', schema), '-'],
    { input: JSON.stringify(doc), encoding: 'utf8' });
  assert.equal(r.status, 0, `${schema}: ${r.stderr}`);
}

function check(dir, ...args) {
  const r = run(['check', '--project', dir, ...args]);
  const j = run(['check', '--project', dir, '--json', ...args]);
  const doc = JSON.parse(j.out);
  valid('check.json', doc);
  assert.equal(j.code, r.code, 'check and check --json exit alike');
  assert.equal(doc.exit, r.code, 'the document says the exit code');
  return { ...r, doc };
}

test('profile.json: the daemon writes each live heartbeat, measured fields only, atomically', async () => {
  const dir = project({ 'perf.budget.draw_calls': 30, 'perf.budget.frame_ms_p95': { max: 16.7, level: 'warn' } });
  const d = await daemon(dir);
  const off = append(dir, heartbeat({ frame: { medianMs: 16.6, p95Ms: 21.5, insideRenderMs: null } }));
  const p = await profileAt(dir, off);
  valid('profile.json', p);
  assert.equal(p.regime, 'software');
  assert.equal(p.render.calls, 40);
  assert.equal(p.frame.p95Ms, 21.5);
  assert.ok(!('insideRenderMs' in p.frame), 'a null is absent, never 0');
  assert.ok(!('gpu' in p), 'no GPU time measured: no gpu');
  assert.ok(!('paused' in p), 'the heartbeat said nothing of a pause');
  assert.equal(p.build, 'b1');
  assert.deepEqual(p.budgets, { file: 'sloptimize.budgets.json', declared: 2, checked: 1,
    breached: ['perf.budget.draw_calls'], errors: ['perf.budget.draw_calls'] });
  assert.equal(p.source.file, 'perf.jsonl');
  assert.ok(!fs.existsSync(profilePath(dir) + '.tmp'), 'no temp file left');
  const st = await accounted(d, off);
  valid('status.json', st);
  assert.ok(st.profile.writes >= 1, JSON.stringify(st.profile));
  assert.equal(st.profile.lastError, null);

  // a newer heartbeat replaces it; the budgets file is read again at each write
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": 100}');
  const off2 = append(dir, heartbeat({ calls: 50, regime: 'hardware', gpu: { p95Ms: 4.2 } }));
  const p2 = await profileAt(dir, off2);
  assert.equal(p2.regime, 'hardware');
  assert.deepEqual(p2.gpu, { p95Ms: 4.2 });
  assert.deepEqual(p2.budgets.breached, []);
  assert.equal(p2.budgets.declared, 1);

  // a broken budgets file is said in the profile, the status and the log
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_call": 100}');
  const off3 = append(dir, heartbeat());
  const p3 = await profileAt(dir, off3);
  assert.match(p3.budgets.error, /^perf\.budget\.draw_call: not a budget this version knows; did you mean perf\.budget\.draw_calls\?/);
  assert.match((await accounted(d, off3)).profile.budgetsError, /perf\.budget\.draw_call:/);
  await waitFor(() => /sloptimize\.budgets\.json: perf\.budget\.draw_call: /.test(d.log), { what: 'the log names the fault' });
  // other records never make a profile
  append(dir, hitch(150), JSON.stringify({ type: 'usermark', at: new Date().toISOString(), worst: [] }));
  await d.caughtUp();
  assert.equal(readProfile(dir).source.offset, off3);
});

test('profile.json: a catch-up of 2,000 heartbeats is written once, at its end; a restart with nothing new leaves it', async () => {
  const dir = project({ 'perf.budget.draw_calls': 300 });
  const t0 = Date.parse('2026-11-29T12:00:00Z');
  const lines = [];
  for (let i = 0; i < 2000; i++) lines.push(heartbeat({ at: new Date(t0 + i * 2000).toISOString(), calls: 10 + (i % 50) }));
  lines.push(heartbeat({ at: new Date(t0 + 2000 * 2000).toISOString(), calls: 77 }));
  const off = append(dir, ...lines);
  const d = await daemon(dir);
  await d.caughtUp();
  const st = await waitFor(async () => { const s = (await d.status()).profile; return s.writes >= 1 && !s.pending ? s : null; },
    { what: 'the catch-up profile written' });
  assert.equal(st.heartbeats, 2001, 'every heartbeat seen');
  assert.equal(st.writes, 1, 'written once, not once per heartbeat');
  assert.equal(st.lastOffset, off);
  const p = readProfile(dir);
  assert.equal(p.render.calls, 77);
  assert.equal(p.at, new Date(t0 + 2000 * 2000).toISOString());
  // restart: the checkpoint holds every line, nothing is folded again
  await d.stop();
  daemons.splice(daemons.indexOf(d), 1);
  const before = fs.readFileSync(profilePath(dir), 'utf8');
  const d2 = await daemon(dir, d.state);
  await d2.caughtUp();
  assert.equal((await d2.status()).checkpoint.resumed, true);
  assert.equal((await d2.status()).profile.writes, 0);
  assert.equal(fs.readFileSync(profilePath(dir), 'utf8'), before);
});

test('check: breach → 1, warn → 0, none declared → 0 with the warning, no profile → 4, stale → 4, malformed → 2', async () => {
  // none declared: said, exit 0, whatever else there is
  let r = check(project());
  assert.equal(r.code, 0);
  assert.equal(r.doc.result, 'no-budgets');
  assert.match(r.err, /warning: no budgets declared: there is no sloptimize\.budgets\.json/);
  r = check(project({}));
  assert.equal(r.code, 0);
  assert.match(r.err, /no budgets declared: sloptimize\.budgets\.json declares none/);

  // declared, but nothing measured yet: 4, never a pass
  const dir = project({ 'perf.budget.draw_calls': 30, 'perf.budget.frame_ms_p95': 16.7 });
  r = check(dir);
  assert.equal(r.code, 4);
  assert.equal(r.doc.result, 'no-measurement');
  assert.match(r.err, /no .*profile\.json yet: sloptimized writes it from the game's heartbeats/);

  const d = await daemon(dir);
  const off = append(dir, heartbeat({ calls: 94, regime: 'software' }));
  await profileAt(dir, off);
  // a breach at level error: 1, said as seed §7 shows it
  r = check(dir);
  assert.equal(r.code, 1, r.out + r.err);
  assert.equal(r.doc.result, 'breached');
  assert.match(r.out, /regime software: timings not trusted/);
  assert.match(r.out, /^budgets: 2 declared, 1 checked, 1 breached$/m);
  assert.match(r.out, /^ {2}perf\.budget\.draw_calls +94 \/ 30 +← over by 3\.1×$/m);
  assert.match(r.out, /^ {2}perf\.budget\.frame_ms_p95 +20\.0ms \/ 16\.7ms +software regime: timings not trusted$/m);
  assert.deepEqual(r.doc.breached, ['perf.budget.draw_calls']);
  const fb = r.doc.budgets.find((b) => b.key === 'perf.budget.frame_ms_p95');
  assert.equal(fb.status, 'not-judged');
  assert.equal(fb.value, 20, 'reported, not judged');
  // --counters-only: the same breach; timing skipped
  r = check(dir, '--counters-only');
  assert.equal(r.code, 1);
  assert.equal(r.doc.budgets.find((b) => b.key === 'perf.budget.frame_ms_p95').status, 'skipped');

  // at level warn: said, exit 0
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": {"max": 30, "level": "warn"}}');
  r = check(dir);
  assert.equal(r.code, 0, r.out + r.err);
  assert.equal(r.doc.result, 'warned');
  assert.match(r.out, /← over by 3\.1× \(warn\)/);
  assert.match(r.err, /warning: a budget at level warn is breached/);

  // inside: 0
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": 94}');
  r = check(dir);
  assert.equal(r.code, 0);
  assert.equal(r.doc.result, 'inside');
  assert.match(r.out, /94 \/ 94 +inside/);

  // only timing budgets on a software renderer: nothing judged is not a pass
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.frame_ms_p95": 16.7, "perf.budget.gpu_ms_p95": 8}');
  r = check(dir);
  assert.equal(r.code, 4);
  assert.equal(r.doc.result, 'nothing-judged');
  assert.match(r.err, /no budget could be judged \(2 declared: 1 not judged, 1 not measured/);
  r = check(dir, '--counters-only');
  assert.equal(r.code, 4);

  // stale: older than --max-age (30 s by default), 4; --max-age widens it
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": 30}');
  const later = new Date(Date.now() + 3600 * 1000).toISOString();
  r = check(dir, '--now', later);
  assert.equal(r.code, 4);
  assert.equal(r.doc.result, 'stale');
  assert.match(r.err, /profile\.json is \d+m\d\ds old, past --max-age 30s/);
  r = check(dir, '--now', later, '--max-age', '2h');
  assert.equal(r.code, 1);
  r = check(dir, '--now', later, '--max-age', 'off');
  assert.equal(r.code, 1);
  assert.equal(r.doc.maxAgeMs, null);
  assert.equal(run(['check', '--project', dir, '--max-age', 'soon']).code, 2);

  // malformed: 2, every fault named by its key, before anything is measured
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'),
    '{\n  "perf.budget.draw_calls": -3,\n  "perf.budget.trianlges": 9,\n  "perf.budget.programs": {"max": 4, "level": "fatal"}\n}\n');
  r = check(dir);
  assert.equal(r.code, 2);
  assert.equal(r.doc.result, 'invalid-budgets');
  assert.deepEqual(r.doc.budgetsFile.faults, [
    'perf.budget.draw_calls: the max is a number >= 0, not -3',
    'perf.budget.trianlges: not a budget this version knows; did you mean perf.budget.triangles?',
    'perf.budget.programs.level: "error" or "warn", not "fatal" (to turn a budget off, remove it)',
  ]);
  assert.match(r.err, /sloptimize\.budgets\.json is not a valid budgets file/);
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{\n  "perf.budget.draw_calls": 30,\n}\n');
  r = check(dir);
  assert.equal(r.code, 2);
  assert.match(r.doc.budgetsFile.faults[0], /^\(the file\): not one JSON object: .* at line 3, column 1$/);
  fs.rmSync(path.join(dir, 'sloptimize.budgets.json'));
  assert.equal(spawnSync('mkfifo', [path.join(dir, 'sloptimize.budgets.json')]).status, 0);
  r = check(dir);
  assert.equal(r.code, 2, 'a FIFO is refused at once, never waited on');
  assert.match(r.doc.error, /not a regular file/);

  // --bench goes through the bench verb: no dev server here, so the
  // environment (4) with the bench's own reason, never a pass
  fs.rmSync(path.join(dir, 'sloptimize.budgets.json'), { force: true });
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": 30}');
  r = check(dir, '--bench', 'crates');
  assert.equal(r.code, 4);
  assert.equal(r.doc.measurement.source, 'bench');
  assert.match(r.err, /bench of scene 'crates': .*(dev\.json|--url)/);
  await d.caughtUp();
});

test('hook-status: regime, frame p95 against its budget, breached budgets, the last hitch; silent when calm', async () => {
  const dir = project({ 'perf.budget.draw_calls': 30, 'perf.budget.frame_ms_p95': 16.7 });
  const d = await daemon(dir);
  let off = append(dir, heartbeat({ calls: 12 }));
  await profileAt(dir, off);
  // calm: nothing breached, nothing happened lately
  let r = run(['hook-status', '--project', dir]);
  assert.equal(r.code, 0);
  assert.equal(r.out, '', 'silent when calm');

  off = append(dir, heartbeat({ calls: 94 }));
  await profileAt(dir, off);
  r = run(['hook-status', '--project', dir]);
  assert.equal(r.code, 0);
  let lines = r.out.trimEnd().split('\n');
  assert.equal(lines.length, 1, `the budget alone, no hitch yet: ${r.out}`);
  assert.match(lines[0], /^sloptimize: the game \(profile .*, build b1\): software: timings not trusted · frame p95 20\.0ms \(budget 16\.7ms not judged\) · over budget: draw_calls 94\/30 \(3\.1×\) → sloptimize check$/);

  // a hitch: the issues' line, with its class
  append(dir, hitch(150, { at: new Date().toISOString() }));
  await d.caughtUp();
  r = run(['hook-status', '--project', dir]);
  lines = r.out.trimEnd().split('\n');
  assert.ok(lines.length >= 3 && lines.length <= 5, r.out);
  assert.match(lines[0], /software: timings not trusted/);
  assert.match(lines[1], /^sloptimize: 0 regressed, 1 issues seen in the last 30 min \(sloptimize issues for all\); last hitch shader-compile\/medium/);
  assert.match(lines[2], /^ {2}open [0-9a-f]{8} hitch ×1 worst 150ms shader-compile/);
  const j = JSON.parse(run(['hook-status', '--project', dir, '--json']).out);
  assert.equal(j.perf.regime, 'software');
  assert.equal(j.perf.timingTrusted, false);
  assert.equal(j.perf.frameP95Ms, 20);
  assert.equal(j.perf.frameBudgetMs, 16.7);
  assert.deepEqual(j.perf.breached.map((b) => b.key), ['perf.budget.draw_calls']);
  assert.equal(j.lastHitch.verdict.guess, 'shader-compile');

  // hardware: the frame budget is judged
  off = append(dir, heartbeat({ calls: 12, regime: 'hardware', p95: 25.1 }));
  await profileAt(dir, off);
  r = run(['hook-status', '--project', dir]);
  assert.match(r.out.split('\n')[0], /regime hardware · frame p95 25\.1ms, budget 16\.7ms: over by 1\.5× → sloptimize check/);

  // an hour on: the old measurement and the hitch are not news — silent
  r = run(['hook-status', '--project', dir, '--now', new Date(Date.now() + 3600 * 1000).toISOString()]);
  assert.equal(r.out, '');
  // a budgets file that cannot be read needs attention, whatever the time
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.drawcalls": 3}');
  r = run(['hook-status', '--project', dir, '--now', new Date(Date.now() + 3600 * 1000).toISOString()]);
  lines = r.out.trimEnd().split('\n');
  assert.equal(lines[0], 'sloptimize: sloptimize.budgets.json is not valid: perf.budget.drawcalls: not a budget this version knows; did you mean perf.budget.draw_calls? → sloptimize check');
  assert.match(lines[1], /^sloptimize: last hitch shader-compile\/medium 60m ago \(fp [0-9a-f]{8}\)$/);
  assert.equal(lines.length, 2);
});

test('doctor: the budgets, the profile, the browser --launch would find, the stated limits', async () => {
  const dir = project({ 'perf.budget.draw_calls': 30, 'perf.budget.frame_ms_p95': { max: 16.7, level: 'warn' } });
  const d = await daemon(dir);
  const off = append(dir, heartbeat());
  await profileAt(dir, off);
  const doc = (env = {}) => {
    const r = run(['doctor', '--project', dir, '--json'], { env: { ...d.env, ...env } });
    return JSON.parse(r.out).checks;
  };
  const checks = doc();
  const of = (name) => checks.filter((c) => c.check === name).map((c) => `${c.result}: ${c.detail}`);
  assert.match(of('budgets')[0], /^ok: 2 declared in sloptimize\.budgets\.json: draw_calls ≤ 30 \(error\), frame_ms_p95 ≤ 16\.7ms \(warn\)$/);
  assert.ok(of('profile').some((s) => /^ok: profile\.json from a heartbeat .* regime software$/.test(s)), of('profile').join('\n'));
  assert.ok(of('profile').some((s) => /^ok: the daemon wrote it 1 times from 1 heartbeats$/.test(s)), of('profile').join('\n'));
  assert.ok(of('regime').some((s) => /software renderer: timings not trusted/.test(s)));
  const limits = of('limits').join('\n');
  for (const re of [/no per-draw GPU timing/, /heuristic only/, /software renderer .* never compared/, /fidelity "view"/,
    /EffectComposer and custom pipelines/, /multiplayer is out of scope/, /Workers, audio .* wall clock/])
    assert.match(limits, re);
  assert.match(of('gpu timer')[0], /known only per browser run/);
  // the launcher's discovery order: $SLOPTIMIZE_BROWSER first, then PATH
  assert.match(doc({ SLOPTIMIZE_BROWSER: '/nonexistent' }).find((c) => c.check === 'browser').detail,
    /\$SLOPTIMIZE_BROWSER names \/nonexistent, which is not an executable/);
  const none = doc({ PATH: tmpdir('empty-path') }).find((c) => c.check === 'browser');
  assert.equal(none.result, 'note');
  assert.match(none.detail, /none found for bench --launch .*chromium, chromium-browser or google-chrome/);
  const fake = tmpdir('browser');
  fs.writeFileSync(path.join(fake, 'google-chrome'), '#!/bin/sh\n', { mode: 0o755 });
  assert.match(doc({ PATH: fake }).find((c) => c.check === 'browser').detail, new RegExp(`^${fake}/google-chrome \\(from PATH\\)`));
  // a malformed budgets file: a problem, each fault listed
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": "many", "x": 1}');
  const bad = doc().filter((c) => c.check === 'budgets');
  assert.equal(bad[0].result, 'problem');
  assert.deepEqual(bad.slice(1).map((c) => c.detail), [
    'perf.budget.draw_calls: a budget is a number or {"max": N, "level": "error"|"warn"}, not a string',
    'x: not a budget this version knows (perf.budget.draw_calls, perf.budget.triangles, perf.budget.programs, perf.budget.frame_ms_p95, perf.budget.gpu_ms_p95)',
  ]);
  await d.caughtUp();
});

test('profile.json that cannot be written: said in /status, the log and doctor; folding goes on; written again once it can be', async () => {
  const dir = project({ 'perf.budget.draw_calls': 30 });
  // a directory where the file goes: the rename over it fails
  fs.mkdirSync(profilePath(dir));
  fs.writeFileSync(path.join(profilePath(dir), 'keep'), 'x');
  const d = await daemon(dir);
  const off = append(dir, heartbeat());
  const st = await waitFor(async () => { const s = (await d.status()).profile; return s.failures >= 1 ? s : null; },
    { what: 'the failed write counted' });
  assert.match(st.lastError, /Is a directory|directory/i);
  assert.equal(st.writes, 0);
  await waitFor(() => /cannot write .*profile\.json: /.test(d.log), { what: 'the log says it' });
  // the fold is not held up: a hitch after it is folded and counted
  append(dir, hitch(150));
  await d.caughtUp();
  assert.equal((await d.status()).counts.incidents, 1);
  const r = run(['doctor', '--project', dir, '--json'], { env: d.env });
  // two problems: the file cannot be read, and the daemon cannot write it
  const bad = JSON.parse(r.out).checks.find((c) => c.check === 'profile' && c.result === 'problem' && /cannot write/.test(c.detail));
  assert.ok(bad, r.out);
  assert.match(bad.detail, /the daemon cannot write .*profile\.json: .* failures\)/);
  // fixed: the next heartbeat is written, and the error is gone
  fs.rmSync(profilePath(dir), { recursive: true });
  const off2 = append(dir, heartbeat({ calls: 7 }));
  assert.ok(off2 > off);
  const p = await profileAt(dir, off2);
  assert.equal(p.render.calls, 7);
  const st2 = (await accounted(d, off2)).profile;
  assert.equal(st2.lastError, null);
  assert.equal(st2.writes, 1);
  await waitFor(() => /profile\.json: written again/.test(d.log), { what: 'the recovery logged' });
});
