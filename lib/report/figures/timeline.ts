/**
 * The order of events in a collapsing run, and the sentences the notebooks print about it.
 *
 * The paper's account of the collapse is a sequence: a control token's probability after `<tool_call>\n` rises
 * first, then the sampled reward falls, then greedy accuracy is gone. For one seed of one run this file finds the
 * step of each event with the same rules as the precursor table (precursor.ts: PROBE_LEVEL, JSON_OPEN_LEVEL,
 * rewardHalvedAt) and the report's collapse step (tables.ts collapseVsStart), and marks them on a figure. Every
 * number a notebook states about a run comes from here, computed from the store in the cell that prints it, so a
 * sentence can never disagree with the committed data.
 */
import { ExperimentResults, ResultsStore } from '../store/results';
import { baseValAccuracy, collapseVsStart } from '../tables/base';
import { JSON_OPEN_LEVEL, PROBE_LEVEL, firstStep, rewardHalvedAt } from '../tables/precursor';
import { grpoRecords, numberField } from '../../train/records';
import { PlotlyFigure } from './plotly';

type Seed = ExperimentResults['seeds'][number];

export type EventKind = 'toolCall' | 'imEnd' | 'jsonOpen' | 'rewardHalved' | 'collapse';

export interface CollapseEvent {
  kind: EventKind;
  /** What happened, e.g. "p(<tool_call>) ≥ 0.01". */
  label: string;
  /** Global step, or null when it never happened in the run. */
  step: number | null;
}

/**
 * The five events of one seed, in a fixed order (not sorted; `ordered` sorts). `start`: the base's validation accuracy.
 */
export function collapseEvents(s: Seed, e: ExperimentResults, start: number | null): CollapseEvent[] {
  const g = grpoRecords(s.metrics);
  return [
    { kind: 'toolCall', label: `p(<tool_call>) ≥ ${PROBE_LEVEL}`,
      step: firstStep(g, (r) => (numberField(r, 'pToolCall') ?? 0) >= PROBE_LEVEL) },
    { kind: 'imEnd', label: `p(<|im_end|>) ≥ ${PROBE_LEVEL}`,
      step: firstStep(g, (r) => (numberField(r, 'pImEnd') ?? 0) >= PROBE_LEVEL) },
    { kind: 'jsonOpen', label: `p({") < ${JSON_OPEN_LEVEL}`,
      step: firstStep(g, (r) => (numberField(r, 'pJsonOpen') ?? 1) < JSON_OPEN_LEVEL) },
    { kind: 'rewardHalved', label: 'sampled reward halved', step: rewardHalvedAt(g) },
    { kind: 'collapse', label: 'collapse (validation stays below a quarter of its peak)',
      step: collapseVsStart(s, e, start) },
  ];
}

/** The events that happened, by step (ties keep the fixed order). */
export function ordered(events: CollapseEvent[]): CollapseEvent[] {
  return events.filter((v) => v.step !== null).sort((a, b) => (a.step as number) - (b.step as number));
}

/** "step 3: p(<tool_call>) ≥ 0.01 → step 12: sampled reward halved → ...; never: p(<|im_end|>) ≥ 0.01". */
export function eventSentence(events: CollapseEvent[]): string {
  const seen = ordered(events).map((v) => `step ${v.step}: ${v.label}`).join(' → ');
  const never = events.filter((v) => v.step === null).map((v) => v.label);
  return (seen || 'none of the events') + (never.length ? `; never: ${never.join(', ')}` : '');
}

/** The seeds of `e` that collapsed, with their collapse steps. */
export function collapsedSeeds(e: ExperimentResults, start: number | null): { seed: Seed; step: number }[] {
  return e.seeds.map((seed) => ({ seed, step: collapseVsStart(seed, e, start) }))
    .filter((x): x is { seed: Seed; step: number } => x.step !== null);
}

/** "collapsed in 3 of 3 seeds (steps 20, 20, 30)" or "collapsed in 0 of 3 seeds". */
export function collapseVerdict(e: ExperimentResults, start: number | null): string {
  const c = collapsedSeeds(e, start);
  return `collapsed in ${c.length} of ${e.seeds.length} seed${e.seeds.length === 1 ? '' : 's'}` +
    (c.length ? ` (global step${c.length === 1 ? '' : 's'} ${c.map((x) => x.step).join(', ')})` : '');
}

/**
 * One line per config of `configs` found in the store: "`vanilla-rl-lr1e-3` (Vanilla RL at lr 1e-3): collapsed in
 * 3 of 3 seeds (...); final validation 1.6% (peak 37.5%); ID average 0.8%", and one line per missing config.
 */
export function collapseReport(store: ResultsStore, configs: string[]): string[] {
  const start = baseValAccuracy(store);
  const pct = (v: number[]) => (v.length ? `${(100 * v.reduce((a, b) => a + b, 0) / v.length).toFixed(1)}%` : '—');
  return configs.map((c) => {
    const e = store.experiments.find((x) => x.spec.name === c);
    if (!e) return `\`${c}\`: no finished run in ${store.root}/${store.preset}`;
    const rl = e.seeds.map((s) => s.summary.rl).filter((r): r is NonNullable<typeof r> => r !== null);
    const id = e.seeds.map((s) => s.summary.eval.id?.mean).filter((v): v is number => v !== undefined);
    return `\`${c}\` (${e.spec.label}): ${collapseVerdict(e, start)}; validation at the end ` +
      `${pct(rl.map((r) => r.finalValAccuracy))} ` +
      `(peak ${pct(rl.map((r) => r.peakValAccuracy))}, mean over seeds); final ID accuracy ${pct(id)}`;
  });
}

/** The seed a notebook opens on: the first that collapsed, else the first. */
export function showcaseSeed(e: ExperimentResults, start: number | null): Seed {
  return collapsedSeeds(e, start)[0]?.seed ?? e.seeds[0];
}

/**
 * Vertical dotted lines at the events that happened, each numbered at the top in the order of events, and a strip
 * under the chart that says what each number is ("1 p(<tool_call>) ≥ 0.01, step 8 · 2 sampled reward halved, ...").
 * The numbers are short, so they stay apart where the sentences would pile up (five events often fall within a tenth
 * of the axis); numbers closer than 3% of the axis are stacked. Returns the same figure, for chaining.
 */
export function markEvents(fig: PlotlyFigure, events: CollapseEvent[]): PlotlyFigure {
  const shapes = ((fig.layout.shapes as unknown[] | undefined) ?? []).slice();
  const annotations = ((fig.layout.annotations as unknown[] | undefined) ?? []).slice();
  const xs = fig.data.flatMap((d) => (d.x as number[] | undefined) ?? []);
  const span = xs.length ? Math.max(...xs) - Math.min(...xs) || 1 : 1;
  const escape = (t: string) => t.replace(/</g, '&lt;');
  let lastX = -Infinity;
  let row = 0;
  const strip: string[] = [];
  ordered(events).forEach((v, i) => {
    const x = v.step as number;
    row = x - lastX < span * 0.03 ? row + 1 : 0;
    lastX = x;
    const color = v.kind === 'collapse' ? '#b3261e' : '#555';
    shapes.push({ type: 'line', xref: 'x', yref: 'paper', x0: x, x1: x, y0: 0, y1: 1,
      line: { dash: 'dot', width: 1.2, color } });
    annotations.push({ xref: 'x', yref: 'paper', x, y: 1 - 0.06 * row, yanchor: 'top', xanchor: 'left',
      showarrow: false, text: `<b>${i + 1}</b>`, font: { size: 11, color }, bgcolor: 'rgba(255,255,255,0.8)' });
    strip.push(`<b>${i + 1}</b> ${escape(v.label.replace(/ \(.*\)$/, ''))}, step ${x}`);
  });
  if (strip.length) {
    // the strip sits below the x-axis title, left-aligned, one line (the labels are short)
    annotations.push({ xref: 'paper', yref: 'paper', x: 0, y: -0.2, xanchor: 'left', yanchor: 'top',
      showarrow: false, align: 'left', text: strip.join(' · '), font: { size: 11, color: '#333' } });
    const margin = (fig.layout.margin as Record<string, number> | undefined) ?? {};
    fig.layout.margin = { ...margin, b: Math.max(margin.b ?? 0, 90) };
  }
  fig.layout.shapes = shapes;
  fig.layout.annotations = annotations;
  return fig;
}
