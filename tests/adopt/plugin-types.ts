// Compile-time checks of `sloptimize/vite`'s types (tsc -p tsconfig.node.json):
// each @ts-expect-error must be an error, or tsc fails ("unused directive").
import type { Plugin } from 'vite';
import sloptimize, { PREFIX, type SloptimizePluginOptions } from 'sloptimize/vite';

const options: SloptimizePluginOptions = { daemon: 'http://127.0.0.1:7567', build: 'v1', budgetFrameMs: 16.7, auto: false, panel: true };
export const plugin: Plugin = sloptimize(options);
export const bare: Plugin = sloptimize();
export const prefix: '/@sloptimize/' = PREFIX;
// @ts-expect-error: a misspelt option is caught
sloptimize({ deamon: 'http://127.0.0.1:7567' });
// @ts-expect-error: the daemon is a URL string
sloptimize({ daemon: 7567 });
