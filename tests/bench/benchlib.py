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
import signal
import socket
import subprocess
import sys
import time

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


class Daemon:
    """sloptimized on a project with a state directory of its own, ready
    when its sd_notify READY=1 arrives on a NOTIFY_SOCKET of ours (its
    log goes beside that socket).  The desktop is off; args are added
    (wake.py turns the rate limits off: every meaningful record wakes)."""

    def __init__(self, build, project, state, sock_path, args=()):
        self.build, self.project, self.state, self.sock_path = build, project, state, sock_path
        self.args = list(args)
        self.env = None

    def start(self, deadline_s=600):
        """Start; return seconds from exec to READY=1."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if os.path.exists(self.sock_path):
            os.unlink(self.sock_path)
        sock.bind(self.sock_path)
        env = self.env = dict(os.environ, XDG_STATE_HOME=self.state,
                              NOTIFY_SOCKET=self.sock_path, DBUS_SESSION_BUS_ADDRESS="")
        self.log = open(os.path.join(os.path.dirname(self.sock_path), "daemon.log"), "ab")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([os.path.join(self.build, "sloptimized"), "--project",
                                      self.project, "--listen", "127.0.0.1:0", "--desktop", "0"] + self.args,
                                     env=env, stderr=self.log, stdout=subprocess.DEVNULL)
        end = time.monotonic() + deadline_s
        try:
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no READY=1 within %d s" % deadline_s)
                sock.settimeout(min(left, 1.0))
                try:
                    msg = sock.recv(4096)
                except socket.timeout:
                    if self.proc.poll() is not None:
                        raise RuntimeError("sloptimized exited %d before ready" % self.proc.returncode)
                    continue
                if b"READY=1" in msg.split(b"\n"):
                    return time.perf_counter() - t0
        finally:
            sock.close()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(60)
        self.log.close()
        if rc != 0:
            raise RuntimeError("sloptimized exited %d on SIGTERM" % rc)


    def client_env(self):
        """The environment for a client (`sloptimize watch --project`
        finds the daemon through the same state directory)."""
        e = dict(self.env)
        e.pop("NOTIFY_SOCKET", None)
        return e

    def kill(self):
        if getattr(self, "proc", None) is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def watch(build, daemon, args=(), deadline_s=20):
    """A real `sloptimize watch`, once it says it is connected."""
    p = subprocess.Popen([os.path.join(build, "sloptimize"), "watch", "--project", daemon.project]
                         + list(args), env=daemon.client_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    end = time.monotonic() + deadline_s
    while b"connected to" not in read_line(p.stderr, end):
        pass
    return p


_pending = {}


def read_line(stream, deadline):
    """One line from a pipe, read in whole chunks (the harness must not
    cost more than what it measures)."""
    import select
    fd = stream.fileno()
    buf = _pending.get(fd, b"")
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError("no line before the deadline")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError("stream closed")
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    _pending[fd] = rest
    return line


def rss_kb(pid, field="VmHWM"):
    """VmHWM (peak) or VmRSS of a live process, in kB."""
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith(field + ":"):
                return int(l.split()[1])
    return 0
