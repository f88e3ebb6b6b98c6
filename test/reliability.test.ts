// Fault injection on run folders: bad options on a copy of a committed run, kill -9 at a random step of a
// run and of a 2-run sweep, torn log lines, a second writer, a resume state of another run. Each probe
// asserts that nothing it should not touch changed, and that the final store equals an uninterrupted one.
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
import { getExperiment } from '../lib/experiments/configs';
import { getPreset } from '../lib/experiments/presets';
import { runExperiment } from '../lib/experiments/runner';
import { acquireLock } from '../lib/util/lock';
import { parseJsonl, readJsonlValues } from '../lib/util/jsonl';
import { readMetrics } from '../lib/train/metrics';
import { loadTokenizer } from '../lib/format/tokenizer';
import { loadResumeState } from '../lib/experiments/resume';

const REPO = path.resolve(__dirname, '..');
const COMMITTED = path.join(REPO, 'data', 'results', 'full', 'vanilla-rl', 'seed-1');
const TINY = ['grpo.groupSize=2', 'grpo.promptsPerStep=1', 'grpo.promptsPerMiniBatch=1', 'grpo.maxMessageTokens=16',
  'grpo.maxAssistantMessages=2', 'grpo.probeTasks=1', 'grpo.steps=4', 'grpo.checkpointEvery=1', 'grpo.valEvery=4'];
const SET = [...TINY.flatMap((s) => ['--set', s]), '--backend', 'wasm'];
const RUN = ['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--seed', '1', ...SET];
const CLI = [path.join(REPO, 'lib', 'cli', 'main.ts')];

const tmp = (tag: string) => fs.mkdtempSync(path.join(os.tmpdir(), `toolrl-rel-${tag}-`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `toolrl ...` to completion. */
function toolrl(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', ...CLI, ...args], { cwd: REPO, encoding: 'utf8' });
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
  await assert.rejects(runExperiment(spec, { ...opts, overrides: { 'grpo.clipRatio': -1 } }), /clipRatio must be in \(0, 1\), got -1/);
  await assert.rejects(runExperiment(spec, { ...opts, overrides: { 'grpo.temperature': 0 } }), /temperature must be > 0/);
  await assert.rejects(runExperiment(spec, { ...opts, overrides: { 'grpo.lr': 'x' } }), /expected a number/);
  await assert.rejects(runExperiment(spec, opts), new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} already holds results`));
  await assert.rejects(runExperiment(spec, { ...opts, resume: true }), /no resume state/);
  await assert.rejects(runExperiment(spec, { ...opts, resume: true, force: true }), /exclude each other/);
  // the command line: one error style, exit 2, and no backend started
  const r = toolrl(['run', '--config', 'vanilla-rl', '--set', 'grpo.clipRatio=-1', '--out', dir]);
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stderr, 'toolrl run: error: stage 0 (grpo): grpo config: clipRatio must be in (0, 1), got -1\n');
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
    assert.equal(second.status, 2, second.stderr);
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

test('kill -9 of a 2-run sweep at a random step: its runs stop on their own; a rerun finishes them as if uninterrupted',
  { timeout: 240_000 }, async () => {
    const root = tmp('sweep');
    const driver = path.join(root, 'driver.ts');
    const sweep = path.join(REPO, 'lib', 'experiments', 'sweep');
    fs.writeFileSync(driver, `import { planJobs, runSweep } from ${JSON.stringify(sweep)};
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
