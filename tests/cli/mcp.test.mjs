// `sloptimize mcp` driven by the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk: Client + StdioClientTransport), against a
// real project and a real daemon: every tool, tool errors, the wake
// stream with resume and cancellation, and the protocol's own errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

import { CLI, top, Daemon, tmpdir, waitFor, perfPath, appendFromProcess, hitch } from '../lib.mjs';

const genledger = path.join(top, 'tests', 'genledger.py');
let project, state;

before(() => {
  project = tmpdir('mcp');
  state = tmpdir('mcp-state');
  const g = spawnSync('python3', [genledger, project, '--records', '3000', '--causes', '30', '--builds', '4', '--fixes', '3'], { encoding: 'utf8' });
  assert.equal(g.status, 0, g.stderr);
});

after(() => {
  fs.rmSync(project, { recursive: true, force: true });
  fs.rmSync(state, { recursive: true, force: true });
});

function env() {
  return { ...process.env, XDG_STATE_HOME: state, DBUS_SESSION_BUS_ADDRESS: '' };
}

async function connect(dir = project) {
  const transport = new StdioClientTransport({ command: CLI, args: ['mcp', '--project', dir], env: env(), stderr: 'pipe' });
  const client = new Client({ name: 'sloptimize-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', env: env() });
  assert.ok(r.status === 0 || r.status === 1, `sloptimize ${args.join(' ')}: ${r.status} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// A tool's structured result, checked against its text twin.
function structured(r) {
  assert.notEqual(r.isError, true, r.content?.[0]?.text);
  assert.equal(r.content[0].type, 'text');
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  return r.structuredContent;
}

function toolError(r, re) {
  assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r).slice(0, 300)}`);
  assert.match(r.content[0].text, re);
  assert.equal(r.structuredContent, undefined);
}

test('initialize: the current protocol revision, tools with schemas', async () => {
  const { client } = await connect();
  try {
    assert.equal(client.getServerVersion().name, 'sloptimize');
    assert.ok(client.getServerCapabilities().tools);
    assert.match(client.getInstructions(), /record_fix/);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['attribute_cost', 'check_budgets', 'get_bench_ledger', 'get_census', 'get_history', 'get_issue', 'get_issues', 'get_ledger', 'get_profile', 'get_status', 'propose_fix', 'record_fix', 'repro_hitch', 'run_bench', 'run_gate', 'wait_for_wake']);
    for (const t of tools) {
      assert.ok(t.description.length > 40, `${t.name} has a description`);
      assert.equal(t.inputSchema.type, 'object', `${t.name} inputSchema`);
      assert.equal(t.outputSchema.type, 'object', `${t.name} outputSchema`);
      assert.equal(typeof t.annotations.readOnlyHint, 'boolean');
    }
    assert.equal(tools.find((t) => t.name === 'record_fix').annotations.readOnlyHint, false);
    await client.ping();
  } finally {
    await client.close();
  }
});

test('the read tools give what the CLI gives; bad arguments are tool errors', async () => {
  const { client } = await connect();
  try {
    const want = cli('issues', '--json', '--project', project);
    const got = structured(await client.callTool({ name: 'get_issues', arguments: { limit: 0 } }));
    assert.deepEqual(got.issues.map((r) => [r.id, r.count, r.status]), want.issues.map((r) => [r.id, r.count, r.status]));
    assert.deepEqual(got.counts, want.counts);
    const five = structured(await client.callTool({ name: 'get_issues', arguments: { type: 'hitch', limit: 5 } }));
    assert.ok(five.issues.length <= 5 && five.issues.length > 0 && five.issues.every((r) => r.type === 'hitch'));

    const id = want.issues[0].id;
    const one = structured(await client.callTool({ name: 'get_issue', arguments: { id, occurrences: 3 } }));
    assert.equal(one.issue.id, id);
    assert.equal(one.occurrencesTotal, want.issues[0].count);
    assert.equal(one.occurrences.length, Math.min(3, want.issues[0].count));
    const fp = cli('issues', '--fp', id, '--json', '--project', project);
    assert.deepEqual(one.occurrences, fp.occurrences.slice(-3));

    const hist = structured(await client.callTool({ name: 'get_history', arguments: { buckets: 4 } }));
    assert.equal(hist.buckets.length, 4);
    assert.deepEqual(hist.builds, cli('history', '--json', '--buckets', '4', '--project', project).builds);

    const led = structured(await client.callTool({ name: 'get_ledger', arguments: { records: 3, fixes: 1 } }));
    const lines = fs.readFileSync(perfPath(project), 'utf8').trimEnd().split('\n');
    assert.deepEqual(led.perf.records, lines.slice(-3).map((l) => JSON.parse(l)));
    const size = fs.statSync(perfPath(project)).size;
    assert.equal(led.perf.size, size);
    assert.equal(led.perf.offsets[2], size - Buffer.byteLength(lines.at(-1)) - 1);
    assert.equal(led.perf.truncated, true);
    assert.equal(led.fixes.records.length, 1);

    const status = structured(await client.callTool({ name: 'get_status', arguments: {} }));
    assert.equal(status.source, 'files');
    assert.match(status.why, /no daemon serves/);
    assert.equal(status.counts.rows, want.counts.rows);

    toolError(await client.callTool({ name: 'get_issues', arguments: { status: 'maybe' } }), /status is open, pending, fixed or regressed/);
    toolError(await client.callTool({ name: 'get_issues', arguments: { limit: -1 } }), /limit is a whole number/);
    toolError(await client.callTool({ name: 'get_issues', arguments: { tpye: 'hitch' } }), /unknown argument 'tpye'/);
    toolError(await client.callTool({ name: 'get_issues', arguments: { from: 'yesterday' } }), /from is an ISO-8601 time/);
    toolError(await client.callTool({ name: 'get_issue', arguments: {} }), /id is required/);
    toolError(await client.callTool({ name: 'get_issue', arguments: { id: 'nothex' } }), /8-hex/);
    const typo = (id[0] === '0' ? '1' : '0') + id.slice(1);
    if (!want.issues.some((r) => r.id === typo))
      toolError(await client.callTool({ name: 'get_issue', arguments: { id: typo } }), new RegExp(`no issue ${typo}.*nearest known: ${id}`));
    toolError(await client.callTool({ name: 'get_history', arguments: { buckets: 0 } }), /buckets is a whole number from 1/);
    // an unknown tool is a protocol error, not a tool error
    await assert.rejects(client.callTool({ name: 'get_everything', arguments: {} }), /Unknown tool: get_everything/);
  } finally {
    await client.close();
  }
});

test('no ledger: the read tools say so, as tool errors', async () => {
  const empty = tmpdir('mcp-empty');
  const { client } = await connect(empty);
  try {
    toolError(await client.callTool({ name: 'get_issues', arguments: {} }), /no ledger at .* yet/);
    const led = structured(await client.callTool({ name: 'get_ledger', arguments: {} }));
    assert.equal(led.perf.size, 0);
    assert.deepEqual(led.perf.records, []);
    const st = structured(await client.callTool({ name: 'get_status', arguments: {} }));
    assert.equal(st.files.ledger, false);
    toolError(await client.callTool({ name: 'record_fix', arguments: { title: 't', footprints: ['81e5eb9b'] } }), /no ledger yet/);
  } finally {
    await client.close();
    fs.rmSync(empty, { recursive: true, force: true });
  }
});

test('with a daemon: status, fixes judged honestly, the wake stream', async () => {
  const d = await new Daemon(project, { state }).start();
  const { client } = await connect();
  try {
    await d.caughtUp();
    const st = structured(await client.callTool({ name: 'get_status', arguments: {} }));
    assert.equal(st.source, 'daemon');
    assert.equal(st.daemon.pid, d.proc.pid);

    // record_fix: the CLI's checks (an unknown footprint names the nearest)
    const rows = cli('issues', '--json', '--project', project).issues;
    const id = rows.find((r) => r.status === 'open').id;
    const lines = () => fs.readFileSync(path.join(project, '.sloptimize', 'fixes.jsonl'), 'utf8').split('\n').length;
    const n = lines();
    toolError(await client.callTool({ name: 'record_fix', arguments: { title: 'typo', footprints: ['deadbeef'] } }),
      /footprint deadbeef is in no record of the ledger; nearest known: [0-9a-f]{8}.*"force": true/);
    toolError(await client.callTool({ name: 'record_fix', arguments: { footprints: [id] } }), /title is required/);
    toolError(await client.callTool({ name: 'record_fix', arguments: { title: 't', footprints: ['xyz'] } }), /8-hex/);
    toolError(await client.callTool({ name: 'record_fix', arguments: { title: 't', footprints: [id], after: 'no-such-build' } }), /no such build/);
    assert.equal(lines(), n, 'a refused fix was written');
    const fix = structured(await client.callTool({ name: 'record_fix', arguments: { title: 'warm the shader', footprints: [id], commit: 'abc1234', files: ['src/a.js'] } }));
    assert.equal(fix.status, 'applied');
    assert.equal(fix.after, null);
    assert.equal(typeof fix.before.build, 'string');
    const forced = structured(await client.callTool({ name: 'record_fix', arguments: { title: 'on purpose', footprints: ['deadbeef'], force: true } }));
    assert.equal('force' in forced, false);
    const prop = structured(await client.callTool({ name: 'propose_fix', arguments: { title: 'or this', footprints: [id] } }));
    assert.equal(prop.status, 'proposed');
    const judged = await waitFor(async () => {
      const r = structured(await client.callTool({ name: 'get_issue', arguments: { id } }));
      return r.issue.fixes.some((f) => f.id === fix.id) && r;
    }, { what: 'the fix in the catalogue' });
    assert.equal(judged.issue.status, 'pending');
    assert.equal(judged.issue.fixes.find((f) => f.id === fix.id).pending, true);
    assert.ok(judged.issue.proposals.some((f) => f.id === prop.id));

    // the API takes the same rule: deadbeef is refused unless force
    const post = (body) => fetch(`${d.base}/api/sloptimize/fixes`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://localhost:5173' }, body: JSON.stringify(body) });
    const refused = await post({ title: 'typo', footprints: ['deadbeef'] });
    assert.equal(refused.status, 400);
    assert.match((await refused.json()).error.message, /deadbeef is in no record.*nearest known/);
    assert.equal((await post({ title: 'typo', footprints: ['deadbeef'], force: true })).status, 201);

    // wait_for_wake: from just before the end of the file, so nothing
    // appended after this point can be missed by a late connection
    const s = await d.status();
    const since = `${s.generation}:${s.files.perf.cursor - 1}`;
    let done = false;
    const waiting = client.callTool({ name: 'wait_for_wake', arguments: { since, timeout_ms: 20000 } }).finally(() => { done = true; });
    // the server still answers while it waits
    await client.ping();
    structured(await client.callTool({ name: 'get_issues', arguments: { limit: 1 } }));
    assert.equal(done, false, 'wait_for_wake answered before any wake');
    const offset = fs.statSync(perfPath(project)).size;
    appendFromProcess(perfPath(project), hitch(151.5) + '\n');
    const w = structured(await waiting);
    assert.equal(w.timedOut, false);
    assert.equal(w.connected, true);
    assert.equal(w.wakes.length, 1);
    assert.equal(w.wakes[0].type, 'wake');
    assert.equal(w.wakes[0].id, `${s.generation}:${offset}`);
    assert.equal(w.wakes[0].record.value, 151.5);
    assert.equal(w.wakes[0].record.type, 'hitch');
    assert.match(w.wakes[0].line, /hitch 151\.5ms/);
    assert.equal(w.next, w.wakes[0].id);

    // resuming from next: nothing new, a timeout with next unchanged
    const quiet = structured(await client.callTool({ name: 'wait_for_wake', arguments: { since: w.next, timeout_ms: 300 } }));
    assert.deepEqual([quiet.timedOut, quiet.wakes.length, quiet.next], [true, 0, w.next]);
    // resuming from before it: replayed, once
    const again = structured(await client.callTool({ name: 'wait_for_wake', arguments: { since, timeout_ms: 5000 } }));
    assert.deepEqual(again.wakes.map((x) => x.id), [w.next]);
    // a burst comes back together, up to max
    const off2 = fs.statSync(perfPath(project)).size;
    appendFromProcess(perfPath(project), [hitch(120), hitch(130), hitch(140)].join('\n') + '\n');
    const burst = structured(await client.callTool({ name: 'wait_for_wake', arguments: { since: w.next, max: 2, timeout_ms: 10000 } }));
    assert.equal(burst.wakes.length, 2);
    assert.equal(burst.wakes[0].id, `${s.generation}:${off2}`);
    const rest = structured(await client.callTool({ name: 'wait_for_wake', arguments: { since: burst.next, timeout_ms: 10000 } }));
    assert.ok(rest.wakes.length >= 1 && rest.wakes.every((x) => x.id === null || x.id > burst.next));

    // a cancelled wait gets no answer and frees the slot for the next one
    const ac = new AbortController();
    const cancelled = client.callTool({ name: 'wait_for_wake', arguments: { since: rest.next, timeout_ms: 20000 } }, undefined, { signal: ac.signal });
    await client.ping();
    ac.abort('not needed');
    await assert.rejects(cancelled, /abort|not needed/i);
    const after = structured(await client.callTool({ name: 'wait_for_wake', arguments: { since: rest.next, timeout_ms: 200 } }));
    assert.equal(after.timedOut, true);
    toolError(await client.callTool({ name: 'wait_for_wake', arguments: { since: 'yesterday' } }), /since is a wake id/);
  } finally {
    await client.close();
    await d.stop();
  }
  // and without a daemon, a wait says so at once
  const { client: c2 } = await connect();
  try {
    toolError(await c2.callTool({ name: 'wait_for_wake', arguments: { timeout_ms: 100 } }), /no daemon serves|unreachable|daemon/);
  } finally {
    await c2.close();
  }
});

// The protocol's own errors, line by line: what no SDK client would send.
function raw(lines, { dir = project, timeout = 10000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(CLI, ['mcp', '--project', dir], { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '', err = '';
    const t = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`mcp did not end at EOF within ${timeout} ms\n${err}`)); }, timeout);
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, msgs: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)), err });
    });
    p.stdin.end(lines.join('\n') + '\n');
  });
}

test('protocol errors are structured JSON-RPC errors; EOF ends the server', async () => {
  const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };
  const r = await raw([
    JSON.stringify({ jsonrpc: '2.0', id: 'early', method: 'tools/list' }),
    JSON.stringify(init),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    'this is not JSON',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    '"a string"',
    '{"jsonrpc":"1.0","id":2,"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    '{"jsonrpc":"2.0","id":3,"method":"resources/list"}',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}',
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get_issues","arguments":[1]}}',
    '{"jsonrpc":"2.0","method":"no/such/notification"}',
    '{"jsonrpc":"2.0","id":7,"result":{}}',
    '',
    '{"jsonrpc":"2.0","id":"x'.padEnd(9 * 1024 * 1024, 'x') + '"}',
    '{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}',
    '{"jsonrpc":"2.0","id":9,"method":"ping"}\r',
  ]);
  assert.equal(r.code, 0, r.err);
  const byId = (id) => r.msgs.find((m) => m.id === id);
  assert.equal(byId('early').error.code, -32600);
  assert.equal(byId(0).result.protocolVersion, LATEST_PROTOCOL_VERSION);
  const nulls = r.msgs.filter((m) => m.id === null).map((m) => m.error.code);
  assert.deepEqual(nulls, [-32700, -32600, -32600, -32600, -32600]);	// not JSON, batch, not an object, null id, 9 MiB
  assert.equal(byId(2).error.code, -32600);
  assert.equal(byId(3).error.code, -32601);
  assert.equal(byId(4).error.code, -32602);
  assert.equal(byId(5).error.code, -32602);
  assert.equal(byId(6).result.isError, true);
  assert.equal(byId(7), undefined, 'a response from the client was answered');
  assert.equal(byId(8).error.code, -32600);	// already initialized
  assert.deepEqual(byId(9).result, {});
  assert.equal(r.msgs.length, 14);
  // an older revision is spoken as asked: no structured content there
  const old = await raw([
    JSON.stringify({ ...init, params: { ...init.params, protocolVersion: '2025-03-26' } }),
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_history","arguments":{"buckets":2}}}',
  ]);
  assert.equal(old.msgs[0].result.protocolVersion, '2025-03-26');
  assert.equal(old.msgs[1].result.tools[0].outputSchema, undefined);
  assert.equal(old.msgs[2].result.structuredContent, undefined);
  assert.equal(JSON.parse(old.msgs[2].result.content[0].text).buckets.length, 2);
  // an unknown revision gets ours
  const unk = await raw([JSON.stringify({ ...init, params: { ...init.params, protocolVersion: '2099-01-01' } })]);
  assert.equal(unk.msgs[0].result.protocolVersion, LATEST_PROTOCOL_VERSION);
  // EOF with nothing in hand: exit 0 at once
  const none = await raw([], { timeout: 5000 });
  assert.deepEqual([none.code, none.msgs.length], [0, 0]);
});

// Raw bytes in, raw bytes out: each output line must be valid UTF-8 JSON
// text holding one JSON-RPC message (issue 23: ids near 2^53 came back
// rounded, invalid UTF-8 was echoed raw, a raw NUL cut a method to
// "ping", and "id": 8.4e52 was cast to an integer — undefined).
function rawBytes(lines, { dir = project, timeout = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(CLI, ['mcp', '--project', dir], { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    let err = '';
    const t = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`mcp did not end at EOF within ${timeout} ms\n${err}`)); }, timeout);
    p.stdout.on('data', (d) => out.push(d));
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code, signal) => {
      clearTimeout(t);
      const bytes = Buffer.concat(out);
      const strict = new TextDecoder('utf-8', { fatal: true });
      const texts = [];
      let start = 0;
      for (let i = 0; i < bytes.length; i++) {
        if (bytes[i] !== 10) continue;
        texts.push(strict.decode(bytes.subarray(start, i)));	// throws on invalid UTF-8
        start = i + 1;
      }
      assert.equal(start, bytes.length, 'every output line ends with a newline');
      const msgs = texts.map((l) => {
        const m = JSON.parse(l);
        assert.equal(m.jsonrpc, '2.0');
        assert.ok('id' in m && (m.result !== undefined) !== (m.error !== undefined), l);
        return m;
      });
      resolve({ code, signal, texts, msgs, err });
    });
    p.stdin.end(Buffer.concat(lines.map((l) => Buffer.concat([Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from('\n')]))));
  });
}

test('raw requests: ids as written, strict JSON text in (-32700), valid JSON text out, no undefined casts', async () => {
  const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  const euro = '€'.repeat(100);	// 300 bytes: "%.200s" would cut inside a character
  const r = await rawBytes([
    init,
    '{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}',
    '{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}',
    '{"jsonrpc":"2.0","id":-123456789012345678901234567890,"method":"ping"}',
    '{"jsonrpc":"2.0","id":8.4e52,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    '{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":10,"method":"'), Buffer.from([0xff, 0xfe]), Buffer.from('/x"}')]),
    Buffer.from('{"jsonrpc":"2.0","id":11,"method":"ping\0junk"}', 'latin1'),
    '{"jsonrpc":"2.0","id":12,"method":"ping\\u0000junk"}',
    '{"jsonrpc":"2.0","id":13,"id":14,"method":"ping"}',
    `{"jsonrpc":"2.0","id":15,"method":"${euro}"}`,
    `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"${euro}"}}`,
    '{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"get_history","arguments":{"buckets":8.4e52}}}',
    '{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"get_history","arguments":{"buckets":-1e300}}}',
    '{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"get_history","arguments":{"buckets":2.0}}}',
  ]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.signal, null);
  const line = (id) => r.texts.find((t) => t.includes(`"id":${id},`) || t.includes(`"id":${id}}`));
  // the id's own text, not a double's
  for (const id of ['9007199254740991', '9007199254740993', '-123456789012345678901234567890', '8.4e52']) {
    const t = line(id);
    assert.ok(t, `an answer with id ${id}: ${r.texts.join('\n')}`);
    assert.deepEqual(JSON.parse(t).result, {}, t);
  }
  assert.ok(!r.texts.some((t) => /e\+15/.test(t)), 'no id rounded to 15 digits');
  const nulls = r.msgs.filter((m) => m.id === null).map((m) => [m.error.code, m.error.message]);
  assert.deepEqual(nulls.map(([c]) => c), [-32600, -32700, -32700, -32700, -32600], JSON.stringify(nulls));
  assert.match(nulls[0][1], /id is a string or an integer/);	// 1.5
  assert.match(nulls[1][1], /number out of range/);			// 1e400
  assert.match(nulls[2][1], /invalid UTF-8/);				// \xff\xfe, not echoed
  assert.match(nulls[3][1], /NUL byte|control character/);		// a raw NUL: no answer as "ping"
  assert.match(nulls[4][1], /id is named more than once/);
  assert.equal(r.msgs.find((m) => m.id === 11), undefined, 'the raw NUL cut the method to "ping"');
  assert.equal(r.msgs.find((m) => m.id === 12).error.code, -32600);
  assert.match(r.msgs.find((m) => m.id === 12).error.message, /u0000/);
  // a name cut at 200 bytes inside a character is still UTF-8 (checked
  // by the strict decoder above)
  assert.equal(r.msgs.find((m) => m.id === 15).error.code, -32601);
  assert.equal(r.msgs.find((m) => m.id === 16).error.code, -32602);
  for (const id of [17, 18]) {
    const a = r.msgs.find((m) => m.id === id);
    assert.equal(a.result.isError, true);
    assert.match(a.result.content[0].text, /buckets is a whole number from 1 to 1000/);
  }
  assert.equal(structured(r.msgs.find((m) => m.id === 19).result).buckets.length, 2);
});

test('the SDK client: an argument far out of range is a tool error, a \\u0000 is refused with the request\'s id', async () => {
  const { client } = await connect();
  try {
    toolError(await client.callTool({ name: 'get_history', arguments: { buckets: 8.4e52 } }), /buckets is a whole number from 1 to 1000/);
    toolError(await client.callTool({ name: 'get_issues', arguments: { limit: -8.4e52 } }), /limit is a whole number/);
    await assert.rejects(client.callTool({ name: 'propose_fix', arguments: { title: 'cut\u0000here', footprints: ['0badf00d'] } }),
      (e) => e.code === -32600 && /u0000/.test(e.message));
    assert.equal(structured(await client.callTool({ name: 'get_history', arguments: { buckets: 3 } })).buckets.length, 3);
  } finally {
    await client.close();
  }
});

// Issue 22: what the agent reads carries a fix's evidence and the regime.
test('fix verdicts with their intervals and the regime reach the agent', async () => {
  const dir = tmpdir('mcp-verdicts');
  const fx = path.join(top, 'tests', 'fixtures');
  fs.mkdirSync(path.join(dir, '.sloptimize'));
  // judged-noise, its heartbeats made SwiftShader's from b4 on
  const lines = fs.readFileSync(path.join(fx, 'judged-noise.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  let sw = false;
  for (const r of lines) {
    if (r.build === 'b4') sw = true;
    if (sw && r.type === 'heartbeat') r.regime = 'software';
  }
  fs.writeFileSync(perfPath(dir), lines.map((r) => JSON.stringify(r)).join('\n') + '\n');
  fs.copyFileSync(path.join(fx, 'judged-noise.fixes.jsonl'), path.join(dir, '.sloptimize', 'fixes.jsonl'));
  const { client } = await connect(dir);
  try {
    const got = structured(await client.callTool({ name: 'get_issues', arguments: { limit: 0 } }));
    assert.equal(got.regime.timings, 'software');
    assert.match(got.regime.note, /software renderer .* not to be trusted/);
    const fix = (id) => got.issues.flatMap((r) => r.fixes).find((f) => f.id === id);
    const noop = fix('f2000001').judgement;
    assert.equal(noop.verdict, 'no-detectable-change', 'the build label only');
    assert.ok(noop.wasInterval && noop.nowInterval, 'was and now carry their intervals');
    assert.equal(fix('f2000002').judgement.verdict, 'improved');
    assert.equal(fix('f2000003').judgement.verdict, 'software');
    assert.equal(fix('f2000003').judgement.deltaMs, null, 'no delta against a software renderer');
    const one = structured(await client.callTool({ name: 'get_issue', arguments: { id: 'efd9b849' } }));
    assert.deepEqual(one.occurrences.map((o) => o.script && o.script.durationMs), [120.5, 131]);
    assert.equal(one.regime.timings, 'software');
  } finally {
    await client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
