//# allFunctionsCalledOnLoad
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
// `resize` was added with footprint v2 (docs/recorder.md): a canvas
// resize reallocates the drawing buffer and moves the frame time's level.
export const HITCH_GUESSES = Object.freeze([
  'shader-compile', 'texture-upload', 'spawn-burst', 'long-render', 'long-script', 'gc-or-upload-by-elimination',
  'resize',
]);

// An upload of at least this many bytes per program compiled in the same
// frame ranks before the compile: a 4096² RGBA texture (64 MiB, more with
// mipmaps) next to one trivial new material is an upload; twelve new
// programs next to a 1 MiB texture are a compile.
export const UPLOAD_PER_PROGRAM = 8 * 1024 * 1024;
// A named script is the frame's cause only when it covers at least this
// share of the page's time outside render — the part of it the browser's
// Long Animation Frames entries cover (footprint.js keys it the same way).
export const SCRIPT_SHARE_MIN = 0.5;

// Per-frame fields, one typed array each.
// `anim` is the animation frame's time (what the game's callbacks were
// given); `cam` holds CAMF numbers a frame: the camera the frame rendered
// with, for a view snapshot (viewAt).
const F64 = ['end', 'frameMs', 'insideMs', 'selfMs', 'anim'];
const I32 = ['frame', 'flags', 'calls', 'triangles', 'points', 'lines', 'geometries', 'textures', 'programs', 'spawned'];
export const FLAG_PAUSED = 1;     // never judged, never in a median (a hidden page, phase 'paused', the panel open)
export const FLAG_RESIZE = 2;     // the canvas's drawing buffer changed size in this frame
export const FLAG_PANEL = 4;      // held because the sloptimize panel was open (with FLAG_PAUSED)
// The camera a frame rendered with: position xyz, quaternion xyzw (its
// own, relative to its parent), then fov, zoom, near, far, aspect (a
// perspective camera; NaN where the camera has none), then left, right,
// top, bottom (an orthographic one).  NaN everywhere: no camera.
export const CAMF = 16;
// how many frames before a hitch its view snapshot starts (seed §5)
export const VIEW_BEFORE = 30;

export class FrameRing {
  constructor(capacity = RING_FRAMES) {
    this.capacity = capacity;
    this.count = 0;
    this.head = 0;            // the slot the next push writes
    for (const k of F64) this[k] = new Float64Array(capacity);
    for (const k of I32) this[k] = new Int32Array(capacity);
    this.scratch = new Float64Array(capacity);
    this.cam = new Float64Array(capacity * CAMF).fill(NaN);
  }

  // Write camera c (a three.js camera, or null) into slot s: numbers
  // only, nothing allocated (a field a camera lacks is NaN).
  camInto(s, c) {
    const a = this.cam, o = s * CAMF;
    if (c === null || !c.position || !c.quaternion) { a.fill(NaN, o, o + CAMF); return; }
    const p = c.position, q = c.quaternion;
    a[o] = p.x; a[o + 1] = p.y; a[o + 2] = p.z;
    a[o + 3] = q.x; a[o + 4] = q.y; a[o + 5] = q.z; a[o + 6] = q.w;
    a[o + 7] = c.isPerspectiveCamera ? c.fov : NaN;
    a[o + 8] = typeof c.zoom === 'number' ? c.zoom : NaN;
    a[o + 9] = typeof c.near === 'number' ? c.near : NaN;
    a[o + 10] = typeof c.far === 'number' ? c.far : NaN;
    a[o + 11] = c.isPerspectiveCamera ? c.aspect : NaN;
    const ortho = c.isOrthographicCamera === true;
    a[o + 12] = ortho ? c.left : NaN; a[o + 13] = ortho ? c.right : NaN;
    a[o + 14] = ortho ? c.top : NaN; a[o + 15] = ortho ? c.bottom : NaN;
  }

  /*
   * The view of the frames from `before` frames before frame number
   * `frame` to the newest (at most `after` past it): [{frame, t, camera}]
   * oldest first — t the animation frame's time, camera {position,
   * quaternion, fov…} with only the fields it had.  null when the ring no
   * longer holds the first of them (the task that asks came too late).
   */
  viewAt(frame, before = VIEW_BEFORE, after = 8) {
    const out = [];
    const r = (v, k) => Math.round(v * k) / k;
    // newest first, as far back as `before` and no further: the frames go
    // up slot by slot, so forty slots are read, not the ring's 600 (a
    // record's path runs cold, in V8's interpreter)
    for (let i = 0; i < this.count; i++) {
      const s = this.back(i);
      const f = this.frame[s];
      if (f > frame + after) continue;
      if (f < frame - before) break;
      const a = this.cam, o = s * CAMF;
      const t = this.anim[s] === this.anim[s] ? this.anim[s] : this.end[s];
      const view = { frame: f, t: r(t, 1000) };
      if (a[o] === a[o]) {
        const cam = { position: [r(a[o], 1e4), r(a[o + 1], 1e4), r(a[o + 2], 1e4)],
          quaternion: [r(a[o + 3], 1e6), r(a[o + 4], 1e6), r(a[o + 5], 1e6), r(a[o + 6], 1e6)] };
        const names = ['fov', 'zoom', 'near', 'far', 'aspect', 'left', 'right', 'top', 'bottom'];
        for (let k = 0; k < names.length; k++) if (a[o + 7 + k] === a[o + 7 + k]) cam[names[k]] = r(a[o + 7 + k], 1e6);
        view.camera = cam;
      }
      out.push(view);
    }
    out.reverse();
    if (out.length === 0 || out[0].frame !== frame - before) return null;
    return out;
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
  // With `fromAt`, only frames that ended after out[fromAt] (a resize
  // re-bases the level).
  medianInto(field, out, i, fromAt = -1) {
    const n = fromAt >= 0 ? this.gather(field, out[fromAt]) : this.gather(field);
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
 * textures, uploadBytes, spawned, calls}: what moved in the frame before it).
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

const mb = (bytes) => `${r1(bytes / 1048576)} MB`;

export function classifyFrame(f, { spawnBurst = 50 } = {}) {
  const out = [];
  const d = f.delta || {};
  const programs = d.programs | 0, textures = d.textures | 0, geometries = d.geometries | 0;
  const bytes = f.uploadBytes > 0 ? f.uploadBytes : 0;
  const inside = f.insideMs || 0;
  const self = f.recorderMs > 0 ? f.recorderMs : 0;
  // the recorder's own work is not the game's: it is taken out of the
  // time the verdict weighs, and said
  const outside = Math.max(0, f.frameMs - inside - self);
  const game = Math.max(inside, f.frameMs - self);
  const insideShare = game > 0 ? inside / game : 0;
  const inRender = `${r1(inside)} of ${r1(f.frameMs)} ms inside render`;
  const selfNote = self >= 0.1 ? `; the recorder's own work took ${r1(self)} ms of this frame (left out of this verdict)` : '';

  if (f.resized) {
    const [w0, h0] = f.resized.from, [w1, h1] = f.resized.to;
    out.push({ guess: 'resize', confidence: 'high',
      evidence: `the canvas's drawing buffer went from ${w0}×${h0} to ${w1}×${h1} in this frame: it was reallocated, ` +
        `and frames after it are judged against their own level once there are enough of them${selfNote}` });
  }
  // counter evidence, ranked by its cost: a big upload before a trivial compile
  const compile = programs > 0 ? { guess: 'shader-compile', confidence: insideShare >= 0.5 ? 'high' : 'medium',
    evidence: `programs +${programs} in the hitch frame, ${inRender}${selfNote}` } : null;
  let upload = null;
  if (textures > 0 || bytes > 0) {
    const big = bytes >= UPLOAD_PER_PROGRAM * Math.max(1, programs);
    const size = bytes > 0 ? ` (about ${mb(bytes)} uploaded, estimated from the new textures' sizes and formats)` : '';
    upload = { guess: 'texture-upload',
      confidence: programs === 0 || big ? (insideShare >= 0.5 ? 'high' : 'medium') : 'low',
      evidence: `textures +${textures}${size}${programs ? `, programs +${programs}` : ', programs +0'} in the hitch frame, ${inRender}${selfNote}` };
    upload.big = big;
  }
  if (upload && compile && upload.big) out.push(upload, { ...compile, confidence: 'low' });
  else {
    if (compile) out.push(compile);
    if (upload) out.push(upload);
  }
  if (upload) delete upload.big;
  if ((f.spawned | 0) >= spawnBurst) {
    const alone = programs === 0 && textures === 0;
    out.push({ guess: 'spawn-burst', confidence: alone ? 'high' : 'medium',
      evidence: `${f.spawned} objects first rendered in the frame (threshold ${spawnBurst})` +
        `${d.calls ? `, draw calls ${d.calls > 0 ? '+' : ''}${d.calls}` : ''}${geometries ? `, geometries ${geometries > 0 ? '+' : ''}${geometries}` : ''}` });
  }

  const moved = programs !== 0 || textures !== 0 || geometries !== 0;
  const s = f.loaf === 'found' ? f.script : null;
  const share = s && typeof s.share === 'number' ? s.share : s ? 1 : 0;
  const named = s !== null && share >= SCRIPT_SHARE_MIN;
  // The page's time outside render as the browser saw it (its Long
  // Animation Frames entries over the frame, recorder.js loafPageMs), when
  // known; the rest of the time outside render no entry covered: a wait
  // outside the page.
  const page = typeof f.pageMs === 'number' && (f.loaf === 'found' || f.loaf === 'none') ? Math.min(outside, f.pageMs) : NaN;
  const waited = page === page ? outside - page : 0;
  const waitNote = waited >= 1 ? `; no Long Animation Frames entry covered the other ${r1(waited)} ms (a wait outside the page)` : '';
  const scriptEvidence = () => {
    if (s) {
      const where = s.sourceURL ? ` (${s.sourceURL}${s.charPosition >= 0 ? `:${s.charPosition}` : ''})` : '';
      const who = `${s.name || '(anonymous)'}${where}, ${r1(s.durationMs)} ms, invoked by ${s.invoker || 'unknown'}`;
      const of = page === page ? `of the ${r1(page)} ms the page's long animation frames covered` : 'of it';
      if (named) {
        return `${r1(outside)} of ${r1(f.frameMs)} ms outside render; the script that ran long: ${who}, ` +
          `covering ${r1(s.coveredMs ?? s.durationMs)} ms ${of} (${Math.round(share * 100)} %)${waitNote}${selfNote}`;
      }
      return `${r1(outside)} of ${r1(f.frameMs)} ms outside render; the longest script the browser named, ${who}, ` +
        `covered ${r1(s.coveredMs ?? s.durationMs)} ms ${of} (${Math.round(share * 100)} %): not what the frame waited on${waitNote}${selfNote}`;
    }
    const why = f.loaf === 'unsupported'
      ? 'this browser has no Long Animation Frames API, so the script is not named'
      : f.loaf === 'short' ? 'the Long Animation Frames API reports no frame under 50 ms, so the script is not named'
        : 'the Long Animation Frames API named no script for this frame';
    return `${r1(outside)} of ${r1(f.frameMs)} ms outside render; ${why}${waitNote}${selfNote}`;
  };

  // The frame after a compile, an upload or a crowd, held back outside
  // render with no script that explains it: the GPU process finishing
  // that work (SwiftShader links a program, takes a big upload or draws a
  // thousand new meshes after three.js's render call has returned; the
  // next animation frame waits for it, the main thread idle).  Its stall
  // is that work's.
  const bp = f.before ? f.before.programs | 0 : 0, bt = f.before ? f.before.textures | 0 : 0;
  const bb = f.before && f.before.uploadBytes > 0 ? f.before.uploadBytes : 0;
  const bs = f.before && (f.before.spawned | 0) >= spawnBurst ? f.before.spawned | 0 : 0;
  const heldBack = out.length === 0 && insideShare < 0.5 && (bp > 0 || bt > 0 || bb > 0 || bs > 0) && !named;
  if (heldBack) {
    const held = `then ${r1(outside)} of ${r1(f.frameMs)} ms outside render with no script that explains it: ` +
      `the GPU process finishing it held this frame back${selfNote}`;
    const upFirst = (bt > 0 || bb > 0) && (bp === 0 || bb >= UPLOAD_PER_PROGRAM * bp);
    const upTxt = `textures +${bt}${bb > 0 ? ` (about ${mb(bb)})` : ''} in the frame before, ${held}`;
    if (upFirst) out.push({ guess: 'texture-upload', confidence: 'medium', evidence: upTxt });
    if (bp > 0) out.push({ guess: 'shader-compile', confidence: upFirst ? 'low' : 'medium', evidence: `programs +${bp} in the frame before, ${held}` });
    if (!upFirst && (bt > 0 || bb > 0)) out.push({ guess: 'texture-upload', confidence: 'low', evidence: upTxt });
    if (bs > 0) {
      const bc = f.before.calls | 0;
      out.push({ guess: 'spawn-burst', confidence: out.length === 0 ? 'medium' : 'low',
        evidence: `${bs} objects first rendered in the frame before (threshold ${spawnBurst})${bc ? `, draw calls ${bc > 0 ? '+' : ''}${bc} in it` : ''}, ${held}` });
    }
  }

  if (out.length === 0) {
    // no entry over the frame, or entries over less than half of its
    // time outside render (and 50 ms or more uncovered): most of it was
    // a wait outside the page, whatever sliver of script came before or
    // after — one phenomenon, one verdict, however much of an entry came
    const mostlyWaited = waited >= 50 && waited >= 0.5 * outside;
    const idle = insideShare < 0.5 && (f.loaf === 'absent' || mostlyWaited);
    if (insideShare >= 0.5) {
      out.push({ guess: 'long-render', confidence: 'medium',
        evidence: `${inRender}${geometries ? `, geometries ${geometries > 0 ? '+' : ''}${geometries}` : ', no counter moved'}${selfNote}` });
    } else if (idle) {
      // The browser reports every frame of 50 ms or more in which script,
      // a collection or its own work held the main thread; none came for
      // this one, so the main thread waited: on the GPU process, the
      // compositor or the machine.  Not a script.
      const sliver = s ? `; the longest script it named, ${s.name || '(anonymous)'}, covered ${r1(s.coveredMs ?? s.durationMs)} ms` : '';
      const what = f.loaf === 'absent'
        ? 'the browser made no Long Animation Frames entry for the frame: nothing held the main thread for 50 ms of it'
        : `the browser's Long Animation Frames entries covered only ${r1(page)} ms of it${sliver}: for the other ${r1(waited)} ms nothing held the main thread for 50 ms`;
      out.push({ guess: 'gc-or-upload-by-elimination', confidence: moved ? 'low' : 'medium',
        evidence: `${r1(outside)} of ${r1(f.frameMs)} ms outside render, and ${what}, so the wait was outside the page ` +
          `(the GPU process, the compositor or the machine)${moved ? `; geometries ${geometries > 0 ? '+' : ''}${geometries}` : '; no counter moved'}${selfNote}` });
    } else {
      out.push({ guess: 'long-script', confidence: named ? 'high' : s ? 'low' : 'medium', evidence: scriptEvidence() });
    }
    if (!moved && !idle) {
      out.push({ guess: 'gc-or-upload-by-elimination', confidence: 'low',
        evidence: `no counter moved (programs, textures, geometries +0)${f.heapDropMb > 0 ? `; JS heap fell ${r1(f.heapDropMb)} MB` : ''}` });
    }
  } else if (!heldBack && !f.resized && insideShare < 0.5 && outside > 2 * (f.medianMs || 0) && outside > 0) {
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
    // a record older than the one that took the interval, made after it
    // (its hitch waited behind a waking one: recorder.js, RECORDS_PER_TASK),
    // goes as it would have gone first; it does not take the interval
    if (last !== undefined && now < last[0] && this.used < this.sessionCap) { this.used++; return true; }
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
