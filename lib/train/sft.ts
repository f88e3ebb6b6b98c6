/**
 * Supervised fine-tuning on conversations (docs/design.md A.6: FCL-SFT, ACE-SFT, and the SFT phases of ETS/PRS).
 *
 * Loss: token-mean cross-entropy over the assistant messages and their `<|im_end|>` (see encode.ts for
 * why one pass per conversation equals the paper's one-sample-per-message layout). AdamW with weight
 * decay 0.01 and gradient clipping 1.0 (verl defaults used by the paper), cosine schedule with warmup.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../prng';
import { GPT } from '../model/gpt';
import { rowLogProbs } from '../model/logprobs';
import { AdamW, computeGrads, disposeGrads } from './optim';
import { cosineWithWarmup } from './schedule';
import { TrainingSequence } from './encode';
import { bucketedBatches, hasTrainedToken, padBatch, PaddedBatch } from './batch';
import { MetricsSink } from './metrics';
import type { SFTStepRecord } from './records';
import { ProgressBar } from '../util/progress';
import { NonFinite, checkFinite, divergedAt } from './diverged';
import { yieldToEventLoop } from '../util/yield';
import { ConfigOf, declareConfig, int, num } from '../util/fields';

/** Every knob of an SFT stage or phase, one declaration each (lib/util/fields.ts: kind, default, range, unit). */
const SFT_FIELDS = {
  /** Peak learning rate. Paper FCL-SFT: 1e-5 (and 1e-6) for a 1.5B model; a 0.3M-param model needs far more. */
  lr: num(3e-3, { min: 0, max: 1, open: 'min' }),
  /** Passes over the data. Paper FCL-SFT: 3 epochs; ETS/PRS SFT phases: 2. */
  epochs: int(3, 1, 1000, 'epochs'),
  /** Conversations per optimizer step. Paper: batch 128 samples (one per assistant message). */
  batchSize: int(16, 1, 4096, 'conversations'),
  /** Warmup share of all steps. Paper FCL-SFT: 0.1; ETS SFT phases: 0.3. */
  warmupRatio: num(0.1, { min: 0, max: 1, open: 'max' }),
  /** AdamW decoupled weight decay; verl default 0.01. */
  weightDecay: num(0.01, { min: 0, max: 1 }),
  /** Global-norm gradient clip; verl default 1.0. */
  maxGradNorm: num(1.0, { min: 0, max: 1000, open: 'min' }),
  /** Longer sequences are cut to this many tokens (the default model's context is 1024). */
  maxLen: int(1024, 1, 8192, 'tokens'),
  /** Seed of the shuffling order (the project's PRNG). */
  seed: int(1, 0, 4294967295),
};

export const SFT = declareConfig('sft', SFT_FIELDS);
export type SFTConfig = ConfigOf<typeof SFT_FIELDS>;
export const defaultSFTConfig: SFTConfig = SFT.defaults;

export interface SFTHooks {
  metrics?: MetricsSink<SFTStepRecord>;
  /** Show a terminal progress bar (default true unless silent). */
  progress?: boolean;
  label?: string;
  /** The experiment stage this SFT belongs to (what a Diverged error names); default 0. */
  stage?: number;
  /** Called after every optimizer step (e.g. live notebook plots, checkpoints). */
  onStep?: (rec: SFTStepRecord) => void;
  /** Called after every epoch (1-based), e.g. for a quick validation. */
  onEpochEnd?: (epoch: number, step: number) => void;
}

export interface SFTResult {
  steps: number;
  /**
   * Sequences left out because none of their trained tokens lies within the first `maxLen` tokens (a long
   * conversation whose assistant turn the truncation cuts away): there is nothing in them to learn.
   */
  skipped: number;
  firstLoss: number;
  finalLoss: number;
  seconds: number;
  tokensPerS: number;
}

/**
 * Token-mean cross-entropy over the trained positions of a padded batch, with logits computed there only
 * (GPT.forwardAt); 0 for a batch without trained tokens.
 */
export function trainedCrossEntropy(model: GPT, batch: PaddedBatch): tf.Scalar {
  if (batch.targetCount === 0) return tf.scalar(0);
  return tf.tidy(() => tf.neg(tf.mean(rowLogProbs(model.forwardAt(batch.inputs, batch.trained),
    batch.trainedTargets))) as tf.Scalar);
}

/** One SFT loss + update on a padded batch; returns the loss and pre-clip gradient norm. */
export function sftStep(model: GPT, opt: AdamW, seqs: TrainingSequence[], lr: number,
  maxLen: number): { loss: number; gradNorm: number; tokens: number } {
  const batch = padBatch(seqs, Math.min(maxLen, model.config.blockSize));
  try {
    const { value, grads } = computeGrads(model.params(), () => trainedCrossEntropy(model, batch));
    const loss = value.dataSync()[0];
    value.dispose();
    try {
      checkFinite('loss', loss);
      const { gradNorm } = opt.step(grads, lr);
      return { loss, gradNorm, tokens: batch.inputs.size };
    } finally {
      disposeGrads(grads);
    }
  } finally {
    batch.dispose();
  }
}

/**
 * Train `model` in place on `data`, giving the event loop a turn after every step (lib/util/yield.ts).
 * Rejects, naming the step, if the loss turns NaN/Inf.
 */
export async function trainSFT(model: GPT, data: TrainingSequence[], config: Partial<SFTConfig> = {},
  hooks: SFTHooks = {}): Promise<SFTResult> {
  const cfg: SFTConfig = { ...defaultSFTConfig, ...config };
  if (data.length === 0) throw new Error('trainSFT: no training sequences');
  const limit = Math.min(cfg.maxLen, model.config.blockSize);
  // a batch of such sequences alone has a loss that no weight reaches, which the optimizer refuses
  const kept = data.filter((s) => hasTrainedToken(s, limit));
  const skipped = data.length - kept.length;
  if (kept.length === 0) throw new Error(`trainSFT: none of the ${data.length} sequences has a trained token within ` +
    `its first ${limit} tokens (maxLen / blockSize)`);
  if (skipped > 0 && hooks.progress !== false) process.stderr.write(`[sft] ${skipped} of ${data.length} sequences ` +
    `have no trained token within their first ${limit} tokens: left out\n`);
  const rng = new Rng(cfg.seed);
  const lengths = kept.map((s) => s.ids.length);
  const perEpoch = Math.ceil(kept.length / cfg.batchSize);
  const totalSteps = perEpoch * cfg.epochs;
  const schedule = cosineWithWarmup(cfg.lr, totalSteps, cfg.warmupRatio);
  const opt = new AdamW(model.params(), { weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm });
  const bar = new ProgressBar({ total: totalSteps, label: hooks.label ?? 'sft', silent: hooks.progress === false });
  const t0 = Date.now();
  let step = 0;
  let tokens = 0;
  let firstLoss = NaN;
  let lastLoss = NaN;
  let emaLoss = NaN;
  try {
    for (let epoch = 0; epoch < cfg.epochs; epoch++) {
      for (const idx of bucketedBatches(lengths, cfg.batchSize, rng)) {
        const lr = schedule(step);
        let res: { loss: number; gradNorm: number; tokens: number };
        try {
          res = sftStep(model, opt, idx.map((i) => kept[i]), lr, cfg.maxLen);
        } catch (err) {
          if (err instanceof NonFinite) throw divergedAt(err,
            { phase: 'sft', stage: hooks.stage ?? 0, step: step + 1, lr });
          throw new Error(`SFT step ${step + 1}/${totalSteps} (epoch ${epoch + 1}): ${(err as Error).message}`);
        }
        step++;
        tokens += res.tokens;
        if (step === 1) firstLoss = res.loss;
        lastLoss = res.loss;
        emaLoss = Number.isNaN(emaLoss) ? res.loss : 0.9 * emaLoss + 0.1 * res.loss;
        const tokensPerS = tokens / Math.max(1e-3, (Date.now() - t0) / 1000);
        const rec: SFTStepRecord = { step, totalSteps, epoch: epoch + 1, loss: res.loss, lr, gradNorm: res.gradNorm,
          tokensPerS };
        hooks.metrics?.log(rec);
        hooks.onStep?.(rec);
        bar.update(step, `loss ${emaLoss.toFixed(3)} | ${Math.round(tokensPerS)} tok/s`);
        await yieldToEventLoop();
      }
      try {
        hooks.onEpochEnd?.(epoch + 1, step); // its greedy validation samples from the weights of this step
      } catch (err) {
        throw divergedAt(err, { phase: 'sft', stage: hooks.stage ?? 0, step, lr: schedule(step - 1) });
      }
    }
  } finally {
    opt.dispose();
  }
  const seconds = (Date.now() - t0) / 1000;
  bar.finish(`loss ${emaLoss.toFixed(3)} | ${Math.round(tokens / Math.max(seconds, 1e-3))} tok/s`);
  return { steps: step, skipped, firstLoss, finalLoss: lastLoss, seconds,
    tokensPerS: tokens / Math.max(seconds, 1e-3) };
}
