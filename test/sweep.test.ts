// The sweep's scheduling with a fake launcher (no training): dependency order, the concurrency cap,
// skip-finished / force, failure propagation to dependents, locks, interruption, and the plan of jobs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExperimentSpec } from '../lib/experiments/registry/spec';
import { getPreset } from '../lib/experiments/registry/presets';
import { REPO_ROOT, childPath, planJobs, SweepJob } from '../lib/experiments/sweep/plan';
import { runSweep, Launcher } from '../lib/experiments/sweep/local';

test('the sweep starts its runs in the repository root and names their folders relative to it', () => {
  assert.equal(REPO_ROOT, path.resolve(__dirname, '..'));
  assert.ok(fs.existsSync(path.join(REPO_ROOT, 'package.json')));
  assert.equal(childPath(path.join(REPO_ROOT, 'data', 'results', 'x')), path.join('data', 'results', 'x'));
  assert.equal(childPath(os.tmpdir()), os.tmpdir());
});

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
    assert.deepEqual(args.slice(0, 9), ['run', '--config', job.config, '--preset', job.preset, '--regime', job.regime, '--seed', String(job.seed)]);
    running++;
    maxRunning = Math.max(maxRunning, running);
    events.push(`start ${name(job)}`);
    await new Promise((r) => setTimeout(r, 5 + (job.config === 'sft' ? 10 : 0)));
    running--;
    events.push(`end ${name(job)}`);
    if (failing.includes(name(job))) return 1;
    writeFinished(job);
    return 0;
  };
  return { launch, events, max: () => maxRunning };
}

/** What a finished run leaves: run.json, a summary.json that names the same run, and its checkpoint. */
function writeFinished(job: SweepJob, summaryText?: string): void {
  const id = { config: job.config, preset: job.preset, seed: job.seed, overrides: {}, backend: 'cpu' };
  fs.mkdirSync(path.join(job.out, 'checkpoint'), { recursive: true });
  fs.writeFileSync(path.join(job.out, 'checkpoint', 'model.json'), '{}');
  fs.writeFileSync(path.join(job.out, 'run.json'), JSON.stringify({ ...id, init: null, data: 'x' }));
  fs.writeFileSync(path.join(job.out, 'summary.json'), summaryText ?? JSON.stringify({ ...id, eval: { id: { mean: 0.25 } } }));
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
  const failures = await runSweep(jobs, { concurrency: 2, launch: fake.launch, specOf, log: (l) => lines.push(l), signals: [] });
  assert.deepEqual(failures, []);
  assert.equal(fake.max(), 2);
  for (const seed of [1, 2]) {
    assert.ok(fake.events.indexOf(`end sft#${seed}`) < fake.events.indexOf(`start sft-rl#${seed}`), fake.events.join(', '));
  }
  assert.equal(fake.events.filter((e) => e.startsWith('start')).length, 6);
  assert.ok(lines.some((l) => /^\[[ \d]\/6\] sft seed 1 done in \d+s: ID 0\.250/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /left, eta /.test(l)));
});

test('runSweep: finished runs are skipped (one line) unless force; torn or foreign summaries rerun', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  for (const j of jobs.filter((x) => x.config === 'sft')) writeFinished(j);
  const rl1 = jobs.find((j) => name(j) === 'rl#1') as SweepJob;
  const rl2 = jobs.find((j) => name(j) === 'rl#2') as SweepJob;
  writeFinished(rl1, '{"config": "rl", "eval": {"id"'); // a summary cut off mid-write
  writeFinished(rl2, JSON.stringify({ config: 'rl', preset: 'smoke', seed: 1, overrides: {}, backend: 'cpu' })); // seed 1's
  const fake = fakeLauncher();
  const lines: string[] = [];
  const args: string[][] = [];
  const launch: Launcher = (job, a, log, abort) => { args.push(a); return fake.launch(job, a, log, abort); };
  await runSweep(jobs, { launch, specOf, log: (l) => lines.push(l), signals: [] });
  assert.ok(!fake.events.includes('start sft#1') && !fake.events.includes('start sft#2'));
  assert.ok(fake.events.includes('start sft-rl#1'), 'a dependent of a skipped run starts');
  assert.ok(fake.events.includes('start rl#1') && fake.events.includes('start rl#2'), 'unfinished runs run again');
  assert.deepEqual(lines.filter((l) => l.includes('skipped')), ['skipped 2 of 6 run(s): finished (summary.json matches run.json)']);
  assert.ok(args.every((a) => a.includes('--force') && !a.includes('--resume')), 'no resume state: fresh starts clear the folder');
  const again = fakeLauncher();
  await runSweep(jobs, { launch: again.launch, specOf, log: () => undefined, signals: [] });
  assert.equal(again.events.length, 0, 'all finished: nothing runs');
  const forced = fakeLauncher();
  await runSweep(jobs, { launch: forced.launch, specOf, log: () => undefined, force: true, signals: [] });
  assert.equal(forced.events.filter((e) => e.startsWith('start')).length, 6);
});

test('runSweep: a finished init run without its checkpoint (a fresh clone) runs again, only when a pending run needs it', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  for (const j of jobs) if (j.config !== 'sft-rl' || j.seed === 1) writeFinished(j);
  for (const j of jobs.filter((x) => x.config === 'sft')) {
    fs.rmSync(path.join(j.out, 'checkpoint'), { recursive: true }); // as committed: no weights
    fs.mkdirSync(path.join(j.out, 'resume'));
    fs.writeFileSync(path.join(j.out, 'resume', 'state.json'), '{}'); // must not be resumed from
  }
  const fake = fakeLauncher();
  const lines: string[] = [];
  const args = new Map<string, string[]>();
  const launch: Launcher = (job, a, log, abort) => { args.set(name(job), a); return fake.launch(job, a, log, abort); };
  assert.deepEqual(await runSweep(jobs, { launch, specOf, log: (l) => lines.push(l), signals: [] }), []);
  // seed 2's sft-rl is pending: its sft runs again first (fresh, --force); seed 1's sft-rl is finished: nothing runs
  assert.deepEqual(fake.events, ['start sft#2', 'end sft#2', 'start sft-rl#2', 'end sft-rl#2']);
  assert.ok(args.get('sft#2')!.includes('--force') && !args.get('sft#2')!.includes('--resume'));
  assert.ok(lines.includes('re-running sft seed 2: finished, but sft-rl starts from its checkpoint, which is not here ' +
    '(checkpoints are not committed)'), lines.join('\n'));
  assert.ok(lines.includes('skipped 4 of 6 run(s): finished (summary.json matches run.json)'), lines.join('\n'));
});

test('runSweep: a killed run resumes; a folder locked by a live process fails untouched', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot(), only: ['rl'] });
  const [rl1, rl2] = jobs;
  fs.mkdirSync(path.join(rl1.out, 'resume'), { recursive: true });
  fs.writeFileSync(path.join(rl1.out, 'resume', 'state.json'), '{}');
  fs.writeFileSync(path.join(rl1.out, 'run.log'), 'first part\n');
  fs.mkdirSync(rl2.out, { recursive: true });
  fs.writeFileSync(path.join(rl2.out, 'run.log'), 'the other writer\n');
  fs.writeFileSync(path.join(rl2.out, '.lock'), JSON.stringify({ pid: process.ppid, started: 'now' })); // a live pid
  const fake = fakeLauncher();
  const seen: string[][] = [];
  const failures = await runSweep(jobs, { specOf, log: () => undefined, signals: [],
    launch: (job, a, log, abort) => { seen.push(a); return fake.launch(job, a, log, abort); } });
  assert.equal(seen.length, 1);
  assert.ok(seen[0].includes('--resume') && !seen[0].includes('--force'));
  assert.equal(fs.readFileSync(path.join(rl1.out, 'run.log'), 'utf8'), 'first part\n', 'a resumed run appends to its log');
  assert.equal(failures.length, 1);
  assert.match(failures[0].reason, new RegExp(`in use by process ${process.ppid}`));
  assert.equal(fs.readFileSync(path.join(rl2.out, 'run.log'), 'utf8'), 'the other writer\n');
});

test('runSweep: SIGTERM stops the running jobs, waits for them, and starts no more', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  let live = 0;
  let maxLive = 0;
  const lines: string[] = [];
  const launch: Launcher = (job, _a, _l, abort) => new Promise((resolve) => {
    live++;
    maxLive = Math.max(maxLive, live);
    const timer = setTimeout(() => { live--; writeFinished(job); resolve(0); }, 5000);
    abort.addEventListener('abort', () => { clearTimeout(timer); setTimeout(() => { live--; resolve(null); }, 20); });
  });
  const done = runSweep(jobs, { concurrency: 2, launch, specOf, log: (l) => lines.push(l), signals: ['SIGTERM'] });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(live, 2);
  process.emit('SIGTERM', 'SIGTERM');
  const failures = await done;
  assert.equal(live, 0, 'every run had ended when runSweep returned');
  assert.equal(failures.length, 6);
  assert.ok(failures.every((f) => f.interrupted), failures.map((f) => f.reason).join('; '));
  assert.ok(lines.some((l) => /interrupted \(SIGTERM\): stopping 2 running run/.test(l)));
  assert.equal(process.listenerCount('SIGTERM'), 0, 'the handler is removed');
});

test('runSweep: a failure is reported with its log, its dependents fail, the rest goes on', async () => {
  const jobs = planJobs(PRESET, { specs: SPECS, root: tmpRoot() });
  const fake = fakeLauncher(['sft#2']);
  const lines: string[] = [];
  const launch: Launcher = async (job, args, logFile, abort) => {
    fs.appendFileSync(logFile, `training ${name(job)}\nboom at step 3\n`);
    return fake.launch(job, args, logFile, abort);
  };
  const failures = await runSweep(jobs, { launch, specOf, log: (l) => lines.push(l), signals: [] });
  assert.deepEqual(failures.map((f) => name(f.job)).sort(), ['sft#2', 'sft-rl#2']);
  assert.equal(failures.find((f) => f.job.config === 'sft')?.code, 1);
  assert.match(failures.find((f) => f.job.config === 'sft-rl')?.reason ?? '', /init run sft seed 2 failed/);
  assert.ok(!fake.events.includes('start sft-rl#2'));
  assert.ok(fake.events.includes('start rl#2') && fake.events.includes('start sft-rl#1'));
  assert.ok(lines.some((l) => l.includes('boom at step 3')), 'the log tail is printed');
});
