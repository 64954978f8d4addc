#!/usr/bin/env python3
"""make bench: every benchmark in one go, then one table —
measure | anchor | ours | ratio | target | met — from the BENCH lines
they print (benchlib.py says the format).  Figures, never pass/fail: the
exit status says only whether every benchmark ran and reported.

  python3 tests/bench/table.py BUILD_DIR [--only NAME,…] [--markdown FILE]
                               [--logs DIR] [-v]
  python3 tests/bench/table.py --parse LOG…      (a table from saved logs)

Each benchmark runs alone, one after the other (they would disturb each
other's figures), its whole output kept in BUILD_DIR/bench/logs/NAME.log
(-v also streams it).  BENCH_QUICK=1 in the environment is passed on:
small ledgers and short runs, to check that the machinery works.
"""
import argparse
import os
import re
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEYS = ("measure", "anchor", "ours", "unit", "target", "met", "vs")
FIELD = re.compile(r"(%s)=(.*?)(?= (?:%s)=|$)" % ("|".join(KEYS), "|".join(KEYS)))


def benches(build):
    """name -> (argv, cwd).  Each is also its own make target."""
    build = b = os.path.abspath(build)
    t = os.path.join(TOP, "tests")
    return {
        "fold": (["sh", os.path.join(t, "bench", "fold.sh"), build], TOP),
        "restart": ([sys.executable, os.path.join(t, "bench", "restart.py"), build], TOP),
        # the idle count is idle.py's
        "wake": ([sys.executable, os.path.join(t, "bench", "wake.py"), build, "--idle", "0"], TOP),
        "idle": ([sys.executable, os.path.join(t, "bench", "idle.py"), build], TOP),
        "http": (["sh", os.path.join(t, "bench", "http.sh"), build], TOP),
        "issues-mem": ([sys.executable, os.path.join(t, "bench", "issues_mem.py"), build], TOP),
        "recorder": (["node", "bench/recorder.mjs"], t),
        "trace": (["node", "bench/trace.mjs"], t),
        "games": (["node", "bench/games.mjs"], t),
        "sink": (["node", "bench/sink.mjs"], t),
        "gate": ([sys.executable, os.path.join(t, "bench", "gate.py"), build], TOP),
        "verify": (["node", "bench/verify.mjs"], t),
        "attribute": (["node", "bench/attribute.mjs"], t),
    }, b


def parse(line):
    """A BENCH line as a dict, or None."""
    if not line.startswith("BENCH "):
        return None
    row = dict(FIELD.findall(line[6:].rstrip("\n")))
    if "measure" not in row or "ours" not in row:
        return None
    return row


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def show(x):
    """A figure as the table prints it: whole above 100, else three
    significant digits (the scripts print more; the noise is larger)."""
    if abs(x) >= 100 or x == int(x):
        return "{:,.0f}".format(x)
    return "%.3g" % x


def cells(row):
    unit = row.get("unit", "")
    anchor = row.get("anchor", "-")
    o, an = num(row.get("ours")), num(anchor)
    a = "-" if an is None else "%s %s" % (show(an), unit)
    if a != "-" and row.get("vs"):
        a += " (%s)" % row["vs"]
    ours = "%s %s" % (show(o), unit) if o is not None else row.get("ours", "?")
    ratio = "-"
    if o is not None and an:
        r = o / an
        ratio = ("%.0f×" if r >= 100 else "%.1f×" if r >= 10 else "%.2f×") % r
    return [row["measure"], a, ours, ratio, row.get("target", "-"), row.get("met", "-")]


HEAD = ["measure", "anchor", "ours", "ratio", "target", "met"]


def text_table(rows):
    table = [HEAD] + [cells(r) for r in rows]
    w = [max(len(r[i]) for r in table) for i in range(len(HEAD))]
    out = []
    for k, r in enumerate(table):
        out.append("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
        if k == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


def md_table(rows):
    out = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    for r in rows:
        c = cells(r)
        c[5] = {"yes": "**yes**", "no": "**no**"}.get(c[5], c[5])
        out.append("| " + " | ".join(x.replace("|", "\\|") for x in c) + " |")
    return "\n".join(out)


def run(name, argv, cwd, env, log, verbose):
    """Run one benchmark; return (exit status, its BENCH rows, seconds)."""
    rows = []
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, bufsize=1)
        for line in p.stdout:
            f.write(line)
            f.flush()
            if verbose:
                sys.stdout.write("  %s| %s" % (name, line))
            r = parse(line)
            if r:
                r["bench"] = name
                rows.append(r)
        rc = p.wait()
    return rc, rows, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--only", default="", help="comma-separated benchmark names")
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    ap.add_argument("--logs", help="where each benchmark's output goes (BUILD/bench/logs)")
    ap.add_argument("--parse", nargs="+", metavar="LOG", help="only build a table from saved logs")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    rows, failed = [], []
    if a.parse:
        for path in a.parse:
            with open(path) as f:
                rows += [r for r in map(parse, f) if r]
    else:
        all_, build_abs = benches(a.build)
        names = [n for n in a.only.split(",") if n] or list(all_)
        unknown = [n for n in names if n not in all_]
        if unknown:
            ap.error("no benchmark %s (there are: %s)" % (", ".join(unknown), ", ".join(all_)))
        logs = a.logs or os.path.join(build_abs, "bench", "logs")
        os.makedirs(logs, exist_ok=True)
        env = dict(os.environ, SLOPTIMIZE_BUILD=build_abs)
        quick = env.get("BENCH_QUICK", "") not in ("", "0")
        print("make bench%s: %s; %d cores, load %s; %s" % (
            " (BENCH_QUICK=1)" if quick else "", ", ".join(names), os.cpu_count(),
            " ".join(open("/proc/loadavg").read().split()[:3]),
            time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())), flush=True)
        for n in names:
            argv, cwd = all_[n]
            log = os.path.join(logs, n + ".log")
            rc, got, secs = run(n, argv, cwd, env, log, a.verbose)
            rows += got
            ok = rc == 0 and got
            print("  %-9s %s, %d rows, %.0f s  (%s)" % (
                n, "done" if ok else "FAILED (exit %d)" % rc if rc else "NO BENCH LINES",
                len(got), secs, os.path.relpath(log, os.getcwd())), flush=True)
            if not ok:
                failed.append(n)
        print("load after: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))

    print()
    print(text_table(rows))
    met = sum(r.get("met") == "yes" for r in rows)
    unmet = sum(r.get("met") == "no" for r in rows)
    print()
    print("%d measures: %d met, %d not met, %d without a target%s" % (
        len(rows), met, unmet, len(rows) - met - unmet,
        "; failed: " + ", ".join(failed) if failed else ""))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md_table(rows) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
