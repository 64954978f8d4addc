// The dice box's dev server: sloptimize is the one plugin line of
// docs/recorder.md, nothing else (SLOPTIMIZE_DAEMON: the test's daemon).
import sloptimize from '../../../page-runtime/vite.js';

export default { plugins: [sloptimize({ daemon: process.env.SLOPTIMIZE_DAEMON })] };
