// The recorder's pure parts in node (no browser): the hitch rule, the
// classifier, the rate limits, the motion monitor on synthetic paths, the
// outbox against a real local HTTP server, canonicalContext and the
// footprint vectors the C fold passes (schemas/footprint-vectors.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FrameRing, CAMF, hitchThreshold, isHitch, classifyFrame, RateLimit, HITCH_GUESSES, FLAG_PAUSED, select, loafSettled, loafOverlaps } from '../../page-runtime/frames.js';
import { MotionMonitor, JITTER_GUESSES } from '../../page-runtime/motion.js';
import { Outbox } from '../../page-runtime/delivery.js';
import { canonicalContext, createRecorder, isoTime } from '../../page-runtime/recorder.js';
import { footprintKey, footprintId, utf8Bytes, headBytes, tailBytes } from '../../page-runtime/footprint.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(fs.readFileSync(path.join(here, '..', '..', 'schemas', 'footprint-vectors.json'), 'utf8'));

// --- the ring and the hitch rule ------------------------------------------------

test('a record\'s time is written by hand as toISOString() writes it', () => {
  const at = [0, 999, 1000, 86399999, 86400000, 951782400000 /* 2000-02-29 */, 1798761599999.9, 1798761600000, 253402300799999 /* 9999-12-31 */];
  let x = 0x9e3779b9;
  for (let k = 0; k < 20000; k++) {
    x = (x * 1103515245 + 12345) >>> 0;
    at.push(1.6e12 + x * 97.3, 1.7e12 + k * 86399.9999);   // fractions, and day after day across midnight
  }
  for (const ms of at) assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}`);
});

test('ring: a view is the frames from 30 before to 8 after, oldest first, read from the newest back', () => {
  const ring = new FrameRing(600);
  const push = (frame) => {
    const s = ring.slot();
    ring.frame[s] = frame; ring.end[s] = frame * 16; ring.anim[s] = NaN;
    ring.cam[s * CAMF] = frame;                     // position x: the frame, to tell them apart
    for (let k = 1; k < 7; k++) ring.cam[s * CAMF + k] = 0;
    ring.commit();
  };
  for (let f = 1; f <= 700; f++) push(f);           // 101..700 remain
  const v = ring.viewAt(650);
  assert.deepEqual(v.map((x) => x.frame), Array.from({ length: 39 }, (_, i) => 620 + i));
  assert.deepEqual(v.map((x) => x.camera.position[0]), v.map((x) => x.frame), 'each frame its own camera');
  assert.equal(v[0].t, 620 * 16, "no animation time: the frame's end");
  // the newest frames: as many after as there are
  assert.deepEqual(ring.viewAt(698).map((x) => x.frame), Array.from({ length: 33 }, (_, i) => 668 + i));
  // 30 before is gone from the ring (or before the page): no view
  assert.equal(ring.viewAt(120), null);
  assert.equal(ring.viewAt(131).length, 39);
});

test('ring: nearest-rank percentiles over the unpaused frames of a window', () => {
  const ring = new FrameRing(8);
  const push = (end, ms, paused = false) => {
    const s = ring.slot();
    ring.end[s] = end; ring.frameMs[s] = ms; ring.flags[s] = paused ? FLAG_PAUSED : 0;
    ring.commit();
  };
  for (let i = 1; i <= 10; i++) push(i * 10, i);     // 10 frames into 8 slots: 3..10 remain
  assert.equal(ring.count, 8);
  assert.equal(ring.median('frameMs'), 6);          // 3..10: rank ceil(0.5*8)=4 → 6
  assert.equal(ring.percentile('frameMs', 0.95), 10);
  assert.equal(ring.percentile('frameMs', 1), 10);
  assert.equal(ring.median('frameMs', 70), 9);      // ends 80, 90, 100 → 8, 9, 10
  const out = new Float64Array(2);
  ring.medianInto('frameMs', out, 1);
  assert.equal(out[1], 6, 'medianInto is median() over the whole ring');
  push(105, 7);                                      // 3 goes: 4..10 and 7, rank ceil(0.5*8)=4 → 7
  assert.equal(ring.median('frameMs'), 7);
  ring.medianInto('frameMs', out, 0);
  assert.equal(out[0], 7);
  push(110, 500, true);                              // paused: kept, never in the stats
  assert.equal(ring.percentile('frameMs', 1), 10);
  assert.ok(Number.isNaN(ring.median('frameMs', 1000)), 'an empty window is NaN, not 0');
});

test('select: the k-th smallest in place, as a sort would say', () => {
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  for (const n of [1, 2, 3, 10, 600]) {
    for (let trial = 0; trial < 20; trial++) {
      const a = new Float64Array(n + 5);
      for (let i = 0; i < n; i++) a[i] = trial % 3 === 0 ? Math.floor(rnd() * 4) : rnd() * 100;   // with ties, and without
      const sorted = [...a.subarray(0, n)].sort((x, y) => x - y);
      for (const k of [0, Math.floor(n / 2), n - 1]) assert.equal(select(Float64Array.from(a), n, k), sorted[k], `n ${n} k ${k}`);
    }
  }
});

test('hitch rule: max(2 × median, 1.5 × budget), never a paused frame', () => {
  const near = (a, b) => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≈ ${b}`);
  near(hitchThreshold(8, 16.7), 25.05);        // the absolute guard wins at 120 fps
  near(hitchThreshold(33.3, 16.7), 66.6);      // a 30 fps game: the relative one
  near(hitchThreshold(NaN, 16.7), 25.05);      // no median yet
  assert.ok(!isHitch(25, 8, 16.7));
  assert.ok(isHitch(25.1, 8, 16.7));
  assert.ok(!isHitch(60, 33.3, 16.7), 'a 30 fps game does not report every frame');
  assert.ok(isHitch(70, 33.3, 16.7));
  assert.ok(!isHitch(500, 16.7, 16.7, true), 'paused frames are never judged');
});

// --- the classifier -------------------------------------------------------------

const frame = (o) => ({ frameMs: 120, medianMs: 16, insideMs: 100, delta: {}, spawned: 0, loaf: 'unsupported', ...o });

test('classifier: each class from its own evidence, ranked, every guess with evidence', () => {
  const cases = [
    [frame({ delta: { programs: 3 } }), 'shader-compile', /programs \+3/],
    [frame({ delta: { textures: 2 } }), 'texture-upload', /textures \+2, programs \+0/],
    [frame({ spawned: 400, delta: { calls: 400, geometries: 400 }, insideMs: 50 }), 'spawn-burst', /400 objects/],
    [frame({ insideMs: 110 }), 'long-render', /110 of 120 ms inside render/],
    [frame({ insideMs: 2 }), 'long-script', /118 of 120 ms outside render/],
  ];
  for (const [f, top, evidence] of cases) {
    const c = classifyFrame(f);
    assert.equal(c[0].guess, top, JSON.stringify(c));
    assert.match(c[0].evidence, evidence);
    for (const g of c) {
      assert.ok(HITCH_GUESSES.includes(g.guess), `${g.guess} is in the closed vocabulary`);
      assert.ok(['low', 'medium', 'high'].includes(g.confidence));
      assert.ok(g.evidence.length > 0, 'a guess without evidence is banned');
    }
  }
  // no counter moved: elimination ranks after the time split
  const c = classifyFrame(frame({ insideMs: 2 }));
  assert.deepEqual(c.map((g) => g.guess), ['long-script', 'gc-or-upload-by-elimination']);
  // both programs and textures: the compile first, the upload after it
  assert.deepEqual(classifyFrame(frame({ delta: { programs: 1, textures: 1 } })).map((g) => g.guess), ['shader-compile', 'texture-upload']);
  // a spawn that also compiled: both, the compile first
  assert.deepEqual(classifyFrame(frame({ spawned: 80, delta: { programs: 1 } })).map((g) => g.guess).slice(0, 2), ['shader-compile', 'spawn-burst']);
  assert.equal(classifyFrame(frame({ spawned: 49 }), { spawnBurst: 50 })[0].guess, 'long-render', 'below the burst threshold');
});

test('classifier: the frame after a compile or an upload, held back outside render with no script, is the compile\'s', () => {
  // SwiftShader links after render returns; the next frame waits, the main thread idle
  const held = classifyFrame(frame({ frameMs: 250, insideMs: 2, loaf: 'none', before: { programs: 6, textures: 0 } }));
  assert.equal(held[0].guess, 'shader-compile');
  assert.equal(held[0].confidence, 'medium');
  assert.match(held[0].evidence, /programs \+6 in the frame before, then 248 of 250 ms outside render/);
  assert.ok(!held.some((g) => g.guess === 'long-script'), 'not a long-script hitch: it waits for no LoAF entry');
  assert.equal(classifyFrame(frame({ insideMs: 2, before: { programs: 0, textures: 1 } }))[0].guess, 'texture-upload');
  // a script the browser named still wins; time inside render is not the GPU's catch-up; nothing before: long-script
  const script = { name: 'tick', sourceURL: '', charPosition: -1, invoker: 'FrameRequestCallback', durationMs: 200 };
  assert.equal(classifyFrame(frame({ insideMs: 2, loaf: 'found', script, before: { programs: 3 } }))[0].guess, 'long-script');
  assert.equal(classifyFrame(frame({ insideMs: 100, before: { programs: 3 } }))[0].guess, 'long-render');
  assert.equal(classifyFrame(frame({ insideMs: 2, before: { programs: 0, textures: 0 } }))[0].guess, 'long-script');
});

test('classifier: long-script names the script when Long Animation Frames did, and says so when it could not', () => {
  const script = { name: 'simulateCrowdAI', sourceURL: 'http://x/main.js', charPosition: 812, invoker: 'FrameRequestCallback', durationMs: 230 };
  const found = classifyFrame(frame({ insideMs: 3, loaf: 'found', script }))[0];
  assert.equal(found.guess, 'long-script');
  assert.equal(found.confidence, 'high');
  assert.match(found.evidence, /simulateCrowdAI \(http:\/\/x\/main\.js:812\), 230 ms, invoked by FrameRequestCallback/);
  const none = classifyFrame(frame({ insideMs: 3, loaf: 'none' }))[0];
  assert.equal(none.confidence, 'medium');
  assert.match(none.evidence, /named no script/);
  assert.match(classifyFrame(frame({ insideMs: 3, loaf: 'unsupported' }))[0].evidence, /no Long Animation Frames API/);
});

// --- rate limits ------------------------------------------------------------------

test('rate limit: one a second, a session cap, and every refusal counted for the next record', () => {
  const rl = new RateLimit({ intervalMs: 1000, sessionCap: 3 });
  assert.ok(rl.allow(0));
  assert.ok(!rl.allow(500));
  assert.ok(!rl.allow(999));
  assert.equal(rl.take(), 2);
  assert.equal(rl.take(), 0, 'said once');
  const byKey = new RateLimit({ intervalMs: 1000, sessionCap: 10 });
  assert.ok(byKey.allow(0, 'long-script'));
  assert.ok(byKey.allow(100, 'shader-compile'), 'a slow frame does not hide a compile in the same second');
  assert.ok(!byKey.allow(200, 'long-script'));
  assert.equal(byKey.take(), 1);
  // a much worse frame in the same second still goes; a lesser one does not
  const esc = new RateLimit({ intervalMs: 1000, sessionCap: 10 });
  assert.ok(esc.allow(0, 'long-script', 40));
  assert.ok(!esc.allow(100, 'long-script', 79), 'not twice as long');
  assert.ok(!esc.allow(150, 'long-script', 90), 'twice, but under the 100 ms bar');
  assert.ok(esc.allow(200, 'long-script', 250), 'a 250 ms stall is not hidden by a 40 ms frame');
  assert.ok(!esc.allow(300, 'long-script', 400), 'the bar doubled: 500 ms now');
  assert.ok(esc.allow(1000, 'long-script', 20), 'the interval still runs from the first');
  assert.equal(esc.take(), 3);
  // an older frame's record made after a newer one's (it waited behind a
  // waking hitch) goes, as it would have gone first; the interval stays
  const late = new RateLimit({ intervalMs: 1000, sessionCap: 10 });
  assert.ok(late.allow(1000, 'long-render', 150));
  assert.ok(late.allow(900, 'long-render', 60), 'an older frame made late');
  assert.ok(!late.allow(1500, 'long-render', 60), 'the interval is still the newer one\'s');
  assert.equal(late.take(), 1);
  assert.ok(rl.allow(1000));
  rl.charge();                       // a usermark: no interval, but it counts
  assert.ok(!rl.allow(5000), 'the cap of 3 is reached');
  assert.ok(!rl.allow(9000));
  assert.equal(rl.take(), 2);
});

// --- the motion monitor -------------------------------------------------------------

// Drive a monitor with a path: pos(i) → [x,y,z] per track; dt(i) → ms.
function drive(paths, { frames = 120, dt = () => 16.7, follows = {}, reach = null, hold = () => [], opts = {} } = {}) {
  const out = [];
  const mm = new MotionMonitor({ ...opts, onRecord: (r) => out.push(r) });
  const names = Object.keys(paths);
  for (const n of names) mm.addTrack(n, { follows: follows[n] || null, reachName: reach && reach[n] ? 'boom' : null });
  const pos = new Float64Array(3 * names.length);
  const rch = new Float64Array(names.length);
  let t = 0;
  for (let i = 0; i < frames; i++) {
    const d = dt(i);
    t += d;
    for (const n of hold(i)) mm.hold(n);
    names.forEach((n, k) => {
      const p = paths[n](i, t);
      pos[3 * k] = p[0]; pos[3 * k + 1] = p[1]; pos[3 * k + 2] = p[2];
      rch[k] = reach && reach[n] ? reach[n](i) : NaN;
    });
    mm.frame(i, t, d, 16.7, pos, reach ? rch : null);
  }
  mm.frame(frames + 10, t + 1000, 16.7, 16.7, pos, null);   // close what is open
  return { out, mm };
}

const V = 8 / 1000;      // 8 units a second, per ms
const smooth = (i, t) => [t * V, 0, 0];

test('motion: smooth motion, a dash and a boom easing out are never reported', () => {
  assert.deepEqual(drive({ unit: smooth }).out, []);
  // a curve with acceleration (a circle of radius 10 at 0.5 rad/s)
  assert.deepEqual(drive({ unit: (i, t) => [10 * Math.cos(t / 2000), 0, 10 * Math.sin(t / 2000)] }).out, []);
  // a dash: standing, then 20 units/s from frame 60 on (a change of motion, never reversed)
  const dash = (i, t) => [i < 60 ? 0 : (t - 60 * 16.7) * 0.02, 0, 0];
  assert.deepEqual(drive({ unit: dash }).out, []);
  // a boom easing back out: exponential approach of the reach
  const boom = (i) => [0, 6 + 4 * (1 - Math.exp(-Math.max(0, i - 30) / 10)), 9];
  assert.deepEqual(drive({ camera: boom }).out, []);
});

test('motion: a snap is one reversed jump, with its size, axis and evidence', () => {
  const snap = (i, t) => [t * V + (i >= 60 ? 2.5 : 0), 0, 0];
  const { out } = drive({ unit: snap });
  assert.equal(out.length, 1, JSON.stringify(out));
  const r = out[0];
  assert.equal(r.kind, 'snap');
  assert.equal(r.track, 'unit');
  assert.equal(r.frame, 60);
  assert.ok(Math.abs(r.units - 2.5) < 0.01, `units ${r.units}`);
  assert.ok(Math.abs(r.jump[0] - 2.5) < 0.01 && r.jump[1] === 0);
  assert.equal(r.classification[0].guess, 'snap');
  assert.equal(r.classification[0].confidence, 'high');
  assert.match(r.classification[0].evidence, /reversed the next frame/);
  assert.ok(Math.abs(r.speed - 8) < 0.01, `speed ${r.speed}`);
  assert.equal(footprintKey({ ...r, phase: 'play', ctx: '' }), 'jitter|unit|snap|play|snap|horizontal|ctx:');
});

test('motion: an oscillation is a burst of reversed jumps, one record', () => {
  const osc = (i, t) => [t * V, i >= 50 && i < 60 && i % 2 === 0 ? 0.6 : 0, 0];
  const { out } = drive({ unit: osc });
  assert.equal(out.length, 1, JSON.stringify(out));
  assert.equal(out[0].kind, 'oscillation');
  assert.equal(out[0].classification.at(-1).guess, 'oscillation');
  assert.ok(out[0].frames >= 5, `frames ${out[0].frames}`);
  assert.ok(out[0].amplitude > 0);
  assert.equal(footprintKey({ ...out[0], ctx: '' }).split('|')[5], 'vertical');
});

test('motion: a snap beside a render that ended late and then early (a loaded machine) is still a snap, not an oscillation', () => {
  // The demo's unit on its orbit (radius 10, 0.45 rad/s, stepped on the
  // animation frame's own clock), sampled at the render ends of a loaded
  // machine: frame 2 ends 27 ms after frame 1's 6.7 ms, frame 3 6.4 ms
  // after it — the prediction overshoots, then undershoots: a 0.06-unit
  // reversed residual, an event.  The 2.5-unit snap lands two frames
  // later, within the burst gap.  [render delta ms, x, z] per frame, as
  // the game test's run had them when it said "oscillation".
  const seq = [[20.39, 0.9022, 9.9592], [6.7, 0.8273, 9.9657], [27.47, 0.7524, 9.9717], [6.39, 0.6774, 9.977],
    [15.31, 3.1024, 9.9818], [18.61, 3.0274, 9.9861], [15.89, 2.9524, 9.9898], [18.1, 2.8773, 9.9929],
    [16.18, 2.8022, 9.9954], [15.29, 2.727, 9.9974], [16.54, 2.6519, 9.9988], [17.61, 2.5768, 9.9997],
    [18.16, 2.5016, 10], [15.02, 2.4265, 9.9997], [17.03, 2.3513, 9.9989], [17.43, 2.2762, 9.9975],
    [14.82, 2.2011, 9.9955], [15.9, 2.126, 9.993], [18.17, 2.0509, 9.9899], [16.52, 1.9758, 9.9863]];
  const run = (opts) => drive({ unit: (i) => [seq[Math.min(i, seq.length - 1)][1], 0.7, seq[Math.min(i, seq.length - 1)][2]] },
    { frames: seq.length, dt: (i) => seq[i][0], opts }).out;
  const out = run({});
  assert.equal(out.length, 1, JSON.stringify(out));
  assert.equal(out[0].kind, 'snap');
  assert.equal(out[0].frame, 4);
  assert.ok(Math.abs(out[0].units - 2.6) < 0.05, `units ${out[0].units}`);
  assert.equal(out[0].classification[0].guess, 'snap');
  // the small one beside it is shown, not hidden
  assert.equal(out[0].jumps.length, 2, JSON.stringify(out[0].jumps));
  assert.ok(out[0].jumps[0] < 0.25 * out[0].jumps[1] && out[0].jumps[1] === out[0].units, JSON.stringify(out[0].jumps));
  assert.match(out[0].classification[0].evidence, /1 too small to count beside it \(the jumps in order: 0\.\d+, 2\.\d+\)/);
  // the rule that was: every reversed event of the burst counted
  assert.equal(run({ comparable: 0 })[0].kind, 'oscillation', 'the sequence is the one that misclassified');
  // and a real oscillation that decays (a spring settling) is still one
  const spring = (i, t) => [t * V, i >= 50 && i < 58 && i % 2 === 0 ? 0.8 * 0.7 ** ((i - 50) / 2) : 0, 0];
  const osc = drive({ unit: spring }).out;
  assert.equal(osc.length, 1, JSON.stringify(osc));
  assert.equal(osc[0].kind, 'oscillation');
});

test('motion: a jump that lands in a long frame is the stall catching up, said first', () => {
  // the host clamps its step at 100 ms: in the 400 ms frame it moves 100 ms worth
  const dts = (i) => (i === 60 ? 400 : 16.7);
  let x = 0;
  const xs = [];
  for (let i = 0; i < 140; i++) { x += Math.min(100, dts(i)) * V; xs.push(x); }
  const { out } = drive({ unit: (i) => [xs[i], 0, 0] }, { dt: dts });
  assert.equal(out.length, 1, JSON.stringify(out));
  assert.equal(out[0].classification[0].guess, 'long-frame-catch-up');
  assert.match(out[0].classification[0].evidence, /400 ms frame/);
  assert.equal(out[0].classification.at(-1).guess, 'snap');
});

test('motion: a follower that jumps with its leader says so; held frames are never judged', () => {
  const unit = (i, t) => [t * V + (i >= 60 ? 2 : 0), 0, 0];
  const camera = (i, t) => { const u = unit(i, t); return [u[0], u[1] + 6, u[2] + 9]; };
  const { out } = drive({ unit, camera }, { follows: { camera: 'unit' } });
  assert.equal(out.length, 2, JSON.stringify(out));
  const cam = out.find((r) => r.track === 'camera');
  assert.equal(cam.classification[0].guess, 'follows-track');
  assert.deepEqual(cam.coincident, ['unit']);
  assert.equal(out.find((r) => r.track === 'unit').classification[0].guess, 'snap');
  // the same camera flick while the host says "held" (look input): nothing
  const flick = (i, t) => [t * V + (i === 60 ? 3 : 0), 6, 9];
  assert.deepEqual(drive({ camera: flick }, { hold: (i) => (i === 60 || i === 61 ? ['camera'] : []) }).out, []);
  assert.equal(drive({ camera: flick }).out.length, 1, 'the same flick without the hold is reported');
});

test('motion: a boom that clamps in by about the jump is a reach change', () => {
  const reachAt = (i) => (i >= 60 ? 8 : 10);
  const camera = (i, t) => [t * V, 0, reachAt(i)];
  const { out } = drive({ camera }, { reach: { camera: reachAt } });
  assert.equal(out.length, 1, JSON.stringify(out));
  assert.equal(out[0].classification[0].guess, 'reach-change');
  assert.deepEqual(out[0].reach, { name: 'boom', before: 10, after: 8 });
  for (const g of out[0].classification) assert.ok(JITTER_GUESSES.includes(g.guess));
});

test('motion: one record a second per track, 200 a session, drops counted', () => {
  // a snap every 10 frames (6 a second) for 10 s
  const snaps = (i, t) => [t * V + Math.floor(i / 10) * 1.5, 0, 0];
  const { out, mm } = drive({ unit: snaps }, { frames: 600 });
  assert.ok(out.length >= 9 && out.length <= 11, `about one a second: ${out.length}`);
  assert.ok(mm.take() >= 45, 'the rest were counted');
  // a jump twice the size of the one that took the second still goes
  const two = drive({ unit: (i, t) => [t * V + (i >= 60 ? 0.5 : 0) + (i >= 70 ? 3 : 0), 0, 0] });
  assert.deepEqual(two.out.map((r) => Math.round(r.units * 10) / 10), [0.5, 3]);
  const small = drive({ unit: (i, t) => [t * V + (i >= 60 ? 0.5 : 0) + (i >= 70 ? 0.6 : 0), 0, 0] });
  assert.deepEqual(small.out.map((r) => Math.round(r.units * 10) / 10), [0.5], 'a lesser one waits its second');
  assert.equal(small.mm.take(), 1);
  const cap = drive({ unit: snaps }, { frames: 600, opts: { intervalMs: 0, sessionCap: 20 } });
  assert.equal(cap.out.length, 20);
  assert.ok(cap.mm.take() > 0);
});

// --- the outbox, against a real HTTP server --------------------------------------------

function server(handler) {
  return new Promise((resolve) => {
    const got = [];
    const snapshots = [];
    const s = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        // a hitch's view snapshot has a route of its own: kept apart
        if (req.url.startsWith('/api/sloptimize/snapshots')) {
          snapshots.push(JSON.parse(body));
          res.statusCode = 201;
          res.end('{}');
          return;
        }
        // an assertion that fails in here must fail the test, not leave
        // the outbox waiting for an answer
        try { handler(req, res, body, got); } catch (e) {
          if (!res.headersSent) { res.statusCode = 400; res.end('{}'); }
          setImmediate(() => { throw e; });
        }
      });
    });
    s.listen(0, '127.0.0.1', () => resolve({ s, got, snapshots, url: `http://127.0.0.1:${s.address().port}` }));
  });
}

test('outbox: batches in order as a JSON array; retries with backoff while the daemon is down; bounded, drops said', async () => {
  let up = false;
  let srv = null;
  srv = await server((req, res, body, got) => {
    // the daemon's own 503 (docs/api.md): it answered, it is reachable
    if (!up) { res.statusCode = 503; res.setHeader('content-type', 'application/json'); res.end('{"error":{"code":"busy","message":"busy"}}'); return; }
    const u = new URL(req.url, srv.url);
    assert.equal(u.pathname, '/api/sloptimize/records');
    assert.match(u.searchParams.get('page'), /^[0-9a-z]{16}$/);
    assert.equal(req.headers['content-type'], 'application/json');
    const recs = JSON.parse(body);
    assert.ok(Array.isArray(recs));
    got.push(...recs);
    res.setHeader('content-type', 'application/json');
    // the route's answer (docs/api.md, schemas/records-output.json)
    res.end(JSON.stringify({ v: 1, records: recs.length, accepted: recs.length, refused: 0, refusals: [], bytes: body.length }));
  });
  try {
    const ob = new Outbox({ endpoint: srv.url, maxQueued: 50, backoffMinMs: 20, backoffMaxMs: 80 });
    for (let i = 0; i < 60; i++) ob.push({ type: 'heartbeat', n: i });
    assert.equal(ob.queued(), 50, 'memory is bounded');
    assert.equal(ob.takeDropped(), 10, 'and what went is counted');
    let st = await ob.flush();
    assert.equal(st.reachable, true);
    assert.equal(st.sent, 0);
    assert.ok(st.failures >= 1 && st.backoffMs > 0, 'a 503 backs off');
    up = true;
    const end = Date.now() + 5000;
    while (ob.queued() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    st = ob.status();
    assert.equal(st.sent, 50);
    assert.deepEqual(srv.got.map((r) => r.n), Array.from({ length: 50 }, (_, i) => i + 10), 'in order, nothing twice');
    ob.stop();
  } finally { srv.s.close(); }
});

test('outbox: a proxy\'s 500 or 502 in plain text is not the daemon — not "reachable", kept and retried', async () => {
  // Vite's proxy answers 502 (older ones 500) with an empty text/plain
  // body when nothing listens behind it: the records were not taken
  let up = false, status = 500;
  const srv = await server((req, res, body, got) => {
    if (!up) { res.statusCode = status; res.setHeader('content-type', 'text/plain'); res.end(); return; }
    got.push(...JSON.parse(body));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ v: 1, records: 1, accepted: 1, refused: 0, refusals: [], bytes: body.length }));
  });
  try {
    const ob = new Outbox({ endpoint: srv.url, backoffMinMs: 10, backoffMaxMs: 20 });
    ob.push({ type: 'heartbeat', n: 1 });
    let st = await ob.flush();
    assert.equal(st.reachable, false, JSON.stringify(st));
    assert.match(st.lastError, /^500 .*the daemon did not answer/);
    assert.equal(st.queued, 1, 'kept');
    status = 502;
    st = await ob.flush();
    assert.equal(st.reachable, false);
    assert.match(st.lastError, /^502 /);
    up = true;
    const end = Date.now() + 5000;
    while (ob.queued() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    st = ob.status();
    assert.equal(st.reachable, true);
    assert.deepEqual(srv.got.map((r) => r.n), [1], 'sent once the daemon answered');
    ob.stop();
  } finally { srv.s.close(); }
});

test('outbox: its own time says which part cost it — sealing the batch, the fetch() call, the answer', async () => {
  // a scripted clock: sealing a record costs 3 ms, calling fetch() 7 ms,
  // or 1 ms and 20 ms; no real time is measured
  let clock = 0, fetchMs = 7;
  const own = [];
  const rec = (n) => ({ n, toJSON() { clock += 3; return { n }; } });
  const fetchFn = async () => {
    clock += fetchMs;
    return { ok: true, status: 200, json: async () => ({ accepted: 1 }), headers: { get: () => null } };
  };
  const ob = new Outbox({ fetch: fetchFn, ownNow: () => clock, onOwn: (ms, part) => own.push([ms, part]) });
  ob.push(rec(1));
  await ob.flush();
  assert.deepEqual(own[0], [10, 'fetch'], 'seal 3 + fetch 7: mostly the call');
  assert.equal(own.at(-1)[1], 'answer', 'the reply handled after the await is its own part');
  own.length = 0;
  fetchMs = 1;
  ob.push(rec(2)); ob.push(rec(3));
  await ob.flush();
  assert.deepEqual(own[0], [7, 'seal'], 'seal 2 × 3 + fetch 1: mostly sealing');
  ob.stop();
});

test('outbox: a record is sealed and sent in a task of its own, a waking one at the end of the task that made it', async () => {
  // scripted timers: a task queued is a function in a list, run when the
  // test says; no real time
  const timers = [];
  const calls = [];
  const fetchFn = async (url, o) => {
    calls.push(JSON.parse(o.body).map((r) => r.n));
    return { ok: true, status: 200, json: async () => ({ accepted: 1 }), headers: { get: () => null } };
  };
  const ob = new Outbox({ fetch: fetchFn, setTimer: (fn, ms) => { timers.push([fn, ms]); return timers.length; }, clearTimer: () => {} });
  ob.push({ n: 1 });
  ob.kick(0);
  await Promise.resolve(); await Promise.resolve();
  assert.deepEqual(calls, [], 'nothing sealed or sent in the task that made it, nor in its microtasks');
  assert.equal(timers.length, 1, 'a task of its own is queued');
  assert.equal(timers[0][1], 0, 'at once');
  ob.push({ n: 2 });
  ob.kick(0);
  assert.equal(timers.length, 1, 'one queued task for what comes before it runs');
  timers.shift()[0]();
  assert.deepEqual(calls, [[1, 2]], 'in that task: one request');
  await ob.flush();
  ob.push({ n: 3 });
  ob.kick(0, true);
  assert.deepEqual(calls, [[1, 2]], 'urgent: not inside the call');
  await Promise.resolve();
  assert.deepEqual(calls, [[1, 2], [3]], 'but at the end of this task (a microtask), no timer');
  assert.equal(timers.length, 0);
  ob.stop();
});

test('outbox: a record not ready holds the ones after it; a daemon that is gone is said, not waited on', async () => {
  const srv = await server((req, res, body, got) => { got.push(...JSON.parse(body)); res.end('{"accepted":1}'); });
  try {
    const ob = new Outbox({ endpoint: srv.url });
    ob.push({ n: 1 });
    const held = ob.push({ n: 2 }, { ready: false });
    ob.push({ n: 3 });
    await ob.flush();
    assert.deepEqual(srv.got.map((r) => r.n), [1]);
    ob.markReady(held);
    await ob.flush();
    assert.deepEqual(srv.got.map((r) => r.n), [1, 2, 3]);
    ob.stop();
  } finally { srv.s.close(); }
  const gone = new Outbox({ endpoint: srv.url, backoffMinMs: 10 });
  gone.push({ n: 1 });
  const st = await gone.flush();
  assert.equal(st.reachable, false);
  assert.equal(st.queued, 1, 'kept for the retry');
  assert.ok(st.lastError);
  gone.stop();
});

test('outbox: records the daemon refuses one by one are counted with the reason, the rest sent', async () => {
  const srv = await server((req, res, body) => {
    const recs = JSON.parse(body);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ v: 1, records: recs.length, accepted: recs.length - 1, refused: 1,
      refusals: [{ index: 1, reason: 'no string type' }], bytes: 10 }));
  });
  try {
    const ob = new Outbox({ endpoint: srv.url });
    ob.push({ n: 1 }); ob.push({ n: 2 }); ob.push({ n: 3 });
    const st = await ob.flush();
    assert.equal(st.sent, 2);
    assert.equal(st.refused, 1);
    assert.equal(st.lastRefusal, 'record 1: no string type');
    assert.equal(st.queued, 0, 'a refused record is not sent again');
    ob.stop();
  } finally { srv.s.close(); }
});

test('outbox: a batch the daemon refuses is counted and not sent again', async () => {
  let calls = 0;
  const srv = await server((req, res) => { calls++; res.statusCode = 415; res.end('{"error":"content type"}'); });
  try {
    const ob = new Outbox({ endpoint: srv.url });
    ob.push({ n: 1 });
    const st = await ob.flush();
    assert.equal(st.refused, 1);
    assert.match(st.lastRefusal, /415 content type/);
    assert.equal(st.queued, 0);
    await ob.flush();
    assert.equal(calls, 1);
    ob.stop();
  } finally { srv.s.close(); }
});

// Waits on a condition with a deadline (no sleep-and-hope).
async function until(cond, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const batchOf = (req) => {
  const u = new URL(req.url, 'http://x');
  return { page: u.searchParams.get('page'), seq: Number(u.searchParams.get('seq')), first: Number(u.searchParams.get('first')) };
};
const okAnswer = (res, recs) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ v: 1, records: recs.length, accepted: recs.length, refused: 0, refusals: [], bytes: 1 }));
};

test('outbox: a second batch goes while the first is under way, numbered, saying the oldest unanswered; never a third', { timeout: 20000 }, async () => {
  const waiting = [];      // requests not answered yet: {b, recs, res}
  let most = 0;
  const srv = await server((req, res, body, got) => {
    const recs = JSON.parse(body);
    got.push({ ...batchOf(req), n: recs.map((r) => r.n) });
    waiting.push({ recs, res });
    most = Math.max(most, waiting.length);
  });
  try {
    const ob = new Outbox({ endpoint: srv.url, pageId: 'page-1' });
    ob.push({ n: 1 }); ob.kick(0);
    await until(() => srv.got.length === 1, 'the first batch');
    // a stutter's record while the first is under way: it goes now
    ob.push({ n: 2 }); ob.kick(0);
    await until(() => srv.got.length === 2, 'the second batch, the first still unanswered');
    assert.deepEqual(srv.got, [{ page: 'page-1', seq: 1, first: 1, n: [1] }, { page: 'page-1', seq: 2, first: 1, n: [2] }]);
    assert.equal(ob.status().inFlight, 2);
    // two under way: a third waits for an answer
    ob.push({ n: 3 }); ob.push({ n: 4 }); ob.kick(0);
    // the send runs in a microtask and counts a request as it starts it:
    // once the microtasks have run, a third would show in the high-water
    // mark, with no wait on the network
    await new Promise((r) => setImmediate(r));
    assert.equal(ob.status().inFlight, 2);
    assert.equal(ob.status().maxFlying, 2, 'never more than two requests under way');
    assert.equal(srv.got.length, 2, 'never more than two requests under way');
    // the second's answer first: the next batch still says 1 is unanswered
    const w2 = waiting.splice(1, 1)[0];
    okAnswer(w2.res, w2.recs);
    await until(() => srv.got.length === 3, 'the third batch');
    assert.deepEqual(srv.got[2], { page: 'page-1', seq: 3, first: 1, n: [3, 4] });
    for (const w of waiting.splice(0)) okAnswer(w.res, w.recs);
    await until(() => ob.queued() === 0, 'the first and third answered');
    ob.push({ n: 5 }); ob.kick(0);
    await until(() => srv.got.length === 4, 'the fourth batch');
    for (const w of waiting.splice(0)) okAnswer(w.res, w.recs);
    await until(() => ob.queued() === 0, 'everything answered');
    const st = ob.status();
    assert.deepEqual(srv.got.at(-1), { page: 'page-1', seq: 4, first: 4, n: [5] }, 'nothing unanswered before it');
    assert.equal(ob.status().sent, 5);
    assert.equal(most, 2);
    assert.equal(st.maxFlying, 2);
    ob.stop();
  } finally { srv.s.close(); }
});

test('outbox: a batch whose answer was lost goes again as it was — same number, same records — and the daemon\'s duplicate counts as sent', { timeout: 20000 }, async () => {
  const appended = [];
  const seen = new Set();
  let lose = true;
  const srv = await server((req, res, body, got) => {
    const b = batchOf(req);
    const recs = JSON.parse(body);
    got.push({ ...b, n: recs.map((r) => r.n) });
    // a daemon that keeps order and knows what it appended
    if (seen.has(b.seq)) { res.setHeader('content-type', 'application/json'); res.end('{"v":1,"records":0,"accepted":0,"refused":0,"refusals":[],"bytes":0,"duplicate":true}'); return; }
    seen.add(b.seq);
    appended.push(...recs.map((r) => r.n));
    if (lose) { lose = false; res.socket.destroy(); return; }     // appended, but the answer never arrives
    okAnswer(res, recs);
  });
  try {
    const ob = new Outbox({ endpoint: srv.url, pageId: 'p', backoffMinMs: 20 });
    ob.push({ n: 1 }); ob.push({ n: 2 });
    let st = await ob.flush();
    assert.equal(st.reachable, false, 'the lost answer is a failure');
    assert.equal(st.queued, 2, 'kept for the retry');
    ob.push({ n: 3 });       // made meanwhile: a batch of its own, not glued onto the retry
    await until(() => ob.queued() === 0, 'the retry and the new batch answered');
    st = ob.status();
    assert.deepEqual(srv.got.slice(0, 2), [{ page: 'p', seq: 1, first: 1, n: [1, 2] }, { page: 'p', seq: 1, first: 1, n: [1, 2] }]);
    assert.deepEqual(srv.got.find((g) => g.seq === 2), { page: 'p', seq: 2, first: 1, n: [3] });
    assert.deepEqual(appended, [1, 2, 3], 'nothing twice');
    assert.equal(st.sent, 3);
    assert.equal(st.duplicates, 1);
    ob.stop();
  } finally { srv.s.close(); }
});

test('outbox: on page hide, what is left goes with its batch numbers (a failed batch as it was, the rest a new one)', { timeout: 20000 }, async () => {
  let down = true;
  const srv = await server((req, res, body, got) => {
    if (down) { res.statusCode = 503; res.end('{}'); return; }
    const recs = JSON.parse(body);
    got.push({ ...batchOf(req), n: recs.map((r) => r.n), keepalive: true });
    okAnswer(res, recs);
  });
  try {
    const ob = new Outbox({ endpoint: srv.url, pageId: 'p', backoffMinMs: 60000 });
    ob.push({ n: 1 });
    await ob.flush();
    ob.push({ n: 2 }, { ready: false });
    ob.push({ n: 3 });
    down = false;
    assert.equal(ob.beacon(), 3);
    assert.equal(ob.queued(), 0);
    await until(() => srv.got.length === 2, 'both beacons');
    srv.got.sort((a, b) => a.seq - b.seq);
    assert.deepEqual(srv.got.map(({ seq, first, n }) => ({ seq, first, n })),
      [{ seq: 1, first: 1, n: [1] }, { seq: 2, first: 1, n: [2, 3] }]);
    ob.stop();
  } finally { srv.s.close(); }
});

// --- footprints and the situation --------------------------------------------------------

test('canonicalContext: sorted by key, k=v joined by ",", separators scrubbed, nulls left out', () => {
  assert.equal(canonicalContext({ stance: 'helm', squad: 'duo' }), 'squad=duo,stance=helm');
  assert.equal(canonicalContext({ 'a|b': 'x,y', c: 'p=q', d: null, e: undefined, n: 3 }), 'a_b=x_y,c=p_q,n=3');
  assert.equal(canonicalContext({}), '');
  assert.equal(canonicalContext(null), '');
  assert.equal(canonicalContext({ v: 'tab\there\nnow' }), 'v=tab_here_now');
});

test('footprints: byte lengths and cuts in UTF-8 by code point, as Buffer counts them, on the ASCII path and off it', () => {
  // the key's bounds are in UTF-8 bytes, a lone surrogate as U+FFFD (3)
  const ref = (s, max) => {
    let n = 0, out = '';
    for (const cp of s) { const b = Buffer.byteLength(cp); if (n + b > max) break; n += b; out += cp; }
    return out;
  };
  const refTail = (s, max) => {
    const cps = [...s];
    let n = 0, k = cps.length;
    while (k > 0 && n + Buffer.byteLength(cps[k - 1]) <= max) n += Buffer.byteLength(cps[--k]);
    return cps.slice(k).join('');
  };
  const parts = ['a', 'Z', '#', 'é', 'ß', '中', '😀', '\ud800', '\udc00', '\u007f', '\u0080'];
  let seed = 7;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  for (let k = 0; k < 400; k++) {
    let s = '';
    const len = rnd(40), ascii = k % 3 === 0;
    for (let i = 0; i < len; i++) s += parts[rnd(ascii ? 3 : parts.length)];
    assert.equal(utf8Bytes(s), Buffer.byteLength(s), JSON.stringify(s));
    for (const max of [0, 1, 2, 3, 5, 16, 48]) {
      assert.equal(headBytes(s, max), ref(s, max), `head ${max} ${JSON.stringify(s)}`);
      assert.equal(tailBytes(s, max), refTail(s, max), `tail ${max} ${JSON.stringify(s)}`);
    }
  }
  // only the first `max` units of a long ASCII string are looked at, and given
  assert.equal(headBytes('x'.repeat(1 << 20), 4096).length, 4096);
});

test('footprints: the six DESIGN vectors, and every record vector, as the writer mints them', () => {
  for (const v of vectors.design) assert.equal(footprintId(v.key), v.id, v.key);
  let n = 0;
  for (const v of vectors.records) {
    if (v.id === null || v.record.footprint) continue;       // the writer mints only records it made
    const key = footprintKey(v.record);
    assert.equal(key, v.key, v.name);
    assert.equal(footprintId(key), v.id, v.name);
    n++;
  }
  assert.ok(n >= 3, `record vectors checked: ${n}`);
});

test('createRecorder: refuses a renderer without render(), and exposes exactly the documented verbs', () => {
  assert.throws(() => createRecorder({}), /renderer/);
  globalThis.requestAnimationFrame = () => 0;
  globalThis.cancelAnimationFrame = () => {};
  const renderer = { render() { return 7; }, info: { render: { calls: 1, triangles: 2, points: 0, lines: 0 }, memory: { geometries: 1, textures: 0 }, programs: [] } };
  const original = renderer.render;
  const rec = createRecorder({ renderer, endpoint: 'http://127.0.0.1:9', build: 'v1' });
  try {
    assert.deepEqual(Object.keys(rec).sort(), ['cut', 'flush', 'hold', 'setPhase', 'state', 'stop', 'subscribe', 'track', 'usermark']);
    assert.notEqual(renderer.render, original, 'render is wrapped');
    assert.equal(renderer.render({}, {}), 7, 'and still returns what render returned');
    const st = rec.state();
    assert.equal(st.recording, true);
    assert.equal(st.build, 'v1');
  } finally {
    rec.stop();
    delete globalThis.requestAnimationFrame;
    delete globalThis.cancelAnimationFrame;
  }
  assert.equal(renderer.render, original, 'stop() puts render back');
});

test('a long-script hitch stops waiting once an entry ending at or after its frame has come', () => {
  // a frame [1000, 1120]: entries of frames before it settle nothing
  assert.equal(loafSettled([], 1120), false);
  assert.equal(loafSettled([{ startTime: 900, duration: 60 }], 1120), false);
  // its own entry (scripts or none), or one of a later frame, settles it
  assert.equal(loafSettled([{ startTime: 900, duration: 60 }, { startTime: 1000, duration: 125 }], 1120), true);
  assert.equal(loafSettled([{ startTime: 1130, duration: 55 }], 1120), true);
  // an entry that ends inside the frame: a later one may still hold its script
  assert.equal(loafSettled([{ startTime: 990, duration: 60 }], 1120), false);
});

test('loafOverlaps: an entry for any part of the frame', () => {
  assert.equal(loafOverlaps([], 1000, 1120), false);
  assert.equal(loafOverlaps([{ startTime: 900, duration: 100 }], 1000, 1120), false, 'ends where the frame begins');
  assert.equal(loafOverlaps([{ startTime: 900, duration: 101 }], 1000, 1120), true);
  assert.equal(loafOverlaps([{ startTime: 1120, duration: 60 }], 1000, 1120), false, 'begins where it ends');
  assert.equal(loafOverlaps([{ startTime: 1050, duration: 60 }], 1000, 1120), true);
});

test('classifier: a frame the browser made no Long Animation Frames entry for is not long-script', () => {
  const idle = classifyFrame(frame({ frameMs: 140, insideMs: 3, loaf: 'absent' }));
  assert.equal(idle[0].guess, 'gc-or-upload-by-elimination');
  assert.equal(idle[0].confidence, 'medium');
  assert.match(idle[0].evidence, /no Long Animation Frames entry.*outside the page/);
  assert.ok(!idle.some((c) => c.guess === 'long-script'), JSON.stringify(idle));
  assert.equal(idle.filter((c) => c.guess === 'gc-or-upload-by-elimination').length, 1, 'said once');
  // an entry that named no script is still a script's frame
  assert.equal(classifyFrame(frame({ frameMs: 140, insideMs: 3, loaf: 'none' }))[0].guess, 'long-script');
  // inside render it is the render's, entry or not
  assert.equal(classifyFrame(frame({ frameMs: 140, insideMs: 120, loaf: 'absent' }))[0].guess, 'long-render');
});

// The recorder itself, frame by frame, on the virtual clock (virtualPage,
// below): animation frames and the browser's Long Animation Frames
// entries are the browser's, so here they are driven by the test (the
// real ones: tests/browser/game.test.mjs, the demo's crowdTick named).  Not real
// time: on a loaded machine a real 70 ms busy loop came with 26 ms
// frames of the machine's own around it, and one of those could take
// the hitch limit's second.
async function loafScenario(entriesAt) {
  const srv = await collector();
  const page = virtualPage({ loaf: true });
  // the default budget: a 25 ms frame is a hitch, an ordinary 16 ms one never
  const rec = await recordOn(page, srv, { loafWaitMs: 60000 });
  try {
    for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
    const from = page.vt();
    page.frame(70, { cost: 0.5 });                  // the hitch: 69.5 ms outside render
    const to = page.vt();
    await page.tick();
    const held = [];
    for (let k = 1; k <= 6; k++) {
      const e = entriesAt(k, from, to);
      if (e) page.entry(e);
      page.frame(16, { cost: 2 });
      // two tasks a frame: the census's walk and end after the first
      // frame, the record's two halves after the second
      await page.tick();
      await page.tick();
      held.push(rec.state().held);
    }
    const got = await finish(rec, page, srv);
    return { held, hitch: got.find((r) => r.type === 'hitch' && r.frameMs === 70), got };
  } catch (e) { page.restore(); srv.s.close(); throw e; }
}

async function waitUntil(cond, what, ms = 10000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out: ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('recorder: a long-script hitch with no entry at all waits three frames, not its whole deadline, and is not a script', async () => {
  const { held, hitch } = await loafScenario(() => null);
  // made in the four tasks after the frame that closed it (the next one)
  // — the census's walk, its end, the record's two halves — it waits;
  // the close of the third frame after its own lets it go
  assert.deepEqual(held, [0, 1, 1, 0, 0, 0], 'held after each frame: ' + held);
  assert.equal(hitch.classification[0].guess, 'gc-or-upload-by-elimination', JSON.stringify(hitch.classification));
  assert.match(hitch.script.unavailable, /no Long Animation Frames entry/);
});

test('recorder: a long-script hitch takes the script of an entry that comes two frames later', async () => {
  const { hitch } = await loafScenario((k, from, to) => (k === 2 ? {
    startTime: from - 1, duration: to - from,
    scripts: [{ startTime: from, duration: to - from - 2, sourceFunctionName: 'crowdTick', sourceURL: 'http://x/main.js', sourceCharPosition: 42, invoker: 'FrameRequestCallback', invokerType: 'user-callback' }],
  } : null));
  assert.equal(hitch.classification[0].guess, 'long-script');
  assert.equal(hitch.classification[0].confidence, 'high');
  assert.equal(hitch.script.name, 'crowdTick');
});

test('recorder: an entry for the frame that names no script leaves it long-script, said so', async () => {
  const { hitch } = await loafScenario((k, from, to) => (k === 1 ? { startTime: from - 1, duration: to - from, scripts: [] } : null));
  assert.equal(hitch.classification[0].guess, 'long-script');
  assert.match(hitch.script.unavailable, /named no script/);
});

// --- the recorder on a scripted page, on a virtual clock -----------------------
//
// What these check is not timing: performance.now() is replaced by a clock
// the test moves, so a "34 ms frame" is 34 ms whatever the machine's load.
// The page is a stand-in for three.js with the parts the recorder reads
// (render(), info, properties, a scene graph, a camera's world matrix);
// tests/browser/game.test.mjs and tests/games/ drive the real thing.
function virtualPage({ loaf = false, oldThree = false, timeline = false } = {}) {
  const real = performance.now;
  let vt = 10000;
  // page.readCost: each read of the clock moves it (a census's slices
  // then end on their budget, as on a real clock)
  performance.now = () => { const t = vt; vt += page.readCost; page.reads++; return t; };
  let raf = null;
  const saved = { PerformanceObserver: globalThis.PerformanceObserver };
  let made = [];
  globalThis.requestAnimationFrame = (fn) => { raf = fn; return 1; };
  globalThis.cancelAnimationFrame = () => { raf = null; };
  // document.timeline: its currentTime is the animation frame's (page.anim)
  if (timeline) globalThis.document = { visibilityState: 'visible', timeline: { get currentTime() { page.timelineReads++; return page.anim; } } };
  if (loaf) {
    globalThis.PerformanceObserver = class {
      static supportedEntryTypes = ['long-animation-frame'];
      observe() {}
      disconnect() {}
      takeRecords() { const e = made; made = []; return e; }
    };
  }
  const props = new Map();
  const programs = [];
  const canvas = { width: 400, height: 300 };
  let nextId = 1;
  const camera = { position: { x: 0, y: 2, z: 5 }, quaternion: { x: 0, y: 0, z: 0, w: 1 },
    matrixWorld: { elements: new Array(16).fill(0) } };
  const scene = { isScene: true, visible: true, children: [], type: 'Scene' };
  const page = {
    vt: () => vt, canvas, camera, scene, programs, anim: null,
    readCost: 0, reads: 0, timelineReads: 0, renderCost: 0, triangles: 100, textures: 0, calls: 1,
    renderer: {
      // three before r15x: get() only, which makes an empty entry for what it has not seen
      domElement: canvas, properties: oldThree ? { get: (o) => { if (!props.has(o)) props.set(o, {}); return props.get(o); } }
        : { has: (o) => props.has(o), get: (o) => props.get(o) },
      info: { render: { calls: 0, triangles: 0, points: 0, lines: 0 }, memory: { geometries: 1, textures: 0 }, programs },
      render(sc, cam) {
        // a material never rendered gets a program (a compile); a texture never used is uploaded
        const walk = (o) => {
          if (o.material && !(props.has(o.material) && props.get(o.material).currentProgram)) {
            const prog = { id: nextId++ };
            programs.push(prog);
            props.set(o.material, { currentProgram: prog });
          }
          if (o.material && o.material.map && !(props.has(o.material.map) && props.get(o.material.map).__webglTexture)) {
            props.set(o.material.map, { __webglTexture: {} });   // three makes it with the upload
            page.renderer.info.memory.textures++;
          }
          // three writes the modelViewMatrix of what it draws
          if (o.modelViewMatrix) o.modelViewMatrix.elements[12] = 1;
          for (const c of o.children || []) walk(c);
        };
        walk(sc);
        vt += page.renderCost;
        page.renderer.info.render.calls = page.calls;
        page.renderer.info.render.triangles = page.triangles;
        const e = cam.matrixWorld.elements;
        e[12] = cam.position.x; e[13] = cam.position.y; e[14] = cam.position.z;
      },
    },
    mesh(name, material, parent = scene) {
      const mv = new Array(16).fill(0);
      mv[0] = mv[5] = mv[10] = mv[15] = 1;      // identity until drawn
      const o = { isMesh: true, type: 'Mesh', id: nextId++, name, material, visible: true, children: [], parent,
        modelViewMatrix: { elements: mv } };
      parent.children.push(o);
      return o;
    },
    material(name, type = 'ShaderMaterial', extra = {}) { return { type, name, id: nextId++, ...extra }; },
    // one frame of `ms`: script time outside render, then render; the
    // recorder's animation-frame callback is given `at` (default: the
    // render clock's time)
    frame(ms, { cost = 0, at } = {}) {
      vt += ms - cost;
      page.renderCost = cost;
      raf(at === undefined ? vt : at);
      page.renderer.render(scene, camera);
      page.renderCost = 0;
    },
    entry(e) { made.push(e); },
    // animation frames with no render (a game that renders on demand, idle)
    idle(ms, ticks) { for (let i = 0; i < ticks; i++) { vt += ms / ticks; raf(vt); } },
    tick: () => new Promise((r) => setTimeout(r, 0)),
    restore() {
      performance.now = real;
      delete globalThis.requestAnimationFrame;
      delete globalThis.cancelAnimationFrame;
      if (timeline) delete globalThis.document;
      globalThis.PerformanceObserver = saved.PerformanceObserver;
    },
  };
  return page;
}

async function recordOn(page, srv, opts = {}) {
  return createRecorder({ renderer: page.renderer, endpoint: srv.url, confirm: false, heartbeatMs: 3600000, ...opts });
}

function collector() {
  return server((req, res, body, got) => {
    const recs = JSON.parse(body);
    got.push(...recs);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ v: 1, records: recs.length, accepted: recs.length, refused: 0, refusals: [], bytes: body.length }));
  });
}

async function finish(rec, page, srv) {
  await rec.flush();
  rec.stop();
  await page.tick();
  page.restore();
  srv.s.close();
  return srv.got;
}

test('recorder: the heartbeat made at load to run its code once is dropped — nothing sent, counted or kept from it', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  const st = rec.state();
  assert.deepEqual(st.made, { heartbeat: 0, hitch: 0, usermark: 0, jitter: 0 });
  assert.deepEqual([st.queued, st.frames, st.medianMs, st.incidents.length], [0, 0, null, 0]);
  assert.equal(typeof st.own.loadMs, 'number', 'what it cost the load is said');
  assert.deepEqual([st.own.ms, st.own.tasks], [0, 0], 'and not counted as a task of its own');
  for (let i = 0; i < 20; i++) { page.frame(16); await page.tick(); }
  rec.usermark({ windowMs: 100000 });
  const got = await finish(rec, page, srv);
  assert.deepEqual(got.map((r) => r.type), ['usermark'], 'the only record is the one asked for');
  assert.ok(got[0].frames > 0 && got[0].frames <= 20, `${got[0].frames} frames: of the 20 played, none of the warm-up's`);
});

test('recorder: a slow game is not judged against a median of one or two frames (34 ms frames from the start are no hitch)', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 80; i++) { page.frame(34.2); await page.tick(); }
  const got = await finish(rec, page, srv);
  assert.deepEqual(got.filter((r) => r.type === 'hitch').map((r) => [r.frame, r.frameMs, r.medianMs]), []);
});

test('recorder: delta.triangles is the change since the frame before, not the count', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  page.triangles = 75000;
  for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
  page.triangles = 75566;
  page.frame(90); page.frame(16); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs >= 90);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.delta.triangles, 566);
});

test('recorder: a canvas resize is one resize record, and the frames of the new size are judged against their own level', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 90; i++) { page.frame(10); await page.tick(); }
  page.canvas.width = 1600; page.canvas.height = 1200;
  page.frame(120, { cost: 100 });          // the reallocation and the first frame at the new size
  await page.tick();
  for (let i = 0; i < 150; i++) { page.frame(45, { cost: 40 }); await page.tick(); }   // the new level: 4.5 × the old
  const got = await finish(rec, page, srv);
  const hitches = got.filter((r) => r.type === 'hitch');
  assert.equal(hitches.length, 1, JSON.stringify(hitches.map((r) => [r.frame, r.frameMs, r.classification[0].guess])));
  assert.equal(hitches[0].classification[0].guess, 'resize');
  assert.deepEqual(hitches[0].resize, { from: [400, 300], to: [1600, 1200] });
  assert.match(hitches[0].footprint.key, /^hitch\|unset\|resize\|-\|ctx:$/);
});

// A burst of new materials, unnamed (runtime ids only) or named by
// instance, on a fresh page: the footprint must not move with the ids, the
// instance numbers or which part of the burst landed in the frame.
async function compileBurst({ named, split, skipIds = 0 }) {
  const srv = await collector();
  const page = virtualPage();
  for (let i = 0; i < skipIds; i++) page.material('warm-up');     // shifts every runtime id
  page.mesh('ground', page.material('mat_ground', 'MeshLambertMaterial'));
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const group = page.mesh('', null);
  group.isMesh = false; group.type = 'Group';
  const add = (from, to) => { for (let i = from; i < to; i++) page.mesh(named ? `beacon_${i}` : '', page.material(named ? `mat_glow_${i}` : '', 'ShaderMaterial'), group); };
  if (split) {
    add(0, 5); page.frame(160, { cost: 150 }); await page.tick();
    // more than a second on: each compile gets its own record
    for (let i = 0; i < 80; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
    add(5, 12); page.frame(170, { cost: 160 }); await page.tick();
  } else { add(0, 12); page.frame(300, { cost: 290 }); await page.tick(); }
  page.frame(16); await page.tick();
  const got = await finish(rec, page, srv);
  return got.filter((r) => r.type === 'hitch' && r.classification[0].guess === 'shader-compile');
}

test('footprint: a compile burst is one footprint across reloads, runtime ids and the frame it landed in', async () => {
  const a = await compileBurst({ named: true, split: false });
  const b = await compileBurst({ named: true, split: true, skipIds: 7 });
  const c = await compileBurst({ named: false, split: false });
  const d = await compileBurst({ named: false, split: false, skipIds: 3 });
  assert.equal(a.length, 1); assert.equal(b.length, 2);
  const ids = new Set([...a, ...b].map((r) => r.footprint.id));
  assert.equal(ids.size, 1, JSON.stringify([...a, ...b].map((r) => r.footprint.key)));
  assert.equal(a[0].footprint.key, 'hitch|unset|shader-compile|ShaderMaterial:mat_glow_#@beacon_#|ctx:');
  assert.ok(a[0].minted.includes('mat_glow_0@beacon_0'), 'minted keeps the names as they are, for a human');
  assert.equal(c[0].footprint.id, d[0].footprint.id, `${c[0].footprint.key} vs ${d[0].footprint.key}`);
  assert.ok(!/#\d/.test(c[0].footprint.key), c[0].footprint.key);
  assert.ok(a[0].footprint.key.length <= 200);
});

test('recorder: the census\'s finds go to the frame whose programs moved, not to a long-script hitch queued before it', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  // two hitches before the after-frame task gets to run (a busy machine)
  page.frame(80, { cost: 2 });                                   // a script ran long
  for (let i = 0; i < 12; i++) page.mesh(`beacon_${i}`, page.material(`mat_glow_${i}`));
  page.frame(90, { cost: 85 });                                  // the compile
  page.frame(16, { cost: 2 });
  await page.tick();
  const got = await finish(rec, page, srv);
  const hitches = got.filter((r) => r.type === 'hitch');
  const compile = hitches.find((r) => r.delta.programs === 12);
  const script = hitches.find((r) => r.frameMs === 80);
  assert.ok(compile && script, JSON.stringify(hitches.map((r) => [r.frameMs, r.classification[0].guess, r.minted])));
  assert.equal(compile.classification[0].guess, 'shader-compile');
  assert.equal(compile.minted.length, 12);
  assert.deepEqual(script.minted, []);
});

test('recorder: the camera passed to render() is tracked for jitter with no game code', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.camera.position.x = i * 0.1; page.frame(16); await page.tick(); }
  page.camera.position.x = 6.0 + 2.5; page.frame(16); await page.tick();      // a snap
  for (let i = 61; i < 90; i++) { page.camera.position.x = i * 0.1; page.frame(16); await page.tick(); }
  const got = await finish(rec, page, srv);
  const j = got.filter((r) => r.type === 'jitter');
  assert.ok(j.some((r) => r.track === 'camera' && r.kind === 'snap' && r.units > 2), JSON.stringify(j));
  assert.equal(got.find((r) => r.type === 'jitter').phase, 'unset', 'the phase says the game set none');
});

test('recorder: motion is judged on the animation frames\' clock, so renders that end late then early on a loaded machine are not jumps', async () => {
  // The game steps its camera on the animation frame's time, 16.7 ms
  // apart, as the demo does; the renders end unevenly (script time before
  // each render of 6 to 30 ms, a loaded machine's).  One real snap of 2.5.
  const uneven = [27.5, 6.4, 20.4, 6.7, 30.1, 9.2, 16.7, 24.8, 7.3, 16.7];
  const run = async (timeline) => {
    const srv = await collector();
    const page = virtualPage({ timeline });
    const rec = await recordOn(page, srv);
    let anim = 10000;
    for (let i = 0; i < 200; i++) {
      anim += 16.7;
      page.anim = anim;
      page.camera.position.x = anim * 0.0045 + (i >= 150 ? 2.5 : 0);      // 4.5 units a second
      page.frame(uneven[i % uneven.length]);
      await page.tick();
    }
    const got = await finish(rec, page, srv);
    page.restore();
    return got.filter((r) => r.type === 'jitter');
  };
  const on = await run(true);
  assert.equal(on.length, 1, JSON.stringify(on));
  assert.equal(on[0].kind, 'snap');
  assert.ok(Math.abs(on[0].units - 2.5) < 0.01, `units ${on[0].units}`);
  assert.equal(on[0].dtMs, 16.7, 'the snap\'s frame on the animation clock');
  // the same page judged on render ends (no timeline) sees the clocks disagree
  const off = await run(false);
  assert.ok(off.some((r) => r.units < 1), `render ends alone make small "jumps": ${JSON.stringify(off.map((r) => [r.kind, r.units]))}`);
});

test('recorder: the animation frame\'s time is its own callback\'s when that agrees with the timeline — read one frame in 32, every frame while they differ', async () => {
  const srv = await collector();
  const page = virtualPage({ timeline: true });
  const rec = await recordOn(page, srv);
  const uneven = [27.5, 6.4, 20.4, 6.7, 30.1, 9.2, 16.7, 24.8, 7.3, 16.7];
  let anim = 10000;
  // the game steps its camera on the animation frames' clock (one snap of
  // 2.5 at frame 150); the renders end unevenly
  const play = (from, to, agree) => {
    for (let i = from; i < to; i++) {
      anim += 16.7;
      page.anim = anim;
      page.camera.position.x = anim * 0.0045 + (i >= 150 ? 2.5 : 0);
      page.frame(uneven[i % uneven.length], { at: agree ? anim : anim - 16.7 });
    }
  };
  play(0, 100, true);
  await page.tick();
  const agreeing = page.timelineReads;
  play(100, 200, true);
  await page.tick();
  // our callback given the timeline's time: read once in 32 frames
  assert.ok(page.timelineReads - agreeing <= Math.ceil(100 / 32) + 1, `${page.timelineReads - agreeing} reads in 100 frames`);
  // a game whose callback runs first: ours has the frame before's time
  const r0 = page.timelineReads;
  play(200, 300, false);
  await page.tick();
  assert.ok(page.timelineReads - r0 >= 100 - 32, `${page.timelineReads - r0} reads in 100 frames once the clocks differ`);
  const got = await finish(rec, page, srv);
  // motion still on the animation clock: the one snap, on its 16.7 ms frame
  const j = got.filter((r) => r.type === 'jitter');
  assert.equal(j.length, 1, JSON.stringify(j));
  assert.equal(j[0].dtMs, 16.7, JSON.stringify(j[0]));
  assert.ok(Math.abs(j[0].units - 2.5) < 0.01, `units ${j[0].units}`);
});

test('recorder: at 4 fps the Long Animation Frames wait outlasts a frame, so a named script is still named', async () => {
  const srv = await collector();
  const page = virtualPage({ loaf: true });
  const rec = await recordOn(page, srv, { budgetFrameMs: 16.7 });
  for (let i = 0; i < 60; i++) { page.frame(250, { cost: 20 }); await page.tick(); }
  const from = page.vt();
  page.frame(1400, { cost: 20 });                      // 1,380 ms of script outside render
  const to = page.vt();
  await page.tick();
  page.frame(250, { cost: 20 }); await page.tick();    // its entry comes two frames later: 500 ms
  page.entry({ startTime: from, duration: to - from, scripts: [{ startTime: from + 1, duration: to - from - 25,
    sourceFunctionName: 'pathfind', sourceURL: 'http://127.0.0.1:5173/src/ai.js?t=99', sourceCharPosition: 10, invoker: 'FrameRequestCallback', invokerType: 'user-callback' }] });
  page.frame(250, { cost: 20 }); await page.tick();
  page.frame(250, { cost: 20 }); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 1400);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.classification[0].guess, 'long-script');
  assert.equal(h.classification[0].confidence, 'high');
  assert.equal(h.script.name, 'pathfind');
  assert.equal(h.footprint.key, 'hitch|unset|long-script|pathfind@/src/ai.js|ctx:');
});

test('recorder: a named script that covers a sliver of the frame is not its cause: low confidence, how much it covered, no-script key', async () => {
  const srv = await collector();
  const page = virtualPage({ loaf: true });
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(200, { cost: 20 }); await page.tick(); }
  const from = page.vt();
  page.frame(1732, { cost: 20 });
  const to = page.vt();
  page.entry({ startTime: from, duration: to - from, scripts: [{ startTime: to - 30, duration: 26, sourceFunctionName: 'animate',
    sourceURL: 'http://127.0.0.1:5173/src/main.js', sourceCharPosition: 5, invoker: 'FrameRequestCallback', invokerType: 'user-callback' }] });
  await page.tick();
  for (let i = 0; i < 4; i++) { page.frame(200, { cost: 20 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 1732);
  assert.ok(h);
  assert.equal(h.classification[0].guess, 'long-script');
  assert.equal(h.classification[0].confidence, 'low');
  // (its 26 ms less the 16 of the render inside it: the callback that rendered)
  assert.match(h.classification[0].evidence, /animate .*covered 10 ms of the 1712 ms the page's long animation frames covered \(1 %\): not what the frame waited on/);
  assert.ok(h.script.share < 0.5);
  assert.equal(h.footprint.key, 'hitch|unset|long-script|no-script|ctx:');
});

test('recorder: its own scripts are never named as a cause', async () => {
  const srv = await collector();
  const page = virtualPage({ loaf: true });
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const from = page.vt();
  page.frame(130, { cost: 2 });
  const to = page.vt();
  const own = new URL('../../page-runtime/recorder.js', import.meta.url).href;
  page.entry({ startTime: from, duration: to - from, scripts: [{ startTime: from + 1, duration: to - from - 5,
    sourceFunctionName: 'afterFrame', sourceURL: own, sourceCharPosition: 1, invoker: 'TimerHandler:setTimeout', invokerType: 'user-callback' }] });
  await page.tick();
  for (let i = 0; i < 4; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 130);
  assert.ok(h);
  assert.ok(!JSON.stringify(h.script).includes('recorder.js'), JSON.stringify(h.script));
  assert.ok(h.recorderMs >= 100, `the record says the recorder's own work took its time: ${h.recorderMs}`);
  assert.ok(!/recorder\.js/.test(h.footprint.key));
});

test('classifier: a 4096² upload beside one trivial new material is texture-upload; its stall in the next frame is the upload\'s', () => {
  const f = frame({ frameMs: 900, insideMs: 700, delta: { programs: 1, textures: 1 }, uploadBytes: 4096 * 4096 * 4 * 4 / 3 });
  const c = classifyFrame(f);
  assert.equal(c[0].guess, 'texture-upload', JSON.stringify(c));
  assert.equal(c[0].confidence, 'high');
  assert.match(c[0].evidence, /about 85\.3 MB uploaded/);
  assert.equal(c.find((g) => g.guess === 'shader-compile').confidence, 'low');
  // twelve programs beside a small texture stay a compile
  assert.equal(classifyFrame(frame({ insideMs: 90, delta: { programs: 12, textures: 1 }, uploadBytes: 65536 }))[0].guess, 'shader-compile');
  // the stall after a 2048² upload on an existing material, with a script named that covers a sliver
  const after = classifyFrame(frame({ frameMs: 438, insideMs: 3, loaf: 'found', before: { programs: 0, textures: 1, uploadBytes: 2048 * 2048 * 4 },
    script: { name: 'animate', sourceURL: 'http://x/main.js', charPosition: 1, invoker: 'FrameRequestCallback', durationMs: 9, coveredMs: 6, share: 0.014 } }));
  assert.equal(after[0].guess, 'texture-upload', JSON.stringify(after));
  assert.match(after[0].evidence, /textures \+1 \(about 16 MB\) in the frame before/);
});

test('classifier: the recorder\'s own time is left out of the verdict and said', () => {
  const c = classifyFrame(frame({ frameMs: 60, insideMs: 40, recorderMs: 15 }));
  assert.equal(c[0].guess, 'long-render');
  assert.match(c[0].evidence, /the recorder's own work took 15 ms of this frame/);
});

// --- what the demo's crowdTick frame showed in headless Chromium on a loaded
// machine (docs/recorder.md, "Long Animation Frames"): the entries of one
// long frame, as the browser made them ----------------------------------------

const script = (name, startTime, duration, file = 'main.js') => ({ startTime, duration, sourceFunctionName: name,
  sourceURL: `http://127.0.0.1:5173/${file}`, sourceCharPosition: 7, invoker: 'FrameRequestCallback', invokerType: 'user-callback' });

// A 40 ms game, then one long frame [from, to] with 5 ms of render at its
// end; `entries(from, to)` lists [k, entry]: the entry comes after the k-th
// frame that follows.  Returns the records.
async function longFrame(entries, { ms = 450, more = [] } = {}) {
  const srv = await collector();
  const page = virtualPage({ loaf: true });
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(40, { cost: 5 }); await page.tick(); }
  const frames = [];
  for (const m of [ms, ...more]) {
    const from = page.vt();
    page.frame(m, { cost: 5 });
    const to = page.vt();
    frames.push([from, to, entries(from, to)]);
    await page.tick();
    for (let k = 1; k <= 6; k++) {
      for (const [at, e] of frames.at(-1)[2]) if (at === k) page.entry(e);
      page.frame(40, { cost: 5 }); await page.tick();
    }
    for (let i = 0; i < 30; i++) { page.frame(40, { cost: 5 }); await page.tick(); }
  }
  return (await finish(rec, page, srv)).filter((r) => r.type === 'hitch');
}

test('recorder: a sliver of the game loop at the start of the frame does not end the wait — the long callback in the entry after it is named', async () => {
  // the loop's entry over the frame's first 5 ms comes first; the one
  // holding the 254 ms callback a frame later; 180 ms of the frame no
  // entry covers (the GPU process catching up, on SwiftShader)
  const hitches = await longFrame((from, to) => [
    [1, { startTime: from - 20, duration: 25, scripts: [script('loop', from - 15, 18)] }],
    [2, { startTime: from + 5, duration: 260, scripts: [script('crowdTick', from + 6, 254)] }],
    [3, { startTime: to - 30, duration: 40, scripts: [] }],
  ]);
  const h = hitches.find((r) => r.frameMs === 450);
  assert.ok(h, JSON.stringify(hitches.map((r) => [r.frameMs, r.classification[0].guess])));
  assert.equal(h.classification[0].guess, 'long-script', JSON.stringify(h.classification));
  assert.equal(h.classification[0].confidence, 'high');
  assert.equal(h.script.name, 'crowdTick');
  assert.equal(h.script.coveredMs, 254);
  assert.equal(h.script.pageMs, 290, 'the page\'s time: the entries over the frame outside render');
  assert.ok(h.script.share > 0.8, String(h.script.share));
  assert.match(h.classification[0].evidence, /crowdTick .*254 ms of the 290 ms the page's long animation frames covered \(88 %\); no Long Animation Frames entry covered the other 155 ms \(a wait outside the page\)/);
  assert.equal(h.footprint.key, 'hitch|unset|long-script|crowdTick@/main.js|ctx:');
});

test('recorder: a frame mostly outside any entry is a wait outside the page — one verdict and one footprint, whether a sliver of script came or none', async () => {
  // the first long frame: a sliver of the loop (10 ms) over its start, the
  // rest (435 ms) no entry; the second: no entry at all
  let n = 0;
  const got = await longFrame((from) => (n++ === 0
    ? [[1, { startTime: from - 20, duration: 30, scripts: [script('loop', from - 15, 25)] }]]
    : []), { more: [450] });
  const long = got.filter((r) => r.frameMs === 450);
  assert.equal(long.length, 2, JSON.stringify(got.map((r) => [r.frameMs, r.classification[0].guess])));
  for (const h of long) assert.equal(h.classification[0].guess, 'gc-or-upload-by-elimination', JSON.stringify(h.classification));
  assert.match(long[0].classification[0].evidence, /entries covered only 10 ms of it; the longest script it named, loop, covered 10 ms: for the other 435 ms nothing held the main thread/);
  assert.match(long[1].classification[0].evidence, /made no Long Animation Frames entry for the frame/);
  assert.equal(long[0].footprint.id, long[1].footprint.id, `${long[0].footprint.key} vs ${long[1].footprint.key}`);
  assert.equal(long[0].footprint.key, 'hitch|unset|gc-or-upload-by-elimination|-|ctx:');
});

test('recorder: two different scripts that run long within one second are two records and two footprints', async () => {
  const srv = await collector();
  const page = virtualPage({ loaf: true });
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const long = [];
  for (const name of ['pathfind', 'crowdTick']) {
    const from = page.vt();
    page.frame(300, { cost: 2 });
    const to = page.vt();
    page.entry({ startTime: from, duration: to - from + 5, scripts: [script(name, from + 1, 290)] });
    long.push(to);
    await page.tick();
    for (let i = 0; i < 10; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  }
  assert.ok(long[1] - long[0] < 1000, 'within one second');
  const got = await finish(rec, page, srv);
  const h = got.filter((r) => r.type === 'hitch' && r.frameMs === 300);
  assert.deepEqual(h.map((r) => r.script.name), ['pathfind', 'crowdTick'], JSON.stringify(got.filter((r) => r.type === 'hitch').map((r) => [r.frameMs, r.classification[0].guess])));
  assert.equal(new Set(h.map((r) => r.footprint.id)).size, 2);
});

// A page with one crate drawn (its material warm) and sixty calm frames recorded.
async function calmCrate(opts = {}) {
  const srv = await collector();
  const page = virtualPage();
  const crate = page.material('mat_crate', 'MeshLambertMaterial');
  page.mesh('crate', crate);
  const rec = await recordOn(page, srv, opts);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  return { srv, page, crate, rec };
}

test('recorder: objects added before a census and drawn after it are the spawn frame\'s, not the census\'s', async () => {
  const { srv, page, crate, rec } = await calmCrate();
  page.renderer.info.memory.geometries++;          // a frame that wants a census
  page.frame(16, { cost: 2 });
  page.frame(16, { cost: 2 });                     // closes it: its census is queued
  for (let i = 0; i < 100; i++) page.mesh('crate', crate);    // a task adds a hundred crates…
  await page.tick();                               // …the census runs before any frame drew them
  page.renderer.info.memory.geometries += 100;
  page.frame(300, { cost: 280 });                  // the frame that draws them
  await page.tick();
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 300);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.classification[0].guess, 'spawn-burst', JSON.stringify(h.classification));
  assert.equal(h.world.spawnedCount, 100);
});

test('recorder: a crowd the game adds in the frame after a hitch is that frame\'s, not the hitch\'s (the hitch closes at the crowd\'s render, its census walks after)', async () => {
  const { srv, page, crate, rec } = await calmCrate();
  page.frame(70, { cost: 2 });                     // a hitch that wakes nobody: it closes at the next render
  await page.tick();
  for (let i = 0; i < 1000; i++) page.mesh('crate', crate);   // the game's update adds a crowd…
  page.renderer.info.memory.geometries += 1000;
  page.frame(90, { cost: 70 });                    // …and draws it: the hitch before closes at this render
  await page.tick();                               // the census for the hitch before walks now, the crowd drawn
  for (let i = 0; i < 40; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const hs = got.filter((r) => r.type === 'hitch');
  const show = JSON.stringify(hs.map((r) => [r.frameMs, r.classification[0].guess, r.world.spawnedCount ?? r.world.spawned.length]));
  const crowd = hs.find((r) => r.frameMs === 90);
  assert.ok(crowd, show);
  assert.equal(crowd.classification[0].guess, 'spawn-burst', show);
  assert.equal(crowd.world.spawnedCount, 1000, show);
  const before = hs.find((r) => r.frameMs === 70);
  assert.ok(before, show);
  assert.equal(before.world.spawnedCount ?? before.world.spawned.length, 0, `the hitch before did not spawn the crowd: ${show}`);
});

test('recorder: a crowd a heartbeat\'s census walks before the crowd\'s frame has closed is that frame\'s (the census had no frame to give it to)', async () => {
  // the heartbeat, run when the test says (its interval is the recorder's)
  const realSetInterval = globalThis.setInterval;
  let beat = null;
  globalThis.setInterval = (fn, ms) => (ms === 3600001 ? (beat = fn, 0) : realSetInterval(fn, ms));
  let calm;
  try { calm = await calmCrate({ heartbeatMs: 3600001 }); } finally { globalThis.setInterval = realSetInterval; }
  const { srv, page, crate, rec } = calm;
  for (let i = 0; i < 1000; i++) page.mesh('crate', crate);   // the game's update adds a crowd…
  page.renderer.info.memory.geometries += 1000;
  page.frame(90, { cost: 70 });                    // …and draws it; the frame closes at the next render
  if (beat) beat();                                // a heartbeat in between: its census walks the crowd
  for (let i = 0; i < 20; i++) await page.tick();  // (the clock stands still: its census walks in one task)
  for (let i = 0; i < 40; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const hs = got.filter((r) => r.type === 'hitch');
  const show = JSON.stringify(hs.map((r) => [r.frameMs, r.classification[0].guess, r.world.spawnedCount ?? r.world.spawned.length]));
  assert.ok(beat, 'the heartbeat was caught');
  assert.ok(got.some((r) => r.type === 'heartbeat'), 'and it beat');
  const crowd = hs.find((r) => r.frameMs === 90);
  assert.ok(crowd, show);
  assert.equal(crowd.classification[0].guess, 'spawn-burst', show);
  assert.equal(crowd.world.spawnedCount, 1000, show);
});

// The crowd's record when its cost lands in its own frame (`stall` false),
// or — on a software renderer, the GPU process catching up — in the frame
// after it (`stall`: a fast crowd frame, then `stallMs` mostly outside
// render, drawing `adds` new geometries of its own — what CI's browser
// saw: +1; `censusBetween`: the crowd frame's census runs before the
// stall closes; `reused`: the crowd's geometry and material were in use
// before it — only its draw calls rise).
async function crowdRecord({ stall, stallMs = 300, adds = 0, censusBetween = false, reused = false }) {
  const { srv, page, crate, rec } = await calmCrate();
  for (let i = 0; i < 1000; i++) page.mesh('crate', crate);     // the game adds a crowd…
  if (reused) page.calls += 1000;
  else page.renderer.info.memory.geometries += 1000;
  if (!stall) page.frame(300, { cost: 280 });                  // …and draws it, in a frame of its own cost
  else {
    page.frame(16, { cost: 2 });                               // …and draws it in a frame of 16 ms
    if (censusBetween) await page.tick();
    page.renderer.info.memory.geometries += adds;
    page.frame(stallMs, { cost: 2 });                          // the next frame waits outside render
  }
  await page.tick();
  for (let i = 0; i < 40; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  // its view snapshot (posted when the page is idle)
  const deadline = Date.now() + 5000;
  while (!srv.snapshots.some((v) => v.hitch.guess === 'spawn-burst') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const got = await finish(rec, page, srv);
  const hs = got.filter((r) => r.type === 'hitch');
  const show = JSON.stringify(hs.map((r) => [r.frame, r.frameMs, r.classification[0].guess, r.world.spawnedCount ?? r.world.spawned.length, r.before]));
  const h = hs.find((r) => r.frameMs === (stall ? stallMs : 300));
  return { h, hs, show, view: h && srv.snapshots.find((v) => v.ref === h.snapshotRef) };
}

test('recorder: a crowd whose stall lands in the frame after it is that frame\'s spawn burst, the frame before named — one footprint with the crowd whose own frame stalled', async () => {
  const own = await crowdRecord({ stall: false });
  assert.ok(own.h, own.show);
  assert.equal(own.h.classification[0].guess, 'spawn-burst', own.show);
  assert.equal(own.h.before, undefined, 'its own frame: nothing before');
  assert.equal(own.view.hitch.before, undefined, 'its view: repro compares the hitch\'s own frame');
  // a waking stall's close walks the crowd's frame and its own at once;
  // a shorter one's census comes after the crowd frame's
  for (const [what, opts] of [['waking, a geometry of its own', { stall: true, adds: 1 }], ['waking, nothing of its own', { stall: true }],
    ['census between', { stall: true, stallMs: 90, adds: 1, censusBetween: true }]]) {
    const { h, hs, show, view } = await crowdRecord(opts);
    assert.ok(h, `${what}: ${show}`);
    assert.equal(h.classification[0].guess, 'spawn-burst', `${what}: ${show}`);
    assert.equal(h.classification[0].confidence, 'medium');
    assert.match(h.classification[0].evidence, /^1000 objects first rendered in the frame before \(threshold 50\), then 8\d of 9\d ms outside render|^1000 objects first rendered in the frame before \(threshold 50\), then 29\d of 300 ms outside render/, `${what}: ${h.classification[0].evidence}`);
    assert.equal(h.before.frame, h.frame - 1, `${what}: ${show}`);
    assert.equal(h.before.spawned, 1000);
    assert.equal(h.before.delta.geometries, 1000, `${what}: what moved in the crowd's frame, for repro`);
    assert.ok(view, `${what}: its view snapshot was sent`);
    assert.deepEqual(view.hitch.before, { frame: h.frame - 1, delta: h.before.delta }, `${what}: repro compares the crowd's frame`);
    assert.equal(h.world.spawnedCount, 1000);
    assert.equal(h.world.spawnedEntities.length, h.world.spawned.length);
    assert.ok(h.delta.geometries <= 1, `its own counters are its own: ${JSON.stringify(h.delta)}`);
    assert.equal(h.footprint.key, own.h.footprint.key, `${what}: one cause, one footprint`);
    assert.equal(hs.filter((r) => r.classification[0].guess === 'spawn-burst').length, 1, `${what}: one record of the crowd: ${show}`);
  }
});

test('recorder: a crowd of meshes whose geometry and material were in use is its own frame\'s, its stall in the frame after it or not (only its draw calls rose)', async () => {
  const own = await crowdRecord({ stall: false, reused: true });
  assert.ok(own.h, own.show);
  assert.equal(own.h.classification[0].guess, 'spawn-burst', own.show);
  assert.equal(own.h.delta.calls, 1000, own.show);
  // its own frame moved no memory counter and was no hitch: nothing but
  // its draw calls queues its census, and the stall after it needs that
  for (const [what, opts] of [['waking', { stall: true, reused: true }], ['census between', { stall: true, stallMs: 90, reused: true, censusBetween: true }]]) {
    const { h, hs, show, view } = await crowdRecord(opts);
    assert.ok(h, `${what}: ${show}`);
    assert.equal(h.classification[0].guess, 'spawn-burst', `${what}: ${show}`);
    assert.equal(h.classification[0].confidence, 'medium', `${what}: ${show}`);
    assert.match(h.classification[0].evidence, /^1000 objects first rendered in the frame before \(threshold 50\), draw calls \+1000 in it, then/, `${what}: ${h.classification[0].evidence}`);
    assert.equal(h.before.frame, h.frame - 1, `${what}: ${show}`);
    assert.equal(h.before.delta.calls, 1000, `${what}: ${JSON.stringify(h.before)}`);
    assert.deepEqual(view.hitch.before, { frame: h.frame - 1, delta: h.before.delta }, `${what}: repro compares the crowd's frame`);
    assert.equal(h.delta.calls, 0, `${what}: its own counters are its own: ${JSON.stringify(h.delta)}`);
    assert.equal(h.footprint.key, own.h.footprint.key, `${what}: one cause, one footprint`);
    assert.equal(hs.filter((r) => r.classification[0].guess === 'spawn-burst').length, 1, `${what}: one record of the crowd: ${show}`);
  }
});

test('recorder: the render wrapper\'s own time is the recorder\'s, all in — the game\'s render in it is not, nor a task counted already', async () => {
  // (every render timed: the figure is exact, not a sample's)
  const { srv, page, rec } = await calmCrate({ ownSample: 1 });
  const before = rec.state().own;
  // each read of the clock moves it 0.01 ms: the wrapper's reads around
  // the game's render are its own time; the render itself costs 5 ms
  page.readCost = 0.01;
  for (let i = 0; i < 100; i++) { page.frame(20, { cost: 5 }); await page.tick(); }
  page.readCost = 0;
  const st = rec.state();
  await finish(rec, page, srv);
  const render = st.own.renderMs - before.renderMs;
  assert.ok(render >= 100 * 0.02 - 0.2 && render < 100 * 0.1, `the wrapper's own ${render} ms over 100 frames (two reads of 0.01 ms a frame at least, never the 5 ms render)`);
  // (ms and renderMs are rounded to 0.1 ms, msPerFrame is not)
  assert.ok(Math.abs(st.own.msPerFrame - (st.own.ms + st.own.renderMs) / st.frames) <= 0.001 + 0.1 / st.frames, JSON.stringify(st.own));
  assert.ok(st.own.msPerFrame > st.own.ms / st.frames, 'msPerFrame is all in: its tasks and the wrapper');
  // before any such read, a calm page's wrapper costs nothing on this clock
  assert.equal(before.renderMs, 0, JSON.stringify(before));
});

test('recorder: by default the wrapper times itself on one render in eight, counted eight times — two clock reads a frame fewer', async () => {
  const { srv, page, rec } = await calmCrate();
  const before = rec.state().own.renderMs;
  page.readCost = 0.01;
  const reads0 = page.reads;
  for (let i = 0; i < 800; i++) page.frame(20, { cost: 5 });
  const reads = (page.reads - reads0) / 800;
  page.readCost = 0;
  await page.tick();
  const render = rec.state().own.renderMs - before;
  await finish(rec, page, srv);
  // a timed render reads the clock four times, the others twice (the
  // render's start and end, which the frame's figures need)
  assert.ok(reads > 2 && reads < 2.5, `${reads} clock reads a render`);
  // each timed render's own 0.02 ms, eight times: about 0.02 ms a render
  // on average — never the untimed renders' nothing, never eight times all
  assert.ok(render > 800 * 0.02 * 0.6 && render < 800 * 0.02 * 1.4, `the wrapper's own ${render} ms over 800 renders`);
});

test('recorder: draw calls that jump back to what the ring saw queue no census; past it, one', async () => {
  const { srv, page, rec } = await calmCrate();
  // (the censuses that covered a queued frame; no heartbeat here)
  const walks0 = rec.state().censuses;
  const walks = () => rec.state().censuses - walks0;
  const play = async (calls) => { page.calls = calls; for (let i = 0; i < 5; i++) { page.frame(16, { cost: 2 }); await page.tick(); } };
  await play(400);                                             // the camera turns to a crowd of the scene's
  const first = walks();
  for (const calls of [1, 400, 1, 390, 1, 400]) await play(calls);  // …away and back, three times
  const back = walks();
  await play(1);
  await play(460);                                             // 40 more than the most drawn, a jump from 1
  const past = walks();
  await play(440);                                             // less than that, no jump: none
  const last = walks();
  await finish(rec, page, srv);
  assert.equal(first, 1, 'a jump past anything drawn: a census');
  assert.equal(back, first, 'the camera turning back to what the ring drew queues none');
  assert.equal(past, first + 1, 'past the most the ring drew: a census');
  assert.equal(last, past);
});

test('recorder: a crowd sharing one geometry is its own frame\'s, not a frame beside it that made more geometries (its draw calls rose)', async () => {
  const { srv, page, crate, rec } = await calmCrate();
  for (let i = 0; i < 1000; i++) page.mesh('crate', crate);     // a crowd of one shared geometry…
  page.renderer.info.memory.geometries += 1;
  page.calls = 1001;                                           // …a draw call each
  page.frame(90, { cost: 70 });                                // its own frame, a hitch that wakes nobody
  page.renderer.info.memory.geometries += 2;                   // the next frame makes two geometries of its own
  page.frame(16, { cost: 2 });
  page.frame(16, { cost: 2 });                                 // both closed: one census covers them
  await page.tick();
  for (let i = 0; i < 20; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const hs = got.filter((r) => r.type === 'hitch');
  const show = JSON.stringify(hs.map((r) => [r.frame, r.frameMs, r.classification[0].guess, r.world.spawnedCount ?? r.world.spawned.length]));
  const h = hs.find((r) => r.frameMs === 90);
  assert.ok(h, show);
  assert.equal(h.classification[0].guess, 'spawn-burst', show);
  assert.equal(h.world.spawnedCount, 1000, show);
});

test('classifier: the frame after a crowd, held back outside render with no script, is the crowd\'s', () => {
  const held = classifyFrame(frame({ frameMs: 250, insideMs: 2, loaf: 'none', before: { programs: 0, textures: 0, spawned: 1000, calls: 1000 } }));
  assert.equal(held[0].guess, 'spawn-burst', JSON.stringify(held));
  assert.match(held[0].evidence, /^1000 objects first rendered in the frame before \(threshold 50\), draw calls \+1000 in it, then 248 of 250 ms outside render/);
  // below the threshold, or time inside render: not the crowd's
  assert.equal(classifyFrame(frame({ insideMs: 2, before: { spawned: 49 } }), { spawnBurst: 50 })[0].guess, 'long-script');
  assert.equal(classifyFrame(frame({ insideMs: 100, before: { spawned: 1000 } }))[0].guess, 'long-render');
  // a compile in it too: the compile first
  assert.deepEqual(classifyFrame(frame({ insideMs: 2, before: { programs: 2, spawned: 1000 } })).map((g) => g.guess), ['shader-compile', 'spawn-burst']);
});

test('recorder: a program compiled while a sliced census walks is found by the next census, for the frame that compiled it', async () => {
  const srv = await collector();
  const page = virtualPage();
  const beacon = page.mesh('beacon_0', page.material('mat_glow_0'));     // walked first
  const crate = page.material('mat_crate', 'MeshLambertMaterial');
  for (let i = 0; i < 1500; i++) page.mesh('crate', crate);
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  page.renderer.info.memory.geometries++;
  page.frame(16, { cost: 2 });
  page.frame(16, { cost: 2 });
  page.readCost = 0.3;                             // the census's first slice: the beacon and some crates
  await page.tick();
  page.readCost = 0;
  beacon.material = page.material('mat_glow_1');   // a new material on an object already drawn
  page.frame(300, { cost: 290 });                  // compiled in this frame, while the census was half way
  await page.tick();
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  // (the frame is a little over 300 ms: the slice's clock reads count)
  const h = got.find((r) => r.type === 'hitch' && r.frameMs >= 300);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.classification[0].guess, 'shader-compile');
  assert.deepEqual(h.sites, ['ShaderMaterial:mat_glow_1@beacon_0']);
  assert.equal(h.footprint.key, 'hitch|unset|shader-compile|ShaderMaterial:mat_glow_#@beacon_#|ctx:');
});

// 1,500 crates walked before one beacon (the census's last object), the
// recorder past its first frames: what a sliced census walks.
async function beaconWalkedLast() {
  const srv = await collector();
  const page = virtualPage();
  const crate = page.material('mat_crate', 'MeshLambertMaterial');
  for (let i = 0; i < 1500; i++) page.mesh('crate', crate);
  const beacon = page.mesh('beacon_0', page.material('mat_glow_0'));
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  return { srv, page, beacon, rec };
}

function hitchesOf(got) {
  const hitches = got.filter((r) => r.type === 'hitch');
  return { hitches, show: JSON.stringify(hitches.map((r) => [r.frameMs, r.classification[0].guess, r.delta.programs, r.minted, r.sites])) };
}

test('recorder: a program a later frame compiled before a sliced census reached it is that frame\'s, not the covered hitch\'s', async () => {
  const { srv, page, beacon, rec } = await beaconWalkedLast();
  // a hitch that moved no counter, under 100 ms (so its census is sliced,
  // not run to the end at once as a wake-worthy one's is): the census covers it
  // (a frame is closed when the next one starts)
  page.frame(60, { cost: 2 });
  page.frame(16, { cost: 2 });
  page.readCost = 0.3;                             // the census's first slice: crates only
  await page.tick();
  page.readCost = 0;
  beacon.material = page.material('mat_glow_1');
  page.frame(300, { cost: 290 });                  // compiled here, before the walk reached the beacon
  page.frame(16, { cost: 2 });
  await page.tick();
  for (let i = 0; i < 4; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const { hitches, show } = hitchesOf(got);
  const before = hitches.find((r) => r.frameMs >= 60 && r.frameMs < 300);
  const compile = hitches.find((r) => r.frameMs >= 300);
  assert.ok(before && compile, show);
  assert.deepEqual(before.minted, [], `the covered hitch took the later frame's compile: ${show}`);
  assert.equal(compile.classification[0].guess, 'shader-compile', show);
  assert.deepEqual(compile.sites, ['ShaderMaterial:mat_glow_1@beacon_0'], show);
  assert.deepEqual(compile.minted, ['mat_glow_1@beacon_0'], show);
});

test('recorder: a program the still-open frame compiled before a sliced census reached it waits for that frame\'s census', async () => {
  // (what the demo showed under load: the compile's frame closes only when
  // the next one starts, so a census slice can run between its render and
  // its close and meet the new programs first)
  const { srv, page, beacon, rec } = await beaconWalkedLast();
  page.frame(70, { cost: 2 });                     // a hitch that moved no counter
  page.frame(16, { cost: 2 });                     // (closes it)
  page.readCost = 0.3;                             // the census's first slice: crates only
  await page.tick();
  beacon.material = page.material('mat_glow_1');
  page.frame(55, { cost: 45 });                    // compiles; under 100 ms, so it stays open
  page.readCost = 0;
  await page.tick();                               // the census ends while that frame is open
  for (let i = 0; i < 4; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const got = await finish(rec, page, srv);
  const { hitches, show } = hitchesOf(got);
  const before = hitches.find((r) => r.frameMs >= 70);
  const compile = hitches.find((r) => r.delta.programs === 1);
  assert.ok(before && compile && before !== compile, show);
  assert.deepEqual(before.minted, [], `the covered hitch took the open frame's compile: ${show}`);
  assert.equal(compile.classification[0].guess, 'shader-compile', show);
  assert.deepEqual(compile.sites, ['ShaderMaterial:mat_glow_1@beacon_0'], show);
});

test('recorder: a compile in the second frame of a fresh page has its sites (the first census walks before that frame draws)', async () => {
  const srv = await collector();
  const page = virtualPage();
  page.mesh('desk', page.material('', 'ShadowMaterial'));
  const rec = await recordOn(page, srv);
  page.frame(16, { cost: 2 });                       // the game's first render: its desk
  for (let i = 0; i < 4; i++) page.mesh('', page.material('Glass', 'MeshStandardMaterial'));   // the first roll's dice…
  page.frame(400, { cost: 390 });                    // …drawn, compiled, in the very next frame
  await page.tick();
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 400);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.classification[0].guess, 'shader-compile');
  assert.deepEqual(h.sites, ['MeshStandardMaterial:Glass@Mesh']);
  assert.deepEqual(h.warmup, { frames: 2, needed: 30 });
});

test('recorder: a game that renders on demand — the time it sat idle between two renders is no frame\'s', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  page.idle(3000, 180);                              // three seconds of animation frames, nothing rendered
  page.frame(16, { cost: 2 }); await page.tick();    // the next roll's first frame
  for (let i = 0; i < 5; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  page.idle(3000, 180);
  page.frame(200, { cost: 190 }); await page.tick();  // this one is long by itself: 190 ms after its animation frame began
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  const hitches = got.filter((r) => r.type === 'hitch');
  assert.deepEqual(hitches.map((r) => r.frameMs), [190], 'only the frame long by itself, from its animation frame\'s start');
});

test('recorder: on a three with no properties.has() (r143, a game\'s own bundle), programs and uploads are still found, with their bytes', async () => {
  const srv = await collector();
  const page = virtualPage({ oldThree: true });
  const warm = page.material('mat_board', 'MeshBasicMaterial');
  page.mesh('board', warm);
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const map = { isTexture: true, image: { width: 4096, height: 4096 }, format: 1023, type: 1009, generateMipmaps: false };
  page.mesh('billboard', page.material('mat_billboard', 'MeshBasicMaterial', { map }));
  page.frame(900, { cost: 880 }); await page.tick();
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 900);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.uploadBytes, 4096 * 4096 * 4);
  assert.equal(h.classification[0].guess, 'texture-upload', JSON.stringify(h.classification));
  assert.deepEqual(h.sites, ['MeshBasicMaterial:mat_billboard@billboard']);
});

test('recorder: an upload\'s sites are those that carry its bytes — a label uploaded in the same frame as a 4096² atlas does not change its cause', async () => {
  const srv = await collector();
  const page = virtualPage({ oldThree: true });
  page.mesh('board', page.material('mat_board', 'MeshBasicMaterial'));
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const tex = (w, h) => ({ isTexture: true, image: { width: w, height: h }, format: 1023, type: 1009, generateMipmaps: false });
  page.mesh('billboard', page.material('mat_billboard', 'MeshBasicMaterial', { map: tex(4096, 4096) }));
  page.mesh('label', page.material('mat_label', 'SpriteMaterial', { map: tex(256, 64) }));
  page.frame(900, { cost: 880 }); await page.tick();
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 900);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.uploadBytes, 4096 * 4096 * 4 + 256 * 64 * 4, 'both uploads are counted');
  assert.equal(h.classification[0].guess, 'texture-upload', JSON.stringify(h.classification));
  assert.deepEqual(h.sites, ['MeshBasicMaterial:mat_billboard@billboard']);
});

test('recorder: an upload\'s sites are what uploaded — not the objects that happened to come into view in the same frame', async () => {
  const srv = await collector();
  const page = virtualPage();
  const note = page.material('mat_note', 'SpriteMaterial');
  page.mesh('note', note);
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const map = { isTexture: true, image: { width: 4096, height: 4096 }, format: 1023, type: 1009, generateMipmaps: false };
  page.mesh('billboard', page.material('mat_billboard', 'MeshBasicMaterial', { map }));
  for (let i = 0; i < 3; i++) page.mesh(`note_${i}`, note);      // notes scrolling in, their program warm
  page.frame(900, { cost: 880 }); await page.tick();
  page.frame(16, { cost: 2 }); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 900);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.classification[0].guess, 'texture-upload', JSON.stringify(h.classification));
  assert.deepEqual(h.sites, ['MeshBasicMaterial:mat_billboard@billboard']);
  assert.ok(h.minted.includes('mat_note@note_0'), 'minted still lists every pair, for a human');
  assert.equal(h.footprint.key, 'hitch|unset|texture-upload|MeshBasicMaterial:mat_billboard@billboard|ctx:');
});

test('recorder: a hitch names a view snapshot of the frames from 30 before it — each frame\'s camera and time — sent on its own route', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 70; i++) {
    page.camera.position.x = i * 0.5;
    page.frame(i === 60 ? 120 : 16);
    await page.tick();
  }
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs >= 100);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.match(h.snapshotRef, /^hitch-[0-9a-z]{1,32}-\d+$/);
  const deadline = Date.now() + 5000;
  while (!srv.snapshots.some((s) => s.ref === h.snapshotRef) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const snap = srv.snapshots.find((s) => s.ref === h.snapshotRef);
  assert.ok(snap, `the snapshot ${h.snapshotRef} reached the daemon's route: ${JSON.stringify(srv.snapshots.map((s) => s.ref))}`);
  assert.equal(snap.v, 1);
  assert.equal(snap.fidelity, 'view');
  assert.equal(snap.frame, h.frame);
  assert.equal(snap.frames[0].frame, h.frame - 30, 'it starts 30 frames before the hitch');
  for (let i = 1; i < snap.frames.length; i++) {
    assert.equal(snap.frames[i].frame, snap.frames[i - 1].frame + 1, 'consecutive frames');
    assert.ok(snap.frames[i].t > snap.frames[i - 1].t, 'times move forward');
  }
  const hf = snap.frames.find((f) => f.frame === h.frame);
  assert.ok(hf, 'the hitch\'s own frame is in it');
  const prev = snap.frames.find((f) => f.frame === h.frame - 1);
  assert.ok(Math.abs(hf.t - prev.t - 120) < 1e-6, `the hitch frame's time is 120 ms after the one before (${hf.t - prev.t})`);
  // each frame holds the camera it drew with, not the one the game set up for the next
  const first = snap.frames[0];
  assert.deepEqual(first.camera.quaternion, [0, 0, 0, 1]);
  const steps = snap.frames.slice(1).map((f, i) => f.camera.position[0] - snap.frames[i].camera.position[0]);
  assert.ok(steps.every((d) => Math.abs(d - 0.5) < 1e-9), `the camera moved 0.5 a frame: ${steps}`);
  assert.equal(snap.hitch.frameMs, h.frameMs);
  assert.equal(rec.state().snapshots.sent >= 1, true);
});

test('recorder: a waking hitch is sent at the end of its frame\'s task; a record made after the frame in a task after the one that made it', async () => {
  const srv = await collector();
  const page = virtualPage();
  // `making`: set by the listener when a record is made, cleared by a
  // microtask — at the end of the task that made it
  let making = false;
  const sent = [];
  const logFetch = (url, init) => {
    for (const r of JSON.parse(init.body)) if (r.type === 'hitch') sent.push({ frameMs: r.frameMs, inItsTask: making });
    return fetch(url, init);
  };
  const rec = await recordOn(page, srv, { fetch: logFetch });
  let last = 0;
  rec.subscribe(() => {
    const m = rec.state().made.hitch;
    if (m !== last) { last = m; making = true; queueMicrotask(() => { making = false; }); }
  });
  for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
  page.frame(150);                  // wakes the agent: made at its frame's end
  for (let i = 0; i < 20; i++) { page.frame(16); await page.tick(); }
  page.frame(60, { cost: 50 });     // no wake: made in an after-frame task
  for (let t = 0; t < 40 && rec.state().made.hitch < 2; t++) { page.frame(16); await page.tick(); }
  const got = await finish(rec, page, srv);
  assert.equal(got.filter((r) => r.type === 'hitch').length, 2, JSON.stringify(sent));
  assert.deepEqual(sent, [{ frameMs: 150, inItsTask: true }, { frameMs: 60, inItsTask: false }]);
});

test('recorder: a hitch whose record waits for the after-frame tasks when the page is hidden is made then, and goes with the beacon', async () => {
  const srv = await collector();
  const page = virtualPage();
  // the page's window and document, as far as the recorder listens to them
  const doc = Object.assign(new EventTarget(), { visibilityState: 'visible', querySelector: () => null });
  globalThis.window = new EventTarget();
  globalThis.document = doc;
  try {
    const sent = [];
    const logFetch = (url, init) => {
      for (const r of JSON.parse(init.body)) if (r.type === 'hitch') sent.push({ frameMs: r.frameMs, keepalive: !!init.keepalive });
      return fetch(url, { ...init, keepalive: false });
    };
    const rec = await recordOn(page, srv, { fetch: logFetch });
    for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
    page.frame(60, { cost: 50 });     // a hitch that wakes nobody: its census and record wait for the after-frame tasks
    page.frame(16);
    const before = rec.state().made.hitch;
    doc.visibilityState = 'hidden';
    doc.dispatchEvent(new Event('visibilitychange'));
    const atHide = rec.state().made.hitch, sentAtHide = [...sent];
    await finish(rec, page, srv);
    assert.equal(before, 0);
    assert.equal(atHide, 1, 'made when the page was hidden');
    assert.deepEqual(sentAtHide, [{ frameMs: 60, keepalive: true }], 'and handed to the beacon then');
  } finally { delete globalThis.window; delete globalThis.document; }
});

test('recorder: a task of its own of 1 ms or more is counted and kept with its kind and frame (state().own)', async () => {
  const srv = await collector();
  const page = virtualPage();
  // the host's fetch holds the page for 3 ms (virtual) each call
  const slowFetch = (url, init) => { page.readCost = 3; performance.now(); page.readCost = 0; return fetch(url, init); };
  const rec = await recordOn(page, srv, { fetch: slowFetch });
  for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
  const calm = rec.state().own;
  const frames = rec.state().frames;
  rec.usermark({ note: 'something to send' });
  await rec.flush();
  const own = rec.state().own;
  await finish(rec, page, srv);
  assert.equal(calm.over1ms, 0, JSON.stringify(calm));
  assert.deepEqual(calm.long, []);
  assert.ok(own.over1ms >= 1, JSON.stringify(own));
  const t = own.long.at(-1);
  assert.match(t.kind, /^outbox send/);
  assert.ok(t.ms >= 3 && t.ms < 4, JSON.stringify(t));
  assert.equal(t.frame, frames);
  assert.equal(t.hitchesMade, 0);
});

test('recorder: a waking hitch made at its frame\'s end counts as its own time, of its own kind', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
  const before = rec.state().own;
  // every clock read now costs 1 ms: the close's own reads span its work
  page.readCost = 1;
  page.frame(150);
  await Promise.resolve();          // the close runs in a microtask at the end of the frame's task
  page.readCost = 0;
  const own = rec.state().own, frames = rec.state().frames;
  const got = await finish(rec, page, srv);
  const close = own.long.filter((t) => /waking hitch made at its frame's end/.test(t.kind));
  assert.equal(close.length, 1, JSON.stringify(own.long));
  assert.equal(close[0].frame, frames);
  assert.ok(own.ms > before.ms, `its time is in the total: ${before.ms} → ${own.ms}`);
  assert.ok(got.some((r) => r.type === 'hitch' && r.frameMs >= 150), 'the hitch was made');
});

// 60 steady frames, then three 60 ms frames in a row with no task between
// them (none wakes the agent: each is made after the frame): a script's,
// a new material's compile, a long render — three verdicts, so no rate
// limit takes one.
async function threeHitches() {
  const srv = await collector();
  const page = virtualPage();
  page.mesh('crate', page.material('mat_crate', 'MeshLambertMaterial'));
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
  page.frame(60);
  page.mesh('lamp', page.material('mat_lamp', 'MeshStandardMaterial'));
  page.frame(60, { cost: 50 });
  page.frame(60, { cost: 50 });
  page.frame(16);
  return { srv, page, rec };
}

const guesses = (hitches) => hitches.map((r) => [r.frame, r.classification[0].guess]);

// How many hitch records each of the recorder's tasks made: its listener
// hears each record as it is made, and a microtask (run when the task
// ends) closes that task's count.
function recordsPerTask(rec) {
  const tasks = [];
  let open = null, last = rec.state().made.hitch;
  rec.subscribe(() => {
    const m = rec.state().made.hitch;
    if (m === last) return;
    if (open === null) { open = [0]; tasks.push(open); queueMicrotask(() => { open = null; }); }
    open[0] += m - last;
    last = m;
  });
  return { counts: () => tasks.map((t) => t[0]) };
}

test('recorder: a stall of several hitch frames makes one record a task, in frame order, the census\'s finds on the frame that compiled', async () => {
  const { srv, page, rec } = await threeHitches();
  const tasks = recordsPerTask(rec);
  for (let t = 0; t < 40 && rec.state().made.hitch < 3; t++) await page.tick();
  // (in the order made: the outbox's batches may arrive in any order,
  // the daemon puts them in theirs)
  const madeOrder = rec.state().incidents.filter((i) => i.type === 'hitch').map((i) => i.verdict);
  const got = await finish(rec, page, srv);
  assert.deepEqual(tasks.counts(), [1, 1, 1], 'records made per task');
  assert.deepEqual(madeOrder, ['long-script', 'shader-compile', 'long-render'], 'made in frame order');
  const hitches = got.filter((r) => r.type === 'hitch').sort((a, b) => a.frame - b.frame);
  assert.deepEqual(hitches.map((r) => r.classification[0].guess), ['long-script', 'shader-compile', 'long-render'], JSON.stringify(guesses(hitches)));
  assert.deepEqual(hitches[1].sites, ['MeshStandardMaterial:mat_lamp@lamp'], 'the compile\'s record has the census\'s finds');
  assert.equal(hitches[0].sites, undefined);
  assert.equal(hitches[2].sites, undefined);
});

test('recorder: a waking hitch while such records wait is made at its frame\'s end alone; theirs follow, one a task', async () => {
  const { srv, page, rec } = await threeHitches();
  const tasks = recordsPerTask(rec);
  for (let t = 0; t < 40 && rec.state().made.hitch === 0; t++) await page.tick();
  assert.equal(rec.state().made.hitch, 1, 'the first of the three made, two waiting');
  page.frame(150, { cost: 130 });
  await Promise.resolve();           // the frame's end: the close has run
  const atEnd = rec.state().made.hitch;
  for (let t = 0; t < 40 && rec.state().made.hitch < 4; t++) await page.tick();
  const madeOrder = rec.state().incidents.filter((i) => i.type === 'hitch').map((i) => i.value);
  const got = await finish(rec, page, srv);
  assert.equal(atEnd, 2, 'the waking record, and not the two waiting, in the game\'s task');
  assert.deepEqual(tasks.counts(), [1, 1, 1, 1], 'records made per task (the second: the waking close)');
  assert.deepEqual(madeOrder, [60, 150, 60, 60], 'made: the first, the waking one, then the two that waited');
  const hitches = got.filter((r) => r.type === 'hitch').sort((a, b) => a.frame - b.frame);
  assert.deepEqual(hitches.map((r) => r.frameMs), [60, 60, 60, 150], JSON.stringify(guesses(hitches)));
  assert.deepEqual(hitches[1].sites, ['MeshStandardMaterial:mat_lamp@lamp'], 'the compile keeps its finds past the wake\'s census');
  assert.equal(hitches[3].sites, undefined);
});

// A recorded scene of one warm crate, `played` steady frames, then `n` more
// crates added (drawn by the next frame): the waking close's walk.
async function crowdArrived(n, played = 60) {
  const srv = await collector();
  const page = virtualPage();
  const crate = page.material('mat_crate', 'MeshLambertMaterial');
  page.mesh('crate', crate);
  const rec = await recordOn(page, srv);
  for (let i = 0; i < played; i++) { page.frame(16); await page.tick(); }
  for (let i = 0; i < n; i++) page.mesh('crate', crate);
  page.renderer.info.memory.geometries += n;
  return { srv, page, rec };
}

test('recorder: a waking hitch in a scene too big to walk at its frame\'s end goes on in slices — no task of the recorder\'s reaches 1 ms, the record is still whole', async () => {
  const { srv, page, rec } = await crowdArrived(20000);
  // each clock read costs 0.02 ms: the after-frame slices, which read it
  // every 64 objects, end on their 0.25 ms budget
  page.readCost = 0.02;
  page.frame(150, { cost: 130 });
  await Promise.resolve();          // the frame's end: the close has run
  const atEnd = rec.state();
  let ticks = 0;
  while (rec.state().made.hitch === 0 && ticks++ < 400) { page.frame(16); await page.tick(); }
  page.readCost = 0;
  const own = rec.state().own;
  const got = await finish(rec, page, srv);
  assert.equal(atEnd.made.hitch, 0, 'not made at the frame\'s end: its census did not fit');
  assert.equal(atEnd.own.deferredWakes, 1);
  assert.deepEqual(own.long, [], 'no task of the recorder\'s reached 1 ms');
  assert.equal(own.over1ms, 0);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs >= 150);
  assert.ok(h, `made after ${ticks} more frames: ${JSON.stringify(got.filter((r) => r.type === 'hitch').map((r) => r.frameMs))}`);
  assert.equal(h.world.spawnedCount, 20000, 'the census walked it all, in slices');
  assert.equal(h.classification[0].guess, 'spawn-burst', JSON.stringify(h.classification));
});

test('recorder: a waking hitch in a small scene is made at its frame\'s end however slow the clock says the machine is (a count of objects bounds that walk, not the clock)', async () => {
  const { srv, page, rec } = await crowdArrived(1000);
  // a loaded machine: the thread is taken away, every clock read is 5 ms later
  page.readCost = 5;
  page.frame(300, { cost: 280 });
  await Promise.resolve();
  page.readCost = 0;
  const atEnd = rec.state();
  const got = await finish(rec, page, srv);
  assert.equal(atEnd.made.hitch, 1, 'made and sent at the frame\'s end');
  assert.equal(atEnd.own.deferredWakes, 0);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs >= 300);
  assert.equal(h.world.spawnedCount, 1000);
});

// A thousand crates drawn first (geometries moved: a census is due, a
// wake is not) in a steady 16 ms frame; and in a 150 ms frame of a
// load's first frames — too few for a median, so judged only when a
// compile or an upload moved, yet past the wake threshold: its close is
// queued at its end, and must not walk the scene there.
for (const [what, played, ms] of [['a frame', 60, 16], ['a long frame of a young level', 5, 150]]) {
  test(`recorder: ${what} whose counters moved but that is no hitch is censused in the slices after it, never at its end in the game's task`, async () => {
    const { srv, page, rec } = await crowdArrived(1000, played);
    const before = rec.state();
    page.frame(ms);
    await Promise.resolve();          // the frame's end: the close has run
    const atEnd = rec.state();
    let ticks = 0;
    while (rec.state().censuses === before.censuses && ticks++ < 50) { page.frame(16); await page.tick(); }
    const after = rec.state();
    const got = await finish(rec, page, srv);
    assert.equal(atEnd.censuses, before.censuses, 'no census walked at the frame\'s end');
    assert.equal(atEnd.own.tasks, before.own.tasks, 'nothing of the recorder\'s ran in the game\'s task');
    assert.equal(after.censuses, before.censuses + 1, `censused in the after-frame slices (${ticks} frames later)`);
    assert.equal(got.filter((r) => r.type === 'hitch').length, 0, 'and it woke nobody');
  });
}

test('recorder: the time identity\'s add() spent capturing stacks in a frame is the recorder\'s own — that frame is judged without it', async () => {
  // the page's identity (identity.js) as the recorder sees it: its add()
  // wrapper's running total; here moved by hand, as 1,000 adds would
  const KEY = Symbol.for('sloptimize.identity');
  const idn = { addMs: 0, entityId: (o) => ({ id: 'x', via: 'auto', root: o }), siteOf: () => 'unknown', trackedObjects: () => [] };
  Object.defineProperty(globalThis, KEY, { value: idn, configurable: true });
  try {
    const srv = await collector();
    const page = virtualPage();
    const rec = await recordOn(page, srv);
    for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
    // a 45 ms frame, 30 ms of it the wrapper's: the game's own 15 ms is no hitch
    idn.addMs += 30;
    page.frame(45);
    page.frame(16); await page.tick();
    // a 45 ms frame the game spent itself is one
    page.frame(45);
    page.frame(16); await page.tick();
    const own = rec.state().own;
    const got = await finish(rec, page, srv);
    const hitches = got.filter((r) => r.type === 'hitch').map((r) => r.frameMs);
    assert.deepEqual(hitches, [45], JSON.stringify(hitches));
    const add = own.long.filter((t) => /^add\(\) of the page's identity/.test(t.kind));
    assert.equal(add.length, 1, JSON.stringify(own.long));
    assert.equal(add[0].ms, 30);
    // put on the books in the render wrapper (a frame's close) but spent
    // before it: not taken off the wrapper's own time (none on this clock)
    assert.equal(own.renderMs, 0, JSON.stringify(own));
  } finally { delete globalThis[KEY]; }
});

test('recorder: the after-frame tasks end a census walk, end the census, and make a record in two halves, each in a task of its own', async () => {
  const srv = await collector();
  const page = virtualPage();
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
  const made = () => rec.state().made.hitch;
  const censuses = () => rec.state().censuses;
  const c0 = censuses();
  page.frame(40);                   // a hitch under 100 ms: made off the frame, not at its end
  page.frame(16);                   // its close
  assert.equal(made(), 0);
  await page.tick();                // the task that walks the scene
  const afterWalk = [made(), censuses()];
  await page.tick();                // the next one: the census's end (it found nothing to name)
  const afterEnd = [made(), censuses()];
  await page.tick();                // the one after: the record's facts and verdict
  const afterFacts = [made(), censuses()];
  await page.tick();                // and the last: its view, script and footprint, queued
  const afterNext = [made(), censuses()];
  const got = await finish(rec, page, srv);
  assert.deepEqual(afterWalk, [0, c0], 'the walk\'s task made no record and gave no census');
  assert.deepEqual(afterEnd, [0, c0], 'the census\'s end made no record');
  assert.deepEqual(afterFacts, [0, c0 + 1], 'the task after it gave the census to the hitch and began its record');
  assert.deepEqual(afterNext, [1, c0 + 1], 'the next one made it');
  assert.ok(got.some((r) => r.type === 'hitch' && r.frameMs === 40));
});

test('recorder: a crowd sharing materials, one of them new, is counted whole and keyed by what is new (the census looks at a material once)', async () => {
  const srv = await collector();
  const page = virtualPage();
  const crate = page.material('mat_crate', 'MeshLambertMaterial');
  const group = page.mesh('wave', null);
  page.mesh('crate', crate);                                 // the crate's program is warm
  const rec = await recordOn(page, srv);
  for (let i = 0; i < 60; i++) { page.frame(16, { cost: 2 }); await page.tick(); }
  const glow = page.material('mat_glow', 'ShaderMaterial');  // new: compiled when first drawn
  for (let i = 0; i < 1000; i++) page.mesh(i % 2 ? 'crate' : 'glowcrate', i % 2 ? crate : glow, i % 4 < 2 ? page.scene : group);
  page.renderer.info.memory.geometries += 1000;
  page.frame(300, { cost: 280 });
  page.frame(16, { cost: 2 });
  await page.tick(); await page.tick();
  const got = await finish(rec, page, srv);
  const h = got.find((r) => r.type === 'hitch' && r.frameMs === 300);
  assert.ok(h, JSON.stringify(got.filter((r) => r.type === 'hitch')));
  assert.equal(h.world.spawnedCount, 1000);
  assert.equal(h.classification[0].guess, 'shader-compile', JSON.stringify(h.classification));
  // the compile's sites: the new material's, under each parent; never the warm crate's
  assert.deepEqual(h.sites, ['ShaderMaterial:mat_glow@glowcrate', 'ShaderMaterial:mat_glow@wave/glowcrate']);
  // every pair the crowd made, each once
  assert.deepEqual(h.minted, ['mat_crate@crate', 'mat_glow@glowcrate']);
});

test('recorder: an after-frame task of 1 ms or more is named by its step — a census\'s finds named (one a task when each is slow), a hitch\'s record', async () => {
  // the page's identity as the recorder sees it, each of its calls made
  // to hold the page on the virtual clock: naming an entity (a census's
  // finds named) 2 ms, listing the tracked objects (a record's view snapshot) 3 ms
  const KEY = Symbol.for('sloptimize.identity');
  let page = null;
  const hold = (ms) => { page.readCost = ms; performance.now(); page.readCost = 0; };
  const idn = { addMs: 0, entityId: (o) => { hold(2); return { id: 'x', via: 'auto', root: o }; }, siteOf: () => 'unknown',
    trackedObjects: () => { hold(3); return []; } };
  Object.defineProperty(globalThis, KEY, { value: idn, configurable: true });
  try {
    const srv = await collector();
    page = virtualPage();
    const crate = page.material('mat_crate', 'MeshLambertMaterial');
    page.mesh('crate', crate);
    const rec = await recordOn(page, srv);
    for (let i = 0; i < 60; i++) { page.frame(16); await page.tick(); }
    page.mesh('crate', crate);
    page.renderer.info.memory.geometries += 1;
    page.frame(40);                   // under 100 ms: made in the after-frame tasks
    page.frame(16);
    for (let t = 0; t < 20 && rec.state().made.hitch === 0; t++) await page.tick();
    const own = rec.state().own;
    const got = await finish(rec, page, srv);
    assert.ok(got.some((r) => r.type === 'hitch' && r.frameMs === 40), 'the hitch was made');
    const kinds = own.long.map((t) => `${t.kind} ${t.ms}`);
    // each entity named is 2 ms (the crate spawned, the pair it minted):
    // past the naming's slice, so one a task, and the census's end, which
    // names none, is not among the long ones
    assert.deepEqual(kinds.filter((k) => /^after-frame \(a census's finds named/.test(k)).map((k) => Number(k.split(' ').at(-1)) >= 2), [true, true], JSON.stringify(kinds));
    assert.ok(!kinds.some((k) => /census's end/.test(k)), JSON.stringify(kinds));
    assert.ok(kinds.includes('after-frame (a hitch\'s record: its view, script and footprint) 3'), JSON.stringify(kinds));
    assert.equal(own.long.length, 3, JSON.stringify(kinds));
    // and each kind's count, time and longest, whatever their length
    const named = own.byKind['after-frame (a census\'s finds named: an id and a site each)'];
    assert.equal(named.tasks, 2, JSON.stringify(own.byKind));
    assert.equal(named.over1ms, 2);
    assert.ok(named.maxMs >= 2 && named.ms >= 4, JSON.stringify(named));
    assert.equal(own.byKind['after-frame (a hitch\'s record: its view, script and footprint)'].maxMs, 3, JSON.stringify(own.byKind));
  } finally { delete globalThis[KEY]; }
});
