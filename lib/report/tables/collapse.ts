/**
 * The collapse in tables: the vanilla-GRPO learning-rate sweep (peak vs final validation, when it collapsed), the
 * structural states of the messages per method, the capability probe (free vs constrained decoding: is the skill
 * still inside a broken policy?) and the supervisory signals at the rate where vanilla RL collapses.
 */
import { STRUCTURAL_STATES } from '../../format/types';
import { ExperimentResults, ResultsStore, byGroup } from '../store/results';
import { formatLr } from '../stats/seeds';
import { COLLAPSE_LR } from '../../experiments/registry/configs';
import { lateStates } from '../store/samples';
import { BY_LABEL, Extract, ID_COLUMNS, INTERVAL_NOTE, LATE_STATES_NOTE, ReportTable, STATE_LABEL, baseValAccuracy,
  collapseCell, collapseNote, collapseVsStart, idAverage, insertIntervalColumns, insertPerSeedColumn, listCell,
  makeTable, probeExtreme, sweepExperiments, sweepRowName } from './base';

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
      'signal steps = per seed, the RL steps with at least one group of mixed rewards (the others have no policy ' +
        'gradient).',
      'max p(...) = the probe after <tool_call>\\n at its highest over the RL steps (percent); runner-up = per ' +
        'seed, the most ' +
      'likely token other than {", <|im_end|> and <tool_call> there at the last step.',
      `state shares (%) = ${LATE_STATES_NOTE}`]);
  insertPerSeedColumn(t, exps, 'collapse step', 'ID average', (s, e) => collapseVsStart(s, e, start), collapseCell);
  insertPerSeedColumn(t, exps, 'signal steps', 'peak val', (s) => s.summary.rl?.stepsWithSignal ?? null,
    (v) => listCell(v, String));
  insertPerSeedColumn(t, exps, 'runner-up', STATE_LABEL.healthyCall, (s) => s.summary.rl?.finalProbe.topOther ?? null,
    (v) => listCell(v, (x) => JSON.stringify(x)));
  // where RL took each rate relative to where it started: the base checkpoint's own evaluation on the same tasks
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID', 'ID average', 'base-model', 'base');
  if (t.raw.length) t.notes.push('ID [95% CI] and ID − base: bootstrap over the test tasks and seeds, paired with ' +
    'the base checkpoint\'s ' +
    'evaluation on the same tasks (row base-model of Table 1); real where the interval excludes 0.');
  t.raw.forEach((r, i) => (r.values.lr = exps[i].spec.sweepLr ?? null));
  return t;
}

/**
 * Structural states of the final ID evaluation, and of the last RL steps' samples for RL runs. Rows: the store's
 * experiments of `groups` (the report: the methods; notebooks 02 and 06 add the lr sweep and the signals at the
 * collapse rate, whose collapses they show).
 */
export function stateTable(store: ResultsStore,
  groups: ExperimentResults['spec']['group'][] = ['method']): ReportTable {
  const exps = store.experiments.filter((e) => groups.includes(e.spec.group));
  const extract: Record<string, Extract> = {};
  for (const k of STRUCTURAL_STATES) extract[`eval ${STATE_LABEL[k]}`] = (_e, s) => s.summary.eval.id?.states[k];
  for (const k of STRUCTURAL_STATES) extract[`RL ${STATE_LABEL[k]}`] = (_e, s) => lateStates(s)?.[k];
  return makeTable('table-states', 'Structural states of assistant messages (%)', exps, Object.keys(extract), extract,
    BY_LABEL,
    ['eval = greedy messages of the final ID evaluation, as classified when the run was made (runs made before ' +
      'repetition ' +
      'loops were full collapse count a loop as a healthy response there); RL = ' + LATE_STATES_NOTE +
        ' (— for runs without RL).',
      'healthy call: a well-formed tool call; healthy response: plain text; pollution: calls or tags mixed with ' +
        'text, call JSON ' +
      'without tags, malformed calls; full collapse: degenerate output (an empty message, a bare <tool_call>, only ' +
        'or repeated ' +
      'tags, a repetition loop).']);
}

/**
 * The capability probe (docs/design.md A.5, "Claim"): ID accuracy of the same checkpoint with free
 * greedy decoding and with constrained decoding that only forbids `<|im_end|>` and a second `<tool_call>` right
 * after `<tool_call>\n`. Rows: every run evaluated both ways (base, methods, learning-rate sweep).
 */
export function capabilityTable(store: ResultsStore): ReportTable {
  const exps = store.experiments.filter((e) => e.spec.group !== 'base' &&
    e.seeds.some((s) => s.summary.eval.id_constrained));
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
    ['Both columns are greedy ID averages of the final checkpoint; constrained decoding forbids only <|im_end|> and ' +
      'a ' +
      'second <tool_call> right after <tool_call>\\n (toolrl eval --constrained).']);
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
  const t = makeTable('table-collapse-rate', `Supervisory signals at the collapse rate (lr ${lr})`, exps,
    Object.keys(extract), extract,
    { column: 'method', cell: collapseRateLabel },
    [`Every row trains at lr ${lr}, where vanilla RL collapses; Table 1's rows train at the main rate.`,
      `RL full collapse / healthy call = ${LATE_STATES_NOTE}`, collapseNote(start)]);
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID average', 'ID average', baseline[0]?.spec.name ?? '',
    `vanilla RL lr ${lr}`);
  insertPerSeedColumn(t, exps, 'collapse step', 'RL full collapse', (s, e) => collapseVsStart(s, e, start),
    collapseCell);
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}
