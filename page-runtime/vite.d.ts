// vite.d.ts — types for `sloptimize/vite`: the Vite plugin (vite.js).
//
//   // vite.config.ts
//   import { defineConfig } from 'vite';
//   import sloptimize from 'sloptimize/vite';
//   export default defineConfig({ plugins: [sloptimize()] });
import type { Plugin } from 'vite';

export interface SloptimizePluginOptions {
  /** A fixed daemon address to proxy /api/sloptimize to, e.g. 'http://127.0.0.1:7567' (default: the daemon serving this project, found through its daemon.json). */
  daemon?: string;
  /** The folder whose daemon to find and where .sloptimize/dev.json is written (default: Vite's root). */
  project?: string;
  /** Stamped on every record (default: $SLOPTIMIZE_BUILD_ID, else derived from git and moving with each edit; a fixed build freezes the fix loop). */
  build?: string;
  /** The recorder's frame budget in milliseconds (default: sloptimize.budgets.json's perf.budget.frame_ms_p95, else 16.7). */
  budgetFrameMs?: number;
  /** A recorder for the first renderer the game makes, through three's __THREE_DEVTOOLS__ (default true). */
  auto?: boolean;
  /** The Ctrl+F12 panel in the dev page (default true). */
  panel?: boolean;
  /**
   * The dev page registers with the daemon so that `sloptimize bench`,
   * `gate` and `attribute` without --launch run in it (default true).
   */
  relay?: boolean;
}

/** Where the plugin serves the page runtime in the dev server. */
export const PREFIX: '/@sloptimize/';

/** Dev only (`apply: 'serve'`): `vite build` sees nothing of it. */
export default function sloptimize(options?: SloptimizePluginOptions): Plugin;
