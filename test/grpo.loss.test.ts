import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { grpoAdvantages, zeroRewardGroupShare } from '../lib/train/grpo/advantages';
import { policyLoss } from '../lib/train/grpo/loss';
import { gradientSplit } from '../lib/diagnostics/gradsplit';

before(async () => {
  await initBackend({ backend: 'cpu' });
});

const close = (a: number, b: number, tol = 1e-5) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const cfg = { clipRatio: 0.2, dualClip: 3.0, klCoef: 1e-4 };

test('GRPO advantages on hand-computed groups (unbiased std, eps 1e-6)', () => {
  // group [1, 0, 0, 0]: mean 0.25, unbiased std sqrt(0.75/3) = 0.5
  const a = grpoAdvantages([1, 0, 0, 0, 1, 1, 1, 1], 4);
  close(a[0], 0.75 / (0.5 + 1e-6));
  close(a[1], -0.25 / (0.5 + 1e-6));
  for (let i = 4; i < 8; i++) assert.equal(a[i], 0); // all-equal group: no signal
  assert.equal(zeroRewardGroupShare([0, 0, 1, 0, 0, 0], 3), 0.5);
  assert.throws(() => grpoAdvantages([1, 0, 1], 2), /groups of 2/);
});

function loss(lp: number[], old: number[], adv: number[], mask: number[], ref: number[] | null = null) {
  return tf.tidy(() => {
    const t = (x: number[]) => tf.tensor2d(x, [1, x.length]);
    const r = policyLoss(t(lp), t(old), ref ? t(ref) : null, t(adv), t(mask), cfg);
    return { loss: r.loss.dataSync()[0], pg: r.pgLoss.dataSync()[0], kl: r.kl.dataSync()[0],
      clip: r.clipFrac.dataSync()[0], dual: r.dualClipFrac.dataSync()[0] };
  });
}

test('ratio clipping and dual clip on hand-computed values', () => {
  const l = Math.log;
  // A>0, ratio 1.5: clipped to 1.2 -> pg = -1.2
  close(loss([l(1.5)], [0], [1], [1]).pg, -1.2);
  // A>0, ratio 0.5: max(-0.5, -0.8) = -0.5 (unclipped branch)
  close(loss([l(0.5)], [0], [1], [1]).pg, -0.5);
  // A<0, ratio 0.5: max(0.5, 0.8) = 0.8 (clipped at 0.8)
  const r = loss([l(0.5)], [0], [-1], [1]);
  close(r.pg, 0.8);
  assert.equal(r.clip, 1);
  // A<0, ratio 5: max(5, 1.2) = 5, dual clip min(3, 5) = 3
  const d = loss([l(5)], [0], [-1], [1]);
  close(d.pg, 3);
  assert.equal(d.dual, 1);
  // A<0, ratio 2: max(2, 1.2) = 2 < 3 -> not dual-clipped
  close(loss([l(2)], [0], [-1], [1]).pg, 2);
});

test('k3 KL and token-mean aggregation over the mask', () => {
  // k3 = exp(ref - lp) - (ref - lp) - 1; ref - lp = 0.5 -> e^0.5 - 1.5
  const r = loss([0, -1, 3], [0, -1, 3], [0, 0, 0], [1, 1, 0], [0.5, -0.5, 9]);
  const k = (d: number) => Math.exp(d) - d - 1;
  close(r.kl, (k(0.5) + k(0.5)) / 2); // third token masked out
  close(r.loss, r.pg + 1e-4 * r.kl);
  // token-mean: pg over 3 trained tokens with advantages 1, 2, 3 at ratio 1 -> -(1+2+3)/3
  close(loss([0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 3, 100], [1, 1, 1, 0]).pg, -2);
});

test('masked tokens receive zero gradient', () => {
  const lp = tf.variable(tf.tensor2d([[-1, -2, -0.5]]));
  const g = tf.tidy(() => {
    const grads = tf.variableGrads(() => policyLoss(lp as unknown as tf.Tensor2D, tf.tensor2d([[-1.1, -2, -0.4]]),
      tf.tensor2d([[-1, -1, -1]]), tf.tensor2d([[1, -1, 2]]), tf.tensor2d([[1, 0, 1]]), cfg).loss, [lp]);
    return grads.grads[lp.name].arraySync() as number[][];
  });
  assert.equal(g[0][1], 0);
  assert.notEqual(g[0][0], 0);
  lp.dispose();
});

test('gradient split: self + other equals the autograd gradient on the logits', () => {
  // 3 positions, vocab 5, probe tokens [1, 3, 4]
  const logitsArr = [[0.1, 2.0, -1, 0.3, 0.5], [1, 0.2, 0.1, 1.5, -0.3], [0, 0, 0, 0, 0.2]];
  const sampled = [1, 3, 0];
  const adv = [-1.5, 0.7, -0.2];
  const probeIds = [1, 3, 4];
  const logits = tf.tensor2d(logitsArr);
  const grad = tf.tidy(() => {
    // objective J = sum_i A_i log p(x_i); its gradient on logits is A (1[k = x] - p_k)
    const f = (z: tf.Tensor) => {
      const lp = tf.logSoftmax(z as tf.Tensor2D);
      const oh = tf.oneHot(tf.tensor1d(sampled, 'int32'), 5);
      return tf.sum(tf.mul(tf.sum(tf.mul(lp, oh), 1), tf.tensor1d(adv)));
    };
    return (tf.grad(f)(logits) as tf.Tensor2D).arraySync();
  });
  const probs = tf.tidy(() => tf.softmax(logits).arraySync() as number[][]);
  const split = gradientSplit({ probs: probs.map((row) => probeIds.map((k) => row[k])), sampled, advantages: adv, tokenIds: probeIds });
  probeIds.forEach((k, j) => {
    const auto = grad.reduce((a, row) => a + row[k], 0);
    close(split.self[j] + split.other[j], auto, 1e-5);
  });
  assert.equal(split.positions, 3);
  logits.dispose();
});
