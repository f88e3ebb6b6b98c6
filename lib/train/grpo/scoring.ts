/**
 * Scoring a padded batch without gradient, at its trained positions only (GPT.forwardAt): log-probs (the
 * KL's reference policy, and the PPO ratio's "old" policy where the sampler's numbers do not apply:
 * lib/train/grpo/prepare.ts), optionally the entropy, and the probabilities of the probe tokens at chosen
 * trained positions (for the logit-gradient split).
 */
import * as tf from '@tensorflow/tfjs';
import { GPT, PrefixContext } from '../../model/gpt';
import { entropyFromLogits, rowLogProbs } from '../../model/logprobs';
import { PaddedBatch } from '../batch';

export interface ScoreResult {
  /** [M] log p(target) at the trained positions, kept alive for the loss; the caller disposes it. */
  logp: tf.Tensor1D;
  /** [M] entropy of the next-token distribution there (when asked for; the caller disposes it), else null. */
  entropies: tf.Tensor1D | null;
  /** probs[i][k] of `probeTokens` at each requested trained position. */
  probeProbs: number[][];
  /**
   * At each requested position, the most likely token that is NOT a probe token, and its probability: the
   * "other" push may go to a token that the three-token split never sees.
   */
  topOther: { id: number; p: number }[];
}

/**
 * `probeAt`: indices into the batch's trained positions (0 .. M-1) at which to read the probe tokens; `prefix`: the
 * shared prompts the batch's rows continue (lib/train/grpo/prepare.ts).
 */
export function scoreBatch(model: GPT, batch: PaddedBatch, probeAt: number[] = [], probeTokens: number[] = [],
  withEntropy = true, prefix?: PrefixContext): ScoreResult {
  let entropies: tf.Tensor1D | null = null;
  const r = tf.tidy(() => {
    const logits = model.forwardAt(batch.inputs, batch.trained, prefix); // [M, V]
    const [M, V] = logits.shape;
    const logp = rowLogProbs(logits, batch.trainedTargets); // [M]
    if (withEntropy) entropies = tf.keep(tf.reshape(entropyFromLogits(tf.reshape(logits, [1, M, V]) as tf.Tensor3D),
      [M]) as tf.Tensor1D);
    let probeProbs: number[][] = [];
    let topOther: { id: number; p: number }[] = [];
    if (probeAt.length > 0 && probeTokens.length > 0) {
      const probs = tf.softmax(tf.gather(logits, tf.tensor1d(probeAt, 'int32'))); // [P, V]
      probeProbs = tf.gather(probs, tf.tensor1d(probeTokens, 'int32'), 1).arraySync() as number[][]; // [P, K]
      const notProbe = new Float32Array(V).fill(1);
      for (const k of probeTokens) notProbe[k] = 0;
      const others = tf.mul(probs, tf.tensor1d(notProbe)); // [P, V], probe columns zeroed
      const ids = tf.argMax(others, 1).dataSync(); // [P]
      const ps = tf.max(others, 1).dataSync(); // [P]
      topOther = Array.from(ids, (id, i) => ({ id, p: ps[i] }));
    }
    return { logp: tf.keep(logp), probeProbs, topOther };
  });
  return { ...r, entropies };
}
