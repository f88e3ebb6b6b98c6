/**
 * Every knob of multi-turn GRPO in one declaration (docs/design.md A.4), one line each: the value's kind, its default,
 * its range and unit (lib/util/fields.ts), and a doc comment that says where the default comes from: "paper" = the
 * official Qwen2.5-1.5B GRPO script of the paper's repository; "ours" = scaled for a 0.3M-parameter model on two CPU
 * cores, with the reason. The ranges are what can run: past their upper bounds a run would only exhaust memory or
 * never finish, below their lower ones it would silently do something else (a negative clip turns clipping off).
 */
import { ConfigOf, declareConfig, flag, int, num } from '../../util/fields';

const GRPO_FIELDS = {
  /** Rollouts per prompt. Paper: 8 (rollout.n). */
  groupSize: int(8, 1, 64, 'rollouts'),
  /**
   * Prompts (tasks) per RL step. Paper: 60 (train_batch_size); ours: per preset (lib/experiments/registry/presets.ts).
   */
  promptsPerStep: int(8, 1, 512, 'prompts'),
  /**
   * Prompts per PPO mini-batch. Paper: 20 (ppo_mini_batch_size), i.e. 3 updates per step; ours keeps the 3:1 ratio
   * where possible.
   */
  promptsPerMiniBatch: int(4, 1, 512, 'prompts'),
  /**
   * Token budget of a micro-batch (rows x padded length): each mini-batch is cut into length-sorted micro-batches whose
   * gradients add up to the mini-batch's (lib/train/grpo/prepare.ts). Speed and memory only, not the math. Paper code:
   * verl's dynamic batch size (ppo_max_token_len_per_gpu); ours: 8192.
   */
  microBatchTokens: int(8192, 1, 1 << 20, 'tokens'),
  /**
   * Read each group's shared prompt once instead of once per rollout: in the rollouts (RolloutConfig.sharePrompts) and
   * in the update, once per mini-batch (lib/train/grpo/prepare.ts). The same samples, log-probs and gradients up to the
   * order of float sums. Speed only, not the math; ours (verl pads every rollout to its whole sequence). Off by
   * default:
   * the native backend rounds the prompt pass differently (~1e-5 in the first update's gradient), so from the second
   * step on the samples part from the committed runs', which were made without it; `--set grpo.sharePrompts=true` for a
   * ~10% shorter step (docs/backends.md).
   */
  sharePrompts: flag(false),
  /** Passes over the step's rollouts. Paper: 1 (ppo_epochs). */
  ppoEpochs: int(1, 1, 16, 'epochs'),
  /** Number of RL steps. Paper: 300 (total_training_steps); ours per preset. */
  steps: int(100, 1, 100_000, 'steps'),
  /**
   * Learning rate. Paper: 1e-6 for 1.5B parameters; ours: 3e-4, the main rate of the study (RL_LR in
   * lib/experiments/registry/configs.ts; a tiny model needs a larger one, and the LR sweep reports the others).
   */
  lr: num(3e-4, { min: 0, max: 1, open: 'min' }),
  /** Linear warmup steps, then constant. Paper: 10 (lr_warmup_steps); ETS/PRS RL stages use 5. */
  warmupSteps: int(10, 0, 100_000, 'steps'),
  /** AdamW weight decay. Paper: 0.01 (verl default). */
  weightDecay: num(0.01, { min: 0, max: 1 }),
  /** Global-norm gradient clip. Paper: 1.0 (grad_clip). */
  maxGradNorm: num(1.0, { min: 0, max: 1000, open: 'min' }),
  /** Entropy bonus: the loss minus entropyCoef x the token-mean entropy (verl's entropy_coeff). Paper: 0. */
  entropyCoef: num(0, { min: 0, max: 1 }),
  /**
   * Sampling temperature. Paper: 1.0 (top-p 1.0). Greedy decoding is the sampler's own flag, never a temperature of 0.
   */
  temperature: num(1.0, { min: 0, max: 10, open: 'min' }),
  /** Most assistant messages per trajectory. Paper: 30 (max_turns). */
  maxAssistantMessages: int(30, 1, 64, 'messages'),
  /** Longest assistant message in tokens (ours; the paper caps the whole response length instead). */
  maxMessageTokens: int(64, 1, 4096, 'tokens'),
  /**
   * Context budget per trajectory in tokens (ours; paper: 8k response + prompt); the default model's context is 1024.
   */
  maxContext: int(1024, 1, 8192, 'tokens'),
  /** PPO clip range, both sides. Paper script: clip_ratio 0.2. */
  clipRatio: num(0.2, { min: 0, max: 1, open: 'both' }),
  /** Dual-clip constant c, for negative advantages. Paper script / verl default: 3.0 (clip_ratio_c). */
  dualClip: num(3.0, { min: 1, max: 100, open: 'min' }),
  /** Coefficient of the k3 KL loss against the reference policy. Paper script: kl_loss_coef 1e-4. */
  klCoef: num(1e-4, { min: 0, max: 10 }),
  /** Greedy validation every this many steps. Paper: 5 (test_freq). */
  valEvery: int(5, 1, 100_000, 'steps'),
  /**
   * Validation tasks per category (the first of the test split's), which the probe's prompts come from too. Paper: the
   * full test split; ours: a fixed subset per preset.
   */
  valTasksPerCategory: int(10, 1, 100, 'tasks'),
  /** Save a resume state every this many steps (0 = only at the end). */
  checkpointEvery: int(25, 0, 100_000, 'steps'),
  /** Tasks used for the control-token probe (first user turn of each). */
  probeTasks: int(32, 1, 400, 'tasks'),
  /**
   * Memorisation vs generalisation (ours): at every validation, the sampled reward on this many training tasks per
   * category that RL has already drawn, and on as many never-seen tasks of the training distribution; 0 = off.
   */
  memoTasksPerCategory: int(6, 0, 100, 'tasks'),
  /** Rollouts per task of that measurement (temperature as in training). */
  memoGroupSize: int(4, 1, 64, 'rollouts'),
  /** Seed of task sampling and token sampling (the project's PRNG, lib/prng.ts). */
  seed: int(1, 0, 4294967295),
};

export const GRPO = declareConfig('grpo', GRPO_FIELDS, (c) =>
  c.promptsPerStep % c.promptsPerMiniBatch !== 0
    ? `grpo.promptsPerStep (${c.promptsPerStep}) must be a multiple of grpo.promptsPerMiniBatch ` +
      `(${c.promptsPerMiniBatch})`
    : c.maxMessageTokens > c.maxContext
      ? `grpo.maxMessageTokens must be at most grpo.maxContext (${c.maxContext}), got ${c.maxMessageTokens}` : null);

export type GRPOConfig = ConfigOf<typeof GRPO_FIELDS>;

export const defaultGRPOConfig: GRPOConfig = GRPO.defaults;

/** Reject configs that cannot run, naming the field, its range and the value. */
export function validateGRPOConfig(cfg: GRPOConfig): void {
  GRPO.check(cfg);
}
