import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { Rng } from '../lib/prng';
import { Episode } from '../lib/envs/episode';
import { teacherAssistantMessages } from '../lib/envs/teacher';
import { TOOL_CALL_OPEN } from '../lib/format/tokens';
import { microBatches } from '../lib/train/batch';
import { rollout } from '../lib/train/rollout';
import { Trajectory } from '../lib/train/trajectory';
import { sampleToken, readProbs } from '../lib/train/sampling';
import { entropyFromLogits } from '../lib/model/logprobs';
import { AdamW, disposeGrads } from '../lib/train/optim';
import { probeTokenIds } from '../lib/diagnostics/probe';
import { Prepared, disposeMiniBatches, prefixContext, prepareMiniBatches } from '../lib/train/grpo/prepare';
import { probePositions, splitReadRequest } from '../lib/train/grpo/instruments';
import { scoreBatch } from '../lib/train/grpo/scoring';
import { miniBatchGrads, updateMiniBatch } from '../lib/train/grpo/update';
import { grpoAdvantages } from '../lib/train/grpo/advantages';
import { tokenizer, tasks, tinyModel } from './helpers';

before(async () => {
  await initBackend({ backend: 'wasm' });
});

const lossCfg = { clipRatio: 0.2, dualClip: 3.0, klCoef: 1e-4, entropyCoef: 0 };

test('microBatches: every row once, longest first, within the token budget unless a row alone exceeds it', () => {
  const lengths = [30, 200, 90, 95, 10, 600, 100, 40];
  const mbs = microBatches(lengths, 300);
  assert.deepEqual(mbs.flat().sort((a, b) => a - b), lengths.map((_, i) => i));
  assert.deepEqual(mbs[0], [5], 'the 600-token row exceeds the budget: alone');
  for (const mb of mbs) {
    const padded = lengths[mb[0]];
    assert.ok(mb.every((i) => lengths[i] <= padded), 'padded to the first row');
    if (mb.length > 1) assert.ok(mb.length * padded <= 300, `${mb.length} x ${padded}`);
  }
  assert.deepEqual(microBatches([5, 5, 5], 1e9), [[0, 1, 2]]);
  assert.throws(() => microBatches([1], 0), /maxTokens/);
});

test('sampleToken reports the untempered log-prob and entropy; readProbs the probe probabilities', () => {
  const row = [0.3, -1.2, 2.5, 0.0, 1.1, -0.4];
  const logits = new Float32Array(row);
  const lp = tf.tidy(() => tf.logSoftmax(tf.tensor1d(row)).arraySync() as number[]);
  const ent = tf.tidy(() => entropyFromLogits(tf.tensor3d([[row]])).arraySync()[0][0]);
  for (const temperature of [1, 0.7]) {
    const s = sampleToken(logits, 0, row.length, { temperature, greedy: false }, new Rng(4));
    assert.ok(Math.abs(s.logProb - lp[s.token]) < 1e-6);
    assert.ok(Math.abs(s.entropy - ent) < 1e-5, `${s.entropy} vs ${ent}`);
  }
  const r = readProbs(logits, 0, row.length, [2, 4]);
  assert.ok(Math.abs(r.probs[0] - Math.exp(lp[2])) < 1e-7 && Math.abs(r.probs[1] - Math.exp(lp[4])) < 1e-7);
  assert.equal(r.topOther.id, 0, 'the most likely token outside 2 and 4');
  assert.ok(Math.abs(r.topOther.p - Math.exp(lp[0])) < 1e-7);
});

/**
 * Rollouts of a tiny model: 2 tasks x group 4, rollout 0 of each group scripted (OPS), rollout 1 marked for a
 * scoring pass as a hinted one is. Every sampled message is forced to open with `<tool_call>\n`, so each has a probe
 * position.
 */
function stepRollouts(model: ReturnType<typeof tinyModel>): { trajs: Trajectory[]; adv: number[] } {
  const tok = tokenizer();
  const ts = tasks('train').slice(0, 2);
  const episodes = ts.flatMap((t) => Array.from({ length: 4 }, () => new Episode(t)));
  const allBut = (keep: number) => Array.from({ length: tok.size }, (_, i) => i).filter((i) => i !== keep);
  const trajs = rollout(model, tok, episodes, {
    rng: new Rng(11), config: { maxMessageTokens: 16, maxContext: 700 },
    logitMask: (_row, soFar) => (soFar.length === 0 ? allBut(tok.id(TOOL_CALL_OPEN)) : soFar.length === 1 ? allBut(tok.id('\n')) : null),
    scripts: episodes.map((e, i) => (i % 4 === 0 ? { messages: teacherAssistantMessages(e.task) } : undefined)),
    probeRead: { prefix: [tok.id(TOOL_CALL_OPEN), tok.id('\n')], tokens: probeTokenIds(tok) },
  });
  trajs.forEach((t, i) => { if (i % 4 === 1) t.rescore = true; });
  assert.ok(trajs.every((t, i) => t.rescore === (i % 4 < 2)), 'scripted rows need a scoring pass by themselves');
  assert.ok(trajs.some((t) => t.reward === 1), 'the scripted ground truth passes: the groups have an advantage');
  return { trajs, adv: grpoAdvantages(trajs.map((t) => t.reward), 4) };
}

/** The split's reads of every rollout: the scoring pass's for re-scored rows, the sampler's for the others. */
function splitReads(trajs: Trajectory[], prep: Prepared, request: ReturnType<typeof splitReadRequest>) {
  return trajs.flatMap((t, b) => request.positions(t).map((i) => {
    const r = (prep.reads.get(b) ?? t.probeReads).find((x) => x.index === i)!;
    return { sampled: t.ids[i], probs: r.probs, top: r.topOther.id };
  }));
}

for (const share of [false, true]) {
test(`old log-probs, entropies and probe reads from the sampler match a scoring pass; scripted and hinted rows are scored (sharePrompts ${share})`, () => {
  const tok = tokenizer();
  const model = tinyModel(5);
  const { trajs, adv } = stepRollouts(model);
  const n0 = tf.memory().numTensors;
  const request = splitReadRequest(tok, probeTokenIds(tok), 700);
  const prepare = (rows: Trajectory[]) => prepareMiniBatches({ model, ref: null, trajs: rows, advantages: adv, groupSize: 4,
    promptsPerMiniBatch: 1, maxContext: 700, microBatchTokens: share ? 300 : 600, sharePrompts: share, reads: request });
  const allScored = trajs.map((t) => ({ ...t, rescore: true }));
  const scoredAll = prepare(allScored); // every row through a scoring pass: the reference
  const prep = prepare(trajs);
  assert.equal(scoredAll.rescored, 8);
  assert.equal(prep.rescored, 4, 'the scripted and the hinted rollouts');
  // the sampler read every probe position of the sampled rollouts
  trajs.forEach((t, i) => {
    if (i % 4 > 1) assert.deepEqual(probePositions(t, tok.id(TOOL_CALL_OPEN), tok.id('\n'), 700), t.probeReads.map((r) => r.index));
  });
  assert.ok(prep.minibatches.every((mb) => mb.micro.length >= 2), 'the budget cut each mini-batch');
  let maxDiff = 0;
  let entSum = 0;
  let count = 0;
  for (const mb of prep.minibatches) {
    assert.equal(mb.prefix !== null, share);
    if (share) assert.ok(mb.prefix!.lens.every((l) => l > 50), `each group shares its prompt: ${mb.prefix!.lens}`);
    const kv = mb.prefix === null ? null : model.prefixKV(mb.prefix.ids);
    for (const m of mb.micro) {
      const s = scoreBatch(model, m.batch, [], [], true, prefixContext(mb, m, kv));
      const [o, l, e] = [m.old.arraySync(), s.logp.arraySync(), s.entropies!.arraySync()];
      o.forEach((x, k) => { maxDiff = Math.max(maxDiff, Math.abs(x - l[k])); entSum += e[k]; count++; });
      tf.dispose([s.logp, s.entropies!]);
    }
    for (const l of kv ?? []) tf.dispose([l.kT, l.v]);
  }
  assert.ok(count > 100);
  assert.ok(maxDiff < 1e-5, `old log-probs differ from scoring by ${maxDiff}`);
  assert.ok(Math.abs(prep.entropy - entSum / count) < 1e-5, `entropy ${prep.entropy} vs ${entSum / count}`);
  // probe reads: one per probe position, each a probability vector like the scoring pass's
  const [mine, ref] = [splitReads(trajs, prep, request), splitReads(allScored, scoredAll, request)];
  assert.ok(mine.length >= 6, `${mine.length} probe positions`);
  assert.deepEqual(mine.map((r) => r.sampled), ref.map((r) => r.sampled));
  mine.forEach((r, i) => r.probs.forEach((x, k) => assert.ok(Math.abs(x - ref[i].probs[k]) < 1e-5)));
  assert.deepEqual(mine.map((r) => r.top), ref.map((r) => r.top));
  assert.ok(Math.abs(prep.entropy - scoredAll.entropy) < 1e-5);
  disposeMiniBatches(prep.minibatches);
  disposeMiniBatches(scoredAll.minibatches);
  assert.equal(tf.memory().numTensors, n0, 'prepare and dispose leak nothing');
  model.dispose();
});
}

test('an update over micro-batches gives the loss and gradients of one padded batch', () => {
  const tok = tokenizer();
  const model = tinyModel(5);
  const ref = tinyModel(6);
  const { trajs, adv } = stepRollouts(model);
  const run = (budget: number, share = false) => {
    const prep = prepareMiniBatches({ model, ref, trajs, advantages: adv, groupSize: 4, promptsPerMiniBatch: 2,
      maxContext: 700, microBatchTokens: budget, sharePrompts: share });
    const n0 = tf.memory().numTensors;
    const r = miniBatchGrads(model, prep.minibatches[0], lossCfg);
    const grads = new Map([...r.grads].map(([k, g]) => [k, Array.from(g.dataSync())]));
    disposeGrads(r.grads);
    assert.equal(tf.memory().numTensors, n0, 'the gradients leak nothing');
    const micro = prep.minibatches[0].micro.length;
    disposeMiniBatches(prep.minibatches);
    return { terms: r.terms, grads, micro };
  };
  const one = run(1e9);
  assert.equal(one.micro, 1);
  // cut into micro-batches, and with each group's prompt read once (the prompts' part of the gradient in its own pass)
  for (const other of [run(500), run(300, true)]) {
    assert.ok(other.micro >= 3, `${other.micro} micro-batches`);
    for (const k of ['loss', 'pgLoss', 'kl', 'clipFrac'] as const) {
      assert.ok(Math.abs(one.terms[k] - other.terms[k]) <= 1e-6 * Math.max(1, Math.abs(one.terms[k])), `${k}: ${one.terms[k]} vs ${other.terms[k]}`);
    }
    let scale = 0;
    let diff = 0;
    assert.deepEqual([...other.grads.keys()].sort(), [...one.grads.keys()].sort(), 'a gradient for every parameter, nothing else');
    for (const [k, g] of one.grads) {
      g.forEach((x, i) => { scale = Math.max(scale, Math.abs(x)); diff = Math.max(diff, Math.abs(x - other.grads.get(k)![i])); });
    }
    assert.ok(scale > 0, 'the ground-truth rollouts give a gradient');
    assert.ok(diff <= 1e-5 * scale, `gradients differ by ${diff} (largest ${scale})`);
  }
  const many = run(500);
  // the optimizer step on top: a finite loss is applied, the gradients freed
  const opt = new AdamW(model.params());
  const prep = prepareMiniBatches({ model, ref, trajs, advantages: adv, groupSize: 4, promptsPerMiniBatch: 2,
    maxContext: 700, microBatchTokens: 500, sharePrompts: true });
  const n0 = tf.memory().numTensors;
  const u = updateMiniBatch(model, opt, prep.minibatches[0], lossCfg, 1e-2, { stepNo: 1 });
  assert.equal(tf.memory().numTensors, n0, 'the update leaks nothing');
  assert.ok(u.gradNorm > 0 && Math.abs(u.loss - many.terms.loss) < 1e-6);
  disposeMiniBatches(prep.minibatches);
  opt.dispose();
  model.dispose();
  ref.dispose();
});

test('entropyCoef subtracts entropyCoef x the token-mean entropy of the policy from the loss', () => {
  const tok = tokenizer();
  const model = tinyModel(5);
  const { trajs, adv } = stepRollouts(model);
  const loss = (entropyCoef: number) => {
    const m = tinyModel(5);
    const opt = new AdamW(m.params());
    const prep = prepareMiniBatches({ model: m, ref: null, trajs, advantages: adv, groupSize: 4, promptsPerMiniBatch: 2,
      maxContext: 700, microBatchTokens: 800, sharePrompts: true });
    const u = updateMiniBatch(m, opt, prep.minibatches[0], { ...lossCfg, entropyCoef }, 1e-2, { stepNo: 1 });
    disposeMiniBatches(prep.minibatches);
    opt.dispose();
    m.dispose();
    return { loss: u.loss, entropy: prep.entropy };
  };
  const plain = loss(0);
  const bonus = loss(0.5);
  // the first update's policy is the sampling policy, and the mini-batch is the whole step here
  assert.ok(Math.abs(plain.loss - bonus.loss - 0.5 * plain.entropy) < 1e-4, `${plain.loss} - ${bonus.loss} vs 0.5 x ${plain.entropy}`);
  model.dispose();
});
