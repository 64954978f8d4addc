// The demo's scripted run in headless chromium (WebGL on SwiftShader), for
// `make run` on a machine with no display: open the game, let the script
// cause each stutter, press Ctrl+F11, deliver what the recorder holds.
// Exit 0 when the daemon took every record; 3 when it refused them (a
// daemon without the ingest route); 1 on any other failure.
//
//   node tests/demo-drive.mjs URL
import { chromium } from 'playwright-core';

const url = process.argv[2];
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic', '--disable-extensions',
  '--enable-unsafe-swiftshader', '--use-angle=swiftshader'];
const browser = await chromium.launch({ executablePath: process.env.SLOPTIMIZE_CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });
let code = 1;
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 400 } });
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(() => window.demo && window.demo.finished, null, { timeout: 90000 });
  await page.keyboard.press('Control+F11');
  const st = await page.evaluate(() => window.demo.recorder.flush());
  console.error(`recorder: ${st.sent} records sent, ${st.refused} refused, ${st.queued} queued${st.lastRefusal ? ` (${st.lastRefusal})` : ''}`);
  code = st.refused > 0 ? 3 : st.queued === 0 ? 0 : 1;
} finally {
  await browser.close();
}
process.exit(code);
