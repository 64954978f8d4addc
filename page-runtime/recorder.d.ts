// recorder.d.ts — types for `sloptimize/recorder` (and the package root):
// the in-page flight recorder (recorder.js, docs/recorder.md).
//
// The renderer is typed by what the recorder uses of it, not by three's
// own classes: the package does not depend on three or @types/three, and a
// THREE.WebGLRenderer (or anything with the same render() and info) fits.

/** A point as a track getter returns it: three's Vector3, `{x, y, z}`, or `[x, y, z]`. */
export type Vec3Like = { readonly x: number; readonly y: number; readonly z: number } | ArrayLike<number>;

/** The host's situation: low-cardinality categories, never positions. null and undefined facets are left out. */
export type Facets =
  | { readonly [facet: string]: string | number | boolean | null | undefined }
  | ReadonlyMap<string, string | number | boolean | null | undefined>;

/** What the recorder reads of a renderer: it wraps render() and reads info after each call. */
export interface RecordedRenderer {
  // method syntax on purpose: three's render(scene: Object3D, camera: Camera) fits
  render(scene: any, camera: any): unknown;
  info?: {
    render?: { calls?: number; triangles?: number; points?: number; lines?: number };
    memory?: { geometries?: number; textures?: number };
    programs?: ArrayLike<unknown> | null;
  };
  getContext?(): unknown;
}

export interface RecorderOptions {
  /** A THREE.WebGLRenderer (required): its render() is wrapped. */
  renderer: RecordedRenderer;
  /** The daemon's origin, e.g. 'http://127.0.0.1:7567'; '' (the default) is the page's own (the Vite plugin's proxy). */
  endpoint?: string;
  /** Stamped on every record. */
  build?: string | number | null;
  /** The frame budget in milliseconds (default 16.7). */
  budgetFrameMs?: number;
  /** The situation, asked once a second. */
  context?: () => Facets | null | undefined;
  /** The usermark chord (default 'Control+F11'). */
  usermarkKey?: string;
  /** Milliseconds between heartbeats (default 2000). */
  heartbeatMs?: number;
  /** Objects added in one frame that make it a spawn burst (default 50). */
  spawnBurst?: number;
  /** Show the one-line toast when a usermark is made (default true). */
  confirm?: boolean;
  /** The motion monitor's thresholds (motion.js). */
  motion?: { readonly [option: string]: unknown };
  /** The fetch used to deliver records (default: the page's). */
  fetch?: typeof globalThis.fetch;
  /** How long a long-script hitch waits for its Long Animation Frames entry (default 250 ms). */
  loafWaitMs?: number;
  /** The render wrapper times its own part on one render in this many, at random, and counts it as many times (default 8; 1: every render). */
  ownSample?: number;
}

export interface TrackOptions {
  /** The track this one rides on (a camera on its unit). */
  follows?: string | null;
  /** A distance that may change on purpose (a boom): a getter, or a named one. */
  reach?: (() => number) | { name?: string; get: () => number } | null;
}

export interface UsermarkOptions {
  /** How far back the mark reaches (default 5000 ms). */
  windowMs?: number;
  /** What felt wrong, in the player's words (at most 500 characters are kept). */
  note?: string;
  /** The inputs held (default: the keys held now). */
  inputsHeld?: readonly string[];
  /** Anything the host knows of the world at this moment. */
  world?: { readonly [key: string]: unknown };
}

export interface UsermarkResult {
  /** The usermark's footprint, as the catalogue names it. */
  footprint: { v: number; id: string; key: string } | undefined;
  /** Frames in the window. */
  frames: number;
  /** How many worst frames the record ranks (at most 5). */
  worst: number;
}

export type RecordType = 'heartbeat' | 'hitch' | 'usermark' | 'jitter';

/** One of the last incidents, for the panel. */
export interface Incident {
  type: Exclude<RecordType, 'heartbeat'>;
  at: string;
  /** The footprint id and key, when the record has one. */
  fp?: string;
  key?: string;
  /** The top guess of its classification. */
  verdict?: string;
  /** frameMs of a hitch, units of a jitter, the worst frame of a usermark. */
  value?: number;
  unit: 'ms' | 'units';
  note?: string;
}

/** rec.state(): the recorder's own state, as the panel's Current Session tab shows it. */
export interface RecorderState {
  recording: boolean;
  /** The daemon's origin, or '(same origin)'. */
  endpoint: string;
  build: string | null;
  phase: string | null;
  /** The canonical situation string (canonicalContext of the context's facets). */
  ctx: string;
  /** 'software' (SwiftShader, llvmpipe), 'hardware', or 'unknown': from the unmasked GL renderer. */
  regime: 'software' | 'hardware' | 'unknown' | (string & {});
  frames: number;
  /** The rolling frame median; null until there are frames. */
  medianMs: number | null;
  made: { heartbeat: number; hitch: number; usermark: number; jitter: number };
  sent: number;
  queued: number;
  /** Long-script hitches waiting for their Long Animation Frames entry. */
  held: number;
  dropped: { hitch?: number; jitter?: number; delivery: number; [reason: string]: number | undefined };
  refused: number;
  lastRefusal: string | null;
  /** null until the first send; true when the daemon answered; false when it could not be reached. */
  reachable: boolean | null;
  lastError: string | null;
  /** When the last batch went (the page's Date.now()), or null. */
  lastSentAt: number | null;
  backoffMs: number;
  /** Whether the browser has the Long Animation Frames API. */
  loaf: boolean;
  censuses: number;
  /** The last incidents (at most 20). */
  incidents: Incident[];
  /** Where records and snapshots are sent from: a worker (offThread), or the page's own thread and why. */
  sender: { offThread: boolean; why: string | null };
  [more: string]: unknown;
}

/** The recorder's verbs: createRecorder's answer, a frozen object (hence readonly). */
export interface Recorder {
  /** The moment axis stamped on records ('menu', 'play', …); 'paused' marks frames never judged. */
  readonly setPhase: (phase: string | null | undefined) => void;
  /** A point the motion monitor watches; get() returns the game's own vector (nothing is allocated). */
  readonly track: (name: string, get: () => Vec3Like, options?: TrackOptions) => void;
  /** This frame moved `name` (or every track) on purpose: it is not judged. */
  readonly hold: (name?: string) => void;
  /** The view was cut on purpose (respawn, camera mode): forget the trajectory. */
  readonly cut: (name?: string) => void;
  /** What Ctrl+F11 does. */
  readonly usermark: (options?: UsermarkOptions) => UsermarkResult;
  /** Send what is waiting; resolves with state() once it went, or once a send failed. */
  readonly flush: () => Promise<RecorderState>;
  /** Put render back, stop timers and listeners, send what is left. */
  readonly stop: () => void;
  readonly state: () => RecorderState;
  /** fn() after each change of state(); returns the unsubscribe. */
  readonly subscribe: (fn: () => void) => () => void;
}

export function createRecorder(options: RecorderOptions): Recorder;

/** The `ctx` string of a situation (DESIGN §6): keys sorted, `k=v` joined by ',', `| , = \n \r \t` scrubbed to '_'. */
export function canonicalContext(facets: Facets | null | undefined): string;
