/**
 * Does the control-token probe move before the reward falls? (The paper's Sec. 3 claim: the probability of
 * `<|im_end|>` / `<tool_call>` right after `<tool_call>\n` rises from ~1e-5 *before* success collapses.)
 *
 * One row per RL run (every seed of every config with RL steps): the global step at which each probe first
 * crosses a fixed level, next to the step at which the sampled reward halved and the run's collapse step. A
 * precursor must do two things: come before the reward falls in the runs that collapse, and *not* come in the
 * runs that do not. Both are visible here because the runs that held (the main rate, OPS, the per-update SFT
 * loss) sit in the same table as the runs that collapsed.
 */
import { ResultsStore } from '../store/results';
import { ReportTable, RawRow, baseValAccuracy, collapseCell, collapseVsStart, probeExtreme } from './base';
import { formatProbability } from '../stats/seeds';
import { GRPOMetric, grpoRecords, numberField, stepOf } from '../../train/records';

/** The probe levels: 1e-2 is about 100 times where the base checkpoint starts (1e-4 to 7e-4 at RL step 1). */
export const PROBE_LEVEL = 1e-2;
/** p({") below this means a tenth of the mass after `<tool_call>\n` has left the healthy token. */
export const JSON_OPEN_LEVEL = 0.9;
/**
 * Sampled reward: the start level is the mean of the first `START_STEPS` RL steps, compared with a trailing mean of
 * `TRAIL` steps.
 */
const START_STEPS = 5;
const TRAIL = 3;

/** The global step of the first RL record passing `test`, or null. */
export function firstStep(g: GRPOMetric[], test: (r: GRPOMetric) => boolean): number | null {
  const r = g.find(test);
  return r ? stepOf(r) ?? null : null;
}

/** The start level of the sampled reward: its mean over the first START_STEPS RL steps (or as many as there are). */
function startReward(g: GRPOMetric[]): number {
  const first = g.slice(0, START_STEPS);
  return first.reduce((a, r) => a + r.reward, 0) / first.length;
}

/** The first RL step (after the start window) whose trailing mean reward is below half the start level, or null. */
export function rewardHalvedAt(g: GRPOMetric[]): number | null {
  if (g.length <= START_STEPS) return null;
  const start = startReward(g);
  for (let i = START_STEPS; i < g.length; i++) {
    const window = g.slice(i - TRAIL + 1, i + 1);
    if (window.reduce((a, r) => a + r.reward, 0) / window.length < start / 2) return stepOf(g[i]) ?? null;
  }
  return null;
}

const stepCell = (s: number | null) => (s === null ? 'never' : String(s));

/** The precursor table over every RL run of the store, in registry order, one row per seed. */
export function precursorTable(store: ResultsStore): ReportTable {
  const start = baseValAccuracy(store);
  const columns = ['run', 'reward at start', 'reward halved at', `p(<tool_call>) ≥ ${PROBE_LEVEL} at`,
    `p(<|im_end|>) ≥ ${PROBE_LEVEL} at`,
    `p({") < ${JSON_OPEN_LEVEL} at`, 'max p(<tool_call>)', 'max p(<|im_end|>)', 'collapse step'];
  const rows: string[][] = [];
  const raw: RawRow[] = [];
  for (const e of store.experiments) for (const s of e.seeds) {
    const g = grpoRecords(s.metrics);
    if (!g.length) continue; // no RL steps: nothing to precede
    const atStart = startReward(g);
    const steps = [
      rewardHalvedAt(g),
      firstStep(g, (r) => (numberField(r, 'pToolCall') ?? 0) >= PROBE_LEVEL),
      firstStep(g, (r) => (numberField(r, 'pImEnd') ?? 0) >= PROBE_LEVEL),
      firstStep(g, (r) => (numberField(r, 'pJsonOpen') ?? 1) < JSON_OPEN_LEVEL),
    ];
    const maxima = ['pToolCall', 'pImEnd'].map((k) => probeExtreme(g, k, 'max') ?? 0);
    const collapse = collapseVsStart(s, e, start);
    const label = `${e.spec.name}, seed ${s.seed}`;
    const values: RawRow['values'] = { [columns[1]]: atStart, [columns[8]]: collapse };
    steps.forEach((v, i) => (values[columns[2 + i]] = v));
    maxima.forEach((v, i) => (values[columns[6 + i]] = v));
    raw.push({ config: e.spec.name, label, seeds: [s.seed], values });
    rows.push([label, atStart.toFixed(2), ...steps.map(stepCell), ...maxima.map(formatProbability),
      collapseCell([collapse])]);
  }
  return {
    id: 'table-precursor', title: 'Does the probe move before the reward falls? (every RL run)', columns, rows, raw,
    notes: rows.length ? [
      'Steps are global steps (SFT phases included). reward at start = mean sampled reward of RL steps 1-5; reward ' +
        'halved at = the first later ' +
        `step whose ${TRAIL}-step trailing mean is below half of it.`,
      `p(...) at = the first RL step at which the probe after <tool_call>\\n crosses the level (${PROBE_LEVEL} is ` +
        `about 100 times the base checkpoint's value); ` +
        'max = its highest over the run.',
      'collapse step as in the LR table (validation below a quarter of the higher of the peak and the base\'s); ' +
        'none = did not collapse.',
    ] : ['No RL runs in this store.'],
  };
}
