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
import { rowLogProbs } from '../../model/logprobs';
import { AdamW, computeGrads, disposeGrads } from '../optim';
import { PaddedBatch } from '../batch';
import { timed } from '../phases';
import { MiniBatch } from './prepare';
import { PolicyLossConfig, policyLoss } from './loss';
import type { SyncSignal } from './trainer';

/** What one update logs (token-means over the mini-batch; gradNorm before clipping). */
export interface UpdateStats {
  loss: number;
  pgLoss: number;
  kl: number;
  clipFrac: number;
  dualClipFrac: number;
  gradNorm: number;
}

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

export function updateMiniBatch(model: GPT, opt: AdamW, mb: MiniBatch, cfg: PolicyLossConfig, lr: number,
  opts: { signal?: SyncSignal; extra?: PaddedBatch | null; stepNo: number }): UpdateStats {
  const sig = opts.signal;
  const acc = new Map<string, tf.Tensor>();
  const terms: tf.Tensor1D[] = []; // per micro-batch [loss, pg, kl, clip, dual]
  try {
    for (const m of mb.micro) {
      let stats: tf.Tensor1D | null = null;
      const { value, grads } = timed('backward', () => computeGrads(model.params(), () => {
        const logits = model.forwardAt(m.batch.inputs, m.batch.trained); // [M, V]: trained positions only
        const logp = rowLogProbs(logits, m.batch.trainedTargets); // [M]
        const { adv, off } = m.batch.extras; // [M] each
        const offPolicy = sig?.offPolicyLoss ? { mask: off, loss: sig.offPolicyLoss(logp, adv) } : undefined;
        const t = policyLoss(logp, m.old, m.ref, adv, null, cfg, offPolicy, mb.targetCount);
        stats = tf.keep(tf.stack([t.loss, t.pgLoss, t.kl, t.clipFrac, t.dualClipFrac]) as tf.Tensor1D);
        return t.loss;
      }));
      value.dispose();
      terms.push(stats!);
      accumulate(acc, grads);
    }
    let extraLoss = 0;
    if (sig?.extraLoss && opts.extra) {
      const extra = opts.extra;
      const { value, grads } = timed('backward', () => computeGrads(model.params(), () => sig.extraLoss!(model, extra)));
      extraLoss = value.dataSync()[0];
      value.dispose();
      accumulate(acc, grads);
    }
    const sums = [0, 0, 0, 0, 0];
    for (const t of terms) t.dataSync().forEach((x, i) => (sums[i] += x));
    const loss = sums[0] + extraLoss;
    if (!Number.isFinite(loss)) throw new Error(`grpo step ${opts.stepNo}: non-finite loss (${loss})`);
    const { gradNorm } = timed('optimizer', () => opt.step(acc, lr));
    return { loss, pgLoss: sums[1], kl: sums[2], clipFrac: sums[3], dualClipFrac: sums[4], gradNorm };
  } finally {
    tf.dispose(terms);
    disposeGrads(acc);
  }
}
