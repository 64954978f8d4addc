// The entities an occurrence names (docs/attribute.md, docs/json.md), the
// same from both folds and shown by the panel: the C fold through
// `sloptimize issues --fp ID --json`, the JavaScript fold
// (page-runtime/fold.js buildIssue, what the panel folds from a
// ledger's tail), against a list worked out by hand from the rule — the
// minted, then the spawned, each "id (site)" ("id" alone when the site is
// unknown or missing), each once, at most 8, an id cut at 79 bytes and a
// site at 71 on a character boundary — and the panel's Issues tab, served
// by the daemon, showing them on the occurrence.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import { buildIssue, buildIssues } from '../../page-runtime/fold.js';
import { FLAGS } from '../browser.mjs';
import { CLI, Daemon, tmpdir, perfPath } from '../lib.mjs';

const CHROMIUM = process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium';
const longId = `enemy_${'é'.repeat(40)}`;          // 86 bytes: cut to 79 (a whole é)
const records = [
  {
    v: 1, type: 'hitch', at: '2026-09-01T09:00:00.000Z', frame: 10, frameMs: 140, phase: 'play', build: 'v1',
    world: {
      spawned: 12, spawnedCount: 12,
      spawnedEntities: [
        { name: 'crate', id: 'crate[1]', site: 'src/main.js:144' },
        { name: 'crate', id: 'crate[1]', site: 'src/main.js:144' },          // twice: once
        { name: 'ghost', id: 'ghost', site: 'unknown' },                      // unknown site: the id alone
        { name: 'nosite', id: 'nosite' },
        { name: 'x', id: '' },                                                // no id: left out
        { name: 'long', id: longId, site: 'src/spawn.js:88' },
        ...Array.from({ length: 6 }, (_, i) => ({ name: 'b', id: `b${i}`, site: `src/b.js:${i}` })),
      ],
    },
    mintedEntities: [{ minted: 'Material#3@hero', id: 'hero', site: 'src/hero.js:12' }],
    classification: { guess: 'spawn-burst', confidence: 'high', evidence: '12 objects spawned in the hitch frame' },
  },
];
const want = ['hero (src/hero.js:12)', 'crate[1] (src/main.js:144)', 'ghost', 'nosite',
  `enemy_${'é'.repeat(36)} (src/spawn.js:88)`, 'b0 (src/b.js:0)', 'b1 (src/b.js:1)', 'b2 (src/b.js:2)'];

let project, daemon, id;

before(() => {
  project = tmpdir('entities');
  fs.mkdirSync(path.dirname(perfPath(project)), { recursive: true });
  fs.writeFileSync(perfPath(project), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  id = buildIssues(records, { now: Date.parse('2026-10-01T00:00:00Z') }).issues[0].id;
});

after(async () => {
  if (daemon) await daemon.stop();
  fs.rmSync(project, { recursive: true, force: true });
});

test('both folds name the same entities, as the rule says', () => {
  assert.equal(Buffer.byteLength(`enemy_${'é'.repeat(36)}`), 78, 'a whole character past 79 bytes is dropped, not split');
  const c = spawnSync(CLI, ['issues', '--fp', id, '--json', '--project', project], { encoding: 'utf8' });
  assert.equal(c.status, 0, c.stderr);
  const fromC = JSON.parse(c.stdout).occurrences.map((o) => o.entities);
  const fromJs = buildIssue(records, id).occurrences.map((o) => o.entities);
  assert.deepEqual(fromC, [want]);
  assert.deepEqual(fromJs, [want]);
});

test('the panel shows them on the occurrence', { timeout: 120000 }, async () => {
  daemon = await new Daemon(project).start();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  try {
    const page = await browser.newPage();
    await page.goto(`${daemon.base}/?source=daemon&tab=issues`);
    await page.waitForSelector('#panel-issues[data-state="ready"]');
    await page.click(`[data-fk="row-${id}"]`);
    const shown = await page.locator(`[data-detail="${id}"] [data-entities]`).first().textContent({ timeout: 30000 });
    assert.equal(shown, want.join(', '));
  } finally {
    await browser.close();
  }
});

test('both folds give an occurrence its view snapshot, only a ref of the recorder\'s form, and issues --fp says how to replay it', () => {
  const dir = tmpdir('snapref');
  try {
    const hit = (frame, ref) => ({
      v: 1, type: 'hitch', at: `2026-09-01T09:00:0${frame % 10}.000Z`, frame, frameMs: 140, phase: 'play', build: 'v1',
      classification: { guess: 'long-render', confidence: 'medium', evidence: 'most of the frame inside render' },
      ...(ref === undefined ? {} : { snapshotRef: ref }),
    });
    const recs = [hit(11, 'hitch-k3x9-11'), hit(12, 'hitch-1144'), hit(13, '../../etc/x'), hit(14)];
    fs.mkdirSync(path.dirname(perfPath(dir)), { recursive: true });
    fs.writeFileSync(perfPath(dir), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const fp = buildIssues(recs, { now: Date.parse('2026-10-01T00:00:00Z') }).issues[0].id;
    const c = spawnSync(CLI, ['issues', '--fp', fp, '--json', '--project', dir], { encoding: 'utf8' });
    assert.equal(c.status, 0, c.stderr);
    const byFrame = (occ) => occ.map((o) => o.snapshotRef ?? null);
    const fromC = JSON.parse(c.stdout).occurrences;
    const fromJs = buildIssue(recs, fp).occurrences;
    assert.deepEqual(byFrame(fromC).sort(), ['hitch-k3x9-11', null, null, null].sort());
    assert.deepEqual(byFrame(fromJs).sort(), byFrame(fromC).sort());
    const offset = fromC.find((o) => o.snapshotRef).offset;
    const t = spawnSync(CLI, ['issues', '--fp', fp, '--project', dir], { encoding: 'utf8' });
    assert.equal(t.status, 0, t.stderr);
    assert.equal((t.stdout.match(/view snapshot/g) || []).length, 2, t.stdout);    // the one row, and the line after
    assert.match(t.stdout, new RegExp(`sloptimize repro OFFSET \\(the last: sloptimize repro ${offset}\\)`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('both folds give an occurrence whose stall was the frame before\'s work that frame and what moved in it, and issues --fp says it', () => {
  const dir = tmpdir('before');
  try {
    const hit = (frame, before) => ({
      v: 1, type: 'hitch', at: `2026-09-01T09:00:0${frame % 10}.000Z`, frame, frameMs: 300, phase: 'play', build: 'v1',
      delta: { calls: 1, triangles: 12, programs: 0, textures: 0, geometries: 1 }, sites: ['src/main.js:155'],
      classification: [{ guess: 'spawn-burst', confidence: before ? 'medium' : 'high', evidence: 'a crowd' }],
      ...(before ? { before } : {}),
    });
    const recs = [hit(11, { frame: 10, spawned: 1000, delta: { calls: 1000, triangles: 12000, programs: 0, textures: 0, geometries: 1000 } }),
      hit(21), hit(31, { frame: 'x', delta: { calls: 5 } }), hit(41, { frame: 40 })];
    fs.mkdirSync(path.dirname(perfPath(dir)), { recursive: true });
    fs.writeFileSync(perfPath(dir), recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const fp = buildIssues(recs, { now: Date.parse('2026-10-01T00:00:00Z') }).issues[0].id;
    const c = spawnSync(CLI, ['issues', '--fp', fp, '--json', '--project', dir], { encoding: 'utf8' });
    assert.equal(c.status, 0, c.stderr);
    const fromC = JSON.parse(c.stdout).occurrences, fromJs = buildIssue(recs, fp).occurrences;
    assert.equal(fromC.length, 4);
    fs.writeFileSync(path.join(dir, 'issue.json'), c.stdout);
    const v = spawnSync(process.execPath, [new URL('../validate.mjs', import.meta.url).pathname,
      new URL('../../schemas/issue.json', import.meta.url).pathname, path.join(dir, 'issue.json')], { encoding: 'utf8' });
    assert.equal(v.status, 0, v.stderr || v.stdout);
    const want = [{ frame: 10, delta: { programs: 0, textures: 0, geometries: 1000, calls: 1000, triangles: 12000 } }, null, null, { frame: 40 }];
    // (file order: the byte offsets say which record each is)
    const byOffset = (occ) => [...occ].sort((a, b) => a.offset - b.offset).map((o) => o.before ?? null);
    assert.deepEqual(byOffset(fromC), want);
    assert.deepEqual(byOffset(fromJs), want);
    assert.equal(JSON.stringify(byOffset(fromJs)), JSON.stringify(byOffset(fromC)), 'the same bytes, in the same order');
    const t = spawnSync(CLI, ['issues', '--fp', fp, '--project', dir], { encoding: 'utf8' });
    assert.equal(t.status, 0, t.stderr);
    assert.equal((t.stdout.match(/the frame before: geometries \+1000 · calls \+1000/g) || []).length, 1, t.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
