// make soak — the daemon under sustained load, in a bounded run that stops
// itself (issue 8 item 9; docs/robustness.md):
//
//   RATE records/s (default 10,000) appended for SECONDS (default 60) by a
//   separate writer process, one write(2) per batch, as a game would;
//   20 clients polling GET /ledger (with If-None-Match, as the panel does);
//   5 `sloptimize watch` clients; rate limits off, so every meaningful
//   record is a wake for every watcher.
//
// Passes when: every meaningful wake reached every watcher exactly once
// and in order; the lag (file size minus cursor) stayed under a bound;
// the daemon's RSS was flat (its peak over the second half of the run is
// within SOAK_RSS_SLACK_MB of its peak over the first half).  Prints the
// figures either way; exits 1 on a breach.
//
//   node tests/soak.mjs [SECONDS [RATE]]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Daemon, Watch, meaningfulOffsets, perfPath, tmpdir, waitFor } from './lib.mjs';

const SECONDS = Number(process.argv[2] || process.env.SOAK_SECONDS || 60);
const RATE = Number(process.argv[3] || process.env.SOAK_RATE || 10000);
const POLLERS = 20, WATCHERS = 5;
const LAG_BOUND = 64 << 20;		// bytes: the reader never falls this far behind
const RSS_SLACK_MB = Number(process.env.SOAK_RSS_SLACK_MB || 8);

function rssKb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

// The writer: a child process, so the test's own event loop (watch
// parsing, pollers) never slows the appends.  Batches every 10 ms; about
// one record in twenty is a hitch of 100 ms or more (a wake).
const WRITER = `
const fs = require('fs');
const [file, rate, seconds] = process.argv.slice(1);
const fd = fs.openSync(file, 'a');
const per = Math.max(1, Math.round(Number(rate) / 100));
const end = Date.now() + Number(seconds) * 1000;
let n = 0;
function batch() {
  const now = Date.now();
  if (now >= end) { fs.closeSync(fd); process.stdout.write(String(n)); return; }
  const at = new Date(now).toISOString();
  let s = '';
  for (let i = 0; i < per; i++, n++) {
    if (n % 20 === 7)
      s += JSON.stringify({ type: 'hitch', at, frame: n, frameMs: 100 + (n % 90), phase: 'play', build: 'soak',
        minted: ['mat_' + (n % 13) + '@obj'], classification: { guess: 'shader-compile', confidence: 'medium',
        evidence: 'programs +' + (n % 5) } }) + '\\n';
    else
      s += JSON.stringify({ type: 'heartbeat', at, phase: 'play', build: 'soak',
        frame: { medianMs: 8 + (n % 5) / 10, p95Ms: 15, insideRenderMs: 4, fps: 60 },
        render: { calls: 400, triangles: 900000, points: 0, lines: 12 },
        memory: { geometries: 200, textures: 40, programs: 16 }, window: { frames: 120, seconds: 2 } }) + '\\n';
  }
  fs.writeSync(fd, s);
  setTimeout(batch, Math.max(0, 10 - (Date.now() - now)));
}
batch();
`;

async function main() {
  const p = tmpdir('soak');
  fs.mkdirSync(path.join(p, '.sloptimize'));
  fs.writeFileSync(perfPath(p), '');
  const d = await new Daemon(p, { args: ['--per-fp-ms', '0', '--global-max', '0', '--desktop', '0'] }).start();
  const pid = d.proc.pid;
  const watchers = [];
  for (let i = 0; i < WATCHERS; i++) watchers.push(new Watch(d));
  for (const w of watchers) await w.connected();

  let stop = false, polls = 0, pollErrors = 0, notModified = 0;
  const pollers = [];
  for (let i = 0; i < POLLERS; i++) {
    pollers.push((async () => {
      let etag = null;
      while (!stop) {
        try {
          const r = await fetch(`${d.base}/api/sloptimize/ledger`, { headers: etag ? { 'If-None-Match': etag } : {} });
          if (r.status === 304) notModified++;
          else if (r.ok) { etag = r.headers.get('etag'); await r.arrayBuffer(); }
          else pollErrors++;
          polls++;
        } catch { pollErrors++; }
        await new Promise((res) => setTimeout(res, 100));
      }
    })());
  }

  const samples = [];	// {t, rss, lag}
  const t0 = Date.now();
  const sampler = setInterval(async () => {
    try {
      const s = await d.status();
      samples.push({ t: (Date.now() - t0) / 1000, rss: rssKb(pid), lag: s.files.perf.lag });
    } catch { /* the next one */ }
  }, 1000);

  const writer = spawn(process.execPath, ['-e', WRITER, perfPath(p), String(RATE), String(SECONDS)],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  let written = '';
  writer.stdout.on('data', (b) => { written += b; });
  await new Promise((r) => writer.on('exit', r));
  const records = Number(written);

  await d.caughtUp();
  const want = meaningfulOffsets(perfPath(p)).map((o) => `1:${o}`);
  await waitFor(() => watchers.every((w) => w.ids().length >= want.length),
    { what: `${want.length} wakes at each watcher`, timeout: 60000 }).catch(() => {});
  stop = true;
  clearInterval(sampler);
  await Promise.all(pollers);

  const failures = [];
  watchers.forEach((w, i) => {
    const got = w.ids();
    if (got.length !== want.length || got.some((id, k) => id !== want[k])) {
      const missing = want.filter((id) => !got.includes(id)).length;
      failures.push(`watcher ${i}: ${got.length} wakes, ${want.length} expected, ${missing} missing, ` +
        `${got.length - new Set(got).size} repeated`);
    }
  });
  const half = SECONDS / 2;
  const first = samples.filter((s) => s.t <= half && s.t > 5), second = samples.filter((s) => s.t > half);
  const peak = (xs) => Math.max(...xs.map((s) => s.rss));
  const rss1 = peak(first) / 1024, rss2 = peak(second) / 1024;
  const maxLag = Math.max(...samples.map((s) => s.lag));
  if (maxLag > LAG_BOUND) failures.push(`lag reached ${maxLag} bytes (bound ${LAG_BOUND})`);
  if (rss2 > rss1 + RSS_SLACK_MB) failures.push(`RSS grew: ${rss1.toFixed(1)} MB → ${rss2.toFixed(1)} MB`);
  if (pollErrors > 0) failures.push(`${pollErrors} /ledger polls failed`);

  const size = fs.statSync(perfPath(p)).size;
  console.log(`soak: ${SECONDS} s at ${RATE} records/s: ${records} records, ${(size / 1e6).toFixed(1)} MB, ` +
    `${want.length} wakes × ${WATCHERS} watchers, ${polls} /ledger polls (${notModified} not modified)`);
  console.log(`  lag: max ${(maxLag / 1024).toFixed(0)} KiB (bound ${LAG_BOUND >> 20} MiB)`);
  console.log(`  daemon RSS: peak ${rss1.toFixed(1)} MB in the first half, ${rss2.toFixed(1)} MB in the second ` +
    `(slack ${RSS_SLACK_MB} MB); samples ${samples.map((s) => (s.rss / 1024).toFixed(0)).join(' ')}`);
  for (const w of watchers) await w.stop();
  await d.stop();
  fs.rmSync(p, { recursive: true, force: true });
  if (failures.length) {
    console.log(`soak: FAILED\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }
  console.log('soak: every wake reached every watcher exactly once, in order; lag bounded; RSS flat');
}

main().catch((e) => { console.error(e); process.exit(1); });
