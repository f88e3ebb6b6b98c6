/**
 * Attention masks as additive biases on the scores (0 = attend, MASK_VALUE = masked), built outside any
 * differentiated function: the full-sequence causal bias here, the cache's per-row biases in kvcache.ts.
 *
 * -1e9 rather than -Infinity: a query row with every key masked (a padding slot of an empty cache row) then gets a
 * harmless uniform softmax instead of NaNs; real rows always have an unmasked key, and exp(-1e9 - max) underflows
 * to exactly 0, so masked keys contribute nothing.
 */
import * as tf from '@tensorflow/tfjs';

/** Additive mask value for a forbidden (query, key) pair. */
export const MASK_VALUE = -1e9;

/** The causal bias for a full sequence: [1, 1, T, T], 0 on and below the diagonal, MASK_VALUE above. */
export function causalBias(T: number): tf.Tensor4D {
  const data = new Float32Array(T * T); // [T, T] row-major: query i, key j
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) data[i * T + j] = MASK_VALUE;
  return tf.tensor4d(data, [1, 1, T, T]);
}

/**
 * The bias of continuations after shared prefixes: [B, 1, T, P + T]. Row b's queries may read the first
 * `prefixLens[b]` of the P prefix slots (the rest is the padding of shorter prefixes) and, causally, its own T
 * positions (lib/model/gpt.ts, PrefixContext).
 */
export function prefixCausalBias(prefixLens: number[], P: number, T: number): tf.Tensor4D {
  const B = prefixLens.length;
  const W = P + T;
  const data = new Float32Array(B * T * W); // [B, T, P + T] row-major: row b, query i, key j
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < T; i++) {
      const row = (b * T + i) * W;
      for (let j = prefixLens[b]; j < P; j++) data[row + j] = MASK_VALUE;
      for (let j = i + 1; j < T; j++) data[row + P + j] = MASK_VALUE;
    }
  }
  return tf.tensor4d(data, [B, 1, T, W]);
}
