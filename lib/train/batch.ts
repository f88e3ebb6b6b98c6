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
  /**
   * The trained positions (mask 1), row-major, as flat indices b * T + t into [B*T] ([M] int32): where
   * GPT.forwardAt computes logits. Their targets in `trainedTargets` [M], their rows and positions on the host.
   */
  trained: tf.Tensor1D;
  trainedTargets: tf.Tensor1D;
  trainedRows: Int32Array;
  trainedPositions: Int32Array;
  /** Per-token extras (advantages, old log-probs, ...) at the trained positions, [M] float32 each. */
  extras: Record<string, tf.Tensor1D>;
  /** T, the prediction length (longest sequence minus one). */
  length: number;
  /** Number of mask ones (M). */
  targetCount: number;
  dispose(): void;
}

/**
 * Does `s` train on any token that padBatch keeps at `maxLen`: a target at position 1 .. maxLen - 1 whose mask is 1?
 * A sequence without one adds nothing to a batch's loss (trainSFT leaves such sequences out).
 */
export function hasTrainedToken(s: { ids: number[]; lossMask: number[] }, maxLen: number): boolean {
  const n = Math.min(s.ids.length, maxLen);
  for (let t = 1; t < n; t++) if (s.lossMask[t] === 1) return true;
  return false;
}

/**
 * Build a padded batch. `extras[name][b]` are per-token arrays aligned with `seqs[b].ids`; the value at
 * token t belongs to prediction position t-1 like the mask, and is kept where the mask is 1. `maxLen`
 * truncates (keeping the start). `starts[b]` (default 0): row b's inputs begin at its token starts[b], the
 * tokens before it being a shared prefix that the model reads separately (SharedPrefixes); trainedPositions
 * stay positions in the whole sequence.
 */
export function padBatch(seqs: { ids: number[]; lossMask: number[] }[], maxLen: number,
  extras: Record<string, number[][]> = {}, starts?: number[]): PaddedBatch {
  if (seqs.length === 0) throw new Error('padBatch: empty batch');
  const from = (b: number) => (starts === undefined ? 0 : starts[b]);
  const L = Math.max(...seqs.map((s, b) => Math.min(maxLen, s.ids.length) - from(b)));
  const T = Math.max(1, L - 1);
  const B = seqs.length;
  const inp = new Int32Array(B * T);
  const tgt = new Int32Array(B * T);
  const msk = new Float32Array(B * T);
  const flat: number[] = [];
  const rowsOf: number[] = [];
  const posOf: number[] = [];
  const names = Object.keys(extras);
  const ext: Record<string, number[]> = {};
  for (const k of names) ext[k] = [];
  seqs.forEach((s, b) => {
    if (s.ids.length !== s.lossMask.length) throw new Error(`padBatch: ids/lossMask length mismatch in row ${b}`);
    const n = Math.min(s.ids.length, maxLen);
    const s0 = from(b);
    for (let t = s0; t + 1 < n; t++) {
      const at = b * T + t - s0; // [B, T] slot of input position t
      inp[at] = s.ids[t];
      tgt[at] = s.ids[t + 1];
      msk[at] = s.lossMask[t + 1];
      if (s.lossMask[t + 1] !== 1) continue;
      flat.push(at);
      rowsOf.push(b);
      posOf.push(t);
      for (const k of names) ext[k].push(extras[k][b][t + 1]);
    }
  });
  const trainedTargets = Int32Array.from(flat, (i) => tgt[i]);
  const batch: PaddedBatch = {
    inputs: tf.tensor2d(inp, [B, T], 'int32'),
    targets: tf.tensor2d(tgt, [B, T], 'int32'),
    mask: tf.tensor2d(msk, [B, T], 'float32'),
    trained: tf.tensor1d(flat, 'int32'),
    trainedTargets: tf.tensor1d(trainedTargets, 'int32'),
    trainedRows: Int32Array.from(rowsOf),
    trainedPositions: Int32Array.from(posOf),
    extras: {},
    length: T,
    targetCount: flat.length,
    dispose() {
      tf.dispose([batch.inputs, batch.targets, batch.mask, batch.trained, batch.trainedTargets]);
      for (const t of Object.values(batch.extras)) t.dispose();
    },
  };
  for (const k of names) batch.extras[k] = tf.tensor1d(ext[k], 'float32');
  return batch;
}

/**
 * Shared prompts (GPT.prefixKV): how many leading tokens the rows of a group can read once for all of them. The
 * longest common prefix of their ids (at most maxLen), ending before any position whose target is trained (its
 * logits are needed) and leaving each row at least one input position of its own. A GRPO group's rollouts share
 * their prompt up to the assistant's first token: about half of a trajectory.
 */
export function sharedPrefixLength(seqs: { ids: number[]; lossMask: number[] }[], maxLen: number): number {
  let P = Math.min(...seqs.map((s) => Math.min(s.ids.length, maxLen) - 2)); // input positions are 0 .. n - 2
  for (const s of seqs) {
    const first = s.lossMask.indexOf(1, 1); // token `first` is predicted at input position first - 1
    if (first > 0) P = Math.min(P, first - 1);
  }
  const ids0 = seqs[0].ids;
  for (let i = 0; i < P; i++) {
    if (seqs.some((s) => s.ids[i] !== ids0[i])) return i;
  }
  return Math.max(P, 0);
}

/**
 * The prefixes of G groups, right-padded with token 0: ids [G, P] int32 (P = the longest, at least 1) and their
 * lengths.
 */
export interface SharedPrefixes {
  ids: tf.Tensor2D;
  lens: number[];
}

/** `heads[g]`: a sequence of group g (its first lens[g] tokens are the prefix). */
export function sharedPrefixes(heads: number[][], lens: number[]): SharedPrefixes {
  const P = Math.max(1, ...lens);
  const data = new Int32Array(heads.length * P);
  heads.forEach((ids, g) => { for (let i = 0; i < lens[g]; i++) data[g * P + i] = ids[i]; });
  return { ids: tf.tensor2d(data, [heads.length, P], 'int32'), lens };
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

/**
 * Cut rows into micro-batches of similar length under a token budget (verl's dynamic batch size,
 * `ppo_max_token_len_per_gpu`): rows sorted longest first, each micro-batch padded to its first (longest)
 * row, and a row joins while rows x that length stays within `maxTokens` (a row longer than the budget
 * gets a micro-batch of its own). Padding then costs little, and attention, quadratic in the padded
 * length, is paid on each row's own length class. Returns row indices, longest micro-batch first.
 */
export function microBatches(lengths: number[], maxTokens: number): number[][] {
  if (!(maxTokens >= 1)) throw new Error(`microBatches: maxTokens must be >= 1, got ${maxTokens}`);
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b] - lengths[a] || a - b);
  const out: number[][] = [];
  let cur: number[] = [];
  for (const i of order) {
    if (cur.length > 0 && (cur.length + 1) * lengths[cur[0]] > maxTokens) {
      out.push(cur);
      cur = [];
    }
    cur.push(i);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}
