/**
 * What every table of the report is made of (the tables themselves: headline.ts, collapse.ts, beyond.ts and the
 * other files of this folder): a ReportTable is plain data (columns + display cells + the raw statistics), so one
 * object renders to the terminal, CSV, Markdown and HTML (lib/report/render/tables.ts) and goes into summary.json
 * unchanged. Cells are mean ± std over seeds, intervals come from the bootstrap over tasks and seeds; the helpers
 * here are the ones several tables share: the table maker, per-seed and interval columns, the ID average, the
 * learning-rate sweep's rows and the collapse step measured against the base.
 */
import { StructuralState } from '../../format/types';
import { MetricRecord, grpoRecords, numberField, stepOf } from '../../train/records';
import { ExperimentResults, ResultsStore, byGroup } from '../store/results';
import { SeedStat, Observation, seedStats, formatPercent, formatLr } from '../stats/seeds';
import { differenceInterval, formatInterval, Outcomes, scoreInterval } from '../stats/bootstrap';
import { getStorePreset } from '../../experiments/registry/presets';
import { summarizeRL } from '../../experiments/run/summary';
import { lateStates } from '../store/samples';

export interface RawRow {
  config: string;
  label: string;
  seeds: number[];
  /** Per column: the statistic behind the cell (null where not applicable). */
  values: Record<string, SeedStat | (number | null)[] | number | string | null>;
}

export interface ReportTable {
  /** File stem under tables/ and key in summary.json. */
  id: string;
  title: string;
  columns: string[];
  /** Display cells, one array per row, aligned with `columns`. */
  rows: string[][];
  raw: RawRow[];
  notes: string[];
}

export const NA = '—';
/** What every "RL" state column reads (samples.ts lateStates). */
export const LATE_STATES_NOTE =
  'shares of the sampled messages of the last third of the RL steps (rollouts-sample.jsonl), by the ' +
  'current rule (lib/format/states.ts)';
/** Table 1's category columns, in the paper's order. */
export const ID_COLUMNS = ['base', 'miss_func', 'miss_param', 'long_context'];
export const STATE_LABEL: Record<StructuralState, string> = {
  healthyCall: 'healthy call', healthyResponse: 'healthy response', pollution: 'pollution',
    fullCollapse: 'full collapse',
};

export type Extract = (e: ExperimentResults, s: ExperimentResults['seeds'][number]) => number | undefined;

/** Seed statistics of several named per-seed values, for every experiment of `exps`. */
export function statsOf(exps: ExperimentResults[], extract: Record<string, Extract>): Map<string, SeedStat> {
  const obs: Observation[] = [];
  for (const e of exps) {
    for (const s of e.seeds) {
      for (const [col, f] of Object.entries(extract)) {
        const v = f(e, s);
        if (v !== undefined) obs.push({ key: `${e.spec.name}|${col}`, value: v });
      }
    }
  }
  return seedStats(obs);
}

/** Mean of the four ID category accuracies of one run (the paper's headline "average"). */
export function idAverage(summary: ExperimentResults['seeds'][number]['summary'],
  split: 'id' | 'id_constrained' = 'id'): number | undefined {
  const per = summary.eval[split]?.perCategory;
  if (!per) return undefined;
  const accs = ID_COLUMNS.filter((c) => per[c] !== undefined).map((c) => per[c].accuracy);
  return accs.length ? accs.reduce((a, b) => a + b, 0) / accs.length : undefined;
}

export function seedNote(exps: ExperimentResults[]): string {
  const counts = Array.from(new Set(exps.map((e) => e.seeds.length))).sort((a, b) => a - b);
  const list = counts.length > 1 ? `${counts.slice(0, -1).join(', ')} or ${counts[counts.length - 1]}` : `${counts[0]}`;
  return `Percent, mean ± std (sample std) over seeds; a single number means one seed. Seeds per row: ${list}.`;
}

/** The first column: what names a row. */
export interface Lead { column: string; cell: (e: ExperimentResults) => string }
export const BY_LABEL: Lead = { column: 'method', cell: (e) => e.spec.label };

export function makeTable(id: string, title: string, exps: ExperimentResults[], cols: string[],
  extract: Record<string, Extract>, lead: Lead, notes: string[]): ReportTable {
  const stats = statsOf(exps, extract);
  const columns = [lead.column, 'seeds', ...cols];
  const raw: RawRow[] = [];
  const rows = exps.map((e) => {
    const values: RawRow['values'] = {};
    const cells = cols.map((c) => {
      const st = stats.get(`${e.spec.name}|${c}`);
      values[c] = st ?? null;
      return st ? formatPercent(st) : NA;
    });
    raw.push({ config: e.spec.name, label: e.spec.label, seeds: e.seeds.map((s) => s.seed), values });
    return [lead.cell(e), String(e.seeds.length), ...cells];
  });
  return { id, title, columns, rows, raw, notes: exps.length ?
    [seedNote(exps), ...notes] : ['No finished runs in this group.'] };
}

/**
 * Insert a column of per-seed values (not averaged: "35, none" says more than a mean) before `before`, or last
 * when `before` is null; the raw row keeps the list.
 */
export function insertPerSeedColumn<T>(t: ReportTable, exps: ExperimentResults[], column: string, before: string | null,
  perSeed: (s: ExperimentResults['seeds'][number], e: ExperimentResults) => T, cell: (values: T[]) => string): void {
  const at = before === null ? t.columns.length : t.columns.indexOf(before);
  spliceColumn(t, column, at, (i) => {
    const values = exps[i].seeds.map((s) => perSeed(s, exps[i]));
    return [cell(values), values as RawRow['values'][string]];
  });
}

/**
 * Insert a column right after `after`, one cell per row from its raw row's config; `value` is what the raw row
 * keeps (the number behind the cell). Used to put the paper's figure beside the lab's figure it compares to.
 */
export function insertColumnAfter(t: ReportTable, column: string, after: string,
  cell: (config: string) => string, value: (config: string) => number | null): void {
  const at = t.columns.indexOf(after) + 1;
  if (at === 0) throw new Error(`table ${t.id} has no column "${after}"`);
  spliceColumn(t, column, at, (i) => [cell(t.raw[i].config), value(t.raw[i].config)]);
}

/** Put `column` at index `at`: row i gets the first of `make(i)` as its cell, its raw row the second. */
function spliceColumn(t: ReportTable, column: string, at: number,
  make: (row: number) => [string, RawRow['values'][string]]): void {
  t.columns.splice(at, 0, column);
  t.rows.forEach((r, i) => {
    const [cell, value] = make(i);
    r.splice(at, 0, cell);
    t.raw[i].values[column] = value;
  });
}

export type IntervalSplit = 'id' | 'format_ood' | 'content_ood' | 'format_content_ood';

/** The runs every method is compared with in Tables 1 and 2 (the paper's "vanilla RL" row). */
export const BASELINE_CONFIG = 'vanilla-rl';
export const OOD_COLUMNS = ['base', 'miss_param', 'miss_func'];

/**
 * Two interval columns after `after`: the split's average with its 95% bootstrap interval over tasks and seeds,
 * and the paired difference to the baseline's runs (lib/report/stats/bootstrap.ts). Empty cells where the runs hold
 * no per-task outcomes (results written before they were recorded) or were evaluated on other tasks.
 */
export function insertIntervalColumns(t: ReportTable, exps: ExperimentResults[], store: ResultsStore,
  split: IntervalSplit,
  cats: string[], label: string, after: string, baseline = BASELINE_CONFIG, baselineLabel = 'vanilla RL',
    withScore = true): void {
  const outcomes = (e: ExperimentResults | undefined) =>
    (e?.seeds ?? []).map((s) => s.summary.eval[split]?.outcomes).filter((o): o is Outcomes => o !== undefined);
  const base = store.experiments.find((e) => e.spec.name === baseline);
  const baseOut = outcomes(base);
  const at = t.columns.indexOf(after) + 1;
  const [ciCol, diffCol] = [`${label} [95% CI]`, `${label} − ${baselineLabel} [95% CI]`];
  t.columns.splice(at, 0, ...(withScore ? [ciCol] : []), diffCol);
  t.rows.forEach((r, i) => {
    const mine = outcomes(exps[i]);
    const complete = mine.length === exps[i].seeds.length;
    const ci = complete ? scoreInterval(mine, cats) : null;
    const diff = complete && exps[i].spec.name !== baseline && baseOut.length === (base?.seeds.length ?? -1)
      ? differenceInterval(mine, baseOut, cats) : null;
    r.splice(at, 0, ...(withScore ? [ci ? formatInterval(ci) : NA] : []), diff ? formatInterval(diff, 1, true) : NA);
    if (withScore) t.raw[i].values[ciCol] = ci as unknown as RawRow['values'][string];
    t.raw[i].values[diffCol] = diff as unknown as RawRow['values'][string];
  });
}

export const INTERVAL_NOTE =
  '[95% CI] = 2.5th-97.5th percentile of 2,000 bootstrap replicates that resample the test tasks of each ' +
  'category and the seeds; − base / − vanilla RL = the paired difference to that row (same resampled tasks for ' +
    'both), ' +
  'real where its interval excludes 0.';

/** Per-seed collapse steps, "35, none"; "none" when no seed collapsed. */
export function collapseCell(steps: (number | null)[]): string {
  return listCell(steps, String, 'none');
}

/** Per-seed values as "a, b"; `missing` for a seed without one, and alone when no seed has one; NA for no seed. */
export function listCell<T>(values: (T | null)[], show: (x: T) => string, missing = NA): string {
  if (!values.length) return NA;
  if (values.every((x) => x === null)) return missing;
  return values.map((x) => (x === null ? missing : show(x))).join(', ');
}

/**
 * The rows of the learning-rate sweep, sorted by learning rate: the 'lr-sweep' group plus any other
 * experiment that declares its `sweepLr` (the main vanilla-RL run is the sweep's point at the main rate).
 * Empty when the store has no 'lr-sweep' run (one point is not a sweep).
 */
export function sweepExperiments(store: ResultsStore): ExperimentResults[] {
  if (!byGroup(store, 'lr-sweep').length) return [];
  return store.experiments.filter((e) => e.spec.group === 'lr-sweep' || e.spec.sweepLr !== undefined)
    .sort((a, b) => (a.spec.sweepLr ?? 0) - (b.spec.sweepLr ?? 0));
}

/** "3e-4", or "3e-4 (Vanilla RL)" for a row that also appears in Table 1 under that label. */
export function sweepRowName(e: ExperimentResults): string {
  const lr = formatLr(e.spec.sweepLr);
  return e.spec.group === 'lr-sweep' ? lr : `${lr} (${e.spec.label})`;
}

/**
 * The base checkpoint's greedy accuracy on the RL validation tasks (the first `valTasksPerCategory` test tasks of
 * each category, lib/experiments/run/runner.ts), read from the base-model run's per-task outcomes; null without them.
 */
export function baseValAccuracy(store: ResultsStore): number | null {
  const base = store.experiments.find((e) => e.spec.name === 'base-model');
  const outcomes = base?.seeds[0]?.summary.eval.id?.outcomes;
  const preset = storePresetOrNull(store.preset);
  if (!outcomes || preset === null) return null;
  const n = preset.valTasksPerCategory;
  const cats = Object.values(outcomes);
  if (n <= 0 || !cats.length || cats.some((o) => o.length < n)) return null;
  const passed = (o: string) => [...o.slice(0, n)].filter((c) => c === '1').length / n;
  return cats.reduce((a, o) => a + passed(o), 0) / cats.length;
}

/** The preset of a store folder name ("full", "full-instruct"), or null for a folder named otherwise. */
function storePresetOrNull(store: string): ReturnType<typeof getStorePreset> | null {
  try {
    return getStorePreset(store);
  } catch {
    return null;
  }
}

/** A run's collapse step measured against the higher of its validated peak and where it started (the base). */
export function collapseVsStart(s: ExperimentResults['seeds'][number], e: ExperimentResults,
  start: number | null): number | null {
  if (e.spec.init.kind !== 'base' || start === null) return s.summary.rl?.collapseStep ?? null;
  return summarizeRL(grpoRecords(s.metrics), 5, start).collapseStep;
}

export function collapseNote(start: number | null): string {
  return 'collapse step = per seed, the first validated global step from which validation stays below a quarter of ' +
    'the higher of ' +
    'its peak and the base checkpoint\'s accuracy on the same validation tasks' +
    (start === null ? ' (unknown here: no base-model run)' : ` (${(100 * start).toFixed(1)}%)`) + '.';
}

/** Lowest (or highest) value of a probe field over a run's GRPO steps (those after global step `after`, if given). */
export function probeExtreme(metrics: MetricRecord[], field: string, pick: 'min' | 'max',
  after = -Infinity): number | undefined {
  const v = grpoRecords(metrics).filter((r) => (stepOf(r) ?? 0) > after)
    .map((r) => numberField(r, field)).filter((x): x is number => x !== undefined);
  if (!v.length) return undefined;
  return pick === 'min' ? Math.min(...v) : Math.max(...v);
}
