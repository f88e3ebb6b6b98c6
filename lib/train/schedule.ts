/**
 * Learning-rate schedules, as functions of the 0-based optimizer step (the step about to be taken).
 *
 * - GRPO (docs/design.md A.4, from the official script): linear warmup over 10 steps, then constant.
 * - SFT (docs/design.md A.6, FCL-SFT): cosine decay to 0 with a warmup ratio of 0.1 of the total steps.
 * Both follow HF transformers' get_constant_schedule_with_warmup / get_cosine_schedule_with_warmup, with one
 * departure: HF's warmup multiplier is step / W, which makes the very first update a zero-lr no-op; we use
 * (step + 1) / W so every step moves the weights.
 */

/** A schedule maps the 0-based step index to a learning rate. */
export type LrSchedule = (step: number) => number;

/**
 * Linear warmup to `lr` over `warmupSteps`, then constant. Step s < warmupSteps uses lr * (s + 1) / warmupSteps.
 * (HF's get_constant_schedule_with_warmup uses s / warmupSteps, i.e. a wasted zero-lr first step; with a
 * handful of RL steps per stage we prefer the first step to count.)
 */
export function constantWithWarmup(lr: number, warmupSteps: number): LrSchedule {
  checkLr(lr);
  if (!Number.isInteger(warmupSteps) ||
    warmupSteps < 0) throw new Error(`constantWithWarmup: warmupSteps must be an integer >= 0, got ${warmupSteps}`);
  return (step: number) => (step < warmupSteps ? (lr * (step + 1)) / warmupSteps : lr);
}

/**
 * Linear warmup over round(warmupRatio * totalSteps) steps, then cosine decay from lr to 0 at totalSteps.
 * Step s in warmup: lr * (s + 1) / W; after: lr * 0.5 * (1 + cos(pi * (s - W) / (totalSteps - W))).
 */
export function cosineWithWarmup(lr: number, totalSteps: number, warmupRatio: number): LrSchedule {
  checkLr(lr);
  if (!Number.isInteger(totalSteps) ||
    totalSteps < 1) throw new Error(`cosineWithWarmup: totalSteps must be an integer >= 1, got ${totalSteps}`);
  if (!(warmupRatio >= 0 &&
    warmupRatio <= 1)) throw new Error(`cosineWithWarmup: warmupRatio must be in [0, 1], got ${warmupRatio}`);
  const W = Math.round(warmupRatio * totalSteps);
  return (step: number) => {
    if (step < W) return (lr * (step + 1)) / W;
    const progress = Math.min(1, (step - W) / Math.max(1, totalSteps - W));
    return lr * 0.5 * (1 + Math.cos(Math.PI * progress));
  };
}

function checkLr(lr: number): void {
  if (!(lr >= 0) || !Number.isFinite(lr)) throw new Error(`learning rate must be a finite number >= 0, got ${lr}`);
}
