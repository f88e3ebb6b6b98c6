/**
 * Throughput of the GPT on the current backend: training tokens/s and KV-cache sampling tokens/s.
 * Wired into `npx toolrl bench`; the shapes default to rollout-like ones (docs/design.md A.4 at toy scale).
 * scripts/bench-torch.py runs the same shapes in PyTorch for comparison.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../prng';
import { AdamW, computeGrads, disposeGrads } from '../train/optim';
import { GPTConfig } from '../model/config';
import { GPT } from '../model/gpt';
import { maskedCrossEntropy } from '../model/logprobs';

export interface BenchOptions {
  /** Train batch rows. Default 16 (rollout-shaped mini-batch). */
  trainBatch: number;
  /** Train sequence length. Default 256 (a few-hundred-token trajectory, docs/design.md B). */
  trainSeq: number;
  /** Sampling batch. Default 64 (8 prompts x group of 8, docs/design.md A.4). */
  sampleBatch: number;
  /** Prompt tokens per row in the sampling prefill. Default 100. */
  prefill: number;
  /** One-token decode steps after the prefill. Default 100. */
  decodeSteps: number;
  /** Timed repetitions (the median is reported). Default 3. */
  runs: number;
  /** Untimed warm-up repetitions. Default 1. */
  warmup: number;
  /** Seed of weights and data. Default 0. */
  seed: number;
  /** Measure training / sampling (`toolrl bench --parts`). Default both. */
  train: boolean;
  sample: boolean;
}

export const DEFAULT_BENCH: BenchOptions = {
  trainBatch: 16, trainSeq: 256, sampleBatch: 64, prefill: 100, decodeSteps: 100, runs: 3, warmup: 1, seed: 0,
    train: true, sample: true,
};

export interface BenchResult {
  backend: string;
  config: GPTConfig;
  numParams: number;
  options: BenchOptions;
  /** Absent when not measured (options.train / options.sample). */
  train?: { tokensPerSec: number; msPerStep: number; stepMs: number[] };
  sample?: {
    /** Decode tokens/s (batch x decodeSteps over the decode time, sampling included). */
    tokensPerSec: number;
    /** All tokens (prefill + decode) over the whole time. */
    totalTokensPerSec: number;
    prefillMs: number;
    msPerDecodeStep: number;
    decodeMs: number[];
  };
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** One timed train step (forward + backward + AdamW) on fixed random data; returns ms. */
function trainStep(model: GPT, opt: AdamW, ids: tf.Tensor2D, targets: tf.Tensor2D, mask: tf.Tensor2D): number {
  const t0 = performance.now();
  const { value, grads } = computeGrads(model.params(), () => maskedCrossEntropy(model.forward(ids), targets, mask));
  opt.step(grads, 1e-4);
  value.dataSync();
  value.dispose();
  disposeGrads(grads);
  return performance.now() - t0;
}

/** Sample from softmax(logits) row by row on the CPU. */
function sampleRows(logits: tf.Tensor2D, rng: Rng): number[] {
  const probs = tf.softmax(logits);
  const p = probs.dataSync();
  probs.dispose();
  const [B, V] = logits.shape;
  const out: number[] = [];
  for (let b = 0; b < B; b++) out.push(rng.categorical(p.subarray(b * V, (b + 1) * V)));
  return out;
}

/** Median milliseconds of a forward + backward + AdamW step on random [trainBatch, trainSeq] tokens. */
function benchTraining(model: GPT, o: BenchOptions, rng: Rng,
  log: (msg: string) => void): { msPerStep: number; stepMs: number[] } {
  const V = model.config.vocabSize;
  const shape: [number, number] = [o.trainBatch, o.trainSeq];
  const n = o.trainBatch * o.trainSeq;
  const ids = tf.tensor2d(Int32Array.from({ length: n }, () => rng.int(0, V - 1)), shape, 'int32'); // [B, T]
  const targets = tf.tensor2d(Int32Array.from({ length: n }, () => rng.int(0, V - 1)), shape, 'int32'); // [B, T]
  const mask = tf.ones(shape) as tf.Tensor2D; // [B, T]
  const opt = new AdamW(model.params());
  const stepMs: number[] = [];
  try {
    for (let i = 0; i < o.warmup + o.runs; i++) {
      const ms = trainStep(model, opt, ids, targets, mask);
      if (i >= o.warmup) stepMs.push(ms);
      log(`train step ${i + 1}/${o.warmup + o.runs}: ${ms.toFixed(0)} ms`);
    }
  } finally {
    opt.dispose();
    tf.dispose([ids, targets, mask]);
  }
  return { msPerStep: median(stepMs), stepMs };
}

/** Milliseconds of a `prefill`-token prompt read and of `decodeSteps` sampled tokens through the KV cache, per run. */
function benchSampling(model: GPT, o: BenchOptions, rng: Rng,
  log: (msg: string) => void): { prefillMs: number[]; decodeMs: number[] } {
  const V = model.config.vocabSize;
  const decodeMs: number[] = [];
  const prefillMs: number[] = [];
  for (let r = 0; r < o.warmup + o.runs; r++) {
    const cache = model.createCache(o.sampleBatch);
    const prompts = Array.from({ length: o.sampleBatch }, () =>
      Array.from({ length: o.prefill }, () => rng.int(0, V - 1)));
    const t0 = performance.now();
    let logits = model.append(cache, prompts); // [sampleBatch, V]
    let next = sampleRows(logits, rng);
    logits.dispose();
    const t1 = performance.now();
    for (let s = 0; s < o.decodeSteps; s++) {
      logits = model.append(cache, next.map((t) => [t]));
      next = sampleRows(logits, rng);
      logits.dispose();
    }
    const t2 = performance.now();
    cache.dispose();
    if (r >= o.warmup) {
      prefillMs.push(t1 - t0);
      decodeMs.push(t2 - t1);
    }
    log(`sampling run ${r + 1}/${o.warmup + o.runs}: prefill ${(t1 - t0).toFixed(0)} ms, ` +
      `decode ${(t2 - t1).toFixed(0)} ms`);
  }
  return { prefillMs, decodeMs };
}

/** Measure training and sampling throughput of a model with config `cfg`; `log` gets progress lines. */
export function benchModel(cfg: GPTConfig, opts: Partial<BenchOptions> = {},
  log: (msg: string) => void = () => {}): BenchResult {
  const o: BenchOptions = { ...DEFAULT_BENCH, ...opts };
  const rng = new Rng(o.seed);
  const model = new GPT({ ...cfg, blockSize: Math.max(cfg.blockSize, o.trainSeq, o.prefill + o.decodeSteps) }, o.seed);
  try {
    const out: BenchResult = { backend: tf.getBackend(), config: model.config, numParams: model.numParams(),
      options: o };
    if (o.train) {
      const { msPerStep, stepMs } = benchTraining(model, o, rng, log);
      out.train = { tokensPerSec: ((o.trainBatch * o.trainSeq) / msPerStep) * 1000, msPerStep, stepMs };
    }
    if (o.sample) {
      const sampling = benchSampling(model, o, rng, log);
      const prefillMs = median(sampling.prefillMs);
      const decode = median(sampling.decodeMs);
      out.sample = {
        tokensPerSec: ((o.sampleBatch * o.decodeSteps) / decode) * 1000,
        totalTokensPerSec: ((o.sampleBatch * (o.prefill + o.decodeSteps)) / (prefillMs + decode)) * 1000,
        prefillMs,
        msPerDecodeStep: decode / o.decodeSteps,
        decodeMs: sampling.decodeMs,
      };
    }
    return out;
  } finally {
    model.dispose();
  }
}
