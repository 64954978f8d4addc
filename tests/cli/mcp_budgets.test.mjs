// The MCP tools of the budgets (docs/budgets.md, docs/agents.md),
// get_profile and check_budgets, driven by the official MCP SDK client
// against `sloptimize mcp` and a profile.json the real daemon wrote: the
// same checks and exit meanings as `sloptimize check --json`, as
// structured results; bad arguments are tool errors.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { CLI, Daemon, appendFromProcess, perfPath, tmpdir, top, waitFor } from '../lib.mjs';

let daemon = null;
after(async () => { if (daemon) await daemon.stop(); });

async function connect(dir, env) {
  const transport = new StdioClientTransport({ command: CLI, args: ['mcp', '--project', dir], env, stderr: 'pipe' });
  const client = new Client({ name: 'sloptimize-budgets-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function structured(r) {
  assert.notEqual(r.isError, true, r.content?.[0]?.text);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  return r.structuredContent;
}

function toolError(r, re) {
  assert.equal(r.isError, true, JSON.stringify(r).slice(0, 300));
  assert.match(r.content[0].text, re);
}

function valid(schema, doc) {
  const r = spawnSync(process.execPath, [path.join(top, 'tests', 'validate.mjs'), path.join(top, 'schemas', schema), '-'],
    { input: JSON.stringify(doc), encoding: 'utf8' });
  assert.equal(r.status, 0, `${schema}: ${r.stderr}`);
}

// What the CLI says, for comparing: the document and the exit code.
function cliCheck(dir, env, ...args) {
  const r = spawnSync(CLI, ['check', '--json', '--project', dir, ...args], { encoding: 'utf8', env });
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.exit, r.status);
  return doc;
}

// The parts of a check document that do not move with the clock.
const stable = ({ measurement, ...rest }) => ({ ...rest, measurement: measurement && { ...measurement, ageMs: undefined } });

test('get_profile and check_budgets: the same answers as the CLI, with its exit codes', async () => {
  const dir = tmpdir('mcp-budgets');
  fs.mkdirSync(path.join(dir, '.sloptimize'));
  fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'),
    JSON.stringify({ 'perf.budget.draw_calls': 30, 'perf.budget.frame_ms_p95': 16.7 }));
  daemon = await new Daemon(dir, { args: ['--desktop', '0'] }).start();
  const env = daemon.env;
  const client = await connect(dir, env);
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('get_profile') && names.includes('check_budgets'), names.join(' '));
    for (const t of tools.filter((t) => ['get_profile', 'check_budgets'].includes(t.name))) {
      assert.equal(t.annotations.readOnlyHint, true);
      assert.equal(t.outputSchema.type, 'object');
    }

    // nothing measured yet: exit 4 as a result, never a pass
    let p = structured(await client.callTool({ name: 'get_profile', arguments: {} }));
    assert.equal(p.exit, 4);
    assert.match(p.error, /no .*profile\.json yet: sloptimized writes it/);
    let c = structured(await client.callTool({ name: 'check_budgets', arguments: {} }));
    valid('check.json', c);
    assert.equal(c.exit, 4);
    assert.equal(c.result, 'no-measurement');

    // the game's heartbeat, folded by the daemon
    appendFromProcess(perfPath(dir), JSON.stringify({ type: 'heartbeat', at: new Date().toISOString(), regime: 'software',
      frame: { medianMs: 16, p95Ms: 41.5 }, render: { calls: 94, triangles: 1128 }, memory: { programs: 3 } }) + '\n');
    await waitFor(() => fs.existsSync(path.join(dir, '.sloptimize', 'profile.json')), { what: 'profile.json' });
    p = structured(await client.callTool({ name: 'get_profile', arguments: {} }));
    assert.equal(p.exit, 0);
    assert.equal(p.regime, 'software: timings not trusted');
    assert.equal(p.profile.render.calls, 94);
    assert.ok(p.ageMs >= 0 && p.ageMs < 600000, String(p.ageMs));
    valid('profile.json', p.profile);

    c = structured(await client.callTool({ name: 'check_budgets', arguments: {} }));
    valid('check.json', c);
    assert.equal(c.exit, 1);
    assert.equal(c.result, 'breached');
    assert.deepEqual(c.breached, ['perf.budget.draw_calls']);
    assert.equal(c.budgets.find((b) => b.key === 'perf.budget.frame_ms_p95').status, 'not-judged');
    assert.deepEqual(stable(c), stable(cliCheck(dir, env)));
    c = structured(await client.callTool({ name: 'check_budgets', arguments: { counters_only: true, max_age: '10m' } }));
    assert.equal(c.exit, 1);
    assert.equal(c.countersOnly, true);
    assert.equal(c.maxAgeMs, 600000);
    assert.deepEqual(stable(c), stable(cliCheck(dir, env, '--counters-only', '--max-age', '10m')));

    // a bench through the bench verb: no dev server here, so 4
    c = structured(await client.callTool({ name: 'check_budgets', arguments: { bench: 'crates' } }));
    assert.equal(c.exit, 4);
    assert.match(c.error, /bench of scene 'crates': .*(dev\.json|--url)/);

    // a malformed budgets file: 2, its faults by key
    fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{"perf.budget.draw_calls": {"max": 30, "levle": "warn"}}');
    c = structured(await client.callTool({ name: 'check_budgets', arguments: {} }));
    assert.equal(c.exit, 2);
    assert.deepEqual(c.budgetsFile.faults, ['perf.budget.draw_calls.levle: unknown (a budget has "max" and "level" only)']);
    // none declared: 0 with the warning
    fs.writeFileSync(path.join(dir, 'sloptimize.budgets.json'), '{}');
    c = structured(await client.callTool({ name: 'check_budgets', arguments: {} }));
    assert.equal(c.exit, 0);
    assert.equal(c.result, 'no-budgets');
    assert.match(c.warnings[0], /no budgets declared/);

    // bad arguments: tool errors the model can read and correct
    toolError(await client.callTool({ name: 'check_budgets', arguments: { max_age: 'soon' } }), /max_age is 30s, 500ms, 5m, 2h, 1d or off/);
    toolError(await client.callTool({ name: 'check_budgets', arguments: { countersOnly: true } }), /unknown argument 'countersOnly'/);
    toolError(await client.callTool({ name: 'check_budgets', arguments: { counters_only: 'yes' } }), /counters_only is true or false/);
    toolError(await client.callTool({ name: 'get_profile', arguments: { x: 1 } }), /unknown argument 'x'/);
  } finally {
    await client.close();
  }
});
