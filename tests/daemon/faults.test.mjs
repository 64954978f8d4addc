// Faults caused for real (issue 8 item 8): a disk that fills while a fix
// is appended, a state directory that turns read-only while records
// arrive, a file-size limit on the CLI.  In each case the error is said
// by its cause where the user looks (stderr, the HTTP answer, the log,
// `doctor`), nothing accepted is lost or torn, the daemon keeps serving,
// and everything works again when the fault ends, without a restart.
//
// The filesystems are small tmpfs mounts the test makes and removes; where
// mounting is not allowed the mount tests skip and say so (the file-size
// limit test needs no privilege).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  Daemon, Watch, appendFromProcess, hitch, meaningfulOffsets, perfPath,
  tmpdir, waitFor, CLI,
} from '../lib.mjs';

const API = '/api/sloptimize';
const ORIGIN = 'http://127.0.0.1:5173';

function mount(dir, opts) {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? null : (r.stderr || `mount exited ${r.status}`).trim();
}
function readOnly(dir) {
  for (const args of [['--bind', dir, dir], ['-o', 'remount,bind,ro', dir]]) {
    const r = spawnSync('mount', args, { encoding: 'utf8' });
    if (r.status !== 0) return (r.stderr || `mount exited ${r.status}`).trim();
  }
  return null;
}
function umount(dir) { spawnSync('umount', ['-l', dir]); }

// Fill the filesystem holding `dir` to the last byte; returns the filler.
function fill(dir) {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(4096, 120);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (e) {
    if (e.code !== 'ENOSPC') throw e;
  }
  try {
    for (;;) fs.writeSync(fd, block, 0, 1);	// the last partial block
  } catch (e) {
    if (e.code !== 'ENOSPC') throw e;
  }
  fs.closeSync(fd);
  return filler;
}

// tmpfs gives space a page at a time: a file that ends inside a page
// takes small appends without asking for more.  End it on a page
// boundary with one whole line.
function padToPage(file) {
  const size = fs.statSync(file).size;
  const base = '{"type":"note","at":"2026-09-01T09:00:00.000Z","pad":""}\n';
  let n = 4096 - ((size + base.length) % 4096);
  if (n === 4096) n = 0;
  fs.appendFileSync(file, base.replace('"pad":""', `"pad":"${'x'.repeat(n)}"`));
  assert.equal(fs.statSync(file).size % 4096, 0);
}

function fixLines(p) {
  const f = path.join(p, '.sloptimize', 'fixes.jsonl');
  if (!fs.existsSync(f)) return [];
  const text = fs.readFileSync(f, 'utf8');
  assert.ok(text === '' || text.endsWith('\n'), 'fixes.jsonl ends in a whole line');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function cliFix(p, title, env = {}, wrap = []) {
  const argv = [...wrap, CLI, 'fix', '--project', p, '--title', title, '--footprints', fpOf(p)];
  return spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env: { ...process.env, ...env } });
}

function fpOf(p) {
  const r = spawnSync(CLI, ['issues', '--json', '--project', p], { encoding: 'utf8' });
  return JSON.parse(r.stdout).issues[0].id;
}

async function postFix(d, title) {
  const r = await fetch(d.base + `${API}/fixes`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: ORIGIN },
    body: JSON.stringify({ title, footprints: [fpOf(d.project)] }),
  });
  return { status: r.status, body: await r.json() };
}

test('a file-size limit on the CLI: the fix is refused by its cause and nothing of it is kept', () => {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  appendFromProcess(perfPath(p), hitch(150) + '\n');
  const r = cliFix(p, 'warm the shaders at load', {}, ['prlimit', '--fsize=16']);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /cannot write fixes\.jsonl: File too large \(nothing of it was kept\)/);
  assert.deepEqual(fixLines(p), []);
  const ok = cliFix(p, 'warm the shaders at load');
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(fixLines(p).length, 1);
});

test('the disk fills while fixes are appended: CLI and POST /fixes say so, keep nothing torn, recover',
  { timeout: 60000 }, async (t) => {
  const p = tmpdir('proj');
  const dir = path.join(p, '.sloptimize');
  fs.mkdirSync(dir);
  const why = mount(dir, 'size=256k');
  if (why) { t.skip(`cannot mount a tmpfs here: ${why}`); return; }
  let d;
  try {
    appendFromProcess(perfPath(p), hitch(150) + '\n' + hitch(180) + '\n');
    padToPage(perfPath(p));	// so that any append needs a new page
    d = await new Daemon(p).start();
    const filler = fill(dir);

    const r = cliFix(p, 'instance the meshes');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /No space left on device/);
    assert.doesNotMatch(r.stderr, /Input\/output error/);
    const a = await postFix(d, 'pool the spawns');
    assert.equal(a.status, 507, JSON.stringify(a.body));
    assert.equal(a.body.error.code, 'no_space');
    assert.match(a.body.error.message, /No space left on device/);
    const rec = await fetch(d.base + `${API}/records`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', Origin: ORIGIN },
      body: JSON.stringify([JSON.parse(hitch(400))]),
    });
    assert.equal(rec.status, 507);
    assert.deepEqual(fixLines(p), [], 'nothing torn, nothing half-written');
    assert.equal((await d.status()).ready, true, 'the daemon keeps serving');

    fs.unlinkSync(filler);
    assert.equal((await postFix(d, 'pool the spawns')).status, 201);
    assert.equal(cliFix(p, 'instance the meshes').status, 0);
    assert.deepEqual(fixLines(p).map((f) => f.title), ['pool the spawns', 'instance the meshes']);
    const fp = fpOf(p);
    await waitFor(async () => {
      const row = (await d.get(`${API}/issues`)).issues.find((i) => i.id === fp);
      return row && row.fixes.length === 2;
    }, { what: 'both fixes folded by the daemon' });
  } finally {
    if (d) await d.stop();
    umount(dir);
  }
});

// `sloptimize replay` wrote a record through short writes until the disk
// refused the rest, leaving a torn record at the end of perf.jsonl; it
// now undoes a short write and stops, as `fix` and POST /records do.
test('the disk fills while `sloptimize replay` appends: it says so, leaves no torn record, and replays again once there is room',
  { timeout: 60000 }, async (t) => {
  const p = tmpdir('proj');
  const dir = path.join(p, '.sloptimize');
  fs.mkdirSync(dir);
  const why = mount(dir, 'size=256k');
  if (why) { t.skip(`cannot mount a tmpfs here: ${why}`); return; }
  try {
    // perf.jsonl ends 60 bytes short of a page: a full tmpfs still takes
    // 60 bytes of a longer write there, and not one more
    appendFromProcess(perfPath(p), hitch(150) + '\n');
    padToPage(perfPath(p));
    const tail = '{"type":"note","at":"2026-09-01T09:00:00.000Z","pad":""}\n';
    appendFromProcess(perfPath(p), tail.replace('"pad":""', `"pad":"${'x'.repeat(4096 - 60 - tail.length)}"`));
    assert.equal(fs.statSync(perfPath(p)).size % 4096, 4096 - 60);
    const before = fs.readFileSync(perfPath(p));
    const rec = path.join(p, 'session.jsonl');
    fs.writeFileSync(rec, [hitch(200), hitch(210, { note: 'y'.repeat(300) }), hitch(220)].join('\n') + '\n');
    const filler = fill(dir);

    const r = spawnSync(CLI, ['replay', rec, '--speed', '0', '--project', p], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stderr);
    const after = fs.readFileSync(perfPath(p));
    assert.equal(after.length - before.length, 0, `nothing torn at the end of perf.jsonl: ${after.subarray(before.length)}`);
    assert.deepEqual(after, before);
    assert.match(r.stderr, /cannot append to .*perf\.jsonl: No space left on device \(line 1 of .* not written, nothing of it kept; the replay stops\)/);

    fs.unlinkSync(filler);
    const ok = spawnSync(CLI, ['replay', rec, '--speed', '0', '--project', p], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    const text = fs.readFileSync(perfPath(p), 'utf8');
    assert.ok(text.endsWith('\n'));
    const lines = text.slice(before.length).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.frameMs), [200, 210, 220]);
  } finally {
    umount(dir);
  }
});

test('the state directory turns read-only while records arrive: every wake still comes, the failing cursor save is said once and by its cause, and saves resume',
  { timeout: 60000 }, async (t) => {
  const p = tmpdir('proj');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  let d, w, sd;
  try {
    d = await new Daemon(p, { args: ['--per-fp-ms', '0', '--global-max', '0', '--desktop', '0'] }).start();
    sd = d.stateDir();
    w = new Watch(d);
    await w.connected();
    for (let i = 0; i < 3; i++) appendFromProcess(perfPath(p), hitch(120 + i) + '\n');
    await waitFor(() => w.ids().length >= 3, { what: 'three wakes' });

    // The state directory, and only it, becomes read-only: a read-only
    // bind mount over it (the daemon's open lock file stays writable).
    const why = readOnly(sd);
    if (why) { t.skip(`cannot make a read-only bind mount here: ${why}`); return; }
    for (let i = 0; i < 5; i++) appendFromProcess(perfPath(p), hitch(130 + i) + '\n');
    const want = meaningfulOffsets(perfPath(p)).map((o) => `1:${o}`);
    await waitFor(() => w.ids().length >= want.length, { what: `${want.length} wakes` });
    assert.deepEqual(w.ids(), want, 'every record woke once, in order');
    const st = await waitFor(async () => {
      const s = await d.status();
      return s.files.perf.cursorSaveError ? s : null;
    }, { what: 'the cursor save error in /status' });
    assert.match(st.files.perf.cursorSaveError, /Read-only file system/);
    const said = () => d.log.split('\n').filter((l) => /cursor/.test(l) && /Read-only file system/.test(l));
    await waitFor(() => said().length >= 1, { what: `the log says it\n${d.log}` });
    const doc = spawnSync(CLI, ['doctor', '--json', '--project', p], { encoding: 'utf8', env: d.env });
    const cursor = JSON.parse(doc.stdout).checks.find((c) => c.check === 'cursor');
    assert.ok(cursor, `doctor names the failing cursor save: ${doc.stdout}`);
    assert.match(cursor.detail, /Read-only file system/);
    assert.equal(cursor.result, 'problem');
    // more records while it lasts: counted once in the log, not per save
    for (let i = 0; i < 4; i++) {
      appendFromProcess(perfPath(p), hitch(140 + i) + '\n');
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.equal(said().length, 1, `said once:\n${d.log}`);

    umount(sd);
    sd = null;
    appendFromProcess(perfPath(p), hitch(160) + '\n');
    await waitFor(async () => !(await d.status()).files.perf.cursorSaveError,
      { what: 'cursor saves resume', timeout: 15000 });
    assert.match(d.log, /cursor.*(saved again|can be saved again|works again)/i);
    const all = meaningfulOffsets(perfPath(p)).map((o) => `1:${o}`);
    await waitFor(() => w.ids().length >= all.length, { what: 'every wake' });
    assert.deepEqual(w.ids(), all);
    assert.equal((await d.stop()).code, 0);
    d = null;
  } finally {
    if (w) await w.stop();
    if (d) await d.stop();
    if (sd) umount(sd);
  }
});
