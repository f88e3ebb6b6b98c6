import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { saveCheckpoint } from '../lib/model/checkpoint';
import { runExperiment, RunOptions } from '../lib/experiments/run/runner';
import { branchResultsDir } from '../lib/experiments/store/branch';
import { getPreset } from '../lib/experiments/registry/presets';
import { ExperimentSpec, rlSizes, StageSpec } from '../lib/experiments/registry/spec';
import { readMetrics } from '../lib/train/metrics';
import { grpoRecords, MetricRecord, numberField } from '../lib/train/records';
import { runEval, formatEval } from '../lib/cli/eval';
import { tokenizer, tinyModel, tmpDir } from './helpers';

let baseDir = '';
before(async () => {
  await initBackend({ backend: 'wasm' });
  baseDir = path.join(tmpDir('grpo'), 'base');
  const m = tinyModel(11);
  saveCheckpoint(baseDir, m, { vocabFingerprint: tokenizer().fingerprint });
  m.dispose();
});

const spec = (sharePrompts = false): ExperimentSpec => ({
  name: 'vanilla-rl-test', title: 'test', paper: 'test', label: 'test', group: 'method',
  init: { kind: 'checkpoint', path: baseDir },
  stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: 1e-3, maxContext: 400, maxMessageTokens: 12, probeTasks: 4, sharePrompts } }],
});
const opts = (out: string, extra: Partial<RunOptions> = {}): RunOptions => ({
  preset: getPreset('smoke'), seed: 1, out, progress: false, evalSplits: ['id'], ...extra,
});
const TIMING = ['rolloutSeconds', 'trainSeconds', 'rolloutTokensPerS', 'trainTokensPerS'];
const strip = (recs: MetricRecord[]) => recs.map((r) => {
  const c: Record<string, unknown> = { ...r };
  for (const k of TIMING) delete c[k];
  return c;
});

test('a 3-step GRPO smoke run logs every instrument and writes the summary', async () => {
  const out = tmpDir('smoke');
  const before = tf.memory().numTensors;
  const s = await runExperiment(spec(), opts(out));
  assert.equal(tf.memory().numTensors, before, 'the run leaked tensors');
  const recs = grpoRecords(readMetrics(path.join(out, 'metrics.jsonl')));
  assert.equal(recs.length, 3);
  for (const k of ['reward', 'zeroRewardGroups', 'zeroVarianceGroups', 'selfTopOther', 'otherTopOther', 'entropy', 'kl', 'clipFrac', 'gradNorm', 'rolloutTokensPerS', 'trainTokensPerS',
    'pJsonOpen', 'pImEnd', 'pToolCall', 'selfJsonOpen', 'otherJsonOpen', 'selfImEnd', 'otherImEnd', 'selfToolCall', 'otherToolCall',
    'pTopOther', 'healthyCall', 'healthyResponse', 'pollution', 'fullCollapse']) {
    for (const r of recs) assert.equal(typeof numberField(r, k), 'number', `${k} missing`);
  }
  const p = recs[0];
  assert.ok(p.pJsonOpen + p.pImEnd + p.pToolCall + p.pTopOther! <= 1 + 1e-6);
  assert.equal(typeof p.probeTopOther, 'string');
  assert.ok(!['{"', '<|im_end|>', '<tool_call>'].includes(p.probeTopOther!), 'the top other token is none of the three');
  assert.equal(typeof recs[2].valAccuracy, 'number', 'validation at the last step');
  const shares = p.healthyCall + p.healthyResponse + p.pollution + p.fullCollapse;
  assert.ok(Math.abs(shares - 1) < 1e-6);
  assert.ok(s.rl && 'peakValAccuracy' in s.rl && 'collapseStep' in s.rl && 'finalStates' in s.rl);
  const saved = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
  // the committed excerpt of the rollouts: step 1 (and every 10th step, none in a 3-step run)
  const sample = fs.readFileSync(path.join(out, 'rollouts-sample.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(sample.length > 0 && sample.every((r) => r.step === 1), 'rollouts-sample.jsonl holds the step-1 records');
  assert.equal(typeof saved.rl.stepsWithSignal, 'number');
  assert.deepEqual(Object.keys(saved.rl.finalStates).sort(), ['fullCollapse', 'healthyCall', 'healthyResponse', 'pollution']);
  assert.ok(fs.existsSync(path.join(out, 'checkpoint', 'model.json')));
  const rollouts = fs.readFileSync(path.join(out, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rollouts.length, 3 * 2 * 8); // steps x prompts x group
  assert.ok(['taskId', 'messages', 'reward', 'errorTurn'].every((k) => k in rollouts[0]));
});

test('shared prompts (grpo.sharePrompts): the same first rollouts and first loss, no leaked tensors', async () => {
  const plain = tmpDir('plain');
  const shared = tmpDir('shared');
  await runExperiment(spec(), opts(plain));
  const before = tf.memory().numTensors;
  await runExperiment(spec(true), opts(shared));
  assert.equal(tf.memory().numTensors, before, 'the shared-prompt run leaked tensors');
  const first = (dir: string) => fs.readFileSync(path.join(dir, 'rollouts.jsonl'), 'utf8').trim().split('\n')
    .map((l) => JSON.parse(l)).filter((r) => r.step === 1).map((r) => JSON.stringify(r.messages));
  assert.equal(first(plain).length, 2 * 8, 'step 1: prompts x group');
  assert.deepEqual(first(shared), first(plain), 'step 1 samples before any update: the same rollouts');
  const [a, b] = [plain, shared].map((d) => grpoRecords(readMetrics(path.join(d, 'metrics.jsonl')))[0]);
  for (const k of ['loss', 'gradNorm'] as const) {
    const x = numberField(a, k) as number;
    const y = numberField(b, k) as number;
    assert.ok(Math.abs(x - y) <= 1e-4 * Math.max(1, Math.abs(x)), `step 1 ${k}: ${x} vs ${y}`);
  }
});

test('--resume continues a killed run and reproduces the uninterrupted metrics', async () => {
  const overrides = { 'grpo.steps': 4, 'grpo.checkpointEvery': 2, 'grpo.valEvery': 2 };
  const full = tmpDir('full');
  await runExperiment(spec(), opts(full, { overrides }));
  const killed = tmpDir('killed');
  await assert.rejects(runExperiment(spec(), opts(killed, {
    overrides, onStep: (r) => { if (r.step === 3) throw new Error('simulated kill'); },
  })), /simulated kill/);
  assert.ok(fs.existsSync(path.join(killed, 'resume', 'state.json')));
  const spent = JSON.parse(fs.readFileSync(path.join(killed, 'resume', 'state.json'), 'utf8')).seconds;
  assert.ok(spent > 0, 'the state records the seconds spent before it');
  const t0 = Date.now();
  const resumed = await runExperiment(spec(), opts(killed, { overrides, resume: true }));
  const own = (Date.now() - t0) / 1000;
  assert.ok(resumed.seconds >= spent + own - 0.05 && resumed.seconds <= spent + own + 0.05,
    `summary seconds ${resumed.seconds}: the killed process's ${spent} plus this one's ${own}`);
  const a = strip(readMetrics(path.join(full, 'metrics.jsonl')));
  const b = strip(readMetrics(path.join(killed, 'metrics.jsonl')));
  assert.equal(b.length, a.length);
  assert.deepEqual(b, a);
  assert.equal(fs.readFileSync(path.join(killed, 'rollouts.jsonl'), 'utf8'), fs.readFileSync(path.join(full, 'rollouts.jsonl'), 'utf8'));
});

test('--branch continues a run from a branch point: under its own config exactly, under another method from there', async () => {
  const overrides = { 'grpo.steps': 4, 'grpo.checkpointEvery': 2, 'grpo.valEvery': 2 };
  const keep = { ...getPreset('smoke'), resumePoints: true };
  const parent = tmpDir('parent');
  await runExperiment(spec(), opts(parent, { overrides, preset: keep }));
  assert.ok(fs.existsSync(path.join(parent, 'branches', 'step-000002', 'state.json')), 'a branch point every checkpointEvery steps');
  // the same config from step 2: the parent's run again, record for record
  const same = tmpDir('branch-same');
  await runExperiment(spec(), opts(same, { overrides, preset: keep, branch: { from: parent, step: 2 } }));
  assert.deepEqual(strip(readMetrics(path.join(same, 'metrics.jsonl'))), strip(readMetrics(path.join(parent, 'metrics.jsonl'))));
  assert.equal(fs.readFileSync(path.join(same, 'rollouts.jsonl'), 'utf8'), fs.readFileSync(path.join(parent, 'rollouts.jsonl'), 'utf8'));
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(same, 'run.json'), 'utf8')).branch, { from: parent, step: 2 });
  assert.equal(branchResultsDir('smoke', 'ops', parent, 2, 'R'), path.join('R', 'smoke', 'branches', `ops-from-${spec().name}-${path.basename(parent)}-at-2`),
    'the default folder of a branch names the config, its parent and the step');
  // OPS from step 2: the parent's first two steps, then scripted ground-truth rollouts
  const ops: ExperimentSpec = { ...spec(), name: 'ops-branch', stages: (p) => [{ ...spec().stages(p)[0], signal: { kind: 'ops' } } as StageSpec] };
  const other = tmpDir('branch-ops');
  await runExperiment(ops, opts(other, { overrides, preset: keep, branch: { from: parent, step: 2 } }));
  const [a, b] = [grpoRecords(readMetrics(path.join(parent, 'metrics.jsonl'))), grpoRecords(readMetrics(path.join(other, 'metrics.jsonl')))];
  assert.deepEqual(strip(b.slice(0, 2)), strip(a.slice(0, 2)));
  assert.deepEqual(b.map((r) => r.step), [1, 2, 3, 4]);
  const rolls = fs.readFileSync(path.join(other, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(rolls.filter((r) => r.step <= 2).every((r) => !r.scripted) && rolls.some((r) => r.step > 2 && r.scripted));
  await assert.rejects(runExperiment(spec(), opts(tmpDir('branch-bad'), { overrides, preset: keep, branch: { from: parent, step: 3 } })),
    /has no branch point at step 3 \(it has 2\)/);
  await assert.rejects(runExperiment(spec(), opts(tmpDir('branch-bad'), { overrides, preset: keep, branch: { from: tmpDir('empty'), step: 2 } })),
    /holds no run/);
});

test('--init starts from another checkpoint (recorded in run.json); id_constrained is the capability probe', async () => {
  const out = path.join(tmpDir('grpo-init'), 'run');
  const evalOnly: ExperimentSpec = { ...spec(), init: { kind: 'checkpoint', path: path.join(out, 'missing') }, stages: () => [] };
  await assert.rejects(runExperiment(evalOnly, opts(out)), /missing/); // the config's own init does not exist
  const s = await runExperiment(evalOnly, opts(out, { initCheckpoint: baseDir, evalSplits: ['id', 'id_constrained'] }));
  assert.equal(JSON.parse(fs.readFileSync(path.join(out, 'run.json'), 'utf8')).init, baseDir);
  const [free, constrained] = [s.eval.id, s.eval.id_constrained];
  assert.ok(free && constrained);
  assert.deepEqual(Object.keys(constrained.perCategory), Object.keys(free.perCategory)); // the same ID tasks
});

test('toolrl eval --json-start: the stricter probe runs on JSON splits and refuses format_ood', async () => {
  const r = await runEval({ checkpoint: baseDir, split: 'id', limit: 1, constrained: false, jsonStart: true, dataDir: 'data', progress: false });
  assert.equal(r.jsonStart, true);
  assert.match(formatEval(r), /only \{" after <tool_call>/);
  await assert.rejects(runEval({ checkpoint: baseDir, split: 'format_ood', limit: 1, constrained: false, jsonStart: true,
    dataDir: 'data', progress: false }), /python syntax/);
});
