// chart-preview as its README shows it: the <chart-preview-player> web
// component, a chart loaded with loadFromChartFiles (option 3: files by
// name and bytes), then played.  The chart and its audio are the
// driver's (generated: tests/browser/games.test.mjs); `window.game` is for that
// driver, not for sloptimize.
import 'chart-preview';

const player = document.getElementById('player');
const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

window.game = {
  player,
  // files: [{ fileName, base64 }] (a page cannot be handed bytes directly)
  load: (files) => player.loadFromChartFiles({
    files: files.map((f) => ({ fileName: f.fileName, data: bytes(f.base64) })),
    instrument: 'guitar',
    difficulty: 'expert',
  }),
};
