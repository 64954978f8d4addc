// panel-settings.js — the Settings tab: the daemon's endpoint, the fix
// loop's automation level (settings.json through PUT /settings), which
// catalogue is shown, and the daemon's own state (GET /status).  Pure:
// what the panel holds in, HTML out; the panel (panel.js) applies what
// is chosen.
import { API } from './panel-connection.js';
import { errorHtml, esc, fmtBytes } from './panel-format.js';

export const LEVELS = [
  { id: 'off', label: 'Off', help: 'the daemon only records and wakes; nobody changes code on its own' },
  { id: 'propose', label: 'Propose', help: 'the agent may record proposals; you merge or reject them here' },
  { id: 'apply', label: 'Apply', help: 'the agent applies fixes itself and records them, with measured windows' },
];

/*
 * The tab.  `endpoint` and `defaultEndpoint`: the daemon used and the one
 * Default goes back to; `settings` and `status`: the daemon's documents
 * (null before they came); `errors` and `loading`: per document (keys
 * 'settings', 'status'); `sock`: the events socket's {state, resume};
 * `sourceLine`: the catalogue view's line, as the other tabs show it.
 */
export function settingsHtml({ endpoint, defaultEndpoint, settings = null, status = null, errors = {}, loading = {}, sock = {}, sourceLine = '' }) {
  const st = status;
  const set = settings;
  const level = set && typeof set.loop === 'string' ? set.loop : null;
  let html = '<div class="settings">';
  html += `<section><h3>Daemon endpoint</h3>
      <label>Endpoint <input type="url" data-endpoint-input data-fk="endpoint" value="${esc(endpoint)}" spellcheck="false"></label>
      <button type="button" data-action="set-endpoint" data-fk="set-endpoint">Use</button>
      <button type="button" data-action="reset-endpoint" data-fk="reset-endpoint">Default</button>
      <span class="msg" data-endpoint-msg></span>
      <p class="help">The panel reads <code>${API}/…</code> and the events socket there. Default: where this module came from (${esc(defaultEndpoint)}).</p></section>`;
  html += `<section><h3>Fix loop automation</h3><div role="radiogroup" aria-label="Fix loop automation" data-levels>`;
  for (const l of LEVELS) {
    html += `<label class="level"><input type="radio" name="loop" data-action="set-level" data-level="${l.id}" data-fk="level-${l.id}" ${level === l.id ? 'checked' : ''} ${errors.settings && !set ? 'disabled' : ''}> <strong>${esc(l.label)}</strong> <span class="help">${esc(l.help)}</span></label>`;
  }
  html += `</div><span class="msg" data-level-msg>${errors.settings ? esc(errors.settings) : level ? `now: ${esc(level)}` : loading.settings ? 'loading…' : ''}</span></section>`;
  html += `<section><h3>Catalogue view</h3>${sourceLine}</section>`;
  html += '<section><h3>Daemon</h3>';
  if (errors.status) html += errorHtml(errors.status);
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
        <dt>events socket</dt><dd>${esc(sock.state)}${sock.resume ? `, resume at ${esc(sock.resume)}` : ''}; ${esc(st.subscribers)} subscriber(s)</dd>
      </dl>`;
  }
  html += '</section></div>';
  return html;
}
