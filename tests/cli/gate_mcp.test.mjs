// The MCP tool run_gate, driven by the official MCP SDK client: listed,
// not read-only; it compares and never records (a `record` argument is a
// tool error, and nothing is written); its verdicts are the CLI's
// documents (schemas/gate-output.json) — no golden, a golden edited by
// hand, no frame to capture — and bad arguments are tool errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { CLI, top, tmpdir } from '../lib.mjs';

const fixtures = path.join(top, 'tests', 'fixtures', 'ssim');
let project, client;

function validate(doc) {
  const file = path.join(project, 'doc.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  const r = spawnSync('node', [path.join(top, 'tests', 'validate.mjs'), path.join(top, 'schemas', 'gate-output.json'), file], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

function structured(r) {
  assert.notEqual(r.isError, true, r.content?.[0]?.text);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  validate(r.structuredContent);
  return r.structuredContent;
}

function toolError(r, re) {
  assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r).slice(0, 300)}`);
  assert.match(r.content[0].text, re);
}

function cliGate(...args) {
  return spawnSync(CLI, ['gate', '--project', project, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, USER: 'tester' } });
}

before(async () => {
  project = tmpdir('gate-mcp');
  const transport = new StdioClientTransport({ command: CLI, args: ['mcp', '--project', project], stderr: 'pipe' });
  client = new Client({ name: 'sloptimize-test', version: '1.0.0' });
  await client.connect(transport);
});

after(async () => {
  await client?.close();
  fs.rmSync(project, { recursive: true, force: true });
});

test('run_gate is listed, writes (its pictures), and records nothing', async () => {
  const { tools } = await client.listTools();
  const t = tools.find((x) => x.name === 'run_gate');
  assert.ok(t, 'run_gate listed');
  assert.deepEqual(t.inputSchema.required, ['scene']);
  assert.equal(t.inputSchema.properties.record, undefined, 'no record argument offered');
  assert.equal(t.annotations.readOnlyHint, false);
  assert.match(t.description, /never record/i);

  toolError(await client.callTool({ name: 'run_gate', arguments: { scene: 'crates', record: true } }), /recorded by a person/);
  assert.equal(fs.existsSync(path.join(project, '.sloptimize', 'goldens')), false);
  assert.equal(fs.existsSync(path.join(project, '.sloptimize', 'goldens.jsonl')), false);
  toolError(await client.callTool({ name: 'run_gate', arguments: {} }), /scene is required/);
  toolError(await client.callTool({ name: 'run_gate', arguments: { scene: '../etc' } }), /a gate scene is named by a letter or digit/);
  toolError(await client.callTool({ name: 'run_gate', arguments: { scene: 'crates', threshold: 1.5 } }), /threshold/);
  toolError(await client.callTool({ name: 'run_gate', arguments: { scene: 'crates', frame: 'x.png' } }), /unknown argument 'frame'/);
});

test('run_gate verdicts: no golden, no frame, a golden edited by hand', async () => {
  const none = structured(await client.callTool({ name: 'run_gate', arguments: { scene: 'crates' } }));
  assert.equal(none.verdict, 'no-golden');
  assert.equal(none.exit, 4);
  assert.match(none.error, /gate --record --scene crates/);

  // a person records one (here from a file, with --yes)
  const rec = cliGate('--record', '--yes', '--scene', 'crates', '--frame', path.join(fixtures, 'tint.b.png'));
  assert.equal(rec.status, 0, rec.stderr);

  // no browser behind the capture in this test: the environment's, never a pass
  const env = structured(await client.callTool({ name: 'run_gate', arguments: { scene: 'crates', threshold: 0.99 } }));
  assert.equal(env.verdict, 'environment');
  assert.equal(env.exit, 4);
  assert.equal(env.threshold, 0.99);
  assert.equal(typeof env.error, 'string');
  assert.equal(env.ssim, undefined);
  assert.equal(env.golden.recorded.who, 'tester');
  assert.equal(env.golden.sha256, env.golden.recorded.sha256);

  fs.copyFileSync(path.join(fixtures, 'tint.a.png'), path.join(project, '.sloptimize', 'goldens', 'crates.png'));
  const edited = structured(await client.callTool({ name: 'run_gate', arguments: { scene: 'crates' } }));
  assert.equal(edited.verdict, 'golden-changed');
  assert.equal(edited.exit, 3);
  assert.match(edited.error, /CHANGED OUTSIDE `gate --record`/);
  assert.notEqual(edited.golden.sha256, edited.golden.recorded.sha256);
  // the same document as the CLI's
  const viaCli = cliGate('--scene', 'crates', '--json');
  assert.equal(viaCli.status, 3);
  assert.deepEqual(JSON.parse(viaCli.stdout), edited);
});
