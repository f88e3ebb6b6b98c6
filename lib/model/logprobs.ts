/**
 * Token log-probabilities and entropies from logits, written without tf.gather.
 *
 * The gradient of gather needs UnsortedSegmentSum, which the wasm backend lacks (DESIGN D), so picking
 * log p(target) is done as sum_k logSoftmax_k * oneHot(target)_k. The one-hot is a constant (built from
 * int32 targets, no gradient), and the product's gradient is the usual (1[k = target] - p_k).
 */
import * as tf from '@tensorflow/tfjs';

/** log p(targets[b, t] | prefix) for every position. logits [B, T, V], targets [B, T] int32 -> [B, T]. */
export function tokenLogProbs(logits: tf.Tensor3D, targets: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const V = logits.shape[2];
    const logp = tf.logSoftmax(logits); // [B, T, V]
    const oh = tf.oneHot(tf.cast(targets, 'int32') as tf.Tensor2D, V); // [B, T, V] int32 0/1
    return tf.sum(tf.mul(logp, tf.cast(oh, 'float32')), -1) as tf.Tensor2D; // [B, T]
  });
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
