/**
 * Token log-probabilities and entropies from logits.
 *
 * The gradient of gather needs UnsortedSegmentSum, which the wasm backend lacks (docs/design.md D), so log p(target)
 * has its own gradient (1[k = target] - p_k), and the gather only ever runs forward.
 */
import * as tf from '@tensorflow/tfjs';

/**
 * log p(target) = logits[target] - logsumexp(logits), with a hand-written gradient
 *   d logits = dy * (oneHot(target) - softmax(logits)).
 * The [B, T, V] logits are the largest tensors of a step, so the number of passes over them is what costs:
 * the forward reads the target logit with a flat gather (no gradient through it, so wasm's missing
 * UnsortedSegmentSum does not matter) instead of building logSoftmax, a one-hot and its cast and product.
 */
const tokenLogProbsWithGrad = tf.customGrad(((logits: tf.Tensor, targets: tf.Tensor, save: tf.GradSaveFunc) => {
  const [B, T, V] = logits.shape;
  const lse = tf.logSumExp(logits, -1); // [B, T]
  // [B*T]
  const flatIdx = tf.add(tf.mul(tf.range(0, B * T, 1, 'int32'), tf.scalar(V, 'int32')),
    tf.reshape(tf.cast(targets, 'int32'), [B * T]));
  const picked = tf.reshape(tf.gather(tf.reshape(logits, [B * T * V]), flatIdx), [B, T]); // [B, T]
  save([logits, targets]);
  return {
    value: tf.sub(picked, lse),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sl, st] = saved;
      const p = tf.softmax(sl); // [B, T, V], one kernel
      // wasm: an int32 one-hot then a cast (oneHot's float32 dtype option gives wrong values there)
      const ids = tf.cast(st, 'int32') as tf.Tensor2D;
      // [B, T, V]
      const oh = tf.getBackend() === 'wasm' ? tf.cast(tf.oneHot(ids, V), 'float32') : tf.oneHot(ids, V, 1, 0,
        'float32');
      return [tf.mul(tf.sub(oh, p), tf.expandDims(dy, -1)), tf.zerosLike(st)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (logits: tf.Tensor, targets: tf.Tensor) =>
tf.Tensor;

/** log p(targets[b, t] | prefix) for every position. logits [B, T, V], targets [B, T] int32 -> [B, T]. */
export function tokenLogProbs(logits: tf.Tensor3D, targets: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => tokenLogProbsWithGrad(logits, targets) as tf.Tensor2D);
}

/** log p(targets[m]) for rows of logits: logits [M, V], targets [M] int32 -> [M] (same gradient as tokenLogProbs). */
export function rowLogProbs(logits: tf.Tensor2D, targets: tf.Tensor1D): tf.Tensor1D {
  const [M, V] = logits.shape;
  return tf.tidy(() => tf.reshape(tokenLogProbsWithGrad(tf.reshape(logits, [1, M, V]), tf.reshape(targets, [1, M])),
    [M]) as tf.Tensor1D);
}

/** Entropy of the next-token distribution at every position, in nats. logits [B, T, V] -> [B, T]. */
export function entropyFromLogits(logits: tf.Tensor3D): tf.Tensor2D {
  return tf.tidy(() => {
    const logp = tf.logSoftmax(logits); // [B, T, V]
    return tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), -1)) as tf.Tensor2D; // [B, T]
  });
}

/**
 * Mean cross-entropy over the positions where mask = 1 (token-mean, as in A.4's loss aggregation).
 * logits [B, T, V], targets [B, T] int32, mask [B, T] float (0/1) -> scalar. A mask of all zeros gives 0.
 */
export function maskedCrossEntropy(logits: tf.Tensor3D, targets: tf.Tensor2D, mask: tf.Tensor2D): tf.Scalar {
  return tf.tidy(() => {
    const lp = tokenLogProbs(logits, targets); // [B, T]
    const m = tf.cast(mask, 'float32');
    const denom = tf.maximum(tf.sum(m), 1);
    return tf.div(tf.neg(tf.sum(tf.mul(lp, m))), denom) as tf.Scalar;
  });
}
