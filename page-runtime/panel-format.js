// panel-format.js — what every tab of the panel builds its HTML from:
// escaping, numbers and times as the CLI prints them, the status badge,
// the situation chips, a fix's verdict line, the line that says which
// catalogue is shown, and the error state.  Pure: strings in, strings
// out, no DOM, so the tabs' views (panel-session.js, panel-issues.js,
// panel-optimizations.js, panel-settings.js) run and are tested in node.
//
// Every value that came from a record, the daemon or the user goes
// through esc() before it is put in HTML: a footprint key or a note may
// hold anything, `<script>` included.
import { API } from './panel-connection.js';
import { parseIso } from './fold.js';

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ESC[c]);

const VERDICT_WORDS = {
  improved: 'improved', regressed: 'regressed', 'no-detectable-change': 'no detectable change',
  'not-enough-evidence': 'not enough evidence yet', software: 'software renderer: timings are not evidence',
  incomparable: 'incomparable', pending: 'pending',
};

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

export function fmtAgo(ms) {
  if (ms === null || ms === undefined) return 'never';
  const s = Math.max(0, ms / 1000);
  if (s < 45) return 'just now';
  if (s < 90 * 60) return `${Math.max(1, Math.round(s / 60))}m ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

// In the page's local time, as the player reads a clock.
export function fmtTime(iso, { seconds = true, date = true } = {}) {
  const t = parseIso(iso);
  if (t === null) return '—';
  const d = new Date(t);
  const p = (n) => String(n).padStart(2, '0');
  const hm = `${p(d.getHours())}:${p(d.getMinutes())}${seconds ? `:${p(d.getSeconds())}` : ''}`;
  return date ? `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${hm}` : hm;
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '?';
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

export function fmtDuration(ms) {
  if (!ms) return '?';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
  if (ms < 7200000) return `${(ms / 60000).toFixed(0)} min`;
  if (ms < 172800000) return `${(ms / 3600000).toFixed(1)} h`;
  return `${(ms / 86400000).toFixed(1)} d`;
}

// A delta, coloured by its direction only: every metric is lower-is-better.
// A timing's delta that is not past the noise (`trusted` false: the fix's
// verdict is not improved or regressed) is never coloured: it is shown
// grey, as noise (data-direction="noise").
export function deltaHtml(before, after, unit, trusted = true) {
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
export function intervalText(iv) {
  if (!iv || typeof iv.lo !== 'number' || typeof iv.hi !== 'number') return '';
  const n = (v) => fmtNum(v, 'ms').replace(/ ms$/, '');
  return ` [${n(iv.lo)}–${n(iv.hi)}]`;
}

// " (40 heartbeats, 120 s of play, hardware)": what a window's timing
// stands on.
export function windowExposure(w) {
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
 * and nothing is claimed.  The Issues tab's fix lines and the
 * Optimizations tab's cards both say it.
 */
export function judgementHtml(f) {
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

export function situationChips(sit) {
  const keys = Object.keys(sit || {});
  if (keys.length === 0) return '<span class="chip dim">no situation</span>';
  return keys.map((k) => `<span class="chip" data-facet="${esc(k)}">${esc(k)}=${esc(sit[k])}</span>`).join('');
}

export function statusBadge(status) {
  const s = status || 'open';
  return `<span class="badge ${esc(s)}" data-status="${esc(s)}">${esc(s)}</span>`;
}

/*
 * The line above a tab that says which catalogue it shows (the panel
 * always says it) and the switch between them.  `cur` is what was loaded
 * ({view, ledger?}) or null; `source` the switch's setting ('auto',
 * 'daemon', 'tail', 'team'); `ledger` the tail last folded here, for a
 * `cur` that does not carry its own; `route` the daemon's route named.
 */
export function sourceLineHtml(cur, { source = 'auto', ledger = null, route = '/issues' } = {}) {
  const sw = `<span class="switch" role="group" aria-label="Which catalogue">
      <button type="button" data-action="source" data-source="daemon" data-fk="src-daemon" aria-pressed="${cur && cur.view === 'daemon'}">Whole ledger · daemon</button>
      <button type="button" data-action="source" data-source="tail" data-fk="src-tail" aria-pressed="${cur && cur.view === 'tail'}">Last 2 MiB · folded here</button>
      <button type="button" data-action="source" data-source="team" data-fk="src-team" aria-pressed="${cur && cur.view === 'team'}" title="every machine's records, from the daemon's ClickHouse sink (sloptimized --sink)">Team · every machine</button>
      ${source !== 'auto' ? '<button type="button" data-action="source" data-source="auto" data-fk="src-auto">auto</button>' : ''}</span>`;
  if (!cur) return `<div class="source" data-view="none"><span>Nothing loaded from the daemon yet.</span>${sw}</div>`;
  if (cur.view === 'team') {
    return `<div class="source" data-view="team"><span>Showing <strong>the team's catalogue</strong>: every machine that sinks into this daemon's ClickHouse, deduplicated there (<code>GET ${API}/issues?scope=team</code>).</span>${sw}</div>`;
  }
  if (cur.view === 'daemon') {
    return `<div class="source" data-view="daemon"><span>Showing <strong>the whole ledger</strong>, folded by the daemon (<code>GET ${API}${esc(route)}</code>).</span>${sw}</div>`;
  }
  const led = cur.ledger || ledger;
  const p = led ? led.perf : {};
  const skipped = led && led.doc ? (Array.isArray(led.doc.skipped) ? led.doc.skipped.length : led.doc.skipped) : null;
  const span = p.truncated
    ? `the last <strong>${esc(fmtBytes((p.size ?? 0) - (p.from ?? 0)))}</strong> of ${esc(fmtBytes(p.size))} (from byte ${esc(p.from)})`
    : `<strong>all ${esc(fmtBytes(p.size))}</strong>`;
  return `<div class="source" data-view="tail"><span>Showing ${span} of perf.jsonl — ${esc((p.records || []).length)} records, folded in this page${led && led.foldMs !== undefined ? ` in ${led.foldMs.toFixed(1)} ms` : ''} (<code>GET ${API}/ledger</code>)${skipped ? `; the daemon skipped ${esc(skipped)} line(s)` : ''}. Older records are not counted here.</span>${sw}</div>`;
}

// A tab whose fetch failed: what failed, what to do, and a Retry button.
export function errorHtml(msg) {
  return `<div class="error" role="alert" data-error>${esc(msg)}<br>Is <code>sloptimized</code> running for this game? Start it with <code>sloptimized --project &lt;game folder&gt;</code>, or set the endpoint in Settings. <button type="button" data-action="retry" data-fk="retry">Retry</button></div>`;
}
