// panel-session.js in node: the Current Session tab's view — an incident
// row, the empty state, the recorder's line, a hostile record escaped —
// and the session kept from the events socket's messages, and its text
// for an agent.
process.env.TZ = 'UTC';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { incidentHtml, recorderHtml, sessionAdd, sessionCreate, sessionListHtml, sessionText } from '../../page-runtime/panel-session.js';

const hitch = {
  type: 'hitch', at: '2026-11-02T14:30:02.400Z', value: 141.2, unit: 'ms', fp: 'a64a6f58',
  key: 'hitch|play|shader-compile|mat_hull@ship_#|ctx:squad=duo', count: 3, status: 'open', phase: 'play', build: 'v1',
  guess: 'shader-compile', confidence: 'medium', evidence: 'programs +3 in the hitch frame',
};

test('a hitch is one row: time, type, value, verdict, its footprint, its count in the ledger, its status', () => {
  const html = incidentHtml({ id: '1:1090', rec: hitch, woke: false });
  assert.match(html, /^<li data-incident="1:1090" data-fp="a64a6f58">/);
  assert.match(html, /<span class="time">14:30:02<\/span>/);
  assert.match(html, /<span class="type">hitch<\/span>/);
  assert.match(html, /<span class="mono">141\.2 ms<\/span>/);
  assert.match(html, /<span class="guess">shader-compile<span class="dim">\/medium<\/span><\/span>/);
  assert.match(html, /<button type="button" class="fp" data-action="goto-issue" data-id="a64a6f58" data-fk="fp-1:1090"[^>]*>a64a6f58<\/button>/);
  assert.match(html, />×3<\/span>/);
  assert.match(html, /<span class="badge open" data-status="open">open<\/span>/);
  assert.doesNotMatch(html, /class="woke"/);
  assert.match(html, /programs \+3 in the hitch frame · phase play · build v1<\/span>/);
  assert.match(incidentHtml({ id: '1:1', rec: hitch, woke: true }), /<span class="woke" title="this record woke the agent">wake<\/span>/);
});

test('a record without a verdict or footprint says so', () => {
  const html = incidentHtml({ id: null, rec: { type: 'usermark' } });
  assert.match(html, /<span class="guess"><span class="dim">no verdict<\/span><\/span>/);
  assert.match(html, />—<\/button>/);
  assert.match(html, />×\?<\/span>/);
});

test('a hostile string in a record is escaped everywhere it shows', () => {
  const evil = '<script>alert("x")</script>';
  const html = incidentHtml({ id: '1:2', rec: { ...hitch, note: evil, guess: evil, evidence: evil, build: evil, fp: `"><img src=x onerror=alert(1)>` } });
  assert.doesNotMatch(html, /<script>/);
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /<q class="note" data-note-text>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;<\/q>/);
  assert.match(html, /data-fp="&quot;&gt;&lt;img src=x onerror=alert\(1\)&gt;"/);
});

test('the empty state says when the events socket is not connected yet', () => {
  const s = sessionCreate();
  s.started = Date.parse('2026-11-02T09:05:00Z');
  const offline = sessionListHtml(s, { live: false });
  assert.match(offline, /<p class="empty" data-empty>No incident since this page opened\. .* — the events socket is not connected yet\.<\/p>/);
  assert.match(offline, /since <strong>09:05:00<\/strong>/);
  assert.match(offline, /0 incidents · 0 footprints/);
  assert.match(offline, /data-recorder="none"/, 'no recorder in the page is said');
  const live = sessionListHtml(s, { live: true });
  assert.match(live, /as the game writes them\.<\/p>/);
  s.notes.push({ at: Date.parse('2026-11-02T09:06:00Z'), text: 'wakes after 1:5 cannot be replayed (<gone>)' });
  const noted = sessionListHtml(s, { live: true });
  assert.doesNotMatch(noted, /data-empty/, 'a note is not an empty session');
  assert.match(noted, /<li class="note">09:06:00 wakes after 1:5 cannot be replayed \(&lt;gone&gt;\)<\/li>/);
});

test('the recorder\'s line: recording, what it sent, queued, dropped, refused, reachable', () => {
  const html = recorderHtml({
    state: {
      recording: true, frames: 1200, medianMs: 16.7, phase: 'play', build: 'v2', sent: 40, queued: 2, held: 0,
      dropped: { records: 3, heartbeats: 0 }, refused: 1, lastRefusal: '413', reachable: false, lastError: 'refused',
    },
  });
  assert.match(html, /data-recorder="recording" data-reachable="false"/);
  assert.match(html, /frame 1200 · median 16\.7 ms · phase play · build v2/);
  assert.match(html, /<span data-rec-dropped>dropped 3 records<\/span>/);
  assert.match(html, /<span data-rec-refused>1 refused \(413\)<\/span>/);
  assert.match(html, /<span data-rec-reach>unreachable \(refused\), retrying<\/span>/);
  assert.match(recorderHtml({ error: '<boom>' }), /data-recorder="error"><span>The recorder did not answer: &lt;boom&gt;/);
  assert.doesNotMatch(html, /data-rec-sender/, 'said only when the sends are on the page\'s thread');
  const page = recorderHtml({ state: { recording: true, frames: 1, medianMs: null, sent: 0, queued: 0, reachable: null,
    sender: { offThread: false, why: 'the worker failed to start (a Content-Security-Policy refusing <blob:> workers?)' } } });
  assert.match(page, /<span data-rec-sender>sent from the page's own thread, each send a cost to its frame \(the worker failed to start \(a Content-Security-Policy refusing &lt;blob:&gt; workers\?\)\)<\/span>/);
  const worker = recorderHtml({ state: { recording: true, frames: 1, medianMs: null, sent: 0, queued: 0, reachable: null, sender: { offThread: true, why: null } } });
  assert.doesNotMatch(worker, /data-rec-sender/);
  assert.doesNotMatch(worker, /data-rec-deferred/, 'said only when a wake waited');
  const late = recorderHtml({ state: { recording: true, frames: 1, medianMs: null, sent: 0, queued: 0, reachable: true, own: { deferredWakes: 2 } } });
  assert.match(late, /<span data-rec-deferred>2 wakes sent after the stall \(the scene too big to walk at the frame's end\)<\/span>/);
});

test('a record then its wake are one item; a new id is a new item, newest first', () => {
  const s = sessionCreate('');
  assert.equal(sessionAdd(s, { type: 'record', id: '1:10', record: hitch }), true);
  assert.equal(sessionAdd(s, { type: 'wake', id: '1:10', line: 'sloptimize hitch …', record: { ...hitch, count: 4 } }), false);
  assert.equal(s.items.length, 1);
  assert.equal(s.items[0].woke, true);
  assert.equal(s.items[0].line, 'sloptimize hitch …');
  assert.equal(s.items[0].rec.count, 4, 'the wake brings the record up to date');
  sessionAdd(s, { type: 'record', id: '1:11', record: { ...hitch, fp: 'b' } });
  assert.deepEqual(s.items.map((i) => i.id), ['1:11', '1:10']);
});

test('the session keeps its newest 500 items', () => {
  const s = sessionCreate('');
  for (let i = 0; i < 505; i++) sessionAdd(s, { type: 'record', id: `1:${i}`, record: hitch });
  assert.equal(s.items.length, 500);
  assert.equal(s.byId.size, 500);
  assert.equal(s.byId.has('1:4'), false);
  assert.equal(s.items.at(-1).id, '1:5');
});

test('the text for an agent: footprints most frequent first, incidents oldest first, the note', () => {
  const s = sessionCreate('stutters when\nbanking');
  s.started = Date.parse('2026-11-02T09:00:00Z');
  sessionAdd(s, { type: 'record', id: '1:1', record: { ...hitch, fp: 'one', count: 1 } });
  sessionAdd(s, { type: 'record', id: '1:2', record: hitch });
  sessionAdd(s, { type: 'record', id: '1:3', record: { ...hitch, note: 'banking "left"' } });
  const lines = sessionText(s, 'http://127.0.0.1:7567').split('\n');
  assert.equal(lines[0], 'sloptimize session: 3 incidents, 2 footprints, since 2026-11-02T09:00:00.000Z (daemon http://127.0.0.1:7567)');
  assert.equal(lines[1], 'note: stutters when');
  assert.equal(lines[2], '  banking', 'a note of several lines is indented under its label');
  assert.equal(lines[3], 'footprints (this session, most frequent first):');
  assert.equal(lines[4], '  a64a6f58 ×2 here, ×3 in the ledger, status=open, verdict shader-compile/medium "programs +3 in the hitch frame"');
  assert.equal(lines[5], '    key hitch|play|shader-compile|mat_hull@ship_#|ctx:squad=duo');
  assert.match(lines[6], /^ {2}one ×1 here/);
  assert.equal(lines[9], '  2026-11-02T14:30:02.400Z hitch 141.2 ms shader-compile/medium fp=one phase=play build=v1 id=1:1');
  assert.equal(lines[11], '  2026-11-02T14:30:02.400Z hitch 141.2 ms shader-compile/medium fp=a64a6f58 phase=play build=v1 id=1:3 note="banking \\"left\\""');
  assert.match(lines.at(-1), /^details: sloptimize issues --fp <id>/);
});
