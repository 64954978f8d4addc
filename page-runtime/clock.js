// clock.js — the virtual clock a bench runs the game under (DESIGN §16).
//
// Installed before any game script — by the launched browser (the CLI
// hands it to CDP's Page.addScriptToEvaluateOnNewDocument) or by the Vite
// plugin's bootstrap — it replaces what a three.js game reads time and
// chance from:
//
//   performance.now()        the frame's virtual time, frozen inside a frame
//   Date.now(), new Date()   the wall clock at install, plus virtual time
//   requestAnimationFrame    callbacks queued, run by step() with the
//                            frame's virtual timestamp
//   Math.random()            a seeded generator (mulberry32)
//
// Two modes.  'virtual': the game is paused until step() runs one frame,
// exactly 1/60 s later than the last (frame n is at n × 1000/60 ms,
// computed afresh each time, so nothing drifts).  'passthrough': every
// replacement hands the call to the browser's own — the game runs in real
// time and cannot tell — until a bench calls engage(), and again after
// release().  The launched browser installs in 'virtual' mode (the game
// is pinned from its first line, so two page loads draw the same frames);
// the dev tab installs in 'passthrough' when a bench first runs there
// (the developer plays; a bench pins it only while it runs; not at load,
// where its requestAnimationFrame would hide the game's callbacks from
// Long Animation Frames — bench.js).  Either way the bench calls the same
// functions: engage() is a no-op on a clock that is already virtual.
//
// What it cannot pin — setTimeout/setInterval, Workers, audio
// (AudioContext.currentTime), event timestamps, CSS animations, video, a
// game's own wall clock from the network — is listed in docs/bench.md.
//
// real() is the browser's own performance.now, kept for measuring.
//
// This file is also injected as a classic script (the Makefile strips its
// `export` keywords into build/gen/pagebench.js): no imports, and exports
// only as `export function` / `export const`.

export const TICK_MS = 1000 / 60;
export const CLOCK_MODE = 'virtual-60hz';

// mulberry32: a small, fast, well-mixed 32-bit generator — what a game
// needs from Math.random, reproducible from a seed.
export function seededRandom(seed) {
  let a = seed >>> 0;
  return function random() {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/*
 * installClock(g, {mode, seed}) → the clock, once per global (a second
 * call returns the first clock: the launched browser's injection and the
 * dev bootstrap may both try).  g is the page's globalThis, or a plain
 * object with the same members in tests.
 */
export function installClock(g = globalThis, { mode = 'passthrough', seed = 1 } = {}) {
  if (g.__sloptimizeClock) return g.__sloptimizeClock;
  const perf = g.performance;
  const realNow = perf.now.bind(perf);
  const RealDate = g.Date;
  const realDateNow = RealDate.now.bind(RealDate);
  const realRaf = typeof g.requestAnimationFrame === 'function' ? g.requestAnimationFrame.bind(g) : null;
  const realCancel = typeof g.cancelAnimationFrame === 'function' ? g.cancelAnimationFrame.bind(g) : null;
  const realRandom = g.Math.random;

  let virtual = false;
  let frame = 0;           // frames stepped since engage
  let base = 0;            // performance.now() at engage
  let baseDate = 0;        // Date.now() at engage
  let shift = 0;           // added to real time after a release: never backwards
  let extra = 0;           // added to the virtual time by step(to) (a replay's recorded times)
  let random = realRandom;
  let nextId = 0;
  // id → callback, run by the next step(); the frame under way runs from
  // the other map, swapped in (no allocation a frame), so a callback that
  // cancels another of its own frame stops it, as in a browser
  let queue = new Map(), batch = new Map();
  const pending = new Map();   // id → [real id, callback]: passthrough requests
  const errors = { count: 0, first: null };
  let stepTime = 0, ran = 0;
  function runOne(cb) {
    ran++;
    try {
      cb(stepTime);
    } catch (e) {
      errors.count++;
      if (errors.first === null) errors.first = String((e && e.stack) || e).split('\n').slice(0, 2).join(' ');
      if (typeof g.reportError === 'function') g.reportError(e);
    }
  }

  const vnow = () => base + (frame * 1000) / 60 + extra;
  const now = () => (virtual ? vnow() : realNow() + shift);
  const dateNow = () => (virtual ? Math.floor(baseDate + (frame * 1000) / 60 + extra) : realDateNow());

  function requestAnimationFrame(cb) {
    if (typeof cb !== 'function') throw new TypeError("requestAnimationFrame: the argument is not a function");
    const id = ++nextId;
    if (virtual || !realRaf) {
      queue.set(id, cb);
      return id;
    }
    // a passthrough request made just before a bench engages the clock
    // must not run on real time afterwards: it moves to the queue
    const rid = realRaf((t) => {
      pending.delete(id);
      if (virtual) queue.set(id, cb);
      else cb(t + shift);
    });
    pending.set(id, [rid, cb]);
    return id;
  }

  function cancelAnimationFrame(id) {
    queue.delete(id);
    batch.delete(id);
    const p = pending.get(id);
    if (p) {
      if (realCancel) realCancel(p[0]);
      pending.delete(id);
    }
  }

  // new Date() with no argument reads the clock too; with arguments it is
  // the browser's own.  Called without new it returns a string, as Date().
  function VDate(...args) {
    if (!new.target) return new RealDate(dateNow()).toString();
    return Reflect.construct(RealDate, args.length ? args : [dateNow()], new.target);
  }
  VDate.prototype = RealDate.prototype;
  VDate.now = dateNow;
  VDate.parse = RealDate.parse;
  VDate.UTC = RealDate.UTC;

  perf.now = now;
  g.Date = VDate;
  g.requestAnimationFrame = requestAnimationFrame;
  g.cancelAnimationFrame = cancelAnimationFrame;
  g.Math.random = function () { return random(); };

  const clock = {
    get mode() { return virtual ? 'virtual' : 'passthrough'; },
    get frame() { return frame; },
    get queued() { return queue.size; },
    errors,
    real: realNow,
    realRaf,
    now,

    // Pin the game: from here it moves only by step().  Returns true when
    // this call engaged it (the caller releases it), false when it was
    // virtual already.  `at`: the time performance.now() says from here
    // (a replay starts at its snapshot's time; the page's own otherwise).
    engage({ seed: s = seed, at = null } = {}) {
      if (virtual) return false;
      base = Number.isFinite(at) ? at : now();
      baseDate = realDateNow() + (base - now());
      frame = 0;
      extra = 0;
      random = seededRandom(s);
      virtual = true;
      for (const [id, [rid, cb]] of pending) {
        if (realCancel) realCancel(rid);
        queue.set(id, cb);
      }
      pending.clear();
      return true;
    },

    // Back to real time: performance.now() carries on from the virtual
    // time it had reached if that is ahead of the real one (a game's dt
    // is never negative), and the queued callbacks go to the browser.
    release() {
      if (!virtual) return;
      const v = vnow();
      virtual = false;
      shift = Math.max(0, v - realNow());
      random = realRandom;
      const waiting = [...queue];
      queue.clear();
      for (const [id, cb] of waiting) {
        if (!realRaf) { queue.set(id, cb); continue; }
        const rid = realRaf((t) => { pending.delete(id); if (virtual) queue.set(id, cb); else cb(t + shift); });
        pending.set(id, [rid, cb]);
      }
    },

    // One frame: time moves 1/60 s — or to `to`, a time recorded for this
    // frame (a replay; never backwards) — and the callbacks queued before
    // this call run with that time (those they queue wait for the next
    // step).  A callback that throws is counted and reported, and the
    // rest run, as in a browser.  Returns how many ran.
    step(to) {
      if (!virtual) throw new Error('clock.step(): the clock is not engaged');
      const was = vnow();
      frame++;
      if (to !== undefined && Number.isFinite(to)) extra += Math.max(to, was) - vnow();
      stepTime = vnow();
      const run = queue;
      queue = batch;
      batch = run;
      ran = 0;
      run.forEach(runOne);
      run.clear();
      return ran;
    },
  };
  if (mode === 'virtual') clock.engage({ seed });
  Object.defineProperty(g, '__sloptimizeClock', { value: clock, configurable: true });
  return clock;
}
