import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { teacherTrajectory } from '../lib/envs/teacher';
import { encodeConversation } from '../lib/train/encode';
import { padBatch } from '../lib/train/batch';
import { trainSFT, sftStep } from '../lib/train/sft';
import { AdamW } from '../lib/train/optim';
import { maskedCrossEntropy } from '../lib/model/logprobs';
import { tokenizer, tasks, tinyModel } from './helpers';

before(async () => {
  await initBackend({ backend: 'wasm' });
});

const seqs = () => tasks('train').slice(0, 4).map((t) => encodeConversation(tokenizer(), teacherTrajectory(t)));

test('encodeConversation: mask is 1 on assistant content and its <|im_end|> only', () => {
  const tok = tokenizer();
  const conv = teacherTrajectory(tasks('train')[0]);
  const enc = encodeConversation(tok, conv);
  const assistantText = conv.filter((m) => m.role === 'assistant').map((m) => m.content + '<|im_end|>').join('');
  assert.equal(tok.decode(enc.ids.filter((_, i) => enc.lossMask[i] === 1)), assistantText);
});

test('SFT drives the loss of a tiny fixed set down by >= 90%', async () => {
  const model = tinyModel(1, { nEmbd: 32, nHead: 2 });
  const data = seqs();
  const res = await trainSFT(model, data, { lr: 1e-2, epochs: 60, batchSize: 4, warmupRatio: 0.05, seed: 1 }, { progress: false });
  assert.ok(res.finalLoss <= 0.1 * res.firstLoss, `loss ${res.firstLoss} -> ${res.finalLoss}`);
  model.dispose();
});

test('masked (observation / prompt) positions receive zero gradient', () => {
  const data = seqs().slice(0, 2);
  const batch = padBatch(data, 1024);
  const model = tinyModel();
  const g = tf.tidy(() => {
    const logits = model.forward(batch.inputs);
    const grad = tf.grad((z: tf.Tensor) => maskedCrossEntropy(z as tf.Tensor3D, batch.targets, batch.mask))(logits);
    return tf.sum(tf.abs(grad), -1).arraySync() as number[][]; // [B, T] gradient mass per position
  });
  const mask = batch.mask.arraySync() as number[][];
  let zeros = 0;
  let nonzeros = 0;
  mask.forEach((row, b) => row.forEach((m, t) => {
    if (m === 0) { assert.equal(g[b][t], 0); zeros++; } else { assert.ok(g[b][t] > 0); nonzeros++; }
  }));
  assert.ok(zeros > 0 && nonzeros > 0);
  batch.dispose();
  model.dispose();
});

test('SFT step is deterministic and leaks no tensors', () => {
  const run = () => {
    const model = tinyModel(7);
    const opt = new AdamW(model.params());
    const before = tf.memory().numTensors;
    const losses = [0, 1, 2].map(() => sftStep(model, opt, seqs(), 1e-3, 1024).loss);
    assert.equal(tf.memory().numTensors, before, 'sft step leaked tensors');
    opt.dispose();
    model.dispose();
    return losses;
  };
  assert.deepEqual(run(), run());
});

test('a NaN loss stops training naming the step, before the optimizer touches a weight', async () => {
  const model = tinyModel(3);
  // poison one weight: every logit, hence the loss, becomes NaN
  const w = model.params().get('lm_head.weight')!;
  tf.tidy(() => w.assign(tf.fill(w.shape, NaN)));
  const before = new Map([...model.params()].map(([k, v]) => [k, Array.from(v.dataSync())]));
  await assert.rejects(trainSFT(model, seqs(), { epochs: 1, batchSize: 2 }, { progress: false }),
    /^Error: diverged: sft step 1 \(stage 0\): the loss is NaN at learning rate /);
  // An update with NaN gradients would turn every weight NaN (the global-norm clip spreads it): the check
  // must come before the optimizer step, so the model a caller saves after catching the error is the one it had.
  for (const [k, v] of model.params()) {
    const after = Array.from(v.dataSync());
    if (k !== 'lm_head.weight') assert.ok(after.every(Number.isFinite), `${k} turned non-finite`);
    assert.deepEqual(after, before.get(k), `${k} changed`);
  }
  model.dispose();
});

test('SFT leaves out a sequence whose trained tokens the truncation cuts away, and refuses a set of only those', async () => {
  const data = seqs();
  // the first trained token of each sequence, and a maxLen that keeps it in the earliest ones only: at maxLen
  // cut + 1 the targets are tokens 1 .. cut
  const firstTrained = data.map((s) => s.lossMask.indexOf(1));
  const cut = Math.min(...firstTrained);
  const keeps = firstTrained.filter((p) => p <= cut).length;
  assert.ok(keeps >= 1 && keeps < data.length, `first trained tokens at ${firstTrained}`);
  // the same sequences again, with the prompt padded by 50 tokens so their trained part starts past `cut`
  const late = data.map((s) => ({ ids: [...Array(50).fill(s.ids[0]), ...s.ids],
    lossMask: [...Array(50).fill(0), ...s.lossMask] }));
  const model = tinyModel(3);
  const before = tf.memory().numTensors;
  // before the fix, a batch of only cut-away sequences failed: "Cannot find a connection between any variable ..."
  const res = await trainSFT(model, [...data, ...late], { epochs: 1, batchSize: 1, maxLen: cut + 1, seed: 1 },
    { progress: false });
  assert.equal(res.skipped, data.length - keeps + late.length);
  assert.equal(res.steps, keeps);
  assert.equal(tf.memory().numTensors, before);
  await assert.rejects(trainSFT(model, late, { epochs: 1, maxLen: cut + 1 }, { progress: false }),
    /none of the 4 sequences has a trained token within its first/);
  model.dispose();
});
