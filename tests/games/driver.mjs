// Drivers for the real games in this folder (README.md): their dev
// servers, the data they need made here, and chart-preview's play.  Used
// by tests/browser/games.test.mjs and tests/bench/games.mjs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { top, waitFor } from '../lib.mjs';
import { freePort } from '../browser.mjs';

const GAMES = path.join(top, 'tests', 'games');

// `vite` in tests/games/NAME, proxying to the daemon at `daemon` (its base
// URL), records stamped `build`; `config`: another vite config for the same
// page (the bench's page without the plugin).  Resolves once it serves.
export async function startGame(name, { daemon = '', build = '', config = null } = {}) {
  const dir = path.join(GAMES, name);
  const vite = path.join(dir, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!fs.existsSync(vite)) throw new Error(`no vite in ${dir}/node_modules: make deps runs npm ci there`);
  const port = await freePort();
  const proc = spawn(process.execPath, [vite, '--port', String(port), '--strictPort', '--host', '127.0.0.1', '--logLevel', 'warn',
    ...(config ? ['--config', config] : [])], {
    cwd: dir, env: { ...process.env, SLOPTIMIZE_DAEMON: daemon, SLOPTIMIZE_BUILD_ID: build }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((r) => proc.once('exit', r));
  const stop = async () => { if (proc.exitCode === null && !proc.signalCode) proc.kill('SIGTERM'); await exited; };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await fetch(`${url}/`)).ok, { timeout: 60000, what: `vite in ${dir}\n${log}` });
  } catch (e) { await stop(); throw e; }
  return { url, log: () => log, stop };
}

// An RGBA PNG, w × h, of one colour ramp.
function png(w, h, [r, g, b]) {
  const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
  const crc = (buf) => { let c = 0xffffffff; for (const x of buf) c = crcTable[(c ^ x) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
  const chunk = (type, data) => {
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(td.length + 8);
    out.writeUInt32BE(data.length, 0); td.copy(out, 4); out.writeUInt32BE(crc(td), td.length + 4);
    return out;
  };
  const head = Buffer.alloc(13);
  head.writeUInt32BE(w, 0); head.writeUInt32BE(h, 4); head[8] = 8; head[9] = 6;
  const raw = Buffer.alloc((w * 4 + 1) * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = y * (w * 4 + 1) + 1 + x * 4;
      raw[o] = r; raw[o + 1] = (g + x * 3) & 255; raw[o + 2] = b; raw[o + 3] = 255;
    }
  }
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', head),
    chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

// Mono 8-bit PCM: a quiet 220 Hz tone (chart-preview plays a chart with its song).
function wav(seconds, rate = 8000) {
  const n = seconds * rate, b = Buffer.alloc(44 + n);
  b.write('RIFF', 0, 'latin1'); b.writeUInt32LE(36 + n, 4); b.write('WAVEfmt ', 8, 'latin1'); b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22); b.writeUInt32LE(rate, 24); b.writeUInt32LE(rate, 28);
  b.writeUInt16LE(1, 32); b.writeUInt16LE(8, 34); b.write('data', 36, 'latin1'); b.writeUInt32LE(n, 40);
  for (let i = 0; i < n; i++) b[44 + i] = 128 + Math.round(16 * Math.sin((i * 2 * Math.PI * 220) / rate));
  return b;
}

// A Clone Hero .chart: 120 BPM, an eighth note every beat-half on the five
// frets, expert guitar, for `seconds`.
function chartFile(seconds) {
  const notes = [];
  for (let i = 0, tick = 768; tick < seconds * 2 * 192; i++, tick += 96) notes.push(`  ${tick} = N ${i % 5} 0`);
  return ['[Song]', '{', '  Name = "sloptimize driver"', '  Artist = "tests/browser/games.test.mjs"', '  Resolution = 192', '  Offset = 0', '}',
    '[SyncTrack]', '{', '  0 = TS 4', '  0 = B 120000', '}', '[Events]', '{', '}', '[ExpertSingle]', '{', ...notes, '}', ''].join('\n');
}

// --- chart-preview: a rhythm-game highway, animated every frame -----------------

const chart = chartFile(90);
const song = wav(90);
const art = png(64, 64, [210, 90, 60]);
export const HIGHWAY = 'document.getElementById("player").chartPreview.scene';

// The player's art comes from its CDN (static.enchor.us); a test machine
// reaches only the npm registry, so the driver serves stand-in art there.
export const chartRoutes = (page) => page.route('https://static.enchor.us/**', (r) => r.fulfill({ status: 200, contentType: 'image/png', body: art }));

// Load the page at 320×240, the generated chart and its song, and press
// play (a real click: the player's audio needs a user's gesture).  With
// `recorder`, wait for the plugin's runtime, and for the recorder it makes
// for the player's renderer (made as the chart loads) before playing.
export async function openChart(page, url, { recorder = true } = {}) {
  await page.goto('about:blank');
  await page.setViewportSize({ width: 320, height: 240 });
  await page.goto(`${url}/`);
  await page.waitForFunction((rec) => window.game && (!rec || globalThis.sloptimize), recorder, { timeout: 120000 });
  await page.evaluate((files) => window.game.load(files), [
    { fileName: 'notes.chart', base64: Buffer.from(chart).toString('base64') },
    { fileName: 'song.wav', base64: song.toString('base64') },
  ]);
  const state = await page.evaluate(() => window.game.player.state);
  if (state !== 'ready') throw new Error(`chart-preview after loading the chart: ${state}, not ready`);
  if (recorder) await page.waitForFunction(() => globalThis.sloptimize.rec, null, { timeout: 60000 });
  await page.locator('chart-preview-player button').first().click();
  await waitFor(() => page.evaluate(() => window.game.player.state === 'playing'), { timeout: 60000, interval: 100, what: 'playing' });
}
