/**
 * Causal multi-head self-attention and the transformer block, shared by training and KV-cache decoding.
 *
 * Layout choices (all for wasm speed, DESIGN D and our profiles):
 * - The fused QKV weight [C, 3C] (one parameter, as in GPT-2) is split into three [C, C] blocks and applied
 *   as three matmuls: splitting the small weight is cheap, while splitting the [B*T, 3C] activation on its
 *   last axis (SplitV) was ~20 ms per call on wasm.
 * - Training: scores = Q @ K^T with K transposed once as a 4-D tensor, products per head (headMatMul: wasm's
 *   batched matMul is ~9x slower than 2-D ones).
 * - Cache: K and V are kept as [B, H, S, hd] and grow on axis 2 (concat on the last axis was 8.8 ms vs
 *   0.3 ms for axis 2). For the one-token decode the batched products with M = 1 are fine, including
 *   Q @ K^T with transposeB (1.1 ms at B = 64, S = 200): no gradient is needed there.
 * - Only 4-D transposes (5-D ones are slow); 1/sqrt(hd) is folded into Q (smaller than the score tensor).
 * - The mask is an additive bias built outside any differentiated function (0 = attend, -1e9 = masked).
 *   -1e9 rather than -Infinity: a query row with every key masked (a padding slot of an empty cache row)
 *   then gets a harmless uniform softmax instead of NaNs; real rows always have an unmasked key, and
 *   exp(-1e9 - max) underflows to exactly 0, so masked keys contribute nothing.
 */
import * as tf from '@tensorflow/tfjs';
import { gelu, layerNorm, linear } from './layers';
import { headMatMul } from './matmul';

/** Additive mask value for a forbidden (query, key) pair. */
export const MASK_VALUE = -1e9;

/** One block's parameters (names follow HF GPT-2; weights are [in, out]). */
export interface BlockParams {
  ln1g: tf.Variable; ln1b: tf.Variable;
  wqkv: tf.Variable; bqkv: tf.Variable; // [C, 3C], [3C]
  wproj: tf.Variable; bproj: tf.Variable; // [C, C], [C]
  ln2g: tf.Variable; ln2b: tf.Variable;
  wfc: tf.Variable; bfc: tf.Variable; // [C, 4C], [4C]
  wfc2: tf.Variable; bfc2: tf.Variable; // [4C, C], [C]
}

/** Keys and values of one layer over all cache slots: k, v [B, H, S, hd]. */
export interface LayerKV {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/** The causal bias for a full sequence: [1, 1, T, T], 0 on and below the diagonal, MASK_VALUE above. */
export function causalBias(T: number): tf.Tensor4D {
  const data = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) data[i * T + j] = MASK_VALUE;
  return tf.tensor4d(data, [1, 1, T, T]);
}

/** [B*T, C] -> [B, H, T, hd] (or with perm [0, 2, 3, 1]: [B, H, hd, T]). */
function toHeads(x: tf.Tensor2D, B: number, T: number, nHead: number, perm = [0, 2, 1, 3]): tf.Tensor4D {
  const hd = x.shape[1] / nHead;
  return tf.transpose(tf.reshape(x, [B, T, nHead, hd]), perm) as tf.Tensor4D;
}

/**
 * One pre-LN transformer block on x [B, T, C].
 * Without `cache`: the training forward (full causal self-attention; bias [1, 1, T, T]).
 * With `cache`: the T new tokens attend to cache.past (if any) and themselves; bias is broadcastable to
 * [B, H, T, S_past + T]; the layer's K/V over all slots are returned for the cache to keep.
 */
export function blockForward(
  p: BlockParams, x: tf.Tensor3D, nHead: number, bias: tf.Tensor4D, cache?: { past: LayerKV | null },
): { x: tf.Tensor3D; kv: LayerKV | null } {
  const [B, T, C] = x.shape;
  const hd = C / nHead;
  const x2 = tf.reshape(x, [B * T, C]) as tf.Tensor2D; // [B*T, C]

  // ---- attention ----
  const h = layerNorm(x2, p.ln1g, p.ln1b); // [B*T, C]
  const [wq, wk, wv] = tf.split(p.wqkv, 3, 1); // 3 x [C, C]
  const [bq, bk, bv] = tf.split(p.bqkv, 3, 0); // 3 x [C]
  const q = toHeads(linear(h, tf.mul(wq, 1 / Math.sqrt(hd)), tf.mul(bq, 1 / Math.sqrt(hd))), B, T, nHead); // [B, H, T, hd], pre-scaled
  const k2 = linear(h, wk, bk); // [B*T, C]
  const v2 = linear(h, wv, bv); // [B*T, C]
  let y: tf.Tensor4D; // [B, H, T, hd]
  let kv: LayerKV | null = null;
  if (cache === undefined) {
    const kT = toHeads(k2, B, T, nHead, [0, 2, 3, 1]); // [B, H, hd, T]
    const v = toHeads(v2, B, T, nHead); // [B, H, T, hd]
    const att = tf.softmax(tf.add(headMatMul(q, kT), bias)) as tf.Tensor4D; // [B, H, T, T], softmax over keys
    y = headMatMul(att, v);
  } else {
    let k = toHeads(k2, B, T, nHead); // [B, H, T, hd]
    let v = toHeads(v2, B, T, nHead);
    if (cache.past !== null) {
      k = tf.concat([cache.past.k, k], 2); // [B, H, S, hd]
      v = tf.concat([cache.past.v, v], 2);
    }
    kv = { k, v };
    if (T === 1) {
      const att = tf.softmax(tf.add(tf.matMul(q, k, false, true), bias)) as tf.Tensor4D; // [B, H, 1, S]
      y = tf.matMul(att, v); // [B, H, 1, hd]
    } else {
      const kT = tf.transpose(k, [0, 1, 3, 2]) as tf.Tensor4D; // [B, H, hd, S]
      const att = tf.softmax(tf.add(headMatMul(q, kT), bias)) as tf.Tensor4D; // [B, H, T, S]
      y = headMatMul(att, v);
    }
  }
  const yMerged = tf.reshape(tf.transpose(y, [0, 2, 1, 3]), [B * T, C]) as tf.Tensor2D; // [B*T, C]
  const x3 = tf.add(x2, linear(yMerged, p.wproj, p.bproj)) as tf.Tensor2D; // residual

  // ---- MLP (4x, GELU) ----
  const m = layerNorm(x3, p.ln2g, p.ln2b);
  const x4 = tf.add(x3, linear(gelu(linear(m, p.wfc, p.bfc)), p.wfc2, p.bfc2)) as tf.Tensor2D;
  return { x: tf.reshape(x4, [B, T, C]) as tf.Tensor3D, kv };
}
