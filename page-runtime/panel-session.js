// panel-session.js — the Current Session tab: this page's incidents as the
// events socket brings them, the recorder's own state, and the session as
// one block of text for a coding agent.  Pure: a session ({items, notes,
// started, note}) and the recorder's state in, HTML or text out; the
// panel (panel.js) owns the session and puts the HTML in its tab.
//
// A session item is {id, rec, woke, line, arrived}: the events message's
// id (its resume point), its record, whether it woke the agent.
import { esc, fmtNum, fmtTime, statusBadge } from './panel-format.js';

const SESSION_LIMIT = 500;          // items kept; the ledger has the rest

export function sessionCreate(note = '') {
  return { items: [], byId: new Map(), started: Date.now(), note, notes: [] };
}

/*
 * A record or wake message into the session: a new item first in the
 * list (the oldest let go past SESSION_LIMIT), or the item of the same
 * id brought up to date (a wake after its record).  Returns whether the
 * item is new, which the Issues counts go by.
 */
export function sessionAdd(session, m) {
  const rec = m.record;
  let item = m.id ? session.byId.get(m.id) : null;
  const fresh = !item;
  if (!item) {
    item = { id: m.id || null, rec, woke: false, line: null, arrived: Date.now() };
    if (item.id) session.byId.set(item.id, item);
    session.items.unshift(item);
    if (session.items.length > SESSION_LIMIT) {
      const old = session.items.pop();
      if (old.id) session.byId.delete(old.id);
    }
  } else {
    item.rec = { ...item.rec, ...rec };
  }
  if (m.type === 'wake') {
    item.woke = true;
    item.line = m.line || null;
  }
  return fresh;
}

/*
 * The recorder's own state, one line: is it recording, what went to the
 * daemon, what waits, what was lost, can the daemon be reached, and (only
 * when it is so) that its sends are made on the page's own thread and that
 * a waking hitch's record left only after its stall.  `rec` is
 * null (no recorder in the page), {error} (its state() threw) or {state}.
 */
export function recorderHtml(rec) {
  if (!rec) return '<div class="source" data-recorder="none"><span>No recorder in this page: its stutters are not recorded here (docs/recorder.md).</span></div>';
  if (rec.error !== undefined) return `<div class="source" data-recorder="error"><span>The recorder did not answer: ${esc(rec.error)}</span></div>`;
  const st = rec.state;
  const dropped = Object.entries(st.dropped || {}).filter(([, n]) => n > 0);
  const reach = st.reachable === null ? 'not tried yet' : st.reachable ? 'reachable' : `unreachable${st.lastError ? ` (${st.lastError})` : ''}, retrying`;
  return `<div class="source recorder" data-recorder="${st.recording ? 'recording' : 'stopped'}" data-reachable="${st.reachable}">
      <span><strong>Recorder</strong> ${st.recording ? 'recording' : 'stopped'} · frame ${esc(st.frames)}${st.medianMs !== null ? ` · median ${esc(fmtNum(st.medianMs, 'ms'))}` : ''}${st.phase ? ` · phase ${esc(st.phase)}` : ''}${st.build ? ` · build ${esc(st.build)}` : ''}</span>
      <span><span data-rec-sent>${esc(st.sent)} records sent</span> · <span data-rec-queued>${esc(st.queued)} queued</span>${st.held ? ` · ${esc(st.held)} held for their script` : ''}${st.own && st.own.deferredWakes > 0 ? ` · <span data-rec-deferred>${esc(st.own.deferredWakes)} ${st.own.deferredWakes === 1 ? 'wake' : 'wakes'} sent after the stall (the scene too big to walk at the frame's end)</span>` : ''} · <span data-rec-dropped>${dropped.length ? `dropped ${dropped.map(([k, n]) => `${esc(n)} ${esc(k)}`).join(', ')}` : 'none dropped'}</span>${st.refused ? ` · <span data-rec-refused>${esc(st.refused)} refused${st.lastRefusal ? ` (${esc(st.lastRefusal)})` : ''}</span>` : ''} · daemon <span data-rec-reach>${esc(reach)}</span>${st.sender && st.sender.offThread === false ? ` · <span data-rec-sender>sent from the page's own thread, each send a cost to its frame${st.sender.why ? ` (${esc(st.sender.why)})` : ''}</span>` : ''}</span>
    </div>`;
}

// The part of the tab that is made once and kept (the note being typed
// must not be replaced under the cursor).
export function sessionToolsHtml() {
  return `
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
}

// One incident's row: when, what, how much, the verdict, its footprint
// (a button to it in Issues), its count in the ledger, its status.
export function incidentHtml(it) {
  const r = it.rec;
  const v = r.guess ? `${esc(r.guess)}${r.confidence ? `<span class="dim">/${esc(r.confidence)}</span>` : ''}` : '<span class="dim">no verdict</span>';
  return `<li data-incident="${esc(it.id || '')}" data-fp="${esc(r.fp || '')}">
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

/*
 * The list under the tools: the recorder's line, what the list holds,
 * the empty state (which says when the socket is not live yet), the
 * socket's last five notes, then the incidents, newest first.  `recorder`
 * as recorderHtml takes it; `live`: the events socket said hello.
 */
export function sessionListHtml(session, { recorder = null, live = false } = {}) {
  const items = session.items;
  const since = fmtTime(new Date(session.started).toISOString(), { date: false });
  let html = recorderHtml(recorder);
  html += `<div class="source"><span>This tab's incidents since <strong>${esc(since)}</strong>, as the daemon folds them (events socket).</span><span>${items.length} incident${items.length === 1 ? '' : 's'} · ${new Set(items.map((i) => i.rec.fp).filter(Boolean)).size} footprints</span></div>`;
  const notes = session.notes.slice(-5);
  if (items.length === 0 && notes.length === 0) {
    html += `<p class="empty" data-empty>No incident since this page opened. Hitches, usermarks and jitter show up here as the game writes them${live ? '' : ' — the events socket is not connected yet'}.</p>`;
  }
  html += '<ul class="incidents" data-incidents>';
  for (const n of notes) html += `<li class="note">${esc(fmtTime(new Date(n.at).toISOString(), { date: false }))} ${esc(n.text)}</li>`;
  for (const it of items) html += incidentHtml(it);
  html += '</ul>';
  return html;
}

// The session as one text block for a coding agent (plain text: nothing
// in it is escaped, it goes to the clipboard).
export function sessionText(session, endpoint) {
  const items = session.items.slice().reverse();
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
  lines.push(`sloptimize session: ${items.length} incident${items.length === 1 ? '' : 's'}, ${byFp.size} footprint${byFp.size === 1 ? '' : 's'}, since ${new Date(session.started).toISOString()} (daemon ${endpoint})`);
  lines.push(`note: ${session.note.trim() ? session.note.trim().replace(/\n/g, '\n  ') : '(none)'}`);
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
