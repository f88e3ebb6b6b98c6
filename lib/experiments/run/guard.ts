/**
 * Beyond the paper: the adaptive collapse guard. Instead of SFT phases at fixed steps (ETS, docs/design.md A.6),
 * an ETS-style SFT phase starts when a GRPO step's instruments cross a threshold: the probe's p(`<|im_end|>`)
 * after `<tool_call>\n` (the paper's spike), the probe's p(`{"`) (the healthy start losing mass to anything),
 * or the full-collapse share of the step's sampled messages. Every field can be changed with
 * `--set guard.<field>=<value>` (the SFT phase's own settings with `--set sft.<field>=<value>`).
 */
import { SFT, SFTConfig, defaultSFTConfig } from '../../train/sft';
import { ConfigOf, declareConfig, int, num } from '../../util/fields';
import type { GRPOStepRecord } from '../../train/records';

const GUARD_FIELDS = {
  /** Trigger when the probe's p(`<|im_end|>`) reaches this. Ours: 0.25 (far above the base's 5e-5). */
  pImEnd: num(0.25, { min: 0, max: 1 }),
  /** ... or when the probe's p(`{"`) falls below this. Ours: 0.9 (the base writes `{"` with p 0.998). */
  pJsonOpen: num(0.9, { min: 0, max: 1 }),
  /**
   * ... or when this share of the step's sampled messages is control-tag collapse (empty, a bare `<tool_call>`, only
   * or repeated tags: lib/format/states.ts controlCollapse; repetition loops do not count). Ours: 0.25.
   */
  fullCollapse: num(0.25, { min: 0, max: 1 }),
  /** RL steps between two SFT phases. Ours: 10 (the records of one phase's window do not overlap the next). */
  minGap: int(10, 1, 100_000, 'steps'),
  /** Most SFT phases per RL stage. Ours: 2 (the paper's interleaved schedules have two SFT phases). */
  maxPhases: int(2, 0, 100, 'phases'),
  /** Steps of step records an SFT phase reads. Paper: the last 10 RL steps (ETS / PRS). */
  lastSteps: int(10, 1, 100_000, 'steps'),
};

/** The guard's thresholds (`--set guard.<field>`); its SFT phase's settings are an SFT config (`--set sft.<field>`). */
export const GUARD = declareConfig('guard', GUARD_FIELDS);

export type GuardConfig = ConfigOf<typeof GUARD_FIELDS> & {
  /** The SFT phase (ETS's recipe: docs/design.md A.6). */
  sft: Partial<SFTConfig>;
};

export const defaultGuardConfig: GuardConfig = { ...GUARD.defaults, sft: {} };

/** Reject guard configs that cannot run, naming the field, its range and the value. */
export function validateGuardConfig(g: GuardConfig): void {
  const { sft, ...thresholds } = g;
  GUARD.check(thresholds);
  SFT.check({ ...defaultSFTConfig, ...sft });
}

/** What the guard reads of a step: the probe after `<tool_call>\n` and the control-collapse share. */
export interface GuardReading { pImEnd: number; pJsonOpen: number; fullCollapse: number }

/**
 * The instruments of a reading that cross their threshold, each said with its value and threshold
 * ('p(<|im_end|>) 0.312 >= 0.25'); [] when the guard does not fire. The one rule the trainer and the report read.
 */
export function guardFiredOn(g: Pick<GuardConfig, 'pImEnd' | 'pJsonOpen' | 'fullCollapse'>, r: GuardReading): string[] {
  const out: string[] = [];
  if (r.pImEnd >= g.pImEnd) out.push(`p(<|im_end|>) ${r.pImEnd.toFixed(4)} >= ${g.pImEnd}`);
  if (r.pJsonOpen < g.pJsonOpen) out.push(`p({") ${r.pJsonOpen.toFixed(4)} < ${g.pJsonOpen}`);
  if (r.fullCollapse >= g.fullCollapse) out.push(`control collapse ${r.fullCollapse.toFixed(4)} >= ${g.fullCollapse}`);
  return out;
}

/** Does this step's record cross a threshold? */
export function guardTriggered(g: GuardConfig, rec: GRPOStepRecord): boolean {
  // records of runs made before the field existed: their full-collapse share is the same count (no loops then)
  return guardFiredOn(g, { pImEnd: rec.pImEnd, pJsonOpen: rec.pJsonOpen,
    fullCollapse: rec.controlCollapse ?? rec.fullCollapse }).length > 0;
}
