/**
 * The small differentiable building blocks of the GPT, written in tfjs core ops.
 *
 * Every function here is used unchanged by the training forward and by KV-cache decoding, so sampling and
 * training run the same kernels (docs/design.md B: a train/inference mismatch must not be able to explain a collapse).
 */
import * as tf from '@tensorflow/tfjs';
import { matMulNN, matMulTN } from './matmul';

/** Variance epsilon of every LayerNorm (1e-5, as in GPT-2 / PyTorch nn.LayerNorm). */
export const LN_EPS = 1e-5;

/**
 * LayerNorm over the last axis with a hand-written gradient. x [.., C], gain/bias [C].
 *
 * The forward ops are the plain ones; the gradient is the closed form
 *   dx = rstd * (dn - mean(dn) - n * mean(dn * n)),  dn = dy * gain,  n = the normalised x,
 *   dgain = sum(dy * n),  dbias = sum(dy)   (sums over every axis but the last),
 * instead of autodiff through the two tf.mean calls: tfjs's mean gradient materialises ones(x.shape) and
 * a division, which made LayerNorm's backward the largest item of a native training step (profiled).
 */
const layerNormWithGrad = tf.customGrad(((x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor, save: tf.GradSaveFunc) => {
  const mean = tf.mean(x, -1, true); // [.., 1]
  const xc = tf.sub(x, mean); // [.., C]
  const variance = tf.mean(tf.square(xc), -1, true); // [.., 1] (biased, like PyTorch)
  const rstd = tf.rsqrt(tf.add(variance, LN_EPS)); // [.., 1]
  const normed = tf.mul(xc, rstd); // [.., C]
  save([normed, rstd, gain]);
  return {
    value: tf.add(tf.mul(normed, gain), bias),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [n, r, g] = saved;
      const dn = tf.mul(dy, g); // [.., C]
      const centred = tf.sub(dn, tf.mean(dn, -1, true));
      const dx = tf.mul(r, tf.sub(centred, tf.mul(n, tf.mean(tf.mul(dn, n), -1, true)))); // [.., C]
      const axes = Array.from({ length: dy.rank - 1 }, (_, i) => i);
      return [dx, tf.sum(tf.mul(dy, n), axes), tf.sum(dy, axes)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor) =>
tf.Tensor;

/** LayerNorm without its gain and bias: (x - mean) / sqrt(var + eps) over the last axis. */
export function normalize<T extends tf.Tensor>(x: T): T {
  const xc = tf.sub(x, tf.mean(x, -1, true)); // [.., C]
  return tf.mul(xc, tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), LN_EPS))) as T;
}

/**
 * LayerNorm over the last axis. x [.., C], gain/bias [C]. Same forward values on every backend; the
 * hand-written gradient is used on tensorflow and cpu only: on wasm the custom-gradient version aborted the
 * wasm runtime in the backward of a long GRPO mini-batch (16 x ~1000 tokens), so wasm keeps autodiff.
 */
export function layerNorm<T extends tf.Tensor>(x: T, gain: tf.Tensor, bias: tf.Tensor): T {
  if (tf.getBackend() !== 'wasm') return layerNormWithGrad(x, gain, bias) as T;
  return tf.add(tf.mul(normalize(x), gain), bias) as T;
}

/**
 * Inference only: LayerNorm (gain and bias folded into the weights) followed by a linear layer, in fewer ops
 * than normalize + linear (KV-cache decoding is bound by the number of ops, not by their size):
 *   LN(x) @ W + b = rsqrt(|xc|^2 + C eps) * (xc @ (sqrt(C) g W)) + (beta @ W + b),  xc = x @ (I - 11^T / C)
 * x [N, C], center = I - 11^T / C [C, C], w = sqrt(C) * gain[:, None] * W [C, out], b [out] -> [N, out].
 */
export function normLinear(x: tf.Tensor2D, center: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  const C = x.shape[1];
  const xc = tf.matMul(x, center); // [N, C], each row minus its mean
  const r = tf.rsqrt(tf.add(tf.sum(tf.square(xc), -1, true), C * LN_EPS)); // [N, 1] = rstd / sqrt(C)
  return tf.add(tf.mul(tf.matMul(xc, w), r), b) as tf.Tensor2D;
}

const GELU_C = Math.sqrt(2 / Math.PI);

/**
 * Inference only: GELU of x = u / sqrt(2/pi), given u (the first MLP layer's weights pre-scaled by sqrt(2/pi)),
 * without its factor 0.5 / sqrt(2/pi) (folded into the next layer's weight):
 *   gelu(x) = (0.5 / c) * u * (1 + tanh(u * (1 + k u^2))),  c = sqrt(2/pi), k = 0.044715 / c^2.
 */
export function geluUnscaled<T extends tf.Tensor>(u: T): T {
  const inner = tf.mul(u, tf.add(tf.mul(tf.square(u), 0.044715 / (GELU_C * GELU_C)), 1));
  return tf.mul(u, tf.add(tf.tanh(inner), 1)) as T;
}

/** The scale geluUnscaled expects on its input (c) and leaves on its output (0.5 / c). */
export const GELU_DECODE_SCALES = { input: GELU_C, output: 0.5 / GELU_C };

/**
 * GELU, tanh approximation (GPT-2's "gelu_new"), with a hand-written gradient:
 *   gelu(x) = 0.5 x (1 + t),  t = tanh(c (x + a x^3)),  c = sqrt(2/pi), a = 0.044715
 *   gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)
 * Autodiff through the forward's eight ops made the MLP activation (on [N, 4C], the widest tensor of a
 * block) the largest elementwise cost of a training step (profiled).
 */
/** The forward ops of GELU, 0.5 x (1 + tanh(c (x + a x^3))); also returns x^2 and the tanh for the gradient. */
function geluParts(x: tf.Tensor): { value: tf.Tensor; x2: tf.Tensor; t: tf.Tensor } {
  // x*x*x rather than tf.pow(x, 3): Pow is ~10x slower than Multiply on wasm (profiled).
  const x2 = tf.mul(x, x);
  const t = tf.tanh(tf.mul(tf.add(x, tf.mul(tf.mul(x2, x), 0.044715)), GELU_C));
  return { value: tf.mul(tf.mul(x, 0.5), tf.add(t, 1)), x2, t };
}

const geluWithGrad = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
  const { value, x2, t } = geluParts(x);
  save([x, x2, t]);
  return {
    value,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sx, sx2, st] = saved;
      const slope = tf.add(tf.mul(sx2, 3 * 0.044715 * GELU_C), GELU_C); // c (1 + 3 a x^2)
      const d = tf.add(tf.mul(tf.add(st, 1), 0.5), tf.mul(tf.mul(tf.mul(sx, 0.5), tf.sub(1, tf.square(st))), slope));
      return [tf.mul(dy, d)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor) => tf.Tensor;

/**
 * GELU, tanh approximation (GPT-2's "gelu_new"), for training and scoring. The hand-written gradient runs on
 * tensorflow and cpu; wasm keeps autodiff of the same forward, as for layerNorm.
 */
export function gelu<T extends tf.Tensor>(x: T): T {
  return (tf.getBackend() !== 'wasm' ? geluWithGrad(x) : geluParts(x).value) as T;
}

/** x @ W + b on a 2-D activation. x [N, in], w [in, out], b [out] -> [N, out]. */
export function linear(x: tf.Tensor2D, w: tf.Tensor, b?: tf.Tensor): tf.Tensor2D {
  const y = matMulNN(x, w); // [N, out]
  return b === undefined ? y : tf.add(y, b);
}

/**
 * Embedding lookup table[ids] whose gradient never needs tf.gather's gradient.
 *
 * wasm has no UnsortedSegmentSum kernel, so the built-in gradient of tf.gather fails there (docs/design.md D).
 * Mathematically the lookup is oneHot(ids) @ table; we keep the cheap gather for the forward value (it is
 * bit-identical: each output row is one table row times 1.0) and supply the gradient by hand: on wasm the
 * oneHot form's, d table = oneHot(ids)^T @ dy; elsewhere the same sum as a segment sum of dy's rows by id
 * (O(N C) instead of O(N V C)). ids are not differentiated (their gradient is zeros).
 */
const embedWithGrad = tf.customGrad(((table: tf.Tensor, ids: tf.Tensor, save: tf.GradSaveFunc) => {
  save([ids]);
  return {
    value: tf.gather(table, ids), // [N, C]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sids] = saved;
      if (tf.getBackend() !== 'wasm') return [tf.unsortedSegmentSum(dy, sids as tf.Tensor1D, table.shape[0]),
        tf.zerosLike(sids)];
      const oneHot = tf.oneHot(sids as tf.Tensor1D, table.shape[0]).toFloat(); // [N, V]
      return [matMulTN(oneHot, dy), tf.zerosLike(sids)]; // [V, C], ids: none
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (table: tf.Tensor, ids: tf.Tensor) => tf.Tensor;

/** table [V, C], ids [N] int32 -> [N, C]. */
export function embed(table: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor2D {
  return embedWithGrad(table, ids) as tf.Tensor2D;
}

/**
 * Rows `at` of x, whose gradient is a scatter (each index at most once, so scattering is exact), not the
 * UnsortedSegmentSum of tf.gather's built-in gradient that wasm lacks (docs/design.md D).
 * x [N, C], at [M] int32 (distinct) -> [M, C].
 */
const gatherRowsWithGrad = tf.customGrad(((x: tf.Tensor, at: tf.Tensor, save: tf.GradSaveFunc) => {
  save([at]);
  const shape = x.shape;
  return {
    value: tf.gather(x, at), // [M, C]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sat] = saved;
      return [tf.scatterND(tf.reshape(sat, [-1, 1]), dy, shape), tf.zerosLike(sat)]; // [N, C], at: none
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor, at: tf.Tensor) => tf.Tensor;

/** x [N, C], at [M] int32 of distinct rows -> [M, C], differentiable w.r.t. x on every backend. */
export function gatherRows(x: tf.Tensor2D, at: tf.Tensor1D): tf.Tensor2D {
  return gatherRowsWithGrad(x, at) as tf.Tensor2D;
}
