#!/usr/bin/env python3
"""bench-wake: append -> wake line at `sloptimize watch`'s stdout, beside
`tail -F` reading the same kind of appends in the same run, and the
daemon's wake-ups while idle.  Figures, not a pass/fail test.

  python3 tests/bench/wake.py BUILD_DIR [--appends N] [--idle SECONDS]
                              [--load SECONDS]

--load S (default 60; 0: none) adds the same measurement under load (issue 12), the
load running S seconds at most: a writer process appending 10,000
heartbeats a second (a write(2) of 100 every 10 ms), 20 clients polling
GET /ledger every 100 ms with If-None-Match (as the panel does) and 5
`sloptimize watch` in all; the anchor is `tail -F` timed under the same
load.  --idle 0 skips the idle count (tests/bench/idle.py has it).
BENCH_QUICK=1: 100 appends, no idle count.  Prints BENCH lines for
tests/bench/table.py.
"""
import argparse, glob, json, os, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

# The load: one node process, so its event loop (the pollers, the writer)
# never shares an interpreter with the measuring one.
LOAD = r"""
const fs = require('fs');
const [file, base, rate, pollers, seconds] = process.argv.slice(1);
const fd = fs.openSync(file, 'a');
const per = Math.max(1, Math.round(Number(rate) / 100));
const end = Date.now() + Number(seconds) * 1000;
let n = 0, polls = 0, bytes = 0, errors = 0, stop = false;
process.on('SIGTERM', () => { stop = true; });
function batch() {
  const now = Date.now();
  if (stop || now >= end) { stop = true; return; }
  const at = new Date(now).toISOString();
  let s = '';
  for (let i = 0; i < per; i++, n++)
    s += JSON.stringify({ type: 'heartbeat', at, phase: 'play', build: 'bench',
      frame: { medianMs: 8 + (n % 5) / 10, p95Ms: 15, insideRenderMs: 4, fps: 60 },
      render: { calls: 400, triangles: 900000, points: 0, lines: 12 },
      memory: { geometries: 200, textures: 40, programs: 16 }, window: { frames: 120, seconds: 2 } }) + '\n';
  fs.writeSync(fd, s);
  setTimeout(batch, Math.max(0, 10 - (Date.now() - now)));
}
async function poller() {
  let etag = null;
  while (!stop) {
    try {
      const r = await fetch(base + '/api/sloptimize/ledger', { headers: etag ? { 'If-None-Match': etag } : {} });
      if (r.ok) { etag = r.headers.get('etag'); bytes += (await r.arrayBuffer()).byteLength; }
      else if (r.status !== 304) errors++;
      polls++;
    } catch { errors++; }
    await new Promise((res) => setTimeout(res, 100));
  }
}
batch();
process.stdout.write('loading\n');
Promise.all(Array.from({ length: Number(pollers) }, poller)).then(() => {
  fs.closeSync(fd);
  process.stdout.write(JSON.stringify({ records: n, polls, bytes, errors }) + '\n');
});
"""


def measure(path, reader, n, record):
    """Append n lines to path; time each until reader prints a line."""
    lat = []
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for i in range(n):
        line = (json.dumps(record(i)) + "\n").encode()
        t0 = time.perf_counter_ns()
        os.write(fd, line)
        benchlib.read_line(reader, time.monotonic() + 10)
        lat.append((time.perf_counter_ns() - t0) / 1e6)
        time.sleep(0.002)   # one append at a time, like a game's hitches
    os.close(fd)
    return lat


def wakeups(pid):
    """Context switches of every thread of pid: each one is a wake-up."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for l in f:
                if l.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(l.split()[1])
    return total


def report(name, lat):
    print("%-38s p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms   (n=%d)" % (
        name, benchlib.percentile(lat, 50), benchlib.percentile(lat, 99), max(lat), len(lat)))


def bench(name, ours, anchor, suffix=""):
    """The BENCH lines of one measurement: p50 and p99 beside tail -F."""
    benchlib.line("append -> wake at watch%s, p50" % suffix, benchlib.percentile(ours, 50), "ms",
                  anchor=benchlib.percentile(anchor, 50), vs=name)
    p99 = benchlib.percentile(ours, 99)
    benchlib.line("append -> wake at watch%s, p99" % suffix, p99, "ms",
                  anchor=benchlib.percentile(anchor, 99), target="<= 1 ms", met=p99 <= 1, vs=name)


def daemon_base(state):
    """The daemon's address, from daemon.json in its state directory."""
    for f in glob.glob(os.path.join(state, "sloptimize", "*", "daemon.json")):
        with open(f) as fh:
            j = json.load(fh)
        return "http://" + j["listen"]
    raise RuntimeError("no daemon.json under %s" % state)


def main():
    q = benchlib.quick()
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--appends", type=int, default=100 if q else 1000)
    ap.add_argument("--idle", type=float, default=0 if q else 60)
    ap.add_argument("--load", type=float, default=30 if q else 60)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    tmp = tempfile.mkdtemp(prefix="bench-wake-")
    proj = os.path.join(tmp, "game")
    os.makedirs(os.path.join(proj, ".sloptimize"))
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"), DBUS_SESSION_BUS_ADDRESS="")
    procs = []
    try:
        daemon = subprocess.Popen([os.path.join(build, "sloptimized"), "--project", proj,
                                   "--listen", "127.0.0.1:0", "--per-fp-ms", "0", "--global-max", "0",
                                   "--desktop", "0"], env=env, stderr=subprocess.DEVNULL)
        procs.append(daemon)
        watch = subprocess.Popen([os.path.join(build, "sloptimize"), "watch", "--project", proj],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(watch)
        deadline = time.monotonic() + 20
        while b"connected to" not in benchlib.read_line(watch.stderr, deadline):
            pass
        perf = os.path.join(proj, ".sloptimize", "perf.jsonl")

        def hitch(i):
            return {"type": "hitch", "at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                    "frameMs": 150.0, "phase": "play", "build": "bench", "minted": ["m@o%d" % (i % 10)],
                    "classification": {"guess": "shader-compile", "confidence": "medium",
                                       "evidence": "programs +1"}}

        print("append -> line read, %d appends each, same run, %d cores, load %s" % (
            a.appends, os.cpu_count(), open("/proc/loadavg").read().split()[0]))
        daemon_lat = measure(perf, watch.stdout, a.appends, hitch)

        anchor = os.path.join(tmp, "anchor.jsonl")
        open(anchor, "w").close()
        tail = subprocess.Popen(["tail", "-F", "-n0", anchor], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        procs.append(tail)
        time.sleep(0.5)     # tail -F has no readiness signal
        tail_lat = measure(anchor, tail.stdout, a.appends, hitch)
        report("sloptimized -> sloptimize watch", daemon_lat)
        report("anchor: tail -F (inotify)", tail_lat)
        print("target (DESIGN §14): p99 <= 1 ms")
        bench("tail -F, same run", daemon_lat, tail_lat)

        if a.load > 0:
            base = daemon_base(env["XDG_STATE_HOME"])
            others = []
            for _ in range(4):
                w = subprocess.Popen([os.path.join(build, "sloptimize"), "watch", "--project", proj],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                procs.append(w)
                others.append(w)
            for w in others:
                dl = time.monotonic() + 20
                while b"connected to" not in benchlib.read_line(w.stderr, dl):
                    pass
            load = subprocess.Popen(["node", "-e", LOAD, perf, base, "10000", "20", str(a.load)],
                                    stdout=subprocess.PIPE)
            procs.append(load)
            benchlib.read_line(load.stdout, time.monotonic() + 20)
            time.sleep(1)   # the pollers have their first 2 MiB and the tailer is in step
            print("under load: 10,000 heartbeats/s appended, 20 /ledger pollers every 100 ms, "
                  "5 watchers; load %s" % open("/proc/loadavg").read().split()[0])
            t0 = time.monotonic()
            loaded_lat = measure(perf, watch.stdout, a.appends, hitch)
            loaded_tail = measure(anchor, tail.stdout, a.appends, hitch)
            took = time.monotonic() - t0
            load.send_signal(signal.SIGTERM)
            summary = json.loads(benchlib.read_line(load.stdout, time.monotonic() + 30))
            load.wait()
            report("under load: sloptimized -> watch", loaded_lat)
            report("under load: anchor tail -F", loaded_tail)
            print("  the load: %d heartbeats, %d polls (%d MB sent, %d errors) in %.1f s%s" % (
                summary["records"], summary["polls"], summary["bytes"] // 1000000,
                summary["errors"], took,
                "" if took < a.load else " (the load stopped before the measurement did)"))
            bench("tail -F, same load: 10k rec/s, 20 /ledger pollers, 5 watchers", loaded_lat,
                  loaded_tail, " under load")
            for w in others:
                w.terminate()
                w.wait()

        if a.idle <= 0:
            return

        # idle: no client connected, nothing appended
        watch.terminate()
        watch.wait()
        time.sleep(2)
        w0 = wakeups(daemon.pid)
        time.sleep(a.idle)
        w1 = wakeups(daemon.pid)
        print("daemon idle for %.0f s, no client: %d wake-ups (%.1f per minute); target 0" % (
            a.idle, w1 - w0, (w1 - w0) * 60 / a.idle))
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
