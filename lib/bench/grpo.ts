/**
 * The end-to-end figure that decides how long an RL run takes: seconds per GRPO step, split by phase.
 *
 * One step is exactly GRPOTrainer.step() of the instruct regime's full-preset shape by default (32 training tasks
 * x group 8 = 256 trajectories, 4 mini-batches, one PPO epoch, KL to a frozen reference): rollouts with the
 * environments, old and reference log-probs, the updates, and the per-step instruments. The phase clock
 * (lib/train/phases.ts) splits it into
 *   prefill       reading prompts / observations through the KV cache (chunks of tokens)
 *   decode        one-token cache appends while rows sample, logits to the CPU
 *   sampling      choosing tokens from those logits (JS)
 *   environments  stepping the episodes and encoding their observations
 *   scoring       forward passes for the old and the reference log-probs
 *   backward      forward + backward of the policy loss (one per mini-batch)
 *   optimizer     AdamW with gradient clipping
 *   other         the rest (padding, advantages, probe, gradient split, bookkeeping)
 */
import { GPT } from '../model/gpt';
import { Tokenizer } from '../format/tokenizer';
import { Task } from '../envs/task';
import { defaultGRPOConfig, GRPO, GRPOConfig } from '../train/grpo/config';
import { GRPOTrainer } from '../train/grpo/trainer';
import type { GRPOStepRecord } from '../train/records';
import { PhaseTimes, startPhaseClock, stopPhaseClock } from '../train/phases';

export interface GrpoStepBench {
  /** Median seconds of one whole step. */
  seconds: number;
  /** Seconds per phase in the median step (they add up to `seconds`). */
  phases: Record<string, number>;
  /** Every run's seconds (warm-up excluded). */
  runs: number[];
  trajectories: number;
  /** Mean tokens per trajectory over the timed steps (the length depends on the policy). */
  tokensPerTrajectory: number;
}

/**
 * The benchmark step's configuration: `prompts` training tasks x group 8 in four mini-batches (as both regimes'
 * full preset: 16 x 8 strong, 32 x 8 instruct; fewer prompts: one or two mini-batches), no validation, no
 * checkpointing, and a tiny learning rate. Every phase runs as in training, but the policy stays (almost) the starting
 * one,
 * so the timed steps roll out trajectories of the same length from run to run and across code versions: at
 * the training learning rate, three updates already changed trajectory lengths (350 -> 900 tokens) by chance.
 */
export function benchGrpoConfig(prompts = 32, sharePrompts = defaultGRPOConfig.sharePrompts): GRPOConfig {
  const perMiniBatch = prompts >= 8 ? Math.floor(prompts / 4) : Math.max(1, Math.floor(prompts / 2));
  if (!Number.isInteger(prompts) || prompts < 1 || prompts % perMiniBatch !== 0) {
    throw new Error(`bench: --prompts must be 1, 2, 4 or a multiple of 4, got ${prompts}`);
  }
  return {
    ...defaultGRPOConfig, promptsPerStep: prompts, promptsPerMiniBatch: perMiniBatch, groupSize: 8,
    // The most steps the declaration allows: the bench never reaches a validation or the end of the schedule.
    steps: GRPO.fields.steps.max!, valEvery: GRPO.fields.valEvery.max!,
    checkpointEvery: 0, warmupSteps: 1, lr: 1e-7, seed: 1, sharePrompts,
  };
}

/**
 * Time `warmup + runs` consecutive GRPO steps of `model` (trained in place) against the frozen `ref`.
 * `log` gets a line per step.
 */
export function benchGrpoStep(model: GPT, ref: GPT | null, tokenizer: Tokenizer, trainTasks: Task[], valTasks: Task[],
  opts: { runs: number; warmup?: number; prompts?: number; sharePrompts?: boolean; log?: (msg: string) =>
    void }): GrpoStepBench {
  const warmup = opts.warmup ?? 1;
  const log = opts.log ?? (() => {});
  const config = benchGrpoConfig(opts.prompts, opts.sharePrompts);
  const nTraj = config.promptsPerStep * config.groupSize;
  const trainer = new GRPOTrainer({ model, ref, tokenizer, trainTasks, valTasks, config });
  const steps: { seconds: number; phases: Record<string, number>; tokens: number }[] = [];
  try {
    for (let i = 0; i < warmup + opts.runs; i++) {
      const t0 = performance.now();
      startPhaseClock();
      let rec: GRPOStepRecord;
      let ms: PhaseTimes;
      try {
        rec = trainer.step().record;
      } finally {
        ms = stopPhaseClock();
      }
      const seconds = (performance.now() - t0) / 1000;
      const phases: Record<string, number> = {};
      let known = 0;
      for (const [k, v] of Object.entries(ms)) {
        phases[k] = v / 1000;
        known += v / 1000;
      }
      phases.other = Math.max(0, seconds - known);
      const tokens = rec.tokensPerTrajectory * nTraj;
      log(`grpo step ${i + 1}/${warmup + opts.runs}: ${seconds.toFixed(2)} s, ` +
        `${rec.tokensPerTrajectory.toFixed(0)} tokens per trajectory`);
      if (i >= warmup) steps.push({ seconds, phases, tokens });
    }
  } finally {
    trainer.dispose();
  }
  const sorted = steps.slice().sort((a, b) => a.seconds - b.seconds);
  const med = sorted[(sorted.length - 1) >> 1];
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const phases: Record<string, number> = {};
  for (const k of ['prefill', 'decode', 'sampling', 'environments', 'scoring', 'backward', 'optimizer', 'other']) {
    phases[k] = round(med.phases[k] ?? 0);
  }
  return {
    seconds: round(med.seconds),
    phases,
    runs: steps.map((s) => round(s.seconds)),
    trajectories: nTraj,
    tokensPerTrajectory: Math.round(steps.reduce((a, s) => a + s.tokens, 0) / steps.length / nTraj),
  };
}
