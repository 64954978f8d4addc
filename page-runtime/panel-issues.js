// panel-issues.js — the Issues tab: the catalogue's rows (one footprint
// each, most frequent first), a row's detail with its fixes and last
// occurrences, the census of a scene, and a live incident folded into the
// rows before the daemon's next answer settles them.  Pure: the
// catalogue document (GET /issues, or fold.js's fold of the tail) in,
// HTML out; the panel (panel.js) fetches, keeps and patches.
import { esc, fmtAgo, fmtNum, fmtTime, intervalText, judgementHtml, situationChips, statusBadge } from './panel-format.js';
import { parseIso } from './fold.js';

const ROW_LIMIT = 200;              // rows drawn before "Show all"

// The ctx part of a footprint key, parsed back (for rows seen live only).
export function situationOfKey(key) {
  const i = typeof key === 'string' ? key.lastIndexOf('|ctx:') : -1;
  const out = {};
  if (i < 0) return out;
  for (const piece of key.slice(i + 5).split(',')) {
    const eq = piece.indexOf('=');
    if (eq > 0) out[piece.slice(0, eq)] = piece.slice(eq + 1);
  }
  return out;
}

/*
 * A live incident (an events-socket record) into the catalogue's rows:
 * its row, made if the footprint is new (marked `live`), counted,
 * brought up to date and the rows sorted again.  The daemon's view takes
 * the record's own count (the daemon's fold); any other view counts one
 * more.  Returns false, changing nothing, when there is nothing to fold
 * into or the record has no footprint.
 */
export function issuesTakeRecord(cur, rec) {
  if (!cur || !cur.doc || !Array.isArray(cur.doc.issues) || !rec.fp) return false;
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
  return true;
}

// What a row's redraw depends on: while it is unchanged only the "ago"
// texts move, and those are patched in place.
export function issuesSignature(rows, { view, showAll, expanded, detail, error, census }) {
  return JSON.stringify([view, showAll, [...expanded], [...detail.keys()], error || null,
    census ? [census.doc && census.doc.at, census.error] : null,
    rows.map((r) => [r.id, r.count, r.status, r.last, r.first, r.verdict, r.worst, r.builds.length, r.fixes.length, r.proposals.length])]);
}

export function agoText(lastIso, now) {
  const last = parseIso(lastIso);
  return `last ${last === null ? 'never' : fmtAgo(now - last)}`;
}

function shellQuote(s) {
  return `"${String(s).replace(/(["\\$`])/g, '\\$1')}"`;
}

// The command that records a fix of a row, for the user to copy.
export function fixCommand(r) {
  return `sloptimize fix --footprints ${r.id} --title ${shellQuote(`fix ${r.verdict && r.verdict.guess ? r.verdict.guess : r.type} ${r.type}${r.phase ? ` in ${r.phase}` : ''}`)}`;
}

// One fix or proposal under a row: its state, title, and what its
// windows say (or that it waits for a build after it).
export function fixLineHtml(f) {
  const b = f.before && typeof f.before === 'object' ? f.before : null;
  const a = f.after && typeof f.after === 'object' ? f.after : null;
  const waiting = f.pending === true;
  const was = waiting ? `<span class="waiting" data-waiting>waiting for a build after this fix</span>${b ? ` · before: p95 ${esc(fmtNum(b.p95Ms, 'ms'))}${esc(intervalText(b.p95Interval))} on ${esc(b.build || fmtTime(b.from))}` : ''}`
    : b || a ? judgementHtml(f) : '<span class="dim">no measured windows</span>';
  return `<div class="fixline" data-fix="${esc(f.id)}">${statusBadge(f.status)} <strong>${esc(f.title || f.id)}</strong> · ${esc(fmtTime(f.at))}${f.commit ? ` · <code>${esc(f.commit)}</code>` : ''}${f.fixBuild && !waiting ? ` · judged on ${esc(f.fixBuild)}` : ''}<br>${was}</div>`;
}

// A row opened: what its key and verdict say, its fixes (or the command
// that records one), its proposals, and its last occurrences when `det`
// (GET /issues/<id>, or the tail's fold of one footprint) has them.
export function detailHtml(r, det = null) {
  const fixCmd = fixCommand(r);
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
    for (const f of fixes) html += fixLineHtml(f);
  } else {
    html += `<h3>No fix yet</h3><p class="occ">When it is fixed, this records it, with the build that ran before the change as its before window; it stays pending until a build after it has run, which the fold then measures as after:</p>
        <div class="cmd"><code data-fix-command>${esc(fixCmd)}</code><button type="button" data-action="copy-text" data-text="${esc(fixCmd)}" data-fk="copy-cmd-${esc(r.id)}">Copy</button><span class="copied" data-copied></span></div>`;
  }
  if (props.length) {
    html += '<h3>Proposals</h3>';
    for (const f of props) html += fixLineHtml(f);
  }
  if (det && det.occurrences && det.occurrences.length) {
    const occ = det.occurrences.slice(-8).reverse();
    html += `<h3>Last occurrences (${det.occurrences.length})</h3><ul class="occ">${occ.map((o) => `<li>${esc(fmtTime(o.at))} · ${esc(o.build || 'no build')} · ${esc(fmtNum(o.value, r.worst ? r.worst.unit : 'ms'))}${o.verdict && o.verdict.guess ? ` · ${esc(o.verdict.guess)}` : ''}${o.note ? ` · <q class="note" data-note-text>${esc(o.note)}</q>` : ''}${Array.isArray(o.entities) && o.entities.length ? ` · <span class="entities" data-entities>${esc(o.entities.join(', '))}</span>` : ''}</li>`).join('')}</ul>`;
  }
  return html;
}

// One footprint's row: a button that opens its detail (`open`), then the
// detail itself.
export function issueRowHtml(r, { open = false, now = Date.now(), detail = null } = {}) {
  return `<li data-row="${esc(r.id)}" data-count="${esc(r.count)}" data-status="${esc(r.status)}">
        <button type="button" class="row" data-action="toggle-row" data-id="${esc(r.id)}" data-fk="row-${esc(r.id)}" aria-expanded="${open}" aria-controls="detail-${esc(r.id)}">
          <span class="n" data-n>×${esc(r.count)}</span>${Number.isInteger(r.machines) ? `<span class="machines" data-machines="${esc(r.machines)}" title="machines that saw it">on ${esc(r.machines)} machine${r.machines === 1 ? '' : 's'}</span>` : ''}
          <span class="type">${esc(r.type)}</span>
          <span class="guess" title="${esc(r.key)}">${esc(r.verdict && r.verdict.guess ? r.verdict.guess : '—')}${r.phase ? ` <span class="type">in ${esc(r.phase)}</span>` : ''}</span>
          <span class="st">${statusBadge(r.status)}</span>
          <span class="ago" data-ago title="${esc(r.last || '')}">${esc(agoText(r.last, now))}</span>
          <span class="chips">${situationChips(r.situation)}</span>
          <span class="fp">${esc(r.id)}</span>
        </button>
        ${open ? `<div class="detail" id="detail-${esc(r.id)}" data-detail="${esc(r.id)}">${detailHtml(r, detail)}</div>` : ''}
      </li>`;
}

/*
 * The tab below its source line: the summary, the empty state, the rows
 * (the first ROW_LIMIT unless `showAll`), "Show all", and in the daemon's
 * view the census.  `expanded`: the ids opened; `detail`: id → what
 * detailHtml shows of its occurrences.
 */
export function issuesHtml(rows, { view, showAll = false, expanded = new Set(), detail = new Map(), census = null, now = Date.now() } = {}) {
  const incidents = rows.reduce((n, r) => n + (r.count || 0), 0);
  let html = `<p class="occ" data-summary>${rows.length} footprint${rows.length === 1 ? '' : 's'}, ${incidents} incident${incidents === 1 ? '' : 's'}; most frequent first. Select a row for its history.</p>`;
  if (rows.length === 0) html += '<p class="empty">No incident in this view yet.</p>';
  const shown = showAll ? rows : rows.slice(0, ROW_LIMIT);
  html += '<ul class="rows" data-rows>';
  for (const r of shown) html += issueRowHtml(r, { open: expanded.has(r.id), now, detail: detail.get(r.id) });
  html += '</ul>';
  if (shown.length < rows.length) html += `<button type="button" class="more" data-action="show-all" data-fk="show-all">Show all ${rows.length} footprints (${rows.length - shown.length} more)</button>`;
  if (view === 'daemon') html += censusHtml(census);
  return html;
}

// The census `sloptimize attribute --static` last wrote (GET /census):
// which entity holds what, built where.  `c` is {doc, error}; no doc and
// no error is "none yet", which says how to make one.
export function censusHtml(c) {
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
