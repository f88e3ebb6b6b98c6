/**
 * One PPO update on one mini-batch (docs/design.md A.4): the clipped policy loss + k3 KL of every
 * micro-batch (lib/train/grpo/prepare.ts), token-mean over the whole mini-batch, gradients accumulated across
 * the micro-batches, an optional extra loss of a synchronous signal (the per-update SFT loss), then one
 * AdamW step with global-norm clipping.
 *
 * The micro-batches' terms are each divided by the mini-batch's token count, so their sum is the mini-batch's
 * token-mean: the same loss and gradient as one padded batch, up to the order of float sums. The paper's veRL
 * instead takes each micro-batch's own token-mean, weighted by its share of the mini-batch's rows (dynamic batch
 * size; `microBatchWeights`, lib/train/pipeline.ts E5): its denominator is then tokens x rows(mini) / rows(micro).
 *
 * With shared prompts (MiniBatch.prefix) the prompts' keys and values K(theta) are computed once, outside the
 * tape, and the micro-batches differentiate w.r.t. them as well as the parameters; the chain rule then adds
 * the prompts' part in one more pass, as the gradient of sum(K(theta) * dL/dK) (promptGrads).
 */
import * as tf from '@tensorflow/tfjs';
import { GPT } from '../../model/gpt';
import { entropyFromLogits, rowLogProbs } from '../../model/logprobs';
import { AdamW, computeGrads, disposeGrads } from '../optim';
import { PaddedBatch } from '../batch';
import { timed } from '../phases';
import { checkFinite } from '../diverged';
import { MiniBatch, prefixContext } from './prepare';
import type { LayerKV } from '../../model/attention';
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

/** How a mini-batch's micro-batches are averaged: the exact token-mean, or veRL's row-weighted one (see above). */
export interface Aggregation {
  microBatchWeights?: boolean;
}

/** The token-mean's denominator for micro-batch `m` of `mb`. */
function denominator(mb: MiniBatch, m: MiniBatch['micro'][number], agg: Aggregation): number {
  return agg.microBatchWeights ? m.batch.targetCount * mb.rows / m.batch.inputs.shape[0] : mb.targetCount;
}

/**
 * Loss and gradients of one mini-batch: every micro-batch's part, then the signal's extra loss, summed. The
 * caller owns (and disposes) the gradients.
 */
export function miniBatchGrads(model: GPT, mb: MiniBatch, cfg: PolicyLossConfig & { entropyCoef: number } & Aggregation,
  opts: { signal?: SyncSignal; extra?: PaddedBatch | null } = {}): { terms: LossTerms; grads: Map<string, tf.Tensor> } {
  const sig = opts.signal;
  const acc = new Map<string, tf.Tensor>();
  const sums: LossTerms = { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, dualClipFrac: 0 };
  const order = Object.keys(sums) as (keyof LossTerms)[];
  // shared prompts: their keys and values as variables of the micro-batches' gradients (see the file comment)
  const kv = mb.prefix === null ? null : timed('backward', () => promptVariables(model, mb.prefix!.ids));
  const dKV = new Map<string, tf.Tensor>(); // dL/dK, dL/dV of the prompts, summed over the micro-batches
  try {
    const vars = kv === null ? model.params() : new Map([...model.params(), ...kv.vars]);
    for (const m of mb.micro) {
      let kept: tf.Tensor1D | null = null; // [5] in `order`: one read per micro-batch
      const { value, grads } = timed('backward', () => computeGrads(vars, () => {
        // [M, V]: trained positions only
        const logits = model.forwardAt(m.batch.inputs, m.batch.trained, prefixContext(mb, m, kv?.layers ?? null));
        const logp = rowLogProbs(logits, m.batch.trainedTargets); // [M]
        const { adv, off } = m.batch.extras; // [M] each
        const offPolicy = sig?.offPolicyLoss ? { mask: off, loss: sig.offPolicyLoss(logp, adv) } : undefined;
        const denom = denominator(mb, m, cfg);
        const t = policyLoss(logp, m.old, m.ref, adv, null, cfg, offPolicy, denom);
        let loss = t.loss;
        if (cfg.entropyCoef !== 0) {
          // verl's entropy bonus: loss - entropyCoef * token-mean entropy (the paper's script sets it to 0)
          const [M, V] = logits.shape;
          const ent = tf.sum(entropyFromLogits(tf.reshape(logits, [1, M, V]) as tf.Tensor3D));
          loss = tf.sub(loss, tf.mul(tf.div(ent, Math.max(denom, 1)), cfg.entropyCoef)) as tf.Scalar;
        }
        kept = tf.keep(tf.stack([loss, t.pgLoss, t.kl, t.clipFrac, t.dualClipFrac]) as tf.Tensor1D);
        return loss;
      }));
      value.dispose();
      const v = kept!.dataSync();
      kept!.dispose();
      order.forEach((k, i) => (sums[k] += v[i]));
      if (kv !== null) for (const name of kv.vars.keys()) moveGrad(grads, dKV, name);
      accumulate(acc, grads);
    }
    if (kv !== null && dKV.size > 0) {
      accumulate(acc, timed('backward', () => promptGrads(model, mb.prefix!.ids, dKV)));
    }
    if (sig?.extraLoss && opts.extra) {
      const extra = opts.extra;
      const { value, grads } = timed('backward', () => computeGrads(model.params(),
        () => sig.extraLoss!(model, extra)));
      sums.loss += value.dataSync()[0];
      value.dispose();
      accumulate(acc, grads);
    }
    return { terms: sums, grads: acc };
  } catch (e) {
    disposeGrads(acc);
    throw e;
  } finally {
    disposeGrads(dKV);
    if (kv !== null) for (const v of kv.vars.values()) v.dispose();
  }
}

/**
 * The prompts' keys and values per layer (GPT.prefixKV, outside any tape) as variables named prompt.<layer>.kT / .v.
 */
function promptVariables(model: GPT, ids: tf.Tensor2D): { layers: LayerKV[]; vars: Map<string, tf.Variable> } {
  const vars = new Map<string, tf.Variable>();
  const layers = model.prefixKV(ids).map((l, i) => {
    const kT = tf.variable(l.kT, true) as tf.Variable<tf.Rank.R4>; // shares l.kT's data
    const v = tf.variable(l.v, true) as tf.Variable<tf.Rank.R4>;
    tf.dispose([l.kT, l.v]);
    vars.set(`prompt.${i}.kT`, kT);
    vars.set(`prompt.${i}.v`, v);
    return { kT, v };
  });
  return { layers, vars };
}

/** Move grads[name] into acc[name] (summing). */
function moveGrad(grads: Map<string, tf.Tensor>, acc: Map<string, tf.Tensor>, name: string): void {
  const g = grads.get(name);
  if (g === undefined) return;
  grads.delete(name);
  accumulate(acc, new Map([[name, g]]));
}

/**
 * The parameters' gradient through the prompts: d/dtheta of sum over layers of sum(K(theta) * dK), with K the
 * prompts' keys and values recomputed on the tape and dK = dL/dK held fixed (vector-Jacobian product).
 */
function promptGrads(model: GPT, ids: tf.Tensor2D, dKV: Map<string, tf.Tensor>): Map<string, tf.Tensor> {
  const { value, grads } = computeGrads(model.params(), () => {
    const layers = model.prefixKV(ids);
    const terms: tf.Tensor[] = [];
    layers.forEach((l, i) => {
      for (const [name, t] of [[`prompt.${i}.kT`, l.kT], [`prompt.${i}.v`, l.v]] as [string, tf.Tensor][]) {
        const d = dKV.get(name);
        if (d !== undefined) terms.push(tf.sum(tf.mul(t, d)));
      }
    });
    return tf.addN(terms) as tf.Scalar;
  });
  value.dispose();
  return grads;
}

/** miniBatchGrads, then one AdamW step with global-norm clipping; refuses a non-finite loss before the step. */
export function updateMiniBatch(model: GPT, opt: AdamW, mb: MiniBatch,
  cfg: PolicyLossConfig & { entropyCoef: number } & Aggregation,
  lr: number,
  opts: { signal?: SyncSignal; extra?: PaddedBatch | null; stepNo: number }): UpdateStats {
  const { terms, grads } = miniBatchGrads(model, mb, cfg, opts);
  try {
    checkFinite('loss', terms.loss);
    const { gradNorm } = timed('optimizer', () => opt.step(grads, lr));
    return { ...terms, gradNorm };
  } finally {
    disposeGrads(grads);
  }
}
