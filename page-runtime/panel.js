// panel.js — the in-game debugger (DESIGN §12, seed §8.5): a Ctrl+F12 modal
// over any page with four tabs — Current Session, Issues, Optimizations,
// Settings — reading the daemon's HTTP API and its events socket.
//
//   import { createPanel } from 'http://127.0.0.1:7567/page-runtime/panel.js';
//   const panel = createPanel();          // Ctrl+F12 opens it, Esc closes it
//
// Everything lives in one shadow root (styles included), so the panel
// neither inherits a game's CSS nor leaks its own.  Plain DOM and SVG, no
// dependencies beyond this folder's modules.  Nothing here throws at the
// host page: a daemon that cannot be reached is an error state in the
// tab, and the events socket reconnects by itself with a backoff.
//
// This file is the wiring: the DOM (the shadow root, the dialog, focus,
// keys, the guard that keeps the panel's events from the game), what is
// loaded and kept, and when a region is drawn again.  What is drawn is
// the tabs' pure views, each in a module of its own that runs in node:
//   panel-session.js        Current Session (and the text for an agent)
//   panel-issues.js         Issues: rows, details, census, live incidents
//   panel-optimizations.js  Optimizations: timeline and fix cards
//   panel-settings.js       Settings
// below them panel-charts.js (the SVG) and panel-format.js (escaping,
// numbers, times, what several tabs show alike); panel-connection.js is
// the daemon's API and the events socket with its backoff (events.js
// reads its messages), panel-styles.js the stylesheet.  Imports run one
// way, down that list; none of them imports this file.
//
// Two views of the catalogue and the timeline, and the panel always says
// which one it shows:
//   daemon — GET /issues and /history: the whole ledger, folded by the
//            daemon (the default);
//   tail   — GET /ledger: the last 2 MiB of perf.jsonl and all of
//            fixes.jsonl, folded here by fold.js (what a host without
//            the daemon's catalogue can serve).
import { Fold } from './fold.js';
import { Connection, defaultEndpoint, normalizeEndpoint } from './panel-connection.js';
import { esc, errorHtml, sourceLineHtml } from './panel-format.js';
import { sessionAdd, sessionCreate, sessionListHtml, sessionText, sessionToolsHtml } from './panel-session.js';
import { agoText, issuesHtml, issuesSignature, issuesTakeRecord } from './panel-issues.js';
import { BUCKETS, STRIPS, bucketsFor, fixesOfRows, hoverText, optimizationsHtml, readout, timelineWidth } from './panel-optimizations.js';
import { LEVELS, settingsHtml } from './panel-settings.js';
import { CSS } from './panel-styles.js';

export { bucketsFor } from './panel-optimizations.js';
export { fmtNum } from './panel-format.js';

// Where the Issues tab's catalogue comes from (the Source switch).
const SOURCES = ['auto', 'daemon', 'tail', 'team'];
const TABS = [
  { id: 'session', label: 'Current Session' },
  { id: 'issues', label: 'Issues' },
  { id: 'optimizations', label: 'Optimizations' },
  { id: 'settings', label: 'Settings' },
];
const SHOW_DELAY_MS = 150;
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

// localStorage and sessionStorage under sloptimize.<key>: value undefined
// reads, null removes.
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

function deepActiveElement() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

// --- the panel --------------------------------------------------------------

class Panel {
  constructor(opts = {}) {
    this.opts = opts;
    let ep = opts.endpoint ?? store('endpoint') ?? defaultEndpoint();
    try {
      ep = normalizeEndpoint(ep);
    } catch {
      ep = defaultEndpoint();
    }
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
    this.session = sessionCreate(sessionStore('note') || '');
    this.data = { issues: null, history: null, ledger: null, status: null, settings: null, fixes: null, detail: new Map() };
    this.errors = {};
    this.loading = {};
    this.expanded = new Set();
    this.showAll = false;
    this.cross = null;
    this.timings = { opens: [] };
    // the daemon's API and events socket; what the socket says goes to
    // the header's line, the session and the Issues counts
    this.conn = new Connection({
      endpoint: ep, fetch: opts.fetch, WebSocket: opts.WebSocket,
      onState: (state, text) => this.setConn(state, text),
      onEvent: (m) => this.onEvent(m),
      onLost: () => this.session.notes.push({ at: Date.now(), text: 'events socket closed; reconnecting (wakes in between are replayed, other incidents are in the ledger)' }),
    });
    this.pending = {};
    this.lastRender = {};       // region → when it was last re-rendered by schedule()
    this.pressing = false;      // a pointer is down inside the panel
    this.deferred = new Map();  // element → html held back while pressing
    this.build();
    this.listen();
    this.conn.connect();
    if (opts.open) this.open();
  }

  get endpoint() {
    return this.conn.endpoint;
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

  // --- what is loaded and kept --------------------------------------------

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
    const r = await this.conn.request('GET', '/ledger', undefined, { known: cur ? cur.etag : null });
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
      const r = await this.conn.request('GET', '/issues?scope=team');
      this.data.issues = { view: 'team', doc: r.doc, at: Date.now() };
      return this.data.issues;
    }
    if (want === 'daemon') {
      try {
        const r = await this.conn.request('GET', '/issues');
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
      const r = await this.conn.request('GET', '/census');
      this.data.census = { doc: r.doc, error: null };
    } catch (err) {
      this.data.census = err.status === 404 ? { doc: null, error: null } : { doc: null, error: err.message || String(err) };
    }
  }

  async loadHistory() {
    if (this.view() === 'daemon' || this.view() === 'team') {
      try {
        let n = this.buckets;
        if (!this.fixedBuckets) {
          // one bucket first: the span and the number of heartbeats in it
          const one = await this.conn.request('GET', '/history?buckets=1');
          n = bucketsFor(one.doc);
        }
        const [h, i] = await Promise.all([
          this.conn.request('GET', `/history?buckets=${n}`),
          this.conn.request('GET', '/issues'),
        ]);
        this.data.history = { view: 'daemon', doc: h.doc, at: Date.now() };
        this.data.issues = { view: 'daemon', doc: i.doc, at: Date.now() };
        // every fix and proposal the catalogue joins to a row, with the
        // daemon's fixBuild; fixes naming no row come from /ledger after
        this.data.fixes = { list: fixesOfRows(i.doc.issues), from: 'issues' };
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
    const r = await this.conn.request('GET', '/status');
    this.data.status = r.doc;
    return r.doc;
  }

  async loadSettings() {
    const r = await this.conn.request('GET', '/settings');
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

  // The header's line of the socket's state.
  setConn(state, text) {
    const el = this.root.querySelector('[data-conn]');
    if (el) {
      el.dataset.state = state;
      el.textContent = text;
    }
  }

  // A message of the events socket, once the connection has taken what
  // it needs of it (hello, the resume points).
  onEvent(m) {
    if (m.type === 'dropped') {
      // the page read too slowly: the daemon fed it every wake in order,
      // but live records are not kept (the ledger has them)
      this.session.notes.push({ at: Date.now(), text: `this page missed ${m.count ?? 'some'} live records while it was catching up; every wake came through` });
      this.sessionChanged();
      return;
    }
    if (m.type === 'gap') {
      this.session.notes.push({ at: Date.now(), text: `wakes after ${m.after} cannot be replayed (${m.reason || 'the ledger was replaced'})` });
      this.sessionChanged();
      return;
    }
    if (m.type !== 'record' && m.type !== 'wake') return;
    if (!m.record) {
      // a summary line (held back, or caught up): no single record
      if (m.line) this.session.notes.push({ at: Date.now(), text: m.line });
      this.sessionChanged();
      return;
    }
    if (sessionAdd(this.session, m)) this.liveIssue(m.record);
    this.sessionChanged();
    this.updateCounts();
  }

  // The session moved: re-render its list only where it shows.  Closed
  // (or on another tab), the panel renders nothing for a live record —
  // its cost would land in the game's frames — and open() or selecting
  // the tab renders what was kept meanwhile.
  sessionChanged() {
    if (this.isOpen && this.tab === 'session') this.schedule('session', () => this.renderSession());
  }

  // A live incident moves the Issues counts at once; a fetch then settles
  // them with what the daemon (or the tail) says.
  liveIssue(rec) {
    if (!issuesTakeRecord(this.data.issues, rec)) return;
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

  // The recorder's state as recorderHtml takes it.
  recorderState() {
    const r = this.recorder();
    if (!r) return null;
    try {
      return { state: r.state() };
    } catch (err) {
      return { error: err.message };
    }
  }

  renderSession() {
    const el = this.panels.session;
    if (!el.querySelector('[data-note]')) {
      el.innerHTML = sessionToolsHtml();
      el.querySelector('[data-note]').value = this.session.note;
    }
    const list = el.querySelector('[data-session-list]');
    this.patch(list, sessionListHtml(this.session, { recorder: this.recorderState(), live: this.conn.state === 'live' }));
    this.updateCounts();
    this.updateRegime();
    el.dataset.state = 'ready';
  }

  // The session as one text block for a coding agent.
  sessionText() {
    return sessionText(this.session, this.endpoint);
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
    return sourceLineHtml(cur, { source: this.source, ledger: this.data.ledger, route });
  }

  renderIssues() {
    const el = this.panels.issues;
    const cur = this.data.issues;
    let html = this.sourceLine(cur);
    if (this.errors.issues) html += errorHtml(this.errors.issues);
    if (!cur) {
      this.issuesSig = null;
      if (!this.errors.issues) html += '<p class="loading">Loading the catalogue…</p>';
      this.patch(el, html);
      el.dataset.state = this.errors.issues ? 'error' : 'loading';
      return;
    }
    const doc = cur.doc || {};
    const rows = Array.isArray(doc.issues) ? doc.issues : [];
    const how = { view: cur.view, showAll: this.showAll, expanded: this.expanded, detail: this.data.detail, census: this.data.census };
    // the same rows as on screen: only the "ago" texts move
    const sig = issuesSignature(rows, { ...how, error: this.errors.issues });
    if (sig === this.issuesSig && el.querySelector('[data-rows]')) {
      const now = Date.now();
      for (const a of el.querySelectorAll('[data-ago]')) a.textContent = agoText(a.getAttribute('title'), now);
      el.dataset.state = 'ready';
      return;
    }
    this.issuesSig = sig;
    html += issuesHtml(rows, { ...how, now: Date.now() });
    this.patch(el, html);
    el.dataset.state = 'ready';
    el.dataset.view = cur.view;
    const c = this.root.querySelector('[data-count="issues"]');
    if (c) {
      c.hidden = false;
      c.textContent = String(rows.length);
    }
  }

  async toggleRow(id) {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
    this.renderIssues();
    if (!this.expanded.has(id) || this.data.detail.has(id)) return;
    const cur = this.data.issues;
    if (cur && cur.view === 'daemon') {
      try {
        const r = await this.conn.request('GET', `/issues/${encodeURIComponent(id)}`);
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
    if (this.errors.history) html += errorHtml(this.errors.history);
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
    const width = timelineWidth(this.panels.optimizations.clientWidth, window.innerWidth);
    html += optimizationsHtml(doc, { width, fixes: this.data.fixes ? this.data.fixes.list : null, fixesError: this.errors.fixes });
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
      const svg = el.querySelector(`svg.strip[data-metric="${s.key}"]`);
      const r = readout(b, s, svg ? Number(svg.dataset.ceiling) : Infinity);
      out.classList.toggle('gap', r.gap);
      out.classList.toggle('spike', r.spike);
      out.textContent = r.text;
    }
    const hover = el.querySelector('[data-hover]');
    if (hover) hover.textContent = hoverText(b);
  }

  async decide(id, status, btn) {
    if (status !== 'merged' && status !== 'rejected') return;
    const card = btn.closest('[data-card]');
    const msg = card && card.querySelector('[data-decide-msg]');
    for (const b of card ? card.querySelectorAll('button[data-action="decide"]') : []) b.disabled = true;
    try {
      await this.conn.request('POST', '/fixes', { type: 'fix', status, ref: id });
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
    const html = settingsHtml({
      endpoint: this.endpoint, defaultEndpoint: defaultEndpoint(), settings: this.data.settings, status: this.data.status,
      errors: this.errors, loading: this.loading, sock: { state: this.conn.state, resume: this.conn.resume },
      sourceLine: this.sourceLine(this.data.issues || this.data.history),
    });
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

  // Another daemon: nothing loaded from the old one is kept.  Throws,
  // changing nothing, on an endpoint that is not http://host:port.
  setEndpoint(ep) {
    const e = normalizeEndpoint(ep);
    this.root.querySelector('[data-endpoint]').textContent = e;
    this.data = { issues: null, history: null, ledger: null, status: null, settings: null, fixes: null, detail: new Map() };
    this.autoView = null;
    this.errors = {};
    this.conn.setEndpoint(e);
  }

  async setLevel(level) {
    if (!LEVELS.some((l) => l.id === level)) return;
    const msg = this.panels.settings.querySelector('[data-level-msg]');
    msg.className = 'msg';
    msg.textContent = 'saving…';
    try {
      const r = await this.conn.request('PUT', '/settings', { loop: level });
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
    this.conn.close();
    clearTimeout(this.settleTimer);
    this.host.remove();
  }
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
