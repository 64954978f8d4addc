// panel.js — the in-game debugger (DESIGN §12, seed §8.5): a Ctrl+F12 modal
// over any page with four tabs — Current Session, Issues, Optimizations,
// Settings — reading the daemon's HTTP API and its events socket.
//
//   import { createPanel } from 'http://127.0.0.1:7567/page-runtime/panel.js';
//   const panel = createPanel();          // Ctrl+F12 opens it, Esc closes it
//
// Everything lives in one shadow root (styles included), so the panel
// neither inherits a game's CSS nor leaks its own.  Plain DOM and SVG, no
// dependencies beyond history.js (the same fold as the daemon's, for the
// view folded in the page) and events.js (the events socket's messages).
// Nothing here throws at the host page: a daemon that cannot be reached is
// an error state in the tab, and the events socket reconnects by itself
// with a backoff.
//
// Two views of the catalogue and the timeline, and the panel always says
// which one it shows:
//   daemon — GET /issues and /history: the whole ledger, folded by the
//            daemon (the default);
//   tail   — GET /ledger: the last 2 MiB of perf.jsonl and all of
//            fixes.jsonl, folded here by history.js (what a host without
//            the daemon's catalogue can serve).
//
// Honesty rules (seed §8.5): a bucket without evidence is a gap (the path
// breaks there, and the gap is marked), never a zero; a value above
// 1.5 × p90 of its strip is drawn at the ceiling with a caret and read out
// at its real value; one series per strip; every metric is lower-is-better
// and a delta is coloured by its direction only.
import { parseEvent } from './events.js';
import { Fold, parseIso } from './history.js';

const API = '/api/sloptimize';
// Where the Issues tab's catalogue comes from (the Source switch).
const SOURCES = ['auto', 'daemon', 'tail', 'team'];
const TABS = [
  { id: 'session', label: 'Current Session' },
  { id: 'issues', label: 'Issues' },
  { id: 'optimizations', label: 'Optimizations' },
  { id: 'settings', label: 'Settings' },
];
const STRIPS = [
  { key: 'p95Ms', label: 'frame p95', unit: 'ms' },
  { key: 'medianMs', label: 'frame median', unit: 'ms' },
  { key: 'calls', label: 'draw calls', unit: 'calls' },
  { key: 'triangles', label: 'triangles', unit: 'tris' },
  { key: 'programs', label: 'programs', unit: 'programs' },
  { key: 'hitches', label: 'hitch count', unit: 'hitches' },
];
const CARD_METRICS = [
  { key: 'p95Ms', label: 'frame p95', unit: 'ms' },
  { key: 'medianMs', label: 'frame median', unit: 'ms' },
  { key: 'calls', label: 'draw calls', unit: 'calls' },
  { key: 'triangles', label: 'triangles', unit: 'tris' },
  { key: 'programs', label: 'programs', unit: 'programs' },
  { key: 'worstHitchMs', label: 'worst hitch', unit: 'ms' },
];
const LEVELS = [
  { id: 'off', label: 'Off', help: 'the daemon only records and wakes; nobody changes code on its own' },
  { id: 'propose', label: 'Propose', help: 'the agent may record proposals; you merge or reject them here' },
  { id: 'apply', label: 'Apply', help: 'the agent applies fixes itself and records them, with measured windows' },
];
const BUCKETS = 48;                 // at most, on the timeline
const MIN_HEARTBEATS = 5;           // per bucket, on average: less is noise, not a trend
const ROUND_WIDTHS = [10e3, 30e3, 60e3, 5 * 60e3, 15 * 60e3, 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 86400e3, 7 * 86400e3];

/*
 * How many timeline buckets a ledger's evidence can fill: the smallest
 * round width (10 s, 30 s, 1 min, 5 min, … 1 week) that gives at most
 * BUCKETS buckets and, on average, MIN_HEARTBEATS heartbeats in each; so
 * a short session gets a few wide buckets, not 48 of 115 ms that are
 * mostly gaps.  The daemon (and history.js) divide the ledger's span
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
const ROW_LIMIT = 200;
const SESSION_LIMIT = 500;
const FETCH_TIMEOUT_MS = 10000;
const SHOW_DELAY_MS = 150;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30000;
// A region re-rendered by what arrives on its own (the events socket, the
// timers) is re-rendered at most this often: in a 1 fps game every
// render is main-thread time the game does not get, and a button replaced
// between its press and its release is a click that never happens.
const RENDER_MIN_MS = 250;
// Pointer, mouse, touch and key events inside the open panel are the
// panel's: the game never sees them (a click on a tab threw a ball).
const GUARDED = ['pointerdown', 'pointerup', 'pointermove', 'pointercancel', 'mousedown', 'mouseup', 'mousemove',
  'click', 'dblclick', 'auxclick', 'contextmenu', 'wheel', 'touchstart', 'touchmove', 'touchend', 'touchcancel',
  'keydown', 'keyup', 'keypress'];
const VERDICT_WORDS = {
  improved: 'improved', regressed: 'regressed', 'no-detectable-change': 'no detectable change',
  'not-enough-evidence': 'not enough evidence yet', software: 'software renderer: timings are not evidence',
  incomparable: 'incomparable', pending: 'pending',
};
const TIMING_METRICS = new Set(['p95Ms', 'medianMs', 'worstHitchMs']);

// --- small helpers ----------------------------------------------------------

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ESC[c]);

function store(key, value) {
  try {
    if (value === undefined) return globalThis.localStorage?.getItem(`sloptimize.${key}`) ?? null;
    if (value === null) globalThis.localStorage?.removeItem(`sloptimize.${key}`);
    else globalThis.localStorage?.setItem(`sloptimize.${key}`, value);
  } catch { /* storage may be refused (sandboxed frames, privacy modes) */ }
  return null;
}

function sessionStore(key, value) {
  try {
    if (value === undefined) return globalThis.sessionStorage?.getItem(`sloptimize.${key}`) ?? null;
    globalThis.sessionStorage?.setItem(`sloptimize.${key}`, value);
  } catch { /* as above */ }
  return null;
}

// The daemon that served this module, else the page's origin.
function defaultEndpoint() {
  try {
    const u = new URL(import.meta.url);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
  } catch { /* not a URL: bundled some other way */ }
  if (globalThis.location && /^https?:$/.test(location.protocol)) return location.origin;
  return 'http://127.0.0.1:7567';
}

function normalizeEndpoint(e) {
  const s = String(e || '').trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/.test(s)) throw new Error(`an endpoint is http://host:port, not "${e}"`);
  return s;
}

// Numbers as the CLI prints them (cli/verbs.c, fmt_num): a whole number
// or one of 100000 and more without decimals, anything else with one —
// so the panel says 152.6 ms where the CLI says 152.6ms.  Large counts
// keep their k/M shorthand (the CLI has no column that small).
export function fmtNum(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  const a = Math.abs(v);
  let s;
  if (unit === 'ms' || unit === 'units') s = a >= 100000 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1);
  else if (a >= 1e6) s = `${(v / 1e6).toFixed(2)}M`;
  else if (a >= 1e4) s = `${(v / 1e3).toFixed(1)}k`;
  else s = Number.isInteger(v) ? String(v) : v.toFixed(1);
  return unit === 'ms' || unit === 'units' ? `${s} ${unit}` : s;
}

function fmtAgo(ms) {
  if (ms === null || ms === undefined) return 'never';
  const s = Math.max(0, ms / 1000);
  if (s < 45) return 'just now';
  if (s < 90 * 60) return `${Math.max(1, Math.round(s / 60))}m ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

function fmtTime(iso, { seconds = true, date = true } = {}) {
  const t = parseIso(iso);
  if (t === null) return '—';
  const d = new Date(t);
  const p = (n) => String(n).padStart(2, '0');
  const hm = `${p(d.getHours())}:${p(d.getMinutes())}${seconds ? `:${p(d.getSeconds())}` : ''}`;
  return date ? `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${hm}` : hm;
}

function fmtBytes(n) {
  if (n === null || n === undefined) return '?';
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

// A delta, coloured by its direction only: every metric is lower-is-better.
// A timing's delta that is not past the noise (`trusted` false: the fix's
// verdict is not improved or regressed) is never coloured: it is shown
// grey, as noise (data-direction="noise").
function deltaHtml(before, after, unit, trusted = true) {
  if (before === null || before === undefined || after === null || after === undefined) {
    return '<span class="delta none" data-direction="none">no evidence</span>';
  }
  const d = after - before;
  const dir = !trusted ? 'noise' : d < 0 ? 'better' : d > 0 ? 'worse' : 'same';
  const pct = before !== 0 ? ` (${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs((d / before) * 100).toFixed(0)}%)` : '';
  const mag = fmtNum(Math.abs(d), unit);
  return `<span class="delta ${dir}" data-direction="${dir}"${trusted ? '' : ' title="inside the noise, or not comparable: no change is claimed"'}>${d > 0 ? '+' : d < 0 ? '−' : '±'}${esc(mag)}${pct}</span>`;
}

// " [93.9–100.3]": a noise interval, in the unit of the value before it.
function intervalText(iv) {
  if (!iv || typeof iv.lo !== 'number' || typeof iv.hi !== 'number') return '';
  const n = (v) => fmtNum(v, 'ms').replace(/ ms$/, '');
  return ` [${n(iv.lo)}–${n(iv.hi)}]`;
}

// " (40 heartbeats, 120 s of play, hardware)": what a window's timing
// stands on.
function windowExposure(w) {
  if (!w) return '';
  const parts = [];
  if (typeof w.heartbeats === 'number') parts.push(`${w.heartbeats} heartbeats`);
  if (typeof w.playSeconds === 'number') parts.push(`${Math.round(w.playSeconds)} s of play`);
  if (typeof w.regime === 'string') parts.push(w.regime === 'software' ? 'software renderer' : w.regime);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/*
 * A fix's verdict on its windows (the fold's `judgement`, docs/json.md
 * "Fix verdicts"): was → now, each with its noise interval; a coloured
 * delta only when the verdict is past the noise; a software renderer's
 * or another regime's timings never side by side; then the verdict and
 * its reason.  A fold without judgements (an older daemon) is said so,
 * and nothing is claimed.
 */
function judgementHtml(f) {
  const j = f && f.judgement;
  if (!j || typeof j !== 'object') {
    return '<div class="verdict" data-verdict="none" data-was>no verdict: this daemon does not judge fixes on their noise yet</div>';
  }
  const b = f.before && typeof f.before === 'object' ? f.before : null;
  const a = f.after && typeof f.after === 'object' ? f.after : null;
  const past = j.verdict === 'improved' || j.verdict === 'regressed';
  let nums = '';
  if (j.verdict === 'software' || j.verdict === 'incomparable') {
    nums = `before p95 ${esc(fmtNum(j.was, 'ms'))} on ${esc(b && b.regime ? b.regime : '?')}, after p95 ${esc(fmtNum(j.now, 'ms'))} on ${esc(a && a.regime ? a.regime : '?')}: `;
  } else if (j.was !== null || j.now !== null) {
    nums = `was ${esc(fmtNum(j.was, 'ms'))}${esc(intervalText(j.wasInterval))} → now ${esc(fmtNum(j.now, 'ms'))}${esc(intervalText(j.nowInterval))} p95 `;
    if (past && typeof j.deltaMs === 'number') nums += `${deltaHtml(j.was, j.now, 'ms')} `;
  }
  return `<div class="verdict ${esc(j.verdict)}" data-verdict="${esc(j.verdict)}" data-was>${nums}<strong>${esc(VERDICT_WORDS[j.verdict] || j.verdict)}</strong> <span class="reason">— ${esc(j.reason || '')}</span></div>`;
}

function shellQuote(s) {
  return `"${String(s).replace(/(["\\$`])/g, '\\$1')}"`;
}

// Nearest-rank percentile of the non-null values (p in 0..1), or null.
function percentile(values, p) {
  const v = values.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return null;
  return v[Math.max(0, Math.ceil(p * v.length) - 1)];
}

function deepActiveElement() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

function situationChips(sit) {
  const keys = Object.keys(sit || {});
  if (keys.length === 0) return '<span class="chip dim">no situation</span>';
  return keys.map((k) => `<span class="chip" data-facet="${esc(k)}">${esc(k)}=${esc(sit[k])}</span>`).join('');
}

function statusBadge(status) {
  const s = status || 'open';
  return `<span class="badge ${esc(s)}" data-status="${esc(s)}">${esc(s)}</span>`;
}

// The ctx part of a footprint key, parsed back (for rows seen live only).
function situationOfKey(key) {
  const i = typeof key === 'string' ? key.lastIndexOf('|ctx:') : -1;
  const out = {};
  if (i < 0) return out;
  for (const piece of key.slice(i + 5).split(',')) {
    const eq = piece.indexOf('=');
    if (eq > 0) out[piece.slice(0, eq)] = piece.slice(eq + 1);
  }
  return out;
}

// --- SVG strips -------------------------------------------------------------

/*
 * One metric as an SVG strip on the shared time axis.  `values[i]` is
 * bucket i's value or null (no evidence).  Runs of values are separate
 * subpaths (a gap breaks the line, and is shaded and marked data-gap); a
 * lone value between gaps is a dot; a value above the ceiling
 * (1.5 × p90 of the strip) is drawn at the ceiling with a caret that
 * carries its real value.  When the ceiling is not positive (a strip of
 * zeros), the strip is scaled to its maximum and nothing is clamped.
 */
function stripSvg(values, { width, height, metric, boundaries = [], label = '' }) {
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

// A sparkline pair on one scale (before and after), gaps broken.
function sparkPair(before, after, unit) {
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

// --- styles -----------------------------------------------------------------

const CSS = `
:host { all: initial; }
* { box-sizing: border-box; }
.backdrop { position: fixed; inset: 0; z-index: 2147483647; background: rgba(5, 8, 12, 0.55);
  display: flex; align-items: center; justify-content: center;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #d8dee9; }
.backdrop[hidden] { display: none; }
.dialog { width: min(1120px, 96vw); height: min(860px, 94vh); display: flex; flex-direction: column;
  background: #12161c; border: 1px solid #3a4350; border-radius: 10px; overflow: hidden; }
.dialog:focus { outline: none; }
header { display: flex; align-items: center; gap: 12px; padding: 10px 14px; border-bottom: 1px solid #262d36; background: #161b22; }
header h1 { font-size: 14px; margin: 0; font-weight: 650; letter-spacing: .02em; color: #e6edf3; }
header .conn { font-size: 12px; color: #8b949e; }
header .conn[data-state="live"]::before { content: "● "; color: #3fb950; }
header .conn[data-state="connecting"]::before, header .conn[data-state="retry"]::before { content: "● "; color: #d29922; }
header .conn[data-state="offline"]::before { content: "● "; color: #f85149; }
header .endpoint { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; color: #8b949e; }
header .spacer { flex: 1; }
header .regime { font-size: 12px; color: #ffa657; border: 1px solid #9e6a03; border-radius: 10px; padding: 1px 8px; }
.verdict { font: 13px ui-monospace, monospace; margin: 6px 0; color: #e6edf3; }
.verdict .reason { font-family: system-ui, sans-serif; color: #8b949e; }
.verdict.software strong, .verdict.incomparable strong { color: #ffa657; }
.verdict.no-detectable-change strong, .verdict.not-enough-evidence strong { color: #c9d1d9; }
.delta.noise { color: #8b949e; }
button { font: inherit; color: inherit; background: #21262d; border: 1px solid #363d47; border-radius: 6px; padding: 4px 10px; cursor: pointer; }
button:hover { background: #2a313a; }
button:focus-visible, [tabindex]:focus-visible, input:focus-visible, textarea:focus-visible, select:focus-visible { outline: 2px solid #58a6ff; outline-offset: 1px; }
button[disabled] { opacity: .5; cursor: default; }
button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
button.danger { border-color: #6e2a2a; }
button.close { font-size: 16px; line-height: 1; padding: 3px 9px; }
[role="tablist"] { display: flex; gap: 2px; padding: 0 10px; border-bottom: 1px solid #262d36; background: #161b22; }
[role="tab"] { border: 0; border-bottom: 2px solid transparent; border-radius: 0; background: none; padding: 8px 12px; color: #8b949e; }
[role="tab"][aria-selected="true"] { color: #e6edf3; border-bottom-color: #f78166; }
[role="tab"] .count { margin-left: 6px; font-size: 11px; background: #30363d; border-radius: 8px; padding: 0 6px; color: #c9d1d9; }
[role="tabpanel"] { flex: 1; overflow: auto; padding: 12px 16px 20px; }
[role="tabpanel"][hidden] { display: none; }
[role="tabpanel"]:focus { outline: none; }
.source { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 10px; padding: 6px 10px; border: 1px solid #2d3540; border-radius: 6px; background: #161b22; font-size: 12px; color: #9da7b3; }
.source strong { color: #e6edf3; font-weight: 600; }
.source .switch { margin-left: auto; display: flex; gap: 4px; }
.source .switch button[aria-pressed="true"] { background: #1f6feb33; border-color: #1f6feb; color: #e6edf3; }
.error { border: 1px solid #6e2a2a; background: #2a1618; color: #ffb4ab; border-radius: 6px; padding: 10px 12px; margin: 8px 0; }
.error code { color: #ffd8d3; }
.loading { color: #8b949e; padding: 10px 0; }
.empty { color: #8b949e; padding: 14px 0; }
code, .mono { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
ul.rows { list-style: none; margin: 0; padding: 0; }
ul.rows > li { border-bottom: 1px solid #21262d; }
button.row { width: 100%; display: flex; gap: 8px; align-items: center;
  text-align: left; background: none; border: 0; border-radius: 0; padding: 7px 6px; }
button.row > span { flex: 0 0 auto; min-width: 0; white-space: nowrap; overflow: hidden; }
button.row > .n { flex-basis: 64px; }
button.row > .type { flex-basis: 82px; }
button.row > .guess { flex: 1.3 1 120px; }
button.row > .st { flex-basis: 86px; }
button.row > .ago { flex-basis: 92px; }
button.row > .chips { flex: 1.5 1 120px; }
button.row > .fp { flex-basis: 76px; }
button.row:hover { background: #1a2029; }
button.row[aria-expanded="true"] { background: #1a2029; }
.row .n { font: 600 13px ui-monospace, monospace; color: #e6edf3; }
button.row > .machines { flex-basis: 92px; color: #8b949e; font-size: 11px; }
.row .type { color: #9da7b3; }
.row .guess { color: #e6edf3; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row .ago { color: #9da7b3; font-size: 12px; }
.row .chips { overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.row .fp { font: 12px ui-monospace, monospace; color: #79c0ff; }
.chip { display: inline-block; font-size: 11px; padding: 0 6px; margin: 1px 3px 1px 0; border-radius: 9px; background: #1f2a37; color: #a5d6ff; border: 1px solid #2a3b50; }
.chip.dim { color: #6e7681; background: none; border-color: #30363d; }
.chip.build { background: #272033; color: #d2a8ff; border-color: #3d2f52; }
.badge { display: inline-block; font-size: 11px; padding: 0 7px; border-radius: 9px; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
.badge.open { background: #3b2e0a; color: #e3b341; }
.badge.fixed { background: #0f2d1a; color: #56d364; }
.badge.pending { background: #1f2a37; color: #a5d6ff; }
.waiting { color: #a5d6ff; }
.badge.regressed { background: #3d1214; color: #ff7b72; }
.badge.applied, .badge.merged { background: #0f2d1a; color: #56d364; }
.badge.proposed { background: #102a4c; color: #79c0ff; }
.badge.rejected { background: #2d2d2d; color: #8b949e; }
.detail { padding: 8px 12px 14px 70px; background: #161b22; border-top: 1px dashed #262d36; }
.detail dl { display: grid; grid-template-columns: 120px 1fr; gap: 4px 12px; margin: 0 0 8px; }
.detail dt { color: #8b949e; }
.detail dd { margin: 0; word-break: break-word; }
.detail h3, .cards h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: #8b949e; margin: 12px 0 6px; }
.cmd { display: flex; gap: 8px; align-items: center; background: #0d1117; border: 1px solid #30363d; border-radius: 6px; padding: 6px 8px; }
.cmd code { flex: 1; white-space: pre-wrap; word-break: break-all; color: #e6edf3; }
.fixline { padding: 4px 0; }
.occ { font-size: 12px; color: #9da7b3; }
.more { margin-top: 10px; }
.session-tools { display: grid; grid-template-columns: 1fr auto; gap: 10px; align-items: start; margin-bottom: 12px; }
.session-tools textarea { width: 100%; min-height: 56px; resize: vertical; background: #0d1117; color: #e6edf3; border: 1px solid #30363d; border-radius: 6px; padding: 6px 8px; font: 13px system-ui, sans-serif; }
.session-tools .actions { display: flex; flex-direction: column; gap: 6px; align-items: stretch; }
.session-tools .copied { font-size: 12px; color: #56d364; min-height: 16px; }
.session-tools .copied.fail { color: #ff7b72; }
ul.incidents { list-style: none; margin: 0; padding: 0; }
ul.incidents li { display: grid; grid-template-columns: 74px 70px 86px minmax(140px, 1fr) 84px 54px 86px; gap: 8px; align-items: center; padding: 6px 4px; border-bottom: 1px solid #21262d; }
ul.incidents li .evidence { grid-column: 4 / 8; color: #8b949e; font-size: 12px; }
ul.incidents li .time { font: 12px ui-monospace, monospace; color: #9da7b3; }
ul.incidents li.note { display: block; color: #d29922; font-size: 12px; }
q.note { color: #e3b341; font-style: italic; }
ul.incidents .woke { font-size: 11px; color: #f0883e; }
button.fp { font: 12px ui-monospace, monospace; color: #79c0ff; background: none; border: 0; padding: 0 2px; text-align: left; }
.timeline { position: relative; }
.axis { display: grid; grid-template-columns: 150px 1fr; font-size: 11px; color: #8b949e; }
.axis svg text { fill: #8b949e; font: 10px ui-monospace, monospace; }
.axis svg line { stroke: #30363d; }
.axis svg line.build { stroke: #8957e5; stroke-dasharray: 3 3; }
.axis svg text.build { fill: #d2a8ff; }
.strips { outline: none; }
.strips:focus-visible { outline: 2px solid #58a6ff; outline-offset: 2px; }
.striprow { display: grid; grid-template-columns: 150px 1fr; align-items: center; border-bottom: 1px solid #1c2128; }
.striprow .label { padding-right: 8px; }
.striprow .label .name { color: #c9d1d9; font-size: 12px; }
.striprow .label .readout { display: block; font: 12px ui-monospace, monospace; color: #e6edf3; min-height: 16px; }
.striprow .label .readout.gap { color: #6e7681; font-style: italic; }
.striprow .label .readout.spike { color: #f0883e; }
.striprow .label .scale { display: block; font-size: 10px; color: #6e7681; }
svg.strip { display: block; overflow: visible; }
svg.strip .gap { fill: #ffffff0a; }
.dim { color: #6e7681; }
svg.strip .base { stroke: #30363d; stroke-width: 1; }
svg.strip .ceiling { stroke: #f0883e55; stroke-dasharray: 2 3; }
svg.strip .build, .sparks .build { stroke: #8957e5; stroke-width: 1; stroke-dasharray: 3 3; }
svg.strip .series, .sparks .series { fill: none; stroke: #58a6ff; stroke-width: 1.6; stroke-linejoin: round; }
svg.strip .dot, .sparks .dot { fill: #58a6ff; }
svg.strip .caret, .sparks .caret { fill: #f0883e; }
svg.strip .cross { stroke: #e6edf3aa; stroke-width: 1; }
.hover { font: 12px ui-monospace, monospace; color: #c9d1d9; min-height: 18px; margin: 6px 0 4px 150px; }
.legend { font-size: 11px; color: #8b949e; margin: 6px 0 0 150px; }
.legend .sw { display: inline-block; width: 14px; height: 9px; vertical-align: middle; margin: 0 4px 0 10px; }
.legend .sw.gap { background: #ffffff12; border: 1px dashed #30363d; }
.legend .sw.caret { background: #f0883e; clip-path: polygon(50% 0, 100% 100%, 0 100%); }
.legend .sw.build { border-left: 2px dashed #8957e5; width: 2px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 12px; }
.card { border: 1px solid #2d3540; border-radius: 8px; padding: 10px 12px; background: #161b22; }
.card .head { display: flex; gap: 8px; align-items: baseline; justify-content: space-between; }
.card .title { font-weight: 600; color: #e6edf3; }
.card .meta { font-size: 12px; color: #8b949e; margin: 2px 0 6px; }
.card .was { font: 13px ui-monospace, monospace; margin: 6px 0; color: #e6edf3; }
.card table { width: 100%; border-collapse: collapse; font-size: 12px; }
.card td { padding: 1px 4px; white-space: nowrap; }
.card td:first-child { white-space: normal; color: #9da7b3; }
.card td.num { text-align: right; font-family: ui-monospace, monospace; }
.card .actions { display: flex; gap: 8px; margin-top: 8px; }
.delta.better { color: #56d364; }
.delta.worse { color: #ff7b72; }
.delta.same, .delta.none { color: #8b949e; }
.sparks { display: flex; gap: 12px; margin: 6px 0; }
.spark { margin: 0; }
.spark figcaption { font-size: 10px; color: #8b949e; }
.spark svg { background: #0d1117; border: 1px solid #21262d; border-radius: 4px; }
.spark-none { font-size: 12px; color: #6e7681; margin: 6px 0; }
.settings section { margin-bottom: 18px; }
.settings h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .05em; color: #8b949e; margin: 0 0 8px; }
.settings input[type="text"], .settings input[type="url"] { width: 340px; background: #0d1117; color: #e6edf3; border: 1px solid #30363d; border-radius: 6px; padding: 5px 8px; font: 13px ui-monospace, monospace; }
.settings label.level { display: flex; gap: 8px; align-items: baseline; padding: 4px 0; }
.settings .help { color: #8b949e; font-size: 12px; }
.settings .msg { font-size: 12px; margin-left: 8px; }
.settings .msg.ok { color: #56d364; }
.settings .msg.fail { color: #ff7b72; }
.settings dl { display: grid; grid-template-columns: 160px 1fr; gap: 3px 12px; margin: 0; font-size: 12px; }
.settings dt { color: #8b949e; }
.settings dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;

// --- the panel --------------------------------------------------------------

class Panel {
  constructor(opts = {}) {
    this.opts = opts;
    this.fetch = opts.fetch || globalThis.fetch?.bind(globalThis);
    this.WebSocket = opts.WebSocket || globalThis.WebSocket;
    let ep = opts.endpoint ?? store('endpoint') ?? defaultEndpoint();
    try {
      ep = normalizeEndpoint(ep);
    } catch {
      ep = defaultEndpoint();
    }
    this.endpoint = ep;
    this.source = SOURCES.includes(opts.source) ? opts.source : (store('source') || 'auto');
    this.tab = TABS.some((t) => t.id === opts.tab) ? opts.tab : (store('tab') || 'session');
    if (!TABS.some((t) => t.id === this.tab)) this.tab = 'session';
    // a fixed bucket count when the host asks for one; else sized by the evidence
    this.fixedBuckets = Number.isInteger(opts.buckets) && opts.buckets > 0;
    this.buckets = this.fixedBuckets ? opts.buckets : BUCKETS;
    this.isOpen = false;
    this.destroyed = false;
    // the page's recorder (recorder.js), for the Current Session tab: the
    // one given, else the one the page made (it registers itself)
    this.recorderOpt = opts.recorder || null;
    this.session = { items: [], byId: new Map(), started: Date.now(), note: sessionStore('note') || '', notes: [] };
    this.data = { issues: null, history: null, ledger: null, status: null, settings: null, fixes: null, detail: new Map() };
    this.errors = {};
    this.loading = {};
    this.expanded = new Set();
    this.showAll = false;
    this.cross = null;
    this.timings = { opens: [] };
    this.sock = { ws: null, state: 'connecting', retries: 0, timer: null, resume: null, lastError: null, hello: null };
    this.pending = {};
    this.lastRender = {};       // region → when it was last re-rendered by schedule()
    this.pressing = false;      // a pointer is down inside the panel
    this.deferred = new Map();  // element → html held back while pressing
    this.build();
    this.listen();
    this.connect();
    if (opts.open) this.open();
  }

  // --- DOM skeleton ---------------------------------------------------------

  build() {
    this.host = document.createElement('div');
    this.host.className = 'sloptimize-panel-host';
    this.host.setAttribute('data-sloptimize', 'panel');
    this.root = this.host.attachShadow({ mode: 'open' });
    const tabs = TABS.map((t) => `<button role="tab" type="button" id="tab-${t.id}" data-tab="${t.id}" aria-controls="panel-${t.id}" aria-selected="false" tabindex="-1">${esc(t.label)}<span class="count" data-count="${t.id}" hidden></span></button>`).join('');
    const panels = TABS.map((t) => `<section role="tabpanel" id="panel-${t.id}" aria-labelledby="tab-${t.id}" tabindex="0" hidden data-state="idle"></section>`).join('');
    this.root.innerHTML = `
      <div class="backdrop" hidden>
        <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="title" tabindex="-1">
          <header>
            <h1 id="title">sloptimize</h1>
            <span class="conn" data-conn data-state="connecting" role="status" aria-live="polite">connecting…</span>
            <span class="endpoint" data-endpoint></span>
            <span class="regime" data-regime hidden title="frame times from a software renderer (SwiftShader, llvmpipe) are not a GPU's: no fix is judged on them; counters are"></span>
            <span class="spacer"></span>
            <span class="conn" aria-hidden="true">Ctrl+F12 · Esc</span>
            <button class="close" type="button" data-action="close" aria-label="Close the panel (Esc)">×</button>
          </header>
          <div role="tablist" aria-label="sloptimize">${tabs}</div>
          ${panels}
        </div>
      </div>`;
    const sheet = typeof CSSStyleSheet === 'function' && 'adoptedStyleSheets' in this.root ? new CSSStyleSheet() : null;
    if (sheet && sheet.replaceSync) {
      sheet.replaceSync(CSS);
      this.root.adoptedStyleSheets = [sheet];
    } else {
      const st = document.createElement('style');
      st.textContent = CSS;
      this.root.prepend(st);
    }
    this.backdrop = this.root.querySelector('.backdrop');
    this.dialog = this.root.querySelector('.dialog');
    this.panels = Object.fromEntries(TABS.map((t) => [t.id, this.root.getElementById(`panel-${t.id}`)]));
    this.tabButtons = Object.fromEntries(TABS.map((t) => [t.id, this.root.getElementById(`tab-${t.id}`)]));
    this.root.querySelector('[data-endpoint]').textContent = this.endpoint;
    (this.opts.parent || document.body || document.documentElement).appendChild(this.host);
    this.selectTab(this.tab, { focus: false, load: false });
  }

  listen() {
    this.onKey = (e) => {
      if (this.destroyed) return;
      const f12 = e.key === 'F12' || e.code === 'F12';
      if (f12 && e.ctrlKey && !e.altKey && !e.metaKey && this.opts.hotkey !== false) {
        e.preventDefault();
        e.stopPropagation();
        if (e.repeat) return;
        this.toggle({ at: performance.now() });
        return;
      }
      if (this.isOpen && e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        this.close();
      }
    };
    window.addEventListener('keydown', this.onKey, true);
    // Keys typed in the panel are not the game's.
    this.stopKeys = (e) => {
      if (this.isOpen) e.stopPropagation();
    };
    for (const t of ['keydown', 'keyup', 'keypress']) this.host.addEventListener(t, this.stopKeys);
    this.onFocusIn = (e) => {
      if (this.isOpen && !this.host.contains(e.target) && e.target !== this.host) this.focusFirst();
    };
    document.addEventListener('focusin', this.onFocusIn, true);
    /*
     * The game never sees an event that happens in the panel.  A game
     * listens on window or document, often in the capture phase (a click
     * to throw, a mousedown to take the pointer): so the panel listens on
     * window in the capture phase, ahead of any game listener registered
     * after it (the Vite bootstrap makes the panel before the game's
     * modules run), handles its own events there (click, keydown,
     * pointermove: the panel has no listener of its own inside for these)
     * and stops them.  Their default actions (focus, typing, scrolling, a
     * radio's check) still happen: only propagation is stopped.
     */
    this.guard = (e) => {
      if (this.destroyed) return;
      const path = typeof e.composedPath === 'function' ? e.composedPath() : [];
      const inside = path.includes(this.host);
      if (e.type === 'pointerup' || e.type === 'mouseup' || e.type === 'pointercancel' || e.type === 'touchend' || e.type === 'touchcancel') {
        if (this.pressing) {
          this.pressing = false;
          // after this event's click has been dispatched
          setTimeout(() => this.flushDeferred(), 0);
        }
      }
      if (!inside) return;
      const target = path[0] || e.target;
      if (e.type === 'pointerdown' || e.type === 'mousedown' || e.type === 'touchstart') this.pressing = true;
      if (e.type === 'click') this.onClick(e, target);
      else if (e.type === 'pointermove') this.onPointerMove(e, target);
      else if (e.type === 'keydown') {
        this.onPanelKey(e, target);
      }
      e.stopImmediatePropagation();
    };
    for (const t of GUARDED) window.addEventListener(t, this.guard, { capture: true });
    // a pointer released outside the window ends the press too
    this.onBlur = () => {
      if (!this.pressing) return;
      this.pressing = false;
      this.flushDeferred();
    };
    window.addEventListener('blur', this.onBlur);
    // the panel needs the pointer: a pointer lock taken while it is open
    // (the game's own request) is given back at once
    this.onLockChange = () => {
      if (this.isOpen && document.pointerLockElement) this.releasePointer();
    };
    document.addEventListener('pointerlockchange', this.onLockChange);
    this.root.addEventListener('input', (e) => {
      if (e.target.matches('textarea[data-note]')) {
        this.session.note = e.target.value;
        sessionStore('note', this.session.note);
      }
    });
    this.onResize = () => {
      if (this.isOpen && this.tab === 'optimizations') this.schedule('optimizations', () => this.renderOptimizations());
    };
    window.addEventListener('resize', this.onResize);
  }

  focusables() {
    const sel = 'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';
    return [...this.dialog.querySelectorAll(sel)].filter((el) => el.getClientRects().length > 0 && !el.closest('[hidden]'));
  }

  focusFirst() {
    // preventScroll: nothing to scroll to, and no layout forced before the frame
    (this.tabButtons[this.tab] || this.dialog).focus({ preventScroll: true });
  }

  onPanelKey(e, t = e.target) {
    if (e.key === 'Tab') {
      // the focus stays inside the dialog while it is open
      const list = this.focusables();
      if (list.length === 0) return;
      const i = list.indexOf(this.root.activeElement);
      const next = e.shiftKey ? (i <= 0 ? list.length - 1 : i - 1) : (i < 0 || i === list.length - 1 ? 0 : i + 1);
      e.preventDefault();
      list[next].focus();
      return;
    }
    if (t.getAttribute && t.getAttribute('role') === 'tab') {
      const ids = TABS.map((x) => x.id);
      let k = ids.indexOf(t.dataset.tab);
      if (e.key === 'ArrowRight') k = (k + 1) % ids.length;
      else if (e.key === 'ArrowLeft') k = (k - 1 + ids.length) % ids.length;
      else if (e.key === 'Home') k = 0;
      else if (e.key === 'End') k = ids.length - 1;
      else return;
      e.preventDefault();
      for (const id of ids) this.tabButtons[id].tabIndex = id === ids[k] ? 0 : -1;
      this.tabButtons[ids[k]].focus();
      return;
    }
    if (t.classList && t.classList.contains('strips')) {
      const n = this.histDoc()?.buckets?.length || 0;
      if (!n) return;
      let i = this.cross ?? -1;
      if (e.key === 'ArrowRight') i = Math.min(n - 1, i + 1);
      else if (e.key === 'ArrowLeft') i = Math.max(0, i < 0 ? n - 1 : i - 1);
      else if (e.key === 'Home') i = 0;
      else if (e.key === 'End') i = n - 1;
      else return;
      e.preventDefault();
      this.setCross(i);
    }
  }

  onClick(e, target = e.target) {
    const el = target && typeof target.closest === 'function' ? target.closest('[data-action], [role="tab"]') : null;
    if (!el || !this.root.contains(el)) return;
    if (el.getAttribute('role') === 'tab') {
      this.selectTab(el.dataset.tab, { focus: true });
      return;
    }
    const a = el.dataset.action;
    const run = (p) => Promise.resolve(p).catch((err) => this.report(err));
    switch (a) {
      case 'close': this.close(); break;
      case 'toggle-row': run(this.toggleRow(el.dataset.id)); break;
      case 'goto-issue': run(this.gotoIssue(el.dataset.id)); break;
      case 'source': this.setSource(el.dataset.source); break;
      case 'retry': run(this.reload(this.tab)); break;
      case 'show-all': this.showAll = true; this.renderIssues(); break;
      case 'copy-session': run(this.copySession(el)); break;
      case 'copy-text': run(this.copyText(el.dataset.text, el)); break;
      case 'clear-session': this.clearSession(); break;
      case 'decide': run(this.decide(el.dataset.id, el.dataset.decision, el)); break;
      case 'set-endpoint': run(this.applyEndpoint()); break;
      case 'reset-endpoint': run(this.applyEndpoint(true)); break;
      case 'set-level': run(this.setLevel(el.dataset.level)); break;
      default: break;
    }
  }

  report(err) {
    // An exception in a handler is shown, never thrown at the host page.
    this.errors.ui = String(err && err.message ? err.message : err);
    try {
      console.warn('sloptimize panel:', err);
    } catch { /* no console */ }
  }

  // --- open, close, tabs ----------------------------------------------------

  // A tab that has nothing to show yet is fetched before the dialog is
  // shown, for up to SHOW_DELAY_MS: a daemon that answers quickly gets one
  // frame with the data in it, not a "loading" frame and then another
  // (both cost a full layout and raster of the dialog); a slow one gets
  // the loading state after that delay.
  // Give the pointer back to the page: a pointer-locked game (an FPS)
  // would otherwise keep it, and the panel could not be clicked.
  releasePointer() {
    try {
      if (document.pointerLockElement && typeof document.exitPointerLock === 'function') document.exitPointerLock();
    } catch { /* nothing to release */ }
  }

  open({ at = performance.now() } = {}) {
    if (this.destroyed || this.isOpen) return;
    this.isOpen = true;
    this.openedAt = at;
    this.releasePointer();
    this.updateRegime();
    this.prevFocus = deepActiveElement();
    this.host.setAttribute('data-open', '');
    const show = () => {
      clearTimeout(this.showTimer);
      if (!this.isOpen || !this.backdrop.hidden) return;
      this.backdrop.hidden = false;
      this.focusFirst();
      // strips drawn while hidden were sized from the CSS: check them
      if (this.tab === 'optimizations') this.schedule('optimizations', () => this.renderOptimizations());
    };
    const empty = (this.tab === 'issues' && !this.data.issues) || (this.tab === 'optimizations' && !this.data.history)
      || (this.tab === 'settings' && !this.data.status);
    if (empty) this.showTimer = setTimeout(show, SHOW_DELAY_MS);
    else show();
    // the recorder's state moves on its own: once a second while open
    clearInterval(this.recTimer);
    this.recTimer = setInterval(() => {
      if (this.isOpen && this.tab === 'session') this.schedule('session', () => this.renderSession());
    }, 1000);
    this.reload(this.tab).catch((err) => this.report(err)).finally(show);
  }

  close() {
    if (!this.isOpen) return;
    this.isOpen = false;
    clearTimeout(this.showTimer);
    clearInterval(this.recTimer);
    this.backdrop.hidden = true;
    this.host.removeAttribute('data-open');
    const p = this.prevFocus;
    this.prevFocus = null;
    if (p && p.isConnected && typeof p.focus === 'function') {
      try {
        p.focus();
      } catch { /* not focusable any more */ }
    }
  }

  toggle(o) {
    if (this.isOpen) this.close();
    else this.open(o);
  }

  /*
   * The header says when timings come from a software renderer (seed
   * §6.4): this page's own, as its recorder found it, else what the
   * timeline's last bucket with heartbeats ran on.
   */
  updateRegime() {
    const el = this.root.querySelector('[data-regime]');
    if (!el) return;
    let regime = null, where = '';
    const r = this.recorder();
    if (r) {
      try {
        regime = r.state().regime || null;
        where = 'this page';
      } catch { /* no state: the timeline may say */ }
    }
    const doc = this.histDoc();
    if (!regime && doc && Array.isArray(doc.buckets)) {
      for (let i = doc.buckets.length - 1; i >= 0 && !regime; i--) regime = doc.buckets[i].regime || null;
      where = 'the last heartbeats';
    }
    el.dataset.regime = regime || '';
    el.hidden = regime !== 'software';
    el.textContent = regime === 'software' ? `software renderer (${where}): timings not to be trusted` : '';
  }

  selectTab(id, { focus = false, load = true } = {}) {
    if (!TABS.some((t) => t.id === id)) return;
    this.tab = id;
    store('tab', id);
    for (const t of TABS) {
      const sel = t.id === id;
      this.tabButtons[t.id].setAttribute('aria-selected', String(sel));
      this.tabButtons[t.id].tabIndex = sel ? 0 : -1;
      this.panels[t.id].hidden = !sel;
    }
    if (focus) this.tabButtons[id].focus();
    if (load && this.isOpen) {
      this.render(id);
      this.reload(id).catch((err) => this.report(err));
    }
  }

  // Coalesce renders of one region into one per animation frame, and at
  // most one per RENDER_MIN_MS: what arrives faster is folded into the
  // next render (the data is read when it runs, not when it was asked).
  schedule(name, fn) {
    if (this.pending[name]) return;
    this.pending[name] = true;
    const go = () => {
      this.pending[name] = false;
      this.lastRender[name] = performance.now();
      if (!this.destroyed) fn();
    };
    const frame = () => {
      if (typeof requestAnimationFrame === 'function' && document.visibilityState !== 'hidden') requestAnimationFrame(go);
      else setTimeout(go, 0);
    };
    const wait = (this.lastRender[name] ?? -Infinity) + RENDER_MIN_MS - performance.now();
    if (wait > 0) setTimeout(frame, wait);
    else frame();
  }

  // The renders held back while a pointer was down in the panel.
  flushDeferred() {
    const held = [...this.deferred];
    this.deferred.clear();
    for (const [el, html] of held) if (el.isConnected) this.patch(el, html);
  }

  render(id) {
    if (id === 'session') this.renderSession();
    else if (id === 'issues') this.renderIssues();
    else if (id === 'optimizations') this.renderOptimizations();
    else if (id === 'settings') this.renderSettings();
  }

  // Re-render a region without losing the keyboard focus inside it.  While
  // a pointer is down in the panel nothing is replaced (the button under
  // it would be, and its click lost): the last html waits for the release.
  patch(el, html) {
    if (this.pressing) {
      this.deferred.set(el, html);
      return;
    }
    this.deferred.delete(el);
    const active = this.root.activeElement;
    const key = active && el.contains(active) ? active.getAttribute('data-fk') : null;
    el.innerHTML = html;
    if (key) {
      const again = el.querySelector(`[data-fk="${CSS_escape(key)}"]`);
      if (again) again.focus();
      else this.focusFirst();
    }
  }

  // Note how long it took from the hotkey to a tab on screen: the DOM is
  // in place, and the frame that shows it has been produced (a task queued
  // from the next animation frame runs after that frame's style, layout
  // and paint).
  rendered(tab, cached = false) {
    if (this.openedAt === undefined || this.openedAt === null) return;
    const at = this.openedAt;
    this.openedAt = null;
    const done = () => {
      const ms = performance.now() - at;
      const t = { tab, ms, view: this.view(), cached, ...(cached ? {} : this.phases || {}) };
      this.phases = null;
      this.timings.opens.push(t);
      this.timings.last = t;
      this.host.dispatchEvent(new CustomEvent('sloptimize:rendered', { detail: t }));
    };
    if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => setTimeout(done, 0));
    else done();
  }

  // --- HTTP -----------------------------------------------------------------

  url(path) {
    return this.endpoint + API + path;
  }

  // JSON over HTTP.  `known`: the ETag of what we hold; when the answer
  // carries the same one (the browser revalidated it: cache 'no-cache'
  // sends If-None-Match by itself, also cross-origin), the body is not
  // parsed again and {status: 304} comes back.
  async request(method, path, body, { known = null, timeout = FETCH_TIMEOUT_MS } = {}) {
    if (!this.fetch) throw new Error('this page has no fetch()');
    const ctl = typeof AbortController === 'function' ? new AbortController() : null;
    const timer = ctl ? setTimeout(() => ctl.abort(), timeout) : null;
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let r;
    try {
      r = await this.fetch(this.url(path), {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        signal: ctl ? ctl.signal : undefined, cache: method === 'GET' ? 'no-cache' : 'no-store', credentials: 'omit',
      });
    } catch (err) {
      const why = err && err.name === 'AbortError' ? `no answer in ${timeout / 1000} s` : (err && err.message) || String(err);
      const e = new Error(`cannot reach ${this.endpoint}: ${why}`);
      e.unreachable = true;
      throw e;
    } finally {
      if (timer) clearTimeout(timer);
    }
    const etag = r.headers.get('ETag');
    if (r.status === 304 || (known && r.ok && etag === known)) {
      if (ctl) ctl.abort(); // the body is what we have
      return { status: 304, etag };
    }
    let doc = null;
    const text = await r.text();
    try {
      doc = text ? JSON.parse(text) : null;
    } catch {
      doc = null;
    }
    if (!r.ok) {
      const msg = doc && doc.error ? `${doc.error.code}: ${doc.error.message}` : `${r.status} ${r.statusText}`;
      const e = new Error(`${method} ${API}${path}: ${msg}`);
      e.status = r.status;
      throw e;
    }
    if (doc === null) throw new Error(`${method} ${API}${path}: the answer is not JSON`);
    return { status: r.status, doc, etag };
  }

  // The view the catalogue and timeline come from now.  The team's
  // catalogue is the daemon's ClickHouse sink (docs/team.md); it has no
  // timeline of its own, so history stays this machine's, from the daemon.
  view() {
    if (this.source === 'daemon' || this.source === 'tail' || this.source === 'team') return this.source;
    return this.autoView || 'daemon';
  }

  async loadLedger({ force = false } = {}) {
    const cur = this.data.ledger;
    if (cur && !force && Date.now() - cur.at < 1000) return cur;
    const r = await this.request('GET', '/ledger', undefined, { known: cur ? cur.etag : null });
    if (r.status === 304 && cur) {
      cur.at = Date.now();
      return cur;
    }
    const doc = r.doc;
    const perf = doc && doc.perf && Array.isArray(doc.perf.records) ? doc.perf : { records: [] };
    const fixes = doc && doc.fixes && Array.isArray(doc.fixes.records) ? doc.fixes : { records: [] };
    const t0 = performance.now();
    const fold = new Fold();
    for (const rec of perf.records) fold.addRecord(rec);
    for (const rec of fixes.records) fold.addFix(rec);
    const foldMs = performance.now() - t0;
    this.data.ledger = { doc, perf, fixes, fold, etag: r.etag, at: Date.now(), foldMs };
    this.data.fixes = null;
    return this.data.ledger;
  }

  async loadIssues() {
    const want = this.view();
    if (want === 'team') {
      const r = await this.request('GET', '/issues?scope=team');
      this.data.issues = { view: 'team', doc: r.doc, at: Date.now() };
      return this.data.issues;
    }
    if (want === 'daemon') {
      try {
        const r = await this.request('GET', '/issues');
        this.data.issues = { view: 'daemon', doc: r.doc, at: Date.now() };
        await this.loadCensus();
        return this.data.issues;
      } catch (err) {
        if (this.source !== 'auto' || err.unreachable) throw err;
        this.autoView = 'tail'; // the host has no catalogue route: fold the tail here
      }
    }
    const led = await this.loadLedger({ force: true });
    this.data.issues = { view: 'tail', doc: led.fold.issues({ now: Date.now() }), at: Date.now(), ledger: led };
    return this.data.issues;
  }

  // The census `sloptimize attribute --static` last wrote, from the
  // daemon: which entity holds what, built where.  None yet is not an
  // error: the table says how to make one.
  async loadCensus() {
    try {
      const r = await this.request('GET', '/census');
      this.data.census = { doc: r.doc, error: null };
    } catch (err) {
      this.data.census = err.status === 404 ? { doc: null, error: null } : { doc: null, error: err.message || String(err) };
    }
  }

  censusHtml() {
    const c = this.data.census;
    if (!c) return '';
    if (c.error) return `<section class="census" data-census="error"><h3>Census</h3><p class="occ">${esc(c.error)}</p></section>`;
    if (!c.doc) {
      return '<section class="census" data-census="none"><h3>Census</h3><p class="occ">No census yet: <code>sloptimize attribute --static --scene S --launch</code> ' +
        'walks a named scene and says which entity holds what, and where in the source it was built.</p></section>';
    }
    const d = c.doc;
    const ents = Array.isArray(d.entities) ? d.entities.slice(0, 12) : [];
    const hints = Array.isArray(d.hints) ? d.hints.slice(0, 6) : [];
    let html = `<section class="census" data-census="${esc(d.scene || '')}"><h3>Census of scene ${esc(d.scene || '?')}</h3>`;
    html += `<p class="occ">${esc(fmtTime(d.at))} · ${esc(d.source === 'open-tab' ? 'the open tab' : 'a launched browser')}` +
      `${d.totals ? ` · ${esc(d.totals.meshes)} meshes, ${esc(d.totals.triangles)} triangles, ${esc(d.totals.calls)} draw calls` : ''}` +
      ` · entities by triangles${Number.isInteger(d.entitiesTotal) && d.entitiesTotal > ents.length ? ` (the first ${ents.length} of ${esc(d.entitiesTotal)})` : ''}</p>`;
    html += '<table class="census-table" data-census-table><thead><tr><th>entity</th><th>meshes</th><th>triangles</th><th>materials</th><th>built at</th></tr></thead><tbody>';
    for (const e of ents) {
      const site = e.site;
      html += `<tr data-entity="${esc(e.id)}"><td>${esc(e.id)}</td><td>${esc(e.meshes)}</td><td>${esc(e.triangles)}</td><td>${esc(e.materials)}</td>` +
        `<td>${esc(site && site !== 'unknown' ? site : 'unknown: name it with sloptimize.track()')}</td></tr>`;
    }
    html += '</tbody></table>';
    if (hints.length) html += `<ul class="occ" data-hints>${hints.map((h) => `<li><strong>${esc(h.kind)}</strong>${h.fix ? ` — ${esc(h.fix)}` : ''}</li>`).join('')}</ul>`;
    return `${html}</section>`;
  }

  async loadHistory() {
    if (this.view() === 'daemon' || this.view() === 'team') {
      try {
        let n = this.buckets;
        if (!this.fixedBuckets) {
          // one bucket first: the span and the number of heartbeats in it
          const one = await this.request('GET', '/history?buckets=1');
          n = bucketsFor(one.doc);
        }
        const [h, i] = await Promise.all([
          this.request('GET', `/history?buckets=${n}`),
          this.request('GET', '/issues'),
        ]);
        this.data.history = { view: 'daemon', doc: h.doc, at: Date.now() };
        this.data.issues = { view: 'daemon', doc: i.doc, at: Date.now() };
        // every fix and proposal the catalogue joins to a row, with the
        // daemon's fixBuild; fixes naming no row come from /ledger after
        this.data.fixes = { list: this.fixesOfRows(i.doc.issues), from: 'issues' };
        this.errors.fixes = null;
        return this.data.history;
      } catch (err) {
        if (this.source !== 'auto' || err.unreachable) throw err;
        this.autoView = 'tail';
      }
    }
    const led = await this.loadLedger();
    const n = this.fixedBuckets ? this.buckets : bucketsFor(led.fold.history({ buckets: 1, now: Date.now() }));
    this.data.history = { view: 'tail', doc: led.fold.history({ buckets: n, now: Date.now() }), at: Date.now(), ledger: led };
    this.data.fixes = { list: led.fold.allFixes(), from: 'ledger' };
    this.errors.fixes = null;
    return this.data.history;
  }

  fixesOfRows(rows) {
    const seen = new Map();
    for (const r of rows || []) for (const f of (r.fixes || []).concat(r.proposals || [])) if (!seen.has(f.id)) seen.set(f.id, f);
    return [...seen.values()];
  }

  // The fixes no catalogue row names (their footprints never occurred, or
  // are robots'), from fixes.jsonl: fetched after the tab is on screen.
  async completeFixes() {
    if (!this.data.fixes || this.data.fixes.from !== 'issues') return;
    try {
      const led = await this.loadLedger();
      const have = new Set(this.data.fixes.list.map((f) => f.id));
      const more = led.fold.allFixes().filter((f) => !have.has(f.id));
      this.data.fixes = { list: this.data.fixes.list.concat(more), from: 'issues+ledger' };
      if (more.length && this.isOpen && this.tab === 'optimizations') this.renderOptimizations();
    } catch (err) {
      this.errors.fixes = `fixes naming no footprint in the catalogue are not listed: ${err.message}`;
    }
  }

  async loadStatus() {
    const r = await this.request('GET', '/status');
    this.data.status = r.doc;
    return r.doc;
  }

  async loadSettings() {
    const r = await this.request('GET', '/settings');
    this.data.settings = r.doc;
    return r.doc;
  }

  // Fetch what a tab shows, then render it; errors become the tab's state.
  async reload(tab) {
    const run = async (key, fn) => {
      this.loading[key] = true;
      try {
        await fn();
        this.errors[key] = null;
      } catch (err) {
        this.errors[key] = err.message || String(err);
      } finally {
        this.loading[key] = false;
      }
    };
    if (tab === 'session') {
      this.renderSession();
      this.rendered('session');
    } else if (tab === 'issues') {
      // What we hold (kept current by the events socket) shows at once;
      // the fetch then settles it.
      const held = this.data.issues && this.data.issues.view === this.view();
      const t0 = performance.now();
      this.renderIssues();
      if (held) this.rendered('issues', true);
      const t1 = performance.now();
      await run('issues', () => this.loadIssues());
      const t2 = performance.now();
      this.renderIssues();
      this.phases = { loadMs: t2 - t1, renderMs: performance.now() - t2, beforeMs: t1 - t0 };
      this.rendered('issues');
    } else if (tab === 'optimizations') {
      const held = this.data.history && this.data.history.view === this.view();
      this.renderOptimizations();
      if (held) this.rendered('optimizations', true);
      await run('history', () => this.loadHistory());
      this.renderOptimizations();
      this.updateRegime();
      this.rendered('optimizations');
      this.completeFixes().catch((err) => this.report(err));
    } else if (tab === 'settings') {
      this.renderSettings();
      await Promise.all([run('status', () => this.loadStatus()), run('settings', () => this.loadSettings())]);
      this.renderSettings();
      this.rendered('settings');
    }
  }

  refresh() {
    return this.reload(this.tab);
  }

  setSource(s) {
    if (!SOURCES.includes(s)) return;
    this.source = s;
    this.autoView = null;
    store('source', s);
    this.data.issues = null;
    this.data.history = null;
    this.expanded.clear();
    this.data.detail.clear();
    this.reload(this.tab).catch((err) => this.report(err));
  }

  // --- the events socket ----------------------------------------------------

  connect() {
    if (this.destroyed) return;
    if (!this.WebSocket) {
      this.setConn('offline', 'this page has no WebSocket');
      return;
    }
    clearTimeout(this.sock.timer);
    const base = this.endpoint.replace(/^http/, 'ws') + API + '/events';
    const url = this.sock.resume ? `${base}?since=${encodeURIComponent(this.sock.resume)}` : base;
    let ws;
    try {
      ws = new this.WebSocket(url);
    } catch (err) {
      this.sock.lastError = err.message;
      this.retry();
      return;
    }
    this.sock.ws = ws;
    this.setConn('connecting', this.sock.retries ? 'reconnecting…' : 'connecting…');
    ws.onmessage = (ev) => {
      const m = parseEvent(ev.data);
      if (m) this.onEvent(m);
    };
    ws.onerror = () => {
      this.sock.lastError = 'the events socket failed';
    };
    ws.onclose = (ev) => {
      if (this.sock.ws !== ws) return;
      this.sock.ws = null;
      if (this.destroyed) return;
      if (ev && ev.reason) this.sock.lastError = ev.reason;
      if (this.sock.hello) {
        this.session.notes.push({ at: Date.now(), text: 'events socket closed; reconnecting (wakes in between are replayed, other incidents are in the ledger)' });
        this.sock.hello = null;
      }
      this.retry();
    };
  }

  retry() {
    const n = this.sock.retries++;
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** n);
    const wait = Math.round(base * (0.8 + Math.random() * 0.4));
    this.setConn(n > 2 ? 'offline' : 'retry', `${n > 2 ? 'offline' : 'reconnecting'} — retry in ${Math.ceil(wait / 1000)} s${this.sock.lastError ? ` (${this.sock.lastError})` : ''}`);
    this.sock.timer = setTimeout(() => this.connect(), wait);
  }

  setConn(state, text) {
    this.sock.state = state;
    const el = this.root.querySelector('[data-conn]');
    if (el) {
      el.dataset.state = state;
      el.textContent = text;
    }
  }

  onEvent(m) {
    if (!m || typeof m !== 'object') return;
    if (m.type === 'hello') {
      this.sock.hello = m;
      this.sock.retries = 0;
      this.sock.lastError = null;
      // resume after the last line folded before we came: what follows is live
      if (!this.sock.resume && typeof m.generation === 'number' && typeof m.cursor === 'number') {
        this.sock.resume = `${m.generation}:${m.cursor - 1}`;
      }
      this.setConn('live', m.ready === false ? 'live (daemon still folding the ledger)' : 'live');
      return;
    }
    if (m.type === 'dropped') {
      // the page read too slowly: the daemon fed it every wake in order,
      // but live records are not kept (the ledger has them)
      this.session.notes.push({ at: Date.now(), text: `this page missed ${m.count ?? 'some'} live records while it was catching up; every wake came through` });
      this.schedule('session', () => this.renderSession());
      return;
    }
    if (m.type === 'gap') {
      this.session.notes.push({ at: Date.now(), text: `wakes after ${m.after} cannot be replayed (${m.reason || 'the ledger was replaced'})` });
      if (typeof m.resume === 'string') this.sock.resume = m.resume;
      this.schedule('session', () => this.renderSession());
      return;
    }
    if (m.type !== 'record' && m.type !== 'wake') return;
    if (typeof m.id === 'string') this.sock.resume = m.id;
    if (!m.record) {
      // a summary line (held back, or caught up): no single record
      if (m.line) this.session.notes.push({ at: Date.now(), text: m.line });
      this.schedule('session', () => this.renderSession());
      return;
    }
    const rec = m.record;
    let item = m.id ? this.session.byId.get(m.id) : null;
    const fresh = !item;
    if (!item) {
      item = { id: m.id || null, rec, woke: false, line: null, arrived: Date.now() };
      if (item.id) this.session.byId.set(item.id, item);
      this.session.items.unshift(item);
      if (this.session.items.length > SESSION_LIMIT) {
        const old = this.session.items.pop();
        if (old.id) this.session.byId.delete(old.id);
      }
    } else {
      item.rec = { ...item.rec, ...rec };
    }
    if (m.type === 'wake') {
      item.woke = true;
      item.line = m.line || null;
    }
    if (fresh) this.liveIssue(rec);
    this.schedule('session', () => this.renderSession());
    this.updateCounts();
  }

  // A live incident moves the Issues counts at once; a fetch then settles
  // them with what the daemon (or the tail) says.
  liveIssue(rec) {
    const cur = this.data.issues;
    if (!cur || !cur.doc || !Array.isArray(cur.doc.issues) || !rec.fp) return;
    const rows = cur.doc.issues;
    let row = rows.find((r) => r.id === rec.fp);
    if (!row) {
      row = {
        id: rec.fp, key: rec.key || '', type: rec.type, phase: rec.phase || null, count: 0,
        first: rec.at, last: rec.at, lastAgoMs: 0, builds: rec.build ? [rec.build] : [],
        worst: rec.value === null || rec.value === undefined ? null : { value: rec.value, unit: rec.unit || 'ms', at: rec.at },
        verdict: null, situation: situationOfKey(rec.key), fixes: [], proposals: [], status: rec.status || 'open', live: true,
      };
      rows.push(row);
    }
    if (cur.view === 'daemon' && typeof rec.count === 'number') row.count = rec.count;
    else row.count += 1;
    if (rec.at && (!row.last || parseIso(rec.at) > parseIso(row.last))) row.last = rec.at;
    if (rec.status) row.status = rec.status;
    if (rec.build && !row.builds.includes(rec.build)) row.builds.push(rec.build);
    if (typeof rec.value === 'number' && (!row.worst || rec.value > row.worst.value)) {
      row.worst = { value: rec.value, unit: rec.unit || (row.worst && row.worst.unit) || 'ms', at: rec.at };
    }
    if (rec.guess) row.verdict = { guess: rec.guess, confidence: rec.confidence || null, evidence: rec.evidence || null };
    rows.sort((a, b) => (b.count - a.count) || ((parseIso(b.last) ?? -Infinity) - (parseIso(a.last) ?? -Infinity)) || (a.id < b.id ? -1 : 1));
    if (cur.doc.counts) cur.doc.counts.incidents = (cur.doc.counts.incidents || 0) + 1;
    this.data.detail.delete(rec.fp);
    this.updateCounts();
    if (this.isOpen && this.tab === 'issues') this.schedule('issues', () => this.renderIssues());
    // settle with a fetch, at most every 2 s
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      if (!this.isOpen || this.tab !== 'issues' || this.destroyed) return;
      this.loadIssues().then(() => this.schedule('issues', () => this.renderIssues())).catch(() => { /* keep the live numbers */ });
    }, 2000);
  }

  // The tab badges: the session's incidents and the catalogue's rows,
  // whichever tab is showing (a live incident changes both).
  updateCounts() {
    const el = this.root.querySelector('[data-count="session"]');
    if (el) {
      el.hidden = this.session.items.length === 0;
      el.textContent = String(this.session.items.length);
    }
    const c = this.root.querySelector('[data-count="issues"]');
    const rows = this.data.issues && this.data.issues.doc && Array.isArray(this.data.issues.doc.issues) ? this.data.issues.doc.issues : null;
    if (c && rows) {
      c.hidden = false;
      c.textContent = String(rows.length);
    }
  }

  // --- Current Session ------------------------------------------------------

  recorder() {
    const r = this.recorderOpt || globalThis[Symbol.for('sloptimize.recorder')];
    return r && typeof r.state === 'function' ? r : null;
  }

  // The recorder's own state, one line: is it recording, what went to the
  // daemon, what waits, what was lost, can the daemon be reached.
  recorderHtml() {
    const r = this.recorder();
    if (!r) return '<div class="source" data-recorder="none"><span>No recorder in this page: its stutters are not recorded here (docs/recorder.md).</span></div>';
    let st;
    try { st = r.state(); } catch (err) { return `<div class="source" data-recorder="error"><span>The recorder did not answer: ${esc(err.message)}</span></div>`; }
    const dropped = Object.entries(st.dropped || {}).filter(([, n]) => n > 0);
    const reach = st.reachable === null ? 'not tried yet' : st.reachable ? 'reachable' : `unreachable${st.lastError ? ` (${st.lastError})` : ''}, retrying`;
    return `<div class="source recorder" data-recorder="${st.recording ? 'recording' : 'stopped'}" data-reachable="${st.reachable}">
      <span><strong>Recorder</strong> ${st.recording ? 'recording' : 'stopped'} · frame ${esc(st.frames)}${st.medianMs !== null ? ` · median ${esc(fmtNum(st.medianMs, 'ms'))}` : ''}${st.phase ? ` · phase ${esc(st.phase)}` : ''}${st.build ? ` · build ${esc(st.build)}` : ''}</span>
      <span><span data-rec-sent>${esc(st.sent)} records sent</span> · <span data-rec-queued>${esc(st.queued)} queued</span>${st.held ? ` · ${esc(st.held)} held for their script` : ''} · <span data-rec-dropped>${dropped.length ? `dropped ${dropped.map(([k, n]) => `${esc(n)} ${esc(k)}`).join(', ')}` : 'none dropped'}</span>${st.refused ? ` · <span data-rec-refused>${esc(st.refused)} refused${st.lastRefusal ? ` (${esc(st.lastRefusal)})` : ''}</span>` : ''} · daemon <span data-rec-reach>${esc(reach)}</span></span>
    </div>`;
  }

  renderSession() {
    const el = this.panels.session;
    if (!el.querySelector('[data-note]')) {
      el.innerHTML = `
        <div class="session-tools">
          <label><span class="sr">Note for the agent</span>
            <textarea data-note data-fk="note" placeholder="What did it feel like? (goes with the footprints when you copy)"></textarea></label>
          <div class="actions">
            <button type="button" class="primary" data-action="copy-session" data-fk="copy">Copy for the agent</button>
            <button type="button" data-action="clear-session" data-fk="clear">Clear</button>
            <span class="copied" data-copied role="status" aria-live="polite"></span>
          </div>
        </div>
        <div data-session-list></div>`;
      el.querySelector('[data-note]').value = this.session.note;
    }
    const list = el.querySelector('[data-session-list]');
    const items = this.session.items;
    const since = fmtTime(new Date(this.session.started).toISOString(), { date: false });
    let html = this.recorderHtml();
    html += `<div class="source"><span>This tab's incidents since <strong>${esc(since)}</strong>, as the daemon folds them (events socket).</span><span>${items.length} incident${items.length === 1 ? '' : 's'} · ${new Set(items.map((i) => i.rec.fp).filter(Boolean)).size} footprints</span></div>`;
    const notes = this.session.notes.slice(-5);
    if (items.length === 0 && notes.length === 0) {
      html += `<p class="empty" data-empty>No incident since this page opened. Hitches, usermarks and jitter show up here as the game writes them${this.sock.state === 'live' ? '' : ' — the events socket is not connected yet'}.</p>`;
    }
    html += '<ul class="incidents" data-incidents>';
    for (const n of notes) html += `<li class="note">${esc(fmtTime(new Date(n.at).toISOString(), { date: false }))} ${esc(n.text)}</li>`;
    for (const it of items) {
      const r = it.rec;
      const v = r.guess ? `${esc(r.guess)}${r.confidence ? `<span class="dim">/${esc(r.confidence)}</span>` : ''}` : '<span class="dim">no verdict</span>';
      html += `<li data-incident="${esc(it.id || '')}" data-fp="${esc(r.fp || '')}">
        <span class="time">${esc(fmtTime(r.at, { date: false }))}</span>
        <span class="type">${esc(r.type || '?')}</span>
        <span class="mono">${esc(fmtNum(r.value, r.unit))}</span>
        <span class="guess">${v}</span>
        <button type="button" class="fp" data-action="goto-issue" data-id="${esc(r.fp || '')}" data-fk="fp-${esc(it.id || '')}" title="Open this footprint in Issues">${esc(r.fp || '—')}</button>
        <span class="mono" title="the footprint's count in the whole ledger">×${esc(r.count ?? '?')}</span>
        <span>${statusBadge(r.status)}${it.woke ? ' <span class="woke" title="this record woke the agent">wake</span>' : ''}</span>
        <span class="evidence">${r.note ? `<q class="note" data-note-text>${esc(r.note)}</q> · ` : ''}${esc(r.evidence || '')}${r.phase ? ` · phase ${esc(r.phase)}` : ''}${r.build ? ` · build ${esc(r.build)}` : ''}</span>
      </li>`;
    }
    html += '</ul>';
    this.patch(list, html);
    this.updateCounts();
    this.updateRegime();
    el.dataset.state = 'ready';
  }

  // The session as one text block for a coding agent.
  sessionText() {
    const items = this.session.items.slice().reverse();
    const byFp = new Map();
    for (const it of items) {
      const r = it.rec;
      if (!r.fp) continue;
      const e = byFp.get(r.fp) || { n: 0, rec: r };
      e.n++;
      e.rec = r;
      byFp.set(r.fp, e);
    }
    const lines = [];
    lines.push(`sloptimize session: ${items.length} incident${items.length === 1 ? '' : 's'}, ${byFp.size} footprint${byFp.size === 1 ? '' : 's'}, since ${new Date(this.session.started).toISOString()} (daemon ${this.endpoint})`);
    lines.push(`note: ${this.session.note.trim() ? this.session.note.trim().replace(/\n/g, '\n  ') : '(none)'}`);
    lines.push('footprints (this session, most frequent first):');
    for (const [fp, e] of [...byFp].sort((a, b) => b[1].n - a[1].n)) {
      const r = e.rec;
      lines.push(`  ${fp} ×${e.n} here, ×${r.count ?? '?'} in the ledger, status=${r.status || '?'}, verdict ${r.guess || '-'}/${r.confidence || '-'}${r.evidence ? ` "${r.evidence}"` : ''}`);
      if (r.key) lines.push(`    key ${r.key}`);
    }
    lines.push('incidents (oldest first):');
    for (const it of items) {
      const r = it.rec;
      lines.push(`  ${r.at || '?'} ${r.type || '?'} ${fmtNum(r.value, r.unit)} ${r.guess || '-'}/${r.confidence || '-'} fp=${r.fp || '-'}${r.phase ? ` phase=${r.phase}` : ''}${r.build ? ` build=${r.build}` : ''}${it.id ? ` id=${it.id}` : ''}${r.note ? ` note=${JSON.stringify(r.note)}` : ''}`);
    }
    lines.push('details: sloptimize issues --fp <id>; record a fix: sloptimize fix --footprints <id> --title "…"');
    return lines.join('\n');
  }

  async copySession(btn) {
    await this.copyText(this.sessionText(), btn, this.panels.session.querySelector('[data-copied]'));
  }

  async copyText(text, btn, status = null) {
    const out = status || btn.parentElement.querySelector('[data-copied]') || null;
    let ok = false;
    try {
      if (navigator.clipboard && navigator.clipboard.writeText) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch { /* try the old way */ }
    if (!ok) {
      const ta = document.createElement('textarea');
      ta.value = text;
      ta.setAttribute('readonly', '');
      ta.className = 'sr';
      this.dialog.appendChild(ta);
      ta.select();
      try {
        ok = document.execCommand('copy');
      } catch {
        ok = false;
      }
      ta.remove();
      btn.focus();
    }
    this.lastCopied = text;
    if (out) {
      out.classList.toggle('fail', !ok);
      out.textContent = ok ? `copied ${text.split('\n').length} lines` : 'the browser refused the clipboard: select and copy by hand';
    }
    return ok;
  }

  clearSession() {
    this.session.items = [];
    this.session.byId.clear();
    this.session.notes = [];
    this.session.started = Date.now();
    this.renderSession();
  }

  // --- Issues ---------------------------------------------------------------

  sourceLine(cur, route = '/issues') {
    const s = this.source;
    const sw = `<span class="switch" role="group" aria-label="Which catalogue">
      <button type="button" data-action="source" data-source="daemon" data-fk="src-daemon" aria-pressed="${cur && cur.view === 'daemon'}">Whole ledger · daemon</button>
      <button type="button" data-action="source" data-source="tail" data-fk="src-tail" aria-pressed="${cur && cur.view === 'tail'}">Last 2 MiB · folded here</button>
      <button type="button" data-action="source" data-source="team" data-fk="src-team" aria-pressed="${cur && cur.view === 'team'}" title="every machine's records, from the daemon's ClickHouse sink (sloptimized --sink)">Team · every machine</button>
      ${s !== 'auto' ? '<button type="button" data-action="source" data-source="auto" data-fk="src-auto">auto</button>' : ''}</span>`;
    if (!cur) return `<div class="source" data-view="none"><span>Nothing loaded from the daemon yet.</span>${sw}</div>`;
    if (cur.view === 'team') {
      return `<div class="source" data-view="team"><span>Showing <strong>the team's catalogue</strong>: every machine that sinks into this daemon's ClickHouse, deduplicated there (<code>GET ${API}/issues?scope=team</code>).</span>${sw}</div>`;
    }
    if (cur.view === 'daemon') {
      return `<div class="source" data-view="daemon"><span>Showing <strong>the whole ledger</strong>, folded by the daemon (<code>GET ${API}${esc(route)}</code>).</span>${sw}</div>`;
    }
    const led = cur.ledger || this.data.ledger;
    const p = led ? led.perf : {};
    const skipped = led && led.doc ? (Array.isArray(led.doc.skipped) ? led.doc.skipped.length : led.doc.skipped) : null;
    const span = p.truncated
      ? `the last <strong>${esc(fmtBytes((p.size ?? 0) - (p.from ?? 0)))}</strong> of ${esc(fmtBytes(p.size))} (from byte ${esc(p.from)})`
      : `<strong>all ${esc(fmtBytes(p.size))}</strong>`;
    return `<div class="source" data-view="tail"><span>Showing ${span} of perf.jsonl — ${esc((p.records || []).length)} records, folded in this page${led && led.foldMs !== undefined ? ` in ${led.foldMs.toFixed(1)} ms` : ''} (<code>GET ${API}/ledger</code>)${skipped ? `; the daemon skipped ${esc(skipped)} line(s)` : ''}. Older records are not counted here.</span>${sw}</div>`;
  }

  errorHtml(msg) {
    return `<div class="error" role="alert" data-error>${esc(msg)}<br>Is <code>sloptimized</code> running for this game? Start it with <code>sloptimized --project &lt;game folder&gt;</code>, or set the endpoint in Settings. <button type="button" data-action="retry" data-fk="retry">Retry</button></div>`;
  }

  renderIssues() {
    const el = this.panels.issues;
    const cur = this.data.issues;
    let html = this.sourceLine(cur);
    if (this.errors.issues) html += this.errorHtml(this.errors.issues);
    if (!cur) {
      this.issuesSig = null;
      if (!this.errors.issues) html += '<p class="loading">Loading the catalogue…</p>';
      this.patch(el, html);
      el.dataset.state = this.errors.issues ? 'error' : 'loading';
      return;
    }
    const doc = cur.doc || {};
    const rows = Array.isArray(doc.issues) ? doc.issues : [];
    // the same rows as on screen: only the "ago" texts move
    const sig = JSON.stringify([cur.view, this.showAll, [...this.expanded], [...this.data.detail.keys()], this.errors.issues || null,
      this.data.census ? [this.data.census.doc && this.data.census.doc.at, this.data.census.error] : null,
      rows.map((r) => [r.id, r.count, r.status, r.last, r.first, r.verdict, r.worst, r.builds.length, r.fixes.length, r.proposals.length])]);
    if (sig === this.issuesSig && el.querySelector('[data-rows]')) {
      const now = Date.now();
      for (const a of el.querySelectorAll('[data-ago]')) {
        const last = parseIso(a.getAttribute('title'));
        a.textContent = `last ${last === null ? 'never' : fmtAgo(now - last)}`;
      }
      el.dataset.state = 'ready';
      return;
    }
    this.issuesSig = sig;
    const incidents = rows.reduce((n, r) => n + (r.count || 0), 0);
    html += `<p class="occ" data-summary>${rows.length} footprint${rows.length === 1 ? '' : 's'}, ${incidents} incident${incidents === 1 ? '' : 's'}; most frequent first. Select a row for its history.</p>`;
    if (rows.length === 0) html += '<p class="empty">No incident in this view yet.</p>';
    const now = Date.now();
    const shown = this.showAll ? rows : rows.slice(0, ROW_LIMIT);
    html += '<ul class="rows" data-rows>';
    for (const r of shown) {
      const open = this.expanded.has(r.id);
      const last = parseIso(r.last);
      html += `<li data-row="${esc(r.id)}" data-count="${esc(r.count)}" data-status="${esc(r.status)}">
        <button type="button" class="row" data-action="toggle-row" data-id="${esc(r.id)}" data-fk="row-${esc(r.id)}" aria-expanded="${open}" aria-controls="detail-${esc(r.id)}">
          <span class="n" data-n>×${esc(r.count)}</span>${Number.isInteger(r.machines) ? `<span class="machines" data-machines="${esc(r.machines)}" title="machines that saw it">on ${esc(r.machines)} machine${r.machines === 1 ? '' : 's'}</span>` : ''}
          <span class="type">${esc(r.type)}</span>
          <span class="guess" title="${esc(r.key)}">${esc(r.verdict && r.verdict.guess ? r.verdict.guess : '—')}${r.phase ? ` <span class="type">in ${esc(r.phase)}</span>` : ''}</span>
          <span class="st">${statusBadge(r.status)}</span>
          <span class="ago" data-ago title="${esc(r.last || '')}">last ${esc(last === null ? 'never' : fmtAgo(now - last))}</span>
          <span class="chips">${situationChips(r.situation)}</span>
          <span class="fp">${esc(r.id)}</span>
        </button>
        ${open ? `<div class="detail" id="detail-${esc(r.id)}" data-detail="${esc(r.id)}">${this.detailHtml(r)}</div>` : ''}
      </li>`;
    }
    html += '</ul>';
    if (shown.length < rows.length) html += `<button type="button" class="more" data-action="show-all" data-fk="show-all">Show all ${rows.length} footprints (${rows.length - shown.length} more)</button>`;
    if (cur.view === 'daemon') html += this.censusHtml();
    this.patch(el, html);
    el.dataset.state = 'ready';
    el.dataset.view = cur.view;
    const c = this.root.querySelector('[data-count="issues"]');
    if (c) {
      c.hidden = false;
      c.textContent = String(rows.length);
    }
  }

  detailHtml(r) {
    const fixCmd = `sloptimize fix --footprints ${r.id} --title ${shellQuote(`fix ${r.verdict && r.verdict.guess ? r.verdict.guess : r.type} ${r.type}${r.phase ? ` in ${r.phase}` : ''}`)}`;
    const worst = r.worst ? `${fmtNum(r.worst.value, r.worst.unit)} at ${fmtTime(r.worst.at)}` : '—';
    const v = r.verdict;
    let html = `<dl>
      <dt>key</dt><dd><code>${esc(r.key)}</code></dd>
      <dt>footprint</dt><dd><code>${esc(r.id)}</code> · ${esc(r.type)}${r.phase ? ` · phase ${esc(r.phase)}` : ''}</dd>
      <dt>count</dt><dd data-detail-count>×${esc(r.count)}${Number.isInteger(r.machines) ? ` on ${esc(r.machines)} machine${r.machines === 1 ? '' : 's'}` : ''}</dd>
      <dt>first seen</dt><dd>${esc(fmtTime(r.first))}</dd>
      <dt>last seen</dt><dd>${esc(fmtTime(r.last))}</dd>
      <dt>builds</dt><dd>${(r.builds || []).map((b) => `<span class="chip build">${esc(b)}</span>`).join('') || '—'}</dd>
      <dt>worst</dt><dd>${esc(worst)}</dd>
      <dt>last verdict</dt><dd>${v ? `<strong>${esc(v.guess || '—')}</strong> (${esc(v.confidence || '?')})${v.evidence ? ` — ${esc(v.evidence)}` : ''}` : 'no classification'}</dd>
      <dt>situation</dt><dd>${situationChips(r.situation)}</dd>
    </dl>`;
    const fixes = r.fixes || [];
    const props = r.proposals || [];
    if (fixes.length) {
      html += '<h3>Fixes applied</h3>';
      for (const f of fixes) html += this.fixLineHtml(f);
    } else {
      html += `<h3>No fix yet</h3><p class="occ">When it is fixed, this records it, with the build that ran before the change as its before window; it stays pending until a build after it has run, which the fold then measures as after:</p>
        <div class="cmd"><code data-fix-command>${esc(fixCmd)}</code><button type="button" data-action="copy-text" data-text="${esc(fixCmd)}" data-fk="copy-cmd-${esc(r.id)}">Copy</button><span class="copied" data-copied></span></div>`;
    }
    if (props.length) {
      html += '<h3>Proposals</h3>';
      for (const f of props) html += this.fixLineHtml(f);
    }
    const det = this.data.detail.get(r.id);
    if (det && det.occurrences && det.occurrences.length) {
      const occ = det.occurrences.slice(-8).reverse();
      html += `<h3>Last occurrences (${det.occurrences.length})</h3><ul class="occ">${occ.map((o) => `<li>${esc(fmtTime(o.at))} · ${esc(o.build || 'no build')} · ${esc(fmtNum(o.value, r.worst ? r.worst.unit : 'ms'))}${o.verdict && o.verdict.guess ? ` · ${esc(o.verdict.guess)}` : ''}${o.note ? ` · <q class="note" data-note-text>${esc(o.note)}</q>` : ''}${Array.isArray(o.entities) && o.entities.length ? ` · <span class="entities" data-entities>${esc(o.entities.join(', '))}</span>` : ''}</li>`).join('')}</ul>`;
    }
    return html;
  }

  fixLineHtml(f) {
    const b = f.before && typeof f.before === 'object' ? f.before : null;
    const a = f.after && typeof f.after === 'object' ? f.after : null;
    const waiting = f.pending === true;
    const was = waiting ? `<span class="waiting" data-waiting>waiting for a build after this fix</span>${b ? ` · before: p95 ${esc(fmtNum(b.p95Ms, 'ms'))}${esc(intervalText(b.p95Interval))} on ${esc(b.build || fmtTime(b.from))}` : ''}`
      : b || a ? judgementHtml(f) : '<span class="dim">no measured windows</span>';
    return `<div class="fixline" data-fix="${esc(f.id)}">${statusBadge(f.status)} <strong>${esc(f.title || f.id)}</strong> · ${esc(fmtTime(f.at))}${f.commit ? ` · <code>${esc(f.commit)}</code>` : ''}${f.fixBuild && !waiting ? ` · judged on ${esc(f.fixBuild)}` : ''}<br>${was}</div>`;
  }

  async toggleRow(id) {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
    this.renderIssues();
    if (!this.expanded.has(id) || this.data.detail.has(id)) return;
    const cur = this.data.issues;
    if (cur && cur.view === 'daemon') {
      try {
        const r = await this.request('GET', `/issues/${encodeURIComponent(id)}`);
        this.data.detail.set(id, r.doc);
      } catch {
        this.data.detail.set(id, { occurrences: [] });
      }
    } else if (cur && cur.view === 'tail' && cur.ledger) {
      const f = new Fold({ occurrencesOf: id });
      for (const rec of cur.ledger.perf.records) f.addRecord(rec);
      this.data.detail.set(id, { occurrences: f.occurrences });
    }
    if (this.tab === 'issues') this.renderIssues();
  }

  async gotoIssue(id) {
    if (!id) return;
    this.expanded.add(id);
    this.selectTab('issues', { focus: false, load: false });
    this.renderIssues();
    await this.reload('issues');
    if (!this.data.detail.has(id)) {
      this.expanded.delete(id);
      await this.toggleRow(id);
    }
    const b = this.root.querySelector(`[data-fk="row-${CSS_escape(id)}"]`);
    if (b) {
      b.focus();
      b.scrollIntoView({ block: 'nearest' });
    } else this.tabButtons.issues.focus();
  }

  // --- Optimizations --------------------------------------------------------

  histDoc() {
    return this.data.history ? this.data.history.doc : null;
  }

  renderOptimizations() {
    const el = this.panels.optimizations;
    const cur = this.data.history;
    let html = this.sourceLine(cur, cur && cur.view === 'daemon' ? `/history?buckets=${cur.doc && Array.isArray(cur.doc.buckets) ? cur.doc.buckets.length : this.buckets}` : '/history');
    if (this.errors.history) html += this.errorHtml(this.errors.history);
    if (!cur) {
      this.historySig = null;
      if (!this.errors.history) html += '<p class="loading">Loading the timeline…</p>';
      this.patch(el, html);
      el.dataset.state = this.errors.history ? 'error' : 'loading';
      return;
    }
    const doc = cur.doc || {};
    const buckets = Array.isArray(doc.buckets) ? doc.buckets : [];
    const sig = JSON.stringify([cur.view, this.errors.history || null, this.panels.optimizations.clientWidth, doc.from, doc.to, doc.buckets, doc.builds,
      this.data.fixes ? this.data.fixes.list : null, this.errors.fixes || null]);
    if (sig === this.historySig && el.querySelector('.cards, [data-timeline]')) {
      el.dataset.state = 'ready';
      return;
    }
    this.historySig = sig;
    html += '<h3 class="sr">Timeline</h3>';
    if (buckets.length === 0) {
      html += '<p class="empty">No record with a time in this view: nothing to draw.</p>';
    } else {
      html += this.timelineHtml(doc);
    }
    html += this.cardsHtml();
    this.patch(el, html);
    el.dataset.state = 'ready';
    el.dataset.view = cur.view;
    if (this.cross !== null) this.setCross(Math.min(this.cross, buckets.length - 1));
  }

  // The pointer over the strips moves the shared crosshair (called by the
  // guard: the panel's own pointer events go no further than window).
  onPointerMove(e, target) {
    const strips = target && typeof target.closest === 'function' ? target.closest('.strips') : null;
    const n = this.histDoc()?.buckets?.length || 0;
    if (!strips || !n) return;
    const svg = strips.querySelector('svg.strip');
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    const i = Math.floor(((e.clientX - box.left) / box.width) * n);
    if (i >= 0 && i < n) this.setCross(i);
  }

  timelineHtml(doc) {
    const buckets = doc.buckets;
    const n = buckets.length;
    // the tab's inner width (while the dialog is still hidden, what its CSS
    // will make it: min(1120px, 96vw), less borders, padding, scrollbar)
    const inner = this.panels.optimizations.clientWidth || Math.min(1120, 0.96 * (window.innerWidth || 1200)) - 2 - 16;
    const avail = Math.max(320, inner - 32 - 150 - 8);
    const width = Math.floor(avail);
    const t0 = parseIso(doc.from);
    const span = (doc.bucketMs || 1) * n;
    const xOf = (t) => ((t - t0) / span) * width;
    // a build boundary where a build's window begins (not the first)
    const bounds = [];
    const windows = Array.isArray(doc.builds) ? doc.builds : [];
    windows.forEach((w, i) => {
      const t = parseIso(w.from);
      if (i > 0 && t !== null && t0 !== null) bounds.push({ x: xOf(t), build: w.build, at: w.from });
    });
    const bx = bounds.map((b) => b.x);
    let html = '<div class="timeline" data-timeline>';
    // axis: time at both ends and the middle, builds at their boundaries
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
    html += `<div class="axis"><span>${n} buckets of ${esc(fmtDuration(doc.bucketMs))}</span>${ax.join('')}</div>`;
    html += `<div class="strips" tabindex="0" data-fk="strips" role="group" aria-label="Timeline strips: left and right arrows move the crosshair">`;
    for (const s of STRIPS) {
      const values = buckets.map((b) => (b[s.key] === undefined ? null : b[s.key]));
      const { svg, ceiling, yMax } = stripSvg(values, { width, height: 46, metric: s.key, boundaries: bx, label: s.label });
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

  setCross(i) {
    const doc = this.histDoc();
    if (!doc || !doc.buckets || !doc.buckets[i]) return;
    this.cross = i;
    const b = doc.buckets[i];
    const el = this.panels.optimizations;
    const n = doc.buckets.length;
    for (const svg of el.querySelectorAll('svg.strip')) {
      const w = Number(svg.getAttribute('width'));
      const x = ((i + 0.5) * w) / n;
      const line = svg.querySelector('line.cross');
      line.setAttribute('x1', x.toFixed(1));
      line.setAttribute('x2', x.toFixed(1));
      line.setAttribute('visibility', 'visible');
    }
    for (const s of STRIPS) {
      const out = el.querySelector(`[data-readout="${s.key}"]`);
      if (!out) continue;
      const v = b[s.key];
      const svg = el.querySelector(`svg.strip[data-metric="${s.key}"]`);
      const ceiling = svg ? Number(svg.dataset.ceiling) : Infinity;
      out.classList.toggle('gap', v === null || v === undefined);
      out.classList.toggle('spike', v !== null && v !== undefined && v > ceiling && ceiling > 0);
      let text = v === null || v === undefined ? 'gap: no evidence' : fmtNum(v, s.unit === 'ms' ? 'ms' : '');
      if (s.key === 'hitches' && v !== null && v !== undefined) text += b.worstHitchMs !== null && b.worstHitchMs !== undefined ? ` (worst ${fmtNum(b.worstHitchMs, 'ms')})` : '';
      if (out.classList.contains('spike')) text += ' ▲';
      out.textContent = text;
    }
    const hover = el.querySelector('[data-hover]');
    if (hover) {
      hover.textContent = `${fmtTime(b.from)} – ${fmtTime(b.to, { date: false })} · ${b.heartbeats} heartbeat${b.heartbeats === 1 ? '' : 's'} · builds ${(b.builds || []).join(', ') || '—'}`;
    }
  }

  cardsHtml() {
    const fx = this.data.fixes;
    let html = '<h3>Fixes</h3>';
    if (this.errors.fixes) html += `<p class="occ">Fixes come from the catalogue only (${esc(this.errors.fixes)}).</p>`;
    const list = fx ? fx.list.slice() : [];
    if (list.length === 0) {
      return `${html}<p class="empty">No fix recorded yet. <code>sloptimize fix --footprints &lt;id&gt; --title "…"</code> records one: its before window is the build that ran, its after window is measured once a build after it has run; <code>sloptimize fix propose …</code> records a proposal you can merge or reject here.</p>`;
    }
    list.sort((a, b) => (parseIso(b.at) ?? -Infinity) - (parseIso(a.at) ?? -Infinity));
    html += '<div class="cards" data-cards>';
    for (const f of list) html += this.cardHtml(f);
    html += '</div>';
    return html;
  }

  cardHtml(f) {
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

  async decide(id, status, btn) {
    if (status !== 'merged' && status !== 'rejected') return;
    const card = btn.closest('[data-card]');
    const msg = card && card.querySelector('[data-decide-msg]');
    for (const b of card ? card.querySelectorAll('button[data-action="decide"]') : []) b.disabled = true;
    try {
      await this.request('POST', '/fixes', { type: 'fix', status, ref: id });
      if (msg) msg.textContent = status;
      // the daemon tails fixes.jsonl: read it back until the state shows
      for (let i = 0; i < 30; i++) {
        await this.loadHistory();
        const f = this.data.fixes.list.find((x) => x.id === id);
        if (f && f.status === status) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await this.reload('optimizations');
      const again = this.root.querySelector(`[data-card="${CSS_escape(id)}"]`);
      if (again) {
        again.setAttribute('tabindex', '-1');
        again.focus();
      }
    } catch (err) {
      for (const b of card ? card.querySelectorAll('button[data-action="decide"]') : []) b.disabled = false;
      if (msg) {
        msg.classList.add('fail');
        msg.textContent = err.message;
      }
    }
  }

  // --- Settings -------------------------------------------------------------

  renderSettings() {
    const el = this.panels.settings;
    const st = this.data.status;
    const set = this.data.settings;
    const level = set && typeof set.loop === 'string' ? set.loop : null;
    let html = '<div class="settings">';
    html += `<section><h3>Daemon endpoint</h3>
      <label>Endpoint <input type="url" data-endpoint-input data-fk="endpoint" value="${esc(this.endpoint)}" spellcheck="false"></label>
      <button type="button" data-action="set-endpoint" data-fk="set-endpoint">Use</button>
      <button type="button" data-action="reset-endpoint" data-fk="reset-endpoint">Default</button>
      <span class="msg" data-endpoint-msg></span>
      <p class="help">The panel reads <code>${API}/…</code> and the events socket there. Default: where this module came from (${esc(defaultEndpoint())}).</p></section>`;
    html += `<section><h3>Fix loop automation</h3><div role="radiogroup" aria-label="Fix loop automation" data-levels>`;
    for (const l of LEVELS) {
      html += `<label class="level"><input type="radio" name="loop" data-action="set-level" data-level="${l.id}" data-fk="level-${l.id}" ${level === l.id ? 'checked' : ''} ${this.errors.settings && !set ? 'disabled' : ''}> <strong>${esc(l.label)}</strong> <span class="help">${esc(l.help)}</span></label>`;
    }
    html += `</div><span class="msg" data-level-msg>${this.errors.settings ? esc(this.errors.settings) : level ? `now: ${esc(level)}` : this.loading.settings ? 'loading…' : ''}</span></section>`;
    html += `<section><h3>Catalogue view</h3>${this.sourceLine(this.data.issues || this.data.history)}</section>`;
    html += '<section><h3>Daemon</h3>';
    if (this.errors.status) html += this.errorHtml(this.errors.status);
    else if (!st) html += '<p class="loading">Loading…</p>';
    else {
      const perf = st.files && st.files.perf ? st.files.perf : {};
      const counts = st.counts || {};
      html += `<dl data-status>
        <dt>version</dt><dd>${esc(st.version)}</dd>
        <dt>project</dt><dd>${esc(st.project)}</dd>
        <dt>listening</dt><dd>${esc(st.listen)} (pid ${esc(st.pid)})</dd>
        <dt>perf.jsonl</dt><dd>${esc(fmtBytes(perf.size))}, cursor ${esc(perf.cursor)}, lag ${esc(perf.lag)} — ${esc(perf.backend || '?')}${perf.backendWhy ? ` (${esc(perf.backendWhy)})` : ''}</dd>
        <dt>folded</dt><dd>${esc(counts.folded)} records, ${esc(counts.incidents)} incidents, ${esc(counts.rows)} footprints, ${esc(counts.builds)} builds</dd>
        <dt>skipped lines</dt><dd>${esc(counts.skipped)}${counts.malformedFootprints ? `; ${esc(counts.malformedFootprints)} malformed footprints` : ''}</dd>
        <dt>events socket</dt><dd>${esc(this.sock.state)}${this.sock.resume ? `, resume at ${esc(this.sock.resume)}` : ''}; ${esc(st.subscribers)} subscriber(s)</dd>
      </dl>`;
    }
    html += '</section></div>';
    this.patch(el, html);
    el.dataset.state = this.errors.status && this.errors.settings ? 'error' : 'ready';
  }

  async applyEndpoint(reset = false) {
    const input = this.panels.settings.querySelector('[data-endpoint-input]');
    const msg = this.panels.settings.querySelector('[data-endpoint-msg]');
    let ep;
    try {
      ep = reset ? defaultEndpoint() : normalizeEndpoint(input.value);
    } catch (err) {
      msg.className = 'msg fail';
      msg.textContent = err.message;
      return;
    }
    store('endpoint', reset ? null : ep);
    this.setEndpoint(ep);
    await this.reload('settings');
    const m2 = this.panels.settings.querySelector('[data-endpoint-msg]');
    if (m2) {
      m2.className = `msg ${this.errors.status ? 'fail' : 'ok'}`;
      m2.textContent = this.errors.status ? 'not answering' : 'connected';
    }
  }

  setEndpoint(ep) {
    this.endpoint = normalizeEndpoint(ep);
    this.root.querySelector('[data-endpoint]').textContent = this.endpoint;
    this.data = { issues: null, history: null, ledger: null, status: null, settings: null, fixes: null, detail: new Map() };
    this.autoView = null;
    this.errors = {};
    this.sock.resume = null;
    this.sock.retries = 0;
    const ws = this.sock.ws;
    this.sock.ws = null;
    if (ws) try { ws.close(); } catch { /* already closed */ }
    this.connect();
  }

  async setLevel(level) {
    if (!LEVELS.some((l) => l.id === level)) return;
    const msg = this.panels.settings.querySelector('[data-level-msg]');
    msg.className = 'msg';
    msg.textContent = 'saving…';
    try {
      const r = await this.request('PUT', '/settings', { loop: level });
      this.data.settings = r.doc && typeof r.doc.loop === 'string' ? r.doc : { ...(this.data.settings || {}), loop: level };
      this.errors.settings = null;
      this.renderSettings();
      const m2 = this.panels.settings.querySelector('[data-level-msg]');
      m2.className = 'msg ok';
      m2.textContent = `saved: ${this.data.settings.loop}`;
    } catch (err) {
      msg.className = 'msg fail';
      msg.textContent = err.message;
      // show what the daemon really has
      this.loadSettings().then(() => {
        for (const i of this.panels.settings.querySelectorAll('input[name="loop"]')) i.checked = i.dataset.level === this.data.settings.loop;
      }).catch(() => {});
    }
  }

  // --- teardown -------------------------------------------------------------

  destroy() {
    if (this.destroyed) return;
    this.close();
    clearInterval(this.recTimer);
    this.destroyed = true;
    window.removeEventListener('keydown', this.onKey, true);
    window.removeEventListener('resize', this.onResize);
    document.removeEventListener('focusin', this.onFocusIn, true);
    for (const t of GUARDED) window.removeEventListener(t, this.guard, { capture: true });
    window.removeEventListener('blur', this.onBlur);
    document.removeEventListener('pointerlockchange', this.onLockChange);
    clearTimeout(this.sock.timer);
    clearTimeout(this.settleTimer);
    const ws = this.sock.ws;
    this.sock.ws = null;
    if (ws) try { ws.close(); } catch { /* closed */ }
    this.host.remove();
  }
}

function fmtDuration(ms) {
  if (!ms) return '?';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
  if (ms < 7200000) return `${(ms / 60000).toFixed(0)} min`;
  if (ms < 172800000) return `${(ms / 3600000).toFixed(1)} h`;
  return `${(ms / 86400000).toFixed(1)} d`;
}

function CSS_escape(s) {
  return globalThis.CSS && CSS.escape ? CSS.escape(s) : String(s).replace(/["\\]/g, '\\$&');
}

/*
 * createPanel(options) → the panel's handle.  Options:
 *   endpoint  the daemon, e.g. 'http://127.0.0.1:7567' (default: where this
 *             module was served from, else the page's origin; the Settings
 *             tab can change it and remembers the change per origin)
 *   open      open at once (the standalone page does)
 *   tab       the tab to show first ('session', 'issues', 'optimizations',
 *             'settings'; default: the last one used)
 *   source    'auto' (daemon, else the tail), 'daemon' or 'tail'
 *   hotkey    false to leave Ctrl+F12 alone (call open()/toggle() yourself)
 *   parent    where the host element goes (default document.body)
 *   buckets   a fixed number of timeline buckets (default: sized by the
 *             evidence, at most 48, see bucketsFor)
 *   recorder  the page's recorder (default: the one recorder.js registered)
 * Never throws at a page that has a DOM: a daemon that does not answer is
 * an error state in the panel.
 */
export function createPanel(options = {}) {
  const p = new Panel(options);
  return {
    open: () => p.open(),
    close: () => p.close(),
    toggle: () => p.toggle(),
    refresh: () => p.refresh().catch((err) => p.report(err)),
    destroy: () => p.destroy(),
    setEndpoint: (ep) => p.setEndpoint(ep),
    sessionText: () => p.sessionText(),
    get isOpen() { return p.isOpen; },
    get endpoint() { return p.endpoint; },
    get view() { return p.view(); },
    get timings() { return p.timings; },
    get element() { return p.host; },
    get root() { return p.root; },
  };
}

export default createPanel;
