// fold.js against the conformance data every fold shares: the
// footprint vectors (schemas/footprint-vectors.json), the fold fixtures
// (tests/fixtures/, worked out by hand) and, for volume, the C fold itself
// (the CLI) on generated ledgers.  Compared as JSON values: key order is
// free, numbers by value.  What the JS fold leaves out, and why, is in
// docs/panel.md: counts.lines, counts.skipped and skipped (a fold of parsed
// records never saw the lines it was not given) — those three are checked
// against parseJsonl(), the reader, instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildHistory, buildIssue, buildIssues, canonicalContext, fnv1a32, footprintId, footprintOf,
  measureWindow, median, parseIso, parseJsonl, parseSituation, Fold, noiseInterval, judgeFix,
} from '../../page-runtime/fold.js';

const top = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fx = path.join(top, 'tests', 'fixtures');
const NOW = '2026-10-01T00:00:00.000Z';
const CLI = path.join(process.env.SLOPTIMIZE_BUILD || path.join(top, 'build'), 'sloptimize');

const json = (v) => JSON.parse(JSON.stringify(v));

function without(doc, keys) {
  const o = json(doc);
  for (const k of keys) delete o[k];
  return o;
}

function readCase(name) {
  const perf = parseJsonl(fs.readFileSync(path.join(fx, `${name}.jsonl`)));
  const fixesFile = path.join(fx, `${name}.fixes.jsonl`);
  const fixes = fs.existsSync(fixesFile)
    ? parseJsonl(fs.readFileSync(fixesFile), { stream: 'fixes' })
    : parseJsonl('', { stream: 'fixes' });
  return { perf, fixes };
}

const cases = fs.readdirSync(fx).filter((f) => f.endsWith('.jsonl') && !f.endsWith('.fixes.jsonl'))
  .map((f) => f.slice(0, -'.jsonl'.length)).sort();

test('fixtures are there', () => {
  assert.ok(cases.length >= 10, `cases: ${cases}`);
});

// --- footprints -------------------------------------------------------------

const vectors = JSON.parse(fs.readFileSync(path.join(top, 'schemas', 'footprint-vectors.json'), 'utf8'));

test('footprint: the DESIGN vectors hash to their ids', () => {
  for (const v of vectors.design) assert.equal(footprintId(v.key), v.id, v.key);
  assert.equal(fnv1a32(''), '811c9dc5');
  assert.equal(fnv1a32('a'), 'e40c292c');
  // on the fly UTF-8 equals hashing the encoded bytes, astral and lone surrogates included
  const enc = new TextEncoder();
  for (const s of ['héllo', 'forêt', '日本語', 'emoji 😀 x', 'lone \ud800 half', 'tail \udc00', '\u07ff\u0800\uffff']) {
    assert.equal(fnv1a32(s), fnv1a32(enc.encode(s)), s);
  }
});

for (const c of vectors.records) {
  test(`footprint record: ${c.name}`, () => {
    const got = footprintOf(c.record);
    assert.deepEqual({ id: got.id, key: got.key, malformed: got.malformed },
      { id: c.id, key: c.key, malformed: c.malformed === true });
  });
}

test('canonicalContext sorts, scrubs and joins facets', () => {
  assert.equal(canonicalContext({ stance: 'helm', squad: 'duo', hull: 'elong-x' }), 'hull=elong-x,squad=duo,stance=helm');
  assert.equal(canonicalContext({ 'a,b': 'x=y', c: 'p|q\nr', skip: null, n: 3 }), 'a_b=x_y,c=p_q_r,n=3');
  assert.equal(canonicalContext({}), '');
  assert.equal(canonicalContext(null), '');
  assert.equal(canonicalContext(new Map([['view', 'fp']])), 'view=fp');
  assert.deepEqual(parseSituation('hull=elong-x,squad=duo'), { hull: 'elong-x', squad: 'duo' });
  assert.deepEqual(parseSituation(''), {});
  assert.deepEqual(parseSituation('noeq,=v,k=v=w'), { k: 'v=w' });
  // the key it builds is the one the vectors hash
  const ctx = canonicalContext({ stance: 'helm', squad: 'duo' });
  assert.equal(footprintId(`hitch|play|shader-compile|mat_hull@ship_#+mat_rock@ship_#|ctx:${ctx}`), 'a64a6f58');
});

test('times and medians follow docs/json.md', () => {
  assert.equal(parseIso('2026-09-01T09:00:00.000Z'), Date.parse('2026-09-01T09:00:00.000Z'));
  assert.equal(parseIso('2026-09-01T10:00:00.5+01:00'), Date.parse('2026-09-01T09:00:00.500Z'));
  assert.equal(parseIso('2026-09-01T09:00Z'), Date.parse('2026-09-01T09:00:00Z'));
  assert.equal(parseIso('2026-09-01T09:00:00.123456Z'), Date.parse('2026-09-01T09:00:00.123Z'));
  assert.equal(parseIso('yesterday'), null);
  assert.equal(parseIso('2026-09-01T09:00:00'), null, 'a zone is required');
  assert.equal(parseIso('2026-13-01T09:00:00Z'), null);
  assert.equal(median([]), null);
  assert.equal(median([3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2, 'nearest rank: the 2nd of 4');
  assert.equal(median([5, 1, 3]), 3);
});

test('a noise interval is the one ledger/noise.c and tests/ledger/indep_fold.py give', () => {
  // tests/ledger/test_noise.c holds the same numbers
  assert.deepEqual(noiseInterval([20, 22, 19, 25, 30, 21, 23, 24, 18, 26, 28, 27]), { lo: 21, hi: 26 });
  assert.deepEqual(noiseInterval(Array.from({ length: 100 }, (_, i) => (i % 7) + 10)), { lo: 12, hi: 13 });
  assert.equal(noiseInterval([1, 2, 3, 4]), null, 'fewer than 5: no interval');
});

test('a fix verdict needs exposure, one regime that is not software, and a change past the noise', () => {
  const w = (regime, n, play, p95, lo, hi) => ({ regime, heartbeats: n, regimes: { [regime]: n }, playSeconds: play, p95Ms: p95, p95Interval: { lo, hi } });
  const noop = judgeFix(w('hardware', 40, 120, 95, 70, 110), w('hardware', 40, 120, 79, 64, 96));
  assert.equal(noop.verdict, 'no-detectable-change', 'a −17 % inside the noise');
  assert.equal(noop.deltaPct, -16.8);
  assert.equal(judgeFix(w('hardware', 40, 120, 95, 90, 100), w('hardware', 40, 120, 60, 58, 62)).verdict, 'improved');
  const sw = judgeFix(w('hardware', 40, 120, 95, 90, 100), w('software', 40, 120, 60, 58, 62));
  assert.equal(sw.verdict, 'software');
  assert.equal(sw.deltaMs, null, 'no delta between a GPU and SwiftShader');
  assert.match(judgeFix(w('hardware', 40, 120, 95, 90, 100), w('hardware', 12, 36, 60, 58, 62)).reason,
    /^the after window has 12 heartbeats and 36 s of play; a verdict needs 30 and 60 s/);
  assert.equal(judgeFix(w('hardware', 40, 120, 95, 90, 100), null, { pending: true }).verdict, 'pending');
  assert.equal(judgeFix(w('hardware', 12, 36, 95, 90, 100), w('hardware', 12, 36, 60, 58, 62),
    { judge: { minHeartbeats: 10, minPlaySeconds: 20 } }).verdict, 'improved', 'the settings move the bar');
});

// --- the fixtures -----------------------------------------------------------

for (const name of cases) {
  const issuesFile = path.join(fx, `${name}.issues.json`);
  if (fs.existsSync(issuesFile)) {
    test(`fixture ${name}: issues`, () => {
      const { perf, fixes } = readCase(name);
      const want = JSON.parse(fs.readFileSync(issuesFile, 'utf8'));
      // the fold: fixes as their raw lines, so an id-less fix gets the C id
      const got = buildIssues(perf.records, { fixes: fixes.lines, now: NOW });
      // source and regime are the CLI's reading of the files (cli/regime.h)
      const w = without(want, ['generatedAt', 'source', 'skipped', 'regime']);
      delete w.counts.lines;
      delete w.counts.skipped;
      assert.deepStrictEqual(without(got, ['generatedAt']), w);
      // parsed fix records give the same rows when every fix has an id
      if (fixes.records.every((r) => typeof r.id === 'string')) {
        assert.deepStrictEqual(json(buildIssues(perf.records, { fixes: fixes.records, now: NOW }).issues), w.issues);
      }
      // the reader: lines and skipped lines, as the C reader counts them
      assert.equal(perf.lineCount + fixes.lineCount, want.counts.lines, 'counts.lines');
      assert.equal(perf.skipped.length + fixes.skipped.length, want.counts.skipped, 'counts.skipped');
      assert.deepEqual(perf.skipped.concat(fixes.skipped).map(({ stream, offset, length }) => ({ stream, offset, length })),
        want.skipped.map(({ stream, offset, length }) => ({ stream, offset, length })), 'skipped offsets');
    });
  }
  const historyFile = path.join(fx, `${name}.history.json`);
  if (fs.existsSync(historyFile)) {
    test(`fixture ${name}: history`, () => {
      const { perf } = readCase(name);
      const want = JSON.parse(fs.readFileSync(historyFile, 'utf8'));
      const got = buildHistory(perf.records, { buckets: 4, now: NOW });
      assert.deepStrictEqual(without(got, ['generatedAt']), without(want, ['generatedAt', 'source']));
      // every per-build window is what measureWindow gives for that build
      for (const w of want.builds) {
        assert.deepStrictEqual(json(measureWindow(perf.records, w.build)), json(w), `window ${w.build}`);
      }
    });
  }
  for (const f of fs.readdirSync(fx).filter((f) => f.startsWith(`${name}.issue-`))) {
    const id = f.slice(`${name}.issue-`.length, -'.json'.length);
    test(`fixture ${name}: issue ${id}`, () => {
      const { perf, fixes } = readCase(name);
      const want = JSON.parse(fs.readFileSync(path.join(fx, f), 'utf8'));
      const got = buildIssue(perf.records, id, { fixes: fixes.lines, now: NOW, offsets: perf.offsets });
      assert.deepStrictEqual(without(got, ['generatedAt']), without(want, ['generatedAt', 'source', 'regime']));
    });
  }
}

test('includeAutomated and from/to: robots come back, time filters count only their range', () => {
  const { perf } = readCase('automated');
  const all = buildIssues(perf.records, { now: NOW, includeAutomated: true });
  const some = buildIssues(perf.records, { now: NOW });
  assert.ok(all.counts.incidents > some.counts.incidents);
  const { perf: basic } = readCase('basic');
  const r = buildIssues(basic.records, { now: NOW, from: '2026-09-01T09:00:30.000Z', to: '2026-09-01T09:00:40.000Z' });
  assert.deepEqual(r.issues.map((x) => [x.id, x.count]), [['7ac002c0', 1], ['a64a6f58', 1], ['539d08f4', 1]]);
  assert.equal(r.counts.folded, basic.records.length, 'every record is read');
  assert.equal(r.counts.builds, 2, 'builds are ordered by the whole file');
});

test('measureWindow: default windows, ranges and errors', () => {
  const { perf } = readCase('fix-status');
  assert.equal(measureWindow(perf.records).build, 'b3');
  assert.equal(measureWindow(perf.records, '', { after: false }).build, 'b2');
  const r = measureWindow(perf.records, '2026-09-01T08:00:00.000Z..2026-09-01T09:00:00.000Z');
  assert.equal(r.build, null);
  assert.equal(r.from, '2026-09-01T08:00:00.000Z');
  assert.equal(r.heartbeats, 2);
  assert.equal(r.hitches, 5);
  assert.equal(r.series.length, 32);
  assert.deepEqual(json(measureWindow(perf.records, { from: r.from, to: r.to })), json(r));
  assert.throws(() => measureWindow(perf.records, 'nope'), /no such build/);
  assert.throws(() => measureWindow(perf.records, '2026-09-02T00:00Z..2026-09-01T00:00Z'), /from <= to/);
  assert.throws(() => measureWindow([], ''), /no build has heartbeats/);
  const one = perf.records.filter((x) => x.build === 'b1');
  assert.throws(() => measureWindow(one, '', { after: false }), /no earlier build/);
});

test('a Fold takes records one at a time, like the daemon', () => {
  const { perf, fixes } = readCase('fix-status');
  const f = new Fold();
  for (const l of fixes.lines) f.addFix(l);
  for (const r of perf.records) f.addRecord(r);
  assert.deepStrictEqual(json(f.issues({ now: NOW }).issues),
    json(buildIssues(perf.records, { fixes: fixes.lines, now: NOW }).issues));
  assert.equal(f.allFixes().length, 9, 'fixes and proposals, not the merge/reject records');
  assert.equal(f.addRecord('not a record'), null);
  assert.equal(f.ignored, 1);
});

test('a window of more than a day, or less than nothing, is not play time — in both folds', { skip: !fs.existsSync(CLI) && 'no CLI: make all' }, () => {
  // two windows of 1e308 s once summed to Infinity (a checkpoint the
  // fuzzer made rendered -inf); a day-long heartbeat is no measurement
  const secs = [5, 1e308, 1e308, 90000, -3, 2.5];
  const lines = secs.map((s, i) => JSON.stringify({ type: 'heartbeat', at: `2026-09-01T08:00:0${i}.000Z`, phase: 'play', build: 'b1',
    window: { frames: 120, seconds: s }, frame: { medianMs: 10, p95Ms: 20 }, render: { calls: 8, triangles: 100 }, memory: { programs: 1 } }));
  const records = parseJsonl(lines.join('\n') + '\n').records;
  assert.equal(measureWindow(records, 'b1').playSeconds, 7.5);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fold-secs-'));
  try {
    fs.mkdirSync(path.join(dir, '.sloptimize'));
    fs.writeFileSync(path.join(dir, '.sloptimize', 'perf.jsonl'), lines.join('\n') + '\n');
    const h = cli(['history', '--json', '--no-checkpoint', '--now', NOW, '--project', dir]);
    assert.deepEqual(h.builds.map((b) => [b.build, b.playSeconds]), [['b1', 7.5]]);
  } finally { fs.rmSync(dir, { recursive: true, force: true }); }
});

// --- against the C fold, on generated ledgers -------------------------------

const genledger = path.join(top, 'tests', 'genledger.py');

function cli(args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.ok(r.status === 0 || r.status === 1, `sloptimize ${args.join(' ')}: ${r.status} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('the same catalogue, timeline and windows as the C fold on a generated ledger', { skip: !fs.existsSync(CLI) && 'no CLI: make all' }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'histjs-'));
  try {
    const g = spawnSync('python3', [genledger, dir, '--records', '6000', '--causes', '120', '--builds', '6'], { encoding: 'utf8' });
    assert.equal(g.status, 0, g.stderr);
    const perf = parseJsonl(fs.readFileSync(path.join(dir, '.sloptimize', 'perf.jsonl')));
    const fixes = parseJsonl(fs.readFileSync(path.join(dir, '.sloptimize', 'fixes.jsonl')), { stream: 'fixes' });
    assert.ok(perf.records.length === 6000 && fixes.records.length > 0);
    for (const extra of [[], ['--include-automated']]) {
      const want = cli(['issues', '--json', '--now', NOW, '--project', dir, ...extra]);
      const got = buildIssues(perf.records, { fixes: fixes.lines, now: NOW, includeAutomated: extra.length > 0 });
      // source and regime are the CLI's reading of the files (cli/regime.h)
      const w = without(want, ['generatedAt', 'source', 'skipped', 'regime']);
      delete w.counts.lines;
      delete w.counts.skipped;
      assert.deepStrictEqual(without(got, ['generatedAt']), w, `issues ${extra}`);
    }
    // these fixes carry no id: parsed records hash JSON.stringify, which is
    // their line here (compact JSON from Python, ASCII only)
    assert.deepStrictEqual(json(buildIssues(perf.records, { fixes: fixes.records, now: NOW }).issues),
      json(buildIssues(perf.records, { fixes: fixes.lines, now: NOW }).issues));
    const from = perf.records[1000].at, to = perf.records[4000].at;
    const wantRange = cli(['issues', '--json', '--now', NOW, '--project', dir, '--from', from, '--to', to]);
    assert.deepStrictEqual(json(buildIssues(perf.records, { fixes: fixes.lines, now: NOW, from, to }).issues), json(wantRange.issues));
    for (const n of [1, 7, 24, 100]) {
      const want = cli(['history', '--json', '--buckets', String(n), '--now', NOW, '--project', dir]);
      assert.deepStrictEqual(without(buildHistory(perf.records, { buckets: n, now: NOW }), ['generatedAt']),
        without(want, ['generatedAt', 'source']), `history --buckets ${n}`);
    }
    const top1 = cli(['issues', '--json', '--now', NOW, '--project', dir]).issues[0].id;
    const wantOne = cli(['issues', '--fp', top1, '--json', '--now', NOW, '--project', dir]);
    assert.deepStrictEqual(without(buildIssue(perf.records, top1, { fixes: fixes.lines, now: NOW, offsets: perf.offsets }), ['generatedAt']),
      without(wantOne, ['generatedAt', 'source', 'regime']));
    // fix windows: what `sloptimize fix --json` measured and appended
    const builds = buildHistory(perf.records, { now: NOW }).builds.map((b) => b.build);
    const rec = cli(['fix', '--title', 'check windows', '--before', builds[1], '--after', `${from}..${to}`, '--json', '--project', dir]);
    assert.deepStrictEqual(json(measureWindow(perf.records, builds[1])), json(rec.before));
    assert.deepStrictEqual(json(measureWindow(perf.records, `${from}..${to}`)), json(rec.after));
    // without --after: before is the latest build (the one that ran the
    // old code), after is null until a build after the fix has run
    const dflt = cli(['fix', '--title', 'defaults', '--json', '--project', dir]);
    assert.deepStrictEqual(json(measureWindow(perf.records)), json(dflt.before));
    assert.equal(dflt.after, null);
    const given = cli(['fix', '--title', 'after given', '--after', builds.at(-1), '--json', '--project', dir]);
    assert.deepStrictEqual(json(measureWindow(perf.records, '', { after: false })), json(given.before));
    assert.deepStrictEqual(json(measureWindow(perf.records)), json(given.after));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
