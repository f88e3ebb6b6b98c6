/**
 * Reading a run's metrics into the figures the study reports: peak and final validation accuracy, the
 * collapse step, and the final structural-state shares.
 */
import { StructuralState, STRUCTURAL_STATES } from '../../format/types';
import { GRPOMetric, numberField } from '../../train/records';

export interface RLSummary {
  steps: number;
  peakValAccuracy: number;
  peakStep: number | null;
  finalValAccuracy: number;
  /**
   * First validated step from which validation accuracy stays below a quarter of its reference until the end:
   * the higher of its validated peak and `startValAccuracy` when given (null when that never happens, or the
   * reference is 0).
   */
  collapseStep: number | null;
  /** State shares of the sampled messages, averaged over the last `tail` steps. */
  finalStates: Record<StructuralState, number>;
  /** Probe probabilities averaged over the last `tail` steps; `topOther`: the last step's most likely other token. */
  finalProbe: { pJsonOpen: number; pImEnd: number; pToolCall: number; pTopOther?: number; topOther?: string | null };
  finalReward: number;
  /**
   * RL steps with any policy-gradient signal: at least one group whose rewards differ (zeroVarianceGroups < 1).
   * null for runs logged before the field existed.
   */
  stepsWithSignal: number | null;
}

/**
 * `records`: the RL step records (phase 'grpo') in order. `startValAccuracy`: the starting policy's accuracy on
 * the same validation tasks, when known; without it a run that is already down at its first validation (a fast
 * collapse) has a peak near 0 and no collapse step.
 */
export function summarizeRL(records: GRPOMetric[], tail = 5, startValAccuracy: number | null = null): RLSummary {
  const val = records.filter((r) => r.valAccuracy !== undefined).map((r) =>
    ({ step: r.globalStep ?? r.step, acc: r.valAccuracy! }));
  let peak = 0;
  let peakStep: number | null = null;
  for (const v of val) if (v.acc > peak) { peak = v.acc; peakStep = v.step; }
  let collapseStep: number | null = null;
  const reference = Math.max(peak, startValAccuracy ?? 0);
  if (reference > 0) {
    for (let i = val.length - 1; i >= 0; i--) {
      if (val[i].acc < reference / 4) collapseStep = val[i].step;
      else break;
    }
  }
  const last = records.slice(-tail);
  const avg = (k: keyof GRPOMetric) => (last.length ? last.reduce((a, r) => a + (numberField(r, k) ?? 0),
    0) / last.length : 0);
  const finalStates = {} as Record<StructuralState, number>;
  for (const s of STRUCTURAL_STATES) finalStates[s] = avg(s);
  return {
    steps: records.length,
    peakValAccuracy: peak,
    peakStep,
    finalValAccuracy: val.length ? val[val.length - 1].acc : 0,
    collapseStep,
    finalStates,
    finalProbe: { pJsonOpen: avg('pJsonOpen'), pImEnd: avg('pImEnd'), pToolCall: avg('pToolCall'),
      pTopOther: avg('pTopOther'),
      topOther: last.length ? last[last.length - 1].probeTopOther ?? null : null },
    finalReward: avg('reward'),
    stepsWithSignal: records.some((r) => r.zeroVarianceGroups !== undefined)
      ? records.filter((r) => (r.zeroVarianceGroups ?? 1) < 1).length : null,
  };
}
