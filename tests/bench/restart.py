#!/usr/bin/env python3
"""bench-restart: the daemon's restart to ready from its checkpoint
(docs/checkpoints.md) on generated 50 MB and 1 GB ledgers, beside the
first start of the same daemon on the same bytes (a fold from byte 0)
measured in the same run; the daemon's RSS after the start-up fold, beside
the CLI's peak RSS folding the same bytes; and the loop's stall for a
checkpoint's begin (the copy on the loop), beside the write the thread
pool does.

  python3 tests/bench/restart.py BUILD_DIR [MB ...]     (default: 50 1000)

Ready is what /status says (`ready`), polled every millisecond from the
moment the process is spawned; each restart is the best of 5.  Ledgers
are made once by tests/genledger.py under BUILD_DIR/bench-ledger-MB/ (the
same ones tests/bench/fold.sh uses).  Each result is one line

  BENCH measure=… anchor=… ours=… unit=… target=… met=yes|no

and the figures are not a pass/fail test: the machine is shared.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(TOP, sys.argv[1] if len(sys.argv) > 1 else 'build')
SIZES = [int(a) for a in sys.argv[2:]] or [50, 1000]
DAEMON = os.path.join(BUILD, 'sloptimized')
CLI = os.path.join(BUILD, 'sloptimize')
RESTARTS = 5


def ledger(mb):
    d = os.path.join(BUILD, 'bench-ledger-%d' % mb)
    perf = os.path.join(d, '.sloptimize', 'perf.jsonl')
    if not os.path.exists(perf) or os.path.getsize(perf) == 0:
        print('generating %s (once): genledger.py --mb %d --causes 5000' % (d, mb), flush=True)
        subprocess.run([sys.executable, os.path.join(TOP, 'tests', 'genledger.py'), d,
                        '--mb', str(mb), '--causes', '5000'], check=True, stdout=subprocess.DEVNULL)
    with open(perf, 'rb') as f:  # into the page cache
        while f.read(1 << 24):
            pass
    return d


def rss_mb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    return 0.0


class Daemon:
    def __init__(self, project, state):
        self.project, self.state = project, state

    def start(self, deadline_s=600):
        env = dict(os.environ, XDG_STATE_HOME=self.state, DBUS_SESSION_BUS_ADDRESS='')
        self.log = tempfile.TemporaryFile()
        t0 = time.monotonic()
        self.proc = subprocess.Popen([DAEMON, '--project', self.project, '--listen', '127.0.0.1:0',
                                      '--desktop', '0'], env=env, stdout=subprocess.DEVNULL,
                                     stderr=self.log)
        self.base = None
        end = t0 + deadline_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise SystemExit('bench-restart: the daemon exited: ' + self.logtext())
            if self.base is None:
                self.base = self.find()
            if self.base is not None:
                try:
                    if self.status()['ready']:
                        return (time.monotonic() - t0) * 1000
                except OSError:
                    pass
            time.sleep(0.001)
        raise SystemExit('bench-restart: not ready in %d s' % deadline_s)

    def find(self):
        top = os.path.join(self.state, 'sloptimize')
        try:
            for e in os.listdir(top):
                p = os.path.join(top, e, 'daemon.json')
                if os.path.exists(p):
                    with open(p) as f:
                        j = json.load(f)
                    if j.get('pid') == self.proc.pid:
                        return 'http://' + j['listen']
        except (OSError, ValueError):
            pass
        return None

    def status(self):
        with urllib.request.urlopen(self.base + '/api/sloptimize/status', timeout=5) as r:
            return json.load(r)

    def wait(self, fn, what, deadline_s=600):
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            st = self.status()
            if fn(st):
                return st
            time.sleep(0.05)
        raise SystemExit('bench-restart: timed out waiting for ' + what)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=600)
        if self.proc.returncode != 0:
            raise SystemExit('bench-restart: exit %d: %s' % (self.proc.returncode, self.logtext()))

    def logtext(self):
        self.log.seek(0)
        return self.log.read().decode(errors='replace')[-2000:]


def anon_mb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('RssAnon:'):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_ms(pid):
    """CPU time of every thread of the process so far (schedstat: ns)."""
    total = 0
    for t in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/schedstat' % (pid, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e6


def cli_rss_mb(project):
    """The CLI's peak RSS folding the same bytes from byte 0."""
    p = subprocess.Popen([CLI, 'issues', '--json', '--no-checkpoint', '--project', project],
                         stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit('bench-restart: sloptimize issues failed')
    return ru.ru_maxrss / 1024


def bench(name, anchor, ours, unit, target, met):
    print('BENCH measure=%s anchor=%s ours=%s unit=%s target=%s met=%s' %
          (name, anchor, ours, unit, target, 'yes' if met else 'no'), flush=True)


def saved(st, size):
    c = st['checkpoint']
    return c['saves'] > 0 and not c['pending'] and c['lastOffset'] == size


def one(mb):
    project = ledger(mb)
    perf = os.path.join(project, '.sloptimize', 'perf.jsonl')
    size = os.path.getsize(perf)
    state = tempfile.mkdtemp(prefix='bench-restart-')
    try:
        d = Daemon(project, state)
        first = d.start()
        first_cpu = cpu_ms(d.proc.pid)
        rss_first = rss_mb(d.proc.pid)
        anon_first = anon_mb(d.proc.pid)
        st = d.wait(lambda s: saved(s, size), 'the first checkpoint')
        c = st['checkpoint']
        begins, writes = [c['lastBeginMs']], [c['lastWriteMs']]
        ck_bytes = c['lastBytes']
        # two more saves, each after a line appended: the begin's stall
        # on a fold of this size, three times
        with open(perf, 'rb') as f:
            f.seek(0)
            line = f.readline()
        appended = 0
        for _ in range(4):
            saves = c['saves']
            fd = os.open(perf, os.O_WRONLY | os.O_APPEND)
            os.write(fd, line)
            os.close(fd)
            appended += len(line)
            st = d.wait(lambda s: s['checkpoint']['saves'] > saves and not s['checkpoint']['pending'],
                        'a save after an append')
            c = st['checkpoint']
            begins.append(c['lastBeginMs'])
            writes.append(c['lastWriteMs'])
        d.stop()
        restarts, rss_resumed, loads, cpus = [], 0.0, [], []
        for _ in range(RESTARTS):
            ms = d.start()
            st = d.status()
            c = st['checkpoint']
            if not c['resumed']:
                raise SystemExit('bench-restart: the restart did not resume: ' + c['why'])
            restarts.append(ms)
            cpus.append(cpu_ms(d.proc.pid))
            loads.append(c['loadMs'])
            rss_resumed = max(rss_resumed, rss_mb(d.proc.pid))
            d.stop()
        best = min(restarts)
        label = '%dMB' % mb if mb < 1000 else '%gGB' % (mb / 1000)
        with open('/proc/loadavg') as f:
            load = f.read().split()[0]
        print('# %s (load %s): perf.jsonl %d bytes, checkpoint %d bytes; first start %.0f ms '
              '(CPU %.0f ms; RSS %.1f MB, anonymous %.1f MB); restarts %s ms (CPU %s ms; the '
              'checkpoint read on the pool %s ms; RSS %.1f MB); begin on the loop %s ms; '
              'write on the pool %s ms' %
              (label, load, size, ck_bytes, first, first_cpu, rss_first, anon_first,
               ' '.join('%.0f' % r for r in restarts), ' '.join('%.0f' % r for r in cpus),
               ' '.join('%.0f' % r for r in loads), rss_resumed,
               ' '.join('%.2f' % b for b in begins), ' '.join('%.0f' % w for w in writes)),
              flush=True)
        bench('restart-' + label, '%.0f' % first, '%.0f' % best, 'ms', '<=100', best <= 100)
        if mb >= 1000:
            cli = cli_rss_mb(project)
            bench('daemon-rss-' + label, '%.1f' % cli, '%.1f' % rss_first, 'MB', '<=32', rss_first <= 32)
            bench('daemon-anon-' + label, '%.1f' % cli, '%.1f' % anon_first, 'MB', '<=32',
                  anon_first <= 32)
            bench('daemon-rss-resumed-' + label, '%.1f' % cli, '%.1f' % rss_resumed, 'MB', '<=32',
                  rss_resumed <= 32)
            med = sorted(begins)[len(begins) // 2]
            bench('ckpt-begin-stall-' + label, '%.0f' % sorted(writes)[len(writes) // 2], '%.2f' % med,
                  'ms', '<=1', med <= 1)
    finally:
        # the appended lines go: the cached ledger stays the generated one
        if os.path.getsize(perf) > size:
            os.truncate(perf, size)
        shutil.rmtree(state, ignore_errors=True)


if not os.access(DAEMON, os.X_OK):
    raise SystemExit('bench-restart: no %s (make all)' % DAEMON)
for mb in SIZES:
    one(mb)
