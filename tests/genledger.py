#!/usr/bin/env python3
"""genledger — a deterministic, realistic ledger for sloptimize's tests and benchmarks.

Writes DIR/.sloptimize/perf.jsonl and DIR/.sloptimize/fixes.jsonl. The same
arguments always give byte-identical files (one seeded PRNG, no clock).

  genledger.py DIR [--records N | --mb MB] [--causes K] [--builds B]
               [--fixes F] [--seed S] [--start ISO] [--zipf S]
               [--heartbeats FRACTION] [--json]

What a ledger holds, and why:
- heartbeats (about 80 % of lines), whose numbers drift down build by
  build, so timelines and fix windows have a trend to show;
- incidents drawn from K causes with Zipf weights (a heavy head and a long
  tail, like a real game; --zipf 0 draws them evenly, for a catalogue
  with a great many rows, and --heartbeats sets the heartbeats' share,
  0.8 by default): hitches of every classification, usermarks
  (with notes and five ranked worst frames) and jitter (snap and
  oscillation, horizontal and vertical) — a cause fixes every field its
  footprint hashes, so a cause is exactly one catalogue row;
- footprints by the reading rule of DESIGN §6 (footprint v2,
  docs/footprint-v2.md): most stamped v2 by the writer, some stamped v1
  or v0 (older writers), some unstamped; all but the v2 stamps must be
  re-derived by a reader.  Names carry no digits (v2 keys collapse digit
  runs: an instance number is not identity), and a long-script cause
  names its script, so a cause is still one catalogue row — except a
  wait outside the page (gc-or-upload-by-elimination), which v2 keys by
  its verdict, phase and situation alone;
- robots' records (automated: true), left out of the catalogue by default;
- a few lines of a type no fold knows, which readers pass through;
- B builds in order, and F fix records naming causes that occurred:
  applied fixes (some with an `after` window naming a build), proposals,
  and merged / rejected records for some proposals.

With --json the summary printed at the end is one JSON object (paths,
records, bytes, causes, builds, fixes, and the footprint ids of the fixed
causes), for tests to read; otherwise it is one line of text.

  genledger.py DIR --session SECONDS [--seed S] [--start ISO] [--json]

writes instead one play session of that length, timed like a real one,
for `sloptimize replay` (tests/daemon/session.test.mjs): heartbeats every 2 s;
about a dozen causes, most of them appearing in the first minutes; a
background hitch every half minute or so (two in three over the 100 ms
wake threshold); a storm every six minutes or so (10 to 40 hitches of two
to four causes within a few seconds, one cause dominating, sometimes a
jitter in it); a usermark every five minutes or so, with the player's
note, some of them in the middle of a storm; a reload onto a new build
every 12 minutes.  The summary then also lists the usermarks' offsets.
"""
import argparse
import datetime
import itertools
import json
import os
import random

PHASES = ("boot", "menu", "launch", "match", "play")
FACETS = (("stance", ("foot", "helm", "crew", "dead")),
          ("hull", ("elong-x", "brick", "needle")),
          ("squad", ("solo", "duo", "trio")),
          ("view", ("fp", "tps")),
          ("zone", ("dock", "reef", "open sea")))
MATERIALS = ("hull", "rock", "glass", "water", "smoke", "enemy", "ui", "sky")
# classification guesses of seed §3.3, with how evidence is worded and
# how sure each one usually is
HITCH_KINDS = (
    ("shader-compile", "programs +{n} in the hitch frame", "medium"),
    ("texture-upload", "textures +{n}, programs 0", "medium"),
    ("spawn-burst", "{n} objects spawned in the hitch frame", "high"),
    ("long-render", "insideRenderMs {n}.5 of the frame", "medium"),
    ("long-script", "delta dominated by script, insideRenderMs small", "medium"),
    ("gc-or-upload-by-elimination", "no counter moved", "low"),
)
JITTER_GUESSES = ("snap", "long-frame-catch-up", "follows-track", "reach-change")
NOTES = ("", "", "stutter when turning", "feels heavy here", "camera hitched",
         "\u00e7a saccade ici")


def fnv1a32(text):
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return format(h, "08x")


def scrub(value):
    """DESIGN §6: | , = and line breaks/tabs become _ in every field."""
    return str(value).translate({ord(c): "_" for c in "|,=\n\r\t"})


def context_string(facets):
    return ",".join(scrub(k) + "=" + scrub(v) for k, v in sorted(facets.items()))


def letters(i):
    """0 -> 'a', 25 -> 'z', 26 -> 'ba': a name with no digit in it."""
    out = ""
    while True:
        out = "abcdefghijklmnopqrstuvwxyz"[i % 26] + out
        i //= 26
        if i == 0:
            return out


def _cut(b, limit):
    while len(b) > limit:
        b = b[:limit]
        while b and (b[-1] & 0xC0) == 0x80 and not _whole(b):
            b = b[:-1]
    return b


def _whole(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _site(m):
    """docs/footprint-v2.md: digit runs (and a '#' before one) -> '#';
    separators and '+' -> '_'; at most 48 bytes."""
    import re
    t = re.sub(r"#?[0-9]+", "#", m)
    t = t.translate({ord(c): "_" for c in "|,=\n\r\t+"})
    return _cut(t.encode("utf-8"), 48).decode("utf-8")


def _sites(rec):
    src = rec.get("sites") or rec.get("minted") or []
    uniq = sorted({_site(m) for m in src[:128]}, key=lambda s: s.encode("utf-8"))
    if not uniq:
        return "-"
    out, size = [uniq[0]], len(uniq[0].encode("utf-8"))
    for u in uniq[1:]:
        b = len(u.encode("utf-8"))
        if size + 1 + b > 120:
            out.append("more")
            break
        out.append(u)
        size += 1 + b
    return "+".join(out)


def _script(rec):
    s = rec.get("script")
    if not isinstance(s, dict) or not (s.get("name") or s.get("sourceURL")):
        return "no-script"
    url = s.get("sourceURL", "").split("?")[0].split("#")[0]
    if "://" in url:
        url = url[url.index("://") + 3:]
        url = url[url.index("/"):] if "/" in url else ""
    return scrub(s.get("name") or "(anonymous)").replace("+", "_") + "@" + (url or "-")


def footprint_key(rec):
    """The v2 key of an incident, written from DESIGN §6 and docs/footprint-v2.md
    (the subset this generator writes: short names, short paths)."""
    kind = rec["type"]
    phase = scrub(rec.get("phase") or "-")
    ctx = rec.get("ctx", "")

    def verdict(cls):
        if isinstance(cls, list):
            cls = cls[0] if cls else None
        return scrub(cls["guess"]) if isinstance(cls, dict) and "guess" in cls else "-"

    if kind == "hitch":
        guess = verdict(rec.get("classification"))
        if guess == "long-script":
            cause = _script(rec)
        elif guess in ("gc-or-upload-by-elimination", "resize"):
            cause = "-"
        else:
            cause = _sites(rec)
        return "|".join(("hitch", phase, guess, cause)) + "|ctx:" + ctx
    if kind == "usermark":
        worst = rec.get("worst") or [{}]
        return "|".join(("usermark", phase, verdict(worst[0].get("classification")))) + "|ctx:" + ctx
    x, y, z = rec["jump"]
    axis = "vertical" if abs(y) > max(abs(x), abs(z)) else "horizontal"
    return "|".join(("jitter", scrub(rec["track"]), scrub(rec["kind"]), phase,
                     verdict(rec.get("classification")), axis)) + "|ctx:" + ctx


def stamp(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Cause:
    """Everything a footprint hashes, fixed once; the rest varies per occurrence."""

    def __init__(self, rng, objects):
        self.type = rng.choices(("hitch", "usermark", "jitter"), (70, 10, 20))[0]
        self.phase = rng.choice(PHASES) if rng.random() < 0.95 else None
        picked = rng.sample(FACETS, rng.randint(0, 3))
        self.ctx = context_string({k: rng.choice(v) for k, v in picked})
        self.kind = rng.randrange(len(HITCH_KINDS))
        self.minted = ["mat_%s@%s" % (rng.choice(MATERIALS), rng.choice(objects))
                       for _ in range(rng.choice((0, 0, 1, 2, 3)))]
        # a long-script cause's script: named after its first pair (none:
        # the browser named no script)
        first = self.minted[0].split("@") if self.minted else None
        self.script = ({"name": "tick_%s_%s" % (first[0][4:], first[1]),
                        "sourceURL": "http://127.0.0.1:5173/src/%s.js?t=1" % first[1].split("_")[0],
                        "invoker": "FrameRequestCallback"} if first else None)
        self.track = rng.choice(("unit", "camera", "cargo"))
        self.motion = rng.choice(("snap", "oscillation"))
        self.vertical = rng.random() < 0.3
        self.jitter_guess = rng.choice(JITTER_GUESSES)
        self.scale = rng.uniform(0.7, 2.2)  # how bad this cause is


def classification(rng, kind, alternatives=True):
    guess, evidence, confidence = HITCH_KINDS[kind]
    ranked = [{"guess": guess, "confidence": confidence,
               "evidence": evidence.format(n=rng.randint(1, 9))}]
    if alternatives and rng.random() < 0.4:
        other = HITCH_KINDS[(kind + 1 + rng.randrange(len(HITCH_KINDS) - 1)) % len(HITCH_KINDS)]
        ranked.append({"guess": other[0], "confidence": "low",
                       "evidence": other[1].format(n=rng.randint(1, 9))})
    # older writers put one object, newer ones a ranked array
    return ranked if len(ranked) > 1 or rng.random() < 0.5 else ranked[0]


def occurrence(rng, cause, common, frame, objects):
    rec = dict(common)
    rec["type"] = cause.type
    if cause.phase is not None:
        rec["phase"] = cause.phase
    rec["ctx"] = cause.ctx
    rec["frame"] = frame
    if cause.type == "hitch":
        median = round(rng.uniform(7.0, 10.0), 1)
        rec.update(
            frameMs=round(min(rng.lognormvariate(3.7, 0.55) * cause.scale, 2500.0), 1),
            medianMs=median,
            insideRenderMs=round(rng.uniform(0.8, 35.0), 1),
            delta={"calls": rng.randint(-5, 40), "triangles": rng.randint(0, 120000),
                   "programs": rng.randint(0, 4), "textures": rng.randint(0, 3),
                   "geometries": rng.randint(0, 6)},
            world={"spawned": rng.sample(objects, rng.randint(0, 3)), "removed": [],
                   "camera": {"position": [round(rng.uniform(-80, 80), 2) for _ in range(3)]},
                   "inputsHeld": rng.sample(("KeyW", "KeyA", "KeyS", "KeyD", "Space"),
                                            rng.randint(0, 2))},
            minted=list(cause.minted),
            classification=classification(rng, cause.kind))
        if cause.script is not None and HITCH_KINDS[cause.kind][0] == "long-script":
            rec["script"] = dict(cause.script, durationMs=round(rec["frameMs"] * 0.9, 1))
        if rng.random() < 0.25:
            rec["snapshotRef"] = "snap-%d" % frame
    elif cause.type == "usermark":
        worst = []
        for _ in range(5):
            worst.append({"frame": frame - rng.randint(1, 299),
                          "frameMs": round(rng.uniform(18.0, 95.0) * cause.scale, 1),
                          "delta": {"calls": rng.randint(0, 20), "programs": rng.randint(0, 2)},
                          "classification": classification(rng, cause.kind, False)})
        worst.sort(key=lambda w: -w["frameMs"])
        rec.update(windowMs=5000, frames=300, medianMs=round(rng.uniform(8, 12), 1),
                   p95Ms=round(rng.uniform(14, 32), 1), note=rng.choice(NOTES), worst=worst)
    else:
        jump = [round(rng.uniform(-0.9, 0.9), 3) for _ in range(3)]
        flat = max(abs(jump[0]), abs(jump[2]))
        jump[1] = round(flat + rng.uniform(0.05, 0.6), 3) if cause.vertical else round(flat * 0.4, 3)
        rec.update(track=cause.track, kind=cause.motion, jump=jump,
                   units=round(sum(v * v for v in jump) ** 0.5, 3),
                   travelUnits=round(rng.uniform(0.05, 0.4), 3), speed=round(rng.uniform(0.5, 14), 1),
                   dtMs=16.7, medianDtMs=16.7,
                   classification=[{"guess": cause.jitter_guess, "confidence": "high",
                                    "evidence": "residual reversed on the next frame"}])
    return rec


def heartbeat(rng, common, build_index):
    median = round(max(4.0, rng.uniform(7.0, 10.5) - 0.15 * build_index), 2)
    rec = dict(common)
    rec.update(type="heartbeat", phase="play",
               frame={"medianMs": median, "p95Ms": round(max(median, rng.uniform(12, 24) - 0.35 * build_index), 2),
                      "insideRenderMs": round(median * rng.uniform(0.35, 0.6), 2), "fps": round(1000 / median)},
               render={"calls": max(50, rng.randint(300, 950) - 25 * build_index),
                       "triangles": rng.randint(700000, 1400000), "points": 0, "lines": rng.randint(0, 40)},
               memory={"geometries": rng.randint(180, 330), "textures": rng.randint(25, 55),
                       "programs": rng.randint(10, 22)},
               window={"frames": 120, "seconds": 2.0})
    return rec


SESSION_NOTES = ("it stutters when I turn", "camera hitched right there", "feels heavy here",
                 "jerky when the fleet spawns", "\u00e7a saccade ici", "that hitch again")


def session(a):
    """One timed play session (see the module's docstring)."""
    rng = random.Random(a.seed)
    objects = ["ship_%s" % letters(i) for i in range(10)] + ["raider_%s" % letters(i) for i in range(24)]
    causes = []
    while len(causes) < 12:
        c = Cause(rng, objects)
        c.phase = "play"
        if c.type == "usermark":
            continue                # usermarks come from the player, below
        causes.append(c)
    weights = [1.0 / (i + 1) ** 0.8 for i in range(len(causes))]
    marks = [Cause(rng, objects) for _ in range(3)]
    for m in marks:
        m.type, m.phase = "usermark", "play"
    t0 = datetime.datetime.fromisoformat(a.start.replace("Z", "+00:00")).timestamp()
    events = []                     # (t, kind, cause index or None)
    for k in range(int(a.session // 2)):
        events.append((t0 + 2.0 * k, "heartbeat", None))
    t = t0 + rng.uniform(5, 20)
    while t < t0 + a.session:       # background hitches
        events.append((t, "cause", rng.choices(range(len(causes)), weights)[0]))
        t += rng.expovariate(1 / 30.0)
    t = t0 + rng.uniform(30, 120)
    storms = []
    while t < t0 + a.session - 10:  # storms
        n = rng.randint(10, 40)
        picked = rng.sample(range(len(causes)), rng.randint(2, 4))
        span = rng.uniform(2, 6)
        for i in range(n):
            ci = picked[0] if rng.random() < 0.6 else rng.choice(picked)
            events.append((t + span * i / n, "cause", ci))
        storms.append((t, span))
        t += rng.expovariate(1 / 360.0) + span + 20
    t = t0 + rng.uniform(60, 200)
    while t < t0 + a.session - 5:   # usermarks, some inside a storm
        if storms and rng.random() < 0.3:
            st, span = rng.choice(storms)
            events.append((st + rng.uniform(0.2, span), "usermark", None))
        events.append((t, "usermark", None))
        t += rng.uniform(200, 400)
    events.sort(key=lambda e: e[0])

    out = os.path.join(a.dir, ".sloptimize")
    os.makedirs(out, exist_ok=True)
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    frame = 1000
    written = 0
    usermarks = []
    with open(os.path.join(out, "perf.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for t, kind, ci in events:
            bi = int((t - t0) // 720)
            frame += rng.randint(1, 120)
            common = {"at": stamp(t), "build": "v%d" % (bi + 1)}
            if kind == "heartbeat":
                rec = heartbeat(rng, common, bi)
            elif kind == "usermark":
                rec = occurrence(rng, rng.choice(marks), common, frame, objects)
                rec["note"] = rng.choice(SESSION_NOTES)
                usermarks.append(written)
            else:
                rec = occurrence(rng, causes[ci], common, frame, objects)
                if rec["type"] == "hitch" and rng.random() < 0.67:
                    rec["frameMs"] = max(rec["frameMs"], round(rng.uniform(100, 260), 1))
            if kind != "heartbeat":
                key = footprint_key(rec)
                rec["footprint"] = {"v": 2, "id": fnv1a32("v2:" + key), "key": key}
            line = encode(rec) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
    summary = {"dir": out, "records": len(events), "bytes": written, "causes": len(causes),
               "seconds": a.session, "storms": len(storms), "usermarks": usermarks}
    if a.json:
        print(json.dumps(summary))
    else:
        print("wrote a %d s session: %d records, %d storms, %d usermarks -> %s"
              % (a.session, len(events), len(storms), len(usermarks), out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--records", type=int, default=20000, help="lines of perf.jsonl (default 20000)")
    size.add_argument("--mb", type=float, help="stop once perf.jsonl reaches this many MB (10^6 bytes)")
    ap.add_argument("--causes", type=int, default=400, help="distinct causes (default 400)")
    ap.add_argument("--builds", type=int, default=12, help="builds, in order (default 12)")
    ap.add_argument("--fixes", type=int, default=6, help="fix records to write (default 6)")
    ap.add_argument("--seed", type=int, default=7567)
    ap.add_argument("--start", default="2026-09-01T09:00:00Z", help="`at` of the first record")
    ap.add_argument("--zipf", type=float, default=1.1,
                    help="exponent of the causes' Zipf weights (default 1.1; 0: all causes alike)")
    ap.add_argument("--heartbeats", type=float, default=0.80,
                    help="share of lines that are heartbeats (default 0.8)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--session", type=float, help="write one timed play session of this many seconds instead")
    a = ap.parse_args()
    if a.session is not None:
        if a.session < 10:
            ap.error("--session takes at least 10 seconds")
        return session(a)
    if a.causes < 1 or a.builds < 1 or a.fixes < 0:
        ap.error("--causes and --builds must be at least 1, --fixes at least 0")
    if not 0 <= a.heartbeats <= 0.998 or a.zipf < 0:
        ap.error("--heartbeats is a share from 0 to 0.998, --zipf at least 0")

    rng = random.Random(a.seed)
    objects = ["ship_%s" % letters(i) for i in range(10)] + ["raider_%s" % letters(i) for i in range(24)] + \
              ["auto:%s" % letters(i + 26 ** 3) for i in range(16)]
    causes = [Cause(rng, objects) for _ in range(a.causes)]
    # cumulative once: random.choices would sum every weight per draw,
    # and gives the same draws from the same sums
    cum = list(itertools.accumulate(1.0 / (i + 1) ** a.zipf for i in range(a.causes)))
    population = range(a.causes)
    limit = int(a.mb * 1e6) if a.mb is not None else None
    per_build = max(1, a.records // a.builds)
    builds = ["1.%d.%d" % (4 + i // 10, i % 10) for i in range(a.builds)]

    out = os.path.join(a.dir, ".sloptimize")
    os.makedirs(out, exist_ok=True)
    t = datetime.datetime.fromisoformat(a.start.replace("Z", "+00:00")).timestamp()
    build_start = [t]
    frame = 0
    written = lines = 0
    seen = {}  # footprint id -> (cause index, build index of first occurrence)
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    with open(os.path.join(out, "perf.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        while (written < limit) if limit is not None else (lines < a.records):
            if limit is not None:
                bi = min(written * a.builds // limit, a.builds - 1)
            else:
                bi = min(lines // per_build, a.builds - 1)
            if bi == len(build_start):
                t += rng.uniform(60, 900)  # a rebuild and a reload
                build_start.append(t)
            t += rng.uniform(0.25, 2.25)
            frame += rng.randint(15, 135)
            common = {"at": stamp(t), "build": builds[bi]}
            roll = rng.random()
            if roll < a.heartbeats:
                rec = heartbeat(rng, common, bi)
            elif roll < a.heartbeats + 0.002:
                rec = dict(common, type="marker", label="level loaded", frame=frame)
            else:
                ci = rng.choices(population, cum_weights=cum)[0]
                rec = occurrence(rng, causes[ci], common, frame, objects)
                key = footprint_key(rec)
                fid = fnv1a32("v2:" + key)
                how = rng.random()
                if how < 0.08:
                    pass  # an older writer: no footprint, the reader derives it
                elif how < 0.10:
                    rec["footprint"] = {"v": 0, "id": fnv1a32("v0:" + rec["type"]), "key": rec["type"]}
                elif how < 0.20:
                    # a v1 writer: its stamp is re-derived with v2
                    rec["footprint"] = {"v": 1, "id": fnv1a32("v1:" + rec["type"] + "|old"), "key": rec["type"] + "|old"}
                else:
                    rec["footprint"] = {"v": 2, "id": fid, "key": key}
                if rng.random() < 0.03:
                    rec["automated"] = True
                else:
                    seen.setdefault(fid, (ci, bi))
            line = encode(rec) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            lines += 1

    # Fixes name causes that occurred, in the order they were first seen,
    # each written during a build after the cause's first one; the file
    # is in time order, as its writers append it.
    fixed, records = [], []
    nbuilds = len(build_start)
    for i, (fid, (ci, first_bi)) in enumerate(list(seen.items())[:a.fixes]):
        bi = min(nbuilds - 1, first_bi + 1 + i % 3)
        at = build_start[bi] + rng.uniform(1, 30)
        fix_id = fnv1a32("fix:%d:%s" % (a.seed, fid))
        rec = {"type": "fix", "id": fix_id, "at": stamp(at), "title": "fix %d for %s" % (i, fid),
               "issue": "stutter in %s" % (causes[ci].phase or "every phase"),
               "solution": ("warmed the shaders at load", "instanced the meshes",
                            "pooled the spawns", "split the upload")[i % 4],
               "commit": format(rng.getrandbits(28), "07x"), "files": ["src/world.js"],
               "footprints": [fid]}
        if i % 5 in (2, 4):
            rec["status"] = "proposed"
            verdict = "merged" if i % 5 == 2 else "rejected"
            records.append((at + 120, {"type": "fix", "id": fnv1a32("%s:%s" % (verdict, fix_id)),
                                       "at": stamp(at + 120), "status": verdict, "ref": fix_id}))
        elif i % 2 == 1 and bi + 1 < nbuilds:
            rec["after"] = {"build": builds[bi + 1]}
        records.append((at, rec))
        fixed.append(fid)
    records.sort(key=lambda r: r[0])
    with open(os.path.join(out, "fixes.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for _, rec in records:
            f.write(encode(rec) + "\n")

    summary = {"dir": out, "records": lines, "bytes": written, "causes": a.causes,
               "builds": nbuilds, "fixes": len(fixed), "fixed": fixed}
    if a.json:
        print(json.dumps(summary))
    else:
        print("wrote %d records, %d bytes, %d causes, %d builds, %d fixes -> %s"
              % (lines, written, a.causes, nbuilds, len(fixed), out))


if __name__ == "__main__":
    main()
