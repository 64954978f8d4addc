//# allFunctionsCalledOnLoad
// sender.js — the recorder's requests, made off the page's main thread.
//
// A fetch() call costs the task that makes it its synchronous part:
// building the request, copying the body, handing it to the network
// service.  In headless Chromium that is about 0.5 ms at the median and
// several milliseconds at the worst, and it was the recorder's longest
// task of its own (docs/performance.md, "All in").  Here a dedicated
// worker makes the request; the page's task only posts the body, a string,
// to it.  The worker is made from a Blob URL, so a game serves no extra
// file.  Where no worker can be had — no Worker in this page, a
// Content-Security-Policy whose worker-src refuses blob:, a worker that
// fails to start — requests go through the page's own fetch, and
// `sender.mode` says which and why.  Requests the worker had not answered
// when it failed go again from the page (the daemon answers a batch it
// appended already as a duplicate, so none is appended twice).
//
// A keepalive request (the page is going away) always goes from the page:
// a worker dies with its page.  So does one whose body is not a string.

const WORKER_SOURCE = `onmessage = async (e) => {
  const { id, url, init } = e.data;
  try {
    const r = await fetch(url, init);
    const text = await r.text();
    postMessage({ id, status: r.status, statusText: r.statusText, headers: [...r.headers], text });
  } catch (x) {
    postMessage({ id, error: String((x && x.message) || x) });
  }
};`;

// The worker's answer as the part of a Response the recorder reads.
function response({ status, statusText, headers, text }) {
  const h = new Map(headers);
  return {
    ok: status >= 200 && status < 300, status, statusText,
    headers: { get: (name) => h.get(String(name).toLowerCase()) ?? null },
    text: async () => text,
    json: async () => JSON.parse(text),
  };
}

// sender(url, init) → a promise of a response, like fetch; sender.mode is
// { offThread, why }: where requests went from; sender.close() ends the
// worker (what is sent after it goes from the page).
export function offThreadFetch({ fallback, base = globalThis.location?.href } = {}) {
  const pending = new Map();      // id → {resolve, reject, url, init}
  let worker = null, src = null, next = 0;
  const mode = { offThread: false, why: null };

  function end() {
    if (worker) { worker.onmessage = worker.onerror = null; worker.terminate(); worker = null; }
    if (src) { URL.revokeObjectURL(src); src = null; }
  }

  function giveUp(why) {
    end();
    mode.offThread = false;
    mode.why = why;
    const left = [...pending.values()];
    pending.clear();
    for (const p of left) Promise.resolve().then(() => fallback(p.url, p.init)).then(p.resolve, p.reject);
  }

  if (typeof Worker !== 'function' || typeof Blob !== 'function' || typeof URL?.createObjectURL !== 'function') {
    mode.why = 'this page has no Worker';
  } else {
    try {
      src = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
      worker = new Worker(src);
      mode.offThread = true;
      worker.onmessage = (e) => {
        const d = e.data;
        const p = pending.get(d && d.id);
        if (!p) return;
        pending.delete(d.id);
        if (d.error !== undefined) p.reject(new TypeError(d.error));
        else p.resolve(response(d));
      };
      // a worker refused by the page's policy, or whose script would not
      // load, fails here (and says little: the event has no reason)
      worker.onerror = (e) => {
        if (e && typeof e.preventDefault === 'function') e.preventDefault();
        giveUp(`the worker failed${e && e.message ? `: ${e.message}` : ' to start (a Content-Security-Policy refusing blob: workers?)'}`);
      };
    } catch (e) {
      giveUp(`no worker could be made: ${String((e && e.message) || e).slice(0, 160)}`);
    }
  }

  function send(url, init = {}) {
    // only what a worker can be handed as it is: a string body, headers
    // as a plain object
    if (!worker || init.keepalive || (init.body !== undefined && typeof init.body !== 'string') ||
        (init.headers !== undefined && Object.getPrototypeOf(init.headers) !== Object.prototype)) return fallback(url, init);
    let abs;
    try { abs = new URL(url, base).href; } catch { return fallback(url, init); }
    const id = ++next;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, url, init });
      const { method, headers, body, credentials } = init;
      worker.postMessage({ id, url: abs, init: { method, headers, body, credentials } });
    });
  }
  send.mode = mode;
  send.close = () => {
    const left = [...pending.values()];
    pending.clear();
    for (const p of left) p.reject(new Error('the sender was closed'));
    // (mode stays what it was: where the records went from)
    end();
  };
  return send;
}
