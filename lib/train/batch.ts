/**
 * Padding a list of token sequences into next-token-prediction tensors.
 *
 * For a sequence x_0..x_{L-1}, the model reads x_0..x_{L-2} and predicts x_1..x_{L-1}; a per-token value
 * attached to x_t (loss mask, advantage, old log-prob) therefore lands at prediction position t-1.
 * Sequences are right-padded with token 0 and mask 0, so padding never trains.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../prng';

export interface PaddedBatch {
  /** [B, T] int32 model input. */
  inputs: tf.Tensor2D;
  /** [B, T] int32 next-token targets. */
  targets: tf.Tensor2D;
  /** [B, T] float32, 1 where the target is trained. */
  mask: tf.Tensor2D;
  /** Per-token extras aligned with targets, e.g. old log-probs or advantages ([B, T] float32). */
  extras: Record<string, tf.Tensor2D>;
  /** T, the prediction length (longest sequence minus one). */
  length: number;
  /** Number of mask ones. */
  targetCount: number;
  dispose(): void;
}

/**
 * Build a padded batch. `extras[name][b]` are per-token arrays aligned with `seqs[b].ids`; the value at
 * token t is placed at prediction position t-1 like the mask. `maxLen` truncates (keeping the start).
 */
export function padBatch(seqs: { ids: number[]; lossMask: number[] }[], maxLen: number,
  extras: Record<string, number[][]> = {}): PaddedBatch {
  if (seqs.length === 0) throw new Error('padBatch: empty batch');
  const L = Math.min(maxLen, Math.max(...seqs.map((s) => s.ids.length)));
  const T = Math.max(1, L - 1);
  const B = seqs.length;
  const inp = new Int32Array(B * T);
  const tgt = new Int32Array(B * T);
  const msk = new Float32Array(B * T);
  const ext: Record<string, Float32Array> = {};
  for (const k of Object.keys(extras)) ext[k] = new Float32Array(B * T);
  let targetCount = 0;
  seqs.forEach((s, b) => {
    if (s.ids.length !== s.lossMask.length) throw new Error(`padBatch: ids/lossMask length mismatch in row ${b}`);
    const n = Math.min(s.ids.length, L);
    for (let t = 0; t + 1 < n; t++) {
      inp[b * T + t] = s.ids[t];
      tgt[b * T + t] = s.ids[t + 1];
      msk[b * T + t] = s.lossMask[t + 1];
      targetCount += s.lossMask[t + 1];
      for (const k of Object.keys(extras)) ext[k][b * T + t] = extras[k][b][t + 1];
    }
  });
  const batch: PaddedBatch = {
    inputs: tf.tensor2d(inp, [B, T], 'int32'),
    targets: tf.tensor2d(tgt, [B, T], 'int32'),
    mask: tf.tensor2d(msk, [B, T], 'float32'),
    extras: {},
    length: T,
    targetCount,
    dispose() {
      batch.inputs.dispose();
      batch.targets.dispose();
      batch.mask.dispose();
      for (const t of Object.values(batch.extras)) t.dispose();
    },
  };
  for (const k of Object.keys(ext)) batch.extras[k] = tf.tensor2d(ext[k], [B, T], 'float32');
  return batch;
}

/**
 * Shuffle the indices, cut them into windows of `window` batches, sort each window by length and cut it
 * into batches, then shuffle the batch order: batches hold sequences of similar length (less padding)
 * while every epoch still sees a fresh random order.
 */
export function bucketedBatches(lengths: number[], batchSize: number, rng: Rng, window = 8): number[][] {
  const order = rng.shuffle(lengths.map((_, i) => i));
  const batches: number[][] = [];
  const span = batchSize * window;
  for (let start = 0; start < order.length; start += span) {
    const chunk = order.slice(start, start + span).sort((a, b) => lengths[a] - lengths[b]);
    for (let i = 0; i < chunk.length; i += batchSize) batches.push(chunk.slice(i, i + batchSize));
  }
  return rng.shuffle(batches);
}
