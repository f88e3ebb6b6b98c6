/**
 * The small differentiable building blocks of the GPT, written in tfjs core ops.
 *
 * Every function here is used unchanged by the training forward and by KV-cache decoding, so sampling and
 * training run the same kernels (DESIGN B: a train/inference mismatch must not be able to explain a collapse).
 */
import * as tf from '@tensorflow/tfjs';
import { matMulNN, matMulTN } from './matmul';

/** Variance epsilon of every LayerNorm (1e-5, as in GPT-2 / PyTorch nn.LayerNorm). */
export const LN_EPS = 1e-5;

/** LayerNorm over the last axis. x [.., C], gain/bias [C]. */
export function layerNorm<T extends tf.Tensor>(x: T, gain: tf.Tensor, bias: tf.Tensor): T {
  const mean = tf.mean(x, -1, true); // [.., 1]
  const xc = tf.sub(x, mean); // [.., C]
  const variance = tf.mean(tf.square(xc), -1, true); // [.., 1] (biased, like PyTorch)
  const normed = tf.mul(xc, tf.rsqrt(tf.add(variance, LN_EPS)));
  return tf.add(tf.mul(normed, gain), bias) as T;
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
 * wasm has no UnsortedSegmentSum kernel, so the built-in gradient of tf.gather fails there (DESIGN D).
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
