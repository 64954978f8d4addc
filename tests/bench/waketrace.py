#!/usr/bin/env python3
"""waketrace: where an append's wake spends its time under the wake
benchmark's load, traced, not guessed.  A diagnosis tool for
docs/performance.md ("Wake under load"), not part of `make bench`; it
needs root (or perf_event_paranoid -1) and perf with uprobes.

  python3 tests/bench/waketrace.py BUILD_DIR [--seconds S]

Runs tests/bench/wake.py BUILD_DIR --load 40 and, once the loaded phase
begins, records for S seconds (default 2.5): uprobes on the daemon's
on_file_event (inotify told the tailer), on_read (a read's bytes are
back), events_wake (the wake is made) and http_pump (one 64 KiB piece of
an answer body); the daemon's small sendto(2)s (the events frames); the
measured `sloptimize watch`'s reads and its write(2) of the line; the
benchmark's own write(2) of the hitch and its read of the line.  For
every timed hitch it prints the path's segments (p50/p90/p99/max):

  append -> inotify callback   the loop was busy, or waiting for a CPU
  inotify -> read back         the read (on the pool: two context switches)
  read back -> wake made       the fold and the notifier
  wake -> first events send    the rest of the loop turn, the next turn
  events sends                 the five watchers' frames
  send -> watch's line         the watch process
  line -> benchmark reads it

and how many /ledger body pieces the loop wrote between the wake and its
first events frame.  The probes are removed at the end.
"""
import argparse, os, re, subprocess, sys, time

PROBES = ["on_file_event", "on_read", "events_wake", "http_pump"]


def pgrep(pattern):
    r = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    pids = sorted(int(p) for p in r.stdout.split())
    return pids[0] if pids else None


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=2.5)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    daemon = os.path.join(build, "sloptimized")
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(build, "bench", "waketrace.data")
    os.makedirs(os.path.dirname(data), exist_ok=True)
    for p in PROBES:
        subprocess.run(["perf", "probe", "-q", "-x", daemon, "--add", p], check=True)
    bench = None
    try:
        bench = subprocess.Popen([sys.executable, os.path.join(here, "wake.py"), build,
                                  "--idle", "0", "--load", "40"],
                                 stdout=subprocess.PIPE, text=True)
        out = []
        for line in bench.stdout:
            out.append(line)
            if line.startswith("under load: 10,000"):
                break
        pid = pgrep("^%s --project" % re.escape(daemon))
        watch = pgrep("^%s watch" % re.escape(os.path.join(build, "sloptimize")))
        py = bench.pid
        if pid is None or watch is None:
            raise SystemExit("waketrace: no daemon or watch found")
        subprocess.run(["perf", "record", "-q", "-a", "-o", data,
                        "-e", "probe_sloptimized:*",
                        "-e", "syscalls:sys_enter_write",
                        "--filter", "common_pid == %d || common_pid == %d" % (py, watch),
                        "-e", "syscalls:sys_exit_read",
                        "--filter", "common_pid == %d || common_pid == %d" % (py, watch),
                        "-e", "syscalls:sys_exit_recvfrom", "--filter", "common_pid == %d" % watch,
                        "-e", "syscalls:sys_enter_sendto",
                        "--filter", "common_pid == %d && len < 8192" % pid,
                        "sleep", str(a.seconds)], check=True)
        out += bench.stdout.readlines()
        bench.wait()
        bench = None
    finally:
        if bench is not None:
            bench.terminate()
            bench.wait()
        subprocess.run(["perf", "probe", "-q", "-d", "probe_sloptimized:*"])
    print("".join(l for l in out if l.startswith("under load")), end="")

    text = subprocess.run(["perf", "script", "-i", data, "-F", "tid,time,event,trace"],
                          capture_output=True, text=True).stdout
    ev = []
    for l in text.splitlines():
        m = re.match(r"\s*(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)", l)
        if m:
            ev.append((float(m.group(2)) * 1000, int(m.group(1)),
                       m.group(3).split(":")[-1], m.group(4)))
    ev.sort()
    fd = None   # the benchmark's descriptor of perf.jsonl: its first write followed by a wake
    rows = []
    for k, (t, tid, e, r) in enumerate(ev):
        if tid != py or e != "sys_enter_write":
            continue
        m = re.search(r"fd: (0x[0-9a-f]+)", r)
        if fd is not None and (m is None or m.group(1) != fd):
            continue
        E = R = S = F = L = Rv = Wt = B = None
        pumps = 0
        for x in ev[k + 1:k + 5000]:
            if x[1] == py and x[2] == "sys_enter_write":
                break
            if x[2] == "on_file_event" and E is None:
                E = x[0]
            elif x[2] == "on_read" and S is None:
                R = x[0]
            elif x[2] == "events_wake" and S is None:
                S = x[0]
            elif S is not None and x[2] == "http_pump" and F is None:
                pumps += 1
            elif S is not None and x[2] == "sys_enter_sendto" and Rv is None:
                F = F if F is not None else x[0]
                L = x[0]
            elif F is not None and Rv is None and x[1] == watch and \
                    x[2] in ("sys_exit_recvfrom", "sys_exit_read"):
                Rv = x[0]
            elif Rv is not None and Wt is None and x[1] == watch and x[2] == "sys_enter_write":
                Wt = x[0]
            elif Wt is not None and x[1] == py and x[2] == "sys_exit_read":
                B = x[0]
                break
        if None in (E, R, S, F, L, Rv, Wt, B):
            continue
        if fd is None and m is not None:
            fd = m.group(1)
        rows.append((B - t, E - t, R - E, S - R, F - S, L - F, Wt - L, B - Wt, pumps))
    names = ["append -> line read (all)", "append -> inotify callback", "inotify -> read back",
             "read back -> wake made", "wake -> first events send", "events sends (5 watchers)",
             "last send -> watch's line", "line -> benchmark reads it",
             "body pieces, wake -> send"]
    print("%d hitches traced; ms unless said" % len(rows))
    for i, n in enumerate(names):
        xs = [r[i] for r in rows]
        print("  %-28s p50 %7.3f  p90 %7.3f  p99 %7.3f  max %7.3f" % (
            n, pct(xs, 50), pct(xs, 90), pct(xs, 99), max(xs) if xs else float("nan")))


if __name__ == "__main__":
    main()
