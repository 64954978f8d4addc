// panel.d.ts — types for `sloptimize/panel`: the Ctrl+F12 in-game panel
// (panel.js, docs/panel.md).
import type { HistoryDocument } from './fold.js';
import type { Recorder } from './recorder.js';

export type PanelTab = 'session' | 'issues' | 'optimizations' | 'settings';

export interface PanelOptions {
  /** The daemon, e.g. 'http://127.0.0.1:7567' (default: where panel.js was served from, else the page's origin). */
  endpoint?: string;
  /** Open at once. */
  open?: boolean;
  /** The tab shown first (default: the last one used). */
  tab?: PanelTab;
  /** Where the catalogue comes from: the daemon's fold, the ledger's tail folded here, or the team's sink. */
  source?: 'auto' | 'daemon' | 'tail' | 'team';
  /** false leaves Ctrl+F12 alone (call open() or toggle() yourself). */
  hotkey?: boolean;
  /** Where the panel's host element goes (default document.body). */
  parent?: Element;
  /** A fixed number of timeline buckets (default: sized by the evidence, at most 48). */
  buckets?: number;
  /** The page's recorder (default: the one recorder.js registered). */
  recorder?: Recorder;
  fetch?: typeof globalThis.fetch;
  WebSocket?: typeof globalThis.WebSocket;
}

export interface Panel {
  open(): void;
  close(): void;
  toggle(): void;
  refresh(): Promise<unknown>;
  destroy(): void;
  setEndpoint(endpoint: string): void;
  /** The Current Session tab as text. */
  sessionText(): string;
  readonly isOpen: boolean;
  readonly endpoint: string;
  /** Which view of the catalogue is shown ('daemon', 'tail', …). */
  readonly view: unknown;
  readonly timings: unknown;
  readonly element: HTMLElement;
  readonly root: ShadowRoot;
}

/** Never throws at a page that has a DOM: a daemon that does not answer is an error state in the panel. */
export function createPanel(options?: PanelOptions): Panel;
export default createPanel;

/** How many timeline buckets a ledger's evidence can fill, from a history of one bucket. */
export function bucketsFor(one: HistoryDocument | null | undefined): number;
export function fmtNum(v: number | null | undefined, unit?: string): string;
