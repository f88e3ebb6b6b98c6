import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { gelu, layerNorm, LN_EPS } from '../lib/model/layers';
import { maskedCrossEntropy, tokenLogProbs } from '../lib/model/logprobs';
import { GPT } from '../lib/model/gpt';
import { defaultGPTConfig } from '../lib/model/config';
import { computeGrads, disposeGrads } from '../lib/train/optim';
import { padBatch } from '../lib/train/batch';
import { trainedCrossEntropy } from '../lib/train/sft';

before(async () => {
  await initBackend({ backend: process.env.TOOLRL_BACKEND ?? 'wasm' });
});

const maxAbs = (a: tf.Tensor, b: tf.Tensor) => tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]);

// The hand-written gradients must equal autodiff through the plain formulas they replace.
describe('hand-written gradients', () => {
  it('layerNorm: same value, same gradients for x, gain and bias', () => {
    tf.tidy(() => {
      const x = tf.randomNormal([3, 5, 8], 0, 1, 'float32', 1);
      const g = tf.randomNormal([8], 1, 0.3, 'float32', 2);
      const b = tf.randomNormal([8], 0, 0.3, 'float32', 3);
      const w = tf.randomNormal([3, 5, 8], 0, 1, 'float32', 4);
      const plain = (x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => {
        const xc = tf.sub(x, tf.mean(x, -1, true));
        return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), LN_EPS))), g), b);
      };
      assert.equal(maxAbs(layerNorm(x, g, b), plain(x, g, b)), 0);
      const ours = tf.grads((x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(layerNorm(x, g, b), w)))([x, g, b]);
      const ref = tf.grads((x: tf.Tensor, g: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(plain(x, g, b), w)))([x, g, b]);
      ours.forEach((t, i) => assert.ok(maxAbs(t, ref[i]) < 1e-5, `gradient ${i}: ${maxAbs(t, ref[i])}`));
    });
  });

  it('gelu: the tanh approximation and its derivative (hand-written off wasm)', () => {
    tf.tidy(() => {
      const x = tf.randomNormal([4, 7], 0, 2, 'float32', 5);
      const w = tf.randomNormal([4, 7], 0, 1, 'float32', 6);
      const c = Math.sqrt(2 / Math.PI);
      const plain = (x: tf.Tensor) => tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), c)), 1));
      assert.ok(maxAbs(gelu(x), plain(x)) < 1e-5);
      const ours = tf.grad((x: tf.Tensor) => tf.sum(tf.mul(gelu(x), w)))(x);
      const ref = tf.grad((x: tf.Tensor) => tf.sum(tf.mul(plain(x), w)))(x);
      assert.ok(maxAbs(ours, ref) < 1e-5, `${maxAbs(ours, ref)}`);
    });
  });

  it('tokenLogProbs: same value and logits gradient as logSoftmax picked by a one-hot', () => {
    tf.tidy(() => {
      const logits = tf.randomNormal([3, 5, 11], 0, 3, 'float32', 1);
      const t = tf.tensor2d([[1, 2, 3, 4, 10], [0, 0, 5, 6, 7], [9, 8, 7, 6, 5]], [3, 5], 'int32');
      const w = tf.randomNormal([3, 5], 0, 1, 'float32', 4);
      const plain = (l: tf.Tensor) => tf.sum(tf.mul(tf.logSoftmax(l), tf.cast(tf.oneHot(t, 11), 'float32')), -1);
      assert.ok(maxAbs(tokenLogProbs(logits as tf.Tensor3D, t), plain(logits)) < 1e-5);
      const ours = tf.grad((l: tf.Tensor) => tf.sum(tf.mul(tokenLogProbs(l as tf.Tensor3D, t), w)))(logits);
      const ref = tf.grad((l: tf.Tensor) => tf.sum(tf.mul(plain(l), w)))(logits);
      assert.ok(maxAbs(ours, ref) < 1e-5, `${maxAbs(ours, ref)}`);
    });
  });

  it('forwardAt: the logits and the loss gradient of the full forward, at the trained positions only', () => {
    const m = new GPT(defaultGPTConfig(23, { blockSize: 64, nEmbd: 16, nHead: 2, nLayer: 2 }), 4);
    const seqs = [
      { ids: [1, 5, 7, 2, 9, 9, 3, 4], lossMask: [0, 0, 1, 1, 0, 1, 1, 0] },
      { ids: [3, 3, 8, 1, 2], lossMask: [0, 1, 1, 0, 1] },
    ];
    const batch = padBatch(seqs, 64);
    const n0 = tf.memory().numTensors;
    tf.tidy(() => {
      const full = tf.reshape(m.forward(batch.inputs), [-1, 23]); // [B*T, V]
      const at = m.forwardAt(batch.inputs, batch.trained); // [M, V]
      assert.deepEqual(at.shape, [batch.targetCount, 23]);
      assert.ok(maxAbs(at, tf.gather(full, batch.trained)) < 1e-5);
    });
    const a = computeGrads(m.params(), () => maskedCrossEntropy(m.forward(batch.inputs), batch.targets, batch.mask));
    const b = computeGrads(m.params(), () => trainedCrossEntropy(m, batch));
    assert.ok(Math.abs(a.value.dataSync()[0] - b.value.dataSync()[0]) < 1e-6);
    assert.equal(b.grads.size, a.grads.size);
    for (const [name, g] of a.grads) assert.ok(maxAbs(g, b.grads.get(name)!) < 1e-6, `${name}: ${maxAbs(g, b.grads.get(name)!)}`);
    tf.dispose([a.value, b.value]);
    disposeGrads(a.grads);
    disposeGrads(b.grads);
    assert.equal(tf.memory().numTensors, n0);
    batch.dispose();
    m.dispose();
  });
});
