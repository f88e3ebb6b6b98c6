/**
 * Causal multi-head self-attention and the transformer block, shared by training and KV-cache decoding.
 *
 * Layout choices (all for wasm speed, docs/design.md D and our profiles):
 * - The fused QKV weight [C, 3C] (one parameter, as in GPT-2) is split into three [C, C] blocks and applied
 *   as three matmuls: splitting the small weight is cheap, while splitting the [B*T, 3C] activation on its
 *   last axis (SplitV) was ~20 ms per call on wasm.
 * - Training: scores = Q @ K^T with K transposed once as a 4-D tensor, products per head (headMatMul: wasm's
 *   batched matMul is ~9x slower than 2-D ones).
 * - Cache (decodeBlock): decoding is bound by per-op overhead (~45 us per op on tensorflow, ~130 ops per
 *   step), so it runs fewer ops: one fused QKV matMul with weights derived once per cache (LayerNorm gains
 *   folded in, no per-call split of the weights; the activation split is tiny there); for a one-token append
 *   the head split / merge are reshapes (T = 1 makes [B, T, H, hd] and [B, H, T, hd] the same layout). On
 *   tensorflow / cpu, keys live transposed in the frozen part of the cache, so the read q @ kT is a plain
 *   matMul, and the latest slots sit in a small tail read with transposeB; wasm keeps one growing K / V
 *   (lib/model/kvcache.ts).
 * - Only 4-D transposes (5-D ones are slow); 1/sqrt(hd) is folded into Q (smaller than the score tensor).
 * - The mask is an additive bias built outside any differentiated function (lib/model/mask.ts).
 */
import * as tf from '@tensorflow/tfjs';
import { gelu, geluUnscaled, layerNorm, linear, normLinear } from './layers';
import { headMatMul } from './matmul';
import type { CacheLayer, DecodeWeights } from './kvcache';

/** One block's parameters (names follow HF GPT-2; weights are [in, out]). */
export interface BlockParams {
  ln1g: tf.Variable; ln1b: tf.Variable;
  wqkv: tf.Variable; bqkv: tf.Variable; // [C, 3C], [3C]
  wproj: tf.Variable; bproj: tf.Variable; // [C, C], [C]
  ln2g: tf.Variable; ln2b: tf.Variable;
  wfc: tf.Variable; bfc: tf.Variable; // [C, 4C], [4C]
  wfc2: tf.Variable; bfc2: tf.Variable; // [4C, C], [C]
}

/** [B*T, C] -> [B, H, T, hd] (or with perm [0, 2, 3, 1]: [B, H, hd, T]). */
function toHeads(x: tf.Tensor2D, B: number, T: number, nHead: number, perm = [0, 2, 1, 3]): tf.Tensor4D {
  const hd = x.shape[1] / nHead;
  return tf.transpose(tf.reshape(x, [B, T, nHead, hd]), perm) as tf.Tensor4D;
}

/** One layer's keys (transposed) and values over a sequence: what later tokens read. */
export interface LayerKV {
  kT: tf.Tensor4D; // [G, H, hd, P]
  v: tf.Tensor4D; // [G, H, P, hd]
}

/**
 * One pre-LN transformer block on x [B, T, C] over whole sequences (training and scoring): causal
 * self-attention with bias [1 or B, 1, T, T] (or [B, 1, T, P + T] after a prefix). Also returns the block's
 * keys and values of x, which a continuation reads when x is a shared prefix (GPT.prefixKV).
 *
 * `prefix` (one entry per row of x, already gathered from the shared prefixes): keys kT [B, H, hd, P] and values
 * v [B, H, P, hd] of the P tokens before x. The rows of x then attend to those and to themselves, as if the
 * prefix had been part of the sequence: a token depends on earlier ones only through their keys and values.
 */
export function blockForward(p: BlockParams, x: tf.Tensor3D, nHead: number, bias: tf.Tensor4D,
  prefix: LayerKV | null = null): { x: tf.Tensor3D; kv: LayerKV } {
  const [B, T, C] = x.shape;
  const hd = C / nHead;
  const x2 = tf.reshape(x, [B * T, C]) as tf.Tensor2D; // [B*T, C]

  // ---- attention ----
  const h = layerNorm(x2, p.ln1g, p.ln1b); // [B*T, C]
  const [wq, wk, wv] = tf.split(p.wqkv, 3, 1); // 3 x [C, C]
  const [bq, bk, bv] = tf.split(p.bqkv, 3, 0); // 3 x [C]
  // [B, H, T, hd], pre-scaled
  const q = toHeads(linear(h, tf.mul(wq, 1 / Math.sqrt(hd)), tf.mul(bq, 1 / Math.sqrt(hd))), B, T, nHead);
  const kT = toHeads(linear(h, wk, bk), B, T, nHead, [0, 2, 3, 1]); // [B, H, hd, T]
  const v = toHeads(linear(h, wv, bv), B, T, nHead); // [B, H, T, hd]
  const kTAll = prefix === null ? kT : tf.concat([prefix.kT, kT], 3) as tf.Tensor4D; // [B, H, hd, P + T]
  const vAll = prefix === null ? v : tf.concat([prefix.v, v], 2) as tf.Tensor4D; // [B, H, P + T, hd]
  const att = tf.softmax(tf.add(headMatMul(q, kTAll), bias)) as tf.Tensor4D; // [B, H, T, P + T], softmax over keys
  const y = headMatMul(att, vAll); // [B, H, T, hd]
  const yMerged = tf.reshape(tf.transpose(y, [0, 2, 1, 3]), [B * T, C]) as tf.Tensor2D; // [B*T, C]
  return { x: tf.reshape(mlpResidual(p, x2, yMerged), [B, T, C]) as tf.Tensor3D, kv: { kT, v } };
}

/** The attention output projection + residual, then the MLP (4x, GELU) + residual. x2, y [N, C] -> [N, C]. */
function mlpResidual(p: BlockParams, x2: tf.Tensor2D, y: tf.Tensor2D): tf.Tensor2D {
  const x3 = tf.add(x2, linear(y, p.wproj, p.bproj)) as tf.Tensor2D; // residual
  const m = layerNorm(x3, p.ln2g, p.ln2b);
  return tf.add(x3, linear(gelu(linear(m, p.wfc, p.bfc)), p.wfc2, p.bfc2)) as tf.Tensor2D;
}

/** What a cached block reads besides its layer: the attention biases of this append. */
export interface CacheBias {
  /** Frozen slots [B, 1, 1, F], the same for every query (tail path only; null when nothing is frozen yet). */
  frozen: tf.Tensor4D | null;
  /** Tail path: [B, 1, n, t + n] over the tail and the new slots. Merge path: [B, 1, n, S + n] over all slots. */
  recent: tf.Tensor4D;
  /** Fold every slot into the frozen part (the tail would overflow; always in the single-level layout). */
  merge: boolean;
  /** The cache's layout (KVCache.twoLevel). */
  twoLevel: boolean;
  /**
   * Merge only: the slots each row keeps (padding dropped) as int32 row indices [B * H * F] into the
   * flattened [B * H * S, hd] values, (b * H + h) * S + slot; or null to keep all.
   */
  keep: tf.Tensor1D | null;
}

/**
 * One block of incremental decoding: x2 [B*n, C] are the n new slots of every row; they attend to the cached
 * slots of layer `c` and to themselves. Returns the block output and the layer's next cache state (which may
 * share the unchanged frozen tensors with `c`). No gradient: inference only.
 */
export function decodeBlock(p: BlockParams, w: DecodeWeights, center: tf.Tensor2D, x2: tf.Tensor2D, B: number,
  nHead: number,
  c: CacheLayer, bias: CacheBias): { x: tf.Tensor2D; next: CacheLayer } {
  const [N, C] = x2.shape; // x2 [B*n, C], row-major over (row, slot)
  const n = N / B;
  const hd = C / nHead;
  const qkv = normLinear(x2, center, w.wqkv, w.bqkv); // [B*n, 3C], ln_1 folded in, q pre-scaled
  let q: tf.Tensor4D; // [B, H, n, hd]
  let k: tf.Tensor4D;
  let v: tf.Tensor4D;
  if (n === 1) {
    // one slot per row: [B, 3C] is [B, 3H, 1, hd] in memory; one reshape and one split give the heads
    [q, k, v] = tf.split(tf.reshape(qkv, [B, 3 * nHead, 1, hd]), 3, 1) as tf.Tensor4D[];
  } else {
    const [q2, k2, v2] = tf.split(qkv, 3, 1) as tf.Tensor2D[]; // 3 x [B*n, C]
    [q, k, v] = [toHeads(q2, B, n, nHead), toHeads(k2, B, n, nHead), toHeads(v2, B, n, nHead)];
  }
  let y: tf.Tensor4D; // [B, H, n, hd]
  let next: CacheLayer;
  if (!bias.twoLevel) {
    // single-level layout (wasm): grow k and v by the new slots, one read over all of them
    const kAll = c.keys === null ? k : tf.concat([c.keys, k], 2) as tf.Tensor4D; // [B, H, S, hd]
    const vAll = c.v === null ? v : tf.concat([c.v, v], 2) as tf.Tensor4D;
    const scores = n === 1 ? tf.matMul(q, kAll, false, true) : headMatMul(q,
      tf.transpose(kAll, [0, 1, 3, 2]) as tf.Tensor4D);
    const att = tf.softmax(tf.add(scores, bias.recent)) as tf.Tensor4D; // [B, H, n, S]
    y = n === 1 ? tf.matMul(att, vAll) : headMatMul(att, vAll);
    const rows = (t: tf.Tensor4D) => keepRows(t, bias.keep, B, nHead, hd);
    next = { keys: rows(kAll), v: rows(vAll), tailK: null, tailV: null };
  } else if (bias.merge) {
    // everything (frozen, tail, new) becomes the frozen part: keys transposed, values as they are
    const kTs = [c.keys, c.tailK === null ? null : tf.transpose(c.tailK, [0, 1, 3, 2]), tf.transpose(k, [0, 1, 3, 2])];
    const vs = [c.v, c.tailV, v];
    const present = <T>(xs: (T | null)[]) => xs.filter((t): t is T => t !== null);
    // [B, H, hd, S]
    const kTAll = present(kTs).length === 1 ? present(kTs)[0] : tf.concat(present(kTs), 3) as tf.Tensor4D;
    const vAll = present(vs).length === 1 ? present(vs)[0] : tf.concat(present(vs), 2) as tf.Tensor4D; // [B, H, S, hd]
    const att = tf.softmax(tf.add(tf.matMul(q, kTAll), bias.recent)) as tf.Tensor4D; // [B, H, n, S]
    y = tf.matMul(att, vAll);
    if (bias.keep === null) {
      next = { keys: kTAll, v: vAll, tailK: null, tailV: null };
    } else {
      const rows = (t: tf.Tensor4D) => keepRows(t, bias.keep, B, nHead, hd);
      // keys: back to [B, H, S, hd] for the row gather, then transposed again (a few copies, once per merge)
      next = { keys: tf.transpose(rows(tf.transpose(kTAll, [0, 1, 3, 2])), [0, 1, 3, 2]), v: rows(vAll), tailK: null,
        tailV: null };
    }
  } else {
    // append the new slots to the small tail; read frozen and tail separately, one softmax over both
    const tailK = c.tailK === null ? k : tf.concat([c.tailK, k], 2) as tf.Tensor4D; // [B, H, t+n, hd]
    const tailV = c.tailV === null ? v : tf.concat([c.tailV, v], 2) as tf.Tensor4D;
    const sTail = tf.add(tf.matMul(q, tailK, false, true), bias.recent); // [B, H, n, t+n]
    if (c.keys === null || c.v === null || bias.frozen === null) {
      y = tf.matMul(tf.softmax(sTail), tailV) as tf.Tensor4D;
    } else {
      const F = c.keys.shape[3];
      const sFrozen = tf.add(tf.matMul(q, c.keys), bias.frozen); // [B, H, n, F]
      const att = tf.softmax(tf.concat([sFrozen, sTail], 3)); // [B, H, n, F+t+n]
      const [aFrozen, aTail] = tf.split(att, [F, tailK.shape[2]], 3);
      y = tf.add(tf.matMul(aFrozen, c.v), tf.matMul(aTail, tailV)) as tf.Tensor4D;
    }
    next = { keys: c.keys, v: c.v, tailK, tailV };
  }
  const yMerged = (n === 1 ? tf.reshape(y, [B, C]) : tf.reshape(tf.transpose(y, [0, 2, 1, 3]),
    [B * n, C])) as tf.Tensor2D;
  // projection + residual, then the MLP with ln_2 and the GELU's constants folded into its weights
  const x3 = tf.add(x2, linear(yMerged, p.wproj, p.bproj)) as tf.Tensor2D;
  const u = normLinear(x3, center, w.wfc, w.bfc); // [B*n, 4C] = sqrt(2/pi) * (LN(x3) @ Wfc + bfc)
  return { x: tf.add(x3, linear(geluUnscaled(u), w.wfc2, p.bfc2)) as tf.Tensor2D, next };
}

/**
 * Compaction: the slots each row keeps, t [B, H, S, hd] -> [B, H, F, hd], or t itself when keep is null.
 * A plain 2-D row gather (tf.gather with batchDims gives wrong values on wasm for these shapes).
 */
function keepRows(t: tf.Tensor4D, keep: tf.Tensor1D | null, B: number, H: number, hd: number): tf.Tensor4D {
  if (keep === null) return t;
  const S = t.shape[2];
  const F = keep.shape[0] / (B * H);
  return tf.reshape(tf.gather(tf.reshape(t, [B * H * S, hd]), keep), [B, H, F, hd]) as tf.Tensor4D;
}
