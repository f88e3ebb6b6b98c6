/**
 * One PPO update on one mini-batch (docs/design.md A.4): the clipped policy loss + k3 KL of every
 * micro-batch (lib/train/grpo/prepare.ts), token-mean over the whole mini-batch, gradients accumulated across
 * the micro-batches, an optional extra loss of a synchronous signal (the per-update SFT loss), then one
 * AdamW step with global-norm clipping.
 *
 * The micro-batches' terms are each divided by the mini-batch's token count, so their sum is the mini-batch's
 * token-mean: the same loss and gradient as one padded batch, up to the order of float sums.
 */
import * as tf from '@tensorflow/tfjs';
import { GPT } from '../../model/gpt';
import { entropyFromLogits, rowLogProbs } from '../../model/logprobs';
import { AdamW, computeGrads, disposeGrads } from '../optim';
import { PaddedBatch } from '../batch';
import { timed } from '../phases';
import { MiniBatch } from './prepare';
import { PolicyLossConfig, policyLoss } from './loss';
import type { SyncSignal } from './signal';
import type { GRPOStepRecord } from '../records';

/** What one update logs (token-means over the mini-batch; gradNorm before clipping): the step record's loss fields. */
export type UpdateStats = Pick<GRPOStepRecord, 'loss' | 'pgLoss' | 'kl' | 'clipFrac' | 'dualClipFrac' | 'gradNorm'>;

/** acc += grads, freeing the summands (acc takes ownership of tensors it did not have). */
function accumulate(acc: Map<string, tf.Tensor>, grads: Map<string, tf.Tensor>): void {
  for (const [name, g] of grads) {
    const prev = acc.get(name);
    if (prev === undefined) { acc.set(name, g); continue; }
    acc.set(name, tf.add(prev, g));
    prev.dispose();
    g.dispose();
  }
}

/** The loss terms of one mini-batch (token-means over its trained tokens), before the optimizer step. */
export type LossTerms = Omit<UpdateStats, 'gradNorm'>;

/**
 * Loss and gradients of one mini-batch: every micro-batch's part, then the signal's extra loss, summed. The
 * caller owns (and disposes) the gradients.
 */
export function miniBatchGrads(model: GPT, mb: MiniBatch, cfg: PolicyLossConfig & { entropyCoef: number },
  opts: { signal?: SyncSignal; extra?: PaddedBatch | null } = {}): { terms: LossTerms; grads: Map<string, tf.Tensor> } {
  const sig = opts.signal;
  const acc = new Map<string, tf.Tensor>();
  const sums: LossTerms = { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, dualClipFrac: 0 };
  const order = Object.keys(sums) as (keyof LossTerms)[];
  try {
    for (const m of mb.micro) {
      let kept: tf.Tensor1D | null = null; // [5] in `order`: one read per micro-batch
      const { value, grads } = timed('backward', () => computeGrads(model.params(), () => {
        const logits = model.forwardAt(m.batch.inputs, m.batch.trained); // [M, V]: trained positions only
        const logp = rowLogProbs(logits, m.batch.trainedTargets); // [M]
        const { adv, off } = m.batch.extras; // [M] each
        const offPolicy = sig?.offPolicyLoss ? { mask: off, loss: sig.offPolicyLoss(logp, adv) } : undefined;
        const t = policyLoss(logp, m.old, m.ref, adv, null, cfg, offPolicy, mb.targetCount);
        let loss = t.loss;
        if (cfg.entropyCoef !== 0) {
          // verl's entropy bonus: loss - entropyCoef * token-mean entropy (the paper's script sets it to 0)
          const [M, V] = logits.shape;
          const ent = tf.sum(entropyFromLogits(tf.reshape(logits, [1, M, V]) as tf.Tensor3D));
          loss = tf.sub(loss, tf.mul(tf.div(ent, Math.max(mb.targetCount, 1)), cfg.entropyCoef)) as tf.Scalar;
        }
        kept = tf.keep(tf.stack([loss, t.pgLoss, t.kl, t.clipFrac, t.dualClipFrac]) as tf.Tensor1D);
        return loss;
      }));
      value.dispose();
      const v = kept!.dataSync();
      kept!.dispose();
      order.forEach((k, i) => (sums[k] += v[i]));
      accumulate(acc, grads);
    }
    if (sig?.extraLoss && opts.extra) {
      const extra = opts.extra;
      const { value, grads } = timed('backward', () => computeGrads(model.params(), () => sig.extraLoss!(model, extra)));
      sums.loss += value.dataSync()[0];
      value.dispose();
      accumulate(acc, grads);
    }
    return { terms: sums, grads: acc };
  } catch (e) {
    disposeGrads(acc);
    throw e;
  }
}

/** miniBatchGrads, then one AdamW step with global-norm clipping; refuses a non-finite loss before the step. */
export function updateMiniBatch(model: GPT, opt: AdamW, mb: MiniBatch, cfg: PolicyLossConfig & { entropyCoef: number }, lr: number,
  opts: { signal?: SyncSignal; extra?: PaddedBatch | null; stepNo: number }): UpdateStats {
  const { terms, grads } = miniBatchGrads(model, mb, cfg, opts);
  try {
    if (!Number.isFinite(terms.loss)) throw new Error(`grpo step ${opts.stepNo}: non-finite loss (${terms.loss})`);
    const { gradNorm } = timed('optimizer', () => opt.step(grads, lr));
    return { ...terms, gradNorm };
  } finally {
    disposeGrads(grads);
  }
}
