import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { initBackend } from '../lib/backend';
import { Rng } from '../lib/prng';
import { saveCheckpoint } from '../lib/model/checkpoint';
import { runExperiment } from '../lib/experiments/run/runner';
import { getPreset } from '../lib/experiments/registry/presets';
import { ExperimentSpec, StageSpec } from '../lib/experiments/registry/spec';
import { readMetrics } from '../lib/train/metrics';
import { GuardMetric, grpoRecords, InterleaveMetric } from '../lib/train/records';
import { readStepRecords } from '../lib/train/interleaved';
import { Episode } from '../lib/envs/episode';
import { makeHint } from '../lib/envs/hints';
import { renderConversation, ASSISTANT_PREFIX } from '../lib/format/chat';
import { rollout } from '../lib/train/rollout';
import { disposeMiniBatches, prepareMiniBatches } from '../lib/train/grpo/prepare';
import { LogitMask, Trajectory } from '../lib/train/trajectory';
import { tokenizer, tasks, tinyModel, tmpDir } from './helpers';

let baseDir = '';
before(async () => {
  await initBackend({ backend: 'wasm' });
  baseDir = path.join(tmpDir('signals'), 'base');
  const m = tinyModel(5);
  saveCheckpoint(baseDir, m, { vocabFingerprint: tokenizer().fingerprint });
  m.dispose();
});

const small = { steps: 2, promptsPerStep: 2, promptsPerMiniBatch: 1, valEvery: 2, valTasksPerCategory: 1, checkpointEvery: 0,
  lr: 1e-3, maxContext: 400, maxMessageTokens: 12, probeTasks: 2 };
const run = async (name: string, stages: StageSpec[]) => {
  const spec: ExperimentSpec = { name, title: name, paper: name, label: name, group: 'method',
    init: { kind: 'checkpoint', path: baseDir }, stages: () => stages };
  const out = tmpDir(name);
  await runExperiment(spec, { preset: getPreset('smoke'), seed: 1, out, progress: false, evalSplits: ['id'] });
  return { out, metrics: readMetrics(path.join(out, 'metrics.jsonl')), records: readStepRecords(path.join(out, 'rollouts.jsonl')) };
};

test('OPS: rollout 0 of every group is the ground truth, executed and rewarded 1; LUFFY reweights its tokens', async () => {
  const firstLoss: number[] = [];
  const firstRollouts: string[] = [];
  for (const luffyGamma of [null, 0.1]) {
    const r = await run('ops', [{ kind: 'grpo', config: small, signal: { kind: 'ops', config: { luffyGamma } } }]);
    const first = r.records.filter((x) => x.index === 0);
    assert.ok(first.length > 0 && first.every((x) => x.scripted && x.reward === 1));
    assert.ok(r.records.filter((x) => x.index > 0).every((x) => !x.scripted));
    const grpo = grpoRecords(r.metrics);
    assert.ok(grpo.every((m) => Number.isFinite(m.loss)));
    firstLoss.push(grpo[0].loss);
    firstRollouts.push(JSON.stringify(r.records.filter((x) => x.step === 1)));
  }
  // Same seed, same start: step 1 samples the same rollouts with and without LUFFY, so its loss differs only
  // by the weighting of the ground-truth tokens. Plain GRPO gives them -A * ratio (= -A at step 1); LUFFY gives
  // -A * p / (p + 0.1), and an untrained policy has small p. A run that ignored luffyGamma would tie.
  assert.ok(firstRollouts[0].length > 2);
  assert.equal(firstRollouts[0], firstRollouts[1]);
  assert.ok(Math.abs(firstLoss[0] - firstLoss[1]) > 1e-3, `loss at step 1: ${firstLoss.join(' vs ')}`);
});

test('HBG: hinted rollouts are trained on the hint-free prompt', async () => {
  const tok = tokenizer();
  const task = tasks('train')[0];
  const model = tinyModel(2);
  const config = { maxContext: 500, maxMessageTokens: 64 };
  const [hinted] = rollout(model, tok, [new Episode(task, { hint: makeHint(task) })], { rng: new Rng(1), config });
  // the trajectory holds the hint-free prompt from its first token, and needs a scoring pass for its old log-probs
  assert.ok(!tok.decode(hinted.ids).includes('Hint: '));
  assert.deepEqual(hinted.ids.slice(0, hinted.promptLength), tok.encode(renderConversation(new Episode(task).initialMessages()) + ASSISTANT_PREFIX));
  assert.ok(hinted.rescore && hinted.messages.length > 0 && hinted.messages.every((m) => m.end <= hinted.ids.length));
  // the same messages sampled without a hint: every sampled token forced to the hinted rollout's
  const own = hinted.messages.map((m) => hinted.ids.slice(m.start, m.end));
  let k = -1;
  const all = Array.from({ length: tok.size }, (_, i) => i);
  const force: LogitMask = (_row, soFar) => {
    if (soFar.length === 0) k++;
    return all.filter((i) => i !== own[k][soFar.length]);
  };
  const [plain] = rollout(model, tok, [new Episode(task)], { rng: new Rng(2), config, logitMask: force });
  assert.ok(!plain.rescore);
  for (const key of ['ids', 'lossMask', 'offPolicy', 'promptLength'] as const) assert.deepEqual(hinted[key], plain[key], key);
  assert.deepEqual(hinted.messages.map((m) => [m.start, m.end, m.content]), plain.messages.map((m) => [m.start, m.end, m.content]));
  // the training tensors: the hinted rollout's (scored on the hint-free context) equal the plain one's (the sampler's)
  const prepare = (t: Trajectory) => prepareMiniBatches({ model, ref: null, trajs: [t], advantages: [0.5], groupSize: 1,
    promptsPerMiniBatch: 1, maxContext: 500, microBatchTokens: 8192, sharePrompts: false });
  const [ph, pp] = [prepare(hinted), prepare(plain)];
  assert.equal(ph.rescored, 1);
  assert.equal(pp.rescored, 0);
  const [mh, mp] = [ph.minibatches[0].micro[0], pp.minibatches[0].micro[0]];
  for (const key of ['inputs', 'targets', 'mask'] as const) assert.deepEqual(mh.batch[key].arraySync(), mp.batch[key].arraySync(), key);
  assert.deepEqual(mh.batch.extras.adv.arraySync(), mp.batch.extras.adv.arraySync());
  const [oh, op] = [mh.old.arraySync(), mp.old.arraySync()];
  assert.equal(oh.length, op.length);
  oh.forEach((x, i) => assert.ok(Math.abs(x - op[i]) < 1e-5, `old log-prob ${i}: ${x} vs ${op[i]}`));
  disposeMiniBatches(ph.minibatches);
  disposeMiniBatches(pp.minibatches);
  model.dispose();
  const r = await run('hbg', [{ kind: 'grpo', config: small, signal: { kind: 'hbg' } }]);
  assert.equal(r.metrics.filter((m) => m.phase === 'grpo').length, 2);
});

test('synchronous per-update SFT loss adds weight x the teacher cross-entropy to the GRPO loss', async () => {
  // Step 1 samples the same rollouts whatever the weight (same seed, same start), so its loss differs only by
  // the SFT term: weight x CE, and a random tiny model has CE ~ log(vocab) > 3 on the teacher tokens.
  const step1 = async (weight: number) => {
    const r = await run('sync-sft', [{ kind: 'grpo', config: small, signal: { kind: 'sync-sft', config: { weight } } }]);
    return grpoRecords(r.metrics)[0].loss;
  };
  const [l0, l1, l2] = [await step1(0), await step1(1), await step1(2)];
  assert.ok(l1 - l0 > 3, `SFT term ${l1 - l0} (losses ${l0}, ${l1})`);
  assert.ok(Math.abs((l2 - l0) - 2 * (l1 - l0)) < 1e-3 * (l1 - l0), `weight 2 adds ${l2 - l0}, weight 1 adds ${l1 - l0}`);
});

test('ETS and PRS: SFT phases between RL stages, built from the last RL steps', async () => {
  for (const source of ['ets', 'prs'] as const) {
    const sft: StageSpec = { kind: 'sft-interleaved', source, lastSteps: 10, config: { lr: 1e-3, epochs: 1, batchSize: 8 } };
    const r = await run(source, [{ kind: 'grpo', config: small }, sft, { kind: 'grpo', config: { ...small, steps: 1 } }]);
    const inter = r.metrics.find((m): m is InterleaveMetric => m.phase === 'interleave')!;
    assert.ok(inter.failedTasks > 0, 'a random policy fails tasks');
    // PRS adds one reflection per group of the last steps to the ETS data
    if (source === 'prs') assert.ok(inter.samples > inter.failedTasks);
    else assert.equal(inter.samples, inter.failedTasks);
    assert.ok(r.metrics.some((m) => m.phase === 'sft' && m.stage === 1));
    const steps = grpoRecords(r.metrics).map((m) => m.globalStep);
    assert.deepEqual(steps, steps.slice().sort((a, b) => a - b), 'global steps increase across stages');
    assert.deepEqual(Array.from(new Set(r.records.map((x) => x.stage))), [0, 2]);
  }
});

test('collapse guard: crossing a threshold starts an SFT phase and a fresh optimizer', async () => {
  const r = await run('guard', [{ kind: 'grpo', config: { ...small, steps: 3 },
    guard: { pImEnd: 0, pJsonOpen: 0, fullCollapse: 0, minGap: 1, maxPhases: 1, lastSteps: 10, sft: { lr: 1e-3, epochs: 1, batchSize: 8 } } }]);
  const g = r.metrics.filter((m): m is GuardMetric => m.phase === 'guard');
  assert.equal(g.length, 1, 'maxPhases caps the phases');
  assert.equal(g[0].step, 1);
  assert.ok(r.metrics.some((m) => m.phase === 'sft'));
  assert.equal(r.metrics.filter((m) => m.phase === 'grpo').length, 3);
  // the phase's SFT steps sit between RL steps 1 and 2 on the global-step axis, never on top of them
  const axis = r.metrics.filter((m) => m.phase === 'grpo' || m.phase === 'sft').map((m) => m.globalStep as number);
  assert.deepEqual(axis, axis.map((_, i) => axis[0] + i), 'one global step per SFT or RL step, in order');
  assert.ok(fs.existsSync(path.join(r.out, 'summary.json')));
});
