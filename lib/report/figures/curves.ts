/**
 * Plotly figure specs of the study, as pure functions: metric records in, {data, layout} out. The same
 * specs are shown inline by the notebooks (display.showPlot) and written into report.html by the CLI.
 *
 * How the curves read (the same in every figure):
 *   - per-method curves are the mean over seeds, step by step, with a band from the lowest to the highest seed
 *     (`{ seeds: true }` draws every seed as its own thin line instead);
 *   - accuracies, rewards and message shares are in percent, as in the tables; the probe's probabilities stay
 *     probabilities, on a log axis (they span 1e-6 to 1);
 *   - method comparisons count RL steps (1, 2, ... over all RL stages), so seeds and methods line up even where an
 *     interleaved scheme's SFT phases differ in length; methods without RL appear as a dotted level (their last
 *     validation), never as a series that stretches the axis. Single-run figures use the global step (SFT + RL),
 *     where SFT phases sit where they happened (notebook.ts shadeSftPhases);
 *   - colours mean the same in every chart (palette.ts: each token, state, rate and method family has its own); a
 *     band shares its line's colour.
 */
import { MetricRecord, grpoRecords, numberField, stepOf } from '../../train/records';
import { PlotlyFigure, lineFigure, LineSeries, legendBeside, withAlpha } from './plotly';
import { SeriesStyle, configStyles, fieldColour, lrStyles, withFallbacks } from './palette';
import { ResultsStore } from '../store/results';
import { ExperimentGroup } from '../../experiments/registry/spec';
import { COLLAPSE_LR } from '../../experiments/registry/configs';
import { collapseRateLabel, collapseRateRuns } from '../tables/collapse';
import { sweepExperiments, sweepRowName } from '../tables/base';
import { formatLr } from '../stats/seeds';

/** One line of a per-method figure: a label and the metrics of each of its seeds. */
export interface MethodRuns {
  label: string;
  runs: MetricRecord[][];
  /** The seed of each run (for `{ seeds: true }` legends); 1, 2, ... when absent. */
  seeds?: number[];
  /** The config's name: its method family picks the colour (palette.ts configStyles). */
  config?: string;
  /** The learning rate of an lr sweep's line: where every line has one, the rate picks the colour. */
  lr?: number;
}

/** The colour and dash of each method of a figure, by meaning (palette.ts). */
export function methodStyles(methods: readonly MethodRuns[]): SeriesStyle[] {
  if (methods.length && methods.every((m) => m.lr !== undefined)) return lrStyles(methods.map((m) => m.lr as number));
  return configStyles(methods.map((m) => m.config ?? m.label));
}

/** How a per-method figure draws its methods. */
export interface CurveOptions {
  /** Every seed as a thin line next to the mean (default false: the mean and a lowest-to-highest-seed band). */
  seeds?: boolean;
  /** 'rl' (default): RL steps counted over all stages; 'global': global steps, SFT phases included. */
  axis?: 'rl' | 'global';
  /** Horizontal dotted levels (fractions), e.g. the base checkpoint's validation accuracy. */
  references?: { label: string; value: number }[];
}

const num = numberField;
const PERCENT = 100;

/** `key` over global steps, for records passing `keep`, as {x, y} sorted by step. */
export function curve(records: MetricRecord[], key: string, keep: (r: MetricRecord) => boolean = () =>
  true): { x: number[]; y: number[] } {
  const pts: [number, number][] = [];
  for (const r of records) {
    const x = stepOf(r);
    const y = num(r, key);
    if (keep(r) && x !== undefined && y !== undefined) pts.push([x, y]);
  }
  pts.sort((a, b) => a[0] - b[0]);
  return { x: pts.map((p) => p[0]), y: pts.map((p) => p[1]) };
}

/** `key` over RL steps (the n-th RL record of the run is step n, whatever its stage), for RL records passing `keep`. */
export function rlCurve(records: MetricRecord[], key: string,
  keep: (r: MetricRecord) => boolean = () => true): { x: number[]; y: number[] } {
  const x: number[] = [];
  const y: number[] = [];
  grpoRecords(records).forEach((r, i) => {
    const v = num(r, key);
    if (v !== undefined && keep(r)) {
      x.push(i + 1);
      y.push(v);
    }
  });
  return { x, y };
}

/** Mean, lowest and highest over runs at every step any run logged (over the runs that logged it), and how many did. */
export interface BandCurve { x: number[]; mean: number[]; lo: number[]; hi: number[]; n: number[] }

export function bandCurve(runs: MetricRecord[][], key: string, keep?: (r: MetricRecord) => boolean,
  axis: 'rl' | 'global' = 'global'): BandCurve {
  const at = new Map<number, number[]>();
  for (const run of runs) {
    const c = axis === 'rl' ? rlCurve(run, key, keep) : curve(run, key, keep);
    c.x.forEach((x, i) => at.set(x, [...(at.get(x) ?? []), c.y[i]]));
  }
  const x = Array.from(at.keys()).sort((a, b) => a - b);
  const vals = x.map((k) => at.get(k) as number[]);
  return { x, mean: vals.map((v) => v.reduce((a, b) => a + b, 0) / v.length), lo: vals.map((v) => Math.min(...v)),
    hi: vals.map((v) => Math.max(...v)), n: vals.map((v) => v.length) };
}

/** The mean over runs of `key` at each step that any run logged (over the runs that logged it). */
export function meanCurve(runs: MetricRecord[][], key: string,
  keep?: (r: MetricRecord) => boolean): { x: number[]; y: number[] } {
  const b = bandCurve(runs, key, keep);
  return { x: b.x, y: b.mean };
}

/** Accuracies, rewards, probabilities and shares are >= 0: keep plotly from padding the axis below 0, and show 0. */
function fromZero(fig: PlotlyFigure): PlotlyFigure {
  fig.layout.yaxis = { ...(fig.layout.yaxis as Record<string, unknown>), rangemode: 'tozero' };
  return fig;
}

const scale = (ys: number[], k: number) => ys.map((v) => v * k);

/**
 * One method's traces in its palette colour: band (hi, then lo filled to it) and mean, or the seeds and the mean.
 * Every trace of a method shares a legend group, so a click on its legend entry hides all of them.
 */
function methodTraces(m: MethodRuns, style: SeriesStyle, key: string, keep: ((r: MetricRecord) => boolean) | undefined,
  opts: CurveOptions, k: number, markers: boolean): Record<string, unknown>[] {
  const axis = opts.axis ?? 'rl';
  const { color, dash } = style;
  const b = bandCurve(m.runs, key, keep, axis);
  if (!b.x.length) return [];
  const group = { legendgroup: m.label, showlegend: false, hoverinfo: 'skip' };
  const out: Record<string, unknown>[] = [];
  if (opts.seeds) {
    m.runs.forEach((run, s) => {
      const c = axis === 'rl' ? rlCurve(run, key, keep) : curve(run, key, keep);
      if (c.x.length) out.push({ type: 'scatter', mode: 'lines', name: `${m.label}, seed ${m.seeds?.[s] ?? s + 1}`,
        x: c.x, y: scale(c.y, k), ...group,
        line: { color, width: 1, dash: 'dot' }, opacity: 0.7 });
    });
  } else if (m.runs.length > 1) {
    out.push({ type: 'scatter', mode: 'lines', name: `${m.label} highest seed`, x: b.x, y: scale(b.hi, k), ...group,
      line: { width: 0, color } });
    out.push({ type: 'scatter', mode: 'lines', name: `${m.label} lowest seed`, x: b.x, y: scale(b.lo, k), ...group,
      line: { width: 0, color },
      fill: 'tonexty', fillcolor: withAlpha(color, 0.18) });
  }
  const seeds = m.runs.length === 1 ? '1 seed' : `mean of ${m.runs.length} seeds`;
  out.push({ type: 'scatter', mode: markers ? 'lines+markers' : 'lines', name: `${m.label} (${seeds})`, x: b.x,
    y: scale(b.mean, k),
    legendgroup: m.label, line: { color, dash, width: 2 }, marker: { color, size: 5 } });
  return out;
}

/** Dotted horizontal levels across the figure, each in a colour no method uses, labelled in the legend. */
function addLevels(fig: PlotlyFigure, levels: { label: string; value: number }[], methods: SeriesStyle[],
  k: number): void {
  const xs = fig.data.flatMap((d) => (d.x as number[]) ?? []);
  const [x0, x1] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];
  const styles = withFallbacks([...methods.map((m) => m.color), ...levels.map(() => undefined)]).slice(methods.length);
  levels.forEach((l, j) => {
    const { color } = styles[j];
    fig.data.push({ type: 'scatter', mode: 'lines', name: l.label, x: [x0, x1], y: [l.value * k, l.value * k],
      line: { color, dash: 'dot', width: 1.5 }, hoverinfo: 'name+y' });
  });
}

/** The last validation of a run without RL steps (its SFT epochs' validation), or undefined. */
function lastSftValidation(runs: MetricRecord[][]): number | undefined {
  const last = runs.map((run) => run.filter((r) => r.phase === 'sft-val').map((r) =>
    num(r, 'valAccuracy')).filter((v): v is number => v !== undefined).pop())
    .filter((v): v is number => v !== undefined);
  return last.length ? last.reduce((a, b) => a + b, 0) / last.length : undefined;
}

function methodFigure(methods: MethodRuns[], key: string, keep: ((r: MetricRecord) => boolean) | undefined,
  title: string, yTitle: string, opts: CurveOptions, markers: boolean, sftLevels: boolean): PlotlyFigure {
  const axis = opts.axis ?? 'rl';
  const how = opts.seeds ? 'thin dotted lines: single seeds' : 'band: lowest to highest seed';
  const fig = lineFigure({ title: `${title}<br><sub>${how}</sub>`,
    x: [], series: [],
      xTitle: axis === 'rl' ? 'RL step (all RL stages, SFT phases not counted)' : 'global step (SFT + RL)', yTitle });
  fig.layout.margin = { l: 60, r: 20, t: 70, b: 50 };
  const levels = [...(opts.references ?? [])];
  const styles = methodStyles(methods);
  methods.forEach((m, i) => {
    const traces = methodTraces(m, styles[i], key, keep, opts, PERCENT, markers);
    if (traces.length) {
      fig.data.push(...traces);
    } else if (sftLevels && axis === 'rl') {
      const v = lastSftValidation(m.runs);
      if (v !== undefined) levels.push({ label: `${m.label} (no RL: its last SFT validation)`, value: v });
    }
  });
  addLevels(fig, levels, styles, PERCENT);
  return fromZero(fig);
}

/** Greedy validation accuracy (%), one mean line and band per method (RL validations; SFT-only methods as levels). */
export function valAccuracyFigure(methods: MethodRuns[], title = 'Validation accuracy',
  opts: CurveOptions = {}): PlotlyFigure {
  const keep = (r: MetricRecord) => r.phase === 'grpo' || ((opts.axis ?? 'rl') === 'global' && r.phase === 'sft-val');
  return methodFigure(methods, 'valAccuracy', keep, title, 'validation accuracy (%)', opts, true, true);
}

/**
 * Mean sampled reward (%) of the RL rollouts per step, one mean line and band per method (methods without RL have
 * none).
 */
export function rewardFigure(methods: MethodRuns[], title = 'Sampled reward of the RL rollouts',
  opts: CurveOptions = {}): PlotlyFigure {
  return methodFigure(methods, 'reward', (r) => r.phase === 'grpo', title, 'sampled reward (% of rollouts passing)',
    opts, false, false);
}

/** Any per-step RL field that is a share (0..1), in percent, per method: e.g. 'zeroRewardGroups', 'fullCollapse'. */
export function shareFigure(methods: MethodRuns[], key: string, title: string, yTitle: string,
  opts: CurveOptions = {}): PlotlyFigure {
  return methodFigure(methods, key, (r) => r.phase === 'grpo', title, yTitle, opts, false, false);
}

/**
 * One run's RL fields on global steps, each in its field's colour (palette.ts fieldColour); `k` scales the values
 * (100 for shares). A gradient split's `other*` push is drawn dashed beside its `self*` push.
 */
function runFigure(records: MetricRecord[], keys: [string, string][], title: string, yTitle: string, k = 1,
  signed = false): PlotlyFigure {
  const rl = (r: MetricRecord) => r.phase === 'grpo';
  const series: LineSeries[] = keys.map(([key, name]) => {
    const c = curve(records, key, rl);
    const dash = key.startsWith('other') ? 'dash' : undefined;
    return { name, x: c.x, y: scale(c.y, k), color: fieldColour(key), dash };
  }).filter((s) => (s.x as number[]).length);
  const fig = lineFigure({ title, x: [], series, xTitle: 'global step', yTitle });
  return signed ? fig : fromZero(fig);
}

/** Probabilities span 1e-6 .. 1 (the paper's spike starts near 1e-5): a log axis, so small values are visible. */
const LOG_PROBABILITY = { type: 'log', range: [-6, 0.05], exponentformat: 'power' };

/**
 * The A.5 probe: next-token probabilities right after `<|im_start|>assistant\n<tool_call>\n`, and the top
 * other token's, on a log axis.
 */
export function probeFigure(records: MetricRecord[], title = 'Probe after <tool_call>\\n'): PlotlyFigure {
  const fig = runFigure(records, [['pJsonOpen', 'p({") healthy'], ['pImEnd', 'p(<|im_end|>) collapse'],
    ['pToolCall', 'p(<tool_call>) repeat'],
    ['pTopOther', 'p(most likely other token)']], title, 'probability (log)');
  fig.layout.yaxis = { ...(fig.layout.yaxis as Record<string, unknown>), ...LOG_PROBABILITY };
  return fig;
}

/**
 * The collapse on one chart: greedy validation accuracy (markers), the sampled reward and the healthy-call share of
 * sampled messages (percent, left), with the probe's probabilities (log, right), over the global steps of one run:
 * does a control token's probability move before the accuracy falls? (timeline.ts marks the order of events.)
 */
export function collapseFigure(records: MetricRecord[], title = 'Validation accuracy and the probe'): PlotlyFigure {
  const fig = runFigure(records, [['valAccuracy', 'validation accuracy (%)'], ['reward', 'sampled reward (%)'],
    ['healthyCall', 'healthy-call share, sampled (%)'], ['pJsonOpen', 'p({")'], ['pImEnd', 'p(<|im_end|>)'],
      ['pToolCall', 'p(<tool_call>)'],
    ['pTopOther', 'p(most likely other token)']], title, 'percent', PERCENT);
  // the probe's probabilities on a second, logarithmic axis (right), back on their own scale; the rest linear, in
  // percent (left)
  for (const d of fig.data) {
    if (d.name === 'validation accuracy (%)') d.mode = 'lines+markers';
    if (d.name === 'sampled reward (%)') d.line = { ...(d.line as object), width: 1 };
    if (String(d.name).startsWith('p(')) {
      d.yaxis = 'y2';
      d.y = (d.y as number[]).map((v) => v / PERCENT);
    }
  }
  fig.layout.yaxis2 = { title: { text: 'probability (log)' }, overlaying: 'y', side: 'right', ...LOG_PROBABILITY };
  fig.layout.margin = { l: 60, r: 70, t: 50, b: 50 };
  return legendBeside(fig, true);
}

/** Structural-state shares (%) of the sampled assistant messages per RL step. */
export function statesFigure(records: MetricRecord[], title = 'Structural states of sampled messages'): PlotlyFigure {
  return runFigure(records, [['healthyCall', 'healthy call'], ['healthyResponse', 'healthy response'],
    ['pollution', 'pollution'],
    ['fullCollapse', 'full collapse']], title, 'share of messages (%)', PERCENT);
}

/** The A.5 gradient split on the three control-token logits: push on the sampled token vs on the others. */
export function gradSplitFigure(records: MetricRecord[], title =
  'Policy-gradient push on control-token logits'): PlotlyFigure {
  return runFigure(records, [['selfJsonOpen', '{" self'], ['otherJsonOpen', '{" other'],
    ['selfImEnd', '<|im_end|> self'],
    ['otherImEnd', '<|im_end|> other'], ['selfToolCall', '<tool_call> self'], ['otherToolCall', '<tool_call> other']],
  title, 'summed logit gradient', 1, true);
}

/** The per-method input of the figures above, from the results store (registry order). */
export function methodRuns(store: ResultsStore, groups: ExperimentGroup[] = ['method']): MethodRuns[] {
  return store.experiments.filter((e) => groups.includes(e.spec.group))
    .map((e) => ({ label: e.spec.label, runs: e.seeds.map((s) => s.metrics), seeds: e.seeds.map((s) => s.seed),
      config: e.spec.name }));
}

/**
 * Small multiples: the methods in panels of at most `perPanel` lines each (a chart of 11-14 methods is a tangle
 * whose legend does not fit), the reference (vanilla GRPO at the main rate when present, else the first method)
 * repeated in every panel so each compares against it. Colours follow the method, so a method looks the same in
 * every panel.
 */
export function methodPanels(methods: readonly MethodRuns[], perPanel = 6): MethodRuns[][] {
  if (methods.length <= perPanel) return [methods.slice()];
  const ref = methods.find((m) => m.config === 'vanilla-rl') ?? methods[0];
  const rest = methods.filter((m) => m !== ref);
  const n = Math.ceil(rest.length / (perPanel - 1));
  // as even as possible: 13 others in panels of 5 would leave a last panel of 3; 5, 4, 4 reads better
  const small = Math.floor(rest.length / n);
  const big = rest.length % n;
  const start = (i: number) => i * small + Math.min(i, big);
  return Array.from({ length: n }, (_, i) => [ref, ...rest.slice(start(i), start(i + 1))]);
}

/** The lr sweep's lines, lowest rate first, each labelled and coloured by its rate. */
export function sweepRuns(store: ResultsStore): MethodRuns[] {
  return sweepExperiments(store).map((e) => ({ label: `lr ${sweepRowName(e)}`, runs: e.seeds.map((s) => s.metrics),
    seeds: e.seeds.map((s) => s.seed), config: e.spec.name, lr: e.spec.sweepLr }));
}

/** `methodRuns` for the named configs, in the order given (configs missing from the store are left out). */
export function configRuns(store: ResultsStore, configs: string[],
  label: (name: string, fallback: string) => string = (_n, l) => l): MethodRuns[] {
  return configs.map((c) =>
    store.experiments.find((e) => e.spec.name === c)).filter((e): e is ResultsStore['experiments'][number] =>
    e !== undefined)
    .map((e) => ({ label: label(e.spec.name, e.spec.label), runs: e.seeds.map((s) => s.metrics),
    seeds: e.seeds.map((s) => s.seed), config: e.spec.name }));
}

/**
 * Validation accuracy of vanilla RL and every signal at the collapse rate (mean and band over seeds); null with fewer
 * than two runs.
 */
export function collapseRateFigure(store: ResultsStore, opts: CurveOptions = {}): PlotlyFigure | null {
  const runs = collapseRateRuns(store);
  if (runs.length < 2) return null;
  return valAccuracyFigure(runs.map((e) => ({ label: collapseRateLabel(e), runs: e.seeds.map((s) => s.metrics),
    seeds: e.seeds.map((s) => s.seed), config: e.spec.name })),
    `Validation accuracy at the collapse rate ${formatLr(COLLAPSE_LR)}`, opts);
}

/** Does a run have RL step records (so its probe / state / gradient figures have anything to draw)? */
export function hasRL(records: MetricRecord[]): boolean {
  return records.some((r) => r.phase === 'grpo');
}

/**
 * A branch next to its parent (toolrl run --branch): greedy validation accuracy (markers) and the sampled RL
 * reward of both over the global steps, in percent, the branch point marked. Both runs share every step up to it.
 * The reward rather than a probe: a policy can collapse with the probe after `<tool_call>\n` flat (through polluted
 * or empty messages), while the reward shows every collapse; the branch table (branches.ts) has the probe.
 */
export function branchFigure(parent: MetricRecord[], branch: MetricRecord[], step: number, labels: [string, string],
  title = 'A branch and its parent'): PlotlyFigure {
  const keepVal = (r: MetricRecord) => r.phase === 'grpo' || r.phase === 'sft-val';
  const rl = (r: MetricRecord) => r.phase === 'grpo';
  const after = (r: MetricRecord) => (stepOf(r) ?? 0) >= step;
  // One colour per run (parent, branch): validation as markers on a line, the sampled reward thin and dotted.
  const [first, second] = withFallbacks([undefined, undefined]);
  const runs = [
    { label: labels[0], records: parent, keep: (_: MetricRecord) => true, color: first.color },
    { label: labels[1], records: branch, keep: after, color: second.color },
  ];
  const traces = runs.flatMap(({ label, records, keep, color }) => [
    { series: { name: `${label}: validation accuracy`, ...curve(records, 'valAccuracy', (r) => keepVal(r) && keep(r)) },
      style: { mode: 'lines+markers', line: { color }, marker: { color } } },
    { series: { name: `${label}: sampled reward`, ...curve(records, 'reward', (r) => rl(r) && keep(r)) },
      style: { line: { color, width: 1, dash: 'dot' } } },
  ]).filter((t) => t.series.x.length);
  const fig = lineFigure({ title, x: [], series: traces.map((t) => ({ ...t.series, y: scale(t.series.y, PERCENT) })),
    xTitle: 'global step',
    yTitle: 'accuracy / reward (%)' });
  fig.data.forEach((d, i) => Object.assign(d, traces[i].style));
  fig.layout.shapes = [{ type: 'line', x0: step, x1: step, yref: 'paper', y0: 0, y1: 1,
    line: { dash: 'dot', width: 1, color: '#888' } }];
  return fromZero(fig);
}
