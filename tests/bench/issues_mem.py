#!/usr/bin/env python3
"""bench issues-mem: what GET /api/sloptimize/issues costs the daemon in
memory on a catalogue of about 200,000 footprints, beside `sloptimize
issues --json` writing the same answer, in the same run (issue 23: one
request took the daemon from 174 MB to about 1 GB where the CLI needs
101 MB; target: the request raises the daemon's peak by at most twice
the CLI's peak).

  python3 tests/bench/issues_mem.py BUILD_DIR

The ledger: causes drawn evenly and nearly every line an incident
(genledger --zipf 0 --heartbeats 0), made once under BUILD_DIR/bench/.
The CLI folds from byte 0 (--no-checkpoint) and streams to a file; its
peak is /usr/bin/time's maximum RSS.  The daemon's is VmHWM read before
the request and after its answer has been read whole; then four distinct
queries at once.  BENCH_QUICK=1: 20,000 records.  Figures, not pass/fail.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def ledger(build, records, causes):
    d = os.path.join(build, "bench", "ledger-issues-%dr-%dc" % (records, causes))
    perf = os.path.join(d, ".sloptimize", "perf.jsonl")
    if not os.path.isfile(perf) or os.path.getsize(perf) == 0:
        tmp = d + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        print("generating %s (once)" % d, flush=True)
        subprocess.run([sys.executable, os.path.join(benchlib.TOP, "tests", "genledger.py"), tmp,
                        "--records", str(records), "--causes", str(causes), "--zipf", "0",
                        "--heartbeats", "0", "--fixes", "0"], check=True, stdout=subprocess.DEVNULL)
        os.rename(tmp, d)
    with open(perf, "rb") as f:
        while f.read(1 << 20):
            pass
    return d


def cli_peak(build, project, out):
    """The CLI's maximum RSS (kB) writing `issues --json` to a file, and
    the rows it wrote."""
    r = subprocess.run(["/usr/bin/time", "-f", "%M", os.path.join(build, "sloptimize"), "issues",
                        "--json", "--no-checkpoint", "--project", project],
                       stdout=open(out, "wb"), stderr=subprocess.PIPE, check=True)
    kb = int(r.stderr.decode().strip().splitlines()[-1])
    with open(out) as f:
        rows = len(json.load(f)["issues"])
    return kb, rows


def get(base, path):
    """GET, the body read whole and dropped; its status and length.  A
    503 says when to ask again (an answer not ready within --answer-wait
    goes on being made, and is kept for the retry)."""
    end = time.monotonic() + 1800
    while True:
        try:
            with urllib.request.urlopen(base + path, timeout=600) as r:
                n = 0
                while True:
                    b = r.read(1 << 20)
                    if not b:
                        break
                    n += len(b)
                return r.status, n
        except urllib.error.HTTPError as e:
            if e.code != 503 or time.monotonic() > end:
                raise
            time.sleep(int(e.headers.get("Retry-After", "5")))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    # nearly every record a row of its own: about 200,000 rows
    records, causes = (20000, 200000) if benchlib.quick() else (370000, 4000000)
    project = ledger(build, records, causes)
    size = os.path.getsize(os.path.join(project, ".sloptimize", "perf.jsonl"))
    tmp = tempfile.mkdtemp(prefix="bench-issues-mem-")
    d = None
    try:
        cli_kb, rows = cli_peak(build, project, os.path.join(tmp, "issues.json"))
        answer = os.path.getsize(os.path.join(tmp, "issues.json"))
        print("ledger: %.0f MB, %d rows; `sloptimize issues --json --no-checkpoint`: peak %.1f MB "
              "(%.1f MB of JSON, formatted)" % (size / 1e6, rows, cli_kb / 1024, answer / 1e6), flush=True)
        d = benchlib.Daemon(build, project, os.path.join(tmp, "state"), os.path.join(tmp, "notify"))
        d.start()
        info = None
        for root, _, files in os.walk(os.path.join(tmp, "state")):
            if "daemon.json" in files:
                info = json.load(open(os.path.join(root, "daemon.json")))
        base = "http://%s" % info["listen"]
        pid = d.proc.pid
        time.sleep(2)	# the checkpoint after start, written streamed
        before = benchlib.rss_kb(pid)
        st, n = get(base, "/api/sloptimize/issues")
        after = benchlib.rss_kb(pid)
        raise_kb = after - before
        print("sloptimized: peak %.1f MB ready, %.1f MB after GET /issues (%d, %.1f MB of JSON): "
              "+%.1f MB" % (before / 1024, after / 1024, st, n / 1e6, raise_kb / 1024), flush=True)
        # four distinct queries at once: folds one at a time, each answer
        # kept (up to 96 MiB of them)
        threads = [threading.Thread(target=get, args=(base, "/api/sloptimize/issues?limit=%d" % k))
                   for k in (100000, 100001, 100002, 100003)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after4 = benchlib.rss_kb(pid)
        print("after four distinct /issues at once: peak %.1f MB" % (after4 / 1024), flush=True)
        benchlib.line("GET /issues (%d rows): the daemon's peak raise" % rows, raise_kb / 1024, "MB",
                      anchor=cli_kb / 1024, target="<= 2x the CLI's peak", met=raise_kb <= 2 * cli_kb,
                      vs="sloptimize issues --json, same ledger")
        benchlib.line("GET /issues (%d rows): the daemon's peak after it" % rows, after / 1024, "MB",
                      anchor=before / 1024, vs="the daemon's peak when ready")
        benchlib.line("four distinct /issues (%d rows) at once: the daemon's peak" % rows, after4 / 1024, "MB",
                      anchor=before / 1024, vs="the daemon's peak when ready")
        d.stop()
        d = None
    finally:
        if d is not None:
            d.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
