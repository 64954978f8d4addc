// The Monitor simulator (tests/monitor.mjs) is a judge: each of its rules
// is checked here on synthetic times before it judges the daemon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Monitor } from '../monitor.mjs';

test('lines within 200 ms of an event\'s first line merge into it', () => {
  const m = new Monitor();
  m.line('a', 0);
  m.line('b', 150);
  m.line('c', 200);
  m.line('d', 201);
  assert.equal(m.events.length, 2);
  assert.deepEqual(m.events[0].lines.map((l) => l.text), ['a', 'b', 'c']);
});

test('a budget of 10, refilled 1 per 2 s; an event that finds it empty is suppressed', () => {
  const m = new Monitor();
  for (let i = 0; i < 12; i++) m.line(`x${i}`, i * 300);
  // 12 events over 3.3 s: 10 + 1.65 refilled
  assert.equal(m.events.length, 11);
  assert.equal(m.suppressed.length, 1);
  const n = new Monitor();
  for (let i = 0; i < 100; i++) n.line(`y${i}`, i * 2000);
  assert.equal(n.suppressed.length, 0, 'one per 2 s never runs dry');
  assert.equal(n.minTokens, 9);
});

test('30 s of suppression stops the monitor; lines over 500 characters are cut', () => {
  const m = new Monitor();
  for (let i = 0; i < 10; i++) m.line('z', i * 250);
  let t = 2500;
  while (!m.stopped && t < 120000) {
    m.line('flood', t);
    t += 250;
  }
  assert.ok(m.stopped);
  assert.ok(t - 2500 >= 30000 && t < 45000, `stopped at ${t}`);
  const c = new Monitor();
  c.line('é'.repeat(501), 0);
  assert.equal(c.cut.length, 1);
  assert.equal([...c.events[0].lines[0].text].length, 500);
});

test('scale maps wall time to session time', () => {
  let wall = 1000;
  const m = new Monitor({ scale: 120, clock: () => wall });
  assert.equal(m.now(), 0);
  wall += 10;
  assert.equal(m.now(), 1200);
});
