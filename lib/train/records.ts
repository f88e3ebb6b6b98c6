/**
 * The records a run writes, one type each, shared by the writers (GRPOTrainer, trainSFT, the experiment
 * stages) and every reader (the collapse guard, the interleaved schemes, the summary, tables, figures,
 * notebooks).
 *   metrics.jsonl   one MetricRecord per line: RL steps, SFT steps, the validations after SFT epochs, and the
 *                   markers of interleaved and guard-triggered SFT phases;
 *   rollouts.jsonl  one RolloutRecord per sampled trajectory (rollouts-sample.jsonl: step 1 and every 10th).
 * Fields added in later versions are optional, so that committed results written before them still read.
 */

/** Greedy validation accuracy per category, on the validation steps (the test split's categories). */
export interface PerCategoryAccuracy {
  val_base?: number;
  val_miss_param?: number;
  val_miss_func?: number;
  val_long_context?: number;
}

/** One GRPO step (GRPOTrainer.step): reward, loss terms, the paper's instruments, speed. */
export interface GRPOStepRecord extends PerCategoryAccuracy {
  /** RL step within its stage, from 1. */
  step: number;
  lr: number;
  /** Mean binary reward of the step's rollouts. */
  reward: number;
  /** Share of groups whose rewards are all 0 / all equal (no advantage: no policy-gradient signal). */
  zeroRewardGroups: number;
  zeroVarianceGroups?: number;
  /** Token-means over the trained tokens, averaged over the step's mini-batches. */
  loss: number;
  pgLoss: number;
  kl: number;
  clipFrac: number;
  dualClipFrac: number;
  /** Global gradient norm before clipping, averaged over the mini-batches. */
  gradNorm: number;
  /** Token-mean entropy of the policy over the trained tokens (nats). */
  entropy: number;
  messagesPerTrajectory: number;
  tokensPerTrajectory: number;
  truncatedShare: number;
  rolloutSeconds: number;
  trainSeconds: number;
  rolloutTokensPerS: number;
  trainTokensPerS: number;
  /** The probe after `<tool_call>\n` on the validation prompts (docs/design.md A.5), and its top other token. */
  pJsonOpen: number;
  pImEnd: number;
  pToolCall: number;
  probeTopOther?: string;
  pTopOther?: number;
  /** The logit-gradient split at the step's probe positions: self and other push per probe token. */
  splitPositions: number;
  selfJsonOpen: number;
  otherJsonOpen: number;
  selfImEnd: number;
  otherImEnd: number;
  selfToolCall: number;
  otherToolCall: number;
  /** The same for the most frequent top other token at those positions (its piece). */
  splitTopOther?: string | null;
  selfTopOther?: number;
  otherTopOther?: number;
  /**
   * Structural states of the step's sampled messages (shares). Runs made before repetition loops were full collapse
   * (lib/format/states.ts) counted a loop as a healthy response or pollution; the report recomputes states from
   * rollouts-sample.jsonl.
   */
  healthyCall: number;
  healthyResponse: number;
  pollution: number;
  fullCollapse: number;
  /** Share of control-tag collapse (empty, a bare tag, only or repeated tags): the full collapse of the older rule. */
  controlCollapse?: number;
  /** Greedy validation, every `valEvery` steps and at the last. */
  valAccuracy?: number;
  valFullCollapse?: number;
  valHealthyCall?: number;
  /**
   * At the same steps, the sampled reward (temperature 1) on training tasks RL has already drawn and on tasks of
   * the training distribution it never saw: what RL learned, memorised or general (GRPOConfig.memoTasksPerCategory).
   */
  valSeenReward?: number;
  valUnseenReward?: number;
}

/** One SFT step (trainSFT). */
export interface SFTStepRecord {
  /** Step within its SFT stage, from 1, of totalSteps. */
  step: number;
  totalSteps: number;
  epoch: number;
  loss: number;
  lr: number;
  gradNorm: number;
  tokensPerS: number;
}

/** Where a record sits in its run: the stage index and the run-wide step axis of every curve. */
interface Placed {
  stage: number;
  globalStep: number;
}

export type GRPOMetric = { phase: 'grpo' } & Placed & GRPOStepRecord;
export type SFTMetric = { phase: 'sft' } & Placed & SFTStepRecord;
/** The greedy validation after an SFT epoch. */
export type SFTValMetric =
  { phase: 'sft-val'; epoch: number; valAccuracy: number; valHealthyCall: number; valFullCollapse: number }
  & Placed & PerCategoryAccuracy;
/** A scheduled SFT phase of an interleaved scheme (ETS / PRS) and the data it got. */
export type InterleaveMetric =
  { phase: 'interleave'; source: 'ets' | 'prs'; failedTasks: number; samples: number } & Placed;
/**
 * An SFT phase the collapse guard started, with the instruments that triggered it (fullCollapse: the control-collapse
 * share).
 */
export type GuardMetric = { phase: 'guard'; step: number; pImEnd: number; pJsonOpen: number; fullCollapse: number;
  failedTasks: number } & Placed;

/** A line of metrics.jsonl. */
export type MetricRecord = GRPOMetric | SFTMetric | SFTValMetric | InterleaveMetric | GuardMetric;

/** The records of one phase, in order and typed (a plain `filter` does not narrow the union). */
export function recordsOf<P extends MetricRecord['phase']>(
  records: readonly MetricRecord[],
  phase: P
): Extract<MetricRecord, { phase: P }>[] {
  return records.filter((r): r is Extract<MetricRecord, { phase: P }> => r.phase === phase);
}

/** The RL step records of a run, in order. */
export function grpoRecords(records: readonly MetricRecord[]): GRPOMetric[] {
  return recordsOf(records, 'grpo');
}

/** A numeric field of a record read by name (figures and tables choose fields at run time), or undefined. */
export function numberField(r: MetricRecord, key: string): number | undefined {
  const v = (r as unknown as Record<string, unknown>)[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * The x of a record on the study's one step axis: its global step, or its RL step for records written before global
 * steps existed.
 */
export function stepOf(r: MetricRecord): number | undefined {
  return numberField(r, 'globalStep') ?? numberField(r, 'step');
}

/** One sampled trajectory of a GRPO step (a line of rollouts.jsonl). */
export interface RolloutRecord {
  /** Index of the RL stage (interleaved schemes have three). */
  stage?: number;
  step: number;
  taskId: string;
  category: string;
  /** Group (prompt) index within the step and rollout index within the group. */
  group: number;
  index: number;
  reward: number;
  errorTurn: number | null;
  /** The assistant messages and their structural states. */
  messages: string[];
  states: string[];
  /** The rollout is OPS's ground truth, not sampled. */
  scripted: boolean;
}
