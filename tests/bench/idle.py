#!/usr/bin/env python3
"""bench-idle: what an idle daemon costs — its wake-ups per minute with no
client, and with 5 `sloptimize watch` connected — beside `tail -F` on a
file nobody writes, over the same window in the same run (DESIGN §14: 0
wake-ups per minute).  Figures, not a pass/fail test.

  python3 tests/bench/idle.py BUILD_DIR [--seconds S] [--watchers N]

A wake-up is a context switch of any of the process's threads (perf's
`context-switches`, or /proc/PID/task/*/status without perf): a thread
that sleeps, is woken and sleeps again counts one, whatever woke it, so
the daemon and tail -F are counted alike.  The daemon's epoll_wait calls
(perf's syscalls:sys_enter_epoll_wait and _epoll_pwait) are printed
beside it: that is how often its event loop came back.  The daemon has
a small ledger (folded before the window starts); nothing is appended.
Default window 60 s (BENCH_QUICK=1: 5 s).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

EVENTS = ["context-switches", "syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_epoll_pwait"]


def proc_switches(pid):
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for l in f:
                    if l.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(l.split()[1])
        except FileNotFoundError:
            pass
    return total


def have_perf():
    try:
        r = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(EVENTS), "--", "true"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "not supported" not in r.stderr and "<not" not in r.stderr


def count(pids, seconds, tmp, perf):
    """{pid: {event: n}} over the same window of `seconds`."""
    out = {}
    if perf:
        runs = {}
        for pid in pids:
            f = os.path.join(tmp, "perf-%d.csv" % pid)
            runs[pid] = (f, subprocess.Popen(["perf", "stat", "-x,", "-o", f, "-e", ",".join(EVENTS),
                                              "-p", str(pid)], stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL))
        time.sleep(0.5)          # perf attached (its own start-up is not in the window)
        t0 = time.monotonic()
        time.sleep(seconds)
        for pid, (f, p) in runs.items():
            p.send_signal(signal.SIGINT)
        for pid, (f, p) in runs.items():
            p.wait(30)
            ev = {}
            with open(f) as fh:
                for l in fh:
                    parts = l.strip().split(",")
                    if len(parts) > 2 and parts[2] in EVENTS:
                        ev[parts[2]] = int(parts[0]) if parts[0].isdigit() else 0
            out[pid] = ev
        return out, time.monotonic() - t0
    before = {pid: proc_switches(pid) for pid in pids}
    t0 = time.monotonic()
    time.sleep(seconds)
    took = time.monotonic() - t0
    for pid in pids:
        out[pid] = {"context-switches": proc_switches(pid) - before[pid]}
    return out, took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=5 if benchlib.quick() else 60)
    ap.add_argument("--watchers", type=int, default=5)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    tmp = tempfile.mkdtemp(prefix="bench-idle-")
    perf = have_perf()
    procs = []
    d = None
    try:
        proj = os.path.join(tmp, "game")
        shutil.copytree(os.path.join(benchlib.ledger(build, 5), ".sloptimize"),
                        os.path.join(proj, ".sloptimize"))
        os.makedirs(os.path.join(tmp, "run"))
        d = benchlib.Daemon(build, proj, os.path.join(tmp, "run", "state"),
                            os.path.join(tmp, "run", "notify"))
        d.start()
        anchor = os.path.join(tmp, "anchor.jsonl")
        open(anchor, "w").close()
        tail = subprocess.Popen(["tail", "-F", "-n0", anchor], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        procs.append(tail)
        time.sleep(1)           # both settled: the daemon's post-fold work, tail's set-up
        print("idle for %g s each, counted with %s; %d cores, load %s" % (
            a.seconds, "perf stat" if perf else "/proc/PID/task/*/status (no perf)",
            os.cpu_count(), open("/proc/loadavg").read().split()[0]), flush=True)

        def per_min(n, took):
            return n * 60.0 / took

        c, took = count([d.proc.pid, tail.pid], a.seconds, tmp, perf)
        dn, tn = c[d.proc.pid], c[tail.pid]
        ep = dn.get("syscalls:sys_enter_epoll_wait", 0) + dn.get("syscalls:sys_enter_epoll_pwait", 0)
        print("no client: daemon %d wake-ups (%d epoll_wait) in %.1f s; tail -F %d" % (
            dn["context-switches"], ep, took, tn["context-switches"]), flush=True)
        anchor_min = per_min(tn["context-switches"], took)
        ours = per_min(dn["context-switches"], took)
        benchlib.line("idle daemon, no client: wake-ups", ours, "/min", anchor=anchor_min,
                      target="0 /min", met=ours == 0, vs="tail -F, same window")

        watchers = [benchlib.watch(build, d) for _ in range(a.watchers)]
        procs += watchers
        time.sleep(1)
        c, took = count([d.proc.pid, tail.pid], a.seconds, tmp, perf)
        dn, tn = c[d.proc.pid], c[tail.pid]
        ep = dn.get("syscalls:sys_enter_epoll_wait", 0) + dn.get("syscalls:sys_enter_epoll_pwait", 0)
        print("%d watchers: daemon %d wake-ups (%d epoll_wait) in %.1f s; tail -F %d" % (
            a.watchers, dn["context-switches"], ep, took, tn["context-switches"]), flush=True)
        ours = per_min(dn["context-switches"], took)
        benchlib.line("idle daemon, %d watchers: wake-ups" % a.watchers, ours, "/min",
                      anchor=per_min(tn["context-switches"], took),
                      target="pings only as a dead peer needs", met=None,
                      vs="tail -F, same window")
        print("target (DESIGN §14, issue 12): 0 wake-ups a minute with no client; with "
              "watchers, pings only as often as a dead peer must be noticed")
        if a.seconds < 60:
            print("note: a window under 60 s can miss a timer of 30 s or more "
                  "(libwebsockets' housekeeping, the watchers' pings)")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait()
        if d is not None:
            try:
                d.stop()
            except Exception:
                d.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
