/**
 * The study's tables, computed from the results store (never typed in): mean ± std over seeds of
 *   Table 1  ID accuracy per category and their average, one row per method (as the paper's main table);
 *   Table 2  format-OOD and content-OOD averages per method (does the gain survive a new syntax / new APIs?);
 *   LR       the vanilla-GRPO learning-rate sweep: peak vs final validation accuracy, when it collapsed;
 *   States   structural-state shares of the messages: the collapse made visible, per method;
 *   Capability  ID accuracy with free vs constrained decoding: is the skill still inside a broken policy?
 *   Guard    the adaptive collapse guard (group 'extra', beyond the paper) next to vanilla RL and fixed-schedule ETS;
 *   Collapse rate  the signals at the rate where vanilla RL collapses (group 'collapse-rate');
 *   SFT dose FCL-SFT at more epochs beside the base (group 'sft-dose'): how much supervision the base needs.
 * A table is plain data (columns + display cells + the raw statistics), so one object renders to the
 * terminal, CSV, Markdown and HTML (render.ts) and goes into summary.json unchanged.
 */
import { STRUCTURAL_STATES, StructuralState } from '../format/types';
import { MetricRecord, grpoRecords, numberField, stepOf } from '../train/records';
import { ExperimentResults, ResultsStore, byGroup } from './results';
import { SeedStat, Observation, seedStats, formatPercent, formatLr } from './stats';
import { PAPER_NOTES, PAPER_ROWS, paperIdCell, paperOodCell } from './paper';
import { differenceInterval, formatInterval, Outcomes, scoreInterval } from './bootstrap';
import { COLLAPSE_LR } from '../experiments/configs';
import { getStorePreset } from '../experiments/presets';
import { summarizeRL } from '../experiments/summary';
import { lateStates } from './samples';

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

const NA = '—';
/** What every "RL" state column reads (samples.ts lateStates). */
const LATE_STATES_NOTE = 'shares of the sampled messages of the last third of the RL steps (rollouts-sample.jsonl), by the ' +
  'current rule (lib/format/states.ts)';
/** Table 1's category columns, in the paper's order. */
export const ID_COLUMNS = ['base', 'miss_func', 'miss_param', 'long_context'];
const STATE_LABEL: Record<StructuralState, string> = {
  healthyCall: 'healthy call', healthyResponse: 'healthy response', pollution: 'pollution', fullCollapse: 'full collapse',
};

type Extract = (e: ExperimentResults, s: ExperimentResults['seeds'][number]) => number | undefined;

/** Seed statistics of several named per-seed values, for every experiment of `exps`. */
function statsOf(exps: ExperimentResults[], extract: Record<string, Extract>): Map<string, SeedStat> {
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

function seedNote(exps: ExperimentResults[]): string {
  const counts = Array.from(new Set(exps.map((e) => e.seeds.length))).sort((a, b) => a - b);
  const list = counts.length > 1 ? `${counts.slice(0, -1).join(', ')} or ${counts[counts.length - 1]}` : `${counts[0]}`;
  return `Percent, mean ± std (sample std) over seeds; a single number means one seed. Seeds per row: ${list}.`;
}

/** The first column: what names a row. */
interface Lead { column: string; cell: (e: ExperimentResults) => string }
const BY_LABEL: Lead = { column: 'method', cell: (e) => e.spec.label };

function makeTable(id: string, title: string, exps: ExperimentResults[], cols: string[],
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
  return { id, title, columns, rows, raw, notes: exps.length ? [seedNote(exps), ...notes] : ['No finished runs in this group.'] };
}

/**
 * Insert a column of per-seed values (not averaged: "35, none" says more than a mean) before `before`, or last
 * when `before` is null; the raw row keeps the list.
 */
function insertPerSeedColumn<T>(t: ReportTable, exps: ExperimentResults[], column: string, before: string | null,
  perSeed: (s: ExperimentResults['seeds'][number], e: ExperimentResults) => T, cell: (values: T[]) => string): void {
  const at = before === null ? t.columns.length : t.columns.indexOf(before);
  t.columns.splice(at, 0, column);
  t.rows.forEach((r, i) => {
    const values = exps[i].seeds.map((s) => perSeed(s, exps[i]));
    r.splice(at, 0, cell(values));
    t.raw[i].values[column] = values as RawRow['values'][string];
  });
}

type IntervalSplit = 'id' | 'format_ood' | 'content_ood' | 'format_content_ood';

/** The runs every method is compared with in Tables 1 and 2 (the paper's "vanilla RL" row). */
export const BASELINE_CONFIG = 'vanilla-rl';
const OOD_COLUMNS = ['base', 'miss_param', 'miss_func'];

/**
 * Two interval columns after `after`: the split's average with its 95% bootstrap interval over tasks and seeds,
 * and the paired difference to the baseline's runs (lib/report/bootstrap.ts). Empty cells where the runs hold
 * no per-task outcomes (results written before they were recorded) or were evaluated on other tasks.
 */
function insertIntervalColumns(t: ReportTable, exps: ExperimentResults[], store: ResultsStore, split: IntervalSplit,
  cats: string[], label: string, after: string, baseline = BASELINE_CONFIG, baselineLabel = 'vanilla RL', withScore = true): void {
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

const INTERVAL_NOTE = '[95% CI] = 2.5th-97.5th percentile of 2,000 bootstrap replicates that resample the test tasks of each ' +
  'category and the seeds; − base / − vanilla RL = the paired difference to that row (same resampled tasks for both), ' +
  'real where its interval excludes 0.';

/** Table 1: ID accuracy per category and average, with intervals, paired differences and the paper's row. */
export function accuracyTable(store: ResultsStore): ReportTable {
  const extract: Record<string, Extract> = {};
  for (const c of ID_COLUMNS) extract[c] = (_e, s) => s.summary.eval.id?.perCategory[c]?.accuracy;
  extract.average = (_e, s) => idAverage(s.summary);
  const exps = byGroup(store, 'method');
  const t = makeTable('table1-id', 'Table 1: in-distribution accuracy (%)', exps, [...ID_COLUMNS, 'average'],
    extract, BY_LABEL, ['average = mean of the four category accuracies, as in the paper.', PAPER_NOTES.table1]);
  t.columns.push('paper');
  t.rows.forEach((r, i) => r.push(paperIdCell(t.raw[i].config) || NA));
  t.raw.forEach((r) => (r.values.paper = PAPER_ROWS[r.config]?.average ?? null));
  // inserted right after 'average', last first: average | ID [95% CI] | ID − base | average − vanilla RL
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'average', 'average', BASELINE_CONFIG, 'vanilla RL', false);
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID', 'average', 'base-model', 'base');
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}

/** Table 2: averages on format-OOD, content-OOD and format+content-OOD, with the paper's two ACEBench columns. */
export function oodTable(store: ResultsStore): ReportTable {
  const exps = byGroup(store, 'method');
  const t = makeTable('table2-ood', 'Table 2: out-of-distribution accuracy (%)', exps,
    ['ID average', 'format-OOD average', 'content-OOD average', 'format+content-OOD average'], {
      'ID average': (_e, s) => idAverage(s.summary),
      'format-OOD average': (_e, s) => s.summary.eval.format_ood?.mean,
      'content-OOD average': (_e, s) => s.summary.eval.content_ood?.mean,
      'format+content-OOD average': (_e, s) => s.summary.eval.format_content_ood?.mean,
    }, BY_LABEL, [PAPER_NOTES.table2, 'format-OOD = the ID test tasks (but long_context) in the python-list syntax; ' +
      'content-OOD = a held-out API family; OOD averages are the mean of that split\'s category accuracies; ' +
      '— where a run predates the format+content-OOD split.']);
  t.columns.push('paper format+content-OOD', 'paper content-OOD');
  t.rows.forEach((r, i) => r.push(paperOodCell(t.raw[i].config, 'formatContentOod') || NA, paperOodCell(t.raw[i].config, 'contentOod') || NA));
  t.raw.forEach((r) => {
    r.values['paper format+content-OOD'] = PAPER_ROWS[r.config]?.formatContentOod ?? null;
    r.values['paper content-OOD'] = PAPER_ROWS[r.config]?.contentOod ?? null;
  });
  insertIntervalColumns(t, exps, store, 'format_content_ood', OOD_COLUMNS, 'format+content-OOD', 'format+content-OOD average', 'base-model', 'base');
  insertIntervalColumns(t, exps, store, 'content_ood', OOD_COLUMNS, 'content-OOD', 'content-OOD average', 'base-model', 'base');
  insertIntervalColumns(t, exps, store, 'format_ood', OOD_COLUMNS, 'format-OOD', 'format-OOD average', 'base-model', 'base');
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}

/** Per-seed collapse steps, "35, none"; "none" when no seed collapsed. */
export function collapseCell(steps: (number | null)[]): string {
  return listCell(steps, String, 'none');
}

/** Per-seed values as "a, b"; `missing` for a seed without one, and alone when no seed has one; NA for no seed. */
function listCell<T>(values: (T | null)[], show: (x: T) => string, missing = NA): string {
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
 * each category, lib/experiments/runner.ts), read from the base-model run's per-task outcomes; null without them.
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
export function collapseVsStart(s: ExperimentResults['seeds'][number], e: ExperimentResults, start: number | null): number | null {
  if (e.spec.init.kind !== 'base' || start === null) return s.summary.rl?.collapseStep ?? null;
  return summarizeRL(grpoRecords(s.metrics), 5, start).collapseStep;
}

function collapseNote(start: number | null): string {
  return 'collapse step = per seed, the first validated global step from which validation stays below a quarter of the higher of ' +
    'its peak and the base checkpoint\'s accuracy on the same validation tasks' +
    (start === null ? ' (unknown here: no base-model run)' : ` (${(100 * start).toFixed(1)}%)`) + '.';
}

/** The learning-rate sweep of vanilla GRPO, sorted by learning rate. */
export function lrTable(store: ResultsStore): ReportTable {
  const exps = sweepExperiments(store);
  const start = baseValAccuracy(store);
  const extract: Record<string, Extract> = {
    'peak val': (_e, s) => s.summary.rl?.peakValAccuracy,
    'final val': (_e, s) => s.summary.rl?.finalValAccuracy,
    'ID average': (_e, s) => idAverage(s.summary),
    'max p(<|im_end|>)': (_e, s) => probeExtreme(s.metrics, 'pImEnd', 'max'),
    'max p(<tool_call>)': (_e, s) => probeExtreme(s.metrics, 'pToolCall', 'max'),
  };
  for (const k of STRUCTURAL_STATES) extract[STATE_LABEL[k]] = (_e, s) => lateStates(s)?.[k];
  const cols = Object.keys(extract);
  const t = makeTable('table-lr', 'Learning-rate sweep of vanilla GRPO', exps, cols, extract,
    { column: 'lr', cell: sweepRowName },
    ['peak / final val = greedy validation accuracy (%) at its best and at the last validated step.',
      collapseNote(start),
      'signal steps = per seed, the RL steps with at least one group of mixed rewards (the others have no policy gradient).',
      'max p(...) = the probe after <tool_call>\\n at its highest over the RL steps (percent); runner-up = per seed, the most ' +
      'likely token other than {", <|im_end|> and <tool_call> there at the last step.',
      `state shares (%) = ${LATE_STATES_NOTE}`]);
  insertPerSeedColumn(t, exps, 'collapse step', 'ID average', (s, e) => collapseVsStart(s, e, start), collapseCell);
  insertPerSeedColumn(t, exps, 'signal steps', 'peak val', (s) => s.summary.rl?.stepsWithSignal ?? null, (v) => listCell(v, String));
  insertPerSeedColumn(t, exps, 'runner-up', STATE_LABEL.healthyCall, (s) => s.summary.rl?.finalProbe.topOther ?? null,
    (v) => listCell(v, (x) => JSON.stringify(x)));
  // where RL took each rate relative to where it started: the base checkpoint's own evaluation on the same tasks
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID', 'ID average', 'base-model', 'base');
  if (t.raw.length) t.notes.push('ID [95% CI] and ID − base: bootstrap over the test tasks and seeds, paired with the base checkpoint\'s ' +
    'evaluation on the same tasks (row base-model of Table 1); real where the interval excludes 0.');
  t.raw.forEach((r, i) => (r.values.lr = exps[i].spec.sweepLr ?? null));
  return t;
}

/** Structural states of the final ID evaluation, and of the last RL steps' samples for RL runs. */
export function stateTable(store: ResultsStore): ReportTable {
  const exps = byGroup(store, 'method');
  const extract: Record<string, Extract> = {};
  for (const k of STRUCTURAL_STATES) extract[`eval ${STATE_LABEL[k]}`] = (_e, s) => s.summary.eval.id?.states[k];
  for (const k of STRUCTURAL_STATES) extract[`RL ${STATE_LABEL[k]}`] = (_e, s) => lateStates(s)?.[k];
  return makeTable('table-states', 'Structural states of assistant messages (%)', exps, Object.keys(extract), extract,
    BY_LABEL,
    ['eval = greedy messages of the final ID evaluation, as classified when the run was made (runs made before repetition ' +
      'loops were full collapse count a loop as a healthy response there); RL = ' + LATE_STATES_NOTE + ' (— for runs without RL).',
      'healthy call: a well-formed tool call; healthy response: plain text; pollution: calls or tags mixed with text, call JSON ' +
      'without tags, malformed calls; full collapse: degenerate output (an empty message, a bare <tool_call>, only or repeated ' +
      'tags, a repetition loop).']);
}

/**
 * The capability probe (docs/design.md A.5, "Claim"): ID accuracy of the same checkpoint with free
 * greedy decoding and with constrained decoding that only forbids `<|im_end|>` and a second `<tool_call>` right
 * after `<tool_call>\n`. Rows: every run evaluated both ways (base, methods, learning-rate sweep).
 */
export function capabilityTable(store: ResultsStore): ReportTable {
  const exps = store.experiments.filter((e) => e.spec.group !== 'base' && e.seeds.some((s) => s.summary.eval.id_constrained));
  const gain = (s: ExperimentResults['seeds'][number]) => {
    const [a, b] = [idAverage(s.summary), idAverage(s.summary, 'id_constrained')];
    return a === undefined || b === undefined ? undefined : b - a;
  };
  return makeTable('table-capability', 'Capability probe: ID accuracy, free vs constrained decoding (%)', exps,
    ['free', 'constrained', 'constrained − free'], {
      free: (_e, s) => idAverage(s.summary),
      constrained: (_e, s) => idAverage(s.summary, 'id_constrained'),
      'constrained − free': (_e, s) => gain(s),
    }, { column: 'run', cell: (e) => (e.spec.group === 'lr-sweep' ? `Vanilla RL, ${sweepRowName(e)}` : e.spec.label) },
    ['Both columns are greedy ID averages of the final checkpoint; constrained decoding forbids only <|im_end|> and a ' +
      'second <tool_call> right after <tool_call>\\n (toolrl eval --constrained).']);
}

/** What the collapse guard is compared with: no SFT at all, and SFT phases at fixed steps (ETS). */
const GUARD_BASELINES = ['vanilla-rl', 'ets'];

/** Per-seed SFT phases of a run: guard-triggered ('guard') or scheduled ('interleave') records in metrics.jsonl. */
function sftPhases(s: ExperimentResults['seeds'][number]): number {
  return s.metrics.filter((r) => r.phase === 'guard' || r.phase === 'interleave').length;
}

/** Lowest (or highest) value of a probe field over a run's GRPO steps (those after global step `after`, if given). */
export function probeExtreme(metrics: MetricRecord[], field: string, pick: 'min' | 'max', after = -Infinity): number | undefined {
  const v = grpoRecords(metrics).filter((r) => (stepOf(r) ?? 0) > after)
    .map((r) => numberField(r, field)).filter((x): x is number => x !== undefined);
  if (!v.length) return undefined;
  return pick === 'min' ? Math.min(...v) : Math.max(...v);
}

/**
 * Beyond the paper: the adaptive collapse guard (SFT phases when the probe or the full-collapse share crosses a
 * threshold) next to what it replaces, vanilla RL (no SFT) and ETS (the same SFT phases at fixed steps). The
 * probe columns are the signals the guard watches, at their worst over the RL steps; the SFT-phase count is
 * per seed, so "0, 1" shows a guard that fired in one seed only.
 */
export function guardTable(store: ResultsStore): ReportTable {
  const exps = store.experiments.filter((e) => e.spec.group === 'extra' || GUARD_BASELINES.includes(e.spec.name));
  const t = makeTable('table-guard', 'Collapse guard vs fixed-schedule SFT phases (%)', exps,
    ['min p({")', 'max p(<|im_end|>)', 'final val', 'ID average'], {
      'min p({")': (_e, s) => probeExtreme(s.metrics, 'pJsonOpen', 'min'),
      'max p(<|im_end|>)': (_e, s) => probeExtreme(s.metrics, 'pImEnd', 'max'),
      'final val': (_e, s) => s.summary.rl?.finalValAccuracy,
      'ID average': (_e, s) => idAverage(s.summary),
    }, BY_LABEL,
    ['SFT phases = per seed, the SFT phases that ran (guard: triggered; ETS: scheduled).',
      'min p({") / max p(<|im_end|>) = the probe after <tool_call>\\n at its worst over the RL steps (what the guard watches).']);
  insertPerSeedColumn(t, exps, 'SFT phases', 'min p({")', sftPhases, (counts) => counts.join(', '));
  return t;
}

/** Vanilla RL at COLLAPSE_LR (the sweep's point there) followed by every signal of group 'collapse-rate'. */
export function collapseRateRuns(store: ResultsStore): ExperimentResults[] {
  const baseline = store.experiments.filter((e) => e.spec.group === 'lr-sweep' && e.spec.sweepLr === COLLAPSE_LR);
  return [...baseline, ...byGroup(store, 'collapse-rate')];
}

/** A collapse-rate run's name in tables and figures: the sweep's point there reads "Vanilla RL, lr 1e-3". */
export function collapseRateLabel(e: ExperimentResults): string {
  return e.spec.group === 'lr-sweep' ? `Vanilla RL, lr ${formatLr(COLLAPSE_LR)}` : e.spec.label;
}

/**
 * The supervisory signals at the learning rate where vanilla RL collapses (group 'collapse-rate'), next to
 * vanilla RL at that rate: does the signal keep the policy from collapsing, and what is left of ID accuracy?
 */
export function collapseRateTable(store: ResultsStore): ReportTable {
  const exps = collapseRateRuns(store);
  const baseline = exps.filter((e) => e.spec.group === 'lr-sweep');
  const start = baseValAccuracy(store);
  const extract: Record<string, Extract> = {
    'ID average': (_e, s) => idAverage(s.summary),
    'peak val': (_e, s) => s.summary.rl?.peakValAccuracy,
    'final val': (_e, s) => s.summary.rl?.finalValAccuracy,
    'RL full collapse': (_e, s) => lateStates(s)?.fullCollapse,
    'RL healthy call': (_e, s) => lateStates(s)?.healthyCall,
  };
  const lr = formatLr(COLLAPSE_LR);
  const t = makeTable('table-collapse-rate', `Supervisory signals at the collapse rate (lr ${lr})`, exps, Object.keys(extract), extract,
    { column: 'method', cell: collapseRateLabel },
    [`Every row trains at lr ${lr}, where vanilla RL collapses; Table 1's rows train at the main rate.`,
      `RL full collapse / healthy call = ${LATE_STATES_NOTE}`, collapseNote(start)]);
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID average', 'ID average', baseline[0]?.spec.name ?? '', `vanilla RL lr ${lr}`);
  insertPerSeedColumn(t, exps, 'collapse step', 'RL full collapse', (s, e) => collapseVsStart(s, e, start), collapseCell);
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}

/** What the SFT dose check is read against: the base and FCL-SFT at the paper's epochs. */
const DOSE_BASELINES = ['base-model', 'fcl-sft', 'instruct-wide'];

/**
 * The SFT dose check (group 'sft-dose'): FCL-SFT at the paper's epochs and at more, beside the base. The paper's
 * supervised rows gain +14 to +22 points over its base; this table says how far more of the same supervision
 * moves our base, and what it costs on format-OOD (the format binding of F6).
 */
export function sftDoseTable(store: ResultsStore): ReportTable {
  const exps = store.experiments.filter((e) => e.spec.group === 'sft-dose' || DOSE_BASELINES.includes(e.spec.name));
  const t = makeTable('table-sft-dose', 'SFT dose: FCL-SFT at more epochs (%)', exps, ['ID average', 'format-OOD average'], {
    'ID average': (_e, s) => idAverage(s.summary),
    'format-OOD average': (_e, s) => s.summary.eval.format_ood?.mean,
  }, BY_LABEL, ['Same data (the training tasks\' teacher conversations) and learning rate in every SFT row; only the epochs differ.',
    'final SFT loss = per seed, the training loss of the last update (how far the conversations are learnt by heart).']);
  insertIntervalColumns(t, exps, store, 'format_ood', OOD_COLUMNS, 'format-OOD', 'format-OOD average', 'base-model', 'base', false);
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID', 'ID average', 'base-model', 'base');
  insertPerSeedColumn(t, exps, 'final SFT loss', null, (s) => s.summary.sft?.finalLoss ?? null, (v) => listCell(v, (x) => x.toFixed(3)));
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}

/** Every table the store has rows for, in report order (Table 1 and 2 always, others when present). */
export function allTables(store: ResultsStore): ReportTable[] {
  const out = [accuracyTable(store), oodTable(store)];
  if (byGroup(store, 'lr-sweep').length) out.push(lrTable(store));
  out.push(stateTable(store));
  const capability = capabilityTable(store);
  if (capability.rows.length) out.push(capability);
  if (byGroup(store, 'extra').length) out.push(guardTable(store));
  if (byGroup(store, 'collapse-rate').length) out.push(collapseRateTable(store));
  if (byGroup(store, 'sft-dose').length) out.push(sftDoseTable(store));
  return out;
}
