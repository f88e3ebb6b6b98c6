import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { Rng } from '../lib/prng';
import { defaultGPTConfig } from '../lib/model/config';
import { GPT } from '../lib/model/gpt';
import { TAIL_SLOTS } from '../lib/model/kvcache';

const V = 30;

before(async () => {
  await initBackend({ backend: process.env.TOOLRL_BACKEND ?? 'wasm' });
});

// Runs the layout of the active backend (two-level on tensorflow / cpu, single-level on wasm: twoLevelCache).
describe('KV cache layout', () => {
  it('logits equal the full forward at every step across tail merges, chunks and ragged rows', () => {
    const m = new GPT(defaultGPTConfig(V, { blockSize: 160, nEmbd: 32, nHead: 4, nLayer: 2 }), 9);
    const rng = new Rng(5);
    const B = 4;
    const seqs = Array.from({ length: B }, () => Array.from({ length: 150 }, () => rng.int(0, V - 1)));
    const pos = new Array(B).fill(0);
    const got: { b: number; t: number; row: number[] }[] = [];
    const cache = m.createCache(B);
    let merges = 0;
    let compactions = 0;
    const feed = (toks: number[][]) => {
      const logits = m.append(cache, toks).arraySync();
      toks.forEach((t, b) => {
        pos[b] += t.length;
        if (t.length > 0) got.push({ b, t: pos[b] - 1, row: logits[b] });
      });
      // right after a merge: the padding slots are gone (the longest row fills the frozen part exactly)
      // unless they were under a quarter of the slots
      if (cache.frozenLength === cache.length) {
        merges++;
        if (cache.length === Math.max(...pos)) compactions++;
        else assert.ok(Math.max(...pos) >= 0.75 * cache.length, `${Math.max(...pos)} tokens in ${cache.length} slots`);
      }
    };
    feed([5, 1, 0, 3].map((n, b) => seqs[b].slice(0, n))); // ragged prefill, one empty row
    let sawFrozenAndTail = false;
    for (let step = 0; step < 2 * TAIL_SLOTS + 10; step++) {
      // every row sits out a third of the steps: padding slots in every row, at different places
      feed(seqs.map((s, b) => ((step + b) % 3 === 0 ? [] : [s[pos[b]]])));
      if (cache.frozenLength > 0 && cache.length > cache.frozenLength) sawFrozenAndTail = true;
      // observations: a multi-token append into the tail, and one longer than the tail's room
      if (step === TAIL_SLOTS + 3) feed(seqs.map((s, b) => s.slice(pos[b], pos[b] + [4, 0, 2, 7][b])));
      if (step === TAIL_SLOTS + 20) feed(seqs.map((s, b) => s.slice(pos[b], pos[b] + [TAIL_SLOTS + 3, 1, 0, 9][b])));
    }
    if (cache.twoLevel) {
      assert.ok(sawFrozenAndTail, 'decoded with both a frozen part and a tail');
      assert.ok(merges >= 2, `the tail was folded ${merges} times`);
    }
    assert.ok(compactions >= 1, `compacted ${compactions} times`);
    let maxDiff = 0;
    for (let b = 0; b < B; b++) {
      const full = tf.tidy(() => m.forward(tf.tensor2d([seqs[b].slice(0, pos[b])], [1, pos[b]], 'int32'))).arraySync()[0];
      for (const g of got) if (g.b === b) g.row.forEach((x, j) => (maxDiff = Math.max(maxDiff, Math.abs(x - full[g.t][j]))));
    }
    assert.ok(got.length > 200);
    assert.ok(maxDiff < 1e-4, `max abs diff ${maxDiff}`);
    cache.dispose();
    m.dispose();
  });

  it('retain drops rows and the kept rows decode exactly as before', () => {
    const m = new GPT(defaultGPTConfig(V, { blockSize: 120, nEmbd: 32, nHead: 4, nLayer: 2 }), 3);
    const rng = new Rng(8);
    const B = 5;
    const seqs = Array.from({ length: B }, () => Array.from({ length: 100 }, () => rng.int(0, V - 1)));
    const n0 = tf.memory().numTensors;
    const cache = m.createCache(B);
    m.append(cache, seqs.map((s, b) => s.slice(0, 3 + b))).dispose(); // ragged prefill
    const pos = seqs.map((_, b) => 3 + b);
    let rows = seqs.map((_, b) => b); // cache row -> sequence
    let maxDiff = 0;
    let checked = 0;
    for (let step = 0; step < TAIL_SLOTS + 20; step++) {
      if (step === 10) { cache.retain([4, 1, 3]); rows = [4, 1, 3]; } // drop two rows, reorder the rest
      if (step === TAIL_SLOTS + 5) { cache.retain([2]); rows = [rows[2]]; } // after a merge: one row left
      const logitsT = m.append(cache, rows.map((b) => [seqs[b][pos[b]]]));
      const logits = logitsT.arraySync();
      logitsT.dispose();
      rows.forEach((b, c) => {
        pos[b]++;
        const fullT = tf.tidy(() => m.forward(tf.tensor2d([seqs[b].slice(0, pos[b])], [1, pos[b]], 'int32')));
        const full = fullT.arraySync()[0];
        fullT.dispose();
        full[pos[b] - 1].forEach((x, j) => (maxDiff = Math.max(maxDiff, Math.abs(x - logits[c][j]))));
        checked++;
      });
    }
    assert.equal(cache.batch, 1);
    assert.deepEqual(cache.positions, [pos[rows[0]]]);
    assert.ok(checked > 60);
    assert.ok(maxDiff < 1e-4, `max abs diff ${maxDiff}`);
    assert.throws(() => cache.retain([]), /at least one row/);
    assert.throws(() => cache.retain([1]), /not in \[0, 1\)/);
    cache.dispose();
    assert.equal(tf.memory().numTensors, n0, 'retain and dispose free every tensor');
    m.dispose();
  });

  it('frees its decode weights and every slot tensor on dispose', () => {
    const m = new GPT(defaultGPTConfig(V, { blockSize: 80, nEmbd: 16, nHead: 2, nLayer: 1 }), 1);
    const n0 = tf.memory().numTensors;
    const cache = m.createCache(2);
    m.append(cache, [[1, 2, 3], [4]]).dispose();
    for (let i = 0; i < TAIL_SLOTS + 5; i++) m.append(cache, [[i % V], [(i * 7) % V]]).dispose();
    cache.dispose();
    assert.equal(tf.memory().numTensors, n0);
    m.dispose();
  });
});
