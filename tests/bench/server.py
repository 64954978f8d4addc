#!/usr/bin/env python3
"""bench-server: the events socket and the HTTP loop, each figure beside an
anchor measured in the same run (issue 12's rows; DESIGN §14).  Figures,
never pass/fail: the machine is shared and noisy.

  python3 tests/bench/server.py BUILD_DIR [--seconds N] [--idle SECONDS]

Rows, one line each as `measure | anchor | ours | target`:

  append -> wake p99 under load   a hitch appended while 10,000 records/s
                                  are written, 20 clients poll /ledger and 5
                                  watchers are connected; timed to the line
                                  at one watcher's stdout.  Anchor: tail -F
                                  on another file, under the same load.
  /ledger req/s                   GET /ledger (2 MiB of a 20 MB ledger) with
                                  wrk -t1 -c8; anchor: nginx, one worker,
                                  sendfile, the same bytes as a file.
  /issues req/s                   the same for /issues on ~10,000 rows.
  /status p99 under /issues load  wrk -c1 on /status while two clients ask
                                  for /issues (~50,000 rows) in a loop and the
                                  ledger keeps changing; anchor: /status p99
                                  idle.
  idle wake-ups/min, no client    context switches of every thread of the
                                  daemon over --idle seconds; anchor: tail -F.
  idle wake-ups/min, 5 watchers   the same with 5 `sloptimize watch`.
"""
import argparse, json, os, select, shutil, signal, socket, subprocess, sys, tempfile, threading, time
import urllib.request

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(TOP, "tests", "genledger.py")
ROWS = []


def row(measure, anchor, ours, target):
    ROWS.append("%s | %s | %s | %s" % (measure, anchor, ours, target))


def percentile(xs, q):
    s = sorted(xs)
    return s[max(0, -(-len(s) * q // 100) - 1)]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wakeups(pid):
    """Context switches of every thread of pid: each one is a wake-up."""
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


class Lines:
    """Whole lines from a pipe, read in chunks (the harness must not cost
    more than what it measures)."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.buf = b""

    def read(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError("no line before the deadline")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise EOFError("stream closed")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line


class Bench:
    def __init__(self, build, work):
        self.build = build
        self.work = work
        self.tmp = tempfile.mkdtemp(prefix="bench-server-")
        os.chmod(self.tmp, 0o755)   # nginx's worker drops root
        self.procs = []

    def spawn(self, argv, **kw):
        p = subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def close(self):
        for p in reversed(self.procs):
            self.stop(p)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def ledger(self, name, *args):
        d = os.path.join(self.work, name)
        if not os.path.exists(os.path.join(d, ".sloptimize", "perf.jsonl")):
            print("generating %s (once) in %s" % (" ".join(args), d), flush=True)
            subprocess.run([sys.executable, GEN, d, *args], check=True, stdout=subprocess.DEVNULL)
        return d

    def daemon(self, project, *args):
        port = free_port()
        env = dict(os.environ, XDG_STATE_HOME=os.path.join(self.tmp, "state-%d" % port),
                   DBUS_SESSION_BUS_ADDRESS="")
        p = self.spawn([os.path.join(self.build, "sloptimized"), "--project", project,
                        "--listen", "127.0.0.1:%d" % port, "--desktop", "0", *args],
                       env=env, stderr=open(os.path.join(self.tmp, "daemon-%d.log" % port), "w"))
        base = "http://127.0.0.1:%d" % port
        end = time.monotonic() + 120
        while True:
            try:
                if json.load(urllib.request.urlopen(base + "/api/sloptimize/status", timeout=5))["ready"]:
                    break
            except OSError:
                pass
            if time.monotonic() > end or p.poll() is not None:
                raise RuntimeError("the daemon did not get ready")
            time.sleep(0.1)
        return p, base, env

    def nginx(self, root):
        port = free_port()
        conf = os.path.join(self.tmp, "nginx-%d.conf" % port)
        with open(conf, "w") as f:
            f.write("""worker_processes 1; daemon off; pid %s/nginx-%d.pid; error_log %s/nginx-%d.err;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; default_type application/json;
       server { listen 127.0.0.1:%d; root %s; } }
""" % (self.tmp, port, self.tmp, port, port, root))
        self.spawn(["nginx", "-p", self.tmp, "-c", conf], stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                return "http://127.0.0.1:%d" % port
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("nginx did not start")


def wrk(url, secs, conns=8, latency=False, headers=()):
    argv = ["wrk", "-t1", "-c%d" % conns, "-d%ds" % secs]
    if latency:
        argv.append("--latency")
    for h in headers:
        argv += ["-H", h]
    out = subprocess.run(argv + [url], capture_output=True, text=True).stdout
    rps = p99 = None
    for l in out.splitlines():
        f = l.split()
        if l.startswith("Requests/sec:"):
            rps = float(f[1])
        if latency and len(f) == 2 and f[0] == "99%":
            v = f[1]
            p99 = float(v[:-2]) if v.endswith("ms") else float(v[:-2]) / 1000 if v.endswith("us") \
                else float(v[:-1]) * 1000
    return rps, p99


# --- append -> wake under load ---------------------------------------------

WRITER = r"""
import json, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
rate = int(sys.argv[2]); i = 0; t0 = time.monotonic()
line = (json.dumps({"type": "heartbeat", "at": "2026-11-29T12:00:00.000Z", "build": "bench", "phase": "play",
                    "frame": {"medianMs": 8.1, "p95Ms": 14.2}}) + "\n").encode()
while True:
    os.write(fd, line)
    i += 1
    if i % 100 == 0:
        ahead = i / rate - (time.monotonic() - t0)
        if ahead > 0:
            time.sleep(ahead)
"""




def probe(path, reader, n, record):
    lat = []
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for i in range(n):
        line = (json.dumps(record(i)) + "\n").encode()
        t0 = time.perf_counter_ns()
        os.write(fd, line)
        reader.read(time.monotonic() + 10)
        lat.append((time.perf_counter_ns() - t0) / 1e6)
        time.sleep(0.005)
    os.close(fd)
    return lat


def hitch(i):
    return {"type": "hitch", "at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "frameMs": 150.0, "phase": "play", "build": "bench", "minted": ["m@o%d" % (i % 10)],
            "classification": {"guess": "shader-compile", "confidence": "medium", "evidence": "programs +1"}}


def wake_under_load(b, n, seconds, npollers=20, rate=10000):
    proj = os.path.join(b.tmp, "game")
    os.makedirs(os.path.join(proj, ".sloptimize"))
    perf = os.path.join(proj, ".sloptimize", "perf.jsonl")
    # a 2 MiB tail to poll from the start
    subprocess.run([sys.executable, GEN, proj, "--mb", "4"], check=True, stdout=subprocess.DEVNULL)
    d, base, env = b.daemon(proj, "--per-fp-ms", "0", "--global-max", "0")
    watches = [b.spawn([os.path.join(b.build, "sloptimize"), "watch", "--project", proj], env=env,
                       stdout=subprocess.PIPE if i == 0 else subprocess.DEVNULL, stderr=subprocess.PIPE)
               for i in range(5)]
    for w in watches:
        Lines(w.stderr).read(time.monotonic() + 20)   # "connected to …"
    reader = Lines(watches[0].stdout)
    anchor = os.path.join(b.tmp, "anchor.jsonl")
    open(anchor, "w").close()
    tail = b.spawn(["tail", "-F", "-n0", anchor], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(0.5)     # tail -F has no readiness signal
    writer = b.spawn([sys.executable, "-c", WRITER, perf, str(rate)])
    # the pollers: wrk, so the harness costs less CPU than what it loads;
    # each of its connections asks again as soon as it has an answer
    pollers = b.spawn(["wrk", "-t1", "-c%d" % max(1, npollers), "-d3600s",
                       base + "/api/sloptimize/ledger"], stdout=subprocess.DEVNULL) if npollers else \
        b.spawn(["sleep", "3600"])
    time.sleep(2)
    st0 = json.load(urllib.request.urlopen(base + "/api/sloptimize/status"))
    t0 = time.monotonic()
    ours = probe(perf, reader, n, hitch)
    tail_lat = probe(anchor, Lines(tail.stdout), n, hitch)
    span = time.monotonic() - t0
    st1 = json.load(urllib.request.urlopen(base + "/api/sloptimize/status"))
    for p in (pollers, writer, tail, *watches):
        b.stop(p)
    rate = (st1["files"]["perf"]["lines"] - st0["files"]["perf"]["lines"]) / span
    builds = st1["http"]["ledgerBuilds"] - st0["http"]["ledgerBuilds"]
    polls = st1["http"]["requests"] - st0["http"]["requests"]
    print("under load: %.0f records/s folded, %d /ledger builds for ~%d requests in %.1f s, lag %d bytes at the end"
          % (rate, builds, polls, span, st1["lag"]))
    print("  ours    p50 %.3f ms  p99 %.3f ms  max %.3f ms (n=%d)" % (
        percentile(ours, 50), percentile(ours, 99), max(ours), len(ours)))
    print("  tail -F p50 %.3f ms  p99 %.3f ms  max %.3f ms" % (
        percentile(tail_lat, 50), percentile(tail_lat, 99), max(tail_lat)))
    row("append -> wake p99, %dk rec/s + %d /ledger pollers + 5 watchers" % (rate // 1000, npollers),
        "tail -F %.3f ms" % percentile(tail_lat, 99), "%.3f ms" % percentile(ours, 99), "<= 1 ms")
    row("/ledger builds under %d pollers, %dk rec/s" % (npollers, rate // 1000), "%d requests" % polls,
        "%d builds (%.1f/s)" % (builds, builds / span), "a few per second")
    b.stop(d)


# --- HTTP against nginx ----------------------------------------------------

def http_vs_nginx(b, secs, rounds):
    for name, project, path, target, need in (
            ("/ledger (2 MiB)", b.ledger("ledger-20mb", "--mb", "20"), "/api/sloptimize/ledger", ">= nginx", 1.0),
            ("/issues (~10k rows)", b.ledger("causes-10k", "--mb", "150", "--causes", "32000"),
             "/api/sloptimize/issues", ">= 50 % of nginx", 0.5)):
        d, base, _ = b.daemon(project)
        www = os.path.join(b.tmp, "www")
        os.makedirs(www, exist_ok=True)
        body = urllib.request.urlopen(base + path).read()
        with open(os.path.join(www, "body.json"), "wb") as f:
            f.write(body)
        os.chmod(www, 0o755)
        ng = b.nginx(www)
        best_ng = best_us = 0
        for _ in range(rounds):
            best_ng = max(best_ng, wrk(ng + "/body.json", secs)[0] or 0)
            best_us = max(best_us, wrk(base + path, secs)[0] or 0)
        print("%s: %d bytes; nginx %.0f req/s, sloptimized %.0f req/s (best of %d)" % (
            name, len(body), best_ng, best_us, rounds))
        row("%s req/s, wrk -c8" % name, "nginx %.0f" % best_ng,
            "%.0f (%.0f %%)" % (best_us, 100 * best_us / best_ng if best_ng else 0), target)
        b.stop(d)


def status_under_issues(b, secs):
    project = b.ledger("causes-50k", "--records", "130000", "--causes", "150000", "--zipf", "0",
                       "--heartbeats", "0", "--fixes", "0")
    # the ledger is appended to during the load: copy it, once per run
    proj = os.path.join(b.tmp, "c50")
    shutil.copytree(project, proj)
    d, base, _ = b.daemon(proj)
    urllib.request.urlopen(base + "/api/sloptimize/issues").read()
    idle = wrk(base + "/api/sloptimize/status", secs, conns=1, latency=True)[1]
    stop = threading.Event()

    def ask():
        while not stop.is_set():
            urllib.request.urlopen(base + "/api/sloptimize/issues", timeout=60).read()

    def change():
        fd = os.open(os.path.join(proj, ".sloptimize", "perf.jsonl"), os.O_WRONLY | os.O_APPEND)
        while not stop.is_set():
            os.write(fd, (json.dumps(hitch(0)) + "\n").encode())
            stop.wait(0.5)
        os.close(fd)

    ts = [threading.Thread(target=f) for f in (ask, ask, change)]
    for t in ts:
        t.start()
    time.sleep(1)
    loaded = wrk(base + "/api/sloptimize/status", secs, conns=1, latency=True)[1]
    stop.set()
    for t in ts:
        t.join()
    st = json.load(urllib.request.urlopen(base + "/api/sloptimize/status"))
    print("/status p99: idle %.3f ms, while /issues (%d rows) is asked for in a loop %.3f ms; %d answers built" % (
        idle, st["counts"]["rows"], loaded, st["http"]["answerBuilds"]))
    row("/status p99 while /issues (~50k rows) is served", "idle %.3f ms" % idle, "%.3f ms" % loaded, "<= 2 ms")
    b.stop(d)


def idle(b, secs):
    proj = os.path.join(b.tmp, "quiet")
    os.makedirs(os.path.join(proj, ".sloptimize"))
    d, base, env = b.daemon(proj)
    anchor = os.path.join(b.tmp, "quiet.jsonl")
    open(anchor, "w").close()
    tail = b.spawn(["tail", "-F", "-n0", anchor], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)       # the status request's connection closes, the cursor is saved
    w0, t0 = wakeups(d.pid), wakeups(tail.pid)
    time.sleep(secs)
    w1, t1 = wakeups(d.pid), wakeups(tail.pid)
    per = 60.0 / secs
    print("idle %.0f s, no client: daemon %d wake-ups, tail -F %d" % (secs, w1 - w0, t1 - t0))
    row("idle wake-ups/min, no client", "tail -F %.1f" % ((t1 - t0) * per), "%.1f" % ((w1 - w0) * per), "0")
    watches = [b.spawn([os.path.join(b.build, "sloptimize"), "watch", "--project", proj], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(5)]
    for w in watches:
        Lines(w.stderr).read(time.monotonic() + 20)
    time.sleep(2)
    w0 = wakeups(d.pid)
    time.sleep(secs)
    w1 = wakeups(d.pid)
    print("idle %.0f s, 5 watchers: daemon %d wake-ups" % (secs, w1 - w0))
    row("idle wake-ups/min, 5 watchers", "lws 30 s timer + 30 s pings: 12", "%.1f" % ((w1 - w0) * per),
        "pings only as often as needed (5 min)")
    for w in watches:
        b.stop(w)
    b.stop(tail)
    b.stop(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=8, help="each wrk run")
    ap.add_argument("--rounds", type=int, default=3, help="alternating wrk rounds, best kept")
    ap.add_argument("--probes", type=int, default=500, help="appends timed under load")
    ap.add_argument("--idle", type=float, default=65, help="seconds of each idle window (> 30)")
    ap.add_argument("--only", help="comma-separated: wake,http,status,idle")
    ap.add_argument("--pollers", type=int, default=20, help="/ledger pollers under load")
    ap.add_argument("--rate", type=int, default=10000, help="records/s written under load")
    a = ap.parse_args()
    for tool in ("wrk", "nginx", "tail"):
        if shutil.which(tool) is None:
            sys.exit("bench-server: %s is missing (make deps)" % tool)
    build = os.path.abspath(a.build)
    work = os.path.join(build, "bench-server")
    os.makedirs(work, exist_ok=True)
    only = set((a.only or "wake,http,status,idle").split(","))
    print("%d cores, load %s" % (os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[:3])), flush=True)
    b = Bench(build, work)
    try:
        if "wake" in only:
            wake_under_load(b, a.probes, a.seconds, a.pollers, a.rate)
        if "http" in only:
            http_vs_nginx(b, a.seconds, a.rounds)
        if "status" in only:
            status_under_issues(b, a.seconds)
        if "idle" in only:
            idle(b, a.idle)
    finally:
        b.close()
    print()
    print("measure | anchor | ours | target")
    for r in ROWS:
        print(r)


if __name__ == "__main__":
    main()
