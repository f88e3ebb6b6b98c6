/**
 * Plotly figure specs of the study, as pure functions: metric records in, {data, layout} out. The same
 * specs are shown inline by the notebooks (display.showPlot) and written into report.html by the CLI.
 *
 * Per-method curves average the seeds step by step: a method is one line, the mean over the seeds that
 * logged that global step. Global steps count SFT and RL steps on one axis, so the SFT phases of the
 * interleaved schemes (ETS, PRS) sit between their RL phases, where they happened.
 */
import { MetricRecord, numberField, stepOf } from '../train/records';
import { PlotlyFigure, lineFigure, LineSeries } from './plotly';
import { ResultsStore } from './results';
import { ExperimentGroup } from '../experiments/spec';
import { COLLAPSE_LR } from '../experiments/configs';
import { collapseRateLabel, collapseRateRuns } from './tables';
import { formatLr } from './stats';

/** One line of a per-method figure: a label and the metrics of each of its seeds. */
export interface MethodRuns {
  label: string;
  runs: MetricRecord[][];
}

const num = numberField;

/** `key` over global steps, for records passing `keep`, as {x, y} sorted by step. */
export function curve(records: MetricRecord[], key: string, keep: (r: MetricRecord) => boolean = () => true): { x: number[]; y: number[] } {
  const pts: [number, number][] = [];
  for (const r of records) {
    const x = stepOf(r);
    const y = num(r, key);
    if (keep(r) && x !== undefined && y !== undefined) pts.push([x, y]);
  }
  pts.sort((a, b) => a[0] - b[0]);
  return { x: pts.map((p) => p[0]), y: pts.map((p) => p[1]) };
}

/** The mean over runs of `key` at each step that any run logged (over the runs that logged it). */
export function meanCurve(runs: MetricRecord[][], key: string, keep?: (r: MetricRecord) => boolean): { x: number[]; y: number[] } {
  const sums = new Map<number, { s: number; n: number }>();
  for (const run of runs) {
    const c = curve(run, key, keep);
    c.x.forEach((x, i) => {
      const a = sums.get(x) ?? { s: 0, n: 0 };
      a.s += c.y[i];
      a.n += 1;
      sums.set(x, a);
    });
  }
  const x = Array.from(sums.keys()).sort((a, b) => a - b);
  return { x, y: x.map((k) => (sums.get(k) as { s: number }).s / (sums.get(k) as { n: number }).n) };
}

/** Accuracies, rewards, probabilities and shares are >= 0: keep plotly from padding the axis below 0. */
function nonNegative(fig: PlotlyFigure): PlotlyFigure {
  fig.layout.yaxis = { ...(fig.layout.yaxis as Record<string, unknown>), rangemode: 'nonnegative' };
  return fig;
}

function methodFigure(methods: MethodRuns[], key: string, keep: ((r: MetricRecord) => boolean) | undefined,
  title: string, yTitle: string): PlotlyFigure {
  const series: LineSeries[] = [];
  for (const m of methods) {
    const c = meanCurve(m.runs, key, keep);
    if (c.x.length) series.push({ name: m.label, x: c.x, y: c.y });
  }
  const fig = lineFigure({ title, x: [], series, xTitle: 'global step (SFT + RL)', yTitle });
  // validation points are sparse (every few steps): markers make single points visible
  for (const d of fig.data) d.mode = 'lines+markers';
  return nonNegative(fig);
}

/** Greedy validation accuracy over global steps, one line per method (SFT-epoch and RL validations). */
export function valAccuracyFigure(methods: MethodRuns[], title = 'Validation accuracy (mean over seeds)'): PlotlyFigure {
  return methodFigure(methods, 'valAccuracy', (r) => r.phase === 'grpo' || r.phase === 'sft-val', title, 'accuracy');
}

/** Mean group reward of the RL rollouts per step, one line per method (methods without RL have no line). */
export function rewardFigure(methods: MethodRuns[], title = 'RL reward per step (mean over seeds)'): PlotlyFigure {
  return methodFigure(methods, 'reward', (r) => r.phase === 'grpo', title, 'reward');
}

function runFigure(records: MetricRecord[], keys: [string, string][], title: string, yTitle: string, signed = false): PlotlyFigure {
  const rl = (r: MetricRecord) => r.phase === 'grpo';
  const series = keys.map(([k, name]) => ({ name, ...curve(records, k, rl) })).filter((s) => s.x.length);
  const fig = lineFigure({ title, x: [], series, xTitle: 'global step', yTitle });
  return signed ? fig : nonNegative(fig);
}

/** Probabilities span 1e-6 .. 1 (the paper's spike starts near 1e-5): a log axis, so small values are visible. */
const LOG_PROBABILITY = { type: 'log', range: [-6, 0.05], exponentformat: 'power' };

/**
 * The A.5 probe: next-token probabilities right after `<|im_start|>assistant\n<tool_call>\n`, and the top
 * other token's, on a log axis.
 */
export function probeFigure(records: MetricRecord[], title = 'Probe after <tool_call>\\n'): PlotlyFigure {
  const fig = runFigure(records, [['pJsonOpen', 'p({") healthy'], ['pImEnd', 'p(<|im_end|>) collapse'], ['pToolCall', 'p(<tool_call>) repeat'],
    ['pTopOther', 'p(most likely other token)']], title, 'probability (log)');
  fig.layout.yaxis = { ...(fig.layout.yaxis as Record<string, unknown>), ...LOG_PROBABILITY };
  return fig;
}

/**
 * The collapse on one chart: greedy validation accuracy (markers) with the
 * probe's probabilities and the healthy-call share of sampled messages, over the RL steps of one run: does
 * a control token's probability move before the accuracy falls?
 */
export function collapseFigure(records: MetricRecord[], title = 'Validation accuracy and the probe'): PlotlyFigure {
  const fig = runFigure(records, [['valAccuracy', 'validation accuracy'], ['pJsonOpen', 'p({")'], ['pImEnd', 'p(<|im_end|>)'],
    ['pToolCall', 'p(<tool_call>)'], ['pTopOther', 'p(most likely other token)'], ['healthyCall', 'healthy-call share (sampled)']],
  title, 'accuracy / share');
  // the probe's probabilities on a second, logarithmic axis (right); accuracy and share stay linear (left)
  for (const d of fig.data) {
    if (d.name === 'validation accuracy') d.mode = 'lines+markers';
    if (String(d.name).startsWith('p(')) d.yaxis = 'y2';
  }
  fig.layout.yaxis2 = { title: { text: 'probability (log)' }, overlaying: 'y', side: 'right', ...LOG_PROBABILITY };
  fig.layout.margin = { l: 60, r: 70, t: 50, b: 50 };
  return fig;
}

/** Structural-state shares of the sampled assistant messages per RL step. */
export function statesFigure(records: MetricRecord[], title = 'Structural states of sampled messages'): PlotlyFigure {
  return runFigure(records, [['healthyCall', 'healthy call'], ['healthyResponse', 'healthy response'], ['pollution', 'pollution'],
    ['fullCollapse', 'full collapse']], title, 'share of messages');
}

/** The A.5 gradient split on the three control-token logits: push on the sampled token vs on the others. */
export function gradSplitFigure(records: MetricRecord[], title = 'Policy-gradient push on control-token logits'): PlotlyFigure {
  return runFigure(records, [['selfJsonOpen', '{" self'], ['otherJsonOpen', '{" other'], ['selfImEnd', '<|im_end|> self'],
    ['otherImEnd', '<|im_end|> other'], ['selfToolCall', '<tool_call> self'], ['otherToolCall', '<tool_call> other']],
  title, 'summed logit gradient', true);
}

/** The per-method input of the figures above, from the results store (registry order). */
export function methodRuns(store: ResultsStore, groups: ExperimentGroup[] = ['method']): MethodRuns[] {
  return store.experiments.filter((e) => groups.includes(e.spec.group))
    .map((e) => ({ label: e.spec.label, runs: e.seeds.map((s) => s.metrics) }));
}

/** Validation accuracy of vanilla RL and every signal at the collapse rate (mean over seeds); null with fewer than two runs. */
export function collapseRateFigure(store: ResultsStore): PlotlyFigure | null {
  const runs = collapseRateRuns(store);
  if (runs.length < 2) return null;
  return valAccuracyFigure(runs.map((e) => ({ label: collapseRateLabel(e), runs: e.seeds.map((s) => s.metrics) })),
    `Validation accuracy at the collapse rate ${formatLr(COLLAPSE_LR)} (mean over seeds)`);
}

/** Does a run have RL step records (so its probe / state / gradient figures have anything to draw)? */
export function hasRL(records: MetricRecord[]): boolean {
  return records.some((r) => r.phase === 'grpo');
}

/**
 * A branch next to its parent (toolrl run --branch): greedy validation accuracy (markers) and the sampled RL
 * reward of both over the global steps, the branch point marked. Both runs share every step up to it. The
 * reward rather than a probe: a policy can collapse with the probe after `<tool_call>\n` flat (through polluted
 * or empty messages), while the reward shows every collapse; the branch table (branches.ts) has the probe.
 */
export function branchFigure(parent: MetricRecord[], branch: MetricRecord[], step: number, labels: [string, string],
  title = 'A branch and its parent'): PlotlyFigure {
  const keepVal = (r: MetricRecord) => r.phase === 'grpo' || r.phase === 'sft-val';
  const rl = (r: MetricRecord) => r.phase === 'grpo';
  const after = (r: MetricRecord) => (stepOf(r) ?? 0) >= step;
  // One color per run (parent blue, branch orange): validation as markers on a line, the sampled reward thin and dotted.
  const runs = [
    { label: labels[0], records: parent, keep: (_: MetricRecord) => true, color: '#1f77b4' },
    { label: labels[1], records: branch, keep: after, color: '#ff7f0e' },
  ];
  const traces = runs.flatMap(({ label, records, keep, color }) => [
    { series: { name: `${label}: validation accuracy`, ...curve(records, 'valAccuracy', (r) => keepVal(r) && keep(r)) },
      style: { mode: 'lines+markers', line: { color }, marker: { color } } },
    { series: { name: `${label}: sampled reward`, ...curve(records, 'reward', (r) => rl(r) && keep(r)) },
      style: { line: { color, width: 1, dash: 'dot' } } },
  ]).filter((t) => t.series.x.length);
  const fig = lineFigure({ title, x: [], series: traces.map((t) => t.series), xTitle: 'global step', yTitle: 'accuracy / reward' });
  fig.data.forEach((d, i) => Object.assign(d, traces[i].style));
  fig.layout.shapes = [{ type: 'line', x0: step, x1: step, yref: 'paper', y0: 0, y1: 1, line: { dash: 'dot', width: 1, color: '#888' } }];
  return fig;
}
