/**
 * How a synchronous supervisory signal (OPS, HBG, the per-update SFT loss; docs/design.md A.6) plugs into a GRPO
 * step without touching its loop: it may plan a rollout (a hint while sampling, or a script instead of sampling),
 * replace the loss of off-policy tokens, and add a loss of its own to each update. The signals live in
 * lib/train/signals; the trainer (trainer.ts) and the update (update.ts) only call these hooks.
 */
import * as tf from '@tensorflow/tfjs';
import { GPT } from '../../model/gpt';
import { Task } from '../../envs/task';
import { PaddedBatch } from '../batch';
import { ScriptedRow } from '../trajectory';

/** What a synchronous signal may change about one rollout of a group (docs/design.md A.6). */
export interface RolloutPlan {
  /** Appended to the system prompt while sampling only (HBG); training sees the hint-free prompt. */
  hint?: string;
  /** Assistant messages to emit instead of sampling (OPS's ground-truth rollout). */
  script?: ScriptedRow;
}

export interface SyncSignal {
  name: string;
  /** Plan for rollout `index` (0..groupSize-1) of `task`'s group. */
  plan?(task: Task, index: number): RolloutPlan;
  /**
   * Per-token loss for off-policy (scripted) tokens instead of the clipped-ratio loss (OPS's LUFFY variant):
   * logp [M] of the current policy at the trained tokens, adv [M] -> [M]. Called inside the gradient scope.
   */
  offPolicyLoss?(logp: tf.Tensor1D, adv: tf.Tensor1D): tf.Tensor1D;
  /** Data for an extra loss of one mini-batch (the per-update SFT loss), built outside the gradient scope. */
  prepareExtra?(tasks: Task[]): PaddedBatch | null;
  /** The extra loss on that data, added to the GRPO loss inside the gradient scope. */
  extraLoss?(model: GPT, batch: PaddedBatch): tf.Scalar;
}
