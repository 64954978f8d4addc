// The test library's temporary directories (lib.mjs tmpdir()): removed
// when the process that made them ends having passed, kept and named when
// it failed — a suite's run otherwise leaves a hundred and more in /tmp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { top } from '../lib.mjs';

// A process that makes two directories (one with a file, one nested) and
// ends with `code`; their paths, and what it wrote to stderr.
function run(code) {
  const lib = path.join(top, 'tests', 'lib.mjs');
  const script = `import fs from 'node:fs';
    const { tmpdir } = await import(${JSON.stringify(lib)});
    const a = tmpdir('tmpdir-probe'), b = tmpdir('tmpdir-probe');
    fs.writeFileSync(a + '/f', 'x');
    fs.mkdirSync(b + '/deep/er', { recursive: true });
    console.log(JSON.stringify([a, b]));
    process.exitCode = ${code};`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(r.status, code, r.stderr);
  return { dirs: JSON.parse(r.stdout), stderr: r.stderr };
}

test('a process that passed leaves none of its directories', () => {
  const { dirs, stderr } = run(0);
  assert.equal(dirs.length, 2);
  for (const d of dirs) assert.equal(fs.existsSync(d), false, `${d} is still there`);
  assert.equal(stderr, '');
});

test('a process that failed keeps them, and says where', () => {
  const { dirs, stderr } = run(1);
  try {
    for (const d of dirs) {
      assert.ok(fs.existsSync(d), `${d} was removed`);
      assert.ok(stderr.includes(d), stderr);
    }
    assert.equal(fs.readFileSync(path.join(dirs[0], 'f'), 'utf8'), 'x');
  } finally {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
});
