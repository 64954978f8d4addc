// relay.js — the open tab's end of the daemon's command relay (DESIGN §16,
// docs/api.md "The relay"): `sloptimize bench`, `gate` and `attribute`
// without --launch reach the game the developer has open through here.
//
// The page registers on the daemon's events socket with a `page` message
// (its URL, title, whether it is visible, the scenes it names) and says it
// again when it is hidden or shown.  The daemon sends a `command`
// ({id, verb, options}); the verb is one of the bench runtime's long calls
// (run, capture, census, attribute, repro — the same the launched browser calls
// through CDP) and nothing else: a command is data, never script.  While
// it runs the page sends `progress` twice a second (a main thread that
// hangs stops sending it, which is how the CLI tells a hang from a long
// bench) and then one `answer` ({ok, result} or {ok: false, error}).
//
// ES module, no dependencies.  dev.js starts it on a game's dev page;
// a page opened for a launched bench never registers.
const API = '/api/sloptimize';
const VERBS = new Set(['run', 'capture', 'census', 'attribute', 'repro']);
const PROGRESS_MS = 500;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30000;

/*
 * startRelay({api, endpoint, WebSocket, document, location, before, after}) →
 * {update(), stop(), state()}.  api: globalThis.sloptimize (its bench).  endpoint:
 * the daemon's origin as the page reaches it ('' or the page's own origin
 * through the plugin's proxy).  before(verb) is called as a command
 * starts, after(verb, result) once it ends, ok or not (dev.js starts
 * again the recorder the bench stopped).
 */
export function startRelay({ api, endpoint = '', WebSocket = globalThis.WebSocket, document = globalThis.document,
  location = globalThis.location, before = null, after = null, setTimeout: st = globalThis.setTimeout, clearTimeout: ct = globalThis.clearTimeout,
  setInterval: si = globalThis.setInterval, clearInterval: ci = globalThis.clearInterval } = {}) {
  const s = { ws: null, retries: 0, timer: null, stopped: false, busy: null, commands: 0, lastError: null };
  if (typeof WebSocket !== 'function') return { stop() {}, state: () => ({ state: 'offline', why: 'this page has no WebSocket' }) };

  const base = (endpoint || (location ? location.origin : '')).replace(/^http/, 'ws');
  const visible = () => !document || document.visibilityState !== 'hidden';
  const send = (m) => {
    if (s.ws && s.ws.readyState === 1) s.ws.send(JSON.stringify(m));
  };
  const pageMessage = () => ({
    type: 'page',
    v: 1,
    url: location ? String(location.href) : '',
    title: document && typeof document.title === 'string' ? document.title.slice(0, 200) : '',
    visible: visible(),
    userAgent: globalThis.navigator && typeof navigator.userAgent === 'string' ? navigator.userAgent.slice(0, 300) : '',
    scenes: api.bench && typeof api.bench.scenes === 'function' ? api.bench.scenes().slice(0, 64) : [],
  });
  const onVisibility = () => send(pageMessage());

  // While a command runs the game is driven by the bench (paused, stepped
  // on its clock): the person looking at the tab is told why, at the top
  // of the page and out of the pointer's way.  Not on the canvas: a frame
  // the gate captures is the canvas alone.
  function banner(text) {
    try {
      if (!document || !document.body || typeof document.createElement !== 'function') return;
      let el = document.querySelector('.sloptimize-relay-banner');
      if (text === null) {
        if (el) el.remove();
        return;
      }
      if (!el) {
        el = document.createElement('div');
        el.className = 'sloptimize-relay-banner';
        el.setAttribute('role', 'status');
        el.style.cssText = 'position:fixed;top:0;left:50%;transform:translateX(-50%);z-index:2147483647;pointer-events:none;' +
          'font:12px/1.4 system-ui,sans-serif;background:rgba(20,20,28,.88);color:#f0f0f0;padding:4px 10px;border-radius:0 0 6px 6px';
        document.body.appendChild(el);
      }
      el.textContent = text;
    } catch (e) { /* a page without a DOM to speak of: nothing said there */ }
  }
  const what = (m) => (m.verb === 'repro' && !(m.options && m.options.scene) ? 'repro of a hitch in this tab'
    : `${m.verb === 'run' ? 'bench' : m.verb} of scene '${String((m.options && m.options.scene) || '?').slice(0, 64)}'`);
  const bannerText = (m, p) => `sloptimize: ${what(m)} ` +
    `asked by the CLI — the game is stepped by the bench${p && p.phase ? ` (${p.phase}${p.frames ? ` ${p.frame}/${p.frames}` : ''})` : ''}`;
  if (document && typeof document.addEventListener === 'function') document.addEventListener('visibilitychange', onVisibility);

  async function run(m) {
    const id = m.id;
    if (!Number.isInteger(id) || id < 1) return;
    const answer = (ok, x) => send(ok ? { type: 'answer', id, ok: true, result: x } : { type: 'answer', id, ok: false, error: String(x) });
    if (!VERBS.has(m.verb)) return answer(false, `the page runtime has no command '${String(m.verb).slice(0, 40)}'`);
    if (s.busy !== null) return answer(false, `this page is running command ${s.busy} still`);
    const fn = api.bench && api.bench[m.verb];
    if (typeof fn !== 'function') return answer(false, `this page's sloptimize runtime has no bench.${m.verb}() (an older page runtime?)`);
    s.busy = id;
    s.commands++;
    if (before) {
      try { before(m.verb); } catch (e) { /* the command runs whatever before() did */ }
    }
    const tell = () => {
      let p = null;
      try { p = api.bench.progress(); } catch (e) { p = { phase: 'unknown', error: String((e && e.message) || e) }; }
      send({ type: 'progress', id, progress: p });
      banner(bannerText(m, p));
    };
    // the call first: its synchronous start names its phase, so the
    // first progress is this command's, not the last one's 'done'
    let pending;
    try {
      pending = Promise.resolve(fn(m.options && typeof m.options === 'object' ? m.options : {}));
    } catch (e) {
      pending = Promise.reject(e);
    }
    tell();
    const tick = si(tell, PROGRESS_MS);
    let ok = false;
    let out;
    try {
      out = await pending;
      ok = true;
    } catch (e) {
      out = (e && e.message) || e;
    } finally {
      ci(tick);
      s.busy = null;
      banner(null);
    }
    if (after) {
      try { after(m.verb, ok ? out : null); } catch (e) { /* the answer goes out whatever after() did */ }
    }
    answer(ok, out);
    send(pageMessage());
  }

  function connect() {
    if (s.stopped) return;
    let ws;
    try {
      ws = new WebSocket(`${base}${API}/events`);
    } catch (e) {
      s.lastError = String((e && e.message) || e);
      retry();
      return;
    }
    s.ws = ws;
    ws.onopen = () => {
      s.retries = 0;
      s.lastError = null;
      send(pageMessage());
    };
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      if (m && m.type === 'command') run(m);
      // `cancel`: a bench under way cannot be stopped half-way; the daemon
      // keeps this page busy until it answers, and drops the answer
    };
    ws.onerror = () => { s.lastError = 'the events socket failed'; };
    ws.onclose = () => {
      if (s.ws !== ws) return;
      s.ws = null;
      retry();
    };
  }

  function retry() {
    if (s.stopped) return;
    const n = s.retries++;
    const wait = Math.round(Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** n) * (0.8 + Math.random() * 0.4));
    s.timer = st(connect, wait);
  }

  connect();
  return {
    // the page changed what it says of itself (a scene named after load)
    update() { send(pageMessage()); },
    stop() {
      s.stopped = true;
      ct(s.timer);
      if (document && typeof document.removeEventListener === 'function') document.removeEventListener('visibilitychange', onVisibility);
      if (s.ws) {
        const ws = s.ws;
        s.ws = null;
        try { ws.close(); } catch (e) { /* closing a socket that failed */ }
      }
    },
    state: () => ({ state: s.ws && s.ws.readyState === 1 ? 'live' : 'connecting', busy: s.busy, commands: s.commands, lastError: s.lastError }),
  };
}
