// client.d.ts — `sloptimize/client`: the page's globals, for a game's
// TypeScript.  Reference it as Vite's own client types are:
//
//   // src/env.d.ts (or tsconfig "types": ["vite/client", "sloptimize/client"])
//   /// <reference types="sloptimize/client" />
//
//   const rec = import.meta.env.DEV
//     ? globalThis.sloptimize?.createRecorder({ renderer, context: () => ({ view }) })
//     : undefined;
//
// globalThis.sloptimize exists only in the Vite dev server with the
// plugin (its bootstrap makes it, ahead of the game's modules): it is
// optional here, so a game that forgets the `?.` is told by the compiler.
import type { Recorder, RecorderOptions } from './recorder.js';
import type { Panel } from './panel.js';

/** globalThis.sloptimize: what the Vite plugin's bootstrap puts in the dev page. */
export interface SloptimizeGlobal {
  /**
   * A recorder with the plugin's defaults filled in (endpoint: the dev
   * server's proxy; build; budgetFrameMs); it replaces the automatic one
   * made for the same renderer.
   */
  createRecorder(options: RecorderOptions): Recorder;
  /** The page's recorder (made by createRecorder, or automatically for the first WebGLRenderer), or null. */
  readonly rec: Recorder | null;
  /** The recorder and the renderer it records; auto: made by the bootstrap itself. */
  recorder: { rec: Recorder; renderer: unknown; auto: boolean } | null;
  /** The Ctrl+F12 panel, unless the plugin was given `panel: false`. */
  panel: Panel | null;

  /**
   * Name an entity (docs/attribute.md): sets `object.userData.sloptimize.id`,
   * which the census, hitch records and wake lines then use for it and
   * everything under it, the same on every load.  Dev only: the plugin's
   * bootstrap (and a launched bench) put it here, so call it with `?.`.
   * `id`: 1-128 letters, digits or `_ . : / [ ] # @ -`.  Returns `object`.
   *
   *   globalThis.sloptimize?.track(enemy, `enemy_${n}`);
   */
  track<T extends { isObject3D: true }>(object: T, id: string): T;
  // Room for the verify tier (DESIGN §16): scene() (the controlled run's
  // named scenes) is declared here when its issue lands.
}

declare global {
  // `var`: a property of globalThis.  Optional: only the dev page has it.
  // eslint-disable-next-line no-var
  var sloptimize: SloptimizeGlobal | undefined;
}

export {};
