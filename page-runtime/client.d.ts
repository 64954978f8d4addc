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
   * The page's end of the daemon's relay (docs/bench.md, "The open tab"),
   * unless the plugin was given `relay: false`: `state()` says whether it
   * is connected and which command it runs.
   */
  relay?: { update(): void; stop(): void; state(): { state: 'live' | 'connecting' | 'offline'; busy?: number | null; commands?: number; lastError?: string | null; why?: string } };

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

  /**
   * Name a bench scene (docs/bench.md): `setup(ctx)` brings the game to
   * the view and may be async; it returns the renderer to measure and how
   * many frames to run before the warm-up.  `scene(name)` with no setup
   * says a view set up at load from `?sloptimize=bench:NAME` is ready.
   * `name`: 1-64 letters, digits, `.`, `_` or `-`.
   *
   *   globalThis.sloptimize?.scene('crates', () => ({ renderer, settleFrames: 2 }));
   */
  scene(name: string, setup?: (ctx: SceneContext) => SceneSetup | void | Promise<SceneSetup | void>,
    options?: SceneSetup): void;
  /**
   * The browser's own performance.now(), whatever clock the game is under
   * (a bench runs it on a virtual clock); installs nothing.  For a cost the
   * game means to take in real time.
   */
  realNow(): number;
}

/** What a scene's setup gets. */
export interface SceneContext {
  /** Run `n` frames of the game's loop (default 1): nothing else runs frames during set-up. */
  frames(n?: number): Promise<void>;
}

/** What a scene's setup returns (all optional). */
export interface SceneSetup {
  /** The THREE.WebGLRenderer to measure; without it, the last one three announced. */
  renderer?: unknown;
  /** Frames to run before the warm-up (a fade-in, a spawn animation). */
  settleFrames?: number;
}

declare global {
  // `var`: a property of globalThis.  Optional: only the dev page has it.
  // eslint-disable-next-line no-var
  var sloptimize: SloptimizeGlobal | undefined;
}

export {};
