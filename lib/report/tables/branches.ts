/**
 * Branch runs in the report (beyond the paper). A branch continues another run from one of its branch points
 * under another method (lib/experiments/store/branch.ts): for example a vanilla GRPO run that is already losing
 * validation accuracy, continued with the per-update SFT loss. The question it answers is one the paper's
 * from-scratch runs cannot: can the signal still repair a policy that has started to collapse, or does it
 * only prevent the collapse? The parent shows what the same policy did without it.
 */
import * as path from 'path';
import { BranchResult } from '../store/results';
import { ID_COLUMNS, ReportTable, RawRow, idAverage, probeExtreme } from './base';
import { formatProbability } from '../stats/seeds';
import { differenceInterval, formatInterval, scoreInterval } from '../stats/bootstrap';
import { MetricRecord, numberField, stepOf } from '../../train/records';
import type { RunSummary } from '../../experiments/run/runner';
import { lateStates } from '../store/samples';

/** The parent's config: from its summary, else from its folder (<config>/seed-<n>). */
function parentConfig(b: BranchResult): string {
  return b.parentSummary?.config ?? path.basename(path.dirname(b.from));
}

/** Display names of a branch's parent and of the branch: "vanilla-rl-lr1e-3, seed 3" and "sync-sft-lr1e-3 (branch)". */
export function branchLabels(b: BranchResult): [string, string] {
  const seed = /seed-(\d+)$/.exec(b.from);
  return [`${parentConfig(b)}${seed ? `, seed ${seed[1]}` : ''}`, `${b.config} (branch)`];
}

/** Validation accuracy logged at global step `step` (the branch point), if any. */
function valAt(records: MetricRecord[], step: number): number | undefined {
  const r = records.find((m) => stepOf(m) === step && numberField(m, 'valAccuracy') !== undefined);
  return r ? numberField(r, 'valAccuracy') : undefined;
}

const pct = (v: number | undefined, digits = 1) => (v === undefined ? '—' : (100 * v).toFixed(digits));
const prob = (v: number | undefined) => (v === undefined ? '—' : formatProbability(v));

/**
 * A branch and its parent side by side: how each went on after the branch point (validation, the probe at its
 * worst, the collapse share of the last sampled messages) and where each ended on the ID test set, with the
 * branch's paired difference to the parent (same tasks; one seed each, so the interval is over tasks only).
 */
export function branchTable(b: BranchResult): ReportTable {
  const [parentLabel, branchLabel] = branchLabels(b);
  const columns = ['run', 'final val', 'max p(<|im_end|>) after', 'max p(<tool_call>) after', 'RL full collapse',
    'ID average [95% CI]', '− parent [95% CI]'];
  const parentOut = b.parentSummary?.eval.id?.outcomes;
  const rowOf = (label: string, config: string, s: RunSummary | null, m: MetricRecord[], dir: string,
    isBranch: boolean) => {
    const collapse = lateStates({ dir, metrics: m })?.fullCollapse ?? null;
    const out = s?.eval.id?.outcomes;
    const ci = out ? scoreInterval([out], ID_COLUMNS) : null;
    const diff = isBranch && out && parentOut ? differenceInterval([out], [parentOut], ID_COLUMNS) : null;
    const [imEnd, toolCall] = [probeExtreme(m, 'pImEnd', 'max', b.step), probeExtreme(m, 'pToolCall', 'max', b.step)];
    const values: RawRow['values'] = {
      'final val': s?.rl?.finalValAccuracy ?? null, 'max p(<|im_end|>) after': imEnd ?? null,
        'max p(<tool_call>) after': toolCall ?? null,
      'RL full collapse': collapse, 'ID average': s ? idAverage(s) ?? null : null,
      'ID average [95% CI]': ci as unknown as RawRow['values'][string],
        '− parent [95% CI]': diff as unknown as RawRow['values'][string],
    };
    const cells = [label, pct(s?.rl?.finalValAccuracy), prob(imEnd), prob(toolCall), pct(collapse ?? undefined),
      ci ? formatInterval(ci) : '—', diff ? formatInterval(diff, 1, true) : '—'];
    return { cells, raw: { config, label, seeds: s ? [s.seed] : [], values } };
  };
  const rows = [rowOf(parentLabel, parentConfig(b), b.parentSummary, b.parentMetrics, b.from, false),
    rowOf(branchLabel, b.config, b.summary, b.metrics, b.dir, true)];
  return {
    id: `table-branch-${b.name}`,
    title: `Branch: ${b.config} from ${parentLabel} at RL step ${b.step}`,
    columns,
    rows: rows.map((r) => r.cells),
    raw: rows.map((r) => r.raw),
    notes: [
      `Both runs share RL steps 1-${b.step} (validation accuracy at step ${b.step}: ` +
        `${pct(valAt(b.parentMetrics, b.step))}%); ` +
        'every column after "run" describes what came after.',
      'Percent except the probabilities. max p(...) after = the probe after <tool_call>\\n at its highest over the ' +
        'RL steps after the branch point; ' +
        'RL full collapse = share of the sampled messages of the last third of the RL steps (rollouts-sample.jsonl, ' +
          'current rule).',
      '[95% CI] = bootstrap over test tasks (one seed each); − parent = the paired difference on the same tasks, ' +
        'real where it excludes 0.',
    ],
  };
}
