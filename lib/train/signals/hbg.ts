/**
 * Hint-based guidance (HBG, synchronous; docs/design.md A.6). For rollouts 0 and 1 of each group, a hint (a short
 * summary of the ground-truth solution) is appended to the system prompt while sampling only. The training
 * tensors never contain it: the trainer swaps the hinted prompt for the hint-free one before computing
 * log-probs, the ratio and the KL (no importance correction, as in the paper's code), so the policy is
 * taught to produce the hinted behaviour from the plain prompt.
 */
import { makeHint } from '../../envs/hints';
import { Task } from '../../envs/task';
import { SyncSignal } from '../grpo/signal';
import { ConfigOf, declareConfig, int } from '../../util/fields';

const HBG_FIELDS = {
  /** Rollouts per group that see the hint (at most the group size). Paper: 2 (rollouts 0 and 1). */
  hintedRollouts: int(2, 0, 64, 'rollouts'),
};

export const HBG = declareConfig('hbg', HBG_FIELDS);
export type HBGConfig = ConfigOf<typeof HBG_FIELDS>;
export const defaultHBGConfig: HBGConfig = HBG.defaults;

export function hbgSignal(cfg: Partial<HBGConfig> = {}): SyncSignal {
  const c: HBGConfig = { ...defaultHBGConfig, ...cfg };
  return {
    name: 'hbg',
    plan(task: Task, index: number) {
      return index < c.hintedRollouts ? { hint: makeHint(task) } : {};
    },
  };
}
