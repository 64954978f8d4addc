// libcurl and libnotify are loaded the first time they are used
// (sink/lazycurl.h, notifier/lazynotify.h), never linked:
//  - a daemon with no sink and desktop notifications off has neither
//    mapped, nor glib; a sink (even to a closed port) maps libcurl, and
//    desktop notifications on map libnotify and glib, each without the
//    other;
//  - a library that cannot be loaded, for real: LD_LIBRARY_PATH names a
//    directory whose libcurl.so.4 and libnotify.so.4 are not ELF files
//    (dlopen fails: "file too short"), or an ELF library of that SONAME
//    without curl's functions (dlsym fails).  The daemon says so in its
//    log, /status and doctor, and keeps folding and serving; the CLI's
//    verbs that need curl exit non-zero with one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, top, tmpdir, waitFor, appendFromProcess, perfPath, hitch, Daemon } from '../lib.mjs';

const GEN = path.join(top, 'tests', 'genledger.py');
const HEAVY = /\/lib(curl|notify|glib-2\.0|gio-2\.0|gobject-2\.0|gdk_pixbuf)[^/]*\.so/;

function gen(dir, ...args) {
  const r = spawnSync('python3', [GEN, dir, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

// The shared objects a process has mapped, by file name.
function mapped(pid) {
  const names = new Set();
  for (const line of fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
    const f = line.split(/\s+/)[5];
    if (f && f.includes('.so')) names.add(path.basename(f));
  }
  return [...names];
}
const has = (pid, re) => mapped(pid).some((n) => re.test(n));

// A directory that shadows the real libraries with files dlopen refuses.
function brokenLibs() {
  const dir = tmpdir('badlib');
  fs.writeFileSync(path.join(dir, 'libcurl.so.4'), 'not a library\n');
  fs.writeFileSync(path.join(dir, 'libnotify.so.4'), 'not a library\n');
  return dir;
}

test('no sink, no desktop: neither libcurl nor libnotify nor glib is mapped', async () => {
  const p = tmpdir('lazy-none');
  gen(p, '--records', '300', '--seed', '3');
  const d = await new Daemon(p, { args: ['--desktop', '0'] }).start();
  try {
    await d.caughtUp();
    const libs = mapped(d.proc.pid);
    assert.ok(libs.some((n) => n.startsWith('libuv.so')), `the maps are read: ${libs}`);
    assert.deepEqual(libs.filter((n) => HEAVY.test(`/${n}`)), [], `mapped: ${libs}`);
    const st = await d.status();
    assert.equal(st.sink, null);
    assert.equal(st.notifier.desktop, 'disabled');
  } finally {
    assert.equal((await d.stop()).code, 0, d.log.slice(-800));
  }
});

test('a sink maps libcurl and nothing of libnotify; desktop bubbles map libnotify and glib', async () => {
  const p = tmpdir('lazy-sink');
  gen(p, '--records', '300', '--seed', '4');
  // nothing listens on port 1: the sink backs off, but its client exists
  const d = await new Daemon(p, { args: ['--desktop', '0', '--sink', 'http://127.0.0.1:1/'] }).start();
  try {
    assert.ok(has(d.proc.pid, /^libcurl\.so/), `libcurl mapped: ${mapped(d.proc.pid)}`);
    assert.ok(!has(d.proc.pid, /^lib(notify|glib-2\.0|gobject-2\.0)\.so/), `no glib: ${mapped(d.proc.pid)}`);
    assert.notEqual((await d.status()).sink.state, 'unavailable');
  } finally {
    assert.equal((await d.stop()).code, 0, d.log.slice(-800));
  }
  // desktop on (no session bus here): the start-up probe loads libnotify
  // on the thread pool, then finds no server
  const d2 = await new Daemon(p, { args: ['--desktop', '1'] }).start();
  try {
    await waitFor(async () => (await d2.status()).notifier.desktop.startsWith('unavailable: no D-Bus'),
      { what: `the probe's answer\n${d2.log}` });
    assert.ok(has(d2.proc.pid, /^libnotify\.so/), `libnotify mapped: ${mapped(d2.proc.pid)}`);
    assert.ok(has(d2.proc.pid, /^libglib-2\.0\.so/), `glib mapped: ${mapped(d2.proc.pid)}`);
    assert.ok(!has(d2.proc.pid, /^libcurl\.so/), `no libcurl: ${mapped(d2.proc.pid)}`);
  } finally {
    assert.equal((await d2.stop()).code, 0, d2.log.slice(-800));
  }
});

test('libcurl and libnotify that cannot be loaded: the daemon says why and keeps folding and serving', async () => {
  const bad = brokenLibs();
  const p = tmpdir('lazy-bad');
  gen(p, '--records', '300', '--seed', '5');
  const env = { LD_LIBRARY_PATH: bad };
  const d = await new Daemon(p, { env, args: ['--desktop', '1', '--sink', 'http://u:secret@127.0.0.1:1/?database=lz'] }).start();
  try {
    await d.caughtUp();
    // the log, at start: which library, why (dlerror's text), what is off
    await waitFor(() => /desktop notifications off: cannot load libnotify/.test(d.log), { what: `the desktop's line\n${d.log}` });
    assert.match(d.log, /sink off: cannot load libcurl \(libcurl\.so\.4\), which the sink needs: \S*badlib[^:]*\/libcurl\.so\.4: file too short/);
    assert.match(d.log, /desktop notifications off: cannot load libnotify \(libnotify\.so\.4\)[^\n]*libnotify\.so\.4: file too short/);
    assert.doesNotMatch(d.log, /secret/, 'the password stays out of the log');
    // /status: the sink asked for but unavailable, and why; the desktop too
    const st = await d.status();
    assert.equal(st.sink.state, 'unavailable');
    assert.equal(st.sink.url, 'http://u:***@127.0.0.1:1/?database=lz');
    assert.equal(st.sink.database, 'lz');
    assert.match(st.sink.lastError, /libcurl\.so\.4: file too short/);
    assert.match(st.notifier.desktop, /^unavailable: cannot load libnotify .*file too short/);
    const v = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'),
      path.join(top, 'schemas', 'status.json'), '-'], { input: JSON.stringify(st), encoding: 'utf8' });
    assert.equal(v.status, 0, `status schema: ${v.stdout}${v.stderr}`);
    // nothing of it is mapped: the failed dlopen left nothing behind
    assert.ok(!has(d.proc.pid, /^lib(curl|notify)\.so/), `mapped: ${mapped(d.proc.pid)}`);
    // it keeps folding and serving
    const before = st.counts.folded;
    appendFromProcess(perfPath(p), `${hitch(180)}\n${hitch(190)}\n`);
    await d.caughtUp();
    assert.equal((await d.status()).counts.folded, before + 2);
    const issues = await d.get('/api/sloptimize/issues');
    assert.ok(issues.issues.length > 0);
    // doctor, where a user looks: the sink and the notifications, with why
    const doc = spawnSync(CLI, ['doctor', '--json', '--project', p], { env: { ...d.env }, encoding: 'utf8' });
    const checks = JSON.parse(doc.stdout).checks;
    const by = (name) => checks.filter((c) => c.check === name);
    assert.equal(by('sink')[0].result, 'problem', doc.stdout);
    assert.match(by('sink')[0].detail, /^http:\/\/u:\*\*\*@127\.0\.0\.1:1\/\?database=lz: cannot load libcurl .*file too short/);
    assert.equal(by('notifications')[0].result, 'problem');
    assert.match(by('notifications')[0].detail, /cannot load libnotify .*file too short; the daemon logs wakes/);
    assert.equal(by('libcurl')[0].result, 'note');
    assert.match(by('libcurl')[0].detail, /cannot load libcurl .*file too short/);
    assert.match(by('desktop')[0].detail, /libnotify, unavailable: cannot load libnotify/);
    assert.notEqual(doc.status, 0, 'doctor reports problems');
  } finally {
    assert.equal((await d.stop()).code, 0, d.log.slice(-800));
  }
  // with the real libraries again, the same state directory: the sink starts
  const d2 = new Daemon(p, { state: d.state, args: ['--desktop', '0', '--sink', 'http://127.0.0.1:1/?database=lz'] });
  await d2.start();
  try {
    assert.notEqual((await d2.status()).sink.state, 'unavailable');
    assert.doesNotMatch(d2.log, /sink off/);
  } finally {
    assert.equal((await d2.stop()).code, 0, d2.log.slice(-800));
  }
  fs.rmSync(bad, { recursive: true, force: true });
});

test('the CLI verbs that need curl exit non-zero with one line when it cannot be loaded', () => {
  const bad = brokenLibs();
  // a real ELF library with libcurl's SONAME but none of its functions
  const stub = tmpdir('stublib');
  fs.writeFileSync(path.join(stub, 'stub.c'), 'int sloptimize_not_curl(void) { return 0; }\n');
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-Wl,-soname,libcurl.so.4', '-o',
    path.join(stub, 'libcurl.so.4'), path.join(stub, 'stub.c')], { encoding: 'utf8' });
  assert.equal(cc.status, 0, cc.stderr);
  const p = tmpdir('lazy-cli');
  gen(p, '--records', '50', '--seed', '6');
  const cases = [
    [bad, /libcurl\.so\.4: file too short/],
    [stub, /no curl_global_init \(.*undefined symbol: curl_global_init\)/],
  ];
  for (const [dir, why] of cases) {
    const env = { ...process.env, LD_LIBRARY_PATH: dir };
    for (const args of [['sink', 'init', '--sink', 'http://127.0.0.1:1/'],
      ['issues', '--team', '--sink', 'http://127.0.0.1:1/', '--project', p]]) {
      const r = spawnSync(CLI, args, { env, encoding: 'utf8', timeout: 20000 });
      assert.equal(r.signal, null, `${args}: killed by ${r.signal}`);
      assert.notEqual(r.status, 0, `${args}: ${r.stdout}`);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${args}: one line: ${r.stderr}`);
      assert.match(lines[0], /^sloptimize (sink init|issues --team): http:\/\/127\.0\.0\.1:1\/: cannot load libcurl \(libcurl\.so\.4\), which the sink needs: /);
      assert.match(lines[0], why);
    }
    // the fold itself needs no curl
    const r = spawnSync(CLI, ['issues', '--json', '--project', p], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(JSON.parse(r.stdout).issues.length > 0);
  }
  fs.rmSync(bad, { recursive: true, force: true });
  fs.rmSync(stub, { recursive: true, force: true });
});
