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
import { bucketedBatches, padBatch, PaddedBatch } from './batch';
import { MetricsSink } from './metrics';
import type { SFTStepRecord } from './records';
import { ProgressBar } from '../util/progress';
import { yieldToEventLoop } from '../util/yield';

export interface SFTConfig {
  /** Peak learning rate. Paper FCL-SFT: 1e-5 (and 1e-6) for a 1.5B model; a 0.1M-param model needs far more. */
  lr: number;
  /** Passes over the data. Paper FCL-SFT: 3 epochs; ETS/PRS SFT phases: 2. */
  epochs: number;
  /** Conversations per optimizer step. Paper: batch 128 samples (one per assistant message). */
  batchSize: number;
  /** Warmup share of all steps. Paper FCL-SFT: 0.1; ETS SFT phases: 0.3. */
  warmupRatio: number;
  /** AdamW decoupled weight decay; verl default 0.01. */
  weightDecay: number;
  /** Global-norm gradient clip; verl default 1.0. */
  maxGradNorm: number;
  /** Longer sequences are cut to this many tokens. */
  maxLen: number;
  /** Seed of the shuffling order. */
  seed: number;
}

export const defaultSFTConfig: SFTConfig = {
  lr: 3e-3,
  epochs: 3,
  batchSize: 16,
  warmupRatio: 0.1,
  weightDecay: 0.01,
  maxGradNorm: 1.0,
  maxLen: 1024,
  seed: 1,
};

export interface SFTHooks {
  metrics?: MetricsSink<SFTStepRecord>;
  /** Show a terminal progress bar (default true unless silent). */
  progress?: boolean;
  label?: string;
  /** Called after every optimizer step (e.g. live notebook plots, checkpoints). */
  onStep?: (rec: SFTStepRecord) => void;
  /** Called after every epoch (1-based), e.g. for a quick validation. */
  onEpochEnd?: (epoch: number, step: number) => void;
}

export interface SFTResult {
  steps: number;
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
      if (!Number.isFinite(loss)) throw new Error(`non-finite loss (${loss})`);
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
  const rng = new Rng(cfg.seed);
  const lengths = data.map((s) => s.ids.length);
  const perEpoch = Math.ceil(data.length / cfg.batchSize);
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
          res = sftStep(model, opt, idx.map((i) => data[i]), lr, cfg.maxLen);
        } catch (err) {
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
      hooks.onEpochEnd?.(epoch + 1, step);
    }
  } finally {
    opt.dispose();
  }
  const seconds = (Date.now() - t0) / 1000;
  bar.finish(`loss ${emaLoss.toFixed(3)} | ${Math.round(tokens / Math.max(seconds, 1e-3))} tok/s`);
  return { steps: step, firstLoss, finalLoss: lastLoss, seconds, tokensPerS: tokens / Math.max(seconds, 1e-3) };
}
