// The virtual clock (clock.js) on a plain object standing for the page's
// globalThis: its "real" performance.now and requestAnimationFrame are the
// test's own, so every assertion is exact and nothing waits on time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { installClock, seededRandom, TICK_MS } from '../../page-runtime/clock.js';

// A page: real time moves only when the test says; real animation frames
// run when the test flushes them.
function page() {
  let t = 1000.25;
  let nextRid = 0;
  const frames = new Map();
  const g = {
    performance: { now: () => t },
    Date,
    Math: Object.create(Math),
    requestAnimationFrame: (cb) => { frames.set(++nextRid, cb); return nextRid; },
    cancelAnimationFrame: (id) => frames.delete(id),
  };
  return {
    g,
    advance(ms) { t += ms; },
    get realTime() { return t; },
    realFrames: () => frames.size,
    flushReal() { const b = [...frames.values()]; frames.clear(); for (const cb of b) cb(t); return b.length; },
  };
}

test('clock_virtual_time_moves_exactly_one_sixtieth_per_step', () => {
  const p = page();
  const c = installClock(p.g, { mode: 'virtual' });
  const t0 = p.g.performance.now();
  assert.equal(t0, 1000.25, 'virtual time starts at the real time of the install');
  p.advance(500);
  assert.equal(p.g.performance.now(), t0, 'real time passing does not move the game');
  c.step();
  assert.equal(p.g.performance.now(), t0 + TICK_MS);
  for (let i = 1; i < 600; i++) c.step();
  // frame n is at n × 1000/60 computed afresh: 600 frames are 10 s exactly
  assert.equal(p.g.performance.now(), t0 + 10000);
  assert.equal(c.frame, 600);
  assert.equal(c.real(), p.realTime, 'real() is the real clock');
});

test('clock_animation_frames_queue_and_run_on_step_with_the_frame_time', () => {
  const p = page();
  const c = installClock(p.g, { mode: 'virtual' });
  const seen = [];
  const loop = (ts) => { seen.push(ts); p.g.requestAnimationFrame(loop); };
  p.g.requestAnimationFrame(loop);
  const other = p.g.requestAnimationFrame((ts) => seen.push(`x${ts}`));
  p.g.cancelAnimationFrame(other);
  assert.equal(p.realFrames(), 0, 'a virtual clock asks the browser for nothing');
  assert.deepEqual(seen, [], 'paused until stepped');
  c.step();
  c.step();
  c.step();
  const t0 = 1000.25;
  assert.deepEqual(seen, [t0 + TICK_MS, t0 + 2 * TICK_MS, t0 + 3 * TICK_MS],
    'one call per step (a callback queued during a step waits for the next), the cancelled one never');
  seen.length = 0;
  // a callback that cancels another of its own frame stops it
  let second = 0;
  let idB = 0;
  p.g.requestAnimationFrame(() => p.g.cancelAnimationFrame(idB));
  idB = p.g.requestAnimationFrame(() => { second++; });
  c.step();
  assert.equal(second, 0, 'cancelled by an earlier callback of the same frame');
  // inside a frame, time is frozen at the frame's time
  p.g.requestAnimationFrame(() => { seen.push(p.g.performance.now()); p.advance(7); seen.push(p.g.performance.now()); });
  c.step();
  assert.equal(seen.at(-1), seen.at(-2));
  assert.equal(seen.length, 4, 'the loop in both frames, and the frozen-time callback two readings');
});

test('clock_a_throwing_callback_is_counted_and_the_rest_still_run', () => {
  const p = page();
  const reported = [];
  p.g.reportError = (e) => reported.push(e.message);
  const c = installClock(p.g, { mode: 'virtual' });
  let ran = 0;
  p.g.requestAnimationFrame(() => { throw new Error('boom'); });
  p.g.requestAnimationFrame(() => { ran++; });
  assert.equal(c.step(), 2);
  assert.equal(ran, 1);
  assert.equal(c.errors.count, 1);
  assert.match(c.errors.first, /boom/);
  assert.deepEqual(reported, ['boom'], 'reported to the page as a browser would');
});

test('clock_math_random_is_seeded_and_the_same_on_every_page_load', () => {
  const a = page(), b = page();
  installClock(a.g, { mode: 'virtual', seed: 7 });
  installClock(b.g, { mode: 'virtual', seed: 7 });
  const xs = Array.from({ length: 5 }, () => a.g.Math.random());
  const ys = Array.from({ length: 5 }, () => b.g.Math.random());
  assert.deepEqual(xs, ys);
  const gen = seededRandom(7);
  assert.deepEqual(xs, Array.from({ length: 5 }, gen));
  for (const x of xs) assert.ok(x >= 0 && x < 1);
  assert.notDeepEqual(xs, Array.from({ length: 5 }, seededRandom(8)), 'another seed, another sequence');
});

test('clock_date_follows_virtual_time_and_keeps_its_own_behaviour_with_arguments', () => {
  const p = page();
  const c = installClock(p.g, { mode: 'virtual' });
  const D = p.g.Date;
  const d0 = D.now();
  for (let i = 0; i < 60; i++) c.step();
  assert.equal(D.now(), d0 + 1000, 'sixty frames are one second of wall clock');
  assert.equal(new D().getTime(), D.now());
  assert.ok(new D() instanceof Date && new D() instanceof D);
  assert.equal(new D(0).getTime(), 0, 'with an argument it is the browser Date');
  assert.equal(D.UTC(2026, 0, 1), Date.UTC(2026, 0, 1));
  assert.equal(typeof D(), 'string', 'Date() without new is a string');
});

test('clock_passthrough_until_engaged_then_pinned_then_released_never_backwards', () => {
  const p = page();
  const c = installClock(p.g, { mode: 'passthrough' });
  assert.equal(c.mode, 'passthrough');
  assert.equal(p.g.performance.now(), p.realTime);
  const rolls = [p.g.Math.random(), p.g.Math.random()];
  assert.ok(rolls.every((x) => x >= 0 && x < 1));
  const seen = [];
  const loop = (ts) => { seen.push(ts); p.g.requestAnimationFrame(loop); };
  p.g.requestAnimationFrame(loop);
  assert.equal(p.realFrames(), 1, 'passthrough asks the browser');
  p.flushReal();
  assert.deepEqual(seen, [p.realTime]);
  assert.equal(c.engage({ seed: 3 }), true, 'this call engaged it');
  assert.equal(c.engage(), false, 'engaging twice is a no-op');
  assert.equal(p.realFrames(), 0, "the game's pending request moved to the queue, off the real clock");
  assert.equal(p.g.Math.random(), seededRandom(3)());
  const at = p.g.performance.now();
  for (let i = 0; i < 120; i++) c.step();
  assert.equal(seen.length, 121);
  assert.equal(p.g.performance.now(), at + 2000);
  // the bench ran 2 s of game time in 100 ms of real time: after release
  // the game's clock goes on from 2 s, not back to the real time
  p.advance(100);
  const before = p.g.performance.now();
  c.release();
  assert.equal(c.mode, 'passthrough');
  assert.ok(p.g.performance.now() >= before, 'never backwards');
  assert.equal(p.realFrames(), 1, 'the queued callback went back to the browser');
  p.advance(16);
  p.flushReal();
  assert.equal(seen.length, 122);
  assert.ok(seen.at(-1) >= before);
  assert.throws(() => c.step(), /not engaged/);
});

test('clock_installs_once_per_page', () => {
  const p = page();
  const a = installClock(p.g, { mode: 'virtual' });
  const b = installClock(p.g, { mode: 'passthrough' });
  assert.equal(a, b);
  assert.equal(b.mode, 'virtual', 'the first install decides (the launched browser comes first)');
});

test('clock: a replay starts at a recorded time and steps to the recorded times, never backwards', () => {
  const g = page().g;
  const clock = installClock(g, { mode: 'passthrough' });
  const seen = [];
  const loop = (t) => { seen.push([t, g.performance.now()]); g.requestAnimationFrame(loop); };
  assert.equal(clock.engage({ at: 5000 }), true);
  g.requestAnimationFrame(loop);
  clock.step(5000);
  clock.step(5033.5);
  clock.step(5020);            // earlier than the last: held, not backwards
  clock.step();                // then 1/60 s on
  assert.deepEqual(seen.map((s) => s[0]), [5000, 5033.5, 5033.5, 5033.5 + 1000 / 60]);
  assert.ok(seen.every(([t, now]) => t === now), 'performance.now() is the frame\'s time');
  clock.release();
});
