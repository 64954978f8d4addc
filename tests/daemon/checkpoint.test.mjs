// The daemon's checkpoint (docs/checkpoints.md), with the real daemon on a
// generated ledger: a restart resumes from it and folds only what is new;
// kill -9 at random points of its writes, a checkpoint from another file,
// a ledger truncated or replaced while stopped, fixes.jsonl changed while
// stopped, a torn checkpoint — after each, the daemon's catalogue is the
// one a fold from byte 0 gives (`sloptimize issues --json
// --no-checkpoint`), and so is the CLI's when it reads the checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  Daemon, Watch, appendFromProcess, comparable, hitch, meaningfulOffsets, perfPath, tmpdir, top, waitFor, CLI, VALGRIND,
} from '../lib.mjs';

const NOW = '2026-10-01T00:00:00Z';
// checkpoints often: after 64 KiB of ledger, or 50 ms of quiet; no rate
// limit holds a wake back (a held wake defers a save: tested at the end)
const ARGS = ['--desktop', '0', '--per-fp-ms', '0', '--global-max', '0',
  '--checkpoint-bytes', '65536', '--checkpoint-idle-ms', '50'];

function genledger(dir, ...args) {
  const r = spawnSync('python3', [path.join(top, 'tests', 'genledger.py'), dir, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`genledger: ${r.stderr}`);
}

// A project with a generated ledger (about 4 MB, 80 causes, fixes).
function project(seed = 1) {
  const p = tmpdir('ckpt');
  genledger(p, '--records', '10000', '--causes', '80', '--fixes', '10', '--seed', String(seed));
  return p;
}

// More records of the same shapes, to append: another seed's lines.
function moreLines(seed = 9) {
  const p = tmpdir('more');
  genledger(p, '--records', '6000', '--causes', '80', '--seed', String(seed));
  return fs.readFileSync(perfPath(p), 'utf8').split('\n').filter((l) => l);
}

function cli(env, args) {
  const r = spawnSync(CLI, args, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sloptimize ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// The daemon's catalogue, and the CLI's from its checkpoint, are those of
// a fold from byte 0.
async function sameAsFresh(d, what = '') {
  await d.caughtUp();
  const p = d.project;
  const fresh = JSON.parse(cli(d.env, ['issues', '--json', '--no-checkpoint', '--project', p, '--now', NOW]));
  const live = await d.get('/api/sloptimize/issues');
  assert.deepEqual(comparable(live), comparable(fresh), `daemon catalogue == fresh fold ${what}`);
  assert.deepEqual(live.counts, fresh.counts, `counts ${what}`);
  assert.deepEqual(live.skipped, fresh.skipped, `skipped lines ${what}`);
  for (const verb of [['issues'], ['history', '--buckets', '12']]) {
    const a = cli(d.env, [...verb, '--json', '--project', p, '--now', NOW]);
    const b = cli(d.env, [...verb, '--json', '--no-checkpoint', '--project', p, '--now', NOW]);
    assert.equal(a, b, `${verb[0]} from the checkpoint == from byte 0 ${what}`);
  }
}

async function ckptStatus(d) {
  return (await d.status()).checkpoint;
}

// Running, caught up, and the fold as it stands is saved.
async function saved(d) {
  await d.caughtUp();
  await waitFor(async () => {
    const c = await ckptStatus(d);
    return c.saves > 0 && !c.pending && c.lastOffset === fs.statSync(perfPath(d.project)).size;
  }, { what: 'a checkpoint of the whole ledger' });
}

function ckptFile(d) {
  return path.join(d.stateDir(), 'checkpoint');
}

test('a restart resumes from the checkpoint and folds only the bytes after it', async () => {
  const p = project();
  const d = new Daemon(p, { args: ARGS });
  await d.start();
  try {
    let c = await ckptStatus(d);
    assert.equal(c.resumed, false);
    assert.equal(c.why, 'none yet');
    await saved(d);
    await sameAsFresh(d, 'after the first fold');
    assert.deepEqual(await d.stop(), { code: 0, sig: null });
    const size = fs.statSync(perfPath(p)).size;
    // appended while stopped: folded after the checkpoint
    fs.appendFileSync(perfPath(p), moreLines().slice(0, 500).join('\n') + '\n');
    await d.start();
    c = await ckptStatus(d);
    assert.equal(c.resumed, true, c.why);
    assert.equal(c.resumedAt, size);
    assert.match(d.log, /checkpoint: resumed at byte \d+, folded the \d+ bytes after it/);
    await sameAsFresh(d, 'after a restart with appends');
    // a clean stop saves the fold as it stands; the next start folds nothing
    await saved(d);
    await d.stop();
    await d.start();
    c = await ckptStatus(d);
    assert.equal(c.resumedAt, fs.statSync(perfPath(p)).size);
    assert.match(d.log, /folded the 0 bytes after it/);
    await sameAsFresh(d, 'after a restart with nothing new');
    // live appends after a resume, then saved again
    fs.appendFileSync(perfPath(p), moreLines(10).slice(0, 300).join('\n') + '\n');
    await saved(d);
    await sameAsFresh(d, 'after live appends');
  } finally {
    await d.stop();
  }
});

test('kill -9 at random points during checkpoint writes: the catalogue is always a fresh fold',
  { timeout: 300000, skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = project(2);
  const more = moreLines(11);
  let d = new Daemon(p, { args: ARGS });
  await d.start();
  await saved(d);
  const tmp = `${ckptFile(d)}.tmp`;
  let duringWrite = 0, resumed = 0, next = 0;
  try {
    // twelve rounds, and more (up to 40) until a kill has landed inside a
    // write: a save is a few milliseconds, and on a loaded machine the
    // poll below can miss every one of six
    for (let round = 0; round < 12 || (duringWrite === 0 && round < 40); round++) {
      // appends that make the daemon save, and a kill at a random moment
      // — as soon as a save is seen writing in half of the rounds
      const chunk = more.slice(next, next + 400);
      next = (next + 400) % (more.length - 400);
      fs.appendFileSync(perfPath(p), chunk.join('\n') + '\n');
      const end = Date.now() + 3000;
      const wantWrite = round % 2 === 0;
      const wait = Math.random() * 150;
      const t0 = Date.now();
      while (Date.now() < end) {
        if (wantWrite ? fs.existsSync(tmp) : Date.now() - t0 >= wait) {
          // frozen where it is, then looked at: the kill lands in the
          // write when the temporary file is still there
          d.proc.kill('SIGSTOP');
          break;
        }
        await new Promise((r) => setImmediate(r));
      }
      if (fs.existsSync(tmp)) duringWrite++;
      await d.stop('SIGKILL');
      d = new Daemon(p, { state: d.state, args: ARGS });
      await d.start();
      if ((await ckptStatus(d)).resumed) resumed++;
      await sameAsFresh(d, `after kill ${round + 1}`);
    }
    assert.ok(duringWrite > 0, 'some kills landed while a checkpoint was being written');
    assert.ok(resumed > 0, 'restarts resumed from a checkpoint');
  } finally {
    await d.stop();
  }
});

test('a checkpoint from another project is not used', async () => {
  const a = project(3), b = project(3);	// the same bytes, other files
  const da = new Daemon(a, { args: ARGS }), db = new Daemon(b, { args: ARGS });
  try {
    await da.start();
    await saved(da);
    await da.stop();
    await db.start();
    await saved(db);
    await db.stop();
    fs.copyFileSync(ckptFile(db), ckptFile(da));
    await da.start();
    const c = await ckptStatus(da);
    assert.equal(c.resumed, false);
    assert.match(c.why, /dev\/inode/);
    assert.match(da.log, /checkpoint not used: .*dev\/inode.*folding perf.jsonl from byte 0/);
    await sameAsFresh(da, 'with the other project\'s checkpoint');
    // and the CLI does not take it either (the bytes before it are the
    // same, but the file is not)
  } finally {
    await da.stop();
    await db.stop();
  }
});

test('a ledger truncated, rewritten or replaced while stopped: the checkpoint is dropped', async () => {
  const p = project(4);
  const d = new Daemon(p, { args: ARGS });
  const lines = fs.readFileSync(perfPath(p), 'utf8').split('\n').filter((l) => l);
  try {
    await d.start();
    await saved(d);
    await d.stop();
    // truncated to half
    fs.writeFileSync(perfPath(p), lines.slice(0, lines.length / 2).join('\n') + '\n');
    await d.start();
    let c = await ckptStatus(d);
    assert.equal(c.resumed, false);
    assert.match(c.why, /perf.jsonl was truncated while stopped/);
    await sameAsFresh(d, 'truncated');
    await saved(d);
    await d.stop();
    // rewritten in place, longer, other bytes before the offset
    fs.writeFileSync(perfPath(p), lines.slice(1).join('\n') + '\n');
    await d.start();
    c = await ckptStatus(d);
    assert.equal(c.resumed, false);
    await sameAsFresh(d, 'rewritten');
    await saved(d);
    await d.stop();
    // replaced by a copy: the same bytes, another file
    const copy = `${perfPath(p)}.new`;
    fs.copyFileSync(perfPath(p), copy);
    fs.renameSync(copy, perfPath(p));
    await d.start();
    c = await ckptStatus(d);
    assert.equal(c.resumed, false);
    assert.match(c.why, /dev\/inode/);
    await sameAsFresh(d, 'replaced');
  } finally {
    await d.stop();
  }
});

test('fixes.jsonl changed while stopped: appended fixes are folded after it, anything else drops it', async () => {
  const p = project(5);
  const fixes = path.join(p, '.sloptimize', 'fixes.jsonl');
  const d = new Daemon(p, { args: ARGS });
  const fix = JSON.stringify({
    v: 1, type: 'fix', id: '0000beef', at: '2026-09-30T10:00:00Z', status: 'applied',
    footprints: ['0000beef'], description: 'appended while stopped',
  });
  const cycle = async (change, what) => {
    await saved(d);
    await d.stop();
    change();
    await d.start();
    const c = await ckptStatus(d);
    await sameAsFresh(d, what);
    return c;
  };
  try {
    await d.start();
    let c = await cycle(() => fs.appendFileSync(fixes, fix + '\n'), 'a fix appended');
    assert.equal(c.resumed, true, c.why);
    c = await cycle(() => fs.appendFileSync(fixes, '{"type":"fix", broken\n'), 'a broken line appended');
    assert.equal(c.resumed, false);
    assert.match(c.why, /skipped/);
    c = await cycle(() => {
      const t = fs.readFileSync(fixes, 'utf8');
      fs.writeFileSync(fixes, t.replace('"applied"', '"proposed"'));
    }, 'a fix rewritten');
    assert.equal(c.resumed, false);
    assert.match(c.why, /fixes.jsonl (changed|is shorter)/);
    c = await cycle(() => fs.unlinkSync(fixes), 'fixes.jsonl removed');
    assert.equal(c.resumed, false);
    assert.match(c.why, /fixes.jsonl is shorter than the checkpoint, or gone/);
    // and after all that, a plain restart resumes again
    c = await cycle(() => {}, 'nothing changed');
    assert.equal(c.resumed, true, c.why);
  } finally {
    await d.stop();
  }
});

test('a torn, damaged or foreign checkpoint file is not used', async () => {
  const p = project(6);
  const d = new Daemon(p, { args: ARGS });
  try {
    await d.start();
    await saved(d);
    await d.stop();
    const good = fs.readFileSync(ckptFile(d));
    const cases = [
      ['torn', good.subarray(0, good.length / 2), /torn/],
      ['a header byte flipped', Buffer.concat([good.subarray(0, 30), Buffer.from([good[30] ^ 1]), good.subarray(31)]), /torn or damaged/],
      ['a byte of the fold flipped', Buffer.concat([good.subarray(0, 5000), Buffer.from([good[5000] ^ 1]), good.subarray(5001)]), /damaged/],
      ['not a checkpoint', Buffer.from('sloptimize-cursor 1\n'.repeat(10)), /not a checkpoint/],
    ];
    for (const [what, bytes, why] of cases) {
      fs.writeFileSync(ckptFile(d), bytes);
      await d.start();
      const c = await ckptStatus(d);
      assert.equal(c.resumed, false, what);
      assert.match(c.why, why, what);
      await sameAsFresh(d, what);
      await d.stop();
      fs.writeFileSync(ckptFile(d), good);
    }
  } finally {
    await d.stop();
  }
});

// The CLI really reads the checkpoint: bytes rewritten in place before its
// window are not seen through it (the identity rule is the cursor's,
// DESIGN §8.4), while a fold from byte 0 sees them; and when the window
// itself changes, the CLI folds from byte 0 too.
// Bytes the CLI read from perf.jsonl, by strace (read/pread64 on a
// descriptor strace -y names): how a test tells a fold that resumed from
// the checkpoint (a window's worth) from one that read the file.
function perfBytesRead(env, args, perf) {
  const out = path.join(tmpdir('strace'), 'out');
  const r = spawnSync('strace', ['-f', '-y', '-e', 'trace=read,pread64', '-o', out, CLI, ...args],
    { env, encoding: 'utf8' });
  if (r.error) return null;		// no strace: the caller says so
  assert.equal(r.status, 0, r.stderr);
  let n = 0;
  for (const l of fs.readFileSync(out, 'utf8').split('\n')) {
    const m = /^\d+\s+(?:read|pread64)\((\d+)<([^>]*)>,.*\)\s+=\s+(\d+)/.exec(l);
    if (m && m[2] === perf) n += Number(m[3]);
  }
  return { n, stdout: r.stdout };
}

// A file's times witness "nothing wrote since" only once settled
// (project/filemark.h, FILEMARK_SETTLED_NS): wait for that, not a sleep.
async function settled(file) {
  await waitFor(() => Date.now() - fs.statSync(file).ctimeMs > 2100, { timeout: 5000, what: 'the file settled' });
}

test('sloptimize issues and history read the daemon\'s checkpoint, and see every edit under it', async () => {
  const p = project(7);
  await settled(perfPath(p));
  const d = new Daemon(p, { args: ARGS });
  try {
    await d.start();
    await saved(d);
    await sameAsFresh(d, 'before');
    await d.stop();
    const perf = fs.realpathSync(perfPath(p));
    const size = fs.statSync(perf).size;
    const args = ['history', '--json', '--project', p, '--now', NOW];
    // untouched since the save: the fold resumes, reading a window of it
    const fast = perfBytesRead(d.env, args, perf);
    if (fast === null) console.log('# no strace: how much was read is not checked');
    else assert.ok(fast.n < 64 * 1024, `read ${fast.n} of ${size} bytes`);
    // rewrite a heartbeat's number near the start, same length, same
    // inode: more than 4 KiB before the checkpoint's offset (issue 23)
    const buf = fs.readFileSync(perf);
    const i = buf.indexOf('"p95Ms":');
    assert.ok(i > 0 && i < buf.length - 8192);
    const fd = fs.openSync(perf, 'r+');
    fs.writeSync(fd, Buffer.from('"p95Mx"'), 0, 7, i);
    fs.closeSync(fd);
    const fresh = cli(d.env, [...args, '--no-checkpoint']);
    assert.equal(cli(d.env, args), fresh, 'the edit under the checkpoint is seen');
    assert.equal(cli(d.env, ['issues', '--json', '--project', p, '--now', NOW]),
      cli(d.env, ['issues', '--json', '--no-checkpoint', '--project', p, '--now', NOW]));
    const slow = perfBytesRead(d.env, args, perf);
    if (slow !== null) assert.ok(slow.n >= size, `read ${slow.n} of ${size} bytes`);
    // the window before the checkpoint's offset changed: from byte 0
    fs.appendFileSync(perf, '\n');
    fs.truncateSync(perf, size - 1);
    fs.appendFileSync(perf, ' \n');
    assert.equal(cli(d.env, args), cli(d.env, [...args, '--no-checkpoint']));
  } finally {
    await d.stop();
  }
});

// Issue 23: what the checkpoint's 4 KiB window missed, with the daemon.
test('a same-length edit far before the checkpoint, or perf.jsonl made again with its inode and last 4 KiB: not resumed', async () => {
  const p = project(8);
  const d = new Daemon(p, { args: ARGS });
  const perf = perfPath(p);
  try {
    await d.start();
    await saved(d);
    await d.stop();
    // (a) one heartbeat's member renamed in place, far before the offset
    let buf = fs.readFileSync(perf);
    const i = buf.indexOf('"p95Ms":');
    assert.ok(i > 0 && i < buf.length - 8192);
    const fd = fs.openSync(perf, 'r+');
    fs.writeSync(fd, Buffer.from('"p95Mx"'), 0, 7, i);
    fs.closeSync(fd);
    await d.start();
    let c = await ckptStatus(d);
    assert.equal(c.resumed, false, 'resumed from a checkpoint of other bytes');
    assert.match(c.why, /bytes before the checkpoint changed/);
    assert.equal((await d.status()).generation, 2, 'the cursor saw it too: a new generation');
    await sameAsFresh(d, 'after a same-length edit far back');
    await saved(d);
    await d.stop();
    // (b) deleted and made again: another first heartbeat, the same
    // size and last 4 KiB; ext4 gives it the old inode at once
    buf = fs.readFileSync(perf);
    const ino = fs.statSync(perf).ino;
    const j = buf.indexOf('"p95Mx":');
    buf.write('"p95Ms"', j);
    fs.unlinkSync(perf);
    fs.writeFileSync(perf, buf);
    const reused = fs.statSync(perf).ino === ino;
    await d.start();
    c = await ckptStatus(d);
    assert.equal(c.resumed, false);
    assert.match(c.why, reused ? /bytes before the checkpoint changed/ : /dev\/inode/);
    if (!reused) console.log('# the file system gave the new file another inode');
    assert.equal((await d.status()).generation, 3);
    await sameAsFresh(d, 'after the file was made again');
  } finally {
    await d.stop();
  }
});

// --- wakes across a restart from a checkpoint ------------------------------

// A record stamped with its own footprint (the reading rule keeps a v1
// stamp), so a test knows every record's id without folding.
function stamped(type, fp, extra = {}) {
  const base = { type, at: new Date().toISOString(), phase: 'play', build: 'v1', footprint: { v: 2, id: fp, key: `${type}|test|${fp}` } };
  if (type === 'hitch') Object.assign(base, { frameMs: 150, classification: { guess: 'shader-compile', confidence: 'high', evidence: `ev ${fp}` } });
  if (type === 'usermark') Object.assign(base, { worst: [{ frameMs: 40, classification: { guess: 'gc', confidence: 'low', evidence: 'mark' } }] });
  return JSON.stringify({ ...base, ...extra });
}

function emptyProject() {
  const p = tmpdir('ckpt');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  return p;
}

test('kill -9 soak with checkpoints: a watch across every restart gets every wake once, in order',
  { timeout: 240000, skip: VALGRIND && 'not under valgrind' }, async () => {
  const p = emptyProject();
  // every meaningful record is its own line; checkpoints after 8 KiB or
  // 20 ms of quiet, so most restarts resume from one
  const args = ['--per-fp-ms', '0', '--global-max', '0', '--recent-ms', '86400000', '--desktop', '0',
    '--checkpoint-bytes', '8192', '--checkpoint-idle-ms', '20'];
  let d = await new Daemon(p, { args }).start();
  const w = new Watch(d);
  await w.connected();
  const writer = spawn('python3', ['-c', `
import json, os, sys, time, datetime, random
rng = random.Random(12)
fd = os.open(sys.argv[1], os.O_WRONLY|os.O_APPEND|os.O_CREAT, 0o644)
for i in range(8000):
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    k = rng.random()
    if k < 0.6:
        r = {"type": "heartbeat", "at": now, "build": "v1", "frame": {"p95Ms": 14, "medianMs": 8}}
    else:
        r = {"type": "hitch", "at": now, "build": "v1", "frameMs": rng.choice([40, 100, 180]),
             "phase": "play", "minted": ["m%d@o" % (i % 40)],
             "classification": {"guess": "spawn-burst", "confidence": "high", "evidence": "n=%d" % i}}
    os.write(fd, (json.dumps(r) + "\\n").encode())
    if i % 100 == 0: time.sleep(0.08)
`, perfPath(p)]);
  const writerDone = new Promise((r) => writer.on('exit', r));
  let kills = 0, resumed = 0;
  const logs = [];	// of the daemons killed, for a failure's message
  try {
    while (kills < 25) {
      // long enough, now and then, for a save to land before the kill
      await new Promise((r) => setTimeout(r, 40 + Math.random() * 250));
      await d.stop('SIGKILL');
      kills++;
      logs.push(d.log);
      d = await new Daemon(p, { state: d.state, args }).start();
      if ((await ckptStatus(d)).resumed) resumed++;
    }
    await writerDone;
    await d.caughtUp();
    const want = meaningfulOffsets(perfPath(p)).map((o) => `1:${o}`);
    assert.ok(want.length > 1500, `meaningful records: ${want.length}`);
    await waitFor(() => w.ids().length >= want.length, { timeout: 60000 }).catch((e) => {
      const g = new Set(w.ids());
      throw new Error(`${e.message}: ${want.length} wakes, have ${w.ids().length}; the first missing: ` +
        `${want.filter((x) => !g.has(x)).slice(0, 5).join(' ')}\n${w.err.slice(-1500)}\n` +
        `${logs.slice(-2).join('\n---\n').slice(-3000)}\n---\n${d.log.slice(-1500)}`);
    });
    const got = w.ids();
    assert.equal(new Set(got).size, got.length, 'no wake printed twice');
    assert.deepEqual(got, want, 'every meaningful record woke, in order');
    assert.ok(resumed >= 5, `restarts resumed from a checkpoint: ${resumed} of ${kills}`);
    await sameAsFresh(d, 'after the soak');
  } finally {
    writer.kill();
    await w.stop();
    await d.stop();
  }
});

test('a watch resuming across a restart from a checkpoint gets the wakes before its offset made again from the file', async () => {
  const p = emptyProject();
  const args = ['--per-fp-ms', '0', '--global-max', '0', '--desktop', '0', '--checkpoint-idle-ms', '20'];
  let d = await new Daemon(p, { args }).start();
  const lines = [];
  for (let i = 0; i < 300; i++) lines.push(hitch(150));
  appendFromProcess(perfPath(p), lines.join('\n') + '\n');
  await saved(d);
  await d.stop();
  d = await new Daemon(p, { state: d.state, args }).start();
  try {
    const c = await ckptStatus(d);
    assert.equal(c.resumed, true, c.why);
    assert.equal(c.resumedAt, fs.statSync(perfPath(p)).size);
    const st = await d.status();
    // the ring starts just after the last line before the checkpoint
    const all0 = fs.readFileSync(perfPath(p));
    const lastLine = all0.lastIndexOf(10, c.resumedAt - 2) + 1;
    assert.equal(st.events.ringFrom, lastLine + 1, 'the ring starts at the checkpoint');
    // a watch whose last id is that line's: nothing is owed from the file
    const w0 = new Watch(d, ['--since', `1:${lastLine}`]);
    try {
      appendFromProcess(perfPath(p), hitch(222) + '\n');
      await waitFor(() => w0.ids().length >= 1, { what: `the live wake after the checkpoint's last line\n${w0.err}` });
      assert.deepEqual(w0.ids(), [`1:${all0.length}`]);
    } finally {
      await w0.stop();
    }
    // a watch that saw the first 100 before the restart
    const want = meaningfulOffsets(perfPath(p)).map((o) => `1:${o}`);
    const w = new Watch(d, ['--since', want[99]]);
    try {
      await waitFor(() => w.ids().length >= 201, { what: `201 wakes (have ${w.ids().length})\n${w.err}` });
      appendFromProcess(perfPath(p), hitch(333) + '\n');
      await waitFor(() => w.ids().length >= 202, { what: 'the live wake' });
      const all = meaningfulOffsets(perfPath(p)).map((o) => `1:${o}`);
      assert.deepEqual(w.ids(), all.slice(100), 'every wake after its id, once, in order');
      assert.equal(w.lines[0].replayed, true);
      assert.equal(w.lines.at(-1).replayed, undefined);
    } finally {
      await w.stop();
    }
  } finally {
    await d.stop();
  }
});

// The regression memory (notifier/wake.h) is taught by records the
// checkpoint skips: it is told by the catalogue instead.  A footprint
// that regressed before the checkpoint is a repeat after it, as it is
// for a fold from byte 0 — so a full global window holds it back, where
// a first regression would go through.
test('a footprint regressed before the checkpoint is a repeat after it, not a new regression', async () => {
  const p = emptyProject();
  // build v1, then the fix, then build v2 with the cause again: regressed
  const t = Date.now(), at = (ms) => new Date(t + ms).toISOString();
  fs.writeFileSync(path.join(p, '.sloptimize', 'fixes.jsonl'), JSON.stringify({
    type: 'fix', id: '0000f1f1', at: at(-30000), title: 't', footprints: ['aaaaaaaa'], status: 'applied' }) + '\n');
  const args = ['--desktop', '0', '--per-fp-ms', '0', '--global-max', '1', '--global-window-ms', '3600000',
    '--checkpoint-idle-ms', '20'];
  for (const checkpoint of ['1', '0']) {
    const st = tmpdir('state');
    fs.writeFileSync(perfPath(p), '');
    let d = new Daemon(p, { state: st, args: [...args, `--checkpoint=${checkpoint}`] });
    await d.start();
    const w = new Watch(d);
    try {
      await w.connected();
      appendFromProcess(perfPath(p), [
        JSON.stringify({ type: 'heartbeat', at: at(-60000), build: 'v1' }),
        stamped('hitch', 'aaaaaaaa', { build: 'v1', at: at(-59000) }),
        JSON.stringify({ type: 'heartbeat', at: at(-10000), build: 'v2' }),
        stamped('hitch', 'aaaaaaaa', { build: 'v2', at: at(-9000) }),
      ].join('\n') + '\n');
      await waitFor(() => w.lines.some((x) => x.record?.status === 'regressed'), { what: `the regression\n${w.err}` });
      if (checkpoint === '1') await saved(d);
      else await d.caughtUp();
      await d.stop();
      d = new Daemon(p, { state: st, args: [...args, `--checkpoint=${checkpoint}`] });
      await d.start();
      assert.equal((await ckptStatus(d)).resumed, checkpoint === '1');
      const before = w.lines.length;
      // the usermark fills the window; the next record of aaaaaaaa is a
      // repeat (held), not a regression (which a full window lets by)
      appendFromProcess(perfPath(p), stamped('usermark', 'cccccccc') + '\n' + stamped('hitch', 'aaaaaaaa', { build: 'v2' }) + '\n');
      await waitFor(() => w.lines.slice(before).some((x) => x.record?.type === 'usermark'), { what: `the usermark\n${w.err}` });
      await waitFor(async () => (await d.status()).notifier.heldPending === 1,
        { what: `the repeat held (checkpoint ${checkpoint})\n${d.log}` });
      // and no gap: the watch's last id is the last line before the
      // checkpoint, which the ring starts after
      assert.deepEqual(w.lines.slice(before).map((x) => x.record?.fp), ['cccccccc'],
        `checkpoint ${checkpoint}: ${JSON.stringify(w.lines.slice(before))}`);
      // held back: the checkpoint waits, and /status says why
      if (checkpoint === '1') {
        await waitFor(async () => /held back/.test((await ckptStatus(d)).waiting), { what: 'the save waits' });
      }
    } finally {
      await w.stop();
      await d.stop();
    }
  }
});

test('a save waits while the notifier holds a wake back, and is made once it is said', async () => {
  const p = emptyProject();
  // the repeat must land inside the per-footprint window whatever the
  // machine's load (1.5 s was not: a loaded save took longer, and the
  // repeat woke instead of being held), and the window must end within
  // the wait below
  const args = ['--desktop', '0', '--per-fp-ms', '12000', '--global-max', '0', '--checkpoint-idle-ms', '20'];
  const d = new Daemon(p, { args });
  await d.start();
  try {
    appendFromProcess(perfPath(p), stamped('hitch', 'bbbbbbbb') + '\n');
    await saved(d);
    const first = await ckptStatus(d);
    appendFromProcess(perfPath(p), stamped('hitch', 'bbbbbbbb') + '\n');
    await d.caughtUp();
    const c = await waitFor(async () => {
      const k = await ckptStatus(d);
      return /the notifier has 1 wakes held back/.test(k.waiting) ? k : null;
    }, { what: 'the save waits for the held wake' });
    assert.equal(c.lastOffset, first.lastOffset, 'no checkpoint past a held wake');
    assert.equal((await d.status()).notifier.heldPending, 1);
    // the window reopens, the held wake is said, then the save lands
    await waitFor(async () => (await d.status()).notifier.heldPending === 0,
      { timeout: 40000, what: 'the held wake said when the window reopens' });
    await saved(d);
    assert.equal((await d.status()).notifier.heldPending, 0);
    assert.equal((await ckptStatus(d)).waiting, '');
  } finally {
    await d.stop();
  }
});
