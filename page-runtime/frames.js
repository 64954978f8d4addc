// frames.js — the recorder's frame statistics: a fixed ring of per-frame
// samples, nearest-rank percentiles, the hitch rule, the classifier of
// seed §3.3 and the rate limits.  Pure: no DOM, no timers, no three.js;
// recorder.js feeds it and node's tests drive it directly.
//
// The ring is a set of typed arrays allocated once: pushing a sample
// writes numbers into slots and allocates nothing, which is what keeps the
// recorder's steady path free of garbage.  Everything that builds objects
// or strings (summaries, classifications) runs only when a record is made.

export const RING_FRAMES = 600;

// The closed vocabulary of a hitch's classification (seed §3.3).  A new
// guess is a change to the spec, never a string made up on the spot.
export const HITCH_GUESSES = Object.freeze([
  'shader-compile', 'texture-upload', 'spawn-burst', 'long-render', 'long-script', 'gc-or-upload-by-elimination',
]);

// Per-frame fields, one typed array each.
const F64 = ['end', 'frameMs', 'insideMs'];
const I32 = ['frame', 'flags', 'calls', 'triangles', 'points', 'lines', 'geometries', 'textures', 'programs', 'spawned'];
export const FLAG_PAUSED = 1;

export class FrameRing {
  constructor(capacity = RING_FRAMES) {
    this.capacity = capacity;
    this.count = 0;
    this.head = 0;            // the slot the next push writes
    for (const k of F64) this[k] = new Float64Array(capacity);
    for (const k of I32) this[k] = new Int32Array(capacity);
    this.scratch = new Float64Array(capacity);
  }

  // The slot a push of the next frame writes; fill its fields, then commit().
  slot() { return this.head; }

  commit() {
    this.head = (this.head + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  // Slot of the i-th newest frame (0 = the newest), or -1.
  back(i) {
    if (i < 0 || i >= this.count) return -1;
    return (this.head - 1 - i + this.capacity * 2) % this.capacity;
  }

  // Copy a field of the unpaused frames whose end lies in (from, to] into
  // the scratch array; returns how many.  Allocates nothing.
  gather(field, from = -Infinity, to = Infinity) {
    const src = this[field];
    let n = 0;
    for (let i = 0; i < this.count; i++) {
      const s = this.back(i);
      const e = this.end[s];
      if (e <= from) break;
      if (e > to || (this.flags[s] & FLAG_PAUSED)) continue;
      this.scratch[n++] = src[s];
    }
    return n;
  }

  // Nearest-rank percentile (q in (0, 1]) of a field over a window; NaN
  // when the window holds no frame.  Sorts the scratch array in place.
  percentile(field, q, from, to) {
    const n = this.gather(field, from, to);
    if (n === 0) return NaN;
    return select(this.scratch, n, Math.min(n, Math.max(1, Math.ceil(q * n))) - 1);
  }

  // Median of the nearest-rank kind (the lower middle of an even count),
  // the statistic the hitch rule is relative to.
  median(field, from, to) { return this.percentile(field, 0.5, from, to); }

  // median() of a field over the whole ring, into out[i]: for a caller on
  // the per-frame path, where a double returned by a call (or an index
  // computed in doubles) can be a heap number per call.
  medianInto(field, out, i) {
    const n = this.gather(field);
    if (n === 0) { out[i] = NaN; return; }
    const k = (n - 1) >> 1;        // nearest rank: ceil(n / 2) − 1
    partition(this.scratch, n, k);
    out[i] = this.scratch[k];
  }
}

// The k-th smallest (0-based) of the first n values of `a`, in place
// (Hoare's selection, median-of-three pivot).  Not TypedArray.sort: V8's
// copies the elements into a work array on every call, an allocation the
// steady path cannot have.
export function select(a, n, k) {
  partition(a, n, k);
  return a[k];
}

// Reorder the first n values of `a` so that a[k] is the k-th smallest.
function partition(a, n, k) {
  let lo = 0, hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // median of three into a[mid]
    if (a[mid] < a[lo]) { const t = a[mid]; a[mid] = a[lo]; a[lo] = t; }
    if (a[hi] < a[lo]) { const t = a[hi]; a[hi] = a[lo]; a[lo] = t; }
    if (a[hi] < a[mid]) { const t = a[hi]; a[hi] = a[mid]; a[mid] = t; }
    const pivot = a[mid];
    let i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) { const t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

// seed §3.3: a non-paused frame is a hitch when its delta exceeds both the
// relative guard (twice the rolling median) and the absolute one (1.5 ×
// the budget), so a game at 30 fps by design does not report every frame.
export function hitchThreshold(medianMs, budgetFrameMs) {
  const rel = Number.isFinite(medianMs) ? 2 * medianMs : 0;
  return Math.max(rel, 1.5 * budgetFrameMs);
}

export function isHitch(frameMs, medianMs, budgetFrameMs, paused = false) {
  return !paused && frameMs > hitchThreshold(medianMs, budgetFrameMs);
}

const r1 = (v) => Math.round(v * 10) / 10;

/*
 * The ranked guesses for one long frame.  `f` carries what the recorder
 * measured: frameMs, medianMs, insideMs (time inside renderer.render),
 * delta {programs, textures, geometries, calls}, spawned (objects first
 * seen in the frame), and optionally script (the Long Animation Frames
 * attribution: {name, sourceURL, charPosition, invoker, durationMs}),
 * loaf ('unsupported' | 'short' | 'none' | 'found' | 'absent': the
 * browser made no entry for the frame at all) and before ({programs,
 * textures}: the counters of the frame before it).
 *
 * Counter evidence ranks first, because a counter that moved is a fact,
 * while the split between inside and outside render is an inference.
 * Every guess carries the evidence it rests on.
 */
// Has the browser said all it will of a frame that ended at `to`?  Long
// Animation Frames entries come in order and do not overlap, so once one
// has arrived that ends at or after `to`, no later entry can hold a script
// of that frame: a hitch waiting for its script stops waiting, found or not.
export function loafSettled(entries, to) {
  for (const e of entries) if (e.startTime + e.duration >= to) return true;
  return false;
}

// Has the browser made an entry for any part of the frame (from, to]?
// Once it has had time to (recorder.js: LOAF_FRAMES), none means nothing
// held the main thread for 50 ms of the frame.
export function loafOverlaps(entries, from, to) {
  for (const e of entries) if (e.startTime < to && e.startTime + e.duration > from) return true;
  return false;
}

export function classifyFrame(f, { spawnBurst = 50 } = {}) {
  const out = [];
  const d = f.delta || {};
  const programs = d.programs | 0, textures = d.textures | 0, geometries = d.geometries | 0;
  const inside = f.insideMs || 0;
  const outside = Math.max(0, f.frameMs - inside);
  const insideShare = f.frameMs > 0 ? inside / f.frameMs : 0;
  const inRender = `${r1(inside)} of ${r1(f.frameMs)} ms inside render`;

  if (programs > 0) {
    out.push({ guess: 'shader-compile', confidence: insideShare >= 0.5 ? 'high' : 'medium',
      evidence: `programs +${programs} in the hitch frame, ${inRender}` });
  }
  if (textures > 0) {
    out.push({ guess: 'texture-upload', confidence: programs === 0 ? (insideShare >= 0.5 ? 'high' : 'medium') : 'low',
      evidence: `textures +${textures}${programs ? `, programs +${programs}` : ', programs +0'} in the hitch frame, ${inRender}` });
  }
  if ((f.spawned | 0) >= spawnBurst) {
    const alone = programs === 0 && textures === 0;
    out.push({ guess: 'spawn-burst', confidence: alone ? 'high' : 'medium',
      evidence: `${f.spawned} objects first rendered in the frame (threshold ${spawnBurst})` +
        `${d.calls ? `, draw calls ${d.calls > 0 ? '+' : ''}${d.calls}` : ''}${geometries ? `, geometries ${geometries > 0 ? '+' : ''}${geometries}` : ''}` });
  }

  const moved = programs !== 0 || textures !== 0 || geometries !== 0;
  const scriptEvidence = () => {
    if (f.loaf === 'found' && f.script) {
      const s = f.script;
      const where = s.sourceURL ? ` (${s.sourceURL}${s.charPosition >= 0 ? `:${s.charPosition}` : ''})` : '';
      return `${r1(outside)} of ${r1(f.frameMs)} ms outside render; the script that ran long: ` +
        `${s.name || '(anonymous)'}${where}, ${r1(s.durationMs)} ms, invoked by ${s.invoker || 'unknown'}`;
    }
    const why = f.loaf === 'unsupported'
      ? 'this browser has no Long Animation Frames API, so the script is not named'
      : f.loaf === 'short' ? 'the Long Animation Frames API reports no frame under 50 ms, so the script is not named'
        : 'the Long Animation Frames API named no script for this frame';
    return `${r1(outside)} of ${r1(f.frameMs)} ms outside render; ${why}`;
  };

  // The frame after a compile or an upload, held back outside render with
  // no script to blame: the GPU process finishing that work (SwiftShader
  // links a program after three.js's render call has returned; the next
  // animation frame waits for it, the main thread idle, so no Long
  // Animation Frames entry will ever come).  Its stall is the compile's.
  const bp = f.before ? f.before.programs | 0 : 0, bt = f.before ? f.before.textures | 0 : 0;
  const heldBack = out.length === 0 && insideShare < 0.5 && (bp > 0 || bt > 0) && !(f.loaf === 'found' && f.script);
  if (heldBack) {
    const held = `then ${r1(outside)} of ${r1(f.frameMs)} ms outside render with no script named: the GPU process finishing it held this frame back`;
    if (bp > 0) out.push({ guess: 'shader-compile', confidence: 'medium', evidence: `programs +${bp} in the frame before, ${held}` });
    else out.push({ guess: 'texture-upload', confidence: 'medium', evidence: `textures +${bt} in the frame before, ${held}` });
  }

  if (out.length === 0) {
    const idle = insideShare < 0.5 && f.loaf === 'absent';
    if (insideShare >= 0.5) {
      out.push({ guess: 'long-render', confidence: 'medium',
        evidence: `${inRender}${geometries ? `, geometries ${geometries > 0 ? '+' : ''}${geometries}` : ', no counter moved'}` });
    } else if (idle) {
      // The browser reports every frame of 50 ms or more in which script,
      // a collection or its own work held the main thread; none came for
      // this one, so the main thread waited: on the GPU process, the
      // compositor or the machine.  Not a script.
      out.push({ guess: 'gc-or-upload-by-elimination', confidence: moved ? 'low' : 'medium',
        evidence: `${r1(outside)} of ${r1(f.frameMs)} ms outside render, and the browser made no Long Animation Frames entry ` +
          `for the frame: nothing held the main thread for 50 ms of it, so the wait was outside the page ` +
          `(the GPU process, the compositor or the machine)${moved ? `; geometries ${geometries > 0 ? '+' : ''}${geometries}` : '; no counter moved'}` });
    } else {
      out.push({ guess: 'long-script', confidence: f.loaf === 'found' && f.script ? 'high' : 'medium', evidence: scriptEvidence() });
    }
    if (!moved && !idle) {
      out.push({ guess: 'gc-or-upload-by-elimination', confidence: 'low',
        evidence: `no counter moved (programs, textures, geometries +0)${f.heapDropMb > 0 ? `; JS heap fell ${r1(f.heapDropMb)} MB` : ''}` });
    }
  } else if (!heldBack && insideShare < 0.5 && outside > 2 * (f.medianMs || 0) && outside > 0) {
    // the counters explain part of it, but most of the time went elsewhere
    out.push({ guess: 'long-script', confidence: 'low', evidence: scriptEvidence() });
  }
  return out;
}

// One record per `intervalMs` per key and `sessionCap` in all; what it
// refuses is counted and handed to the next record that passes (take()).
//
// The recorder keys hitches by their verdict (the top guess): on a loaded
// machine ordinary slow frames are long-script hitches every second or
// so, and one interval for all would let such a frame hide the shader
// compile that lands in the same second.  Per verdict it is still at most
// six a second (the vocabulary is closed), and the cap bounds the session.
//
// Within an interval, a frame at least `escalate` times as long as the
// one that took it, and at least `escalateMinMs` (a hitch that wakes the
// agent), still goes: a 250 ms stall must not be hidden by the 40 ms frame
// that happened to come first.  Each such exception doubles the bar, so a
// second holds only a handful.
export class RateLimit {
  constructor({ intervalMs = 1000, sessionCap = 500, escalate = 2, escalateMinMs = 100 } = {}) {
    this.intervalMs = intervalMs;
    this.sessionCap = sessionCap;
    this.escalate = escalate;
    this.escalateMinMs = escalateMinMs;
    this.last = new Map();    // key → [time, value] of the record that took the interval
    this.used = 0;
    this.dropped = 0;
  }

  // May a record with `key` (and `value`, its frameMs) be made at `now`?
  // A refusal is counted.
  allow(now, key = '', value = 0) {
    const last = this.last.get(key);
    const inInterval = last !== undefined && now - last[0] < this.intervalMs;
    const worse = inInterval && value >= this.escalateMinMs && value >= this.escalate * last[1];
    if (this.used >= this.sessionCap || (inInterval && !worse)) {
      this.dropped++;
      return false;
    }
    this.used++;
    if (worse) last[1] = value;
    else this.last.set(key, [now, value]);
    return true;
  }

  // Charge the cap without the interval check (a usermark: a human press
  // is rate-limited by the human, but counts against the session's cap).
  charge() { this.used++; }

  // The drops not yet said, and forget them.
  take() {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
