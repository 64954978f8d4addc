// panel-issues.js in node: the Issues tab's view — a catalogue row, its
// detail, the empty state, the row limit, the census, a hostile key
// escaped — and a live incident folded into the rows.
process.env.TZ = 'UTC';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  censusHtml, detailHtml, fixLineHtml, issueRowHtml, issuesHtml, issuesTakeRecord, situationOfKey,
} from '../../page-runtime/panel-issues.js';
import { sourceLineHtml, errorHtml } from '../../page-runtime/panel-format.js';

const NOW = Date.parse('2026-11-02T14:32:02.400Z');
const row = {
  id: 'a64a6f58', key: 'hitch|play|shader-compile|mat_hull@ship_#|ctx:squad=duo,stance=helm', type: 'hitch', phase: 'play',
  count: 7, first: '2026-11-01T10:00:00.000Z', last: '2026-11-02T14:30:02.400Z', builds: ['v1', 'v2'],
  worst: { value: 240.5, unit: 'ms', at: '2026-11-02T11:00:00.000Z' },
  verdict: { guess: 'shader-compile', confidence: 'medium', evidence: 'programs +3' },
  situation: { squad: 'duo', stance: 'helm' }, fixes: [], proposals: [], status: 'open',
};

test('a row: its count, type, verdict and phase, status, when last seen, situation, footprint', () => {
  const html = issueRowHtml(row, { now: NOW });
  assert.match(html, /^<li data-row="a64a6f58" data-count="7" data-status="open">/);
  assert.match(html, /data-action="toggle-row" data-id="a64a6f58" data-fk="row-a64a6f58" aria-expanded="false"/);
  assert.match(html, /<span class="n" data-n>×7<\/span>/);
  assert.match(html, /<span class="guess" title="hitch\|play\|shader-compile\|mat_hull@ship_#\|ctx:squad=duo,stance=helm">shader-compile <span class="type">in play<\/span><\/span>/);
  assert.match(html, /<span class="ago" data-ago title="2026-11-02T14:30:02.400Z">last 2m ago<\/span>/);
  assert.match(html, /<span class="chip" data-facet="squad">squad=duo<\/span><span class="chip" data-facet="stance">stance=helm<\/span>/);
  assert.doesNotMatch(html, /data-detail=/, 'closed: no detail');
  assert.doesNotMatch(html, /data-machines/, 'one machine\'s catalogue says nothing of machines');
  const team = issueRowHtml({ ...row, machines: 1 }, { now: NOW });
  assert.match(team, /<span class="machines" data-machines="1" title="machines that saw it">on 1 machine<\/span>/);
});

test('a row opened: key, counts, worst, builds, the command that records a fix, the last occurrences', () => {
  const det = { occurrences: [{ at: '2026-11-02T14:30:02.400Z', build: 'v2', value: 141.2, verdict: { guess: 'gc' }, entities: ['ship#1'] }] };
  const html = issueRowHtml(row, { open: true, now: NOW, detail: det });
  assert.match(html, /aria-expanded="true"/);
  assert.match(html, /<div class="detail" id="detail-a64a6f58" data-detail="a64a6f58">/);
  assert.match(html, /<dt>worst<\/dt><dd>240\.5 ms at 2026-11-02 11:00:00<\/dd>/);
  assert.match(html, /<span class="chip build">v1<\/span><span class="chip build">v2<\/span>/);
  assert.match(html, /<code data-fix-command>sloptimize fix --footprints a64a6f58 --title &quot;fix shader-compile hitch in play&quot;<\/code>/);
  assert.match(html, /<h3>Last occurrences \(1\)<\/h3><ul class="occ"><li>2026-11-02 14:30:02 · v2 · 141\.2 ms · gc · <span class="entities" data-entities>ship#1<\/span><\/li><\/ul>/);
});

test('a fix under a row: pending waits for a build; a judged one says its verdict', () => {
  const pending = fixLineHtml({ id: 'f1', status: 'applied', title: 'cache it', at: '2026-11-02T12:00:00.000Z', pending: true, before: { p95Ms: 33.3, build: 'v1' } });
  assert.match(pending, /<span class="waiting" data-waiting>waiting for a build after this fix<\/span> · before: p95 33\.3 ms on v1/);
  const judged = fixLineHtml({
    id: 'f2', status: 'applied', title: 'warm shaders', at: '2026-11-02T12:00:00.000Z', fixBuild: 'v3',
    before: { p95Ms: 40 }, after: { p95Ms: 20 },
    judgement: { verdict: 'improved', was: 40, now: 20, deltaMs: -20, reason: 'past the noise', wasInterval: { lo: 38, hi: 42 } },
  });
  assert.match(judged, / · judged on v3<br>/);
  assert.match(judged, /was 40 ms \[38–42\] → now 20 ms p95 <span class="delta better" data-direction="better">−20 ms \(−50%\)<\/span> <strong>improved<\/strong>/);
  assert.match(fixLineHtml({ id: 'f3', status: 'proposed' }), /<span class="dim">no measured windows<\/span>/);
});

test('a hostile key, verdict or title is escaped', () => {
  const evil = '<script>alert(1)</script>';
  const bad = { ...row, id: 'x"y', key: evil, verdict: { guess: evil, confidence: evil, evidence: evil }, situation: { [evil]: evil },
    fixes: [{ id: 'f', status: evil, title: evil, at: null }] };
  const html = issueRowHtml(bad, { open: true, now: NOW });
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /data-row="x&quot;y"/);
  assert.match(html, /<code>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/code>/);
  assert.match(html, /<span class="badge &lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
});

test('the shell command quotes what a shell would expand', () => {
  const html = detailHtml({ ...row, verdict: { guess: '$(rm -rf ~) "x"' } });
  assert.match(html, /--title &quot;fix \\\$\(rm -rf ~\) \\&quot;x\\&quot; hitch in play&quot;/);
});

test('the empty catalogue says so', () => {
  const html = issuesHtml([], { view: 'tail' });
  assert.match(html, /<p class="occ" data-summary>0 footprints, 0 incidents; most frequent first\./);
  assert.match(html, /<p class="empty">No incident in this view yet\.<\/p>/);
  assert.match(html, /<ul class="rows" data-rows><\/ul>/);
  assert.doesNotMatch(html, /census/, 'the tail has no census');
});

test('200 rows are drawn; the rest wait behind "Show all"', () => {
  const rows = Array.from({ length: 201 }, (_, i) => ({ ...row, id: `fp${i}`, count: 1 }));
  const html = issuesHtml(rows, { view: 'daemon', now: NOW });
  assert.equal(html.match(/<li data-row=/g).length, 200);
  assert.match(html, /201 footprints, 201 incidents/);
  assert.match(html, /Show all 201 footprints \(1 more\)<\/button>/);
  assert.equal(issuesHtml(rows, { view: 'daemon', showAll: true }).match(/<li data-row=/g).length, 201);
});

test('the census: none yet says how to make one; an error is said; a census lists entities', () => {
  assert.equal(censusHtml(null), '');
  assert.match(censusHtml({ doc: null, error: null }), /data-census="none".*sloptimize attribute --static --scene S --launch/);
  assert.match(censusHtml({ doc: null, error: 'GET /census: <500>' }), /data-census="error"><h3>Census<\/h3><p class="occ">GET \/census: &lt;500&gt;<\/p>/);
  const html = censusHtml({
    doc: {
      scene: 'harbour', at: '2026-11-02T10:00:00.000Z', source: 'open-tab', totals: { meshes: 4, triangles: 9000, calls: 6 }, entitiesTotal: 13,
      entities: [{ id: 'ship#1', meshes: 2, triangles: 8000, materials: 3, site: 'src/ship.js:12' }, { id: 'rock', meshes: 1, triangles: 10, materials: 1, site: 'unknown' }],
      hints: [{ kind: 'instance', fix: 'use InstancedMesh' }],
    },
  });
  assert.match(html, /<h3>Census of scene harbour<\/h3>/);
  assert.match(html, /the open tab · 4 meshes, 9000 triangles, 6 draw calls · entities by triangles \(the first 2 of 13\)/);
  assert.match(html, /<tr data-entity="ship#1"><td>ship#1<\/td><td>2<\/td><td>8000<\/td><td>3<\/td><td>src\/ship\.js:12<\/td><\/tr>/);
  assert.match(html, /<td>unknown: name it with sloptimize\.track\(\)<\/td>/);
  assert.match(html, /<li><strong>instance<\/strong> — use InstancedMesh<\/li>/);
});

test('a live incident: a new footprint is a new row; a known one is counted and sorted again', () => {
  const cur = { view: 'tail', doc: { issues: [{ ...row, count: 1, id: 'old' }], counts: { incidents: 1 } } };
  assert.equal(issuesTakeRecord(cur, { fp: 'new', type: 'hitch', at: '2026-11-02T14:31:00.000Z', value: 90, key: 'hitch|x|ctx:zone=dock' }), true);
  const fresh = cur.doc.issues.find((r) => r.id === 'new');
  assert.equal(fresh.live, true);
  assert.deepEqual(fresh.situation, { zone: 'dock' });
  assert.deepEqual(fresh.worst, { value: 90, unit: 'ms', at: '2026-11-02T14:31:00.000Z' });
  issuesTakeRecord(cur, { fp: 'new', type: 'hitch', at: '2026-11-02T14:31:30.000Z', value: 120, build: 'v9', guess: 'gc' });
  assert.deepEqual(cur.doc.issues.map((r) => [r.id, r.count]), [['new', 2], ['old', 1]], 'most frequent first');
  assert.equal(fresh.last, '2026-11-02T14:31:30.000Z');
  assert.equal(fresh.worst.value, 120);
  assert.deepEqual(fresh.builds, ['v9']);
  assert.equal(fresh.verdict.guess, 'gc');
  assert.equal(cur.doc.counts.incidents, 3);
  const daemon = { view: 'daemon', doc: { issues: [{ ...row }] } };
  issuesTakeRecord(daemon, { fp: row.id, count: 42 });
  assert.equal(daemon.doc.issues[0].count, 42, 'the daemon\'s view takes the daemon\'s count');
  assert.equal(issuesTakeRecord(null, { fp: 'x' }), false);
  assert.equal(issuesTakeRecord(cur, { type: 'usermark' }), false, 'no footprint, no row');
});

test('a key\'s situation is read back from its ctx part', () => {
  assert.deepEqual(situationOfKey('hitch|play|x|ctx:a=1,b=two'), { a: '1', b: 'two' });
  assert.deepEqual(situationOfKey('hitch|play|x'), {});
  assert.deepEqual(situationOfKey(undefined), {});
});

test('the source line says which catalogue is shown; the error state offers a retry', () => {
  assert.match(sourceLineHtml(null), /data-view="none"><span>Nothing loaded from the daemon yet\./);
  assert.match(sourceLineHtml({ view: 'daemon' }, { route: '/issues' }), /the whole ledger<\/strong>, folded by the daemon \(<code>GET \/api\/sloptimize\/issues<\/code>\)/);
  const tail = sourceLineHtml({ view: 'tail', ledger: { perf: { truncated: true, size: 3 << 20, from: 1 << 20, records: [1, 2] }, foldMs: 12.34, doc: { skipped: 2 } } }, { source: 'tail' });
  assert.match(tail, /Showing the last <strong>2\.0 MiB<\/strong> of 3\.0 MiB \(from byte 1048576\) of perf\.jsonl — 2 records, folded in this page in 12\.3 ms/);
  assert.match(tail, /the daemon skipped 2 line\(s\)/);
  assert.match(tail, /data-source="tail" data-fk="src-tail" aria-pressed="true"/);
  assert.match(tail, /data-source="auto"/, 'a chosen source can go back to auto');
  assert.match(errorHtml('cannot reach <x>'), /^<div class="error" role="alert" data-error>cannot reach &lt;x&gt;<br>.*data-action="retry"/);
});
