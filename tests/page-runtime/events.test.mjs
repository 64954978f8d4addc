// events.js: the panel's reading of the events socket, fed the vectors the
// daemon's schema and `sloptimize watch` are tested against
// (schemas/events-vectors.json): each good message is taken with its type
// and its fields as sent, each message the vectors say the panel cannot
// use is null, and nothing throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEvent } from '../../page-runtime/events.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const vectors = JSON.parse(fs.readFileSync(path.join(here, '..', '..', 'schemas', 'events-vectors.json'), 'utf8'));

test('the vectors are there to test against', () => {
  assert.ok(vectors.good.length >= 10);
  assert.ok(vectors.bad.length >= 10);
});

for (const v of vectors.good) {
  test(`good: ${v.name}`, () => {
    const m = parseEvent(JSON.stringify(v.message));
    assert.ok(m, 'taken');
    assert.equal(m.type, v.panel);
    assert.deepEqual(m, v.message, 'as sent: nothing renamed, nothing lost');
  });
}

for (const v of vectors.bad) {
  test(`bad: ${v.name}`, () => {
    const m = parseEvent(v.text);
    assert.equal(m === null ? null : m.type, v.panel);
  });
}

test('what is not text of an object is null, never thrown', () => {
  for (const t of ['', 'null', '1', 'true', '{}', '{"type":null}', undefined, '\u0000', '{"type":"wake","id":"1:1","line":"x","record":[]}']) {
    assert.equal(parseEvent(t), null, JSON.stringify(t));
  }
});
