/**
 * What one rollout episode produces (lib/train/rollout.ts): the conversation's tokens with the loss mask GRPO
 * trains on (docs/design.md A.4), the sampler's log-probs and reads, per-message structural states and the
 * checker's verdict; plus the two hooks that shape sampling (a logit mask, a scripted row).
 */
import { MessageMode, StructuralState } from '../format/types';

/**
 * Constrained decoding hook: given the row and the tokens of the current message so far, return token ids
 * that must not come next (or null). Used by the capability probe (docs/design.md A.5).
 */
export type LogitMask = (row: number, messageSoFar: readonly number[]) => readonly number[] | null;

/** A row whose assistant messages come from a script instead of the policy (OPS's ground-truth rollout). */
export interface ScriptedRow {
  /** The assistant messages to emit, in order; when they run out, the row samples. */
  messages: string[];
}

export interface MessageRecord {
  content: string;
  /** What the message is (lib/format/states.ts messageMode), and the structural state that follows from it. */
  mode: MessageMode;
  state: StructuralState;
  /** Token span [start, end) of the message in `ids`, its `<|im_end|>` included. */
  start: number;
  end: number;
  scripted: boolean;
}

export interface Trajectory {
  taskId: string;
  category: string;
  /** Every token of the conversation as the policy read it: prompt, messages, observations. */
  ids: number[];
  /** 1 on assistant tokens (each message's `<|im_end|>` included), 0 elsewhere. */
  lossMask: number[];
  /** log p of each token when it was sampled (0 where mask is 0 or the token was scripted). */
  sampleLogProbs: number[];
  /** Entropy of the distribution each token was sampled from (0 where it was not sampled). */
  sampleEntropies: number[];
  /** The sampler's reads at probe positions (RolloutOptions.probeRead), in order. */
  probeReads: ProbeRead[];
  /** 1 on tokens that came from a script (OPS ground truth) rather than from the policy. */
  offPolicy: number[];
  /**
   * Some trained token was not sampled by the policy from the context it is trained on: a scripted message (OPS), or
   * a prompt that carried a hint while sampling (HBG; `ids` hold the hint-free prompt). Its old log-probs then need a
   * scoring pass (lib/train/grpo/prepare.ts); everywhere else the sampler's are exact.
   */
  rescore: boolean;
  promptLength: number;
  messages: MessageRecord[];
  reward: number;
  pass: boolean;
  errorTurn: number | null;
  /** The episode stopped on the context budget rather than finishing. */
  truncated: boolean;
}

/** What the sampler saw at a probe position: the probabilities of the probe tokens and the top other token. */
export interface ProbeRead {
  /** Index in Trajectory.ids of the token sampled there. */
  index: number;
  probs: number[];
  topOther: { id: number; p: number };
}
