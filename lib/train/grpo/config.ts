/**
 * Every knob of multi-turn GRPO in one typed config (docs/design.md A.4). Each default says where it comes from:
 * "paper" = the official Qwen2.5-1.5B GRPO script of the paper's repository; "ours" = scaled for a
 * 0.1M-parameter model on two CPU cores, with the reason.
 */
import { PolicyLossConfig } from './loss';

export interface GRPOConfig extends PolicyLossConfig {
  /** Rollouts per prompt. Paper: 8 (rollout.n). */
  groupSize: number;
  /**
   * Prompts (tasks) per RL step. Paper: 60 (train_batch_size); ours: per preset (lib/experiments/registry/presets.ts).
   */
  promptsPerStep: number;
  /**
   * Prompts per PPO mini-batch. Paper: 20 (ppo_mini_batch_size), i.e. 3 updates per step; ours keeps the 3:1 ratio
   * where possible.
   */
  promptsPerMiniBatch: number;
  /**
   * Token budget of a micro-batch (rows x padded length): each mini-batch is cut into length-sorted
   * micro-batches whose gradients add up to the mini-batch's (lib/train/grpo/prepare.ts). Speed and memory only,
   * not the math. Paper code: verl's dynamic batch size (ppo_max_token_len_per_gpu); ours: 8192.
   */
  microBatchTokens: number;
  /**
   * Read each group's shared prompt once instead of once per rollout: in the rollouts (RolloutConfig.sharePrompts)
   * and in the update, once per mini-batch (lib/train/grpo/prepare.ts). The same samples, log-probs and gradients
   * up to the order of float sums. Speed only, not the math; ours (verl pads every rollout to its whole sequence).
   * Off by default: the native backend rounds the prompt pass differently (~1e-5 in the first update's gradient),
   * so from the second step on the samples part from the committed runs', which were made without it;
   * `--set grpo.sharePrompts=true` for a ~10% shorter step (docs/backends.md).
   */
  sharePrompts: boolean;
  /** Passes over the step's rollouts. Paper: 1 (ppo_epochs). */
  ppoEpochs: number;
  /** Number of RL steps. Paper: 300 (total_training_steps); ours per preset. */
  steps: number;
  /**
   * Learning rate. Paper: 1e-6 for 1.5B parameters; ours: 3e-4, the main rate of the study
   * (lib/experiments/registry/configs.ts
   * RL_LR; a tiny model needs a larger one, and the LR sweep reports the others).
   */
  lr: number;
  /** Linear warmup steps, then constant. Paper: 10 (lr_warmup_steps); ETS/PRS RL stages use 5. */
  warmupSteps: number;
  /** AdamW weight decay. Paper: 0.01 (verl default). */
  weightDecay: number;
  /** Global-norm gradient clip. Paper: 1.0 (grad_clip). */
  maxGradNorm: number;
  /** Entropy bonus: the loss minus entropyCoef x the token-mean entropy (verl's entropy_coeff). Paper: 0. */
  entropyCoef: number;
  /** Sampling temperature. Paper: 1.0 (top-p 1.0). */
  temperature: number;
  /** Most assistant messages per trajectory. Paper: 30 (max_turns). */
  maxAssistantMessages: number;
  /** Longest assistant message in tokens (ours; the paper caps the whole response length instead). */
  maxMessageTokens: number;
  /** Context budget per trajectory in tokens (ours; paper: 8k response + prompt). */
  maxContext: number;
  /** Greedy validation every this many steps. Paper: 5 (test_freq). */
  valEvery: number;
  /** Validation tasks per category (test split). Paper: the full test split; ours: a fixed subset per preset. */
  valTasksPerCategory: number;
  /** Checkpoint every this many steps (0 = only at the end). */
  checkpointEvery: number;
  /** Tasks used for the control-token probe (first user turn of each). */
  probeTasks: number;
  /**
   * Memorisation vs generalisation (ours): at every validation, the sampled reward on this many training tasks
   * per category that RL has already drawn, and on as many never-seen tasks of the training distribution
   * (TrainerArgs.unseenTasks); 0 = off.
   */
  memoTasksPerCategory: number;
  /** Rollouts per task of that measurement (temperature as in training). */
  memoGroupSize: number;
  /** Seed of task sampling and token sampling. */
  seed: number;
}

export const defaultGRPOConfig: GRPOConfig = {
  groupSize: 8,
  promptsPerStep: 8,
  promptsPerMiniBatch: 4,
  microBatchTokens: 8192,
  sharePrompts: false,
  ppoEpochs: 1,
  steps: 100,
  lr: 3e-4,
  warmupSteps: 10,
  weightDecay: 0.01,
  maxGradNorm: 1.0,
  entropyCoef: 0,
  temperature: 1.0,
  maxAssistantMessages: 30,
  maxMessageTokens: 64,
  maxContext: 1024,
  clipRatio: 0.2,
  dualClip: 3.0,
  klCoef: 1e-4,
  valEvery: 5,
  valTasksPerCategory: 10,
  checkpointEvery: 25,
  probeTasks: 32,
  memoTasksPerCategory: 6,
  memoGroupSize: 4,
  seed: 1,
};

/** Reject configs that cannot run, naming the field and value. */
export function validateGRPOConfig(cfg: GRPOConfig): void {
  const posInt = (k: keyof GRPOConfig) => {
    const v = cfg[k] as number;
    if (!Number.isInteger(v) || v < 1) throw new Error(`grpo config: ${k} must be an integer >= 1, got ${v}`);
  };
  (['groupSize', 'promptsPerStep', 'promptsPerMiniBatch', 'ppoEpochs', 'steps', 'maxAssistantMessages',
    'maxMessageTokens', 'maxContext', 'microBatchTokens', 'valEvery', 'valTasksPerCategory', 'probeTasks',
      'memoGroupSize'] as (keyof GRPOConfig)[]).forEach(posInt);
  if (!Number.isInteger(cfg.memoTasksPerCategory) || cfg.memoTasksPerCategory < 0) {
    throw new Error(`grpo config: memoTasksPerCategory must be an integer >= 0, got ${cfg.memoTasksPerCategory}`);
  }
  if (cfg.promptsPerStep % cfg.promptsPerMiniBatch !== 0) {
    throw new Error(`grpo config: promptsPerStep (${cfg.promptsPerStep}) must be a multiple of promptsPerMiniBatch ` +
      `(${cfg.promptsPerMiniBatch})`);
  }
  if (!(cfg.lr > 0)) throw new Error(`grpo config: lr must be > 0, got ${cfg.lr}`);
  // greedy decoding is a separate flag of the sampler; a temperature of 0 here would silently mean greedy RL
  if (!(cfg.temperature > 0)) throw new Error(`grpo config: temperature must be > 0, got ${cfg.temperature}`);
  if (!(cfg.clipRatio > 0 &&
    cfg.clipRatio < 1)) throw new Error(`grpo config: clipRatio must be in (0, 1), got ${cfg.clipRatio}`);
  if (!(cfg.dualClip > 1)) throw new Error(`grpo config: dualClip must be > 1, got ${cfg.dualClip}`);
}
