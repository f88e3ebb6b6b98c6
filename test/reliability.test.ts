// Fault injection on run folders: bad options on a copy of a committed run, kill -9 at a random step of a
// run and of a 2-run sweep, torn log lines, a second writer, a resume state of another run. Each probe
// asserts that nothing it should not touch changed, and that the final store equals an uninterrupted one.
// Then the seven cases of a hostile-but-honest probe, one test each ("case N"): user files in run folders,
// seeds that alias, checkpoint bit-rot, task files validated late, sizes without bounds, write errors that
// name no file, and one exit code per kind of refusal. They drive the command line (spawned) where they can,
// so each fails on a runner without the guard it tests.
// Kept cheap: the smoke preset cut down further with --set (4 RL steps of 1 prompt x 2 rollouts). The runs
// use the wasm backend: single-threaded, so bit-for-bit repeatable across processes (the native backend's
// threaded reductions can differ in the last float digits from one process to the next, and flip greedy ties).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getExperiment } from '../lib/experiments/registry/configs';
import { getPreset } from '../lib/experiments/registry/presets';
import { runExperiment } from '../lib/experiments/run/runner';
import { acquireLock } from '../lib/util/lock';
import { parseJsonl, readJsonlValues } from '../lib/util/jsonl';
import { readMetrics } from '../lib/train/metrics';
import { loadTokenizer } from '../lib/format/tokenizer';
import { loadResumeState } from '../lib/experiments/store/resume';
import { Rng } from '../lib/prng';
import { writeFileAtomic } from '../lib/util/atomic';

const REPO = path.resolve(__dirname, '..');
const COMMITTED = path.join(REPO, 'data', 'results', 'full', 'vanilla-rl', 'seed-1');
const TINY = ['grpo.groupSize=2', 'grpo.promptsPerStep=1', 'grpo.promptsPerMiniBatch=1', 'grpo.maxMessageTokens=16',
  'grpo.maxAssistantMessages=2', 'grpo.probeTasks=1', 'grpo.steps=4', 'grpo.checkpointEvery=1', 'grpo.valEvery=4'];
const SET = [...TINY.flatMap((s) => ['--set', s]), '--backend', 'wasm'];
const RUN = ['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--seed', '1', ...SET];
const CLI = [path.join(REPO, 'lib', 'cli', 'main.ts')];

const tmp = (tag: string) => fs.mkdtempSync(path.join(os.tmpdir(), `toolrl-rel-${tag}-`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `toolrl ...` to completion (killed after `timeout` ms: a refusal that does not come runs no study). */
function toolrl(args: string[], timeout = 600_000): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', ...CLI, ...args], { cwd: REPO, encoding: 'utf8', timeout });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `toolrl ...` in the background; resolves with its exit code and output. */
function toolrlAsync(args: string[], script = CLI): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', ...script, ...args], { cwd: REPO });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  return { child, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, out }))) };
}

/** sha256 of every file under `dir` (relative path -> hash). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

const grpoSteps = (dir: string) => {
  const f = path.join(dir, 'metrics.jsonl');
  return fs.existsSync(f) ? parseJsonl<{ phase: string; step: number }>(fs.readFileSync(f, 'utf8'), f).rows
    .filter((r) => r.value.phase === 'grpo').map((r) => r.value.step) : [];
};

/** The imports of a sweep driver script (the plan and the local runner are two modules). */
const SWEEP_IMPORTS = `import { planJobs } from ${JSON.stringify(path.join(REPO, 'lib', 'experiments', 'sweep', 'plan'))};
import { runSweep } from ${JSON.stringify(path.join(REPO, 'lib', 'experiments', 'sweep', 'local'))};`;

async function waitFor(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

/** The results a run leaves, without wall-clock fields: what must equal an uninterrupted run's. */
function results(dir: string) {
  const noTiming = (r: object) => Object.fromEntries(Object.entries(r).filter(([k]) => !/(Seconds|PerS|^seconds)$/.test(k)));
  return {
    metrics: readMetrics(path.join(dir, 'metrics.jsonl')).map(noTiming),
    rollouts: fs.readFileSync(path.join(dir, 'rollouts.jsonl'), 'utf8'),
    weights: fs.readFileSync(path.join(dir, 'checkpoint', 'weights.bin')).toString('base64'),
    summary: noTiming(JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'))),
    run: JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')),
  };
}

test('bad options and configs are refused before a committed run (a copy) is touched', async () => {
  const dir = path.join(tmp('bad'), 'seed-1');
  // what a clone has: the committed files, not the ignored ones a local run leaves (checkpoint, resume points, rollouts)
  const ignored = new Set(['checkpoint', 'resume', 'branches', 'rollouts.jsonl', '.lock']);
  fs.cpSync(COMMITTED, dir, { recursive: true, filter: (src) => !ignored.has(path.basename(src)) });
  const before = tree(dir);
  const spec = getExperiment('vanilla-rl');
  const opts = { preset: getPreset('quick'), seed: 1, out: dir, progress: false };
  await assert.rejects(runExperiment(spec, { ...opts, overrides: { 'grpo.clipRatio': -1 } }), /grpo\.clipRatio must be a number in \(0, 1\), got -1/);
  await assert.rejects(runExperiment(spec, { ...opts, overrides: { 'grpo.temperature': 0 } }), /grpo\.temperature must be a number in \(0, 10\], got 0/);
  await assert.rejects(runExperiment(spec, { ...opts, overrides: { 'grpo.lr': 'x' } }), /grpo\.lr must be a number in \(0, 1\], got "x"/);
  await assert.rejects(runExperiment(spec, opts), new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} already holds results`));
  await assert.rejects(runExperiment(spec, { ...opts, resume: true }), /no resume state/);
  await assert.rejects(runExperiment(spec, { ...opts, resume: true, force: true }), /exclude each other/);
  // the command line: one error style, exit 2, and no backend started
  const r = toolrl(['run', '--config', 'vanilla-rl', '--set', 'grpo.clipRatio=-1', '--out', dir]);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'toolrl run: error: grpo.clipRatio must be a number in (0, 1), got -1\n');
  const l = toolrl(['eval', '--policy', 'teacher', '--limit', '-1']);
  assert.equal(l.status, 2);
  assert.match(l.stderr, /^toolrl eval: error: --limit must be an integer >= 1, got -1\n$/);
  assert.deepEqual(tree(dir), before, 'the committed run was changed');
});

test('the lock: one writer per folder, a lock of a dead process is stale', () => {
  const dir = tmp('lock');
  const release = acquireLock(dir, 'run folder');
  assert.throws(() => acquireLock(dir, 'run folder'), new RegExp(`in use by process ${process.pid}`));
  release();
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  fs.writeFileSync(path.join(dir, '.lock'), JSON.stringify({ pid: Number(dead.stdout), started: 'then' }));
  acquireLock(dir, 'run folder')(); // stale: taken over
  assert.ok(!fs.existsSync(path.join(dir, '.lock')), 'released');
});

test('JSONL readers: a torn final line is absent, other broken lines are named with their true line number', () => {
  const dir = tmp('jsonl');
  const f = path.join(dir, 'metrics.jsonl');
  fs.writeFileSync(f, '{"step":1}\n\n{"step":2}\n{"step":3,"lo');
  assert.deepEqual(readMetrics(f), [{ step: 1 }, { step: 2 }]);
  fs.writeFileSync(f, '{"step":1}\n\nnot json\n{"step":3}\n');
  assert.throws(() => readJsonlValues(f), new RegExp(`${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: invalid JSON`));
});

let reference: ReturnType<typeof results> | null = null;
let killedRun: string | null = null; // a finished run folder that went through kill -9 and --resume

test('kill -9 at a random step, torn lines, a second writer, a foreign --resume; the resumed run equals an uninterrupted one',
  { timeout: 240_000 }, async () => {
    const root = tmp('kill');
    const ref = path.join(root, 'ref');
    const victim = path.join(root, 'victim');
    const killAt = 1 + Math.floor(Math.random() * 3); // after step 1, 2 or 3 of 4
    const r = toolrlAsync([...RUN, '--out', ref]);
    const v = toolrlAsync([...RUN, '--out', victim]);
    // a second writer on the reference folder while it runs: refused, naming the holder
    await waitFor('the reference run to take its lock', () => fs.existsSync(path.join(ref, '.lock')));
    const second = toolrl([...RUN, '--out', ref, '--force']);
    assert.equal(second.status, 3, second.stderr); // in use: exit 3, however the race goes (case 7)
    assert.match(second.stderr, new RegExp(`run folder ${ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by process ${r.child.pid}`));

    // the step's record is logged before its resume state is saved: wait for both, or a kill in between
    // leaves a run with nothing to resume (a race of the test, not of the runner)
    await waitFor(`step ${killAt} of the victim and a resume state`,
      () => grpoSteps(victim).length >= killAt && fs.existsSync(path.join(victim, 'resume', 'state.json')));
    v.child.kill('SIGKILL');
    await v.done;
    // what a kill mid-write leaves: torn last lines
    fs.appendFileSync(path.join(victim, 'metrics.jsonl'), '{"phase":"grpo","stage":0,"globalSt');
    fs.appendFileSync(path.join(victim, 'rollouts.jsonl'), '{"stage":0,"step":9,"taskId":"tr');
    const results0 = () => { const t = tree(victim); delete t['.lock']; return t; }; // the dead run's stale lock may go
    const killed = results0();

    // --resume of another run (the probe: another config and seed) is refused, naming both; nothing changes
    const overrides = Object.fromEntries(TINY.map((kv) => kv.split('=')).map(([k, x]) => [k, Number(x)]));
    await assert.rejects(runExperiment(getExperiment('ops'), { preset: getPreset('smoke'), seed: 7, out: victim, overrides,
      resume: true, progress: false }), /is another run \(vanilla-rl, preset smoke, seed 1.*not this one \(ops, preset smoke, seed 7/);
    assert.deepEqual(results0(), killed);

    const resumed = toolrl([...RUN, '--out', victim, '--resume']);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.match(resumed.stderr, /vanilla-rl: resuming .* at RL step \d of stage 0/);
    const rr = await r.done;
    assert.equal(rr.code, 0, rr.out);
    reference = results(ref);
    const got = results(victim);
    assert.deepEqual(got.metrics.map((m) => m.step), [1, 2, 3, 4]);
    assert.ok(!got.rollouts.includes('\0'), 'no NUL padding');
    assert.deepEqual(got, reference);
    assert.ok(!fs.existsSync(path.join(victim, '.lock')) && !fs.existsSync(path.join(ref, '.lock')), 'locks released');
    killedRun = victim;
  });

test('a damaged resume state is an error naming the file and what is wrong', (t) => {
  if (!killedRun) return t.skip('needs the run of the kill -9 test');
  const dir = path.join(tmp('resume'), 'run');
  fs.cpSync(killedRun, dir, { recursive: true });
  const tok = loadTokenizer(path.join(REPO, 'data', 'vocab.json'));
  const stateFile = path.join(dir, 'resume', 'state.json');
  const state = fs.readFileSync(stateFile, 'utf8');
  const identity = JSON.parse(state).identity;
  const load = () => loadResumeState(dir, tok, identity).model.dispose();
  load(); // intact
  fs.writeFileSync(stateFile, state.slice(0, 200));
  assert.throws(load, (e: Error) => e.message.startsWith(`${stateFile}: resume state is not valid JSON`));
  fs.writeFileSync(stateFile, state);
  const bin = path.join(dir, 'resume', 'optimizer.bin');
  const binBytes = fs.readFileSync(bin);
  fs.truncateSync(bin, binBytes.byteLength - 8);
  assert.throws(load, (e: Error) => e.message.startsWith(`${bin} has `) && e.message.includes(stateFile));
  fs.writeFileSync(bin, binBytes);
  // a save cut by kill -9 after moving the old state aside: the new one is complete in resume.tmp/, and a
  // half-deleted resume.old/ (its state.json goes first) is ignored
  fs.renameSync(path.join(dir, 'resume'), path.join(dir, 'resume.tmp'));
  fs.mkdirSync(path.join(dir, 'resume.old', 'model'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'resume.old', 'optimizer.bin'), 'x');
  load();
  assert.throws(() => loadResumeState(dir, tok, { ...identity, seed: 2 }), /belongs to another run .*seed 1.*seed 2.*seed 1 vs 2/);
  fs.rmSync(path.join(dir, 'resume.tmp'), { recursive: true });
  assert.throws(load, /no resume state/);
});

let tinyRun: string | null = null;
/** A finished run folder of RUN with its last resume state: the kill test's, or (when that one failed) one run here. */
function finishedRun(): string {
  if (killedRun) return killedRun;
  if (!tinyRun) {
    const dir = path.join(tmp('tiny'), 'run');
    const r = toolrl([...RUN, '--out', dir]);
    assert.equal(r.status, 0, r.stderr);
    tinyRun = dir;
  }
  return tinyRun;
}

test('case 3 (resume states): flipped bits in a resume state\'s optimizer moments or weights are refused, naming the file', { timeout: 300_000 }, () => {
  const dir = path.join(tmp('rot'), 'run');
  fs.cpSync(finishedRun(), dir, { recursive: true });
  const tok = loadTokenizer(path.join(REPO, 'data', 'vocab.json'));
  const identity = JSON.parse(fs.readFileSync(path.join(dir, 'resume', 'state.json'), 'utf8')).identity;
  const load = () => loadResumeState(dir, tok, identity).model.dispose();
  for (const rel of ['resume/optimizer.bin', 'resume/model/weights.bin']) {
    const file = path.join(dir, rel);
    const good = fs.readFileSync(file);
    fs.writeFileSync(file, flipLowBytes(good, 64));
    assert.throws(load, (e: Error) => e.message.includes(`${file} is corrupt`), rel);
    fs.writeFileSync(file, good);
  }
  load();
});

test('kill -9 of a 2-run sweep at a random step: its runs stop on their own; a rerun finishes them as if uninterrupted',
  { timeout: 240_000 }, async () => {
    const root = tmp('sweep');
    const driver = path.join(root, 'driver.ts');
    fs.writeFileSync(driver, `${SWEEP_IMPORTS}
const [root, ...extra] = process.argv.slice(2);
runSweep(planJobs('smoke', { only: ['vanilla-rl'], seeds: [1, 2], root }), { concurrency: 2, extraArgs: extra })
  .then((f) => { process.exitCode = f.length ? 1 : 0; });
`);
    const store = path.join(root, 'results');
    const out = (seed: number) => path.join(store, 'smoke', 'vanilla-rl', `seed-${seed}`);
    const killAt = 1 + Math.floor(Math.random() * 2);
    const d = toolrlAsync([store, ...SET], [driver]);
    // Under load one run can start seconds after the other and would finish before its sibling reaches
    // `killAt`; so freeze each run (SIGSTOP) as it gets there, kill the sweep while both are frozen, then
    // let them go on (SIGCONT): each must notice at its next step that the sweep is gone.
    const pids: number[] = [];
    await waitFor(`step ${killAt} of both runs`, () => {
      for (const s of [1, 2]) {
        if (pids[s - 1] || grpoSteps(out(s)).length < killAt) continue;
        pids[s - 1] = JSON.parse(fs.readFileSync(path.join(out(s), '.lock'), 'utf8')).pid as number;
        process.kill(pids[s - 1], 'SIGSTOP');
      }
      return pids.filter(Boolean).length === 2;
    });
    d.child.kill('SIGKILL');
    await d.done;
    for (const p of pids) process.kill(p, 'SIGCONT');
    await waitFor('the orphaned runs to stop', () => pids.every((p) => !alive(p)), 30_000);
    for (const s of [1, 2]) {
      assert.match(fs.readFileSync(path.join(out(s), 'run.log'), 'utf8'), /has ended/);
      assert.ok(!fs.existsSync(path.join(out(s), 'summary.json')));
    }
    const again = toolrlAsync([store, ...SET], [driver]);
    const res = await again.done;
    assert.equal(res.code, 0, res.out + fs.readFileSync(path.join(out(1), 'run.log'), 'utf8'));
    for (const s of [1, 2]) {
      assert.deepEqual(grpoSteps(out(s)), [1, 2, 3, 4], `seed ${s}: every step logged once`);
      assert.equal(readJsonlValues(path.join(out(s), 'rollouts.jsonl')).length, 4 * 2);
    }
    if (reference) assert.deepEqual(results(out(1)), reference, 'seed 1 equals the uninterrupted run');
  });

// ---- the seven cases -------------------------------------------------------------------------------------

/** XOR the least significant byte of `n` consecutive float32s (from byte 4096): every weight stays finite. */
function flipLowBytes(buf: Buffer, n: number): Buffer {
  const out = Buffer.from(buf);
  for (let i = 0; i < n; i++) out[4096 + 4 * i] ^= 0xff;
  return out;
}

/** A --data copy: the vocabulary, the corpus and the task splits. */
function dataCopy(tag: string): string {
  const dir = path.join(tmp(tag), 'data');
  fs.mkdirSync(path.join(dir, 'tasks'), { recursive: true });
  for (const f of ['vocab.json', 'corpus.jsonl']) fs.copyFileSync(path.join(REPO, 'data', f), path.join(dir, f));
  for (const f of fs.readdirSync(path.join(REPO, 'data', 'tasks'))) fs.copyFileSync(path.join(REPO, 'data', 'tasks', f), path.join(dir, 'tasks', f));
  return dir;
}

/** `toolrl ...` that should be refused at once: 90 s at most (a runner that does not refuse is stopped, not waited for). */
const quick = (args: string[]) => toolrl(args, 90_000);

/** A refusal as the command line must give it: `code`, one stderr line naming `what`, no backend started. */
function refused(r: { status: number | null; stdout: string; stderr: string }, code: number, what: string | RegExp): void {
  assert.equal(r.status, code, r.stderr);
  assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, `one line: ${r.stderr}`);
  assert.ok(!/tfjs backend/.test(r.stderr + r.stdout), `no backend started: ${r.stderr}`);
  if (typeof what === 'string') assert.ok(r.stderr.includes(what), `names ${what}: ${r.stderr}`);
  else assert.match(r.stderr, what);
}

/** The user's files: a note and a sub-folder, and a check that they are exactly as written. */
function plantUserFiles(dir: string): () => void {
  fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'x\n');
  fs.writeFileSync(path.join(dir, 'sub', 't.tex'), 'y\n');
  return () => {
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'x\n', `${dir}/notes.txt survives`);
    assert.equal(fs.readFileSync(path.join(dir, 'sub', 't.tex'), 'utf8'), 'y\n', `${dir}/sub/t.tex survives`);
  };
}

const sweepDriver = (root: string) => {
  const driver = path.join(root, 'driver.ts');
  fs.writeFileSync(driver, `${SWEEP_IMPORTS}
const [root, force, ...extra] = process.argv.slice(2);
runSweep(planJobs('micro', { only: ['vanilla-rl'], seeds: [4294967295], root }), { concurrency: 1, force: force === 'force', extraArgs: extra })
  .then((f) => { for (const x of f) console.log('failed', x.code, x.reason); process.exitCode = f.length ? 1 : 0; });
`);
  return driver;
};

test('case 1: a folder with files the tool did not write is refused, and a user file survives --force, branch runs and reproduce',
  { timeout: 900_000 }, async () => {
    const parent = finishedRun();
    const expected = results(parent);
    const root = tmp('user');
    // a folder that is not a run folder: refused with and without --force, nothing written
    const foreign = path.join(root, 'foreign');
    const intact = plantUserFiles(foreign);
    for (const extra of [[], ['--force']]) {
      refused(quick([...RUN, '--out', foreign, ...extra]), 5, `${foreign} is not a run folder`);
      intact();
      assert.deepEqual(fs.readdirSync(foreign).sort(), ['notes.txt', 'sub']);
    }
    // a run folder of ours with user files: --force removes the results only, and the rerun equals the reference
    const own = path.join(root, 'own');
    fs.cpSync(parent, own, { recursive: true });
    const ownIntact = plantUserFiles(own);
    fs.writeFileSync(path.join(own, 'checkpoint', 'stale.bin'), 'old'); // inside a tool entry: goes with it
    const forced = toolrl([...RUN, '--out', own, '--force']);
    assert.equal(forced.status, 0, forced.stderr);
    ownIntact();
    assert.ok(!fs.existsSync(path.join(own, 'checkpoint', 'stale.bin')));
    assert.deepEqual(results(own), expected);
    refused(quick([...RUN, '--out', own, '--resume']), 6, 'holds a finished run');
    ownIntact();
    // branch runs: the parent's files are read only; the branch folder's user files survive its --force rerun
    fs.cpSync(path.join(own, 'resume'), path.join(own, 'branches', 'step-000003'), { recursive: true });
    const branchOut = path.join(root, 'branch');
    const branch = [...RUN, '--branch', own, '--at', '3', '--out', branchOut];
    const b1 = toolrl(branch);
    assert.equal(b1.status, 0, b1.stderr);
    const branchIntact = plantUserFiles(branchOut);
    const b2 = toolrl([...branch, '--force']);
    assert.equal(b2.status, 0, b2.stderr);
    branchIntact();
    ownIntact();
    assert.deepEqual(results(branchOut).metrics, expected.metrics, 'a branch under its own config continues the parent exactly');
    // reproduce (the sweep's child runs, --force): a folder that is not ours fails its job untouched; one that is keeps its files
    const store = path.join(root, 'results');
    const driver = sweepDriver(root);
    const job = path.join(store, 'micro', 'vanilla-rl', 'seed-4294967295');
    fs.mkdirSync(job, { recursive: true });
    fs.writeFileSync(path.join(job, 'notes.txt'), 'x\n');
    const s1 = toolrlAsync([store, 'force', '--backend', 'wasm'], [driver]);
    const r1 = await s1.done;
    assert.equal(r1.code, 1, r1.out);
    assert.match(r1.out, /failed 5 exited with code 5/);
    assert.deepEqual(fs.readdirSync(job).sort(), ['notes.txt', 'run.log']);
    fs.rmSync(path.join(job, 'notes.txt'));
    const r2 = await toolrlAsync([store, 'no', '--backend', 'wasm'], [driver]).done;
    assert.equal(r2.code, 0, r2.out + fs.readFileSync(path.join(job, 'run.log'), 'utf8'));
    const jobIntact = plantUserFiles(job);
    const r3 = await toolrlAsync([store, 'force', '--backend', 'wasm'], [driver]).done;
    assert.equal(r3.code, 0, r3.out + fs.readFileSync(path.join(job, 'run.log'), 'utf8'));
    jobIntact();
    // case 2: the largest seed is recorded exactly
    assert.equal(JSON.parse(fs.readFileSync(path.join(job, 'run.json'), 'utf8')).seed, 4294967295);
    assert.equal(JSON.parse(fs.readFileSync(path.join(job, 'summary.json'), 'utf8')).seed, 4294967295);
  });

test('case 2: seeds are integers in [0, 2^32 - 1] in decimal, refused otherwise (exit 2); the PRNG reads the whole value', () => {
  const out = path.join(tmp('seed'), 'run');
  for (const bad of ['4294967296', '4294967297', '99999999999999999999', '0x10', '1e3', '-1', '1.5', '']) {
    // (a bad clipRatio too: a runner that took the seed stops there instead of running)
    refused(quick(['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--seed', bad, '--set', 'grpo.clipRatio=-1', '--out', out]), 2, '--seed');
  }
  refused(quick(['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--set', 'grpo.seed=4294967297', '--set', 'grpo.clipRatio=-1',
    '--out', out]), 2, 'grpo.seed');
  refused(quick(['reproduce', '--preset', 'smoke', '--seeds', '1,4294967297', '--only', 'nope', '--results', path.dirname(out)]), 2, '--seeds');
  refused(quick(['calibrate', '--checkpoint', path.join(tmp('none'), 'ckpt'), '--seed', '0x10']), 2, '--seed');
  assert.ok(!fs.existsSync(out));
  // the streams of the committed seeds are those of before (first three draws as uint32), so their results stand
  const draws = (seed: number) => { const r = new Rng(seed); return [0, 1, 2].map(() => Math.floor(r.next() * 2 ** 32)); };
  assert.deepEqual(draws(1), [711699459, 1679400207, 1692264768]);
  assert.deepEqual(draws(2), [2452806494, 1295885689, 424736706]);
  assert.deepEqual(draws(3), [1504688780, 1089580401, 742839791]);
  assert.deepEqual(draws(0), [2673918951, 1525398398, 1851933717]);
  // 2^32 + 1 is not seed 1 again, nor 2^32 seed 0
  assert.notDeepEqual(draws(2 ** 32 + 1), draws(1));
  assert.notDeepEqual(draws(2 ** 32), draws(0));
  assert.throws(() => new Rng(1.5), /integer/);
  // seed 0 is a seed like any other: accepted (our own PRNG seeds the weights and sampling, never tfjs)
  const spec = getExperiment('vanilla-rl');
  runExperimentValidates(spec, 0);
  runExperimentValidates(spec, 4294967295);
});

function runExperimentValidates(spec: ReturnType<typeof getExperiment>, seed: number): void {
  const r = quick(['run', '--config', spec.name, '--preset', 'smoke', '--seed', String(seed), '--set', 'grpo.steps=0', '--out', path.join(tmp('v'), 'r')]);
  // grpo.steps=0 fails the config check after the seed check: the refusal names steps, not the seed
  refused(r, 2, 'grpo.steps must be an integer in [1, 100000] (steps), got 0');
}

test('case 3: flipped bits in a checkpoint are refused before any backend starts, naming weights.bin; old ones load with a warning', () => {
  const base = path.join(REPO, 'data', 'checkpoints', 'base');
  const rotten = path.join(tmp('rot'), 'ckpt');
  fs.cpSync(base, rotten, { recursive: true });
  const bin = path.join(rotten, 'weights.bin');
  fs.writeFileSync(bin, flipLowBytes(fs.readFileSync(bin), 64));
  refused(quick(['eval', '--checkpoint', rotten, '--limit', '1', '--backend', 'wasm']), 2, `${bin} is corrupt`);
  const out = path.join(tmp('rot-run'), 'run');
  refused(quick([...RUN, '--init', rotten, '--out', out]), 2, `${bin} is corrupt`);
  assert.ok(!fs.existsSync(out), 'the run folder is not touched');
  // the committed checkpoints carry their hash
  for (const name of ['base', 'instruct']) {
    const dir = path.join(REPO, 'data', 'checkpoints', name);
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
    assert.equal(json.weightsSha256, crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, 'weights.bin'))).digest('hex'), name);
  }
  // a checkpoint saved before hashes loads, with one line of warning
  const old = path.join(tmp('old'), 'ckpt');
  fs.cpSync(base, old, { recursive: true });
  const json = JSON.parse(fs.readFileSync(path.join(old, 'model.json'), 'utf8'));
  delete json.weightsSha256;
  fs.writeFileSync(path.join(old, 'model.json'), JSON.stringify(json, null, 1) + '\n');
  const r = toolrl(['eval', '--checkpoint', old, '--limit', '1', '--backend', 'wasm', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning:'));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0], /records no weightsSha256/);
});

test('case 4: every task file a run reads is validated before its folder is touched', () => {
  const data = dataCopy('tasks');
  const out = path.join(tmp('tasks-run'), 'run');
  for (const split of ['train', 'content_ood']) { // content_ood is read only by the final evaluation
    const file = path.join(data, 'tasks', `${split}.jsonl`);
    const good = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, 'not json\n' + good.split('\n').slice(1).join('\n'));
    refused(quick([...RUN, '--data', data, '--out', out]), 2, `${file}:1: invalid JSON`);
    assert.ok(!fs.existsSync(out), `${split}: the run folder is not created`);
    fs.writeFileSync(file, good);
  }
  const corpus = path.join(data, 'corpus.jsonl');
  fs.appendFileSync(corpus, '{"messages": 3}\n');
  refused(quick(['run', '--config', 'base', '--preset', 'micro', '--data', data, '--out', out]), 2, `${corpus}:3001`);
  assert.ok(!fs.existsSync(out));
});

test('case 5: every size knob has an upper bound, refused with exit 2 naming the knob and the bound', () => {
  const out = path.join(tmp('bounds'), 'run');
  const cases: [string, string][] = [['grpo.groupSize=1e6', 'grpo.groupSize must be an integer in [1, 64]'],
    ['grpo.promptsPerStep=100000', 'grpo.promptsPerStep must be an integer in [1, 512]'], ['grpo.maxContext=1000000', 'grpo.maxContext must be an integer in [1, 8192]'],
    ['grpo.maxMessageTokens=100000', 'grpo.maxMessageTokens must be an integer in [1, 4096]'], ['grpo.maxAssistantMessages=1000', 'grpo.maxAssistantMessages must be an integer in [1, 64]'],
  ];
  // (with a bad clipRatio: a runner without the bound stops at it instead of running out of memory)
  for (const [kv, msg] of cases) {
    refused(quick(['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--set', kv, '--set', 'grpo.clipRatio=-1', '--out', out]), 2, msg);
  }
  // a bound across fields: checked once the stage's config is merged
  refused(quick(['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--set', 'grpo.maxMessageTokens=2000', '--out', out]), 2,
    'grpo.maxMessageTokens must be at most grpo.maxContext (1024), got 2000');
  refused(quick(['run', '--config', 'base', '--preset', 'micro', '--set', 'sft.maxLen=100000', '--set', 'sft.lr=-1', '--out', out]), 2,
    'sft.maxLen must be an integer in [1, 8192]');
  // (a missing --data too: a bench that took the shape stops before it builds a model of 0.2 billion weights)
  refused(quick(['bench', '--model', '100000x1x1', '--data', path.join(out, 'none')]), 2, '--model 100000x1x1: the width D must be an integer in [1, 1024]');
  refused(quick(['eval', '--policy', 'teacher', '--limit', '0']), 2, '--limit');
  assert.ok(!fs.existsSync(out));
  // a task with a 10 MB user turn: refused naming the file, the line and the bound
  const data = dataCopy('huge');
  const file = path.join(data, 'tasks', 'train.jsonl');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const task = JSON.parse(lines[4]);
  task.turns[0].user = 'list '.repeat(2_000_000);
  lines[4] = JSON.stringify(task);
  fs.writeFileSync(file, lines.join('\n'));
  refused(quick([...RUN, '--data', data, '--out', out]), 2, `${file}:5: characters in the user message of turn 0: 10000000, over the bound of 4000`);
  assert.ok(!fs.existsSync(out));
});

test('case 6: a write that fails names its file and leaves no temp folder behind', { timeout: 300_000 }, () => {
  // a file-size limit of 1 MiB (SIGXFSZ ignored, so the write fails with EFBIG as a full disk fails with ENOSPC):
  // run.json, the logs and the rollouts fit, the first resume state's weights (1.3 MB) do not
  const out = path.join(tmp('efbig'), 'run');
  const r = spawnSync('bash', ['-c', 'trap "" XFSZ; ulimit -f 1024; exec "$0" "$@"', process.execPath, '--import', 'tsx', ...CLI, ...RUN, '--out', out],
    { cwd: REPO, encoding: 'utf8' });
  assert.equal(r.status, 1, r.stderr);
  const line = r.stderr.split('\n').find((l) => l.startsWith('toolrl run: error:')) ?? '';
  assert.match(line, new RegExp(`cannot write ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/resume\\.tmp/model/weights\\.bin\\.[0-9.]+tmp: EFBIG`));
  assert.ok(!fs.existsSync(path.join(out, 'resume.tmp')), 'the partial resume state is removed');
  assert.deepEqual(fs.readdirSync(out).filter((e) => e.includes('tmp')), []);
  // an atomic write to a full device: the error names the target, no temp file is left
  const dir = tmp('full');
  const target = path.join(dir, 'summary.json');
  fs.symlinkSync('/dev/full', path.join(dir, `.summary.json.${process.pid}.tmp`));
  assert.throws(() => writeFileAtomic(target, 'x'.repeat(100)), (e: Error) => e.message.includes(target) && /ENOSPC/.test(e.message));
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('case 7: one exit code per kind of refusal, whichever check meets it first; "holds results" suggests --resume only with a state',
  { timeout: 300_000 }, async () => {
    const dir = path.join(tmp('codes'), 'run');
    fs.cpSync(finishedRun(), dir, { recursive: true });
    // in use: the command line meets the lock in its checks, an in-process run only when it takes the lock; both 3
    const release = acquireLock(dir, 'run folder');
    try {
      refused(quick([...RUN, '--out', dir, '--force']), 3, `is in use by process ${process.pid}`);
      const overrides = Object.fromEntries(TINY.map((kv) => kv.split('=')).map(([k, x]) => [k, Number(x)]));
      await assert.rejects(runExperiment(getExperiment('vanilla-rl'), { preset: getPreset('smoke'), seed: 1, out: dir, overrides, force: true,
        progress: false }), (e: Error & { exitCode?: number }) => e.exitCode === 3 && /in use by process/.test(e.message));
    } finally {
      release();
    }
    // holds results: a finished run (its resume state left) is not resumable, so --resume is not suggested
    const finished = toolrl([...RUN, '--out', dir]);
    refused(finished, 4, 'already holds results');
    assert.ok(!finished.stderr.includes('--resume'), finished.stderr);
    fs.rmSync(path.join(dir, 'summary.json')); // killed before its end: now --resume is the way on
    const killed = toolrl([...RUN, '--out', dir]);
    refused(killed, 4, 'or --resume to continue the killed run');
    refused(quick([...RUN, '--out', path.join(dir, 'nothing-here'), '--resume']), 6, 'no resume state');
    const help = toolrl(['run', '--help']);
    assert.match(help.stdout, /exit codes: 0 done; 1 failed while running; 2 .*; 3 .*; 4 .*; 5 .*; 6 /);
  });
