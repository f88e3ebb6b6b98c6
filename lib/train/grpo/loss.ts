/**
 * The GRPO policy loss of verl's `compute_policy_loss` (vanilla PPO with dual clip) plus the k3 KL term,
 * token-mean aggregated over the mini-batch (docs/design.md A.4).
 *
 * Per trained token, with ratio = exp(logp - oldLogp):
 *   pg1 = -A * ratio
 *   pg2 = -A * clip(ratio, 1 - clipRatio, 1 + clipRatio)
 *   pg  = max(pg1, pg2)                      (PPO clip)
 *   if A < 0: pg = min(pg, -A * dualClip)    (dual clip: caps how hard a very off-policy token is pushed)
 *   kl  = exp(ref - logp) - (ref - logp) - 1 (k3, "low_var_kl", clamped to [-10, 10])
 *   loss = mean_mask(pg) + klCoef * mean_mask(kl)
 */
import * as tf from '@tensorflow/tfjs';

export interface PolicyLossConfig {
  /** PPO clip range, both sides. Paper script: clip_ratio 0.2. */
  clipRatio: number;
  /** Dual-clip constant c (applies to negative advantages). Paper script / verl default: 3.0. */
  dualClip: number;
  /** Coefficient of the k3 KL loss against the reference policy. Paper script: kl_loss_coef 1e-4. */
  klCoef: number;
}

export interface PolicyLossTerms {
  /** Scalar to minimise. */
  loss: tf.Scalar;
  /** Token-mean policy-gradient loss. */
  pgLoss: tf.Scalar;
  /** Token-mean k3 KL to the reference policy. */
  kl: tf.Scalar;
  /** Share of trained tokens where the clipped branch was active (verl's pg_clipfrac). */
  clipFrac: tf.Scalar;
  /** Share of trained tokens with A < 0 where the dual clip was active. */
  dualClipFrac: tf.Scalar;
}

/**
 * All inputs of one shape (per token: [B, T], or [M] at the trained positions); `mask` is 0/1 float, or null
 * when every token is trained. `refLogp` may be null when klCoef is 0. `offPolicy` replaces the per-token loss
 * where its mask is 1 (policy shaping of off-policy tokens). `tokenCount` is the token-mean's denominator:
 * by default this batch's trained-token count; a micro-batch of a larger mini-batch passes the mini-batch's
 * count, so that the micro-batches' terms add up to the mini-batch's.
 * Must be called inside a tidy / gradient scope; returns tensors the caller owns.
 */
export function policyLoss<T extends tf.Tensor>(logp: T, oldLogp: T, refLogp: T | null, adv: T, mask: T | null,
  cfg: PolicyLossConfig, offPolicy?: { mask: T; loss: T }, tokenCount?: number): PolicyLossTerms {
  const count = tokenCount ?? (mask === null ? logp.size : null);
  const denom = count === null ? tf.maximum(tf.sum(mask!), 1) : tf.scalar(Math.max(count, 1));
  const mmean = (x: tf.Tensor) => tf.div(tf.sum(mask === null ? x : tf.mul(x, mask)), denom) as tf.Scalar;

  const logRatio = tf.clipByValue(tf.sub(logp, oldLogp), -20, 20); // verl clamps before exp
  const ratio = tf.exp(logRatio);
  const pg1 = tf.neg(tf.mul(adv, ratio));
  const pg2 = tf.neg(tf.mul(adv, tf.clipByValue(ratio, 1 - cfg.clipRatio, 1 + cfg.clipRatio)));
  const clipped = tf.maximum(pg1, pg2);
  const pg3 = tf.neg(tf.mul(adv, cfg.dualClip));
  const dual = tf.minimum(pg3, clipped);
  const negative = tf.less(adv, 0);
  let pg = tf.where(negative, dual, clipped);
  // off-policy tokens (OPS's LUFFY variant) take their own per-token loss instead of the clipped ratio
  if (offPolicy) pg = tf.where(tf.greater(offPolicy.mask, 0), offPolicy.loss, pg);

  const clipFrac = mmean(tf.cast(tf.greater(pg2, pg1), 'float32'));
  const dualClipFrac = mmean(tf.cast(tf.logicalAnd(negative, tf.greater(clipped, pg3)), 'float32'));
  const pgLoss = mmean(pg);

  let kl: tf.Scalar = tf.scalar(0);
  if (refLogp !== null) {
    const d = tf.clipByValue(tf.sub(refLogp, logp), -20, 20);
    const k3 = tf.clipByValue(tf.sub(tf.sub(tf.exp(d), d), 1), -10, 10);
    kl = mmean(k3);
  }
  const loss = tf.add(pgLoss, tf.mul(kl, cfg.klCoef)) as tf.Scalar;
  return { loss, pgLoss, kl, clipFrac, dualClipFrac };
}
