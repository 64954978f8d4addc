//# allFunctionsCalledOnLoad
// footprint.js — the identity of a cause (DESIGN §6; footprint v2,
// docs/footprint-v2.md): the key a record's fields give, its id, and the
// reading rule.  The recorder mints with it, the panel's fold (fold.js)
// reads with it, and ledger/footprint.c is the same derivation in C —
// checked against the same vectors (schemas/footprint-vectors.json).
//
// v2 keeps v1's grammar and changes what enters a hitch's cause field: a
// cause must be the same across reloads, builds and machines, so runtime
// ids (`Material#123`), instance numbers and which subset of a burst
// landed in which frame must not enter it.  A hitch is keyed by its
// stable sites (shader-compile, texture-upload, spawn-burst, long-render)
// or by the script the browser named (long-script); a wait outside the
// page and a resize are keyed by their verdict alone.
//
// ES module, no dependencies, no DOM: it runs in a page, a worker or node.

export const FOOTPRINT_VERSION = 2;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const HEX8 = /^[0-9a-fA-F]{8}$/;
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

// The bounds of a hitch's cause field, in UTF-8 bytes (docs/footprint-v2.md).
export const SITE_IN = 4096;       // of each string, what is looked at
export const SITE_MAX = 48;        // one site, after normalising
export const SITES_MAX = 120;      // the sites joined by '+'
export const SITES_IN = 128;       // strings looked at
export const SCRIPT_NAME_MAX = 48; // a script's function name
export const SCRIPT_FILE_MAX = 64; // its file: the last bytes of the path
export const SCRIPT_SHARE_MIN = 0.5;   // a named script below this share of the page's time outside render (recorder.js) is not its cause

// FNV-1a 32 of the UTF-8 bytes of a string (or of bytes), 8 lowercase hex.
// A string is hashed as UTF-8 on the fly (a lone surrogate as U+FFFD, as
// TextEncoder writes it), without building the bytes.
export function fnv1a32(data) {
  let h = FNV_OFFSET;
  if (typeof data !== 'string') {
    for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data[i], FNV_PRIME);
    return (h >>> 0).toString(16).padStart(8, '0');
  }
  const n = data.length;
  for (let i = 0; i < n; i++) {
    let c = data.charCodeAt(i);
    if (c < 0x80) {
      h = Math.imul(h ^ c, FNV_PRIME);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < n ? data.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      } else c = 0xfffd;
    }
    if (c < 0x800) {
      h = Math.imul(h ^ (0xc0 | (c >> 6)), FNV_PRIME);
    } else if (c < 0x10000) {
      h = Math.imul(h ^ (0xe0 | (c >> 12)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    } else {
      h = Math.imul(h ^ (0xf0 | (c >> 18)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 12) & 0x3f)), FNV_PRIME);
      h = Math.imul(h ^ (0x80 | ((c >> 6) & 0x3f)), FNV_PRIME);
    }
    h = Math.imul(h ^ (0x80 | (c & 0x3f)), FNV_PRIME);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

export function footprintId(key) {
  return fnv1a32(`v${FOOTPRINT_VERSION}:${key}`);
}

// The separators of a key and a situation become '_'.
export function scrub(s) {
  return String(s).replace(/[|,=\n\r\t]/g, '_');
}

// Code point order, which is UTF-8 byte order (the C side's strcmp).
export function compareUtf8(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff, ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1; // a surrogate half is a code point past U+FFFF
    return x - y;
  }
  return a.length - b.length;
}

// UTF-8 length of the code point starting at s[i]: 4 is a surrogate pair,
// two UTF-16 units; a lone surrogate is U+FFFD, 3 bytes in one unit.
// A number, not a pair: this runs per character of every site a record
// keys, cold, in V8's interpreter, where an array a character was most of
// a waking record's footprint.
function cpBytes(s, i) {
  const c = s.charCodeAt(i);
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 4;
  }
  return 3;
}

// the common case, a site or a name in ASCII: one byte a unit
const ASCII = /^[\x00-\x7f]*$/;

export function utf8Bytes(s) {
  if (ASCII.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length;) { const b = cpBytes(s, i); n += b; i += b === 4 ? 2 : 1; }
  return n;
}

// The longest prefix of s of at most `max` UTF-8 bytes, cut at a code point.
export function headBytes(s, max) {
  // its first `max` units all ASCII: they are the answer (only they are
  // looked at, however long s is)
  const h = s.length > max ? s.slice(0, max) : s;
  if (ASCII.test(h)) return h;
  let n = 0, i = 0;
  while (i < s.length) {
    const b = cpBytes(s, i);
    if (n + b > max) break;
    n += b; i += b === 4 ? 2 : 1;
  }
  return s.slice(0, i);
}

// The shortest suffix of s that holds its last `max` UTF-8 bytes or
// fewer, starting at a code point.
export function tailBytes(s, max) {
  let total = utf8Bytes(s), i = 0;
  if (total <= max) return s;
  // walk from the front, dropping code points until the rest fits
  while (i < s.length && total > max) {
    const b = cpBytes(s, i);
    total -= b; i += b === 4 ? 2 : 1;
  }
  return s.slice(i);
}

// The host's situation as the canonical ctx string: facets sorted by key
// (after scrubbing, in code point order), `k=v` joined by ','.  Facets that
// are null or undefined are left out; other values are turned into strings.
export function canonicalContext(facets) {
  if (facets == null) return '';
  const entries = facets instanceof Map ? [...facets] : Object.entries(facets);
  const pairs = [];
  for (const [k, v] of entries) {
    if (v === null || v === undefined) continue;
    pairs.push([scrub(k), scrub(v)]);
  }
  pairs.sort((a, b) => compareUtf8(a[0], b[0]) || compareUtf8(a[1], b[1]));
  return pairs.map(([k, v]) => `${k}=${v}`).join(',');
}

export function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// A number, or a string that is exactly one JSON number; else null.
export function num(v) {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.length < 63 && NUMBER.test(v)) {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

// A member that enters a key: a non-empty string (scrubbed), a number as
// written, else the default.
function keyField(v, dflt = '-') {
  if (typeof v === 'string') return v === '' ? dflt : scrub(v);
  if (typeof v === 'number' && Number.isFinite(v)) return scrub(String(v));
  return dflt;
}

export function topClass(cls) {
  const c = Array.isArray(cls) ? cls[0] : cls;
  return isObject(c) ? c : null;
}

export function worst0(rec) {
  const w = rec.worst;
  return Array.isArray(w) && w.length > 0 ? w[0] : undefined;
}

function guessField(cls) {
  const top = topClass(cls);
  return keyField(top ? top.guess : undefined);
}

// One site as it enters a key: a runtime id or an instance number ('#12',
// '_3', '.003') is not identity — every run of digits, with a '#' before
// it, becomes '#'; then the separators and '+' (which joins sites) become
// '_'; then at most SITE_MAX bytes.
export function normalizeSite(s) {
  const t = headBytes(String(s), SITE_IN).replace(/#?[0-9]+/g, '#').replace(/[|,=\n\r\t+]/g, '_');
  return headBytes(t, SITE_MAX);
}

// A hitch's sites: the stable `sites` the writer gave (v2 writers), else
// its `minted` pairs (v1 writers) — normalised, sorted, deduplicated,
// joined by '+' while the whole stays within SITES_MAX bytes; '+more'
// says some were left out (how many is not identity: it depends on which
// frame the work landed in).  '-' when there are none.
export function sitesField(rec) {
  let src = Array.isArray(rec.sites) && rec.sites.some((s) => typeof s === 'string') ? rec.sites : rec.minted;
  if (!Array.isArray(src)) return '-';
  const list = [];
  let seen = 0;
  for (const m of src) {
    if (seen >= SITES_IN) break;
    if (typeof m !== 'string') continue;
    seen++;
    list.push(normalizeSite(m));
  }
  list.sort(compareUtf8);
  const uniq = list.filter((s, i) => i === 0 || s !== list[i - 1]);
  if (uniq.length === 0) return '-';
  let out = uniq[0], bytes = utf8Bytes(uniq[0]);
  let i = 1;
  for (; i < uniq.length; i++) {
    const b = utf8Bytes(uniq[i]);
    if (bytes + 1 + b > SITES_MAX) break;
    out += `+${uniq[i]}`;
    bytes += 1 + b;
  }
  if (i < uniq.length) out += '+more';
  return out;
}

// A script's file as identity: its path, without the query string or the
// fragment (Vite's ?v=, ?t= change with every dependency or edit) and
// without scheme and host (the dev server's port is not the game's), at
// most the last SCRIPT_FILE_MAX bytes.
export function scriptFile(url) {
  if (typeof url !== 'string' || url === '') return '';
  let u = headBytes(url, SITE_IN);
  const q = u.search(/[?#]/);
  if (q >= 0) u = u.slice(0, q);
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/.exec(u);
  if (m) u = u.slice(m[0].length);
  return tailBytes(u, SCRIPT_FILE_MAX);
}

// A long-script hitch's cause: the script the browser named — its
// function and file ('name@/src/main.js'; '(anonymous)' for no name, '-'
// for no file), else its invoker — or 'no-script' when none was named
// (or the one named covers less than SCRIPT_SHARE_MIN of the time outside
// render: then it is not what the frame waited on).
export function scriptField(rec) {
  const s = rec.script;
  if (!isObject(s)) return 'no-script';
  const share = num(s.share);
  if (share !== null && share < SCRIPT_SHARE_MIN) return 'no-script';
  const name = typeof s.name === 'string' ? headBytes(s.name, SITE_IN) : '';
  const file = scriptFile(s.sourceURL);
  const clean = (t) => t.replace(/[|,=\n\r\t+]/g, '_');
  if (name !== '' || file !== '') {
    return `${clean(name === '' ? '(anonymous)' : headBytes(name, SCRIPT_NAME_MAX))}@${clean(file === '' ? '-' : file)}`;
  }
  const inv = typeof s.invoker === 'string' ? headBytes(s.invoker, SITE_IN) : '';
  const tok = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(inv) ? scriptFile(inv) : headBytes(inv, SCRIPT_FILE_MAX);
  return tok === '' ? 'no-script' : clean(tok);
}

// The verdicts whose cause is the verdict alone: nothing of the page
// names them (docs/footprint-v2.md).
const CAUSELESS = new Set(['gc-or-upload-by-elimination', 'resize']);

// The v2 key of a record, derived (DESIGN §6, docs/footprint-v2.md); null
// for a type that has none.
export function footprintKey(rec) {
  if (!isObject(rec)) return null;
  const t = rec.type;
  const phase = keyField(rec.phase);
  const ctx = typeof rec.ctx === 'string' ? rec.ctx : '';
  if (t === 'hitch') {
    const top = topClass(rec.classification);
    const guess = typeof top?.guess === 'string' ? top.guess : '';
    const cause = guess === 'long-script' ? scriptField(rec) : CAUSELESS.has(guess) ? '-' : sitesField(rec);
    return `hitch|${phase}|${guessField(rec.classification)}|${cause}|ctx:${ctx}`;
  }
  if (t === 'usermark') {
    const w0 = worst0(rec);
    return `usermark|${phase}|${guessField(isObject(w0) ? w0.classification : undefined)}|ctx:${ctx}`;
  }
  if (t === 'jitter') {
    const j = [0, 0, 0];
    if (Array.isArray(rec.jump)) for (let i = 0; i < 3; i++) j[i] = num(rec.jump[i]) ?? 0;
    const axis = Math.abs(j[1]) > Math.max(Math.abs(j[0]), Math.abs(j[2])) ? 'vertical' : 'horizontal';
    return `jitter|${keyField(rec.track)}|${keyField(rec.kind)}|${phase}|${guessField(rec.classification)}|${axis}|ctx:${ctx}`;
  }
  return null;
}

function scalarText(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return '';
}

// The reading rule (DESIGN §6, seed §3.7): a record stamped with the
// current version (2) and an 8-hex id keeps the writer's id and key; one
// stamped with an older version (1, 0) or none is re-derived with v2; a
// stamped v2 whose id is not 8 hex digits is re-derived and `malformed`.
// A type that cannot be derived keeps a writer's valid id whatever its
// version.  {id: null} means no footprint.  `was` is an older stamp's
// valid id, re-derived away (a fix that named it still names this cause).
export function footprintOf(rec) {
  const fp = isObject(rec) && isObject(rec.footprint) ? rec.footprint : null;
  const fid = fp && typeof fp.id === 'string' && HEX8.test(fp.id) ? fp.id.toLowerCase() : null;
  let malformed = false;
  const v = fp ? num(fp.v) : null;
  if (fp && v === FOOTPRINT_VERSION) {
    if (fid) {
      const key = typeof fp.key === 'string' ? fp.key : (footprintKey(rec) ?? '');
      return { id: fid, key, malformed: false, was: null };
    }
    malformed = true;
  }
  const key = footprintKey(rec);
  if (key === null) {
    if (fid) return { id: fid, key: scalarText(fp.key), malformed, was: null };
    return { id: null, key: null, malformed, was: null };
  }
  const id = footprintId(key);
  return { id, key, malformed, was: fid && !malformed && fid !== id ? fid : null };
}
