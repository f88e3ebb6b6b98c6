import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { planJobs } from '../lib/experiments/sweep/plan';
import { E2E_CONFIGS } from './experiments.fixtures';
import { tmpDir } from './helpers';

// `toolrl reproduce --preset micro --only <subset>` end to end, then the report: the subset and the runs it
// starts from take each code path of the study once (test/experiments.configs.test.ts checks that, and builds
// every other config without training). It goes through the installed entry point (bin/toolrl.js, what
// `npx toolrl` runs), whose module hooks differ from `node --import tsx`.
test('reproduce --preset micro --only <subset> runs the subset and builds the report', { timeout: 10 * 60 * 1000 }, () => {
  const root = tmpDir('reproduce');
  const out = path.join(root, 'report');
  const r = spawnSync(process.execPath, [path.join('bin', 'toolrl.js'), 'reproduce', '--preset', 'micro',
    '--only', E2E_CONFIGS.join(','), '--results', root, '--out', out, '--no-png'],
  { encoding: 'utf8', env: { ...process.env, TOOLRL_BACKEND: 'wasm' } });
  assert.equal(r.status, 0, `reproduce failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  const jobs = planJobs('micro', { only: E2E_CONFIGS, root });
  assert.ok(jobs.length > E2E_CONFIGS.length, 'the subset starts from another run'); // fcl-sft-rl <- fcl-sft
  for (const job of jobs) {
    const summary = path.join(job.out, 'summary.json');
    assert.ok(fs.existsSync(summary), `${job.config}: no summary.json`);
    const s = JSON.parse(fs.readFileSync(summary, 'utf8'));
    assert.equal(typeof s.eval.id.mean, 'number', job.config);
  }
  assert.ok(fs.existsSync(path.join(out, 'report.html')));
  assert.match(r.stdout, /Table 1/);
  assert.match(r.stdout, /Table 2/);
});
