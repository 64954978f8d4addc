// panel-optimizations.js — the Optimizations tab: the timeline (one strip
// per metric on a shared time axis, a crosshair that reads one bucket
// out) and a card per fix or proposal with its before and after.  Pure:
// the history document (GET /history, or fold.js's fold of the tail)
// and the fixes in, HTML and text out; the SVG is panel-charts.js's, the
// DOM and the crosshair's moves are the panel's (panel.js).
//
// Every metric is lower-is-better and a delta is coloured by its
// direction only; a timing's delta only when the fix's verdict is past
// the noise.
import { deltaHtml, esc, fmtDuration, fmtNum, fmtTime, intervalText, judgementHtml, statusBadge, windowExposure } from './panel-format.js';
import { axisSvg, sparkPair, stripSvg } from './panel-charts.js';
import { parseIso } from './fold.js';

export const STRIPS = [
  { key: 'p95Ms', label: 'frame p95', unit: 'ms' },
  { key: 'medianMs', label: 'frame median', unit: 'ms' },
  { key: 'calls', label: 'draw calls', unit: 'calls' },
  { key: 'triangles', label: 'triangles', unit: 'tris' },
  { key: 'programs', label: 'programs', unit: 'programs' },
  { key: 'hitches', label: 'hitch count', unit: 'hitches' },
];
// a card's table: the strips' metrics, the worst hitch in place of the
// hitch count
const CARD_METRICS = [...STRIPS.filter((s) => s.key !== 'hitches'), { key: 'worstHitchMs', label: 'worst hitch', unit: 'ms' }];
const TIMING_METRICS = new Set(['p95Ms', 'medianMs', 'worstHitchMs']);

export const BUCKETS = 48;                 // at most, on the timeline
const MIN_HEARTBEATS = 5;           // per bucket, on average: less is noise, not a trend
const ROUND_WIDTHS = [10e3, 30e3, 60e3, 5 * 60e3, 15 * 60e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 86400e3, 7 * 86400e3];

/*
 * How many timeline buckets a ledger's evidence can fill: the smallest
 * round width (10 s, 30 s, 1 min, 5 min, … 1 week) that gives at most
 * BUCKETS buckets and, on average, MIN_HEARTBEATS heartbeats in each; so
 * a short session gets a few wide buckets, not 48 of 115 ms that are
 * mostly gaps.  The daemon (and fold.js) divide the ledger's span
 * into N equal buckets, so the width is about the round one, never more.
 * `one` is a history of one bucket: its span and heartbeat count.
 */
export function bucketsFor(one) {
  const b = one && Array.isArray(one.buckets) ? one.buckets[0] : null;
  const from = one ? parseIso(one.from) : null, to = one ? parseIso(one.to) : null;
  if (!b || from === null || to === null) return 1;
  const span = Math.max(0, to - from);
  const beats = typeof b.heartbeats === 'number' ? b.heartbeats : 0;
  for (const w of ROUND_WIDTHS) {
    const n = Math.max(1, Math.ceil(span / w));
    if (n > BUCKETS) continue;
    if (n === 1 || beats / n >= MIN_HEARTBEATS) return n;
  }
  return Math.max(1, Math.min(BUCKETS, Math.floor(beats / MIN_HEARTBEATS)));
}
// Every fix and proposal the catalogue's rows join to, once each.
export function fixesOfRows(rows) {
  const seen = new Map();
  for (const r of rows || []) for (const f of (r.fixes || []).concat(r.proposals || [])) if (!seen.has(f.id)) seen.set(f.id, f);
  return [...seen.values()];
}

// The strips' width from the tab's inner width (`inner`: 0 while the
// dialog is still hidden, then what its CSS will make it: min(1120px,
// 96vw), less borders, padding, scrollbar), less the label column.
export function timelineWidth(inner, viewportWidth) {
  const w = inner || Math.min(1120, 0.96 * (viewportWidth || 1200)) - 2 - 16;
  return Math.floor(Math.max(320, w - 32 - 150 - 8));
}

/*
 * The tab below its source line: the timeline of `doc` (a history
 * document), `width` wide, or the empty state when no bucket has
 * evidence; then the cards of `fixes` (null: none loaded), and why some
 * may be missing (`fixesError`).
 */
export function optimizationsHtml(doc, { width, fixes = null, fixesError = null }) {
  const buckets = Array.isArray(doc.buckets) ? doc.buckets : [];
  let html = '<h3 class="sr">Timeline</h3>';
  if (buckets.length === 0) {
    html += '<p class="empty">No record with a time in this view: nothing to draw.</p>';
  } else {
    html += timelineHtml(doc, width);
  }
  html += cardsHtml(fixes, fixesError);
  return html;
}

// The timeline of a history document with buckets, `width` wide: the
// axis, a strip per metric with its label, readout and scale, the hover
// line and the legend.
export function timelineHtml(doc, width) {
  const buckets = doc.buckets;
  const n = buckets.length;
  const axis = axisSvg(doc, width);
  let html = '<div class="timeline" data-timeline>';
  html += `<div class="axis"><span>${n} buckets of ${esc(fmtDuration(doc.bucketMs))}</span>${axis.svg}</div>`;
  html += `<div class="strips" tabindex="0" data-fk="strips" role="group" aria-label="Timeline strips: left and right arrows move the crosshair">`;
  for (const s of STRIPS) {
    const values = buckets.map((b) => (b[s.key] === undefined ? null : b[s.key]));
    const { svg, ceiling, yMax } = stripSvg(values, { width, height: 46, metric: s.key, boundaries: axis.boundaries, label: s.label });
    html += `<div class="striprow" data-strip="${s.key}">
        <div class="label"><span class="name">${esc(s.label)}</span><span class="readout" data-readout="${s.key}"></span><span class="scale">0 – ${esc(fmtNum(yMax, s.unit))}${ceiling < Math.max(...values.filter((v) => v !== null), -Infinity) ? ' (ceiling)' : ''}</span></div>
        ${svg}</div>`;
  }
  html += '</div>';
  html += '<div class="hover" data-hover>Point at the strips (or focus them and use ← →) for the values of one bucket.</div>';
  html += '<div class="legend"><span class="sw gap"></span>no evidence (a gap, not a zero)<span class="sw caret"></span>above 1.5 × p90: drawn at the ceiling, read out at its value<span class="sw build"></span>a new build</div>';
  html += '</div>';
  return html;
}

/*
 * One strip's readout at the crosshair's bucket `b`: the value (a gap
 * says so), the worst hitch beside the hitch count, a ▲ for a value
 * above the strip's ceiling.  Returns {text, gap, spike}.
 */
export function readout(b, s, ceiling) {
  const v = b[s.key];
  const gap = v === null || v === undefined;
  const spike = !gap && v > ceiling && ceiling > 0;
  let text = gap ? 'gap: no evidence' : fmtNum(v, s.unit === 'ms' ? 'ms' : '');
  if (s.key === 'hitches' && !gap) text += b.worstHitchMs !== null && b.worstHitchMs !== undefined ? ` (worst ${fmtNum(b.worstHitchMs, 'ms')})` : '';
  if (spike) text += ' ▲';
  return { text, gap, spike };
}

// The crosshair's bucket in one line: when, on how many heartbeats, which builds.
export function hoverText(b) {
  return `${fmtTime(b.from)} – ${fmtTime(b.to, { date: false })} · ${b.heartbeats} heartbeat${b.heartbeats === 1 ? '' : 's'} · builds ${(b.builds || []).join(', ') || '—'}`;
}

// The fixes' cards, newest first; `error` says why some may be missing.
export function cardsHtml(list, error = null) {
  let html = '<h3>Fixes</h3>';
  if (error) html += `<p class="occ">Fixes come from the catalogue only (${esc(error)}).</p>`;
  list = list ? list.slice() : [];
  if (list.length === 0) {
    return `${html}<p class="empty">No fix recorded yet. <code>sloptimize fix --footprints &lt;id&gt; --title "…"</code> records one: its before window is the build that ran, its after window is measured once a build after it has run; <code>sloptimize fix propose …</code> records a proposal you can merge or reject here.</p>`;
  }
  list.sort((a, b) => (parseIso(b.at) ?? -Infinity) - (parseIso(a.at) ?? -Infinity));
  html += '<div class="cards" data-cards>';
  for (const f of list) html += cardHtml(f);
  html += '</div>';
  return html;
}

// One fix's card: pending (waiting for a build after it), or its verdict,
// windows, sparklines and metric table; a proposal's Merge and Reject.
export function cardHtml(f) {
  const b = f.before && typeof f.before === 'object' ? f.before : null;
  const a = f.after && typeof f.after === 'object' ? f.after : null;
  const j = f.judgement && typeof f.judgement === 'object' ? f.judgement : null;
  // counters are exact: their deltas are facts; a timing's delta is
  // coloured only when the fix's verdict is past the noise (the p95's)
  const past = j && (j.verdict === 'improved' || j.verdict === 'regressed');
  const rows = CARD_METRICS.map((m) => {
    const bv = b ? b[m.key] : null, av = a ? a[m.key] : null;
    const trusted = !TIMING_METRICS.has(m.key) || (m.key === 'p95Ms' && past);
    return `<tr data-metric="${m.key}"><td>${esc(m.label)}</td><td class="num">${esc(fmtNum(bv, m.unit === 'ms' ? 'ms' : ''))}</td><td>→</td><td class="num">${esc(fmtNum(av, m.unit === 'ms' ? 'ms' : ''))}</td><td class="num">${deltaHtml(bv, av, m.unit === 'ms' ? 'ms' : '', trusted)}</td></tr>`;
  }).join('');
  const fps = Array.isArray(f.footprints) ? f.footprints : [];
  const proposed = f.status === 'proposed';
  if (f.pending === true) {
    return `<article class="card" data-card="${esc(f.id)}" data-status="${esc(f.status)}" data-pending>
      <div class="head"><span class="title">${esc(f.title || '(untitled)')}</span>${statusBadge('pending')}</div>
      <div class="meta">${esc(fmtTime(f.at))}${f.commit ? ` · commit <code>${esc(f.commit)}</code>` : ''} · <code>${esc(f.id)}</code>${fps.length ? ' · ' + fps.map((id) => `<button type="button" class="fp" data-action="goto-issue" data-id="${esc(id)}" data-fk="card-fp-${esc(f.id)}-${esc(id)}">${esc(id)}</button>`).join(' ') : ''}</div>
      <div class="was waiting" data-waiting>waiting for a build after this fix</div>
      <div class="meta">before ${esc(b ? b.build || `${fmtTime(b.from)}…` : '—')}${b ? ` · p95 ${esc(fmtNum(b.p95Ms, 'ms'))}${esc(intervalText(b.p95Interval))}${esc(windowExposure(b))}` : ''} · after: not measured yet — the build that ran when it was recorded is the old code</div>
    </article>`;
  }
  return `<article class="card" data-card="${esc(f.id)}" data-status="${esc(f.status)}">
      <div class="head"><span class="title">${esc(f.title || '(untitled)')}</span>${statusBadge(f.status)}</div>
      <div class="meta">${esc(fmtTime(f.at))}${f.commit ? ` · commit <code>${esc(f.commit)}</code>` : ''} · <code>${esc(f.id)}</code>${fps.length ? ' · ' + fps.map((id) => `<button type="button" class="fp" data-action="goto-issue" data-id="${esc(id)}" data-fk="card-fp-${esc(f.id)}-${esc(id)}">${esc(id)}</button>`).join(' ') : ''}</div>
      ${f.solution || f.issue ? `<div class="meta">${f.issue ? esc(f.issue) : ''}${f.issue && f.solution ? ' → ' : ''}${f.solution ? esc(f.solution) : ''}</div>` : ''}
      ${b || a ? `${judgementHtml(f)}
        <div class="meta">before ${esc(b ? b.build || `${fmtTime(b.from)}…` : '—')}${esc(windowExposure(b))} · after ${esc(a ? a.build || `${fmtTime(a.from)}…` : '—')}${esc(windowExposure(a))}</div>
        ${sparkPair(b, a, 'ms')}
        <table>${rows}</table>` : '<div class="spark-none">no measured windows: this fix was recorded without a ledger to measure</div>'}
      ${proposed ? `<div class="actions"><button type="button" class="primary" data-action="decide" data-decision="merged" data-id="${esc(f.id)}" data-fk="merge-${esc(f.id)}">Merge</button><button type="button" class="danger" data-action="decide" data-decision="rejected" data-id="${esc(f.id)}" data-fk="reject-${esc(f.id)}">Reject</button><span class="copied" data-decide-msg></span></div>` : ''}
    </article>`;
}
