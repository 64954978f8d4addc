//# allFunctionsCalledOnLoad
// motion.js — the motion monitor of seed §3.6: coordinate continuity of a
// few tracked points (the unit the view is arranged around, the camera
// that follows it), turned into `jitter` records.
//
// Per frame and track: a one-step constant-velocity prediction from the two
// previous samples; the residual r = p − p̂ is how far the point landed off
// its own trajectory.  A residual above max(floor, ratio × predicted
// travel) is only a CANDIDATE; it becomes an EVENT when the next frame
// reverses it.  Residuals are compared as velocity anomalies (r / dt), so
// a jump that lands in a 400 ms stall is still confirmed by the 17 ms
// frame after it.  A residual that is not reversed is a change of motion
// (a dash, a boom easing out) and is never reported.  Events at most
// `burstGapFrames` apart fold into one burst: one event is a `snap`, more
// an `oscillation`; a burst posts one record when it closes, or every
// `burstMaxMs` while it goes on.
//
// The host says which frames are HELD (input moved the point on purpose)
// and when the view was CUT (respawn, camera mode flip): both restart the
// prediction, so no judgement spans them.  The monitor never guesses
// intent.  State is typed arrays allocated per track once; only a record
// allocates.  (No Math.hypot on the per-frame path: V8's builtin puts its
// arguments in a fresh array on every call.  No double in an object field
// or an argument either: a double held there can cost a heap number per
// store or per call, so every number a frame touches lives in a typed
// array — `f` (doubles) and `n` (integers) per track, by the indices
// below.)
//
// With `deferred: true` (the recorder's way) a burst that closes inside a
// frame only keeps its figures (the `O_` block) and calls `onPending()`;
// the record — strings, arrays, the classification — is built by
// `flush()`, which the recorder calls from a task after the frame.
//
// Beyond the seed: a burst is an oscillation only when at least two of its
// events are COMPARABLE — at least `comparable` (a quarter) of its largest.
// On a loaded machine one render ends late and the next early while the
// host's simulation steps on its own regular clock: the prediction
// overshoots and then undershoots, a small reversed residual — an event of
// a tenth of a unit.  One of those within `burstGapFrames` of a real
// 2.5-unit snap used to join its burst and make the snap an
// "oscillation"; a real oscillation (a spring fighting, a tug of war)
// reverses by amounts of one size, decaying slowly if at all.
//
// Beyond the seed too: a candidate must also stand `noise` times above the
// track's running residual level (an average over the frames that were
// not candidates).  A host whose simulation steps on its own clock leaves
// a small residual on every frame of a loaded machine, and that residual
// reverses as often as not; without this guard it reads as a stream of
// tiny snaps.

export const JITTER_GUESSES = Object.freeze(['long-frame-catch-up', 'follows-track', 'reach-change', 'snap', 'oscillation']);

const HISTORY = 8;            // recent event frames kept per track, for coincidence
const EV_MAX = 16;            // event sizes kept per open burst (beyond: all counted comparable)

// per-track doubles (t.f): the running residual level; the candidate of
// the previous frame (residual, anomaly, from, to, time, delta, travel,
// speed, reach before/after); the open burst (start, largest event and its
// figures); the rate limit (when and how large the last record was); the
// closed burst waiting for its record (O_, deferred mode)
const LV = 0;
const C_R = 1, C_U = 4, C_FROM = 7, C_TO = 10, C_T = 13, C_DT = 14, C_TRAVEL = 15, C_SPEED = 16, C_REACH0 = 17, C_REACH1 = 18;
const B_START = 19, B_MAX = 20, B_JUMP = 21, B_FROM = 24, B_TO = 27, B_DT = 30, B_TRAVEL = 31, B_SPEED = 32,
  B_REACH0 = 33, B_REACH1 = 34, B_UNITS = 35;
const B_LEN = 17;             // B_START .. B_UNITS
const L_SENT = 36, L_UNITS = 37;
const O_BASE = 38, O_MED = O_BASE + B_LEN;
const F_LEN = O_MED + 1;
// per-track integers (t.n)
const VALID = 0, HELD = 1, CUT = 2, CAND = 3, CFRAME = 4, EVENTS = 5, BFIRST = 6, BLAST = 7, BFRAME = 8,
  RECENT_HEAD = 9, HAS_REACH = 10, O_EVENTS = 11, O_FIRST = 12, O_LAST = 13, O_FRAME = 14, O_NEV = 15;
const N_LEN = 16;

const r3 = (v) => Math.round(v * 1000) / 1000;
const r1 = (v) => Math.round(v * 10) / 10;

function vec(a, i) { return [r3(a[i]), r3(a[i + 1]), r3(a[i + 2])]; }

export class MotionMonitor {
  constructor({ floor = 0.05, ratio = 0.5, noise = 8, comparable = 0.25, longFrameMs = 100, burstGapFrames = 3, burstMaxMs = 2000,
    intervalMs = 1000, sessionCap = 200, onRecord = () => {}, deferred = false, onPending = () => {} } = {}) {
    this.floor = floor;
    this.ratio = ratio;
    this.noise = noise;
    this.comparable = comparable;
    this.longFrameMs = longFrameMs;
    this.burstGapFrames = burstGapFrames;
    this.burstMaxMs = burstMaxMs;
    this.intervalMs = intervalMs;
    this.sessionCap = sessionCap;
    this.onRecord = onRecord;
    this.deferred = deferred;
    this.onPending = onPending;
    this.tracks = [];
    this.byName = new Map();
    this.sent = 0;
    this.dropped = 0;
    this.pending = 0;         // tracks with a closed burst waiting for flush()
    // the frame's clock for step(): [time, delta, median delta] in ms.  A
    // typed array, not arguments: a double passed to a call is boxed.
    this.clock = new Float64Array(3);
  }

  addTrack(name, { follows = null, reachName = null } = {}) {
    if (this.byName.has(name)) throw new Error(`track "${name}" is already tracked`);
    const t = {
      name, follows, reachName, index: this.tracks.length,
      // p: the three last samples [p0 (now), p1, p2] as x,y,z triples
      p: new Float64Array(9), dt: new Float64Array(3), reach: new Float64Array(3),
      f: new Float64Array(F_LEN), n: new Int32Array(N_LEN),
      recent: new Int32Array(HISTORY).fill(-1000),
      ev: new Float64Array(EV_MAX),     // the open burst's event sizes
      oev: new Float64Array(EV_MAX),    // the closed burst's, for its record
    };
    t.f[L_SENT] = -Infinity;
    this.tracks.push(t);
    this.byName.set(name, t);
    return t.index;
  }

  // The next sample of `name` (or every track) is input-driven: do not judge it.
  hold(name) { this.mark(name, HELD); }

  // The view was cut on purpose: forget the trajectory of `name` (or all).
  cut(name) { this.mark(name, CUT); }

  // hold/cut by track index (the recorder's way: no name look-up per frame)
  holdAt(k) { if (k >= 0 && k < this.tracks.length) this.tracks[k].n[HELD] = 1; }

  cutAt(k) { if (k >= 0 && k < this.tracks.length) this.tracks[k].n[CUT] = 1; }

  mark(name, flag) {
    if (name === undefined || name === null) {
      for (let k = 0; k < this.tracks.length; k++) this.tracks[k].n[flag] = 1;
      return;
    }
    const t = this.byName.get(name);
    if (t) t.n[flag] = 1;
  }

  /*
   * One frame: positions (x, y, z per track, in track order, in `pos`) and
   * optional reach values; dtMs is the frame's delta, medianDtMs the
   * rolling median.  Allocation-free unless a record is made.
   */
  frame(frameNo, tMs, dtMs, medianDtMs, pos, reach) {
    this.clock[0] = tMs; this.clock[1] = dtMs; this.clock[2] = medianDtMs;
    this.step(frameNo, pos, reach);
  }

  // frame() with the clock already in this.clock (the recorder's way).
  step(frameNo, pos, reach) {
    const dtMs = this.clock[1];
    const hasReach = reach !== undefined && reach !== null;
    for (let k = 0; k < this.tracks.length; k++) {
      const t = this.tracks[k];
      const p = t.p, n = t.n;
      // shift the history: p2 <- p1 <- p0 <- new
      for (let i = 8; i >= 3; i--) p[i] = p[i - 3];
      p[0] = pos[3 * k]; p[1] = pos[3 * k + 1]; p[2] = pos[3 * k + 2];
      t.dt[2] = t.dt[1]; t.dt[1] = t.dt[0]; t.dt[0] = dtMs;
      t.reach[2] = t.reach[1]; t.reach[1] = t.reach[0];
      const rv = hasReach ? reach[k] : NaN;
      // finite: x − x is 0 for every finite x, NaN for NaN and ±Infinity
      n[HAS_REACH] = rv - rv === 0 ? 1 : 0;
      t.reach[0] = n[HAS_REACH] === 1 ? rv : 0;
      if (n[HELD] !== 0 || n[CUT] !== 0 || !(dtMs > 0)) {
        n[HELD] = 0; n[CUT] = 0;
        n[VALID] = 1; n[CAND] = 0;
        continue;
      }
      if (n[VALID] < 2) { n[VALID]++; continue; }
      this.judge(t, frameNo);
    }
    // close bursts that ended (or have run long), after every track has
    // had its events for this frame, so coincidence is known
    const tMs = this.clock[0];
    for (let k = 0; k < this.tracks.length; k++) {
      const t = this.tracks[k];
      if (t.n[EVENTS] === 0) continue;
      if (frameNo - t.n[BLAST] > this.burstGapFrames || tMs - t.f[B_START] >= this.burstMaxMs) this.close(t, 1);
    }
  }

  judge(t, frameNo) {
    const tMs = this.clock[0], dtMs = this.clock[1];
    const p = t.p, f = t.f, n = t.n, dtPrev = t.dt[1];
    const s = dtMs / dtPrev;
    // p̂ = p1 + (p1 − p2) · dt/dtPrev
    const rx = p[0] - (p[3] + (p[3] - p[6]) * s);
    const ry = p[1] - (p[4] + (p[4] - p[7]) * s);
    const rz = p[2] - (p[5] + (p[5] - p[8]) * s);
    const vx = (p[3] - p[6]) / dtPrev, vy = (p[4] - p[7]) / dtPrev, vz = (p[5] - p[8]) / dtPrev;
    const speed = Math.sqrt(vx * vx + vy * vy + vz * vz);  // units per ms
    const travel = speed * dtMs;
    const ux = rx / dtMs, uy = ry / dtMs, uz = rz / dtMs;  // velocity anomaly

    if (n[CAND] !== 0) {
      n[CAND] = 0;
      const dot = ux * f[C_U] + uy * f[C_U + 1] + uz * f[C_U + 2];
      const n2 = f[C_U] * f[C_U] + f[C_U + 1] * f[C_U + 1] + f[C_U + 2] * f[C_U + 2];
      if (dot < -0.5 * n2) {
        this.event(t);
        return;               // this frame was the reversal, not a new candidate
      }
      // not reversed: a change of motion; this frame is judged on its own
    }
    const units = Math.sqrt(rx * rx + ry * ry + rz * rz);
    // the track's own residual level: a host whose step is not the frame
    // clock (its sim reads rAF time, we read render ends) leaves a
    // residual on every frame; a jump must stand far above it
    const bar = this.ratio * travel > this.floor ? this.ratio * travel : this.floor;
    if (units > bar && units > this.noise * f[LV]) {
      n[CAND] = 1;
      f[C_R] = rx; f[C_R + 1] = ry; f[C_R + 2] = rz;
      f[C_U] = ux; f[C_U + 1] = uy; f[C_U + 2] = uz;
      f[C_FROM] = p[3]; f[C_FROM + 1] = p[4]; f[C_FROM + 2] = p[5];
      f[C_TO] = p[0]; f[C_TO + 1] = p[1]; f[C_TO + 2] = p[2];
      n[CFRAME] = frameNo; f[C_T] = tMs; f[C_DT] = dtMs; f[C_TRAVEL] = travel; f[C_SPEED] = speed * 1000;
      f[C_REACH0] = t.reach[1]; f[C_REACH1] = t.reach[0];
    } else {
      f[LV] = f[LV] === 0 ? units : 0.9 * f[LV] + 0.1 * units;
    }
  }

  // The candidate of the previous frame was reversed: an event.
  event(t) {
    const f = t.f, n = t.n;
    const units = Math.sqrt(f[C_R] * f[C_R] + f[C_R + 1] * f[C_R + 1] + f[C_R + 2] * f[C_R + 2]);
    t.recent[n[RECENT_HEAD]] = n[CFRAME];
    n[RECENT_HEAD] = (n[RECENT_HEAD] + 1) % HISTORY;
    if (n[EVENTS] > 0 && n[CFRAME] - n[BLAST] > this.burstGapFrames) this.close(t, 0);
    if (n[EVENTS] === 0) {
      n[BFIRST] = n[CFRAME]; f[B_START] = f[C_T]; f[B_MAX] = 0;
    }
    if (n[EVENTS] < EV_MAX) t.ev[n[EVENTS]] = units;
    n[EVENTS]++;
    n[BLAST] = n[CFRAME];
    if (units > f[B_MAX]) {       // the burst is told by its largest event
      f[B_MAX] = units;
      for (let i = 0; i < 3; i++) { f[B_JUMP + i] = f[C_R + i]; f[B_FROM + i] = f[C_FROM + i]; f[B_TO + i] = f[C_TO + i]; }
      n[BFRAME] = n[CFRAME]; f[B_DT] = f[C_DT]; f[B_TRAVEL] = f[C_TRAVEL]; f[B_SPEED] = f[C_SPEED];
      f[B_REACH0] = f[C_REACH0]; f[B_REACH1] = f[C_REACH1]; f[B_UNITS] = units;
    }
  }

  hadEvent(t, frame) {
    for (let i = 0; i < HISTORY; i++) if (t.recent[i] === frame) return true;
    return false;
  }

  // The burst of `t` is over: the rate limits decide here, in the frame
  // (numbers only); the record is made now, or by flush() when deferred.
  // withMedian: the frame's median delta (clock[2]) applies; 0 when the
  // burst closed because a new one began (no median said).
  close(t, withMedian) {
    const f = t.f, n = t.n;
    // the events that count: those comparable to the largest (above)
    const all = n[EVENTS];
    let events = all > EV_MAX ? all - EV_MAX : 0;
    const bar = this.comparable * f[B_MAX];
    for (let i = 0; i < all && i < EV_MAX; i++) if (t.ev[i] >= bar) events++;
    n[EVENTS] = 0;
    const now = f[B_START];
    // one a second per track; but a jump at least twice the one that took
    // the second still goes (a real snap is not hidden by the small
    // catch-up of a slow frame just before it), and doubles the bar
    const inInterval = now - f[L_SENT] < this.intervalMs;
    const worse = inInterval && f[B_UNITS] >= 2 * f[L_UNITS];
    if (this.sent >= this.sessionCap || (inInterval && !worse)) {
      this.dropped++;
      return;
    }
    if (!worse) f[L_SENT] = now;
    f[L_UNITS] = f[B_UNITS];
    this.sent++;
    // a record of this track still waiting: make it first (its figures
    // are about to be replaced)
    if (n[O_EVENTS] !== 0) this.build(t);
    for (let i = 0; i < B_LEN; i++) f[O_BASE + i] = f[B_START + i];
    f[O_MED] = withMedian !== 0 ? this.clock[2] : NaN;
    n[O_EVENTS] = events; n[O_FIRST] = n[BFIRST]; n[O_LAST] = n[BLAST]; n[O_FRAME] = n[BFRAME];
    n[O_NEV] = all < EV_MAX ? all : EV_MAX;
    for (let i = 0; i < n[O_NEV]; i++) t.oev[i] = t.ev[i];
    if (!this.deferred) { this.build(t); return; }
    this.pending++;
    this.onPending();
  }

  // Make the records of the bursts that closed since the last flush().
  flush() {
    if (this.pending === 0) return;
    for (let k = 0; k < this.tracks.length; k++) if (this.tracks[k].n[O_EVENTS] !== 0) this.build(this.tracks[k]);
    this.pending = 0;
  }

  // The record of the closed burst of `t` (the O_ block), to onRecord.
  build(t) {
    const f = t.f, n = t.n, o = O_BASE - B_START;
    const events = n[O_EVENTS];
    n[O_EVENTS] = 0;
    const first = n[O_FIRST], last = n[O_LAST], frame = n[O_FRAME];
    const bDt = f[B_DT + o], bTravel = f[B_TRAVEL + o], bUnits = f[B_UNITS + o];
    const bReach0 = f[B_REACH0 + o], bReach1 = f[B_REACH1 + o];
    const kind = events > 1 ? 'oscillation' : 'snap';
    // every reversed jump of the burst, in order: the evidence for the
    // kind (the small ones beside a snap did not make it an oscillation)
    const jumps = [];
    for (let i = 0; i < n[O_NEV]; i++) jumps.push(r3(t.oev[i]));
    const besides = jumps.length - events;
    const coincident = [];
    for (const other of this.tracks) if (other !== t && this.hadEvent(other, frame)) coincident.push(other.name);
    const cls = [];
    const med = Number.isFinite(f[O_MED]) ? f[O_MED] : NaN;
    if (bDt >= this.longFrameMs || (Number.isFinite(med) && bDt >= 2 * med && bDt >= 50)) {
      cls.push({ guess: 'long-frame-catch-up', confidence: 'high',
        evidence: `the jump landed in a ${r1(bDt)} ms frame (median ${Number.isFinite(med) ? r1(med) : '?'} ms): the stall's, not a jump's` });
    }
    if (t.follows && coincident.includes(t.follows)) {
      cls.push({ guess: 'follows-track', confidence: 'high',
        evidence: `${t.name} follows ${t.follows}, which jumped in the same frame` });
    }
    const dReach = bReach1 - bReach0;
    if (t.reachName !== null && Math.abs(Math.abs(dReach) - bUnits) <= 0.25 * bUnits + this.floor && Math.abs(dReach) > this.floor) {
      cls.push({ guess: 'reach-change', confidence: 'medium',
        evidence: `${t.reachName} went ${r3(bReach0)} → ${r3(bReach1)}, about the jump (${r3(bUnits)})` });
    }
    const over = bUnits / Math.max(this.floor, this.ratio * bTravel);
    cls.push({ guess: kind, confidence: over >= 4 ? 'high' : 'medium',
      evidence: (kind === 'snap'
        ? `${r3(bUnits)} units off its trajectory (predicted travel ${r3(bTravel)}), reversed the next frame`
        : `${events} reversed jumps within ${last - first + 1} frames, the largest ${r3(bUnits)} units`)
        + (besides > 0 ? `; ${besides} too small to count beside it (the jumps in order: ${jumps.join(', ')})` : '') });
    const rec = {
      type: 'jitter', track: t.name, kind, frame,
      jump: vec(f, B_JUMP + o), units: r3(bUnits), travelUnits: r3(bTravel), speed: r3(f[B_SPEED + o]),
      dtMs: r1(bDt), from: vec(f, B_FROM + o), to: vec(f, B_TO + o),
      classification: cls,
    };
    if (Number.isFinite(med)) rec.medianDtMs = r1(med);
    if (jumps.length > 1) rec.jumps = jumps;
    if (kind === 'oscillation') {
      rec.frames = last - first + 1;
      rec.durationMs = r1(Math.max(0, rec.frames * (Number.isFinite(med) ? med : bDt)));
      rec.amplitude = r3(bUnits / 2);
    }
    if (coincident.length) rec.coincident = coincident;
    if (t.reachName !== null) rec.reach = { name: t.reachName, before: r3(bReach0), after: r3(bReach1) };
    this.onRecord(rec, f[B_START + o]);
  }

  take() {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
