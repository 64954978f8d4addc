// panel-charts.js — the panel's SVG, as strings: one metric's strip on the
// timeline's shared time axis, the axis itself with its build boundaries,
// and a fix card's before/after sparklines.  Pure (numbers in, markup
// out), so what a gap or a spike looks like is tested in node
// (panel-optimizations.test.mjs).
//
// Honesty rules (seed §8.5): a bucket without evidence is a gap (the path
// breaks there, and the gap is marked), never a zero; a value above
// 1.5 × p90 of its strip is drawn at the ceiling with a caret and read out
// at its real value; one series per strip.
import { esc, fmtNum, fmtTime } from './panel-format.js';
import { parseIso } from './fold.js';

// Nearest-rank percentile of the non-null values (p in 0..1), or null.
export function percentile(values, p) {
  const v = values.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return null;
  return v[Math.max(0, Math.ceil(p * v.length) - 1)];
}

/*
 * One metric as an SVG strip on the shared time axis.  `values[i]` is
 * bucket i's value or null (no evidence).  Runs of values are separate
 * subpaths (a gap breaks the line, and is shaded and marked data-gap); a
 * lone value between gaps is a dot; a value above the ceiling
 * (1.5 × p90 of the strip) is drawn at the ceiling with a caret that
 * carries its real value.  When the ceiling is not positive (a strip of
 * zeros), the strip is scaled to its maximum and nothing is clamped.
 */
export function stripSvg(values, { width, height, metric, boundaries = [], label = '' }) {
  const n = values.length;
  const present = values.filter((v) => v !== null && v !== undefined);
  const max = present.length ? Math.max(...present) : 0;
  const p90 = percentile(present, 0.9);
  let ceiling = p90 === null ? 0 : 1.5 * p90;
  if (!(ceiling > 0)) ceiling = max;
  const top = max > ceiling ? ceiling : max;
  const yMax = top > 0 ? top : 1;
  const padT = 10, padB = 4;
  const bw = width / Math.max(1, n);
  const x = (i) => (i + 0.5) * bw;
  const y = (v) => padT + (1 - Math.min(v, yMax) / yMax) * (height - padT - padB);
  const parts = [];
  let d = '', run = 0, runs = 0, spikes = 0, gaps = 0;
  const dots = [];
  const carets = [];
  const gapRects = [];
  const flush = (i) => {
    if (run === 1) dots.push(i - 1);
    run = 0;
  };
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      flush(i);
      gaps++;
      gapRects.push(`<rect class="gap" data-gap="${i}" x="${(i * bw).toFixed(1)}" y="0" width="${bw.toFixed(1)}" height="${height}"/>`);
      continue;
    }
    d += `${run === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    if (run === 0) runs++;
    run++;
    if (v > ceiling && ceiling > 0) {
      spikes++;
      const cx = x(i).toFixed(1);
      carets.push(`<path class="caret" data-spike="${i}" data-value="${v}" d="M${(x(i) - 4).toFixed(1)},9L${cx},2L${(x(i) + 4).toFixed(1)},9Z"><title>${esc(label)} ${esc(String(v))} (above the ceiling ${esc(fmtNum(ceiling))})</title></path>`);
    }
  }
  flush(n);
  parts.push(`<svg class="strip" role="img" aria-label="${esc(label)}" data-metric="${esc(metric)}" data-segments="${runs}" data-gaps="${gaps}" data-spikes="${spikes}" data-ceiling="${ceiling}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`);
  parts.push(gapRects.join(''));
  parts.push(`<line class="base" x1="0" x2="${width}" y1="${height - padB}" y2="${height - padB}"/>`);
  if (spikes) parts.push(`<line class="ceiling" x1="0" x2="${width}" y1="${padT}" y2="${padT}"/>`);
  for (const bx of boundaries) parts.push(`<line class="build" x1="${bx.toFixed(1)}" x2="${bx.toFixed(1)}" y1="0" y2="${height}"/>`);
  if (d) parts.push(`<path class="series" d="${d}"/>`);
  for (const i of dots) parts.push(`<circle class="dot" cx="${x(i).toFixed(1)}" cy="${y(values[i]).toFixed(1)}" r="2.2"/>`);
  parts.push(carets.join(''));
  parts.push(`<line class="cross" x1="0" x2="0" y1="0" y2="${height}" visibility="hidden"/>`);
  parts.push('</svg>');
  return { svg: parts.join(''), ceiling, yMax };
}

/*
 * The timeline's time axis, `width` wide, for a history document (from,
 * to, bucketMs, buckets, builds): the time at both ends, and a boundary
 * where each build's window begins (not the first), named where there is
 * room.  `boundaries` are their x, for the strips to draw too.
 */
export function axisSvg(doc, width) {
  const n = doc.buckets.length;
  const t0 = parseIso(doc.from);
  const span = (doc.bucketMs || 1) * n;
  const xOf = (t) => ((t - t0) / span) * width;
  const bounds = [];
  const windows = Array.isArray(doc.builds) ? doc.builds : [];
  windows.forEach((w, i) => {
    const t = parseIso(w.from);
    if (i > 0 && t !== null && t0 !== null) bounds.push({ x: xOf(t), build: w.build, at: w.from });
  });
  const ax = [];
  ax.push(`<svg width="${width}" height="30" viewBox="0 0 ${width} 30" data-axis>`);
  ax.push(`<text x="0" y="26">${esc(fmtTime(doc.from, { seconds: false }))}</text>`);
  ax.push(`<text x="${width}" y="26" text-anchor="end">${esc(fmtTime(doc.to, { seconds: false }))}</text>`);
  // a build's name where it begins, when there is room for it (every
  // boundary is drawn; the crosshair names the builds of any bucket)
  const room = (name) => name.length * 6.2 + 10;
  let free = -Infinity;
  const label = (x, name) => {
    if (x < free || x + room(name) > width + 2) return;
    ax.push(`<text class="build" x="${(x + 3).toFixed(1)}" y="11">${esc(name)}</text>`);
    free = x + room(name);
  };
  if (windows.length) label(-3, windows[0].build);
  for (const b of bounds) {
    ax.push(`<line class="build" x1="${b.x.toFixed(1)}" x2="${b.x.toFixed(1)}" y1="0" y2="30" data-build-boundary="${esc(b.build)}"><title>${esc(b.build)} from ${esc(fmtTime(b.at))}</title></line>`);
    label(b.x, b.build);
  }
  ax.push('</svg>');
  return { svg: ax.join(''), boundaries: bounds.map((b) => b.x) };
}

// A sparkline pair on one scale (before and after), gaps broken.
export function sparkPair(before, after, unit) {
  const a = (before && Array.isArray(before.series)) ? before.series : [];
  const b = (after && Array.isArray(after.series)) ? after.series : [];
  const all = a.concat(b).filter((v) => v !== null && v !== undefined);
  if (all.length === 0) return '<div class="spark-none">no p95 series in these windows</div>';
  const p90 = percentile(all, 0.9);
  let ceiling = 1.5 * p90;
  const max = Math.max(...all);
  if (!(ceiling > 0)) ceiling = max;
  const yMax = Math.max(max > ceiling ? ceiling : max, 1e-9);
  const one = (series, cls, label) => {
    const w = 120, h = 32, n = Math.max(1, series.length);
    let d = '', run = 0, runs = 0;
    const dots = [], carets = [];
    for (let i = 0; i < series.length; i++) {
      const v = series[i];
      if (v === null || v === undefined) {
        if (run === 1) dots.push(i - 1);
        run = 0;
        continue;
      }
      const px = ((i + 0.5) * w) / n, py = 4 + (1 - Math.min(v, yMax) / yMax) * (h - 6);
      d += `${run === 0 ? 'M' : 'L'}${px.toFixed(1)},${py.toFixed(1)}`;
      if (run === 0) runs++;
      run++;
      if (v > ceiling) carets.push(`<path class="caret" data-spike="${i}" data-value="${v}" d="M${(px - 3).toFixed(1)},6L${px.toFixed(1)},1L${(px + 3).toFixed(1)},6Z"><title>${esc(fmtNum(v, unit))}</title></path>`);
    }
    if (run === 1) dots.push(series.length - 1);
    const dotSvg = dots.map((i) => {
      const px = ((i + 0.5) * w) / n, py = 4 + (1 - Math.min(series[i], yMax) / yMax) * (h - 6);
      return `<circle class="dot" cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="1.8"/>`;
    }).join('');
    return `<figure class="spark ${cls}"><svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" data-segments="${runs}" role="img" aria-label="${esc(label)} p95 series">${d ? `<path class="series" d="${d}"/>` : ''}${dotSvg}${carets.join('')}</svg><figcaption>${esc(label)}</figcaption></figure>`;
  };
  return `<div class="sparks">${one(a, 'before', 'before')}${one(b, 'after', 'after')}</div>`;
}
