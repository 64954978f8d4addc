// standalone.js — the daemon's own page (GET /): the panel, open, talking
// to the daemon that served it.  A module file, not an inline script, so
// the daemon's Content-Security-Policy can stay at script-src 'self'.
import { createPanel } from './panel.js';

const params = new URLSearchParams(location.search);
const tab = params.get('tab') || undefined;
const source = params.get('source') || undefined;

globalThis.sloptimizePanel = createPanel({ open: params.get('open') !== '0', tab, source });
