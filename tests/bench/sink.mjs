// bench-sink: the sink into one real ClickHouse (Debian's 18.16, started
// here on loopback ports).  Figures, never pass/fail: the machine is
// shared and noisy.
//
//   node tests/bench/sink.mjs [--records N] [--copies K] [--lag N]
//
// 1. throughput: a genledger ledger of N records (default 1,000,000) sent
//    from byte 0 by the sink (tests/sink/sink_driver.c: real tailers, the sink,
//    default batch settings) — records/s until ClickHouse acknowledged
//    the last one;
// 2. lag: single appends to a live ledger, each timed from just before
//    write(2) to the moment a SELECT finds its row (polled every 2 ms):
//    p50/p99, with --batch-ms 50 and with the default 1000 (which is the
//    age limit doing its job, not a cost);
// 3. the team catalogue (`sloptimize issues --team --json`) on N×K rows
//    (default 10,000,000: the N records as K machines, copied inside
//    ClickHouse), beside the local fold (`sloptimize issues --json`) of
//    the same N×K records in one file, in the same run; best of 3 each.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build, CLI, top, waitFor } from '../lib.mjs';
import { startClickHouses } from '../clickhouse.mjs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
// BENCH_QUICK=1: 20,000 records, 2 copies, 20 appends (checks the machinery)
const QUICK = !['', '0', undefined].includes(process.env.BENCH_QUICK);
const N = opt('records', QUICK ? 20000 : 1000000);
const K = opt('copies', QUICK ? 2 : 10);
const LAGN = opt('lag', QUICK ? 20 : 200);
// one machine-readable line for tests/bench/table.py (tests/bench/benchlib.py)
const num = (v) => (v === null || v === undefined ? '-' : String(Number(v.toPrecision(4))));
const bench = (measure, anchor, ours, unit, vs) =>
  console.log(`BENCH measure=${measure} anchor=${num(anchor)} ours=${num(ours)} unit=${unit} target=- met=-${vs ? ` vs=${vs}` : ''}`);
const DRIVER = path.join(build, 'tests', 'sink_driver');
const work = path.join(build, 'bench', 'sink');
fs.mkdirSync(work, { recursive: true });

function ms(t0) { return Number(process.hrtime.bigint() - t0) / 1e6; }
function pct(a, p) { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; }
function fmt(x) { return x.toFixed(x < 10 ? 2 : 1); }

const ledger = path.join(work, `ledger-${N}`);
if (!fs.existsSync(path.join(ledger, '.sloptimize', 'perf.jsonl'))) {
  console.log(`generating a ${N}-record ledger (once) in ${ledger}`);
  const r = spawnSync('python3', [path.join(top, 'tests', 'genledger.py'), ledger, '--records', String(N),
    '--causes', '5000'], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(1);
}
const perf = path.join(ledger, '.sloptimize', 'perf.jsonl');
const bytes = fs.statSync(perf).size;
spawnSync('cat', [perf], { stdio: ['ignore', 'ignore', 'inherit'] });	// page cache

const { base, servers: [ch] } = await startClickHouses(1);
const children = [];
process.on('exit', () => { for (const c of children) try { c.kill('SIGKILL'); } catch { /* gone */ } });

function init(db) {
  const r = spawnSync(CLI, ['sink', 'init', '--sink', ch.url(db)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}

function driver(project, state, url, status, extra = []) {
  const c = spawn(DRIVER, ['--project', project, '--state-dir', state, '--sink', url, '--status', status, ...extra],
    { stdio: ['ignore', 'ignore', 'ignore'] });
  children.push(c);
  return c;
}

function readStatus(f) { try { return JSON.parse(fs.readFileSync(f, 'utf8')); } catch { return null; } }

async function stop(c) {
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await gone;
}

console.log(`machine: ${spawnSync('nproc').stdout.toString().trim()} cores, load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}; ClickHouse ${(await ch.query('SELECT version()')).trim()}`);

// --- 1. throughput ---------------------------------------------------------
init('tput');
{
  const state = path.join(base, 'tput-state', 'game-0000');
  const status = path.join(base, 'tput.status.json');
  const t0 = process.hrtime.bigint();
  const c = driver(ledger, state, ch.url('tput'), status);
  const st = await waitFor(() => {
    const s = readStatus(status);
    return s && s.sink.streams.perf.acked === bytes && s.idle ? s : null;
  }, { timeout: 3600000, interval: 20, what: 'every record acknowledged' });
  const t = ms(t0) / 1000;
  await stop(c);
  const [{ n }] = await ch.rows('SELECT count() AS n FROM tput.records FINAL');
  console.log(`\n1. throughput: ${st.sink.rows} rows (${(bytes / 1e6).toFixed(0)} MB of ledger) in ${fmt(t)} s ` +
    `= ${Math.round(st.sink.rows / t).toLocaleString('en')} records/s, ${(bytes / 1e6 / t).toFixed(1)} MB/s; ` +
    `${st.sink.batches} batches of ≤ ${st.sink.batchRows} rows; ${n} rows after FINAL`);
  bench(`sink throughput, ${N.toLocaleString('en')} records from byte 0`, null, st.sink.rows / t, 'records/s');
}

// --- 2. lag ------------------------------------------------------------------
async function lag(db, batchMs, count) {
  init(db);
  const proj = path.join(base, `${db}-proj`);
  fs.mkdirSync(path.join(proj, '.sloptimize'), { recursive: true });
  const file = path.join(proj, '.sloptimize', 'perf.jsonl');
  fs.writeFileSync(file, '');
  const status = path.join(base, `${db}.status.json`);
  const c = driver(proj, path.join(base, `${db}-state`, 'p-0000'), ch.url(db), status,
    batchMs ? ['--batch-ms', String(batchMs)] : []);
  await waitFor(() => readStatus(status), { what: 'the driver up' });
  const out = [];
  const fd = fs.openSync(file, 'a');
  // the anchor: the same SELECT finding a row that is already there —
  // the floor this way of measuring puts under every figure
  fs.writeSync(fd, `${JSON.stringify({ type: 'heartbeat', at: new Date().toISOString() })}\n`);
  await waitFor(async () => (await ch.query(`SELECT count() FROM ${db}.records WHERE offset = 0`)).trim() === '1',
    { timeout: 30000, interval: 2, what: 'the first row' });
  const anchor = [];
  for (let i = 0; i < 50; i++) {
    const t0 = process.hrtime.bigint();
    await ch.query(`SELECT count() FROM ${db}.records WHERE offset = 0`);
    anchor.push(ms(t0));
  }
  for (let i = 0; i < count; i++) {
    const line = `${JSON.stringify({ type: 'hitch', at: new Date().toISOString(), frameMs: 120 + i,
      phase: 'play', build: 'v1', classification: { guess: 'long-render' } })}\n`;
    const off = fs.fstatSync(fd).size;
    const t0 = process.hrtime.bigint();
    fs.writeSync(fd, line);	// one write(2), O_APPEND, as the recorder's ingest does
    await waitFor(async () => (await ch.query(
      `SELECT count() FROM ${db}.records WHERE offset = ${off}`)).trim() === '1',
    { timeout: 30000, interval: 2, what: `row at ${off}` });
    out.push(ms(t0));
    await new Promise((r) => setTimeout(r, Math.random() * 50));
  }
  fs.closeSync(fd);
  await stop(c);
  return { out, anchor };
}
console.log('\n2. end-to-end lag, append → row queryable (one write(2), then a SELECT every 2 ms):');
for (const [db, bms, n] of [['lag50', 50, LAGN], ['lagdef', 0, Math.max(10, Math.round(LAGN / 10))]]) {
  const { out: a, anchor } = await lag(db, bms, n);
  if (bms === 50)
    console.log(`   anchor: one SELECT finding a row already there     p50 ${fmt(pct(anchor, 0.5))} ms  p99 ${fmt(pct(anchor, 0.99))} ms`);
  bench(`sink lag, append -> row queryable, --batch-ms ${bms || '1000 (default)'}, p99`, pct(anchor, 0.99), pct(a, 0.99), 'ms',
    'a SELECT finding a row already there');
  console.log(`   --batch-ms ${bms || '1000 (default)'}: ${String(n).padStart(4)} appends           ` +
    `p50 ${fmt(pct(a, 0.5))} ms  p99 ${fmt(pct(a, 0.99))} ms  max ${fmt(Math.max(...a))} ms`);
}

// --- 3. the team catalogue on N×K rows --------------------------------------
{
  init('big');
  const cols = (await ch.rows("SELECT name FROM system.columns WHERE database = 'tput' AND table = 'records'"))
    .map((r) => r.name);
  const sel = cols.map((c) => (c === 'machine' ? "concat(machine, '-', toString(n)) AS machine" : c)).join(', ');
  const t0 = process.hrtime.bigint();
  await ch.query(`INSERT INTO big.records SELECT ${sel} FROM tput.records FINAL ARRAY JOIN range(${K}) AS n`);
  await ch.query('OPTIMIZE TABLE big.records FINAL');
  const [{ n }] = await ch.rows('SELECT count() AS n FROM big.records');
  console.log(`\n3. the team catalogue on ${n.toLocaleString('en')} rows (${N.toLocaleString('en')} records × ${K} machines; copied and merged in ${fmt(ms(t0) / 1000)} s):`);
  const union = path.join(work, `union-${N}x${K}`);
  const uperf = path.join(union, '.sloptimize', 'perf.jsonl');
  if (!fs.existsSync(uperf) || fs.statSync(uperf).size !== bytes * K) {
    fs.mkdirSync(path.dirname(uperf), { recursive: true });
    const fd = fs.openSync(uperf, 'w');
    for (let i = 0; i < K; i++) fs.writeSync(fd, fs.readFileSync(perf));
    fs.closeSync(fd);
    fs.copyFileSync(path.join(ledger, '.sloptimize', 'fixes.jsonl'), path.join(union, '.sloptimize', 'fixes.jsonl'));
  }
  spawnSync('cat', [uperf], { stdio: ['ignore', 'ignore', 'inherit'] });
  const best = (cmd) => {
    let b = Infinity, rows = 0;
    for (let i = 0; i < 3; i++) {
      const t = process.hrtime.bigint();
      const r = spawnSync(CLI, cmd, { encoding: 'utf8', maxBuffer: 1 << 30 });
      if (r.status !== 0) throw new Error(r.stderr);
      b = Math.min(b, ms(t));
      rows = JSON.parse(r.stdout).issues.length;
    }
    return { b, rows };
  };
  const team = best(['issues', '--team', '--sink', ch.url('big'), '--json']);
  const local = best(['issues', '--json', '--project', union]);
  console.log(`   sloptimize issues --team --json (ClickHouse SQL + the fold's finish)  ${fmt(team.b / 1000)} s  ${team.rows} rows`);
  console.log(`   sloptimize issues --json on the same records (${(bytes * K / 1e9).toFixed(2)} GB, one file)  ${fmt(local.b / 1000)} s  ${local.rows} rows`);
  bench(`issues --team on ${n.toLocaleString('en')} rows`, local.b / 1000, team.b / 1000, 's',
    'the local fold of the same records');
}

await ch.stop();
fs.rmSync(base, { recursive: true, force: true });
