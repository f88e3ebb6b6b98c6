/**
 * Beyond the paper: the adaptive collapse guard. Instead of SFT phases at fixed steps (ETS, docs/design.md A.6),
 * an ETS-style SFT phase starts when a GRPO step's instruments cross a threshold: the probe's p(`<|im_end|>`)
 * after `<tool_call>\n` (the paper's spike), the probe's p(`{"`) (the healthy start losing mass to anything),
 * or the full-collapse share of the step's sampled messages. Every field can be changed with
 * `--set guard.<field>=<value>` (the SFT phase's own settings with `--set sft.<field>=<value>`).
 */
import { SFTConfig } from '../../train/sft';
import type { GRPOStepRecord } from '../../train/records';

export interface GuardConfig {
  /** Trigger when the probe's p(`<|im_end|>`) reaches this. Ours: 0.25 (far above the base's 5e-5). */
  pImEnd: number;
  /** ... or when the probe's p(`{"`) falls below this. Ours: 0.9 (the base writes `{"` with p 0.998). */
  pJsonOpen: number;
  /**
   * ... or when this share of the step's sampled messages is control-tag collapse (empty, a bare `<tool_call>`, only
   * or repeated tags: lib/format/states.ts controlCollapse; repetition loops do not count). Ours: 0.25.
   */
  fullCollapse: number;
  /** RL steps between two SFT phases. Ours: 10 (the records of one phase's window do not overlap the next). */
  minGap: number;
  /** Most SFT phases per RL stage. Ours: 2 (the paper's interleaved schedules have two SFT phases). */
  maxPhases: number;
  /** Steps of step records an SFT phase reads. Paper: the last 10 RL steps (ETS / PRS). */
  lastSteps: number;
  /** The SFT phase (ETS's recipe: docs/design.md A.6). */
  sft: Partial<SFTConfig>;
}

export const defaultGuardConfig: GuardConfig = {
  pImEnd: 0.25, pJsonOpen: 0.9, fullCollapse: 0.25, minGap: 10, maxPhases: 2, lastSteps: 10, sft: {},
};

/** Reject guard configs that cannot run, naming the field and value. */
export function validateGuardConfig(g: GuardConfig): void {
  for (const k of ['pImEnd', 'pJsonOpen', 'fullCollapse'] as const) {
    if (!(g[k] >= 0 && g[k] <= 1)) throw new Error(`guard config: ${k} must be in [0, 1], got ${g[k]}`);
  }
  for (const k of ['minGap', 'lastSteps'] as const) {
    if (!Number.isInteger(g[k]) || g[k] < 1) throw new Error(`guard config: ${k} must be an integer >= 1, got ${g[k]}`);
  }
  if (!Number.isInteger(g.maxPhases) ||
    g.maxPhases < 0) throw new Error(`guard config: maxPhases must be an integer >= 0, got ${g.maxPhases}`);
}

/** Does this step's record cross a threshold? */
export function guardTriggered(g: GuardConfig, rec: GRPOStepRecord): boolean {
  // records of runs made before the field existed: their full-collapse share is the same count (no loops then)
  return rec.pImEnd >= g.pImEnd || rec.pJsonOpen < g.pJsonOpen ||
    (rec.controlCollapse ?? rec.fullCollapse) >= g.fullCollapse;
}
