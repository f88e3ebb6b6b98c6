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
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor) => tf.Tensor;

/**
 * LayerNorm without its gain and bias: (x - mean) / sqrt(var + eps) over the last axis. Inference only: the
 * KV-cache decode folds gain and bias into the next linear layer (lib/model/gpt.ts, createCache).
 */
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

const GELU_C = Math.sqrt(2 / Math.PI);

/** GELU, tanh approximation (GPT-2's "gelu_new"). */
export function gelu<T extends tf.Tensor>(x: T): T {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  // x*x*x rather than tf.pow(x, 3): Pow is ~10x slower than Multiply on wasm (profiled).
  const inner = tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), 0.044715)), GELU_C);
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1)) as T;
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
 * bit-identical: each output row is one table row times 1.0) and supply the oneHot form's gradient,
 * d table = oneHot(ids)^T @ dy, by hand. ids are not differentiated (their gradient is zeros).
 */
const embedWithGrad = tf.customGrad(((table: tf.Tensor, ids: tf.Tensor, save: tf.GradSaveFunc) => {
  save([ids]);
  return {
    value: tf.gather(table, ids), // [N, C]
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sids] = saved;
      const oneHot = tf.oneHot(sids as tf.Tensor1D, table.shape[0]).toFloat(); // [N, V]
      return [matMulTN(oneHot, dy), tf.zerosLike(sids)]; // [V, C], ids: none
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (table: tf.Tensor, ids: tf.Tensor) => tf.Tensor;

/** table [V, C], ids [N] int32 -> [N, C]. */
export function embed(table: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor2D {
  return embedWithGrad(table, ids) as tf.Tensor2D;
}
