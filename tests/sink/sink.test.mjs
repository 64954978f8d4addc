// The sink against a real ClickHouse (Debian's clickhouse-server, started
// here on free loopback ports): two machines × two projects feeding one
// server, the team catalogue equal to the C fold of the union of their
// ledgers; kill -9 while sending; ClickHouse stopped and restarted
// mid-stream; a ClickHouse that answers 500 or hangs (a proxy of ours in
// front of the real one — the only fault that cannot be caused for real);
// two servers as two shards behind a Distributed table.  Afterwards,
// nothing lost and nothing doubled, checked key by key.
//
// One server set for the whole file (start-up is seconds); each test has
// its own database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { build, CLI, top, tmpdir, waitFor, appendFromProcess, Daemon } from '../lib.mjs';
import { startClickHouses } from '../clickhouse.mjs';
import { chromium } from 'playwright-core';

const DRIVER = path.join(build, 'tests', 'sink_driver');
const GEN = path.join(top, 'tests', 'genledger.py');
const NOW = '2026-12-01T00:00:00.000Z';
let ch;			// { base, servers: [A, B] }
const children = new Set();

before(async () => {
  ch = await startClickHouses(2, { cluster: true });
});

after(async () => {
  for (const c of children) try { c.kill('SIGKILL'); } catch { /* gone */ }
  await Promise.all(ch.servers.map((s) => s.stop()));
  fs.rmSync(ch.base, { recursive: true, force: true });
});

function gen(dir, ...args) {
  const r = spawnSync('python3', [GEN, dir, '--json', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
  return r;
}

function sinkInit(url, ...more) {
  const r = cli('sink', 'init', '--sink', url, ...more);
  assert.equal(r.status, 0, `sink init: ${r.stderr}`);
  return r.stdout;
}

// A machine: its own state home (so its own machine-id), one project.
function machine(root, name, { id } = {}) {
  const home = path.join(root, `${name}-state`);
  fs.mkdirSync(home, { recursive: true });
  if (id) fs.writeFileSync(path.join(home, 'machine-id'), `${id}\n`);
  return { name, home, projects: [] };
}

function project(m, root, pname, genArgs) {
  const dir = path.join(root, `${m.name}-${pname}`);
  const summary = genArgs ? gen(dir, ...genArgs) : null;
  fs.mkdirSync(path.join(dir, '.sloptimize'), { recursive: true });
  const p = { m, dir, pid: `${pname}-0000`, state: path.join(m.home, `${pname}-0000`),
    status: path.join(root, `${m.name}-${pname}.status.json`), summary, driver: null };
  m.projects.push(p);
  return p;
}

function startDriver(p, url, extra = []) {
  const log = fs.openSync(`${p.status}.log`, 'a');
  const c = spawn(DRIVER, ['--project', p.dir, '--state-dir', p.state, '--sink', url,
    '--status', p.status, '--batch-ms', '50', '--team-now', NOW,
    '--team-out', path.join(path.dirname(p.dir), 'team-async.json'), ...extra],
  { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  children.add(c);
  c.once('exit', () => children.delete(c));
  p.driver = c;
  return c;
}

async function stopDriver(p) {
  const c = p.driver;
  if (!c || c.exitCode !== null) return;
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await gone;
  assert.equal(c.exitCode, 0, `driver exit: ${fs.readFileSync(`${p.status}.log`, 'utf8').slice(-800)}`);
}

function status(p) {
  try { return JSON.parse(fs.readFileSync(p.status, 'utf8')); } catch { return null; }
}

function lines(file) {
  if (!fs.existsSync(file)) return [];
  const buf = fs.readFileSync(file);
  const out = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] !== 10) continue;
    const text = buf.subarray(start, i).toString('utf8');
    let rec = null;
    try { rec = JSON.parse(text); } catch { /* not a record */ }
    if (rec && typeof rec === 'object' && !Array.isArray(rec) && typeof rec.type === 'string' && rec.type)
      out.push({ offset: start, text, rec });
    start = i + 1;
  }
  return out;
}

function machineId(m) {
  return fs.readFileSync(path.join(m.home, 'machine-id'), 'utf8').trim();
}

// Every record of every project, as the keys ClickHouse must hold.
function expectedKeys(projects) {
  const keys = new Set();
  for (const p of projects)
    for (const [stream, file] of [['perf', 'perf.jsonl'], ['fixes', 'fixes.jsonl']])
      for (const l of lines(path.join(p.dir, '.sloptimize', file)))
        keys.add(`${machineId(p.m)}|${p.pid}|${stream}|1|${l.offset}`);
  return keys;
}

async function heldKeys(server, table) {
  const rows = await server.rows(`SELECT machine, project, stream, generation, offset FROM ${table} FINAL`);
  return rows.map((r) => `${r.machine}|${r.project}|${r.stream}|${r.generation}|${r.offset}`);
}

async function waitAllSent(server, table, projects, timeout = 60000) {
  let want = '?';
  await waitFor(async () => {
    want = expectedKeys(projects).size;	// machine-id appears at start
    const [{ n }] = await server.rows(`SELECT count() AS n FROM ${table} FINAL`);
    return n >= want;
  }, { timeout, interval: 100, what: `every record (${want}) in ${table}` });
}

// Nothing lost, nothing doubled: the deduplicated keys are exactly the
// records of the files, and no key is held twice after FINAL.
async function assertExact(server, table, projects) {
  const want = expectedKeys(projects);
  const held = await heldKeys(server, table);
  assert.equal(new Set(held).size, held.length, 'a key held twice after FINAL');
  const missing = [...want].filter((k) => !held.includes(k));
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} records never reached ClickHouse`);
  const extra = held.filter((k) => !want.has(k));
  assert.deepEqual(extra.slice(0, 5), [], `${extra.length} rows that are no record`);
  const [{ n }] = await server.rows(`SELECT count() AS n FROM ${table} FINAL`);
  assert.equal(n, want.size);
}

// The C fold of the union of the ledgers, in the team's order: by `at`,
// then machine, project, generation, offset (docs/team.md).
function unionFold(projects, root) {
  const dir = path.join(root, `union-${Math.random().toString(16).slice(2)}`);
  fs.mkdirSync(path.join(dir, '.sloptimize'), { recursive: true });
  for (const file of ['perf.jsonl', 'fixes.jsonl']) {
    const all = [];
    for (const p of projects)
      for (const l of lines(path.join(p.dir, '.sloptimize', file))) {
        const at = typeof l.rec.at === 'string' ? Date.parse(l.rec.at) : NaN;
        all.push({ ...l, hasAt: Number.isFinite(at) ? 1 : 0, at: Number.isFinite(at) ? at : 0,
          machine: machineId(p.m), project: p.pid });
      }
    all.sort((a, b) => a.hasAt - b.hasAt || a.at - b.at ||
      (a.machine < b.machine ? -1 : a.machine > b.machine ? 1 : 0) ||
      (a.project < b.project ? -1 : a.project > b.project ? 1 : 0) || a.offset - b.offset);
    fs.writeFileSync(path.join(dir, '.sloptimize', file), all.map((l) => `${l.text}\n`).join(''));
  }
  const r = cli('issues', '--json', '--project', dir, '--now', NOW);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function localIds(p) {
  const r = cli('issues', '--json', '--project', p.dir, '--now', NOW);
  assert.equal(r.status, 0, r.stderr);
  return new Set(JSON.parse(r.stdout).issues.map((i) => i.id));
}

function team(url, ...more) {
  const r = cli('issues', '--team', '--sink', url, '--json', '--now', NOW, ...more);
  assert.equal(r.status, 0, `issues --team: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const FIELDS = ['key', 'type', 'phase', 'count', 'first', 'last', 'lastAgoMs', 'builds', 'worst',
  'verdict', 'situation', 'status'];

function assertEqualCatalogues(t, local, projects) {
  const perMachine = projects.map((p) => ({ m: machineId(p.m), ids: localIds(p) }));
  assert.equal(t.issues.length, local.issues.length, 'row count');
  assert.ok(local.issues.length > 10, 'the ledgers made a catalogue worth comparing');
  assert.deepEqual(t.issues.map((r) => r.id), local.issues.map((r) => r.id), 'rows and their order');
  const byId = new Map(t.issues.map((r) => [r.id, r]));
  let multi = 0;
  for (const want of local.issues) {
    const got = byId.get(want.id);
    for (const f of FIELDS) assert.deepEqual(got[f], want[f], `${want.id}.${f}`);
    assert.deepEqual(got.fixes.map((x) => [x.id, x.status, x.fixBuild]),
      want.fixes.map((x) => [x.id, x.status, x.fixBuild]), `${want.id}.fixes`);
    assert.deepEqual(got.proposals.map((x) => [x.id, x.status]),
      want.proposals.map((x) => [x.id, x.status]), `${want.id}.proposals`);
    const machines = new Set(perMachine.filter((x) => x.ids.has(want.id)).map((x) => x.m)).size;
    assert.equal(got.machines, machines, `${want.id}.machines`);
    if (machines > 1) multi++;
  }
  assert.ok(multi > 0, 'some causes happened on more than one machine');
  for (const k of ['folded', 'incidents', 'fixes', 'rows', 'builds'])
    assert.equal(t.counts[k], local.counts[k], `counts.${k}`);
  // the schema of the local catalogue, plus machines
  const v = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'),
    path.join(top, 'schemas', 'issues.json'), '-'],
    { input: JSON.stringify(t), encoding: 'utf8' });
  assert.equal(v.status, 0, `schema: ${v.stdout}${v.stderr}`);
}

test('two machines, two projects, one server: the team catalogue is the fold of the union', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-eq');
  const url = A.url('eq');
  sinkInit(url);
  const m1 = machine(root, 'm1'), m2 = machine(root, 'm2');
  // the same game on both machines, builds interleaved in time; another
  // game alone on m2
  const ps = [
    project(m1, root, 'game', ['--records', '6000', '--seed', '7', '--start', '2026-09-01T09:00:00Z']),
    project(m2, root, 'game', ['--records', '5000', '--seed', '7', '--start', '2026-09-01T09:20:00Z']),
    project(m2, root, 'tools', ['--records', '3000', '--seed', '11', '--start', '2026-09-01T08:00:00Z']),
  ];
  for (const p of ps) startDriver(p, url);
  await waitAllSent(A, 'eq.records', ps);
  await assertExact(A, 'eq.records', ps);
  const local = unionFold(ps, root);
  const viaCli = team(url);
  assertEqualCatalogues(viaCli, local, ps);
  // the daemon's path (sink_team on the loop): the same answer
  const out = path.join(root, 'team-async.json');
  ps[0].driver.kill('SIGUSR1');
  const viaLoop = await waitFor(() => { try { return JSON.parse(fs.readFileSync(out, 'utf8')); } catch { return null; } },
    { what: 'sink_team answer' });
  assert.equal(viaLoop.error, undefined, viaLoop.error);
  assert.deepEqual(viaLoop, viaCli);
  // the sink says it is idle and caught up
  await waitFor(() => ps.every((p) => status(p)?.idle && status(p).sink.lagBytes === 0),
    { what: 'every sink idle' });
  for (const p of ps) {
    const v = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'),
      path.join(top, 'schemas', 'sink-status.json'), '-'],
    { input: JSON.stringify(status(p).sink), encoding: 'utf8' });
    assert.equal(v.status, 0, `sink status schema: ${v.stdout}${v.stderr}`);
  }
  for (const p of ps) await stopDriver(p);
  // sink init again changes nothing
  sinkInit(url);
  await assertExact(A, 'eq.records', ps);
});

test('kill -9 while sending, then a restart: nothing lost, nothing doubled', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-kill');
  const url = A.url('kill');
  sinkInit(url);
  const m = machine(root, 'm');
  const p = project(m, root, 'game', ['--records', '20000', '--seed', '3']);
  for (let round = 0; round < 3; round++) {
    startDriver(p, url, ['--batch-rows', '300']);
    const before = (await A.rows('SELECT count() AS n FROM kill.records'))[0].n;
    // killed once rows are arriving and before all of them are in
    await waitFor(async () => (await A.rows('SELECT count() AS n FROM kill.records'))[0].n > before,
      { timeout: 30000, interval: 5, what: 'rows arriving' });
    p.driver.kill('SIGKILL');
    await new Promise((r) => p.driver.once('exit', r));
  }
  const [{ n: partial }] = await A.rows('SELECT count() AS n FROM kill.records FINAL');
  assert.ok(partial < expectedKeys([p]).size, 'killed before everything was sent');
  startDriver(p, url, ['--batch-rows', '300']);
  await waitAllSent(A, 'kill.records', [p]);
  await waitFor(() => status(p)?.idle, { what: 'the sink idle' });
  await stopDriver(p);
  await assertExact(A, 'kill.records', [p]);
  // resent batches were stored again and merged away by FINAL
  const [{ n: raw }] = await A.rows('SELECT count() AS n FROM kill.records');
  assert.ok(raw >= expectedKeys([p]).size);
});

test('ClickHouse stopped and restarted mid-stream: the sink lags, then catches up', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-restart');
  const url = A.url('rst');
  sinkInit(url);
  const m = machine(root, 'm');
  const p = project(m, root, 'game', ['--records', '4000', '--seed', '5']);
  const more = gen(path.join(root, 'more'), '--records', '3000', '--seed', '6',
    '--start', '2026-09-02T09:00:00Z');
  startDriver(p, url, ['--timeout-ms', '2000', '--backoff-max-ms', '500']);
  await waitAllSent(A, 'rst.records', [p]);
  await A.stop();
  const extra = fs.readFileSync(path.join(root, 'more', '.sloptimize', 'perf.jsonl'), 'utf8');
  appendFromProcess(path.join(p.dir, '.sloptimize', 'perf.jsonl'), extra);
  // the tailer goes on (the cursor moves), the sink lags and says why
  const size = fs.statSync(path.join(p.dir, '.sloptimize', 'perf.jsonl')).size;
  const s = await waitFor(() => {
    const st = status(p);
    return st && st.perfCursor === size && st.sink.lagBytes > 0 && st.sink.errors > 0 &&
      /refused|connect|Connection/i.test(st.sink.lastError || '') ? st : null;
  }, { timeout: 20000, what: 'the sink lagging with an error while ClickHouse is down' });
  assert.equal(s.sink.streams.perf.announced, size);
  await A.start();
  await waitAllSent(A, 'rst.records', [p], 90000);
  await waitFor(() => status(p)?.idle, { what: 'the sink idle again' });
  await stopDriver(p);
  await assertExact(A, 'rst.records', [p]);
  assert.ok(more.records > 0);
});

// A proxy in front of the real server: pass, answer 500 (before or after
// ClickHouse stored the rows; 'perf-commit-500': only inserts of perf
// rows, after),
// or hang (before or after).
function faultProxy(target) {
  let mode = 'pass';
  const hung = new Set();
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const m = mode;
      if (m === '500') { res.writeHead(500); res.end('Code: 999, e.displayText() = proxy says 500'); return; }
      if (m === 'hang') { hung.add(res); return; }
      const r = await fetch(`http://127.0.0.1:${target}${req.url}`, { method: 'POST', body: Buffer.concat(chunks) });
      const body = Buffer.from(await r.arrayBuffer());
      if (m === 'commit-500' || (m === 'perf-commit-500' && Buffer.concat(chunks).includes('"stream":"perf"'))) {
        res.writeHead(500); res.end('Code: 999, e.displayText() = stored, then 500'); return;
      }
      if (m === 'commit-hang') { hung.add(res); return; }
      res.writeHead(r.status, { 'Content-Type': 'text/plain' });
      res.end(body);
    });
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve({
    port: srv.address().port,
    set(m) { mode = m; },
    close() { for (const r of hung) r.destroy(); srv.closeAllConnections(); srv.close(); },
  })));
}

test('a ClickHouse that answers 500 or hangs, before or after storing: survived, exact', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-fault');
  sinkInit(A.url('flt'));
  const proxy = await faultProxy(A.http);
  const url = `http://127.0.0.1:${proxy.port}/?database=flt`;
  const m = machine(root, 'm');
  const p = project(m, root, 'game', ['--records', '1500', '--seed', '8']);
  const perf = path.join(p.dir, '.sloptimize', 'perf.jsonl');
  const chunks = [];
  for (let i = 0; i < 4; i++) {
    const d = path.join(root, `part${i}`);
    gen(d, '--records', '800', '--seed', String(20 + i), '--start', `2026-09-0${2 + i}T09:00:00Z`);
    chunks.push(fs.readFileSync(path.join(d, '.sloptimize', 'perf.jsonl'), 'utf8'));
  }
  try {
    startDriver(p, url, ['--timeout-ms', '700', '--backoff-max-ms', '300', '--batch-rows', '500']);
    await waitAllSent(A, 'flt.records', [p]);
    for (const [i, mode, why] of [[0, '500', /answered 500/], [1, 'hang', /[Tt]imeout|timed out/],
      [2, 'commit-500', /answered 500/], [3, 'commit-hang', /[Tt]imeout|timed out/]]) {
      const errs = status(p).sink.errors;
      proxy.set(mode);
      appendFromProcess(perf, chunks[i]);
      await waitFor(() => {
        const st = status(p);
        return st && st.sink.errors >= errs + 2 && why.test(st.sink.lastError || '');
      }, { timeout: 20000, what: `the sink failing on ${mode}` });
      // the daemon side went on: every line was folded and announced
      assert.equal(status(p).perfCursor, fs.statSync(perf).size);
      proxy.set('pass');
      await waitAllSent(A, 'flt.records', [p]);
      await waitFor(() => status(p)?.idle, { what: `the sink idle after ${mode}` });
    }
    await stopDriver(p);
    await assertExact(A, 'flt.records', [p]);
  } finally {
    proxy.close();
  }
});

test('two shards behind a Distributed table: the same equality', async () => {
  const [A, B] = ch.servers;
  const root = tmpdir('sink-dist');
  // the shards' local tables first, then the Distributed table on the
  // server the daemons send to
  sinkInit(B.url('dist'));
  sinkInit(A.url('dist'), '--cluster', 'team');
  const url = A.url('dist');
  // machine ids chosen so that both shards hold rows
  const ids = [];
  for (let i = 0; ids.length < 2 && i < 64; i++) {
    const id = `${i.toString(16).padStart(2, '0')}`.repeat(16);
    const [{ s }] = await A.rows(`SELECT cityHash64('${id}', 'game-0000') % 2 AS s`);
    if (!ids.some((x) => x.s === s)) ids.push({ id, s });
  }
  const m1 = machine(root, 'm1', { id: ids[0].id }), m2 = machine(root, 'm2', { id: ids[1].id });
  const ps = [
    project(m1, root, 'game', ['--records', '5000', '--seed', '7', '--start', '2026-09-01T09:00:00Z']),
    project(m2, root, 'game', ['--records', '5000', '--seed', '7', '--start', '2026-09-01T09:30:00Z']),
  ];
  for (const p of ps) startDriver(p, url);
  await waitAllSent(A, 'dist.records_all', ps);
  for (const p of ps) await stopDriver(p);
  await assertExact(A, 'dist.records_all', ps);
  const [{ n: onA }] = await A.rows('SELECT count() AS n FROM dist.records FINAL');
  const [{ n: onB }] = await B.rows('SELECT count() AS n FROM dist.records FINAL');
  assert.ok(onA > 0 && onB > 0, `rows on both shards (${onA}, ${onB})`);
  assert.equal(onA + onB, expectedKeys(ps).size);
  assertEqualCatalogues(team(url), unionFold(ps, root), ps);
});

test('a newer schema is never written into: sink init and the sink both refuse', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-newer');
  const url = A.url('newer');
  sinkInit(url);
  await A.query("INSERT INTO newer.meta (key, value, at) VALUES ('schema', '2', now() + 5)");
  const r = cli('sink', 'init', '--sink', url);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /schema 2, newer than this sloptimize's 1/);
  const m = machine(root, 'm', { id: 'ab'.repeat(16) });
  const p = project(m, root, 'game', ['--records', '300', '--seed', '4']);
  startDriver(p, url);
  const st = await waitFor(() => status(p)?.sink.state === 'refused' ? status(p) : null,
    { what: 'the sink refusing' });
  assert.match(st.sink.lastError, /newer than this sloptimize's 1/);
  // it stays refused: no retry writes anything
  const t = cli('issues', '--team', '--sink', url, '--json');
  assert.equal(t.status, 4);
  assert.match(t.stderr, /newer/);
  assert.equal(status(p).sink.state, 'refused');
  const [{ n }] = await A.rows('SELECT count() AS n FROM newer.records');
  assert.equal(n, 0);
  await stopDriver(p);
});

// Keys of one file's records as generation `gen` of machine m, project p.
function keysOf(p, file, stream, gen) {
  return lines(file).map((l) => `${machineId(p.m)}|${p.pid}|${stream}|${gen}|${l.offset}`);
}

async function assertKeys(server, table, want) {
  const held = await heldKeys(server, table);
  assert.equal(new Set(held).size, held.length, 'a key held twice after FINAL');
  assert.deepEqual([...held].sort(), [...want].sort());
}

test('rotation while ClickHouse is away: the old file is sent to its end, the new one as generation 2', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-rot');
  sinkInit(A.url('rot'));
  const proxy = await faultProxy(A.http);
  const url = `http://127.0.0.1:${proxy.port}/?database=rot`;
  const m = machine(root, 'm', { id: 'cd'.repeat(16) });
  const p = project(m, root, 'game', ['--records', '500', '--seed', '9']);
  const perf = path.join(p.dir, '.sloptimize', 'perf.jsonl');
  const part = (seed, start) => {
    const d = path.join(root, `p${seed}`);
    gen(d, '--records', '400', '--seed', String(seed), '--start', start);
    return fs.readFileSync(path.join(d, '.sloptimize', 'perf.jsonl'), 'utf8');
  };
  try {
    startDriver(p, url, ['--timeout-ms', '700', '--backoff-max-ms', '200']);
    await waitAllSent(A, 'rot.records', [p]);
    proxy.set('500');
    appendFromProcess(perf, part(31, '2026-09-03T09:00:00Z'));	// not sent yet
    await waitFor(() => status(p)?.perfCursor === fs.statSync(perf).size, { what: 'the tail folded' });
    const old = `${perf}.1`;
    fs.renameSync(perf, old);
    appendFromProcess(perf, part(32, '2026-09-04T09:00:00Z'));
    await waitFor(() => status(p)?.sink.streams.perf.announced > 0 &&
      status(p).sink.lagBytes > fs.statSync(perf).size, { what: 'the new file announced' });
    proxy.set('pass');
    const want = [...keysOf(p, old, 'perf', 1), ...keysOf(p, perf, 'perf', 2),
      ...keysOf(p, path.join(p.dir, '.sloptimize', 'fixes.jsonl'), 'fixes', 1)];
    await waitFor(async () => (await heldKeys(A, 'rot.records')).length >= want.length,
      { timeout: 30000, what: 'both files in ClickHouse' });
    await waitFor(() => status(p)?.idle, { what: 'the sink idle' });
    assert.equal(status(p).sink.streams.perf.lostBytes, 0);
    assert.equal(status(p).sink.streams.perf.generation, 2);
    await stopDriver(p);
    await assertKeys(A, 'rot.records', want);
  } finally {
    proxy.close();
  }
});

// lostBytes counts what ClickHouse does not hold, whatever the sink heard
// back: the old generation is sent either acknowledged, or stored by
// ClickHouse with every answer lost on the way ('perf-commit-500': what a
// timeout after the insert does on a loaded machine, made certain), and
// the figure is the unsent tail in both.
async function truncatedWhileUnsent(db, firstMode) {
  const [A] = ch.servers;
  const root = tmpdir(`sink-${db}`);
  sinkInit(A.url(db));
  const proxy = await faultProxy(A.http);
  const url = `http://127.0.0.1:${proxy.port}/?database=${db}`;
  const m = machine(root, 'm', { id: 'ef'.repeat(16) });
  const p = project(m, root, 'game', ['--records', '2000', '--seed', '12']);
  const perf = path.join(p.dir, '.sloptimize', 'perf.jsonl');
  const fixes = path.join(p.dir, '.sloptimize', 'fixes.jsonl');
  const table = `${db}.records`;
  try {
    proxy.set(firstMode);
    startDriver(p, url, ['--timeout-ms', '700', '--backoff-max-ms', '200']);
    await waitAllSent(A, table, [p]);
    if (firstMode !== 'pass') {
      // stored, never acknowledged: the sink's cursor is still at 0
      await waitFor(() => status(p)?.sink.errors > 0, { what: 'the answers lost' });
      assert.equal(status(p).sink.streams.perf.acked, 0);
    }
    const sent = keysOf(p, perf, 'perf', 1);
    const sentSize = fs.statSync(perf).size;
    const errs = status(p).sink.errors;
    proxy.set('500');
    const tail = lines(perf).slice(0, 50).map((l) => `${l.text}\n`).join('');
    appendFromProcess(perf, tail);				// announced, never sent
    await waitFor(() => status(p)?.perfCursor === sentSize + Buffer.byteLength(tail),
      { what: 'the tail folded' });
    // the sink has read the tail and been refused: from now on it reads
    // the file again only once ClickHouse answers (its schema check first)
    await waitFor(() => status(p)?.sink.errors > errs, { what: 'the tail refused' });
    // truncated in place and rewritten shorter
    const fresh = lines(perf).slice(0, 100).map((l) => `${l.text}\n`).join('');
    fs.truncateSync(perf, 0);
    appendFromProcess(perf, fresh);
    // the loss is found when the sink next reads the old generation,
    // which it does once ClickHouse answers again
    proxy.set('pass');
    await waitFor(() => status(p)?.sink.streams.perf.lostBytes > 0, { what: 'the loss counted' });
    const want = [...sent, ...keysOf(p, perf, 'perf', 2), ...keysOf(p, fixes, 'fixes', 1)];
    await waitFor(async () => (await heldKeys(A, table)).length >= want.length,
      { timeout: 30000, what: 'the new content in ClickHouse' });
    await waitFor(() => status(p)?.idle, { what: 'the sink idle' });
    assert.equal(status(p).sink.streams.perf.lostBytes, Buffer.byteLength(tail));
    await stopDriver(p);
    await assertKeys(A, table, want);
  } finally {
    proxy.close();
  }
}

test('truncated while unsent: the lost bytes are counted, the new content is generation 2', () =>
  truncatedWhileUnsent('trc', 'pass'));

test('truncated while unsent after ClickHouse stored rows it never acknowledged: only the bytes it lacks are lost', () =>
  truncatedWhileUnsent('trcu', 'perf-commit-500'));

// The same with sloptimized itself: its tailers, its fold, its loop.
// The panel's Issues tab on the team's catalogue, in a real browser: each
// row says on how many machines it was seen, as the API does.
async function panelShowsTeam(base, doc) {
  const profile = tmpdir('chromium-profile');
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-extensions'],
  });
  try {
    const page = await ctx.newPage();
    await page.goto(`${base}/?tab=issues&source=team`);
    await page.waitForSelector('#panel-issues[data-state="ready"][data-view="team"]');
    const shown = await page.$$eval('[data-row]', (lis) => lis.map((li) => ({
      id: li.getAttribute('data-row'),
      count: Number(li.querySelector('[data-n]').textContent.trim().replace('×', '')),
      machines: li.querySelector('.machines') ? li.querySelector('.machines').textContent.trim() : null,
    })));
    assert.ok(shown.length > 0, 'the team view lists rows');
    for (const row of shown) {
      const r = doc.issues.find((i) => i.id === row.id);
      assert.ok(r, `row ${row.id} is in the team catalogue`);
      assert.equal(row.count, r.count);
      assert.equal(row.machines, `on ${r.machines} machine${r.machines === 1 ? '' : 's'}`);
    }
    assert.ok(shown.some((r) => r.machines === 'on 2 machines'), 'some cause was seen on both machines');
  } finally {
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

// The daemon's checkpoint skips the bytes before it at start; the sink
// has its own cursor and re-reads the file, so what it had not sent when
// the daemon stopped is sent after a restart from the checkpoint.
test('sloptimized --sink restarted from its checkpoint: the sink still sends from its own offset', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-ckpt');
  const url = A.url('ckp');
  sinkInit(url);
  const dir = path.join(root, 'game');
  gen(dir, '--records', '3000', '--seed', '8', '--start', '2026-09-03T09:00:00Z');
  const state = path.join(root, 'game-home');
  const args = ['--sink', url, '--sink-batch-rows', '400', '--sink-batch-ms', '50',
    '--sink-timeout-ms', '2000', '--sink-backoff-max-ms', '300', '--desktop', '0',
    '--per-fp-ms', '0', '--global-max', '0', '--checkpoint-idle-ms', '20'];
  let d = new Daemon(dir, { state, args });
  const p = { dir, m: { home: path.join(state, 'sloptimize') }, get pid() { return path.basename(d.stateDir()); } };
  const perf = path.join(dir, '.sloptimize', 'perf.jsonl');
  let up = true;
  try {
    await d.start();
    await waitAllSent(A, 'ckp.records', [p]);
    await A.stop();
    up = false;
    const more = path.join(root, 'more');
    gen(more, '--records', '2000', '--seed', '9', '--start', '2026-09-04T09:00:00Z');
    appendFromProcess(perf, fs.readFileSync(path.join(more, '.sloptimize', 'perf.jsonl'), 'utf8'));
    const size = fs.statSync(perf).size;
    // folded and checkpointed to the end, while the sink is behind
    await waitFor(async () => {
      const st = await d.status();
      return st.files.perf.cursor === size && st.checkpoint.lastOffset === size &&
        !st.checkpoint.pending && st.sink.lagBytes > 0;
    }, { timeout: 20000, what: 'the checkpoint at the end with the sink behind' });
    assert.equal((await d.stop()).code, 0, d.log.slice(-800));
    await A.start();
    up = true;
    d = new Daemon(dir, { state, args });
    await d.start();
    const c = (await d.status()).checkpoint;
    assert.equal(c.resumed, true, c.why);
    assert.equal(c.resumedAt, size);
    await waitAllSent(A, 'ckp.records', [p], 90000);
    await waitFor(async () => (await d.status()).sink.lagBytes === 0, { what: 'the sink caught up' });
    await assertExact(A, 'ckp.records', [p]);
  } finally {
    if (!up) await A.start();
    await d.stop();
  }
});

test('sloptimized --sink: two daemons as two machines, kill -9 of one, ?scope=team, /status, doctor', async () => {
  const [A] = ch.servers;
  const root = tmpdir('sink-daemon');
  const url = A.url('dmn');
  sinkInit(url);
  const mk = (name, seed, start) => {
    const dir = path.join(root, name);
    gen(dir, '--records', '6000', '--seed', String(seed), '--start', start);
    const state = path.join(root, `${name}-home`);
    const d = new Daemon(dir, { state, args: ['--sink', url, '--sink-batch-rows', '400',
      '--sink-batch-ms', '50', '--desktop', '0'] });
    return { d, dir, m: { home: path.join(state, 'sloptimize') }, get pid() { return path.basename(d.stateDir()); } };
  };
  const ps = [mk('ship', 7, '2026-09-01T09:00:00Z'), mk('ship2', 7, '2026-09-01T09:40:00Z')];
  try {
    await ps[0].d.start();
    await ps[1].d.start();
    // kill -9 the second while it is sending
    await waitFor(async () => {
      const [{ n }] = await A.rows(`SELECT count() AS n FROM dmn.records WHERE project = '${ps[1].pid}'`);
      return n > 0;
    }, { interval: 5, what: 'the second daemon sending' });
    await ps[1].d.stop('SIGKILL');
    await ps[1].d.start();
    await waitAllSent(A, 'dmn.records', ps);
    for (const p of ps)
      await waitFor(async () => (await p.d.status()).sink.lagBytes === 0, { what: 'the sink caught up' });
    await assertExact(A, 'dmn.records', ps);
    const viaCli = team(url);
    assertEqualCatalogues(viaCli, unionFold(ps, root), ps);
    // the daemon's route: the same catalogue (its own "now")
    const viaApi = await ps[0].d.get('/api/sloptimize/issues?scope=team');
    const strip = (doc) => ({ ...doc, generatedAt: null,
      issues: doc.issues.map((r) => ({ ...r, lastAgoMs: null })) });
    assert.deepEqual(strip(viaApi), strip(viaCli));
    await panelShowsTeam(ps[0].d.base, viaApi);
    const filtered = await ps[0].d.get('/api/sloptimize/issues?scope=team&type=jitter&limit=3');
    assert.ok(filtered.issues.length === 3 && filtered.issues.every((r) => r.type === 'jitter'));
    // /status carries the sink, by its schema
    const st = await ps[0].d.status();
    assert.equal(st.sink.state, 'idle');
    // libcurl is loaded by the sink, not linked (sink/lazycurl.h)
    assert.match(fs.readFileSync(`/proc/${ps[0].d.proc.pid}/maps`, 'utf8'), /\/libcurl\.so\.4/);
    assert.equal(st.sink.machine, machineId(ps[0].m));
    const v = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'),
      path.join(top, 'schemas', 'status.json'), '-'], { input: JSON.stringify(st), encoding: 'utf8' });
    assert.equal(v.status, 0, `status schema: ${v.stdout}${v.stderr}`);
    const doc = spawnSync(CLI, ['doctor', '--project', ps[0].dir], { env: ps[0].d.env, encoding: 'utf8' });
    assert.match(doc.stdout, /ok\s+sink\s+http:\/\/127\.0\.0\.1:\d+\/\?database=dmn, database dmn as machine [0-9a-f]{32}: \d+ rows sent, 0 bytes behind/);
  } finally {
    for (const p of ps) {
      const end = await p.d.stop();
      assert.equal(end.code, 0, `daemon exit: ${p.d.log.slice(-800)}`);
    }
  }
  // without --sink: nothing leaves the machine, and the route says so
  const lone = path.join(root, 'lone');
  gen(lone, '--records', '50', '--seed', '2');
  const d = await new Daemon(lone, { args: ['--desktop', '0'] }).start();
  try {
    assert.equal((await d.status()).sink, null);
    assert.doesNotMatch(fs.readFileSync(`/proc/${d.proc.pid}/maps`, 'utf8'), /\/lib(curl|notify|glib-2\.0)[.-]/,
      'without --sink or bubbles, neither libcurl nor libnotify is mapped');
    const r = await fetch(`${d.base}/api/sloptimize/issues?scope=team`);
    assert.equal(r.status, 404);
    assert.equal((await r.json()).error.code, 'no_sink');
    const doc = spawnSync(CLI, ['doctor', '--project', lone], { env: d.env, encoding: 'utf8' });
    assert.match(doc.stdout, /sink\s+off: nothing leaves this machine/);
  } finally {
    assert.equal((await d.stop()).code, 0, d.log.slice(-800));
  }
});
