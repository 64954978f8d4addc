// panel-settings.js in node: the Settings tab's view — the endpoint, the
// fix loop's level as the daemon has it, the daemon's state, and what is
// said while loading or when the daemon does not answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LEVELS, settingsHtml } from '../../page-runtime/panel-settings.js';

const status = {
  version: '0.1.0', project: '/home/dev/<game>', listen: '127.0.0.1:7567', pid: 4242, subscribers: 2,
  files: { perf: { size: 3 << 20, cursor: 1024, lag: 0, backend: 'inotify' } },
  counts: { folded: 900, incidents: 40, rows: 7, builds: 3, skipped: 1, malformedFootprints: 2 },
};
const base = { endpoint: 'http://127.0.0.1:7567', defaultEndpoint: 'http://127.0.0.1:7567' };

test('the daemon\'s level is the one checked, and said', () => {
  const html = settingsHtml({ ...base, settings: { loop: 'propose' }, status });
  assert.equal(html.match(/type="radio" name="loop"/g).length, LEVELS.length);
  assert.match(html, /data-level="propose" data-fk="level-propose" checked /);
  assert.doesNotMatch(html, /data-level="off" data-fk="level-off" checked/);
  assert.match(html, /<span class="msg" data-level-msg>now: propose<\/span>/);
});

test('the daemon\'s state: files, counts, the events socket as this panel has it', () => {
  const html = settingsHtml({ ...base, settings: { loop: 'off' }, status, sock: { state: 'live', resume: '1:99' } });
  assert.match(html, /<dt>project<\/dt><dd>\/home\/dev\/&lt;game&gt;<\/dd>/);
  assert.match(html, /<dt>listening<\/dt><dd>127\.0\.0\.1:7567 \(pid 4242\)<\/dd>/);
  assert.match(html, /<dt>perf\.jsonl<\/dt><dd>3\.0 MiB, cursor 1024, lag 0 — inotify<\/dd>/);
  assert.match(html, /<dt>skipped lines<\/dt><dd>1; 2 malformed footprints<\/dd>/);
  assert.match(html, /<dt>events socket<\/dt><dd>live, resume at 1:99; 2 subscriber\(s\)<\/dd>/);
});

test('loading, then a daemon that does not answer: the levels are disabled and the error says what to do', () => {
  const loading = settingsHtml({ ...base, loading: { settings: true } });
  assert.match(loading, /<span class="msg" data-level-msg>loading…<\/span>/);
  assert.match(loading, /<h3>Daemon<\/h3><p class="loading">Loading…<\/p>/);
  const down = settingsHtml({ ...base, errors: { settings: 'cannot reach x', status: 'cannot reach <x>' } });
  assert.equal(down.match(/ disabled>/g).length, LEVELS.length);
  assert.match(down, /<span class="msg" data-level-msg>cannot reach x<\/span>/);
  assert.match(down, /<div class="error" role="alert" data-error>cannot reach &lt;x&gt;<br>/);
});

test('a hostile endpoint stays inside its attribute', () => {
  const html = settingsHtml({ ...base, endpoint: '"><script>alert(1)</script>', sourceLine: '<div class="source" data-view="daemon"></div>' });
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  assert.match(html, /<h3>Catalogue view<\/h3><div class="source" data-view="daemon"><\/div>/);
  assert.match(html, /<code>\/api\/sloptimize\/…<\/code>/);
});
