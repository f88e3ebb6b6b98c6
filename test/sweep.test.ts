// The sweep's scheduling with a fake launcher (no training): dependency order, the concurrency cap,
// skip-existing / force, failure propagation to dependents, and the plan of jobs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExperimentSpec } from '../lib/experiments/spec';
import { getPreset } from '../lib/experiments/presets';
import { planJobs, runSweep, Launcher, SweepJob } from '../lib/experiments/sweep';

const spec = (name: string, group: ExperimentSpec['group'], after?: string): ExperimentSpec => ({
  name, label: name, group, title: name, paper: '',
  init: after ? { kind: 'experiment', name: after } : { kind: 'checkpoint', path: 'x' }, stages: () => [],
});
// 'sft' is a method; 'sft-rl' starts from its checkpoint; 'rl' stands alone; 'base' is never planned by default
const SPECS = [spec('base', 'base'), spec('sft', 'method'), spec('sft-rl', 'method', 'sft'), spec('rl', 'method')];
const specOf = (n: string) => SPECS.find((s) => s.name === n) as ExperimentSpec;
const PRESET = { ...getPreset('smoke'), seeds: [1, 2] };
const name = (j: SweepJob) => `${j.config}#${j.seed}`;

/** A launcher that "trains" for a few ms, writes summary.json and records what ran when. */
function fakeLauncher(failing: string[] = []) {
  const events: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const launch: Launcher = async (job, args) => {
    assert.deepEqual(args.slice(0, 7), ['run', '--config', job.config, '--preset', job.preset, '--seed', String(job.seed)]);
    running++;
    maxRunning = Math.max(maxRunning, running);
    events.push(`start ${name(job)}`);
    await new Promise((r) => setTimeout(r, 5 + (job.config === 'sft' ? 10 : 0)));
    running--;
    events.push(`end ${name(job)}`);
    if (failing.includes(name(job))) return 1;
    fs.writeFileSync(path.join(job.out, 'summary.json'), JSON.stringify({ eval: { id: { mean: 0.25 } } }));
    return 0;
  };
  return { launch, events, max: () => maxRunning };
}

const tmpRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-sweep-'));

test('planJobs: non-base configs x seeds, each preceded by its init run', () => {
  const root = tmpRoot();
  assert.deepEqual(planJobs(PRESET, { specs: SPECS, root }).map(name), ['sft#1', 'sft-rl#1', 'rl#1', 'sft#2', 'sft-rl#2', 'rl#2']); // seed-major
  const only = planJobs(PRESET, { specs: SPECS, root, only: ['sft-rl'] });
  assert.deepEqual(only.map(name), ['sft#1', 'sft-rl#1', 'sft#2', 'sft-rl#2']);
  assert.equal(only[1].out, path.join(root, 'smoke', 'sft-rl', 'seed-1'));
  assert.deepEqual(planJobs(PRESET, { specs: SPECS, root, only: ['rl'], seeds: [2] }).map(name), ['rl#2']);
  assert.throws(() => planJobs(PRESET, { specs: SPECS, only: ['nope'] }), /--only: unknown config "nope"/);
});

test('runSweep: dependents wait for their init run, at most `concurrency` at once', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  const fake = fakeLauncher();
  const lines: string[] = [];
  const failures = await runSweep(jobs, { concurrency: 2, launch: fake.launch, specOf, log: (l) => lines.push(l) });
  assert.deepEqual(failures, []);
  assert.equal(fake.max(), 2);
  for (const seed of [1, 2]) {
    assert.ok(fake.events.indexOf(`end sft#${seed}`) < fake.events.indexOf(`start sft-rl#${seed}`), fake.events.join(', '));
  }
  assert.equal(fake.events.filter((e) => e.startsWith('start')).length, 6);
  assert.ok(lines.some((l) => /^\[[ \d]\/6\] sft seed 1 done in \d+s: ID 0\.250/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /left, eta /.test(l)));
});

test('runSweep: existing summaries are skipped unless force', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  for (const j of jobs.filter((x) => x.config === 'sft')) {
    fs.mkdirSync(j.out, { recursive: true });
    fs.writeFileSync(path.join(j.out, 'summary.json'), '{}');
  }
  const fake = fakeLauncher();
  const lines: string[] = [];
  await runSweep(jobs, { launch: fake.launch, specOf, log: (l) => lines.push(l) });
  assert.ok(!fake.events.includes('start sft#1') && !fake.events.includes('start sft#2'));
  assert.ok(fake.events.includes('start sft-rl#1'), 'a dependent of a skipped run starts');
  assert.equal(lines.filter((l) => l.includes('skipped')).length, 2);
  const again = fakeLauncher();
  await runSweep(jobs, { launch: again.launch, specOf, log: () => undefined });
  assert.equal(again.events.length, 0, 'all present: nothing runs');
  const forced = fakeLauncher();
  await runSweep(jobs, { launch: forced.launch, specOf, log: () => undefined, force: true });
  assert.equal(forced.events.filter((e) => e.startsWith('start')).length, 6);
});

test('runSweep: a failure is reported with its log, its dependents fail, the rest goes on', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  const fake = fakeLauncher(['sft#2']);
  const lines: string[] = [];
  const launch: Launcher = async (job, args, logFile) => {
    fs.appendFileSync(logFile, `training ${name(job)}\nboom at step 3\n`);
    return fake.launch(job, args, logFile);
  };
  const failures = await runSweep(jobs, { launch, specOf, log: (l) => lines.push(l) });
  assert.deepEqual(failures.map((f) => name(f.job)).sort(), ['sft#2', 'sft-rl#2']);
  assert.equal(failures.find((f) => f.job.config === 'sft')?.code, 1);
  assert.match(failures.find((f) => f.job.config === 'sft-rl')?.reason ?? '', /init run sft seed 2 failed/);
  assert.ok(!fake.events.includes('start sft-rl#2'));
  assert.ok(fake.events.includes('start rl#2') && fake.events.includes('start sft-rl#1'));
  assert.ok(lines.some((l) => l.includes('boom at step 3')), 'the log tail is printed');
});
