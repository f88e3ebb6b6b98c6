import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { defaultGPTConfig } from '../lib/model/config';
import { GPT } from '../lib/model/gpt';
import { maskedCrossEntropy } from '../lib/model/logprobs';
import { AdamW, clipCoefficient, computeGrads, defaultNoDecay, disposeGrads, globalNorm } from '../lib/train/optim';
import { constantWithWarmup, cosineWithWarmup } from '../lib/train/schedule';

before(async () => {
  await initBackend({ backend: process.env.TOOLRL_BACKEND ?? 'wasm' });
});

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe('AdamW', () => {
  it('cuts the cross-entropy of a tiny fixed batch by >= 90%', () => {
    const m = new GPT(defaultGPTConfig(24, { blockSize: 16, nEmbd: 32, nLayer: 2, nHead: 2 }), 3);
    const ids = tf.tensor2d([[1, 4, 9, 2, 7, 7, 3, 11, 5, 0], [6, 2, 2, 8, 1, 13, 4, 4, 9, 20]], [2, 10], 'int32');
    const inp = ids.slice([0, 0], [2, 9]) as tf.Tensor2D;
    const tgt = ids.slice([0, 1], [2, 9]) as tf.Tensor2D;
    const mask = tf.ones([2, 9]) as tf.Tensor2D;
    const opt = new AdamW(m.params(), { weightDecay: 0.01, maxGradNorm: 1.0 });
    let first = 0;
    let last = 0;
    for (let i = 0; i < 200; i++) {
      const { value, grads } = computeGrads(m.params(), () => maskedCrossEntropy(m.forward(inp), tgt, mask));
      last = value.dataSync()[0];
      if (i === 0) first = last;
      opt.step(grads, 3e-3);
      value.dispose();
      disposeGrads(grads);
    }
    assert.equal(opt.stepCount, 200);
    assert.ok(last <= 0.1 * first, `loss ${first} -> ${last}`);
    opt.dispose();
    tf.dispose([ids, inp, tgt, mask]);
    m.dispose();
  });

  it('matches a hand-computed first step (bias correction, decoupled decay, clipping)', () => {
    const p = tf.variable(tf.tensor1d([1, -2]));
    const params = new Map([['w', p]]);
    const opt = new AdamW(params, { weightDecay: 0.1, maxGradNorm: 1.0 });
    const g = tf.tensor1d([3, 4]); // norm 5 -> clipped by 1 / (5 + 1e-6)
    const { gradNorm, clipCoef } = opt.step(new Map([['w', g]]), 0.01);
    close(gradNorm, 5, 1e-5);
    close(clipCoef, 1 / (5 + 1e-6), 1e-9);
    // Step 1: mhat = g_c, vhat = g_c^2, so the update is lr * g_c / (|g_c| + eps) = lr * sign(g).
    const w = p.dataSync();
    close(w[0], 1 * (1 - 0.01 * 0.1) - 0.01, 1e-6);
    close(w[1], -2 * (1 - 0.01 * 0.1) - 0.01, 1e-6);
    // State round trip.
    const st = opt.getState();
    const opt2 = new AdamW(params);
    opt2.setState(st);
    assert.equal(opt2.stepCount, 1);
    assert.deepEqual(Array.from(opt2.getState().m.w), Array.from(st.m.w));
    assert.throws(() => opt.step(new Map([['nope', g]]), 0.01), /unknown parameter "nope"/);
    opt.dispose();
    opt2.dispose();
    tf.dispose([p, g]);
  });

  it('clipping math and the decay exclusion on a hand case', () => {
    const a = tf.tensor1d([1, 2, 2]);
    const b = tf.tensor2d([[4]]);
    close(globalNorm([a, b]), Math.sqrt(1 + 4 + 4 + 16), 1e-6);
    close(clipCoefficient(10, 1), 1 / (10 + 1e-6));
    assert.equal(clipCoefficient(0.5, 1), 1);
    assert.equal(clipCoefficient(10, 0), 1);
    assert.equal(clipCoefficient(10, Infinity), 1);
    assert.ok(defaultNoDecay('h.0.attn.c_attn.bias'));
    assert.ok(defaultNoDecay('h.1.ln_2.weight'));
    assert.ok(defaultNoDecay('ln_f.weight'));
    assert.ok(!defaultNoDecay('wte.weight'));
    assert.ok(!defaultNoDecay('h.0.mlp.c_fc.weight'));
    tf.dispose([a, b]);
  });
});

describe('learning-rate schedules', () => {
  it('constant with 10 warmup steps (GRPO, A.4)', () => {
    const s = constantWithWarmup(1e-6, 10);
    close(s(0), 1e-7, 1e-15);
    close(s(4), 5e-7, 1e-15);
    close(s(9), 1e-6, 1e-15);
    close(s(10), 1e-6, 1e-15);
    close(s(299), 1e-6, 1e-15);
    assert.equal(constantWithWarmup(1e-3, 0)(0), 1e-3);
  });

  it('cosine with warmup ratio 0.1 (SFT, A.6)', () => {
    const s = cosineWithWarmup(1e-5, 100, 0.1); // W = 10
    close(s(0), 1e-6, 1e-15);
    close(s(9), 1e-5, 1e-15);
    close(s(10), 1e-5, 1e-15);
    close(s(55), 0.5e-5, 1e-15); // halfway through the decay: cos(pi/2) = 0
    close(s(100), 0, 1e-15);
    close(s(32), 1e-5 * 0.5 * (1 + Math.cos((Math.PI * 22) / 90)), 1e-15);
    assert.throws(() => cosineWithWarmup(1e-5, 0, 0.1), /totalSteps/);
  });
});
