import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { layerNorm, LN_EPS } from '../lib/model/layers';
import { tokenLogProbs } from '../lib/model/logprobs';

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
});
