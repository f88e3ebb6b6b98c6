import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { listExperiments } from '../lib/experiments/configs';
import { tmpDir } from './helpers';

// `toolrl reproduce --preset smoke` runs every registered experiment end to end (two processes at a time),
// then builds the report: the whole study's code paths, with nothing learned. It goes through the
// installed entry point (bin/toolrl.js, what `npx toolrl` runs), whose module hooks differ from
// `node --import tsx`.
test('reproduce --preset smoke runs every config and builds the report', { timeout: 15 * 60 * 1000 }, () => {
  const root = tmpDir('reproduce');
  const out = path.join(root, 'report');
  const r = spawnSync(process.execPath, [path.join('bin', 'toolrl.js'), 'reproduce', '--preset', 'smoke',
    '--results', root, '--out', out, '--no-png'], { encoding: 'utf8', env: { ...process.env, TOOLRL_BACKEND: 'wasm' } });
  assert.equal(r.status, 0, `reproduce failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  for (const spec of listExperiments().filter((e) => e.group !== 'base')) {
    const summary = path.join(root, 'smoke', spec.name, 'seed-1', 'summary.json');
    assert.ok(fs.existsSync(summary), `${spec.name}: no summary.json`);
    const s = JSON.parse(fs.readFileSync(summary, 'utf8'));
    assert.equal(typeof s.eval.id.mean, 'number', spec.name);
  }
  assert.ok(fs.existsSync(path.join(out, 'report.html')));
  assert.match(r.stdout, /Table 1/);
  assert.match(r.stdout, /Table 2/);
});
