// `toolrl reproduce --slurm`: the scripts, the submission and the status, first without Slurm (fake
// sbatch / squeue, a fake node running the scripts), then against a real single-node cluster on this
// machine (test/slurm.cluster.ts): the micro study submitted as job arrays must leave the same summaries
// as a local run, and a task cancelled mid-run must be run again by the next submission.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ExperimentSpec } from '../lib/experiments/registry/spec';
import { getPreset } from '../lib/experiments/registry/presets';
import { SweepJob, decideRuns, planJobs } from '../lib/experiments/sweep/plan';
import { runSweep } from '../lib/experiments/sweep/local';
import { SlurmConfig, planSlurm, reportLog, shq, taskLog } from '../lib/experiments/slurm/scripts';
import { Queue, SlurmCommand, formatStatus, readQueue, readSubmission, submissionActive, submissionStatus, submitPlan } from '../lib/experiments/slurm/queue';
import { parseArgs, UsageError } from '../lib/cli/args';
import { reproduceCommand } from '../lib/cli/reproduce';
import { checkSlurmArgs } from '../lib/cli/slurm';
import { Cluster, startCluster } from './slurm.cluster';
import { tmpDir } from './helpers';

const spec = (name: string, after?: string): ExperimentSpec => ({
  name, label: name, group: 'method', title: name, paper: '',
  init: after ? { kind: 'experiment', name: after } : { kind: 'checkpoint', path: 'x' }, stages: () => [],
});
// 'sft-rl' starts from 'sft''s checkpoint; 'rl' stands alone
const SPECS = [spec('sft'), spec('sft-rl', 'sft'), spec('rl')];
const specOf = (n: string) => SPECS.find((s) => s.name === n) as ExperimentSpec;
const PRESET = { ...getPreset('smoke'), seeds: [1, 2] };
const name = (j: { config: string; seed: number }) => `${j.config}#${j.seed}`;

/** What a finished run leaves: run.json, a summary.json naming the same run, and (unless told not to) its checkpoint. */
function writeFinished(job: SweepJob, weights = true): void {
  const id = { config: job.config, preset: job.preset, seed: job.seed, overrides: {}, backend: 'cpu' };
  fs.mkdirSync(job.out, { recursive: true });
  if (weights) {
    fs.mkdirSync(path.join(job.out, 'checkpoint'), { recursive: true });
    fs.writeFileSync(path.join(job.out, 'checkpoint', 'model.json'), '{}');
  }
  fs.writeFileSync(path.join(job.out, 'run.json'), JSON.stringify({ ...id, init: null, data: 'x' }));
  fs.writeFileSync(path.join(job.out, 'summary.json'), JSON.stringify({ ...id, eval: { id: { mean: 0.25 } } }));
}

function writeResumeState(job: SweepJob): void {
  fs.mkdirSync(path.join(job.out, 'resume'), { recursive: true });
  fs.writeFileSync(path.join(job.out, 'resume', 'state.json'), '{}');
}

const config = (dir: string, over: Partial<SlurmConfig> = {}): SlurmConfig => ({
  dir, name: 'toolrl-smoke', reportArgs: ['--preset', 'smoke'], statusArgs: ['--preset', 'smoke'], ...over,
});

/** Task name -> `toolrl run` arguments, over every array of a plan. */
const taskArgs = (plan: ReturnType<typeof planSlurm>) => new Map(plan.arrays.flatMap((a) => a.tasks.map((t) => [name(t.job), t.args] as const)));

test('planSlurm: one array per dependency level, each task the very command line the local sweep starts', async () => {
  const root = tmpDir('slurm-plan');
  const jobs = planJobs(PRESET, { specs: SPECS, root });
  const job = (n: string) => jobs.find((j) => name(j) === n)!;
  writeFinished(job('sft#1'));
  writeResumeState(job('rl#1')); // killed mid-run: resumes
  const plan = planSlurm(decideRuns(jobs, { specOf }), config(path.join(root, 'slurm'), { runArgs: ['--backend', 'wasm'] }));
  // sft#1 is finished with its checkpoint: skipped, and sft-rl#1 starts at level 0; sft-rl#2 waits for sft#2
  assert.deepEqual(plan.arrays.map((a) => a.tasks.map((t) => name(t.job))), [['sft-rl#1', 'rl#1', 'sft#2', 'rl#2'], ['sft-rl#2']]);
  assert.deepEqual(plan.skipped.map(name), ['sft#1']);
  assert.deepEqual(plan.arrays[0].tasks.map((t) => t.action), ['fresh', 'resume', 'fresh', 'fresh']);
  // the same store state through the local sweep: the same runs, with the same arguments
  const local = new Map<string, string[]>();
  await runSweep(jobs, { specOf, log: () => undefined, signals: [], extraArgs: ['--backend', 'wasm'],
    launch: async (j, args) => { local.set(name(j), args); writeFinished(j); return 0; } });
  assert.deepEqual(taskArgs(plan), local);
  assert.ok(local.get('rl#1')!.includes('--resume') && local.get('sft#2')!.includes('--force'));
});

test('planSlurm: a finished init without its checkpoint runs again, fresh, a level below its dependent; force runs all', () => {
  const root = tmpDir('slurm-plan');
  const jobs = planJobs(PRESET, { specs: SPECS, root, seeds: [1] });
  writeFinished(jobs[0], false); // sft#1 as committed: summary, no weights
  writeResumeState(jobs[0]); // never resumed: a finished run has nothing to continue
  writeFinished(jobs[2]); // rl#1
  const lines: string[] = [];
  const plan = planSlurm(decideRuns(jobs, { specOf, log: (l) => lines.push(l) }), config(path.join(root, 'slurm')));
  assert.deepEqual(plan.arrays.map((a) => a.tasks.map((t) => `${name(t.job)} ${t.action}`)), [['sft#1 fresh'], ['sft-rl#1 fresh']]);
  assert.ok(lines.some((l) => l.startsWith('re-running sft seed 1: finished, but sft-rl starts from its checkpoint')), lines.join('\n'));
  const forced = planSlurm(decideRuns(jobs, { specOf, force: true }), config(path.join(root, 'slurm')));
  assert.deepEqual(forced.arrays.map((a) => a.tasks.length), [2, 1]);
});

test('array script: directives, throttle, user directives; run as a task it starts the run in the repository root with its log', () => {
  const root = tmpDir('slurm-script');
  const jobs = planJobs(PRESET, { specs: SPECS, root, seeds: [1], only: ['rl', 'sft'] });
  writeResumeState(jobs[1]); // sft#1 resumes, rl#1 starts afresh
  fs.mkdirSync(jobs[1].out, { recursive: true });
  fs.writeFileSync(path.join(jobs[1].out, 'run.log'), 'the killed part\n');
  const repo = tmpDir('slurm-repo');
  const plan = planSlurm(decideRuns(jobs, { specOf }), config(path.join(root, 'slurm'), {
    partition: 'short', time: '2:00:00', cpusPerTask: 2, maxConcurrent: 3, repoRoot: repo,
    extraLines: ['--mail-type=FAIL', '#SBATCH --account=lab'],
  }));
  const s = plan.arrays[0].script;
  const lines = s.split('\n');
  for (const d of ['--array=0-1%3', '--cpus-per-task=2', '--partition=short', '--time=2:00:00', '--account=lab', '--mail-type=FAIL',
    '--job-name=toolrl-smoke-L0',
    `--output=${path.join(root, 'slurm', 'logs', 'level-0-%A_%a.out')}`]) assert.ok(lines.includes(`#SBATCH ${d}`), `${d} in\n${s}`);
  const firstCommand = lines.findIndex((l) => l && !l.startsWith('#'));
  assert.ok(lines.slice(firstCommand).every((l) => !l.startsWith('#SBATCH')), 'every directive before the first command (sbatch stops reading there)');
  assert.equal(spawnSync('bash', ['-n'], { input: s }).status, 0, 'bash parses the script');

  // a fake node that prints where and with what it was started
  const fakeNode = path.join(repo, 'fake-node');
  fs.writeFileSync(fakeNode, '#!/bin/sh\necho "cwd=$(pwd) greeting=$GREETING parent=${TOOLRL_PARENT_PID:-unset} args=$*"\n', { mode: 0o755 });
  const file = path.join(root, 'level-0.sbatch');
  fs.writeFileSync(file, s);
  const task = (id: string) => spawnSync('bash', [file], { encoding: 'utf8',
    env: { ...process.env, SLURM_ARRAY_TASK_ID: id, TOOLRL_NODE: fakeNode, TOOLRL_PARENT_PID: '1', GREETING: 'hello world' } });
  for (const [id, job, mode] of [['0', jobs[0], '--force'], ['1', jobs[1], '--resume']] as const) {
    const r = task(id);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`task ${id} on .*: toolrl run --config ${job.config} `));
    const log = fs.readFileSync(path.join(job.out, 'run.log'), 'utf8');
    const started = `cwd=${repo} greeting=hello world parent=unset args=--import tsx lib/cli/main.ts run --config ${job.config} ` +
      `--preset smoke --regime strong --seed 1 --out ${job.out} ${mode}\n`;
    assert.equal(log, (mode === '--resume' ? 'the killed part\n' : '') + started, 'a fresh start truncates run.log, a resume appends');
  }
  const bad = task('7');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /no run for array task '7'/);
  assert.equal(spawnSync('bash', ['-n'], { input: plan.report.script }).status, 0);
  assert.match(plan.report.script, /reproduce --slurm-status --preset smoke\nstatus=\$\?\n.*report --preset smoke \|\| exit \$\?\n/);
  assert.equal(shq("it's"), `'it'\\''s'`);
});

test('submitPlan: level order, afterok on the level before, the report after all; the status lists failed tasks with logs', () => {
  const root = tmpDir('slurm-submit');
  const jobs = planJobs(PRESET, { specs: SPECS, root, seeds: [1] });
  const dir = path.join(root, 'slurm');
  const plan = planSlurm(decideRuns(jobs, { specOf }), config(dir));
  const calls: string[][] = [];
  let next = 41;
  const fake: SlurmCommand = (cmd, args) => { calls.push([cmd, ...args]); return `${next++};cluster\n`; };
  const sub = submitPlan(plan, dir, fake);
  assert.deepEqual(calls, [
    ['sbatch', '--parsable', plan.arrays[0].file],
    ['sbatch', '--parsable', '--dependency=afterok:41', '--kill-on-invalid-dep=yes', plan.arrays[1].file],
    ['sbatch', '--parsable', '--dependency=afterany:41:42', plan.report.file],
  ]);
  assert.equal(fs.readFileSync(plan.arrays[1].file, 'utf8'), plan.arrays[1].script);
  assert.deepEqual(readSubmission(dir), sub);
  assert.deepEqual(sub.arrays.map((a) => [a.jobId, a.tasks.map(name)]), [['41', ['sft#1', 'rl#1']], ['42', ['sft-rl#1']]]);

  // sft#1 finished; rl#1 cancelled (Slurm still knows); sft-rl#1 pending; then its dependency is never satisfied
  writeFinished(jobs[0]);
  const q = (entries: [string, string, string][]): Queue => new Map(entries.map(([k, state, reason]) => [k, { state, reason }]));
  const running = q([['41_1', 'CANCELLED', 'None'], ['42_0', 'PENDING', 'Dependency'], ['43', 'PENDING', 'Dependency']]);
  assert.deepEqual(submissionStatus(sub, running).map((t) => `${name(t)} ${t.status}`), ['sft#1 finished', 'rl#1 failed', 'sft-rl#1 queued']);
  assert.ok(submissionActive(sub, running));
  const ended = q([['41_1', 'CANCELLED', 'None'], ['42_0', 'CANCELLED', 'DependencyNeverSatisfied'], ['43', 'FAILED', 'NonZeroExitCode']]);
  assert.ok(!submissionActive(sub, ended));
  const lines = formatStatus(sub, submissionStatus(sub, ended));
  assert.match(lines[0], /3 task\(s\): 1 finished, 0 running, 0 queued, 2 failed/);
  assert.ok(lines.includes(`  FAILED rl seed 1 (array 41 task 1, CANCELLED): log ${path.join(jobs[2].out, 'run.log')}, ` +
    `slurm log ${path.join(dir, 'logs', 'level-0-41_1.out')}`), lines.join('\n'));
  assert.ok(lines.some((l) => l.includes('FAILED sft-rl seed 1 (array 42 task 0, CANCELLED DependencyNeverSatisfied)')));
  // forgotten by Slurm (past MinJobAge) and unfinished in the store: failed, without a Slurm state
  assert.deepEqual(submissionStatus(sub, new Map()).map((t) => `${t.status} ${t.slurm}`), ['finished null', 'failed null', 'failed null']);
  const parsed = readQueue(() => '41|1|RUNNING|None\n43|N/A|PENDING|Dependency\n');
  assert.deepEqual([...parsed.keys()], ['41_1', '43']);
});

test('reproduce: the Slurm options are checked before anything runs (exit 2), --dry-run prints and writes nothing', () => {
  const parse = (...argv: string[]) => parseArgs(reproduceCommand.spec, argv);
  const usage = (re: RegExp, ...argv: string[]) => assert.throws(() => checkSlurmArgs(parse(...argv)), (e: Error) => e instanceof UsageError && re.test(e.message));
  usage(/--partition needs --slurm/, '--partition', 'short');
  usage(/--dry-run needs --slurm/, '--dry-run');
  usage(/--time "2 hours" is not in Slurm's format/, '--slurm', '--time', '2 hours');
  usage(/--max-concurrent must be an integer >= 1, got 0/, '--slurm', '--max-concurrent', '0');
  usage(/--cpus-per-task must be an integer >= 1, got 1.5/, '--slurm', '--cpus-per-task', '1.5');
  usage(/give one/, '--slurm', '--slurm-status');
  checkSlurmArgs(parse('--slurm', '--time', '1-12:00', '--partition', 'gpu-a100', '--sbatch-line', '#SBATCH --account=lab'));

  const root = tmpDir('slurm-dry');
  const toolrl = (...argv: string[]) => spawnSync(process.execPath, [path.join('bin', 'toolrl.js'), 'reproduce', ...argv], { encoding: 'utf8' });
  const bad = toolrl('--preset', 'micro', '--results', root, '--wait');
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /toolrl reproduce: error: --wait needs --slurm/);
  const r = toolrl('--slurm', '--dry-run', '--preset', 'micro', '--regime', 'instruct', '--only', 'fcl-sft-rl', '--results', root,
    '--max-concurrent', '3', '--sbatch-line', '#SBATCH --account=lab', '--backend', 'wasm');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /slurm: 2 run\(s\) to submit in 2 job array\(s\) \(level 0: 1, level 1: 1\)/);
  assert.match(r.stdout, /sbatch --parsable --dependency=afterok:<job id of level 0> --kill-on-invalid-dep=yes \S+level-1\.sbatch/);
  assert.match(r.stdout, /args=\(run --config fcl-sft --preset micro --regime instruct --seed 1 --out \S+micro-instruct\/fcl-sft\/seed-1 --force --backend wasm\)/);
  assert.match(r.stdout, /#SBATCH --array=0-0%3\n/);
  assert.match(r.stdout, /report --preset micro --regime instruct --results \S+ \|\| exit \$\?\n/);
  assert.deepEqual(fs.readdirSync(root), [], 'a dry run writes nothing');
});

/** `toolrl reproduce ...` from the repository root (bin/toolrl.js). */
const reproduce = (...argv: string[]) => spawnSync(process.execPath, [path.join('bin', 'toolrl.js'), 'reproduce', ...argv], { encoding: 'utf8' });

test('--sbatch-line takes directives only: "#SBATCH --x" or "--x" (with = or as the next word); anything else exits 2', () => {
  const parse = (...argv: string[]) => parseArgs(reproduceCommand.spec, argv);
  // a value starting with -- is the option's value, inline or as the next word
  assert.deepEqual(parse('--slurm', '--sbatch-line=--account=lab', '--sbatch-line', '--mail-type=FAIL')['sbatch-line'],
    ['--account=lab', '--mail-type=FAIL']);
  const refusedLine = (line: string, re: RegExp) => assert.throws(() => checkSlurmArgs(parse('--slurm', '--sbatch-line', line)),
    (e: Error) => e instanceof UsageError && /^--sbatch-line takes a Slurm directive, written "#SBATCH --account=lab" or "--account=lab"; /
      .test(e.message) && re.test(e.message) && !e.message.includes('\n'));
  refusedLine('module load nodejs', /"module load nodejs" is not one; shell set-up such as "module load" belongs in the environment/);
  refusedLine('account=lab', /is not one/);
  refusedLine('#SBATCH account=lab', /is not one/);
  refusedLine('-A lab', /is not one/);
  refusedLine('--account=lab\nmodule load nodejs', /holds a line break/);
  refusedLine('--output=/elsewhere/%j.out', /sets --output, which the scripts set themselves/);
  assert.throws(() => planSlurm([], config(tmpDir('slurm-lines'), { extraLines: ['module load nodejs'] })), /extra sbatch line "module load nodejs" is not one/);

  // the command line: both spellings land among the directives, before the first command; a shell line exits 2, one line
  const root = tmpDir('slurm-lines');
  const study = ['--slurm', '--dry-run', '--preset', 'micro', '--only', 'vanilla-rl', '--results', root];
  const r = reproduce(...study, '--sbatch-line=--account=lab', '--sbatch-line', '--mail-type=FAIL', '--sbatch-line', '#SBATCH --qos=low');
  assert.equal(r.status, 0, r.stderr);
  for (const script of r.stdout.split('\n==> ').slice(1)) {
    const lines = script.split('\n');
    const first = lines.findIndex((l, i) => i > 0 && l && !l.startsWith('#'));
    for (const d of ['#SBATCH --account=lab', '#SBATCH --mail-type=FAIL', '#SBATCH --qos=low']) {
      const at = lines.indexOf(d);
      assert.ok(at > 0 && at < first, `${d} among the directives of\n${script}`);
    }
    assert.ok(!lines.includes('--account=lab'), 'not a shell line');
  }
  const bad = reproduce(...study, '--sbatch-line', 'module load nodejs');
  assert.equal(bad.status, 2, bad.stderr);
  assert.equal(bad.stderr.split('\n').filter(Boolean).length, 1, bad.stderr);
  assert.match(bad.stderr, /^toolrl reproduce: error: --sbatch-line takes a Slurm directive, written "#SBATCH --account=lab" or "--account=lab"; /);
  assert.deepEqual(fs.readdirSync(root), [], 'nothing written');
});

test('a results path holding % is escaped as %% in every #SBATCH --output (the %A_%a and %j patterns kept); a backslash exits 2', () => {
  const root = path.join(tmpDir('slurm-pct'), 'res%x%j%A');
  const r = reproduce('--slurm', '--dry-run', '--preset', 'micro', '--only', 'vanilla-rl,fcl-sft-rl', '--results', root);
  assert.equal(r.status, 0, r.stderr);
  const logs = path.join(path.resolve(root), 'micro', 'slurm', 'logs').replace(/%/g, '%%');
  const outputs = r.stdout.split('\n').filter((l) => l.startsWith('#SBATCH --output='));
  assert.deepEqual(outputs, [`#SBATCH --output=${logs}/level-0-%A_%a.out`, `#SBATCH --output=${logs}/level-1-%A_%a.out`,
    `#SBATCH --output=${logs}/report-%j.out`]);
  // what sbatch makes of the pattern (%% -> %, %A/%a/%j filled in) is where --slurm-status looks (taskLog, reportLog)
  const expand = (p: string, ids: Record<string, string>) => p.replace(/%(%|A|a|j)/g, (_m, c: string) => (c === '%' ? '%' : ids[c]));
  const dir = path.join(path.resolve(root), 'micro', 'slurm');
  assert.equal(expand(outputs[0].slice('#SBATCH --output='.length), { A: '41', a: '0' }), taskLog(dir, 0, '41', 0));
  assert.equal(expand(outputs[2].slice('#SBATCH --output='.length), { j: '43' }), reportLog(dir, '43'));
  assert.ok(!fs.existsSync(root), 'a dry run writes nothing');
  const bs = reproduce('--slurm', '--dry-run', '--preset', 'micro', '--only', 'vanilla-rl', '--results', path.join(tmpDir('slurm-bs'), 'a\\b'));
  assert.equal(bs.status, 2, bs.stderr);
  assert.match(bs.stderr, /^toolrl reproduce: error: --results \S+a\\b: a path with a backslash cannot hold the Slurm logs/);
});

// ---- against a real Slurm ----

const ONLY = ['vanilla-rl', 'fcl-sft-rl'];
let cluster: Cluster | string = 'not started';

/** The summary without its timing (`seconds`): what must not depend on where the run ran. */
function summaryOf(out: string): Record<string, unknown> {
  const s = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
  delete s.seconds;
  return s;
}

describe('against a single-node Slurm on localhost', { timeout: 20 * 60 * 1000 }, () => {
  before(async () => {
    cluster = await startCluster();
    if (typeof cluster === 'string' && process.env.TOOLRL_REQUIRE_SLURM === '1') {
      throw new Error(`TOOLRL_REQUIRE_SLURM=1, but ${cluster}`);
    }
  });
  after(async () => {
    if (typeof cluster !== 'string') await cluster.stop();
  });

  test('the micro study as job arrays equals a local run; a task cancelled mid-run is run again by the next submit', async (t) => {
    if (typeof cluster === 'string') {
      t.skip(cluster);
      return;
    }
    const env = cluster.env;
    const root = path.join(cluster.dir, 'res%x%j', 'results'); // a % that sbatch would expand in --output unless escaped
    const local = path.join(cluster.dir, 'local');
    const toolrl = (...argv: string[]) => spawnSync(process.execPath, [path.join('bin', 'toolrl.js'), 'reproduce', '--preset', 'micro',
      '--only', ONLY.join(','), '--no-png', '--backend', 'wasm', ...argv], { encoding: 'utf8', env });
    const show = (r: ReturnType<typeof toolrl>) => `exit ${r.status}\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`;
    const squeue: SlurmCommand = (cmd, args) => {
      const r = spawnSync(cmd, args, { encoding: 'utf8', env });
      assert.equal(r.status, 0, `${cmd}: ${r.stderr}`);
      return r.stdout;
    };
    const jobs = planJobs('micro', { only: ONLY, root });
    const job = (config: string) => jobs.find((j) => j.config === config)!;
    const dir = path.join(root, 'micro', 'slurm');

    const t0 = Date.now();
    const first = toolrl('--slurm', '--results', root);
    assert.equal(first.status, 0, show(first));
    const sub = readSubmission(dir)!;
    assert.deepEqual(sub.arrays.map((a) => a.tasks.map((x) => x.config)), [['vanilla-rl', 'fcl-sft'], ['fcl-sft-rl']]);
    const again = toolrl('--slurm', '--results', root);
    assert.equal(again.status, 1, show(again));
    assert.match(again.stderr, /is still queued or running: wait for it/);

    // cancel vanilla-rl's task once its run holds the run folder (mid-run: it trains and evaluates for seconds after)
    const victim = sub.arrays[0].tasks.findIndex((x) => x.config === 'vanilla-rl');
    const lock = path.join(job('vanilla-rl').out, '.lock');
    for (const t1 = Date.now(); !fs.existsSync(lock); await new Promise((r) => setTimeout(r, 100))) {
      assert.ok(Date.now() - t1 < 5 * 60 * 1000, `vanilla-rl never started: ${lock} did not appear`);
    }
    const cancel = spawnSync('scancel', [`${sub.arrays[0].jobId}_${victim}`], { encoding: 'utf8', env });
    assert.equal(cancel.status, 0, cancel.stderr);
    while (submissionActive(sub, readQueue(squeue))) await new Promise((r) => setTimeout(r, 1000));
    const status = submissionStatus(sub, readQueue(squeue));
    assert.deepEqual(status.map((x) => `${x.config} ${x.status} ${x.slurm}`), ['vanilla-rl failed CANCELLED', 'fcl-sft finished COMPLETED',
      'fcl-sft-rl failed CANCELLED DependencyNeverSatisfied']);
    assert.ok(!fs.existsSync(path.join(job('vanilla-rl').out, 'summary.json')), 'vanilla-rl was cancelled before it finished');
    for (const x of status.slice(0, 2)) assert.ok(fs.existsSync(x.slurmLog), `${x.config}: its Slurm log is where --slurm-status says, ${x.slurmLog}`);
    const report1 = fs.readFileSync(path.join(dir, 'logs', `report-${sub.report!.jobId}.out`), 'utf8');
    assert.match(report1, /FAILED vanilla-rl seed 1 \(array \d+ task 0, CANCELLED\): log \S+vanilla-rl\/seed-1\/run\.log, slurm log \S+level-0-\d+_0\.out/);
    const st = toolrl('--slurm-status', '--results', root);
    assert.equal(st.status, 1, show(st));
    assert.match(st.stderr, /2 Slurm task\(s\) failed: vanilla-rl seed 1 \(log \S+run\.log\), fcl-sft-rl seed 1/);

    // the second submission skips fcl-sft, runs the cancelled run afresh (micro saves no resume state) and its dependent
    const second = toolrl('--slurm', '--wait', '--results', root);
    const slurmSeconds = (Date.now() - t0) / 1000;
    assert.equal(second.status, 0, show(second));
    assert.match(second.stdout, /skipped 1 of 3 run\(s\): finished/);
    assert.match(second.stdout, /previous slurm submission .* 1 finished, 0 running, 0 queued, 2 failed/);
    assert.deepEqual(readSubmission(dir)!.arrays.map((a) => a.tasks.map((x) => `${x.config} ${x.action}`)), [['vanilla-rl fresh', 'fcl-sft-rl fresh']]);
    const log = fs.readFileSync(path.join(job('vanilla-rl').out, 'run.log'), 'utf8');
    assert.equal(log.split('tfjs backend').length - 1, 1, 'a fresh start begins a new run.log');
    assert.ok(fs.existsSync(path.join(root, 'micro', 'report', 'report.html')), 'the report job built the report');

    const t1 = Date.now();
    const loc = toolrl('--results', local);
    assert.equal(loc.status, 0, show(loc));
    t.diagnostic(`wall time: slurm ${slurmSeconds.toFixed(0)} s (two submissions, one cancelled run), local ${((Date.now() - t1) / 1000).toFixed(0)} s`);
    for (const j of planJobs('micro', { only: ONLY, root: local })) {
      assert.deepEqual(summaryOf(job(j.config).out), summaryOf(j.out), `${j.config}: the Slurm run's summary.json differs from the local one`);
    }
  });
});
