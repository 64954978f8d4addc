// fold.d.ts — types for `sloptimize/fold` (fold.js): the same fold
// as the daemon's, for a page or a script that reads .sloptimize/*.jsonl
// itself.  The documents are those of docs/json.md; fields that document
// does not pin down are left open.

/** A record of perf.jsonl (DESIGN §5): heartbeat, hitch, usermark, jitter, … */
export interface LedgerRecord {
  type: string;
  at?: string;
  [field: string]: unknown;
}

/** A line of fixes.jsonl. */
export interface FixRecord {
  type: 'fix';
  id?: string;
  at?: string;
  status?: 'applied' | 'proposed' | 'merged' | 'rejected';
  [field: string]: unknown;
}

export interface Verdict { guess: string | null; confidence: string | null; evidence: string | null }

/** A measured window: one build's heartbeats. */
export interface MeasureWindow {
  build: string | null;
  from: string | null;
  to: string | null;
  heartbeats: number;
  p95Ms?: number | null;
  medianMs?: number | null;
  calls?: number | null;
  triangles?: number | null;
  programs?: number | null;
  series?: (number | null)[];
  [field: string]: unknown;
}

/** A row of the catalogue: one footprint, one cause. */
export interface IssueRow {
  id: string;
  key: string;
  type: string;
  phase: string | null;
  count: number;
  first: string | null;
  last: string | null;
  lastAgoMs: number | null;
  builds: string[];
  worst: { value: number; unit: 'ms' | 'units'; at: string | null } | null;
  verdict: Verdict | null;
  situation: { [facet: string]: string };
  fixes: FixRecord[];
  proposals: FixRecord[];
  status: 'open' | 'pending' | 'fixed' | 'regressed';
  [field: string]: unknown;
}

export interface IssuesDocument {
  v: number;
  generatedAt: string;
  counts: { [count: string]: number };
  issues: IssueRow[];
  [field: string]: unknown;
}

export interface IssueDocument {
  v: number;
  generatedAt: string;
  issue: IssueRow;
  occurrences: { at: string | null; build: string | null; value: number | null; verdict: Verdict | null;
    note?: string; offset: number | null;
    /** What the incident says of itself, when it says it (docs/json.md). */
    script?: { name?: string; sourceURL?: string; invoker?: string; invokerType?: string; durationMs?: number; unavailable?: string };
    uploadBytes?: number; sites?: string[];
    /** The entities it names, "id (site)": the minted, then the spawned, each once, at most 8. */
    entities?: string[];
    delta?: { programs?: number; textures?: number; geometries?: number; calls?: number; triangles?: number };
    regime?: string }[];
}

export interface HistoryBucket {
  from: string;
  to: string;
  heartbeats: number;
  hitches?: number;
  worstHitchMs?: number | null;
  builds?: string[];
  [field: string]: unknown;
}

export interface HistoryDocument {
  v: number;
  generatedAt: string;
  from: string | null;
  to: string | null;
  bucketMs: number | null;
  buckets: HistoryBucket[];
  builds: MeasureWindow[];
}

export interface Skipped { stream: 'perf' | 'fixes'; offset: number; length: number; reason: string }

export interface ParsedJsonl {
  records: LedgerRecord[];
  offsets: number[];
  lines: string[];
  skipped: Skipped[];
  lineCount: number;
  partialBytes: number;
}

/** A time bound: ISO text, milliseconds since the epoch, or null for none. */
export type TimeBound = string | number | null;

export interface FoldOptions {
  from?: TimeBound;
  to?: TimeBound;
  /** Count records a bench or a test made (automated: true) too. */
  includeAutomated?: boolean;
}

export const FOOTPRINT_VERSION: 1;
export const SERIES_SLICES: number;
export const MAX_LINE: number;

export function fnv1a32(data: string | Uint8Array): string;
export function footprintId(key: string): string;
export function footprintKey(rec: unknown): string | null;
export function footprintOf(rec: unknown): { id: string | null; key: string | null; malformed: boolean };
export function scrub(s: unknown): string;
export function canonicalContext(facets: { readonly [facet: string]: unknown } | ReadonlyMap<string, unknown> | null | undefined): string;
export function parseSituation(ctx: string): { [facet: string]: string };
export function num(v: unknown): number | null;
export function parseIso(s: unknown): number | null;
export function isoOf(ms: number | null | undefined): string | null;
export function median(values: readonly number[]): number | null;

/** The fold itself: addRecord() for perf.jsonl, addFix() for fixes.jsonl, then render. */
export class Fold {
  constructor(options?: FoldOptions & { occurrencesOf?: string | null });
  addRecord(rec: LedgerRecord, offset?: number | null): unknown;
  addFix(fix: FixRecord | string): unknown;
  issues(options?: { now?: number; type?: string | null; status?: string | null; limit?: number }): IssuesDocument;
  issue(id: string, options?: { now?: number }): IssueDocument | null;
  history(options?: { buckets?: number; now?: number }): HistoryDocument;
  window(spec?: string, options?: { after?: boolean }): MeasureWindow;
}

export function buildIssues(records: readonly LedgerRecord[], options?: FoldOptions & {
  fixes?: readonly (FixRecord | string)[]; now?: number; type?: string | null; status?: string | null; limit?: number;
}): IssuesDocument;
export function buildIssue(records: readonly LedgerRecord[], id: string, options?: FoldOptions & {
  fixes?: readonly (FixRecord | string)[]; now?: number; offsets?: readonly (number | null)[] | null;
}): IssueDocument | null;
export function buildHistory(records: readonly LedgerRecord[], options?: {
  buckets?: number; now?: number; includeAutomated?: boolean;
}): HistoryDocument;
export function measureWindow(records: readonly LedgerRecord[], spec?: string, options?: {
  after?: boolean; includeAutomated?: boolean;
}): MeasureWindow;
/** Split JSONL bytes or text into records the way the daemon reads them. */
export function parseJsonl(input: string | Uint8Array, options?: { stream?: 'perf' | 'fixes' }): ParsedJsonl;
