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
// arguments in a fresh array on every call.)
//
// Beyond the seed: a candidate must also stand `noise` times above the
// track's running residual level (an average over the frames that were
// not candidates).  A host whose simulation steps on its own clock leaves
// a small residual on every frame of a loaded machine, and that residual
// reverses as often as not; without this guard it reads as a stream of
// tiny snaps.

export const JITTER_GUESSES = Object.freeze(['long-frame-catch-up', 'follows-track', 'reach-change', 'snap', 'oscillation']);

const HISTORY = 8;            // recent event frames kept per track, for coincidence

const r3 = (v) => Math.round(v * 1000) / 1000;
const r1 = (v) => Math.round(v * 10) / 10;

function vec(a, i) { return [r3(a[i]), r3(a[i + 1]), r3(a[i + 2])]; }

export class MotionMonitor {
  constructor({ floor = 0.05, ratio = 0.5, noise = 8, longFrameMs = 100, burstGapFrames = 3, burstMaxMs = 2000,
    intervalMs = 1000, sessionCap = 200, onRecord = () => {} } = {}) {
    this.floor = floor;
    this.ratio = ratio;
    this.noise = noise;
    this.longFrameMs = longFrameMs;
    this.burstGapFrames = burstGapFrames;
    this.burstMaxMs = burstMaxMs;
    this.intervalMs = intervalMs;
    this.sessionCap = sessionCap;
    this.onRecord = onRecord;
    this.tracks = [];
    this.byName = new Map();
    this.sent = 0;
    this.dropped = 0;
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
      valid: 0, held: false, cut: false, hasReach: false,
      lv: new Float64Array(1),     // the running residual level (a typed array: no heap number per store)
      // the candidate of the previous frame: residual, anomaly, from/to
      cand: false, cr: new Float64Array(3), cu: new Float64Array(3), cfrom: new Float64Array(3),
      cto: new Float64Array(3), cframe: 0, ct: 0, cdt: 0, ctravel: 0, cspeed: 0, creach0: 0, creach1: 0,
      // the open burst
      events: 0, bFirstFrame: 0, bLastFrame: 0, bStart: 0, bMax: 0, bJump: new Float64Array(3), bFrom: new Float64Array(3),
      bTo: new Float64Array(3), bFrame: 0, bDt: 0, bTravel: 0, bSpeed: 0, bReach0: 0, bReach1: 0, bUnits: 0,
      recent: new Int32Array(HISTORY).fill(-1000), recentHead: 0, lastSent: -Infinity, lastUnits: 0,
    };
    this.tracks.push(t);
    this.byName.set(name, t);
    return t.index;
  }

  // The next sample of `name` (or every track) is input-driven: do not judge it.
  hold(name) { for (const t of this.pick(name)) t.held = true; }

  // The view was cut on purpose: forget the trajectory of `name` (or all).
  cut(name) { for (const t of this.pick(name)) t.cut = true; }

  pick(name) {
    if (name === undefined || name === null) return this.tracks;
    const t = this.byName.get(name);
    return t ? [t] : [];
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
    const tMs = this.clock[0], dtMs = this.clock[1], medianDtMs = this.clock[2];
    for (let k = 0; k < this.tracks.length; k++) {
      const t = this.tracks[k];
      const p = t.p;
      // shift the history: p2 <- p1 <- p0 <- new
      for (let i = 8; i >= 3; i--) p[i] = p[i - 3];
      p[0] = pos[3 * k]; p[1] = pos[3 * k + 1]; p[2] = pos[3 * k + 2];
      t.dt[2] = t.dt[1]; t.dt[1] = t.dt[0]; t.dt[0] = dtMs;
      t.reach[2] = t.reach[1]; t.reach[1] = t.reach[0];
      t.hasReach = reach !== undefined && reach !== null && Number.isFinite(reach[k]);
      t.reach[0] = t.hasReach ? reach[k] : 0;
      if (t.held || t.cut || !(dtMs > 0)) {
        t.held = false; t.cut = false;
        t.valid = 1; t.cand = false;
        continue;
      }
      if (t.valid < 2) { t.valid++; continue; }
      this.judge(t, frameNo);
    }
    // close bursts that ended (or have run long), after every track has
    // had its events for this frame, so coincidence is known
    for (let k = 0; k < this.tracks.length; k++) {
      const t = this.tracks[k];
      if (t.events === 0) continue;
      if (frameNo - t.bLastFrame > this.burstGapFrames || tMs - t.bStart >= this.burstMaxMs)
        this.close(t, medianDtMs);
    }
  }

  judge(t, frameNo) {
    const tMs = this.clock[0], dtMs = this.clock[1];
    const p = t.p, dtPrev = t.dt[1];
    const s = dtMs / dtPrev;
    // p̂ = p1 + (p1 − p2) · dt/dtPrev
    const rx = p[0] - (p[3] + (p[3] - p[6]) * s);
    const ry = p[1] - (p[4] + (p[4] - p[7]) * s);
    const rz = p[2] - (p[5] + (p[5] - p[8]) * s);
    const vx = (p[3] - p[6]) / dtPrev, vy = (p[4] - p[7]) / dtPrev, vz = (p[5] - p[8]) / dtPrev;
    const speed = Math.sqrt(vx * vx + vy * vy + vz * vz);  // units per ms
    const travel = speed * dtMs;
    const ux = rx / dtMs, uy = ry / dtMs, uz = rz / dtMs;  // velocity anomaly

    if (t.cand) {
      t.cand = false;
      const cu = t.cu;
      const dot = ux * cu[0] + uy * cu[1] + uz * cu[2];
      const n2 = cu[0] * cu[0] + cu[1] * cu[1] + cu[2] * cu[2];
      if (dot < -0.5 * n2) {
        this.event(t, frameNo);
        return;               // this frame was the reversal, not a new candidate
      }
      // not reversed: a change of motion; this frame is judged on its own
    }
    const units = Math.sqrt(rx * rx + ry * ry + rz * rz);
    // the track's own residual level: a host whose step is not the frame
    // clock (its sim reads rAF time, we read render ends) leaves a
    // residual on every frame; a jump must stand far above it
    const bar = this.ratio * travel > this.floor ? this.ratio * travel : this.floor;
    if (units > bar && units > this.noise * t.lv[0]) {
      t.cand = true;
      t.cr[0] = rx; t.cr[1] = ry; t.cr[2] = rz;
      t.cu[0] = ux; t.cu[1] = uy; t.cu[2] = uz;
      t.cfrom[0] = p[3]; t.cfrom[1] = p[4]; t.cfrom[2] = p[5];
      t.cto[0] = p[0]; t.cto[1] = p[1]; t.cto[2] = p[2];
      t.cframe = frameNo; t.ct = tMs; t.cdt = dtMs; t.ctravel = travel; t.cspeed = speed * 1000;
      t.creach0 = t.reach[1]; t.creach1 = t.reach[0];
    } else {
      t.lv[0] = t.lv[0] === 0 ? units : 0.9 * t.lv[0] + 0.1 * units;
    }
  }

  // The candidate of the previous frame was reversed: an event.
  event(t, frameNo) {
    const units = Math.sqrt(t.cr[0] * t.cr[0] + t.cr[1] * t.cr[1] + t.cr[2] * t.cr[2]);
    t.recent[t.recentHead] = t.cframe;
    t.recentHead = (t.recentHead + 1) % HISTORY;
    if (t.events > 0 && t.cframe - t.bLastFrame > this.burstGapFrames) this.close(t, NaN);
    if (t.events === 0) {
      t.bFirstFrame = t.cframe; t.bStart = t.ct; t.bMax = 0;
    }
    t.events++;
    t.bLastFrame = t.cframe;
    if (units > t.bMax) {       // the burst is told by its largest event
      t.bMax = units;
      t.bJump.set(t.cr); t.bFrom.set(t.cfrom); t.bTo.set(t.cto);
      t.bFrame = t.cframe; t.bDt = t.cdt; t.bTravel = t.ctravel; t.bSpeed = t.cspeed;
      t.bReach0 = t.creach0; t.bReach1 = t.creach1; t.bUnits = units;
    }
    void frameNo;
  }

  hadEvent(t, frame) {
    for (let i = 0; i < HISTORY; i++) if (t.recent[i] === frame) return true;
    return false;
  }

  // The burst of `t` is over: classify it and make its record (rate limits permitting).
  close(t, medianDtMs) {
    const events = t.events;
    t.events = 0;
    const now = t.bStart;
    // one a second per track; but a jump at least twice the one that took
    // the second still goes (a real snap is not hidden by the small
    // catch-up of a slow frame just before it), and doubles the bar
    const inInterval = now - t.lastSent < this.intervalMs;
    const worse = inInterval && t.bUnits >= 2 * t.lastUnits;
    if (this.sent >= this.sessionCap || (inInterval && !worse)) {
      this.dropped++;
      return;
    }
    if (!worse) t.lastSent = now;
    t.lastUnits = t.bUnits;
    this.sent++;
    const kind = events > 1 ? 'oscillation' : 'snap';
    const coincident = [];
    for (const o of this.tracks) if (o !== t && this.hadEvent(o, t.bFrame)) coincident.push(o.name);
    const cls = [];
    const med = Number.isFinite(medianDtMs) ? medianDtMs : NaN;
    if (t.bDt >= this.longFrameMs || (Number.isFinite(med) && t.bDt >= 2 * med && t.bDt >= 50)) {
      cls.push({ guess: 'long-frame-catch-up', confidence: 'high',
        evidence: `the jump landed in a ${r1(t.bDt)} ms frame (median ${Number.isFinite(med) ? r1(med) : '?'} ms): the stall's, not a jump's` });
    }
    if (t.follows && coincident.includes(t.follows)) {
      cls.push({ guess: 'follows-track', confidence: 'high',
        evidence: `${t.name} follows ${t.follows}, which jumped in the same frame` });
    }
    const dReach = t.bReach1 - t.bReach0;
    if (t.reachName !== null && Math.abs(Math.abs(dReach) - t.bUnits) <= 0.25 * t.bUnits + this.floor && Math.abs(dReach) > this.floor) {
      cls.push({ guess: 'reach-change', confidence: 'medium',
        evidence: `${t.reachName} went ${r3(t.bReach0)} → ${r3(t.bReach1)}, about the jump (${r3(t.bUnits)})` });
    }
    const over = t.bUnits / Math.max(this.floor, this.ratio * t.bTravel);
    cls.push({ guess: kind, confidence: over >= 4 ? 'high' : 'medium',
      evidence: kind === 'snap'
        ? `${r3(t.bUnits)} units off its trajectory (predicted travel ${r3(t.bTravel)}), reversed the next frame`
        : `${events} reversed jumps within ${t.bLastFrame - t.bFirstFrame + 1} frames, the largest ${r3(t.bUnits)} units` });
    const rec = {
      type: 'jitter', track: t.name, kind, frame: t.bFrame,
      jump: vec(t.bJump, 0), units: r3(t.bUnits), travelUnits: r3(t.bTravel), speed: r3(t.bSpeed),
      dtMs: r1(t.bDt), from: vec(t.bFrom, 0), to: vec(t.bTo, 0),
      classification: cls,
    };
    if (Number.isFinite(med)) rec.medianDtMs = r1(med);
    if (kind === 'oscillation') {
      rec.frames = t.bLastFrame - t.bFirstFrame + 1;
      rec.durationMs = r1(Math.max(0, (rec.frames) * (Number.isFinite(med) ? med : t.bDt)));
      rec.amplitude = r3(t.bUnits / 2);
    }
    if (coincident.length) rec.coincident = coincident;
    if (t.reachName !== null) rec.reach = { name: t.reachName, before: r3(t.bReach0), after: r3(t.bReach1) };
    this.onRecord(rec, t.bStart);
  }

  take() {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
