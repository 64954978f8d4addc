// fold.js — the fold of DESIGN §6–§7 in plain JavaScript: footprints,
// the issue catalogue, the timeline and measured fix windows.
//
// The same fold as ledger/ (C), fed parsed records instead of bytes, so a
// page that got records from GET /api/sloptimize/ledger can fold them
// itself.  It follows the decided rules of docs/json.md and is checked
// against the same fixtures (tests/fixtures/) and footprint vectors
// (schemas/footprint-vectors.json) by tests/page-runtime/fold.test.mjs.
//
// What it cannot know, it does not invent: a fold of parsed records never
// saw the lines it was not given, so `counts.lines`, `counts.skipped` and
// the top-level `skipped` list belong to a reader of bytes (parseJsonl()
// below is one) and are left out of buildIssues().  Everything else is the
// CLI's JSON, value for value.  docs/panel.md lists the differences.
//
// ES module, no dependencies, no DOM: it runs in a page, a worker or node.
// The footprint (DESIGN §6) lives in footprint.js, which the recorder
// mints with; it is re-exported here for the fold's readers.
import { footprintOf, num, isObject, topClass, worst0 } from './footprint.js';

export {
  FOOTPRINT_VERSION, fnv1a32, footprintId, footprintKey, footprintOf, scrub, canonicalContext, num,
} from './footprint.js';

export const SERIES_SLICES = 32;
export const MAX_LINE = 1024 * 1024;

const HEX8 = /^[0-9a-fA-F]{8}$/;
const INCIDENT_TYPES = new Set(['hitch', 'usermark', 'jitter']);
const METRICS = ['p95Ms', 'medianMs', 'calls', 'triangles', 'programs'];
const utf8 = new TextEncoder();

// A ctx string parsed back into facets (the C side's rule: pieces split at
// ',', each cut at its first '=', an empty key or an over-long piece left
// out, a later duplicate wins).
export function parseSituation(ctx) {
  const out = {};
  if (typeof ctx !== 'string' || ctx === '') return out;
  for (const piece of ctx.split(',')) {
    const eq = piece.indexOf('=');
    if (eq <= 0) continue;
    const k = piece.slice(0, eq), v = piece.slice(eq + 1);
    if (utf8Length(k) >= 256 || utf8Length(v) >= 256) continue;
    if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

// s cut to at most max UTF-8 bytes at a character boundary (jscan_str)
function utf8Cut(s, max) {
  if (s.length * 3 <= max) return s;
  const b = utf8.encode(s);
  if (b.length <= max) return s;
  let n = max;
  while (n > 0 && (b[n] & 0xc0) === 0x80) n--;
  return new TextDecoder().decode(b.subarray(0, n));
}

function utf8Length(s) {
  if (s.length < 86) return s.length * 3 < 256 ? s.length : utf8.encode(s).length;
  return utf8.encode(s).length;
}

// The classification object the verdict comes from, by record type.
function classificationOf(rec) {
  if (rec.type === 'usermark') {
    const w0 = worst0(rec);
    return topClass(isObject(w0) ? w0.classification : undefined);
  }
  if (rec.type === 'hitch' || rec.type === 'jitter') return topClass(rec.classification);
  return null;
}

// --- times ------------------------------------------------------------------

// Milliseconds since the epoch, or null.  The C side's grammar:
// YYYY-MM-DD, 'T' (or 't' or ' '), HH:MM, optional :SS and .fraction (or
// ,fraction; cut to milliseconds), then Z or ±HH[:]MM.  Parsed by hand:
// a page folds thousands of these before its first paint.
export function parseIso(s) {
  if (typeof s !== 'string') return null;
  const n = s.length;
  if (n < 17) return null;
  const d = (i) => {
    const c = s.charCodeAt(i) - 48;
    return c >= 0 && c <= 9 ? c : -1;
  };
  const two = (i) => {
    const a = d(i), b = d(i + 1);
    return a < 0 || b < 0 ? -1 : a * 10 + b;
  };
  const y0 = two(0), y1 = two(2), M = two(5), D = two(8), h = two(11), mi = two(14);
  if (y0 < 0 || y1 < 0 || M < 0 || D < 0 || h < 0 || mi < 0) return null;
  if (s[4] !== '-' || s[7] !== '-' || s[13] !== ':') return null;
  const sep = s[10];
  if (sep !== 'T' && sep !== 't' && sep !== ' ') return null;
  let i = 16, sec = 0, frac = 0;
  if (s[i] === ':') {
    sec = two(17);
    if (sec < 0) return null;
    i = 19;
    if (s[i] === '.' || s[i] === ',') {
      let scale = 100, any = false;
      for (i++; i < n && d(i) >= 0; i++) {
        frac += d(i) * scale;
        scale = Math.floor(scale / 10);
        any = true;
      }
      if (!any) return null;
    }
  }
  let off = 0;
  const z = s[i];
  if (z === 'Z' || z === 'z') i++;
  else if (z === '+' || z === '-') {
    const oh = two(i + 1);
    if (oh < 0) return null;
    i += 3;
    if (s[i] === ':') i++;
    const om = two(i);
    if (om < 0 || oh > 23 || om > 59) return null;
    i += 2;
    off = (z === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  } else return null;
  if (i !== n || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60) return null;
  const days = daysFromCivil(y0 * 100 + y1, M, D); // D past the month's end rolls over, as in C
  return (days * 86400 + h * 3600 + mi * 60 + sec - off) * 1000 + frac;
}

// Days from 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's
// algorithm, as ledger/footprint.c).
function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function isoOf(ms) {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

function timeOption(v) {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'number') return v;
  if (v instanceof Date) return v.getTime();
  const t = parseIso(v);
  if (t === null) throw new RangeError(`not an ISO time: ${v}`);
  return t;
}

// --- medians and summaries --------------------------------------------------

// Nearest-rank median: rank ceil(n/2) of the sorted values; null if none.
export function median(values) {
  const n = values.length;
  if (n === 0) return null;
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = values[i];
  v.sort();
  return v[((n + 1) >> 1) - 1];
}

// ceil((t1 - t0 + 1) / n): the width that cuts [t0, t1] into n slices.
function sliceWidth(t0, t1, n) {
  return Math.ceil((t1 - t0 + 1) / n);
}

// --- regimes and noise (ledger/noise.c, docs/json.md "Regimes", "Fix verdicts")

// Regime codes: 0 unknown, 1 hardware, 2 software; 3: a hitch naming none.
const REGIMES = ['unknown', 'hardware', 'software'];
const R_NONE = 3;
// a heartbeat's window longer than a day is not a measurement (the C
// fold's HB_SECONDS_MAX): no writer's figure makes play time absurd
const HB_SECONDS_MAX = 86400;

function regimeCode(v, dflt) {
  if (typeof v !== 'string') return R_NONE;
  return v === 'hardware' ? 1 : v === 'software' ? 2 : v === 'unknown' ? 0 : dflt;
}

// The regime a group's timings come from: hardware when it has any
// heartbeat of it, else software, else unknown; -1 with no heartbeat.
function pickRegime(c) {
  if (c[1] > 0) return 1;
  if (c[2] > 0) return 2;
  if (c[0] + c[R_NONE] > 0) return 0;
  return -1;
}

// The fixed rule of a noise interval: the same constants as ledger/noise.h.
export const NOISE = Object.freeze({ resamples: 1000, seed: 0x9e3779b9, max: 2048, min: 5 });

// The heartbeats' values a window's interval is taken over: in write
// order, thinned to NOISE.max evenly spaced ones (value floor(i·n/max)).
function thin(values) {
  const n = values.length;
  if (n <= NOISE.max) return values;
  const out = new Array(NOISE.max);
  for (let i = 0; i < NOISE.max; i++) out[i] = values[Math.floor((i * n) / NOISE.max)];
  return out;
}

/*
 * The 95 % moving-block bootstrap interval of the nearest-rank median of
 * v (in write order): {lo, hi}, or null for fewer than NOISE.min values.
 * Step for step ledger/noise.c's noise_interval, so both folds give the
 * same doubles: blocks of L (the smallest with L³ >= n) consecutive
 * values from xorshift32 draws (modulo), each resample's median found by
 * counting ranks, the 2.5th and 97.5th percentiles by nearest rank.
 */
export function noiseInterval(v) {
  const n = v.length;
  if (n < NOISE.min) return null;
  const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => (v[a] < v[b] ? -1 : v[a] > v[b] ? 1 : a - b));
  const sorted = new Float64Array(n), pos = new Uint32Array(n), cnt = new Uint32Array(n);
  for (let r = 0; r < n; r++) {
    sorted[r] = v[idx[r]];
    pos[idx[r]] = r;
  }
  let L = 1;
  while (L * L * L < n) L++;
  const span = n - L + 1, k = (n + 1) >> 1, B = NOISE.resamples;
  const med = new Float64Array(B);
  let x = NOISE.seed >>> 0;
  for (let b = 0; b < B; b++) {
    cnt.fill(0);
    for (let drawn = 0; drawn < n;) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      const s = x % span;
      for (let j = 0; j < L && drawn < n; j++, drawn++) cnt[pos[s + j]]++;
    }
    let r = 0;
    for (let cum = 0; r < n; r++) if ((cum += cnt[r]) >= k) break;
    med[b] = sorted[r];
  }
  med.sort();
  return { lo: med[Math.floor((B * 25 + 999) / 1000) - 1], hi: med[Math.floor((B * 975 + 999) / 1000) - 1] };
}

// |x| rounded to 1/scale, with its sign (ledger/noise.c's round_to).
function roundTo(x, scale) {
  const r = Math.round(Math.abs(x) * scale) / scale;
  return x < 0 ? -r : r;
}

export const JUDGE_DEFAULTS = Object.freeze({ minHeartbeats: 30, minPlaySeconds: 60, minEffectPct: 10 });

function windowRegime(w) {
  const s = w.regime;
  if (s === 'hardware' || s === 'software' || s === 'unknown') return s;
  if (s === undefined && typeof w.heartbeats === 'number' && w.heartbeats > 0) return 'unknown';
  return null;
}

function windowInterval(w) {
  const i = w.p95Interval;
  return isObject(i) && typeof i.lo === 'number' && typeof i.hi === 'number' ? { lo: i.lo, hi: i.hi } : null;
}

function tooShort(w, name, regime, j) {
  let n = isObject(w.regimes) && typeof w.regimes[regime] === 'number' ? w.regimes[regime]
    : typeof w.heartbeats === 'number' ? w.heartbeats : 0;
  if (Number.isNaN(n)) n = 0;
  const ps = typeof w.playSeconds === 'number' ? w.playSeconds : null;
  if (n >= j.minHeartbeats && (ps === null || ps >= j.minPlaySeconds)) return null;
  if (ps === null) {
    return `the ${name} window has ${n.toFixed(0)} heartbeats (its play time was not recorded); a verdict needs ${j.minHeartbeats}: it is judged again as the window grows`;
  }
  return `the ${name} window has ${n.toFixed(0)} heartbeats and ${Math.floor(ps).toFixed(0)} s of play; a verdict needs ${j.minHeartbeats} and ${j.minPlaySeconds} s: it is judged again as the window grows`;
}

/*
 * A fix's verdict from its before and after windows (ledger/noise.c's
 * noise_judge, word for word): {verdict, metric, was, wasInterval, now,
 * nowInterval, deltaMs, deltaPct, regime, reason, needs}.
 */
export function judgeFix(before, after, { pending = false, judge = {} } = {}) {
  const j = { ...JUDGE_DEFAULTS };
  if (judge.minHeartbeats > 0) j.minHeartbeats = judge.minHeartbeats;
  if (judge.minPlaySeconds > 0) j.minPlaySeconds = judge.minPlaySeconds;
  if (judge.minEffectPct > 0) j.minEffectPct = judge.minEffectPct;
  const b = isObject(before) ? before : null, a = isObject(after) ? after : null;
  const rb = b ? windowRegime(b) : null, ra = a ? windowRegime(a) : null;
  const was = b && typeof b.p95Ms === 'number' ? b.p95Ms : null;
  const now = a && typeof a.p95Ms === 'number' ? a.p95Ms : null;
  const wi = b ? windowInterval(b) : null, ni = a ? windowInterval(a) : null;
  let verdict = 'not-enough-evidence', why;
  let short;
  if (pending) {
    verdict = 'pending';
    why = 'no build after the fix has run yet: its after window is measured once one has';
  } else if (!b) why = 'no before window: nothing to compare with';
  else if (!a) why = 'no after window yet';
  else if (rb === null || ra === null) why = `the ${rb === null ? 'before' : 'after'} window has no heartbeats`;
  else if (rb === 'software' || ra === 'software') {
    verdict = 'software';
    why = `${rb === ra ? 'both windows ran' : rb === 'software' ? 'the before window ran' : 'the after window ran'} on a software renderer: its timings are not evidence of a fix (its counters are)`;
  } else if (rb !== ra) {
    verdict = 'incomparable';
    why = `the before window ran on ${rb}, the after window on ${ra}: timings are compared like with like only`;
  } else if ((short = tooShort(a, 'after', ra, j) ?? tooShort(b, 'before', rb, j)) !== null) why = short;
  else if (was === null || now === null) why = `the ${was === null ? 'before' : 'after'} window has no p95`;
  else if (!wi || !ni) why = `the ${!wi ? 'before' : 'after'} window carries no noise interval (written by an older sloptimize)`;
  else {
    const effect = (j.minEffectPct / 100) * Math.abs(was);
    if (ni.hi < wi.lo && was - now >= effect) {
      verdict = 'improved';
      why = `the after interval lies wholly below the before interval, and the change is at least ${j.minEffectPct} % of before`;
    } else if (ni.lo > wi.hi && now - was >= effect) {
      verdict = 'regressed';
      why = `the after interval lies wholly above the before interval, and the change is at least ${j.minEffectPct} % of before`;
    } else if (ni.hi >= wi.lo && ni.lo <= wi.hi) {
      verdict = 'no-detectable-change';
      why = 'the intervals overlap: the difference is inside the noise';
    } else {
      verdict = 'no-detectable-change';
      why = `the change is under ${j.minEffectPct} % of before`;
    }
  }
  // a difference only between windows timed alike, and not on software
  const comparable = rb !== null && rb === ra && rb !== 'software' && was !== null && now !== null;
  return {
    verdict, metric: 'p95Ms', was, wasInterval: wi, now, nowInterval: ni,
    deltaMs: comparable ? roundTo(now - was, 100) : null,
    deltaPct: comparable && was !== 0 ? roundTo(((now - was) / was) * 100, 10) : null,
    regime: rb !== null && rb === ra ? rb : null,
    reason: why,
    needs: { heartbeats: j.minHeartbeats, playSeconds: j.minPlaySeconds, effectPct: j.minEffectPct },
  };
}

// A window's or bucket's summary: counters over every heartbeat, timings
// (p95, median, hitches, the worst) over one regime's (pickRegime), the
// regime and the heartbeats of each.  Returns the regime's heartbeats.
function summary(out, hbs, hps) {
  const c = [0, 0, 0, 0];
  for (const h of hbs) c[h.r]++;
  const r = pickRegime(c);
  const timed = r < 0 ? hbs : hbs.filter((h) => h.r === r || (r === 0 && h.r === R_NONE));
  const hits = r < 0 ? hps : hps.filter((p) => p.r === r || p.r === R_NONE);
  out.heartbeats = hbs.length;
  for (let m = 0; m < METRICS.length; m++) {
    const vals = [];
    for (const h of m < 2 ? timed : hbs) if (h.v[m] !== null) vals.push(h.v[m]);
    out[METRICS[m]] = median(vals);
  }
  let worst = null;
  for (const p of hits) if (p.ms !== null && (worst === null || p.ms > worst)) worst = p.ms;
  out.hitches = hbs.length === 0 && hits.length === 0 ? null : hits.length;
  out.worstHitchMs = worst;
  out.regime = r < 0 ? null : REGIMES[r];
  out.regimes = { hardware: c[1], software: c[2], unknown: c[0] + c[R_NONE] };
  return timed;
}

// --- the fold ---------------------------------------------------------------

const FIX_APPLIED = 'applied', FIX_PROPOSED = 'proposed', FIX_MERGED = 'merged', FIX_REJECTED = 'rejected';

// A number beyond a double's range (1e999999) makes the line no record,
// as in the C scanner (docs/json.md): JSON.parse would make it Infinity,
// which JSON prints as null.  Only a number with a 3-digit exponent or
// 200 digits can be one, so the walk runs only for lines like that.
const MAYBE_HUGE = /[eE]\+?0*[1-9]\d\d|\d{200}/;
function hasInfinity(v) {
  if (typeof v === 'number') return !Number.isFinite(v);
  if (v === null || typeof v !== 'object') return false;
  for (const k in v) if (hasInfinity(v[k])) return true;
  return false;
}
export const OUT_OF_RANGE = 'number out of range';
// What tells one occurrence from another (ledger/ledger.c's
// occurrence_detail): the script the browser named, the bytes uploaded,
// the sites, the counters that moved (and the frame before's, when its
// stall was that frame's work), the regime — each only when the record
// has it.  `lastRegime`: its build's last heartbeat's code, or -1.
const SNAPSHOT_REF = /^hitch-[0-9a-z]{1,32}-[0-9]{1,12}$/;
function occurrenceDetail(rec, lastRegime) {
  const out = {};
  const str = (o, k, v) => { if (typeof v === 'string' && v !== '') o[k] = v; };
  if (isObject(rec.script)) {
    const x = {};
    for (const k of ['name', 'sourceURL', 'invoker', 'invokerType']) str(x, k, rec.script[k]);
    const d = num(rec.script.durationMs);
    if (d !== null) x.durationMs = d;
    str(x, 'unavailable', rec.script.unavailable);
    if (Object.keys(x).length) out.script = x;
  }
  const ub = num(isObject(rec.upload) ? rec.upload.bytes : rec.uploadBytes);
  if (ub !== null) out.uploadBytes = ub;
  const sites = [];
  if (typeof rec.site === 'string' && rec.site !== '') sites.push(rec.site);
  if (Array.isArray(rec.minted)) {
    for (const m of rec.minted) {
      if (sites.length >= 16) break;
      if (typeof m === 'string' && m !== '') sites.push(m);
    }
  }
  if (sites.length) out.sites = sites;
  // the entities it names, as "id (site)": the minted, then the spawned,
  // each once, at most 8 (ledger/ledger.c, with its byte bounds)
  const entities = [];
  const lists = [rec.mintedEntities, isObject(rec.world) ? rec.world.spawnedEntities : null];
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const e of list) {
      if (entities.length >= 8) break;
      if (!isObject(e) || typeof e.id !== 'string' || e.id === '') continue;
      const id = utf8Cut(e.id, 79);
      const site = typeof e.site === 'string' ? utf8Cut(e.site, 71) : '';
      const text = site !== '' && site !== 'unknown' ? `${id} (${site})` : id;
      if (!entities.includes(text)) entities.push(text);
    }
  }
  if (entities.length) out.entities = entities;
  // the view snapshot `sloptimize repro` replays (ledger_ref_ok)
  if (typeof rec.snapshotRef === 'string' && SNAPSHOT_REF.test(rec.snapshotRef)) out.snapshotRef = rec.snapshotRef;
  occDelta(rec.delta, out);
  // the frame before, when the record says its stall was that frame's
  // work (a compile, an upload, a crowd): its number, what moved in it
  if (isObject(rec.before)) {
    const frame = num(rec.before.frame);
    if (frame !== null) {
      out.before = { frame };
      occDelta(rec.before.delta, out.before);
    }
  }
  let code = regimeCode(rec.regime, 0);
  if (code === R_NONE && lastRegime >= 0) code = lastRegime;
  if (code !== R_NONE) out.regime = REGIMES[code];
  return out;
}

// A record's counter deltas, those it has, as o.delta (none: left out).
function occDelta(d, o) {
  if (!isObject(d)) return;
  const x = {};
  for (const k of ['programs', 'textures', 'geometries', 'calls', 'triangles']) {
    const v = num(d[k]);
    if (v !== null) x[k] = v;
  }
  if (Object.keys(x).length) o.delta = x;
}

function parseLine(line) {
  const rec = JSON.parse(line.charCodeAt(0) === 0xfeff ? line.slice(1) : line);
  if (MAYBE_HUGE.test(line) && hasInfinity(rec)) throw new RangeError(OUT_OF_RANGE);
  return rec;
}

/*
 * One fold over a ledger, record by record in file order, like struct
 * ledger: addRecord() for perf.jsonl, addFix() for fixes.jsonl (records,
 * or the raw lines — a fix without an id is named by the FNV-1a of its
 * line, so only the line gives the same id as the daemon; a parsed record
 * is named by the hash of JSON.stringify(record), which is its line when
 * the writer wrote compact JSON in the same key order).  Then issues(),
 * issue(), history() and window() render.
 */
export class Fold {
  constructor({ from = null, to = null, includeAutomated = false, occurrencesOf = null, judge = null } = {}) {
    this.from = timeOption(from);
    this.to = timeOption(to);
    this.includeAutomated = !!includeAutomated;
    this.occurrencesOf = typeof occurrencesOf === 'string' && HEX8.test(occurrencesOf) ? occurrencesOf.toLowerCase() : null;
    this.occurrences = [];
    this.rows = new Map();
    this.builds = [];            // {name, first, heartbeats}
    this.buildIndex = new Map();
    this.hbs = [];               // {t, b, v: [p95, median, calls, triangles, programs], s: seconds, r: regime code}
    this.hps = [];               // {t, b, ms, r: its own regime code, R_NONE if none}
    this.judge = {};             // what fix verdicts need (JUDGE_DEFAULTS where unset)
    this.tmin = null;
    this.tmax = null;
    this.fixes = [];
    this.ignored = 0;            // entries that were not records at all
    if (isObject(judge)) this.judge = { ...judge };
    this.counts = { folded: 0, incidents: 0, fixes: 0, malformedFootprints: 0, rows: 0, builds: 0 };
  }

  buildOf(name, at) {
    if (typeof name !== 'string' || name === '') return -1;
    let b = this.buildIndex.get(name);
    if (b === undefined) {
      b = this.builds.length;
      this.builds.push({ name, first: at, heartbeats: 0, lastRegime: -1 });
      this.buildIndex.set(name, b);
      this.counts.builds = this.builds.length;
    }
    return b;
  }

  // Fold one perf record; `offset` (its byte offset, if known) goes into
  // occurrences.  Returns the row it went into, or null.
  addRecord(rec, offset = null) {
    if (!isObject(rec) || typeof rec.type !== 'string' || rec.type === '') {
      this.ignored++;
      return null;
    }
    const at = parseIso(rec.at);
    const automated = rec.automated === true;
    let counted = !automated || this.includeAutomated;
    if (counted && (this.from !== null || this.to !== null)) {
      counted = at !== null && (this.from === null || at >= this.from) && (this.to === null || at <= this.to);
    }
    // Builds are ordered by first appearance, whatever the time filter.
    const b = !automated || this.includeAutomated ? this.buildOf(rec.build, at) : -1;
    this.counts.folded++;
    // a build's evidence, which a fix without an after window waits for;
    // and the regime its records that name none ran on
    if (b >= 0 && rec.type === 'heartbeat') {
      this.builds[b].heartbeats++;
      const code = regimeCode(rec.regime, 0);
      if (code !== R_NONE) this.builds[b].lastRegime = code;
    }

    const type = rec.type;
    let fp = null;
    if (INCIDENT_TYPES.has(type) || isObject(rec.footprint)) {
      fp = footprintOf(rec);
      if (fp.malformed) this.counts.malformedFootprints++;
      if (fp.id === null) fp = null;
    }
    let value = null;
    if (type === 'hitch') value = num(rec.frameMs);
    else if (type === 'usermark') {
      const w0 = worst0(rec);
      value = isObject(w0) ? num(w0.frameMs) : null;
    } else if (type === 'jitter') value = num(rec.units);

    if (counted) {
      if (at !== null) {
        if (this.tmin === null || at < this.tmin) this.tmin = at;
        if (this.tmax === null || at > this.tmax) this.tmax = at;
        if (type === 'heartbeat') {
          const fr = isObject(rec.frame) ? rec.frame : {};
          const re = isObject(rec.render) ? rec.render : {};
          const me = isObject(rec.memory) ? rec.memory : {};
          const wi = isObject(rec.window) ? num(rec.window.seconds) : null;
          const code = regimeCode(rec.regime, 0);
          this.hbs.push({ t: at, b, v: [num(fr.p95Ms), num(fr.medianMs), num(re.calls), num(re.triangles), num(me.programs)],
            s: wi !== null && wi >= 0 && wi <= HB_SECONDS_MAX ? wi : null, r: code === R_NONE ? 0 : code });
        } else if (type === 'hitch') {
          this.hps.push({ t: at, b, ms: value, r: regimeCode(rec.regime, 0) });
        }
      }
    }
    if (!fp || !counted) return null;

    let row = this.rows.get(fp.id);
    if (!row) {
      row = {
        id: fp.id, key: fp.key, type, phase: null, ctx: '', count: 0, first: null, last: null,
        builds: [], maxBuild: -1, lastUnbuilt: null, worst: null, worstAt: null, verdict: null,
      };
      this.rows.set(fp.id, row);
      this.counts.rows = this.rows.size;
    }
    if (b >= 0) {
      if (b > row.maxBuild) row.maxBuild = b;
      if (!row.builds.includes(b)) row.builds.push(b);
    }
    row.count++;
    this.counts.incidents++;
    if (at !== null) {
      if (row.first === null || at < row.first) row.first = at;
      if (row.last === null || at > row.last) row.last = at;
      if (b < 0 && (row.lastUnbuilt === null || at > row.lastUnbuilt)) row.lastUnbuilt = at;
    }
    if (value !== null && (row.worst === null || value > row.worst)) {
      row.worst = value;
      row.worstAt = at;
    }
    // from the last occurrence (docs/json.md)
    row.type = type;
    row.phase = typeof rec.phase === 'string' && rec.phase !== '' ? rec.phase : null;
    row.ctx = typeof rec.ctx === 'string' ? rec.ctx : '';
    const c = classificationOf(rec);
    row.verdict = c ? {
      guess: typeof c.guess === 'string' ? c.guess : null,
      confidence: typeof c.confidence === 'string' ? c.confidence : null,
      evidence: typeof c.evidence === 'string' ? c.evidence : null,
    } : null;
    if (this.occurrencesOf === fp.id) {
      const occ = {
        at: isoOf(at), build: b >= 0 ? this.builds[b].name : null, value,
        verdict: row.verdict ? { ...row.verdict } : null,
      };
      // a usermark's note: the player's own words (ledger/ledger.c)
      if (typeof rec.note === 'string' && rec.note !== '') occ.note = rec.note;
      Object.assign(occ, occurrenceDetail(rec, b >= 0 ? this.builds[b].lastRegime : -1));
      occ.offset = offset;
      this.occurrences.push(occ);
    }
    return row;
  }

  // Fold one fixes.jsonl entry: a record, or its raw line.
  addFix(entry) {
    let rec = entry, line = null;
    if (typeof entry === 'string') {
      line = entry;
      try {
        rec = parseLine(entry);
      } catch {
        this.ignored++;
        return null;
      }
    }
    if (!isObject(rec) || typeof rec.type !== 'string' || rec.type === '') {
      this.ignored++;
      return null;
    }
    this.counts.fixes++;
    if (rec.type !== 'fix') return null;
    const at = parseIso(rec.at);
    const st = typeof rec.status === 'string' ? rec.status : null;
    if (st === FIX_MERGED || st === FIX_REJECTED) {
      const ref = rec.ref;
      for (let i = this.fixes.length - 1; i >= 0; i--) {
        const fx = this.fixes[i];
        if (fx.id !== ref) continue;
        if (fx.state === FIX_PROPOSED) {
          fx.state = st;
          if (at !== null) fx.at = at;
        }
        break;
      }
      return null;
    }
    const state = st === null || st === FIX_APPLIED ? FIX_APPLIED : st === FIX_PROPOSED ? FIX_PROPOSED : 'other';
    const id = typeof rec.id === 'string' && HEX8.test(rec.id) ? rec.id.toLowerCase()
      : fnv1a32(line !== null ? line : JSON.stringify(rec));
    const hasAfter = isObject(rec.after);
    const afterBuild = hasAfter && typeof rec.after.build === 'string' && rec.after.build !== '' ? rec.after.build : null;
    const fps = new Set();
    if (Array.isArray(rec.footprints)) {
      for (const f of rec.footprints) if (typeof f === 'string' && HEX8.test(f)) fps.add(f.toLowerCase());
    }
    const fx = { rec, id, state, at, hasAfter, afterBuild, fps };
    this.fixes.push(fx);
    return fx;
  }

  // The build a fix is judged against, as an index; -1 if not seen yet.
  fixBuild(fx) {
    if (fx.afterBuild !== null) return this.buildIndex.get(fx.afterBuild) ?? -1;
    if (fx.at === null) return -1;
    for (let i = 0; i < this.builds.length; i++) {
      const f = this.builds[i].first;
      if (f !== null && f > fx.at) return i;
    }
    return -1;
  }

  // What a fix without an after window is judged on: the first build from
  // its fix build on that has heartbeats; -1 while it waits for one.
  fixEvidence(fx) {
    let b = this.fixBuild(fx);
    if (b < 0) return -1;
    for (; b < this.builds.length; b++) if (this.builds[b].heartbeats > 0) return b;
    return -1;
  }

  fixPending(fx) {
    return !fx.hasAfter && this.fixEvidence(fx) < 0;
  }

  // The fix as the catalogue lists it: the record as written, with its
  // state in `status`, its id, `fixBuild`, and how it is judged: `pending`
  // and `afterSource` ("written", "fold": after measured here, or null).
  fixJson(fx) {
    const o = JSON.parse(JSON.stringify(fx.rec));
    if (fx.state !== 'other') {
      delete o.status;
      o.status = fx.state;
    }
    delete o.id;
    o.id = fx.id;
    delete o.fixBuild;
    const fb = this.fixBuild(fx);
    o.fixBuild = fb >= 0 ? this.builds[fb].name : fx.afterBuild;
    const counts = fx.state === FIX_APPLIED || fx.state === FIX_MERGED;
    delete o.pending;
    delete o.afterSource;
    o.pending = counts && this.fixPending(fx);
    if (fx.hasAfter) o.afterSource = 'written';
    else if (!counts) o.afterSource = null;
    else {
      const ev = this.fixEvidence(fx);
      const hbs = ev >= 0 ? this.hbs.filter((s) => s.b === ev) : [];
      const hps = ev >= 0 ? this.hps.filter((s) => s.b === ev) : [];
      delete o.after;
      o.after = hbs.length + hps.length > 0 ? this.windowJson(hbs, hps, this.builds[ev].name, null, null) : null;
      o.afterSource = o.after ? 'fold' : null;
    }
    // the verdict on the two windows as they stand (ledger/noise.c)
    delete o.judgement;
    o.judgement = judgeFix(o.before, o.after, { pending: o.pending, judge: this.judge });
    return o;
  }

  status(row) {
    let best = null;
    for (const fx of this.fixes) {
      if (fx.state !== FIX_APPLIED && fx.state !== FIX_MERGED) continue;
      if (!fx.fps.has(row.id)) continue;
      if (best === null || (fx.at ?? -Infinity) >= (best.at ?? -Infinity)) best = fx;
    }
    if (best === null) return 'open';
    const fb = this.fixBuild(best);
    if (fb >= 0 && row.maxBuild >= 0 && row.maxBuild >= fb) return 'regressed';
    if (best.at !== null && row.lastUnbuilt !== null && row.lastUnbuilt > best.at) return 'regressed';
    if (this.fixPending(best)) return 'pending';
    return 'fixed';
  }

  rowJson(row, now) {
    const fixes = [], proposals = [];
    for (const fx of this.fixes) {
      if (!fx.fps.has(row.id)) continue;
      if (fx.state === FIX_APPLIED || fx.state === FIX_MERGED) fixes.push(this.fixJson(fx));
      else if (fx.state === FIX_PROPOSED || fx.state === FIX_REJECTED) proposals.push(this.fixJson(fx));
    }
    return {
      id: row.id,
      key: row.key,
      type: row.type,
      phase: row.phase,
      count: row.count,
      first: isoOf(row.first),
      last: isoOf(row.last),
      lastAgoMs: row.last === null ? null : now - row.last,
      builds: row.builds.map((b) => this.builds[b].name),
      worst: row.worst === null ? null
        : { value: row.worst, unit: row.type === 'jitter' ? 'units' : 'ms', at: isoOf(row.worstAt) },
      verdict: row.verdict ? { ...row.verdict } : null,
      situation: parseSituation(row.ctx),
      fixes,
      proposals,
      status: this.status(row),
    };
  }

  sortedRows() {
    return [...this.rows.values()].sort((x, y) => {
      if (x.count !== y.count) return y.count - x.count;
      const xl = x.last ?? -Infinity, yl = y.last ?? -Infinity;
      if (xl !== yl) return yl > xl ? 1 : -1;
      return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
    });
  }

  // The catalogue: {v, generatedAt, counts, issues}.  Options filter rows
  // when rendering: type, status, limit.
  issues({ now = Date.now(), type = null, status = null, limit = 0 } = {}) {
    now = timeOption(now) ?? Date.now();
    const issues = [];
    for (const row of this.sortedRows()) {
      if (type !== null && row.type !== type) continue;
      if (status !== null && this.status(row) !== status) continue;
      if (limit && issues.length >= limit) break;
      issues.push(this.rowJson(row, now));
    }
    return { v: 1, generatedAt: isoOf(now), counts: { ...this.counts }, issues };
  }

  // One row with its occurrences (kept only for opts.occurrencesOf), or null.
  issue(id, { now = Date.now() } = {}) {
    const row = typeof id === 'string' ? this.rows.get(id.toLowerCase()) : undefined;
    if (!row) return null;
    now = timeOption(now) ?? Date.now();
    return {
      v: 1, generatedAt: isoOf(now), issue: this.rowJson(row, now),
      occurrences: this.occurrencesOf === row.id ? this.occurrences.map((o) => ({ ...o })) : [],
    };
  }

  windowJson(hbs, hps, build, from, to) {
    if (from === null && to === null) {
      for (const s of hbs.concat(hps)) {
        if (from === null || s.t < from) from = s.t;
        if (to === null || s.t > to) to = s.t;
      }
    }
    const o = { build, from: isoOf(from), to: isoOf(to) };
    const timed = summary(o, hbs, hps);
    // the play time and the p95's noise, from the heartbeats timed
    let secs = 0, nsecs = 0;
    const p95s = [];
    for (const h of timed) {
      if (h.s !== null) {
        secs += h.s;
        nsecs++;
      }
      if (h.v[0] !== null) p95s.push(h.v[0]);
    }
    o.playSeconds = nsecs === 0 ? null : Math.round(secs * 100) / 100;
    o.p95Interval = noiseInterval(thin(p95s));
    const series = [];
    if (hbs.length > 0 && from !== null) {
      const w = sliceWidth(from, to, SERIES_SLICES);
      const slices = Array.from({ length: SERIES_SLICES }, () => []);
      for (const h of timed) {
        const k = Math.floor((h.t - from) / w);
        if (h.v[0] !== null && k >= 0 && k < SERIES_SLICES) slices[k].push(h.v[0]);
      }
      for (const s of slices) series.push(median(s));
    }
    o.series = series;
    return o;
  }

  // The timeline: {v, generatedAt, from, to, bucketMs, buckets, builds}.
  history({ buckets = 24, now = Date.now() } = {}) {
    const n = Number.isInteger(buckets) && buckets >= 1 ? buckets : 24;
    now = timeOption(now) ?? Date.now();
    const o = { v: 1, generatedAt: isoOf(now), from: isoOf(this.tmin), to: isoOf(this.tmax), bucketMs: null, buckets: [], builds: [] };
    if (this.tmin !== null) {
      const w = sliceWidth(this.tmin, this.tmax, n);
      o.bucketMs = w;
      const bh = Array.from({ length: n }, () => []), bp = Array.from({ length: n }, () => []);
      for (const h of this.hbs) bh[Math.floor((h.t - this.tmin) / w)].push(h);
      for (const p of this.hps) bp[Math.floor((p.t - this.tmin) / w)].push(p);
      for (let k = 0; k < n; k++) {
        const bo = { from: isoOf(this.tmin + k * w), to: isoOf(this.tmin + (k + 1) * w) };
        summary(bo, bh[k], bp[k]);
        const seen = new Set();
        for (const s of bh[k]) if (s.b >= 0) seen.add(s.b);
        for (const s of bp[k]) if (s.b >= 0) seen.add(s.b);
        bo.builds = [...seen].sort((a, b) => a - b).map((b) => this.builds[b].name);
        o.buckets.push(bo);
      }
    }
    const byBuildH = this.builds.map(() => []), byBuildP = this.builds.map(() => []);
    for (const h of this.hbs) if (h.b >= 0) byBuildH[h.b].push(h);
    for (const p of this.hps) if (p.b >= 0) byBuildP[p.b].push(p);
    for (let b = 0; b < this.builds.length; b++) {
      if (byBuildH[b].length + byBuildP[b].length === 0) continue;
      o.builds.push(this.windowJson(byBuildH[b], byBuildP[b], this.builds[b].name, null, null));
    }
    return o;
  }

  // A measured window (DESIGN §7 fix windows): spec '' or null is the
  // default (after: the latest build with heartbeats; before: the one
  // before it), a build name, '<ISO>..<ISO>', or {build} / {from, to}.
  // Throws an Error with the CLI's reason when there is no such window.
  window(spec = '', { after = true } = {}) {
    let b = -1, from = null, to = null;
    if (isObject(spec)) {
      if (typeof spec.build === 'string') spec = spec.build;
      else spec = `${spec.from}..${spec.to}`;
    }
    if (spec === null || spec === undefined || spec === '') {
      const evidence = new Set(this.hbs.map((h) => h.b));
      let latest = -1, prev = -1;
      for (let i = this.builds.length - 1; i >= 0; i--) {
        if (!evidence.has(i)) continue;
        if (latest < 0) latest = i;
        else {
          prev = i;
          break;
        }
      }
      b = after ? latest : prev;
      if (b < 0) throw new Error(after ? 'no build has heartbeats yet' : 'no earlier build with heartbeats to compare with');
    } else if (String(spec).includes('..')) {
      const s = String(spec), i = s.indexOf('..');
      from = parseIso(s.slice(0, i));
      to = parseIso(s.slice(i + 2));
      if (from === null || to === null || to < from) throw new Error('a window is <ISO>..<ISO> with from <= to');
    } else {
      b = this.buildIndex.get(String(spec)) ?? -1;
      if (b < 0) throw new Error('no such build in the ledger');
    }
    const pick = (s) => (b >= 0 ? s.b === b : s.t >= from && s.t <= to);
    return this.windowJson(this.hbs.filter(pick), this.hps.filter(pick), b >= 0 ? this.builds[b].name : null, from, to);
  }

  // Every fix, proposal and their state, in fixes.jsonl order (for the
  // panel's cards: the catalogue lists them only under the ids they name).
  allFixes() {
    return this.fixes.filter((fx) => fx.state !== 'other').map((fx) => this.fixJson(fx));
  }
}

function foldAll(records, opts, fixes = []) {
  const f = new Fold(opts);
  const offsets = opts.offsets;
  for (let i = 0; i < records.length; i++) f.addRecord(records[i], offsets ? offsets[i] ?? null : null);
  for (const fx of fixes || []) f.addFix(fx);
  return f;
}

// The catalogue of docs/json.md: {v, generatedAt, counts, issues} (counts
// without `lines` and `skipped`, which only a reader of the bytes knows).
export function buildIssues(records, { fixes = [], from = null, to = null, now = Date.now(), includeAutomated = false,
  type = null, status = null, limit = 0 } = {}) {
  return foldAll(records, { from, to, includeAutomated }, fixes).issues({ now, type, status, limit });
}

// One issue with its occurrences (`offsets[i]` is records[i]'s byte offset
// when known, else null), or null when no row has that id.
export function buildIssue(records, id, { fixes = [], from = null, to = null, now = Date.now(), includeAutomated = false,
  offsets = null } = {}) {
  return foldAll(records, { from, to, includeAutomated, occurrencesOf: id, offsets }, fixes).issue(id, { now });
}

// The timeline of docs/json.md: {v, generatedAt, from, to, bucketMs, buckets, builds}.
export function buildHistory(records, { buckets = 24, now = Date.now(), includeAutomated = false } = {}) {
  return foldAll(records, { includeAutomated }).history({ buckets, now });
}

// A measured window (see Fold#window).
export function measureWindow(records, spec = '', { after = true, includeAutomated = false } = {}) {
  return foldAll(records, { includeAutomated }).window(spec, { after });
}

// --- reading bytes ----------------------------------------------------------

/*
 * Split JSONL bytes (or text) into records the way the daemon reads them:
 * complete lines only (a partial last line is left for later), a UTF-8 BOM
 * and a trailing '\r' ignored, blank lines neither records nor errors, a
 * line that is not valid UTF-8, not a JSON object, has no string `type` or
 * is longer than 1 MiB skipped with its offset and length.  The reasons
 * are this reader's words (JSON.parse does not say what the C scanner
 * says).  Returns {records, offsets, lines (raw text of each record),
 * skipped, lineCount, partialBytes}.
 */
export function parseJsonl(input, { stream = 'perf' } = {}) {
  const bytes = typeof input === 'string' ? utf8.encode(input) : input;
  const dec = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const out = { records: [], offsets: [], lines: [], skipped: [], lineCount: 0, partialBytes: 0 };
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(10, start);
    if (nl < 0) {
      out.partialBytes = bytes.length - start;
      break;
    }
    out.lineCount++;
    const len = nl - start;
    const skip = (reason) => out.skipped.push({ stream, offset: start, length: len, reason });
    if (len > MAX_LINE) {
      skip('line longer than 1 MiB');
      start = nl + 1;
      continue;
    }
    let text = null;
    try {
      text = dec.decode(bytes.subarray(start, nl));
    } catch {
      skip('invalid UTF-8');
    }
    if (text !== null) {
      const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
      if (/^[ \t\r]*$/.test(body)) {
        start = nl + 1;
        continue;
      }
      let rec, why = 'not valid JSON';
      try {
        rec = parseLine(body);
      } catch (e) {
        rec = undefined;
        if (e instanceof RangeError) why = OUT_OF_RANGE;
      }
      if (rec === undefined || !isObject(rec)) skip(rec === undefined ? why : 'not a JSON object');
      else if (typeof rec.type !== 'string' || rec.type === '') skip('no string type');
      else {
        out.records.push(rec);
        out.offsets.push(start);
        out.lines.push(text);
      }
    }
    start = nl + 1;
  }
  return out;
}
