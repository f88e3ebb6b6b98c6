/**
 * Matrix products that stay fast on the wasm backend.
 *
 * Why this file exists (docs/design.md D): on tfjs-backend-wasm a matMul with a transposed operand
 * (transposeA/transposeB = true) runs about 10x slower than a plain one, and the gradient of every matMul
 * asks for exactly such products (dA = dy @ B^T, dB = A^T @ dy). So on wasm we wrap matMul in a custom
 * gradient that first materialises the transpose with tf.transpose and then calls the plain kernel
 * (measured 3.6x faster for a whole train step). On the native `tensorflow` backend the transposed kernels
 * are fine and the explicit copy costs ~10%, so there we use tf.matMul as is.
 *
 * The choice is made at call time from tf.getBackend(), so one process can switch backends (tests do).
 * All helpers accept rank-2 or equal-rank batched operands ([..., M, K] x [..., K, N]).
 */
import * as tf from '@tensorflow/tfjs';

/** Permutation that swaps the last two axes of a rank-`rank` tensor. */
function swapLastTwo(rank: number): number[] {
  const perm: number[] = [];
  for (let i = 0; i < rank; i++) perm.push(i);
  perm[rank - 2] = rank - 1;
  perm[rank - 1] = rank - 2;
  return perm;
}

/** x with its last two axes swapped, as a real (contiguous) tensor. */
export function transposeLast2<T extends tf.Tensor>(x: T): T {
  return tf.transpose(x, swapLastTwo(x.rank)) as T;
}

type CustomGradFn = Parameters<typeof tf.customGrad>[0];

/** Plain a @ b whose gradient uses explicit transposes + plain matMuls only. */
const matMulExplicitGrad = tf.customGrad(((a: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved;
      // dA = dy @ B^T   [.., M, N] x [.., N, K]
      // dB = A^T @ dy   [.., K, M] x [.., M, N]
      return [tf.matMul(dy, transposeLast2(sb)), tf.matMul(transposeLast2(sa), dy)];
    },
  };
  // tfjs types customGrad's arguments as a loose (Tensor | GradSaveFunc)[]; the casts keep both sides typed.
}) as unknown as CustomGradFn) as unknown as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

/** True when the current backend needs the explicit-transpose path. */
export function useExplicitTranspose(): boolean {
  return tf.getBackend() === 'wasm';
}

/** a @ b. Shapes [.., M, K] x [.., K, N] -> [.., M, N]. */
export function matMulNN<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  return (useExplicitTranspose() ? matMulExplicitGrad(a, b) : tf.matMul(a, b)) as T;
}

/** a @ b^T. Shapes [.., M, K] x [.., N, K] -> [.., M, N]. */
export function matMulNT<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  if (!useExplicitTranspose()) return tf.matMul(a, b, false, true) as T;
  return matMulExplicitGrad(a, transposeLast2(b)) as T;
}

/** a^T @ b. Shapes [.., K, M] x [.., K, N] -> [.., M, N]. */
export function matMulTN<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  if (!useExplicitTranspose()) return tf.matMul(a, b, true, false) as T;
  return matMulExplicitGrad(transposeLast2(a), b) as T;
}

/**
 * Per-head product for attention: a [B, H, M, K] @ b [B, H, K, N] -> [B, H, M, N].
 *
 * One batched matMul. Measured on wasm: a batched (rank > 2) matMul runs a slow generic loop (118 ms for
 * [16,2,256,256] @ [16,2,256,32], vs 13 ms for the same work as 32 separate 2-D matMuls), but getting the
 * 32 operands out costs more than it saves: Unpack / Slice / Gather of [256,256] blocks take 5-20 ms EACH
 * on wasm. So the batched call stays; this is the training step's main cost (see lib/bench/model.ts).
 */
export function headMatMul(a: tf.Tensor4D, b: tf.Tensor4D): tf.Tensor4D {
  return matMulNN(a, b);
}
