// panel-optimizations.js and panel-charts.js in node: the timeline's
// honesty rules as markup (a gap breaks the line and is marked, a spike is
// drawn at the ceiling and read out at its value), the bucket count, the
// crosshair's readout, and a fix's card (pending, judged, proposed,
// hostile).
process.env.TZ = 'UTC';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axisSvg, sparkPair, stripSvg } from '../../page-runtime/panel-charts.js';
import {
  STRIPS, bucketsFor, cardHtml, cardsHtml, fixesOfRows, hoverText, optimizationsHtml, readout, timelineHtml, timelineWidth,
} from '../../page-runtime/panel-optimizations.js';

test('a strip: a gap breaks the line and is marked; a lone value is a dot; a spike is drawn at the ceiling', () => {
  const values = [10, 11, null, 12, null, 10, 10, 10, 10, 10, 10, 10, 100];
  const { svg, ceiling, yMax } = stripSvg(values, { width: 130, height: 46, metric: 'p95Ms', label: 'frame p95' });
  assert.equal(ceiling, 18, '1.5 × p90 of the strip');
  assert.equal(yMax, 18);
  assert.match(svg, /data-metric="p95Ms" data-segments="3" data-gaps="2" data-spikes="1" data-ceiling="18"/);
  assert.match(svg, /<rect class="gap" data-gap="2" x="20\.0" y="0" width="10\.0" height="46"\/>/);
  assert.match(svg, /<rect class="gap" data-gap="4"/);
  assert.equal(svg.match(/<circle class="dot"/g).length, 1, 'the lone 12 between two gaps');
  assert.match(svg, /<circle class="dot" cx="35\.0"/);
  assert.match(svg, /<path class="caret" data-spike="12" data-value="100"[^>]*><title>frame p95 100 \(above the ceiling 18\)<\/title><\/path>/);
  assert.match(svg, /<line class="ceiling"/);
  assert.match(svg, /<path class="series" d="M5\.0,[0-9.]+L15\.0,[0-9.]+M35\.0,[0-9.]+M55\.0,/);
});

test('a strip of zeros is scaled to its maximum and nothing is clamped', () => {
  const { svg, ceiling } = stripSvg([0, 0, 0], { width: 30, height: 46, metric: 'calls' });
  assert.equal(ceiling, 0);
  assert.match(svg, /data-segments="1" data-gaps="0" data-spikes="0"/);
  assert.doesNotMatch(svg, /class="ceiling"/);
});

test('the axis marks where each build after the first begins, and names it where there is room', () => {
  const doc = {
    from: '2026-11-02T10:00:00.000Z', to: '2026-11-02T11:00:00.000Z', bucketMs: 600e3, buckets: new Array(6).fill({}),
    builds: [{ build: 'v1', from: '2026-11-02T10:00:00.000Z' }, { build: '<v2>', from: '2026-11-02T10:30:00.000Z' }],
  };
  const { svg, boundaries } = axisSvg(doc, 600);
  assert.deepEqual(boundaries, [300]);
  assert.match(svg, /<text x="0" y="26">2026-11-02 10:00<\/text>/);
  assert.match(svg, /<text x="600" y="26" text-anchor="end">2026-11-02 11:00<\/text>/);
  assert.match(svg, /<line class="build" x1="300\.0" x2="300\.0" y1="0" y2="30" data-build-boundary="&lt;v2&gt;"><title>&lt;v2&gt; from 2026-11-02 10:30:00<\/title><\/line>/);
  assert.match(svg, /<text class="build" x="0\.0" y="11">v1<\/text>/);
  assert.match(svg, /<text class="build" x="303\.0" y="11">&lt;v2&gt;<\/text>/);
});

test('the timeline: one strip per metric, the build boundary in each, the legend', () => {
  const b = (p95Ms) => ({ p95Ms, medianMs: 8, calls: 100, triangles: 5000, programs: 4, hitches: 1, worstHitchMs: 90, heartbeats: 12 });
  const doc = {
    from: '2026-11-02T10:00:00.000Z', to: '2026-11-02T10:04:00.000Z', bucketMs: 60e3, buckets: [b(10), b(12), { heartbeats: 0 }, b(11)],
    builds: [{ build: 'v1', from: '2026-11-02T10:00:00.000Z' }, { build: 'v2', from: '2026-11-02T10:03:00.000Z' }],
  };
  const html = timelineHtml(doc, 400);
  assert.match(html, /<span>4 buckets of 60 s<\/span>/);
  assert.equal(html.match(/<div class="striprow"/g).length, STRIPS.length);
  assert.equal(html.match(/<line class="build" x1="300\.0"/g).length, STRIPS.length + 1, 'the axis and every strip');
  assert.equal(html.match(/data-gaps="1"/g).length, STRIPS.length, 'the bucket without heartbeats is a gap in every strip, not a zero');
  assert.match(html, /no evidence \(a gap, not a zero\)/);
  const empty = optimizationsHtml({ buckets: [] }, { width: 400 });
  assert.match(empty, /<p class="empty">No record with a time in this view: nothing to draw\.<\/p>/);
  assert.match(empty, /<h3>Fixes<\/h3><p class="empty">No fix recorded yet\./);
});

test('the crosshair reads one bucket out: a gap says so, a spike is marked', () => {
  const hitches = STRIPS.find((s) => s.key === 'hitches');
  const p95 = STRIPS.find((s) => s.key === 'p95Ms');
  assert.deepEqual(readout({ p95Ms: null }, p95, 15), { text: 'gap: no evidence', gap: true, spike: false });
  assert.deepEqual(readout({ p95Ms: 100 }, p95, 15), { text: '100 ms ▲', gap: false, spike: true });
  assert.deepEqual(readout({ p95Ms: 12.5 }, p95, 15), { text: '12.5 ms', gap: false, spike: false });
  assert.equal(readout({ hitches: 2, worstHitchMs: 240.5 }, hitches, 10).text, '2 (worst 240.5 ms)');
  assert.equal(hoverText({ from: '2026-11-02T10:00:00.000Z', to: '2026-11-02T10:01:00.000Z', heartbeats: 1, builds: ['v1', 'v2'] }),
    '2026-11-02 10:00:00 – 10:01:00 · 1 heartbeat · builds v1, v2');
});

test('bucketsFor: the smallest round width with enough heartbeats in each bucket', () => {
  const one = (ms, heartbeats) => ({ from: '2026-11-02T10:00:00.000Z', to: new Date(Date.parse('2026-11-02T10:00:00.000Z') + ms).toISOString(), buckets: [{ heartbeats }] });
  assert.equal(bucketsFor(null), 1);
  assert.equal(bucketsFor(one(5000, 3)), 1, 'shorter than the narrowest width');
  assert.equal(bucketsFor(one(120e3, 120)), 12, '10 s buckets, 10 heartbeats each');
  assert.equal(bucketsFor(one(120e3, 20)), 4, 'too few for 10 s buckets: 30 s, 5 heartbeats each');
  assert.equal(bucketsFor(one(120e3, 10)), 2, 'too few for 30 s buckets: 1 min');
  assert.equal(bucketsFor(one(30 * 86400e3, 100000)), 30, 'a month: one-day buckets, 12 h ones would be 60, past 48');
  assert.equal(bucketsFor(one(365 * 86400e3, 100)), 20, 'wider than 48 weeks: as many as the heartbeats fill');
  assert.equal(bucketsFor(one(365 * 86400e3, 100000)), 48, 'and never more than 48');
});

test('the strips\' width: the tab\'s, or what its CSS will make it while hidden', () => {
  assert.equal(timelineWidth(1000, 0), 810);
  assert.equal(timelineWidth(0, 1000), 752);
  assert.equal(timelineWidth(100, 0), 320, 'never narrower than 320');
});

const judged = {
  id: 'f1', status: 'applied', title: 'warm the shaders', at: '2026-11-02T12:00:00.000Z', commit: 'abc123', footprints: ['a64a6f58'],
  before: { build: 'v1', p95Ms: 40, medianMs: 16, calls: 120, triangles: 9000, programs: 30, worstHitchMs: 240, series: [40, 41, null, 39], heartbeats: 40, playSeconds: 120.4, regime: 'hardware' },
  after: { build: 'v2', p95Ms: 20, medianMs: 16.5, calls: 100, triangles: 9000, programs: 12, worstHitchMs: 60, series: [20, 21, 19] },
  judgement: { verdict: 'improved', was: 40, now: 20, deltaMs: -20, reason: 'the intervals do not overlap' },
};

test('a judged fix\'s card: verdict, windows, sparklines, and deltas coloured only where they are facts', () => {
  const html = cardHtml(judged);
  assert.match(html, /^<article class="card" data-card="f1" data-status="applied">/);
  assert.match(html, /<span class="title">warm the shaders<\/span><span class="badge applied"/);
  assert.match(html, /commit <code>abc123<\/code> · <code>f1<\/code> · <button type="button" class="fp" data-action="goto-issue" data-id="a64a6f58"/);
  assert.match(html, /<div class="verdict improved" data-verdict="improved" data-was>was 40 ms → now 20 ms p95 <span class="delta better"/);
  assert.match(html, /before v1 \(40 heartbeats, 120 s of play, hardware\) · after v2/);
  assert.match(html, /<figure class="spark before"><svg [^>]*data-segments="2"/, 'the before series breaks at its gap');
  assert.match(html, /<tr data-metric="calls"><td>draw calls<\/td><td class="num">120<\/td><td>→<\/td><td class="num">100<\/td><td class="num"><span class="delta better" data-direction="better">−20 \(−17%\)<\/span>/);
  assert.match(html, /<tr data-metric="medianMs">.*<span class="delta noise" data-direction="noise" title="inside the noise/, 'a timing other than the judged p95 is noise');
  assert.match(html, /<tr data-metric="triangles">.*<span class="delta same" data-direction="same">±0 \(±0%\)<\/span>/);
  assert.doesNotMatch(html, /data-action="decide"/, 'only a proposal is merged or rejected');
});

test('a pending fix waits for a build after it; a proposal can be merged or rejected; no windows is said', () => {
  const pending = cardHtml({ id: 'f2', status: 'applied', title: 'x', at: '2026-11-02T12:00:00.000Z', pending: true, before: { build: 'v1', p95Ms: 33.3, p95Interval: { lo: 30, hi: 36.5 } } });
  assert.match(pending, /data-pending>/);
  assert.match(pending, /<span class="badge pending" data-status="pending">pending<\/span>/);
  assert.match(pending, /before v1 · p95 33\.3 ms \[30–36\.5\] · after: not measured yet/);
  const proposal = cardHtml({ id: 'p1', status: 'proposed', title: 'instance the rocks' });
  assert.match(proposal, /<div class="spark-none">no measured windows: this fix was recorded without a ledger to measure<\/div>/);
  assert.match(proposal, /data-action="decide" data-decision="merged" data-id="p1" data-fk="merge-p1">Merge<\/button>/);
  assert.match(proposal, /data-action="decide" data-decision="rejected" data-id="p1" data-fk="reject-p1">Reject<\/button>/);
});

test('a hostile title, commit or footprint on a card is escaped', () => {
  const evil = '<script>alert(1)</script>';
  const html = cardHtml({ ...judged, id: evil, title: evil, commit: evil, issue: evil, solution: evil, footprints: [evil] });
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /<span class="title">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/span>/);
});

test('the cards: newest first, each fix once, why some may be missing', () => {
  const rows = [{ fixes: [{ id: 'a', at: '2026-11-01T00:00:00Z' }], proposals: [] }, { fixes: [{ id: 'a' }], proposals: [{ id: 'b', at: '2026-11-02T00:00:00Z', status: 'proposed' }] }];
  const list = fixesOfRows(rows);
  assert.deepEqual(list.map((f) => f.id), ['a', 'b']);
  const html = cardsHtml(list, 'GET /ledger: <down>');
  assert.match(html, /Fixes come from the catalogue only \(GET \/ledger: &lt;down&gt;\)/);
  assert.ok(html.indexOf('data-card="b"') < html.indexOf('data-card="a"'), 'newest first');
  assert.deepEqual(list.map((f) => f.id), ['a', 'b'], 'the list handed in is not reordered');
});

test('sparklines of windows without a series say so', () => {
  assert.equal(sparkPair({}, {}, 'ms'), '<div class="spark-none">no p95 series in these windows</div>');
});
