/**
 * Scoring a padded batch without gradient: per-token log-probs (for the PPO ratio's "old" policy and the
 * KL's reference policy), the entropy of the policy, and the probabilities of the probe tokens at chosen
 * positions (for the logit-gradient split). verl recomputes old log-probs with the actor before updating
 * rather than trusting the sampler's numbers; we do the same, which also makes HBG's hint-free context
 * (docs/design.md A.6) the one that the ratio sees.
 */
import * as tf from '@tensorflow/tfjs';
import { GPT } from '../../model/gpt';
import { entropyFromLogits, tokenLogProbs } from '../../model/logprobs';
import { PaddedBatch } from '../batch';

export interface ScoreResult {
  /** [B, T] log p(target), kept alive for the loss; the caller disposes it. */
  logp: tf.Tensor2D;
  /** Token-mean entropy over the mask. */
  entropy: number;
  /** probs[i][k] of `probeTokens` at each requested (row, position). */
  probeProbs: number[][];
  /**
   * At each requested position, the most likely token that is NOT a probe token, and its probability: the
   * "other" push may go to a token that the three-token split never sees.
   */
  topOther: { id: number; p: number }[];
}

/** `positions`: [row, predictionPosition] pairs at which to read the probe tokens' probabilities. */
export function scoreBatch(model: GPT, batch: PaddedBatch, positions: [number, number][] = [],
  probeTokens: number[] = []): ScoreResult {
  return tf.tidy(() => {
    const logits = model.forward(batch.inputs); // [B, T, V]
    const logp = tokenLogProbs(logits, batch.targets); // [B, T]
    const ent = entropyFromLogits(logits); // [B, T]
    const entropy = tf.div(tf.sum(tf.mul(ent, batch.mask)), tf.maximum(tf.sum(batch.mask), 1)).dataSync()[0];
    let probeProbs: number[][] = [];
    let topOther: { id: number; p: number }[] = [];
    if (positions.length > 0 && probeTokens.length > 0) {
      const [B, T, V] = logits.shape;
      const flat = tf.reshape(logits, [B * T, V]); // [B*T, V]
      const rows = tf.gather(flat, tf.tensor1d(positions.map(([b, t]) => b * T + t), 'int32')); // [P, V]
      const probs = tf.softmax(rows); // [P, V]
      probeProbs = tf.gather(probs, tf.tensor1d(probeTokens, 'int32'), 1).arraySync() as number[][]; // [P, K]
      const notProbe = new Float32Array(V).fill(1);
      for (const k of probeTokens) notProbe[k] = 0;
      const others = tf.mul(probs, tf.tensor1d(notProbe)); // [P, V], probe columns zeroed
      const ids = tf.argMax(others, 1).dataSync(); // [P]
      const ps = tf.max(others, 1).dataSync(); // [P]
      topOther = Array.from(ids, (id, i) => ({ id, p: ps[i] }));
    }
    return { logp: tf.keep(logp), entropy, probeProbs, topOther };
  });
}
