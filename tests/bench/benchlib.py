"""Shared by the Python benchmarks (restart.py, idle.py, wake.py): the
ledger cache, the machine-readable result line, percentiles.

Every benchmark prints, beside its human-readable figures, one line per
measure for tests/bench/table.py:

  BENCH measure=<name> anchor=<number|-> ours=<number> unit=<unit>
        target=<text> met=yes|no|- [vs=<what the anchor is>]

(one line; the values may hold spaces: a value runs to the next ` key=`).
"""
import os
import shutil
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def quick():
    """BENCH_QUICK=1: small sizes and short runs, to check the machinery."""
    return os.environ.get("BENCH_QUICK", "") not in ("", "0")


def ledger(build, mb, causes=5000):
    """A generated ledger of about mb MB, made once under BUILD/bench/
    (into a temporary name first: an interrupted run leaves no half
    ledger that a rerun would take for a whole one).  Returns the
    project directory; perf.jsonl is read into the page cache."""
    d = os.path.join(build, "bench", "ledger-%smb-%dc" % (fmt_num(mb), causes))
    perf = os.path.join(d, ".sloptimize", "perf.jsonl")
    if not os.path.isfile(perf) or os.path.getsize(perf) == 0:
        tmp = d + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        print("generating %s (once): genledger.py --mb %s --causes %d" % (d, fmt_num(mb), causes),
              flush=True)
        subprocess.run([sys.executable, os.path.join(TOP, "tests", "genledger.py"), tmp,
                        "--mb", str(mb), "--causes", str(causes)],
                       check=True, stdout=subprocess.DEVNULL)
        os.rename(tmp, d)
    with open(perf, "rb") as f:
        while f.read(1 << 20):
            pass
    return d


def fmt_num(x):
    """A number as the table shows it: no trailing zeros, 4 significant
    digits at most below 1000."""
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer() and abs(x) >= 1:
        return str(int(x))
    if abs(x) >= 100:
        return "%.0f" % x
    return ("%.4g" % x)


def percentile(xs, q):
    """Nearest rank (q in percent), like the rest of the project."""
    s = sorted(xs)
    return s[max(0, -(-len(s) * q // 100) - 1)]


def median(xs):
    return percentile(xs, 50)


def line(measure, ours, unit, anchor=None, target="-", met=None, vs=None):
    """Print one BENCH line.  met: True, False or None (no target)."""
    m = "-" if met is None else ("yes" if met else "no")
    s = "BENCH measure=%s anchor=%s ours=%s unit=%s target=%s met=%s" % (
        measure, fmt_num(anchor), fmt_num(ours), unit, target or "-", m)
    if vs:
        s += " vs=%s" % vs
    print(s, flush=True)


def rss_kb(pid, field="VmHWM"):
    """VmHWM (peak) or VmRSS of a live process, in kB."""
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith(field + ":"):
                return int(l.split()[1])
    return 0
