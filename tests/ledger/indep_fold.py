#!/usr/bin/env python3
"""indep_fold — an independent fold of a sloptimize ledger, for cross-checks.

Written from the design (§5 records, §6 footprint, §7 the fold),
docs/footprint-v2.md and docs/json.md only; it shares no code with ledger/ (C) or page-runtime/
(JS).  It is deliberately plain: Python's json module per line, dicts per
footprint id.  It is not fast and does not need to be.

  indep_fold.py fold DIR [--now ISO] [--include-automated]
        print {counts, rows:{id: {...}}, order:[id...]} as JSON
  indep_fold.py compare DIR CLI_ISSUES_JSON [--now ISO]
        compare `sloptimize issues --json` output with this fold: every
        id's count, first, last, builds, worst (and key, type, phase,
        verdict, situation, status, fixes, lastAgoMs, row order, counts);
        prints one line per difference, exits 1 if any
  indep_fold.py vectors FILE
        check schemas/footprint-vectors.json against this derivation
  indep_fold.py jsondiff EXPECTED GOT [--ignore KEY,KEY]
        compare two JSON files (top-level KEYs ignored), print one line
        per differing path, exit 1 if any
  indep_fold.py objects FILE
        print the lines of a JSONL file that parse as JSON objects (for
        schema checks of fixture records), BOM and CR stripped
  indep_fold.py windows DIR CLI_HISTORY_JSON
        check every per-build window of `sloptimize history --json`
        against this fold's: heartbeats, regime and regimes, the timed
        p95 and median, playSeconds and the p95's noise interval
        (docs/json.md "Regimes", "Fix verdicts"); one line per difference
  indep_fold.py judge CLI_ISSUES_JSON
        re-judge every fix of `sloptimize issues --json` from the before
        and after windows it carries, and compare with its judgement
"""
import datetime, json, math, re, sys

FNV_OFFSET, FNV_PRIME = 0x811C9DC5, 0x01000193
HEX8 = re.compile(r"[0-9a-fA-F]{8}\Z")
NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?"
                 r"(Z|[+-]\d{2}:?\d{2})\Z")
SEPARATORS = "|,=\n\r\t"


# --- footprint v2 (DESIGN §6, docs/footprint-v2.md) ---------------------------

VERSION = 2

def fnv1a32(data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    h = FNV_OFFSET
    for byte in data:
        h ^= byte
        h = (h * FNV_PRIME) % (1 << 32)
    return format(h, "08x")


def scrub(value):
    out = []
    for ch in value:
        out.append("_" if ch in SEPARATORS else ch)
    return "".join(out)


def field(rec, name):
    """A string field, scrubbed; '-' when missing or not a string."""
    v = rec.get(name)
    return scrub(v) if isinstance(v, str) and v != "" else "-"


def top_class(cls):
    """The top classification object of a `classification` value, or None."""
    if isinstance(cls, list):
        cls = cls[0] if cls else None
    return cls if isinstance(cls, dict) else None


def guess_of(cls):
    top = top_class(cls)
    g = top.get("guess") if top else None
    return scrub(g) if isinstance(g, str) and g != "" else "-"


def first_worst(rec):
    w = rec.get("worst")
    return w[0] if isinstance(w, list) and w and isinstance(w[0], dict) else {}


def num(v):
    """A number, or a string that is exactly one JSON number; else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and NUMBER.match(v):
        return float(v)
    return None


def utf8_cut(b, limit):
    """The longest prefix of UTF-8 bytes b of at most `limit` bytes that
    ends at a character boundary."""
    if len(b) <= limit:
        return b
    n = limit
    while n > 0 and (b[n] & 0xC0) == 0x80:
        n -= 1
    return b[:n]


def utf8_last(b, limit):
    """The bytes of b from where its last `limit` bytes start, moved
    forward to a character boundary."""
    if len(b) <= limit:
        return b
    i = len(b) - limit
    while i < len(b) and (b[i] & 0xC0) == 0x80:
        i += 1
    return b[i:]


def to_bytes(s):
    return s.encode("utf-8", "replace") if isinstance(s, str) else b""


def clean_bytes(b):
    """The separators and '+' become '_'."""
    return bytes(0x5F if c in b"|,=\n\r\t+" else c for c in b)


def site(s):
    """One site of a v2 hitch key: digit runs (with a '#' before them) are
    '#', separators and '+' are '_', at most 48 bytes."""
    b = utf8_cut(to_bytes(s), 4096)
    out = bytearray()
    i = 0
    while i < len(b):
        c = b[i]
        starts_run = 0x30 <= c <= 0x39 or (c == 0x23 and i + 1 < len(b) and 0x30 <= b[i + 1] <= 0x39)
        if starts_run:
            i += 1
            while i < len(b) and 0x30 <= b[i] <= 0x39:
                i += 1
            out.append(0x23)
            continue
        out.append(c)
        i += 1
    return utf8_cut(clean_bytes(bytes(out)), 48)


def sites_of(rec):
    src = rec.get("sites")
    if not (isinstance(src, list) and any(isinstance(x, str) for x in src)):
        src = rec.get("minted")
    if not isinstance(src, list):
        return "-"
    strings = [x for x in src if isinstance(x, str)][:128]
    uniq = sorted(set(site(x) for x in strings))
    if not uniq:
        return "-"
    parts, size = [uniq[0]], len(uniq[0])
    for u in uniq[1:]:
        if size + 1 + len(u) > 120:
            parts.append(b"more")
            break
        parts.append(u)
        size += 1 + len(u)
    return b"+".join(parts).decode("utf-8")


def script_path(b):
    """A script URL as identity: no query or fragment, no scheme://host,
    its last 64 bytes."""
    for sep in (b"?", b"#"):
        if sep in b:
            b = b[:b.index(sep)]
    m = re.match(rb"[A-Za-z][A-Za-z0-9+.\-]*://[^/]*", b)
    if m:
        b = b[m.end():]
    return utf8_last(b, 64)


def script_of(rec):
    s = rec.get("script")
    if not isinstance(s, dict):
        return "no-script"
    share = num(s.get("share"))
    if share is not None and share < 0.5:
        return "no-script"
    name = utf8_cut(to_bytes(s.get("name")), 4096)
    path = script_path(utf8_cut(to_bytes(s.get("sourceURL")), 4096))
    if name or path:
        who = clean_bytes(utf8_cut(name, 48)) if name else b"(anonymous)"
        where = clean_bytes(path) if path else b"-"
        return (who + b"@" + where).decode("utf-8")
    inv = utf8_cut(to_bytes(s.get("invoker")), 4096)
    if re.match(rb"[A-Za-z][A-Za-z0-9+.\-]*://", inv):
        inv = script_path(inv)
    else:
        inv = utf8_cut(inv, 64)
    return clean_bytes(inv).decode("utf-8") if inv else "no-script"


def derive_key(rec):
    t = rec.get("type")
    phase = field(rec, "phase")
    ctx = rec.get("ctx") if isinstance(rec.get("ctx"), str) else ""
    if t == "hitch":
        top = top_class(rec.get("classification"))
        g = top.get("guess") if top else None
        if g == "long-script":
            cause = script_of(rec)
        elif g in ("gc-or-upload-by-elimination", "resize"):
            cause = "-"
        else:
            cause = sites_of(rec)
        return "hitch|" + phase + "|" + guess_of(rec.get("classification")) + "|" + cause + "|ctx:" + ctx
    if t == "usermark":
        return "usermark|" + phase + "|" + guess_of(first_worst(rec).get("classification")) + "|ctx:" + ctx
    if t == "jitter":
        jump = rec.get("jump")
        xyz = [0.0, 0.0, 0.0]
        if isinstance(jump, list):
            for i in range(min(3, len(jump))):
                xyz[i] = num(jump[i]) or 0.0
        x, y, z = (abs(c) for c in xyz)
        axis = "vertical" if y > max(x, z) else "horizontal"
        return ("jitter|" + field(rec, "track") + "|" + field(rec, "kind") + "|" + phase + "|" +
                guess_of(rec.get("classification")) + "|" + axis + "|ctx:" + ctx)
    return None


def scalar_text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return ""


def footprint_of(rec):
    """(id, key, malformed) by the reading rule of DESIGN §6, or (None, None, m):
    a stamp of the current version keeps its id; older ones are re-derived."""
    fp = rec.get("footprint")
    malformed = False
    if isinstance(fp, dict) and type(fp.get("v")) in (int, float) and fp.get("v") == VERSION:
        fid = fp.get("id")
        if isinstance(fid, str) and HEX8.match(fid):
            key = fp.get("key")
            if not isinstance(key, str):
                key = derive_key(rec) or ""
            return fid.lower(), key, False
        malformed = True
    key = derive_key(rec)
    if key is None:
        # a type with no derivation: the writer's id is all there is,
        # whatever its version
        fid = fp.get("id") if isinstance(fp, dict) else None
        if isinstance(fid, str) and HEX8.match(fid):
            k = fp.get("key")
            return fid.lower(), k if isinstance(k, str) else scalar_text(k), malformed
        return None, None, malformed
    return fnv1a32("v%d:" % VERSION + key), key, malformed


# --- times -------------------------------------------------------------------

def parse_iso(s):
    """Milliseconds since the epoch, or None."""
    if not isinstance(s, str):
        return None
    m = ISO.match(s)
    if not m:
        return None
    y, mo, d, hh, mi = (int(m.group(i)) for i in range(1, 6))
    ss = int(m.group(6) or 0)
    frac = (m.group(7) or "") + "000"
    try:
        t = datetime.datetime(y, mo, d, hh, mi, ss, tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    ms = int(t.timestamp()) * 1000 + int(frac[:3])
    tz = m.group(8)
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        ms -= sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60000
    return ms


def iso(ms):
    if ms is None:
        return None
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)


# --- reading -----------------------------------------------------------------

BLANK = object()


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


def read_records(path):
    """Yield (offset, line_bytes, record) for every complete line: record is
    the object, None for a skipped line, BLANK for a blank one (not a record,
    not an error, but a line).  A partial last line yields nothing."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return
    off = 0
    while True:
        nl = data.find(b"\n", off)
        if nl < 0:
            return
        raw = data[off:nl]
        body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
        rec = None
        if body.strip(b" \t\r") == b"":
            yield off, raw, BLANK
            off = nl + 1
            continue
        try:
            if b"\0" in body:
                raise ValueError("NUL byte")
            rec = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
        except ValueError:
            rec = None
        if not isinstance(rec, dict) or not isinstance(rec.get("type"), str):
            rec = None
        yield off, raw, rec
        off = nl + 1


def classification_of(rec):
    if rec.get("type") == "usermark":
        return top_class(first_worst(rec).get("classification"))
    return top_class(rec.get("classification"))


def verdict_of(rec):
    top = classification_of(rec)
    if top is None:
        return None
    return {k: (top.get(k) if isinstance(top.get(k), str) else None)
            for k in ("guess", "confidence", "evidence")}


def value_of(rec):
    t = rec.get("type")
    if t == "hitch":
        return num(rec.get("frameMs")), "ms"
    if t == "usermark":
        return num(first_worst(rec).get("frameMs")), "ms"
    if t == "jitter":
        return num(rec.get("units")), "units"
    return None, None


def situation_of(ctx):
    out = {}
    if not isinstance(ctx, str) or ctx == "":
        return out
    for facet in ctx.split(","):
        k, _, v = facet.partition("=")
        out[k] = v
    return out


def fold(ledger_dir, now_ms=None, include_automated=False):
    perf = ledger_dir + "/.sloptimize/perf.jsonl"
    fixes_path = ledger_dir + "/.sloptimize/fixes.jsonl"
    counts = dict(lines=0, folded=0, incidents=0, fixes=0, skipped=0,
                  malformedFootprints=0, rows=0, builds=0)
    rows, order = {}, []
    build_first_at, builds = {}, []      # global build order, first record's at
    heartbeats = {}                      # build -> heartbeats: its evidence
    for offset, raw, rec in read_records(perf):
        counts["lines"] += 1
        if rec is BLANK:
            continue
        if rec is None:
            counts["skipped"] += 1
            continue
        counts["folded"] += 1
        if rec.get("automated") is True and not include_automated:
            continue
        at = parse_iso(rec.get("at"))
        build = rec.get("build") if isinstance(rec.get("build"), str) else None
        if build is not None and build not in build_first_at:
            build_first_at[build] = at
            builds.append(build)
        if build is not None and rec.get("type") == "heartbeat":
            heartbeats[build] = heartbeats.get(build, 0) + 1
        if rec.get("type") not in ("hitch", "usermark", "jitter") and "footprint" not in rec:
            continue
        fid, key, malformed = footprint_of(rec)
        if malformed:
            counts["malformedFootprints"] += 1
        if fid is None:
            continue
        counts["incidents"] += 1
        row = rows.get(fid)
        if row is None:
            row = rows[fid] = dict(id=fid, key=key, count=0, first=None, last=None,
                                   builds=[], worst=None, occ=[])
            order.append(fid)
        row["count"] += 1
        row["type"] = rec["type"]
        row["phase"] = rec.get("phase") if isinstance(rec.get("phase"), str) else None
        row["verdict"] = verdict_of(rec)
        row["situation"] = situation_of(rec.get("ctx"))
        if at is not None:
            row["first"] = at if row["first"] is None else min(row["first"], at)
            row["last"] = at if row["last"] is None else max(row["last"], at)
        if build is not None and build not in row["builds"]:
            row["builds"].append(build)
        v, unit = value_of(rec)
        if v is not None and (row["worst"] is None or v > row["worst"]["value"]):
            row["worst"] = dict(value=v, unit=unit, at=at)
        row["occ"].append((at, build, offset))
    counts["builds"] = len(builds)
    counts["rows"] = len(rows)

    # fixes.jsonl: applied fixes, proposals, merges, rejections
    fixes = []
    by_id = {}
    for offset, raw, rec in read_records(fixes_path):
        counts["lines"] += 1
        if rec is BLANK:
            continue
        if rec is None:
            counts["skipped"] += 1
            continue
        counts["fixes"] += 1
        if rec.get("type") != "fix":
            continue
        status = rec.get("status") if isinstance(rec.get("status"), str) else "applied"
        if status in ("merged", "rejected"):
            p = by_id.get(rec.get("ref"))
            if p is not None and p["status"] == "proposed":
                p["status"] = status
            continue
        fix = dict(rec)
        if not (isinstance(fix.get("id"), str) and HEX8.match(fix["id"])):
            fix["id"] = fnv1a32(raw)
        fix["status"] = status
        fixes.append(fix)
        by_id[fix["id"]] = fix
    for fix in fixes:
        fat = parse_iso(fix.get("at"))
        after = fix.get("after")
        fb = None
        if isinstance(after, dict) and isinstance(after.get("build"), str):
            fb = after["build"]
        elif fat is not None:
            for b in builds:
                if build_first_at[b] is not None and build_first_at[b] > fat:
                    fb = b
                    break
        fix["fixBuild"] = fb
        fix["_at"] = fat
        # without an after window the fix waits for a build from its fix
        # build on to have run (heartbeats); a written window is taken as is
        fix["_pending"] = not isinstance(after, dict) and not (
            fb in builds and any(heartbeats.get(b) for b in builds[builds.index(fb):]))

    bindex = {b: i for i, b in enumerate(builds)}
    for fid, row in rows.items():
        named = [f for f in fixes if isinstance(f.get("footprints"), list) and fid in f["footprints"]]
        row["fixes"] = [f for f in named if f["status"] in ("applied", "merged")]
        row["proposals"] = [f for f in named if f["status"] in ("proposed", "rejected")]
        if not row["fixes"]:
            row["status"] = "open"
        else:
            latest = None
            for f in row["fixes"]:
                if latest is None or (f["_at"] or 0) >= (latest["_at"] or 0):
                    latest = f
            regressed = False
            fb = latest["fixBuild"]
            for at, build, _ in row["occ"]:
                if build is None:
                    if at is not None and latest["_at"] is not None and at > latest["_at"]:
                        regressed = True
                elif fb is not None and build in bindex and fb in bindex and bindex[build] >= bindex[fb]:
                    regressed = True
            row["status"] = "regressed" if regressed else "pending" if latest["_pending"] else "fixed"
        row["lastAgoMs"] = None if row["last"] is None or now_ms is None else now_ms - row["last"]
    order.sort(key=lambda i: (-rows[i]["count"], -(rows[i]["last"] if rows[i]["last"] is not None else -2**62)))
    return counts, rows, order


def public_row(row):
    out = {k: row[k] for k in ("id", "key", "type", "phase", "count", "builds", "verdict",
                               "situation", "status", "lastAgoMs")}
    out["first"], out["last"] = iso(row["first"]), iso(row["last"])
    out["worst"] = None if row["worst"] is None else dict(row["worst"], at=iso(row["worst"]["at"]))
    out["fixes"] = [(f["id"], f["status"], f["fixBuild"]) for f in row["fixes"]]
    out["proposals"] = [(f["id"], f["status"], f["fixBuild"]) for f in row["proposals"]]
    return out


# --- compare -----------------------------------------------------------------

def same(a, b):
    """JSON equality where 1 == 1.0 but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def compare(ledger_dir, cli_path, now_ms):
    with open(cli_path) as f:
        cli = json.load(f)
    counts, rows, order = fold(ledger_dir, now_ms)
    diffs = []
    got_rows = {r.get("id"): r for r in cli.get("issues", [])}
    for fid in order:
        if fid not in got_rows:
            diffs.append("%s: missing from the CLI catalogue (indep count %d)" % (fid, rows[fid]["count"]))
    for fid in got_rows:
        if fid not in rows:
            diffs.append("%s: in the CLI catalogue only (count %s)" % (fid, got_rows[fid].get("count")))
    for fid in order:
        if fid not in got_rows:
            continue
        want, got = public_row(rows[fid]), dict(got_rows[fid])
        got["fixes"] = [(f.get("id"), f.get("status"), f.get("fixBuild")) for f in got.get("fixes", [])]
        got["proposals"] = [(f.get("id"), f.get("status"), f.get("fixBuild")) for f in got.get("proposals", [])]
        for k in ("count", "first", "last", "builds", "worst", "key", "type", "phase", "verdict",
                  "situation", "status", "fixes", "proposals", "lastAgoMs"):
            if k == "lastAgoMs" and now_ms is None:
                continue
            if not same(want[k], got.get(k)):
                diffs.append("%s.%s: expected %s, got %s" % (fid, k, json.dumps(want[k]), json.dumps(got.get(k))))
    got_order = [r.get("id") for r in cli.get("issues", [])]
    if not diffs and got_order != order:
        for i, (a, b) in enumerate(zip(order, got_order)):
            if a != b:
                diffs.append("row order: position %d expected %s, got %s" % (i, a, b))
                break
    for k, v in counts.items():
        g = cli.get("counts", {}).get(k)
        if not same(v, g):
            diffs.append("counts.%s: expected %s, got %s" % (k, v, json.dumps(g)))
    return diffs


def json_diff(want, got, path="", out=None):
    """Differences between two JSON values, as readable lines."""
    if out is None:
        out = []
    show = lambda v: json.dumps(v, ensure_ascii=False)[:200]
    if isinstance(want, dict) and isinstance(got, dict):
        for k in want:
            if k not in got:
                out.append("%s.%s: missing (expected %s)" % (path, k, show(want[k])))
            else:
                json_diff(want[k], got[k], "%s.%s" % (path, k), out)
        for k in got:
            if k not in want:
                out.append("%s.%s: unexpected (got %s)" % (path, k, show(got[k])))
    elif isinstance(want, list) and isinstance(got, list):
        for i in range(min(len(want), len(got))):
            json_diff(want[i], got[i], "%s[%d]" % (path, i), out)
        if len(want) != len(got):
            out.append("%s: expected %d items, got %d%s" % (path or "/", len(want), len(got),
                       "; extra: " + show(got[len(want):]) if len(got) > len(want) else
                       "; missing: " + show(want[len(got):])))
    elif not same(want, got):
        out.append("%s: expected %s, got %s" % (path or "/", show(want), show(got)))
    return out


def check_vectors(path):
    with open(path) as f:
        doc = json.load(f)
    bad = 0
    n = 0
    for v in doc.get("design", []):
        n += 1
        if fnv1a32("v%d:" % VERSION + v["key"]) != v["id"]:
            print("design vector %s: key hashes to %s" % (v["id"], fnv1a32("v%d:" % VERSION + v["key"])))
            bad += 1
    for c in doc.get("records", []):
        n += 1
        fid, key, malformed = footprint_of(c["record"])
        want = (c["id"], c["key"], c.get("malformed", False))
        if (fid, key, malformed) != want:
            print("record case %r: derived %r, file says %r" % (c.get("name"), (fid, key, malformed), want))
            bad += 1
    print("%d vectors, %d bad" % (n, bad))
    return bad == 0


# --- regimes, noise, verdicts (docs/json.md) ---------------------------------
#
# Written from the rules, not from ledger/noise.c: the median of each
# resample is found by sorting the resample, and the windows by filtering
# lists.  What must match bit for bit is the order of draws (xorshift32
# from 0x9e3779b9, start = draw % (n - L + 1)) and nearest ranks.

REGIME_NAMES = ("unknown", "hardware", "software")


def hb_regime(rec):
    r = rec.get("regime")
    return r if r in REGIME_NAMES else "unknown"


def hitch_regime(rec):
    r = rec.get("regime")
    if not isinstance(r, str):
        return None
    return r if r in REGIME_NAMES else "unknown"


def nearest_median(vals):
    vals = sorted(vals)
    return vals[(len(vals) + 1) // 2 - 1] if vals else None


def bootstrap_interval(values):
    n = len(values)
    if n > 2048:
        values = [values[(i * n) // 2048] for i in range(2048)]
        n = 2048
    if n < 5:
        return None
    L = 1
    while L ** 3 < n:
        L += 1
    x = 0x9E3779B9
    meds = []
    for _ in range(1000):
        res = []
        while len(res) < n:
            x ^= (x << 13) & 0xFFFFFFFF
            x ^= x >> 17
            x ^= (x << 5) & 0xFFFFFFFF
            start = x % (n - L + 1)
            res.extend(values[start:start + L])
        meds.append(nearest_median(res[:n]))
    meds.sort()
    return {"lo": meds[25 - 1], "hi": meds[975 - 1]}


def build_windows(ledger_dir, include_automated=False):
    """{build: window} over the counted records with an `at`."""
    out = {}
    for _, _, rec in read_records(ledger_dir + "/.sloptimize/perf.jsonl"):
        if not isinstance(rec, dict) or (rec.get("automated") is True and not include_automated):
            continue
        b, at = rec.get("build"), parse_iso(rec.get("at"))
        if not isinstance(b, str) or b == "" or at is None:
            continue
        w = out.setdefault(b, {"hb": [], "hp": []})
        if rec["type"] == "heartbeat":
            fr = rec.get("frame") if isinstance(rec.get("frame"), dict) else {}
            win = rec.get("window") if isinstance(rec.get("window"), dict) else {}
            secs = num(win.get("seconds"))
            w["hb"].append({"regime": hb_regime(rec), "p95": num(fr.get("p95Ms")),
                            "median": num(fr.get("medianMs")),
                            "seconds": secs if secs is not None and 0 <= secs <= 86400 else None})
        elif rec["type"] == "hitch":
            w["hp"].append({"regime": hitch_regime(rec), "ms": num(rec.get("frameMs"))})
    result = {}
    for b, w in out.items():
        counts = {r: sum(1 for h in w["hb"] if h["regime"] == r) for r in REGIME_NAMES}
        regime = ("hardware" if counts["hardware"] else "software" if counts["software"]
                  else "unknown" if counts["unknown"] else None)
        timed = [h for h in w["hb"] if h["regime"] == regime]
        hits = [p for p in w["hp"] if regime is None or p["regime"] in (regime, None)]
        secs = [h["seconds"] for h in timed if h["seconds"] is not None]
        p95s = [h["p95"] for h in timed if h["p95"] is not None]
        worst = [p["ms"] for p in hits if p["ms"] is not None]
        result[b] = {
            "heartbeats": len(w["hb"]), "regime": regime,
            "regimes": {"hardware": counts["hardware"], "software": counts["software"], "unknown": counts["unknown"]},
            "p95Ms": nearest_median(p95s),
            "medianMs": nearest_median([h["median"] for h in timed if h["median"] is not None]),
            "hitches": None if not w["hb"] and not hits else len(hits),
            "worstHitchMs": max(worst) if worst else None,
            # half up, as C's round() and JS's Math.round do for a sum >= 0
            "playSeconds": None if not secs else math.floor(sum(secs) * 100 + 0.5) / 100,
            "p95Interval": bootstrap_interval(p95s),
        }
    return result


def check_windows(ledger_dir, cli_path):
    with open(cli_path) as f:
        cli = json.load(f)
    want = build_windows(ledger_dir)
    diffs = []
    for w in cli.get("builds", []):
        b = w.get("build")
        if b not in want:
            diffs.append("%s: a window this fold does not have" % b)
            continue
        for k, v in want[b].items():
            if not same(v, w.get(k)):
                diffs.append("%s.%s: expected %s, got %s" % (b, k, json.dumps(v), json.dumps(w.get(k))))
    return diffs


def judge(before, after, pending, h=30, play=60, effect=10):
    """The verdict of docs/json.md "Fix verdicts", as (verdict, reason)."""
    def regime(w):
        r = w.get("regime")
        if r in REGIME_NAMES:
            return r
        if "regime" not in w and isinstance(w.get("heartbeats"), (int, float)) and w["heartbeats"] > 0:
            return "unknown"
        return None

    def interval(w):
        i = w.get("p95Interval")
        if isinstance(i, dict) and all(isinstance(i.get(k), (int, float)) and not isinstance(i.get(k), bool)
                                      for k in ("lo", "hi")):
            return i["lo"], i["hi"]
        return None

    def short(w, name, r):
        regs = w.get("regimes")
        n = regs.get(r) if isinstance(regs, dict) and isinstance(regs.get(r), (int, float)) else w.get("heartbeats", 0)
        ps = w.get("playSeconds") if isinstance(w.get("playSeconds"), (int, float)) else None
        if n >= h and (ps is None or ps >= play):
            return None
        if ps is None:
            return ("the %s window has %d heartbeats (its play time was not recorded); a verdict needs %d: "
                    "it is judged again as the window grows" % (name, n, h))
        return ("the %s window has %d heartbeats and %d s of play; a verdict needs %d and %g s: "
                "it is judged again as the window grows" % (name, n, int(ps // 1), h, play))

    b = before if isinstance(before, dict) else None
    a = after if isinstance(after, dict) else None
    if pending:
        return "pending", "no build after the fix has run yet: its after window is measured once one has"
    if b is None:
        return "not-enough-evidence", "no before window: nothing to compare with"
    if a is None:
        return "not-enough-evidence", "no after window yet"
    rb, ra = regime(b), regime(a)
    if rb is None or ra is None:
        return "not-enough-evidence", "the %s window has no heartbeats" % ("before" if rb is None else "after")
    if "software" in (rb, ra):
        who = "both windows ran" if rb == ra else "the before window ran" if rb == "software" else "the after window ran"
        return "software", who + " on a software renderer: its timings are not evidence of a fix (its counters are)"
    if rb != ra:
        return "incomparable", ("the before window ran on %s, the after window on %s: timings are compared "
                                "like with like only" % (rb, ra))
    why = short(a, "after", ra) or short(b, "before", rb)
    if why:
        return "not-enough-evidence", why
    was, now = b.get("p95Ms"), a.get("p95Ms")
    if not isinstance(was, (int, float)) or not isinstance(now, (int, float)):
        return "not-enough-evidence", "the %s window has no p95" % ("before" if not isinstance(was, (int, float)) else "after")
    wi, ni = interval(b), interval(a)
    if wi is None or ni is None:
        return "not-enough-evidence", ("the %s window carries no noise interval (written by an older sloptimize)"
                                       % ("before" if wi is None else "after"))
    need = effect / 100 * abs(was)
    if ni[1] < wi[0] and was - now >= need:
        return "improved", ("the after interval lies wholly below the before interval, and the change is at "
                            "least %g %% of before" % effect)
    if ni[0] > wi[1] and now - was >= need:
        return "regressed", ("the after interval lies wholly above the before interval, and the change is at "
                             "least %g %% of before" % effect)
    if ni[1] >= wi[0] and ni[0] <= wi[1]:
        return "no-detectable-change", "the intervals overlap: the difference is inside the noise"
    return "no-detectable-change", "the change is under %g %% of before" % effect


def check_judgements(cli_path):
    with open(cli_path) as f:
        cli = json.load(f)
    diffs = []
    for row in cli.get("issues", []):
        for fx in row.get("fixes", []) + row.get("proposals", []):
            j = fx.get("judgement") or {}
            v, why = judge(fx.get("before"), fx.get("after"), fx.get("pending") is True)
            if (j.get("verdict"), j.get("reason")) != (v, why):
                diffs.append("%s/%s: expected %s (%s), got %s (%s)" % (row.get("id"), fx.get("id"), v, why,
                                                                      j.get("verdict"), j.get("reason")))
    return diffs


def main(argv):
    opts, args, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("--now", "--ignore") and i + 1 < len(argv):
            opts[a] = argv[i + 1]
            i += 2
        elif a.startswith("--"):
            opts[a] = True
            i += 1
        else:
            args.append(a)
            i += 1
    now_ms = parse_iso(opts["--now"]) if "--now" in opts else None
    cmd = args[0] if args else ""
    if cmd == "fold" and len(args) == 2:
        counts, rows, order = fold(args[1], now_ms, "--include-automated" in opts)
        json.dump({"counts": counts, "order": order,
                   "rows": {i: public_row(rows[i]) for i in order}}, sys.stdout, indent=1)
        print()
        return 0
    if cmd == "compare" and len(args) == 3:
        diffs = compare(args[1], args[2], now_ms)
        for d in diffs[:60]:
            print(d)
        if len(diffs) > 60:
            print("... and %d more" % (len(diffs) - 60))
        return 1 if diffs else 0
    if cmd == "jsondiff" and len(args) == 3:
        ignore = opts.get("--ignore", "").split(",")
        docs = []
        for p in args[1:3]:
            try:
                with open(p, encoding="utf-8") as f:
                    docs.append(json.load(f))
            except ValueError as e:
                print("%s: not JSON: %s" % (p, e))
                return 1
        for d in docs:
            if isinstance(d, dict):
                for k in ignore:
                    d.pop(k, None)
        diffs = json_diff(docs[0], docs[1])
        for d in diffs[:40]:
            print(d)
        if len(diffs) > 40:
            print("... and %d more" % (len(diffs) - 40))
        return 1 if diffs else 0
    if cmd == "objects" and len(args) == 2:
        for _, raw, rec in read_records(args[1]):
            if isinstance(rec, dict):
                print(json.dumps(rec, ensure_ascii=False))
        return 0
    if cmd == "windows" and len(args) == 3:
        diffs = check_windows(args[1], args[2])
        for d in diffs[:60]:
            print(d)
        return 1 if diffs else 0
    if cmd == "judge" and len(args) == 2:
        diffs = check_judgements(args[1])
        for d in diffs[:60]:
            print(d)
        return 1 if diffs else 0
    if cmd == "vectors" and len(args) == 2:
        return 0 if check_vectors(args[1]) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
