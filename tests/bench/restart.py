#!/usr/bin/env python3
"""bench-restart: restart to ready with a cursor present (DESIGN §14:
<= 100 ms, the same on 50 MB and 1 GB), beside the first start on the
same ledger in the same run; and the daemon's memory after its start-up
fold, beside the daemon on an empty ledger.  Figures, not a pass/fail
test.

  python3 tests/bench/restart.py BUILD_DIR [--mb MB ...] [--restarts N]

For each size: a genledger ledger (made once under BUILD_DIR/bench/), a
fresh state directory; the daemon is started and folds the whole ledger
(the first start, the anchor), its state directory is let settle (no
file in it changes for 1 s: a checkpoint written after the fold is
written), SIGTERM; then it is started again N times (default 3) on the
same state directory, each timed from just before exec to its sd_notify
READY=1 (a NOTIFY_SOCKET of our own), and stopped again.  The figure is
the median restart.  Memory: VmHWM once READY is received.
"""
import argparse
import os
import sys
import tempfile
import time
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def size_name(mb):
    return "%g GB" % (mb / 1000) if mb >= 1000 else "%g MB" % mb


def snapshot(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            try:
                st = os.stat(p)
            except FileNotFoundError:
                continue
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def settle(d, quiet_s=1.0, deadline_s=60):
    """Wait until no file under d changes for quiet_s (a deadline, not a
    sleep: whatever the daemon writes after its fold is written)."""
    end = time.monotonic() + deadline_s
    last, since = snapshot(d), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        now = snapshot(d)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return last
    return last


def wait_checkpoint(d, deadline_s=120):
    """Wait until the daemon's first checkpoint is in d (it is begun after
    a second of quiet, which settle() alone could mistake for the end)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if any(os.path.basename(p) == "checkpoint" for p in snapshot(d)):
            return
        time.sleep(0.1)
    raise RuntimeError("no checkpoint in %s after %d s" % (d, deadline_s))


def main():
    q = benchlib.quick()
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--mb", type=float, nargs="+", default=[5, 20] if q else [50, 1000])
    ap.add_argument("--restarts", type=int, default=3)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    tmp = tempfile.mkdtemp(prefix="bench-restart-")
    print("restart to ready: %d cores, load %s" % (os.cpu_count(),
          open("/proc/loadavg").read().split()[0]), flush=True)
    running = None
    try:
        # the anchor for memory: the daemon with its libraries, nothing folded
        empty = os.path.join(tmp, "empty")
        os.makedirs(os.path.join(empty, ".sloptimize"))
        open(os.path.join(empty, ".sloptimize", "perf.jsonl"), "w").close()
        os.makedirs(os.path.join(tmp, "run-empty"))
        running = benchlib.Daemon(build, empty, os.path.join(tmp, "run-empty", "state"),
                         os.path.join(tmp, "run-empty", "notify"))
        running.start()
        empty_kb = benchlib.rss_kb(running.proc.pid)
        running.stop()
        running = None
        print("daemon on an empty ledger: VmHWM %.1f MB" % (empty_kb / 1024))

        largest = None
        for mb in a.mb:
            mb = int(mb) if float(mb).is_integer() else mb
            proj = benchlib.ledger(build, mb)
            perf = os.path.join(proj, ".sloptimize", "perf.jsonl")
            run = os.path.join(tmp, "run-%s" % mb)
            os.makedirs(run)
            state = os.path.join(run, "state")
            d = benchlib.Daemon(build, proj, state, os.path.join(run, "notify"))
            running = d
            first = d.start()
            first_kb = benchlib.rss_kb(d.proc.pid)
            wait_checkpoint(state)
            settle(state)
            # the peak so far, its first checkpoint written: what the
            # daemon holds between saves (the rows' serialised runs) and
            # the save's own transient are in it
            saved_kb = benchlib.rss_kb(d.proc.pid)
            d.stop()
            running = None
            files = sorted("%s (%d B)" % (os.path.basename(p), v[0])
                           for p, v in snapshot(state).items())
            if not any(f.startswith("cursor ") for f in files):
                raise RuntimeError("no cursor in the state directory after SIGTERM: %s" % files)
            times, kbs = [], []
            for _ in range(a.restarts):
                running = d
                times.append(d.start())
                kbs.append(benchlib.rss_kb(d.proc.pid))
                settle(state)
                d.stop()
                running = None
            name = size_name(mb)
            print("%s ledger (%d bytes): first start %.1f ms (VmHWM %.1f MB at ready, %.1f MB "
                  "once its checkpoint is written); restarts %s ms "
                  "(VmHWM %s MB); state: %s" % (
                      name, os.path.getsize(perf), first * 1000, first_kb / 1024, saved_kb / 1024,
                      " ".join("%.1f" % (t * 1000) for t in times),
                      " ".join("%.1f" % (k / 1024) for k in kbs), " ".join(files)), flush=True)
            r = benchlib.median(times) * 1000
            benchlib.line("restart to ready, %s, cursor present" % name, r, "ms",
                          anchor=first * 1000, target="<= 100 ms", met=r <= 100,
                          vs="first start, full fold")
            largest = (name, first_kb, saved_kb, benchlib.median(kbs))
        if largest:
            name, first_kb, saved_kb, again_kb = largest
            benchlib.line("daemon RSS after the start-up fold, %s" % name, first_kb / 1024, "MB",
                          anchor=empty_kb / 1024, target="<= 32 MB", met=first_kb / 1024 <= 32,
                          vs="the daemon on an empty ledger")
            benchlib.line("daemon RSS once its first checkpoint is written, %s" % name,
                          saved_kb / 1024, "MB", anchor=empty_kb / 1024, target="<= 32 MB",
                          met=saved_kb / 1024 <= 32, vs="the daemon on an empty ledger")
            benchlib.line("daemon RSS after a restart, %s" % name, again_kb / 1024, "MB",
                          anchor=empty_kb / 1024, target="<= 32 MB", met=again_kb / 1024 <= 32,
                          vs="the daemon on an empty ledger")
        print("targets (DESIGN §14, issue 12): restart to ready <= 100 ms, the same on 50 MB "
              "and 1 GB; <= 32 MB after the start-up fold of 1 GB")
    finally:
        if running is not None and running.proc.poll() is None:
            running.proc.kill()
            running.proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
