import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { Rng } from '../lib/prng';
import { defaultGPTConfig, GPTConfig, validateGPTConfig } from '../lib/model/config';
import { GPT } from '../lib/model/gpt';
import { maskedCrossEntropy, tokenLogProbs, entropyFromLogits } from '../lib/model/logprobs';
import { AdamW, computeGrads, disposeGrads } from '../lib/train/optim';

const V = 40;
const small = (): GPTConfig => defaultGPTConfig(V, { blockSize: 64, nEmbd: 32, nHead: 2, nLayer: 2 });

before(async () => {
  await initBackend({ backend: process.env.TOOLRL_BACKEND ?? 'wasm' });
});

describe('GPTConfig', () => {
  it('rejects bad values with the field name', () => {
    assert.throws(() => defaultGPTConfig(V, { nEmbd: 30, nHead: 4 }), /nEmbd \(30\).*nHead \(4\)/);
    assert.throws(() => validateGPTConfig({ ...small(), nLayer: 0 }), /nLayer/);
    assert.throws(() => defaultGPTConfig(1.5), /vocabSize/);
  });
});

describe('GPT forward', () => {
  it('gives logits [B, T, V] and is causal', () => {
    const m = new GPT(small(), 1);
    const a = tf.tensor2d([[1, 2, 3, 4, 5]], [1, 5], 'int32');
    const b = tf.tensor2d([[1, 2, 3, 9, 9]], [1, 5], 'int32');
    const la = m.forward(a);
    const lb = m.forward(b);
    assert.deepEqual(la.shape, [1, 5, V]);
    // The first three positions cannot see the changed tokens.
    const d = tf.tidy(() => tf.max(tf.abs(tf.sub(la.slice([0, 0, 0], [1, 3, V]), lb.slice([0, 0, 0], [1, 3, V])))).dataSync()[0]);
    assert.equal(d, 0);
    tf.dispose([a, b, la, lb]);
    m.dispose();
  });

  it('tokenLogProbs matches logSoftmax picked by hand; entropy is in [0, log V]', () => {
    const logits = tf.tensor3d([[[1, 2, 3], [0, 0, 0]]]);
    const targets = tf.tensor2d([[2, 1]], [1, 2], 'int32');
    const lp = tokenLogProbs(logits, targets).arraySync()[0];
    const lse = Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3));
    assert.ok(Math.abs(lp[0] - (3 - lse)) < 1e-5);
    assert.ok(Math.abs(lp[1] - -Math.log(3)) < 1e-5);
    const ent = entropyFromLogits(logits).arraySync()[0];
    assert.ok(Math.abs(ent[1] - Math.log(3)) < 1e-5 && ent[0] > 0 && ent[0] < Math.log(3));
    tf.dispose([logits, targets]);
  });
});

describe('KV cache', () => {
  it('ragged prefill + one-token appends (with empty rows) equal full-sequence logits', () => {
    const m = new GPT(small(), 7);
    const rng = new Rng(3);
    const prefill = [12, 7, 1, 0, 5];
    const B = prefill.length;
    const seqs = prefill.map((p) => Array.from({ length: p + 12 }, () => rng.int(0, V - 1)));
    const cache = m.createCache(B);
    const got: number[][][] = seqs.map(() => []);
    const record = (logits: tf.Tensor2D, active: boolean[]) => {
      logits.arraySync().forEach((row, b) => active[b] && got[b].push(row));
      logits.dispose();
    };
    record(m.append(cache, seqs.map((s, b) => s.slice(0, prefill[b]))), prefill.map((p) => p > 0));
    const pos = prefill.slice();
    let sawEmpty = false;
    for (let step = 0; step < 12; step++) {
      // Row b skips every third step (offset by b): padding slots appear in every row.
      const toks = seqs.map((s, b) => ((step + b) % 3 === 0 || pos[b] >= s.length ? [] : [s[pos[b]]]));
      if (toks.some((t) => t.length === 0)) sawEmpty = true;
      toks.forEach((t, b) => (pos[b] += t.length));
      record(m.append(cache, toks), toks.map((t) => t.length > 0));
    }
    // A second ragged chunk (an "observation") mid-episode.
    const obs = [3, 0, 2, 4, 1].map((n, b) => seqs[b].slice(pos[b], pos[b] + n));
    obs.forEach((o, b) => (pos[b] += o.length));
    const ends = obs.map((o) => o.length > 0);
    record(m.append(cache, obs), ends);
    assert.ok(sawEmpty);
    assert.deepEqual(cache.positions, pos);
    assert.ok(cache.length > Math.max(...pos), 'padding slots exist');

    let maxDiff = 0;
    seqs.forEach((s, b) => {
      const L = pos[b];
      const full = tf.tidy(() => m.forward(tf.tensor2d([s.slice(0, L)], [1, L], 'int32'))).arraySync()[0];
      // Expected positions: end of prefill, every single-token step, end of the observation chunk.
      const expectAt: number[] = [];
      if (prefill[b] > 0) expectAt.push(prefill[b] - 1);
      const afterDecode = L - obs[b].length;
      for (let t = prefill[b]; t < afterDecode; t++) expectAt.push(t);
      if (obs[b].length > 0) expectAt.push(L - 1);
      assert.equal(got[b].length, expectAt.length, `row ${b}`);
      expectAt.forEach((t, k) => full[t].forEach((x, j) => (maxDiff = Math.max(maxDiff, Math.abs(x - got[b][k][j])))));
    });
    assert.ok(maxDiff < 1e-4, `max abs diff ${maxDiff}`);
    cache.dispose();
    m.dispose();
  });

  it('rows with no new tokens repeat their previous logits (zeros before any token)', () => {
    const m = new GPT(small(), 2);
    const cache = m.createCache(2);
    const l1 = m.append(cache, [[1, 2], []]);
    const l2 = m.append(cache, [[], [3]]);
    const [a1, a2] = [l1.arraySync(), l2.arraySync()];
    assert.deepEqual(a2[0], a1[0]);
    assert.ok(a1[1].every((x) => x === 0));
    const l3 = m.append(cache, [[], []]);
    assert.deepEqual(l3.arraySync(), a2);
    tf.dispose([l1, l2, l3]);
    assert.throws(() => m.append(cache, [[V], []]), /not in \[0, 40\)/);
    cache.dispose();
    assert.throws(() => m.append(cache, [[1], [1]]), /after dispose/);
    m.dispose();
  });
});

describe('shared prefixes (prefixKV + forwardAt after a prefix)', () => {
  it('continuations after shared prefixes give the full forward\'s logits and gradients', () => {
    const m = new GPT(small(), 4);
    const rng = new Rng(9);
    // two groups with prefixes of 7 and 12 tokens, three rows continuing them with 3 to 9 tokens of their own
    const prefixes = [7, 12].map((n) => Array.from({ length: n }, () => rng.int(0, V - 1)));
    const rows = [[0, 9], [1, 3], [0, 5]].map(([g, n]) => ({ g, ids: prefixes[g].concat(Array.from({ length: n }, () => rng.int(0, V - 1))) }));
    const T = Math.max(...rows.map((r) => r.ids.length - prefixes[r.g].length));
    const P = 12;
    const n0 = tf.memory().numTensors;
    // full forward: each row whole; logits at every position after its prefix (the last token predicts nothing here)
    const fullLoss = () => tf.tidy(() => tf.addN(rows.map((r, i) => {
      const L = r.ids.length;
      const logits = m.forward(tf.tensor2d([r.ids], [1, L], 'int32')); // [1, L, V]
      const part = tf.slice(logits, [0, prefixes[r.g].length, 0], [1, L - prefixes[r.g].length, V]);
      return tf.mul(tf.sum(tf.mul(part, part)), i + 1);
    })) as tf.Scalar);
    // prefix path: each prefix once, the rows' own tokens as a padded [3, T] batch
    const ids = tf.tensor2d(rows.flatMap((r) => { const own = r.ids.slice(prefixes[r.g].length); return own.concat(new Array(T - own.length).fill(0)); }), [3, T], 'int32');
    const prefixIds = tf.tensor2d(prefixes.flatMap((p) => p.concat(new Array(P - p.length).fill(0))), [2, P], 'int32');
    const at: number[] = [];
    const weight: number[] = [];
    rows.forEach((r, i) => { for (let t = 0; t < r.ids.length - prefixes[r.g].length; t++) { at.push(i * T + t); weight.push(i + 1); } });
    const atT = tf.tensor1d(at, 'int32');
    const w = tf.tensor2d(weight, [at.length, 1]);
    const prefixLoss = () => tf.tidy(() => {
      const kv = m.prefixKV(prefixIds);
      const logits = m.forwardAt(ids, atT, { kv, lens: prefixes.map((p) => p.length), group: Int32Array.from(rows.map((r) => r.g)) }); // [M, V]
      return tf.sum(tf.mul(tf.mul(logits, logits), w)) as tf.Scalar;
    });
    const a = computeGrads(m.params(), fullLoss);
    const b = computeGrads(m.params(), prefixLoss);
    const [la, lb] = [a.value.dataSync()[0], b.value.dataSync()[0]];
    assert.ok(Math.abs(la - lb) <= 1e-5 * Math.abs(la), `loss ${la} vs ${lb}`);
    let scale = 0;
    let diff = 0;
    for (const [k, g] of a.grads) {
      const x = g.dataSync();
      const y = b.grads.get(k)!.dataSync();
      x.forEach((v, i) => { scale = Math.max(scale, Math.abs(v)); diff = Math.max(diff, Math.abs(v - y[i])); });
    }
    assert.ok(scale > 0 && diff <= 1e-4 * scale, `gradients differ by ${diff} (largest ${scale})`);
    tf.dispose([a.value, b.value, ids, prefixIds, atT, w]);
    disposeGrads(a.grads);
    disposeGrads(b.grads);
    assert.equal(tf.memory().numTensors, n0, 'no tensor leaks');
    m.dispose();
  });
});

describe('determinism and memory', () => {
  it('same seed -> identical weights and identical loss after 3 steps', () => {
    const run = () => {
      const m = new GPT(small(), 11);
      const w = Array.from(m.params().values()).map((v) => Array.from(v.dataSync()));
      const opt = new AdamW(m.params());
      const ids = tf.tensor2d([[1, 5, 9, 3, 2, 8], [4, 4, 7, 1, 0, 2]], [2, 6], 'int32');
      const mask = tf.ones([2, 6]) as tf.Tensor2D;
      let loss = 0;
      for (let i = 0; i < 3; i++) {
        const { value, grads } = computeGrads(m.params(), () => maskedCrossEntropy(m.forward(ids), ids, mask));
        loss = value.dataSync()[0];
        opt.step(grads, 1e-3);
        value.dispose();
        disposeGrads(grads);
      }
      opt.dispose();
      tf.dispose([ids, mask]);
      m.dispose();
      return { w, loss };
    };
    const a = run();
    const b = run();
    assert.deepEqual(a.w, b.w);
    assert.equal(a.loss, b.loss);
    const c = new GPT(small(), 12);
    assert.notDeepEqual(Array.from(c.params().get('wte.weight')!.dataSync()), a.w[0]);
    c.dispose();
  });

  it('no tensor leaks in a train step, an append loop and a cache dispose', () => {
    const m = new GPT(small(), 5);
    const opt = new AdamW(m.params());
    const ids = tf.tensor2d([[1, 2, 3, 4]], [1, 4], 'int32');
    const mask = tf.ones([1, 4]) as tf.Tensor2D;
    const step = () => {
      const { value, grads } = computeGrads(m.params(), () => maskedCrossEntropy(m.forward(ids), ids, mask));
      opt.step(grads, 1e-3);
      value.dispose();
      disposeGrads(grads);
    };
    step(); // the first step may create lazily-kept tensors
    const n0 = tf.memory().numTensors;
    step();
    assert.equal(tf.memory().numTensors, n0, 'train step');
    const cache = m.createCache(3);
    // a prompt longer than the cache's tail (TAIL_SLOTS = 32) goes straight to its frozen part ...
    m.append(cache, [Array.from({ length: 33 }, (_, i) => i % V), [3], []]).dispose();
    m.append(cache, [[1], [], [2]]).dispose(); // ... and the next append starts the tail
    const n1 = tf.memory().numTensors;
    // long enough to fold the tail into the frozen part again, with empty rows and an empty step
    let most = 0;
    for (let i = 0; i < 35; i++) {
      m.append(cache, [i % 2 ? [] : [i % V], i % 3 ? [] : [(i + 1) % V], [2]]).dispose();
      most = Math.max(most, tf.memory().numTensors);
    }
    m.append(cache, [[], [], []]).dispose();
    assert.equal(most, n1, 'append loop');
    cache.dispose();
    assert.equal(tf.memory().numTensors, n0, 'cache dispose');
    opt.dispose();
    tf.dispose([ids, mask]);
    m.dispose();
  });
});
