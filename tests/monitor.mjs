// A simulator of a coding agent's monitor, with Claude Code's Monitor
// rules (issue 10): each stdout line of the watched command is an event;
// a line over 500 characters is cut; lines that arrive within 200 ms of
// the first line of an event are merged into it; events draw on a budget
// of 10, refilled 1 per 2 s — an event that finds it empty is suppressed;
// after 30 s of suppression the monitor is stopped.  Suppression starts
// with the first suppressed event and ends when an event leaves at least
// one token in the budget (an event that just scrapes through a flood
// does not end it).
//
// It reads `sloptimize watch` stdout with real timing: each chunk is
// timestamped as it arrives.  `scale` maps wall time to session time for a
// replay played `scale` times faster (`sloptimize replay --speed`), so
// the rules are applied to the session as it was played, not to the
// compressed run.
import { spawn } from 'node:child_process';

export const RULES = { cutAt: 500, mergeMs: 200, budget: 10, refillMs: 2000, stopAfterMs: 30000 };

export class Monitor {
  constructor({ scale = 1, rules = RULES, clock = () => performance.now() } = {}) {
    this.scale = scale;
    this.rules = rules;
    this.clock = clock;
    this.t0 = null;
    this.events = [];         // { t, lines: [{ text, t }] } delivered
    this.suppressed = [];     // { t, lines } that found the budget empty
    this.cut = [];            // lines longer than cutAt (as received)
    this.tokens = rules.budget;
    this.minTokens = rules.budget;
    this.lastRefill = 0;
    this.open = null;         // the event collecting lines
    this.suppressedSince = null;
    this.stopped = false;
    this.received = 0;        // lines given to it, whatever became of them
  }

  // Session time (ms) of a wall-clock reading.
  now(wall = this.clock()) {
    if (this.t0 === null) this.t0 = wall;
    return (wall - this.t0) * this.scale;
  }

  refill(t) {
    const r = this.rules;
    this.tokens = Math.min(r.budget, this.tokens + (t - this.lastRefill) / r.refillMs);
    this.lastRefill = t;
  }

  // One line as the monitor receives it, at session time t.
  line(text, t) {
    this.received++;
    if (this.stopped) return;
    const chars = [...text];
    if (chars.length > this.rules.cutAt) {
      this.cut.push(text);
      text = chars.slice(0, this.rules.cutAt).join('');
    }
    if (this.open && t - this.open.t <= this.rules.mergeMs) {
      this.open.lines.push({ text, t });
      return;
    }
    this.open = { t, lines: [{ text, t }] };
    this.refill(t);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.minTokens = Math.min(this.minTokens, this.tokens);
      this.events.push(this.open);
      // an event scraped out of an empty budget does not end a flood:
      // suppression goes on until the budget has room again
      if (this.tokens >= 1) this.suppressedSince = null;
      return;
    }
    this.suppressed.push(this.open);
    if (this.suppressedSince === null) this.suppressedSince = t;
    else if (t - this.suppressedSince >= this.rules.stopAfterMs) this.stopped = true;
  }

  // Feed it a stream (a child's stdout): lines split on '\n', each
  // timestamped when its chunk arrived.
  read(stream) {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (d) => {
      const t = this.now();
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        this.line(buf.slice(0, i), t);
        buf = buf.slice(i + 1);
      }
    });
  }

  // Every line delivered, with the session time of the event it woke.
  lines() {
    return this.events.flatMap((e) => e.lines.map((l) => ({ ...l, event: e.t })));
  }

  summary() {
    return {
      events: this.events.length, lines: this.lines().length, suppressed: this.suppressed.length,
      cut: this.cut.length, minTokens: Math.round(this.minTokens * 100) / 100, stopped: this.stopped,
    };
  }
}

// `sloptimize watch` (plain text, as the agent runs it) under a Monitor.
export function monitorWatch(cli, args, env, opts) {
  const m = new Monitor(opts);
  const proc = spawn(cli, ['watch', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  m.read(proc.stdout);
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  return { monitor: m, proc, stderr: () => err, exited: new Promise((r) => proc.on('exit', r)) };
}
