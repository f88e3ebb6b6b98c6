/**
 * The tables beyond the paper: the adaptive collapse guard next to what it replaces (vanilla RL, fixed-schedule
 * ETS), and the SFT dose check (FCL-SFT at more epochs, on more data, from a wider base, beside the base).
 */
import { defaultGuardConfig, guardFiredOn } from '../../experiments/run/guard';
import { getStorePreset } from '../../experiments/registry/presets';
import { recordsOf } from '../../train/records';
import { ExperimentResults, ResultsStore } from '../store/results';
import { BY_LABEL, ID_COLUMNS, INTERVAL_NOTE, OOD_COLUMNS, ReportTable, idAverage, insertIntervalColumns,
  insertPerSeedColumn, listCell, makeTable, probeExtreme } from './base';

/** What the collapse guard is compared with: no SFT at all, and SFT phases at fixed steps (ETS). */
const GUARD_BASELINES = ['vanilla-rl', 'ets'];

/** Per-seed SFT phases of a run: guard-triggered ('guard') or scheduled ('interleave') records in metrics.jsonl. */
function sftPhases(s: ExperimentResults['seeds'][number]): number {
  return s.metrics.filter((r) => r.phase === 'guard' || r.phase === 'interleave').length;
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
      'min p({") / max p(<|im_end|>) = the probe after <tool_call>\\n at its worst over the RL steps (what the ' +
        'guard watches).']);
  insertPerSeedColumn(t, exps, 'SFT phases', 'min p({")', sftPhases, (counts) => counts.join(', '));
  return t;
}

/**
 * When the collapse guard fired, per seed of every run with a guard (`guard`, `guard-lr1e-3`): the RL and global
 * step, the instrument(s) that crossed a threshold with their values (the rule of guardFiredOn, thresholds from the
 * run's stage in the registry), and how many failed tasks the SFT phase then trained on. No rows: it never fired;
 * null: the store holds no run with a guard.
 */
export function guardTriggerTable(store: ResultsStore): ReportTable | null {
  const preset = getStorePreset(store.preset);
  const columns = ['method', 'seed', 'RL step', 'global step', 'fired on', 'failed tasks'];
  const rows: string[][] = [];
  const guarded: string[] = [];
  for (const e of store.experiments) {
    const stage = e.spec.stages(preset).find((st) => st.kind === 'grpo' && st.guard);
    if (!stage || stage.kind !== 'grpo' || !stage.guard) continue;
    const g = { ...defaultGuardConfig, ...stage.guard };
    guarded.push(`${e.spec.label}: p(<|im_end|>) >= ${g.pImEnd}, p({") < ${g.pJsonOpen}, control collapse >= ` +
      `${g.fullCollapse}, at most ${g.maxPhases} phases ${g.minGap} steps apart`);
    for (const s of e.seeds) {
      for (const r of recordsOf(s.metrics, 'guard')) {
        rows.push([e.spec.label, String(s.seed), String(r.step), String(r.globalStep),
          guardFiredOn(g, r).join('; ') || '(none at the recorded values)', String(r.failedTasks)]);
      }
    }
  }
  if (!guarded.length) return null;
  const notes = [`Thresholds, per run: ${guarded.join(' | ')}.`,
    'fired on = each instrument of the RL step that crossed its threshold, with its value (the probe after ' +
      '<tool_call>\\n; control collapse = the share of the step\'s messages that are empty, a bare tag or only tags).'];
  if (!rows.length) notes.unshift('The guard never fired in these runs.');
  return { id: 'table-guard-triggers', title: 'Collapse guard: when it fired and on what', columns, rows, raw: [],
    notes };
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
  const t = makeTable('table-sft-dose', 'SFT dose: FCL-SFT at more epochs (%)', exps,
    ['ID average', 'format-OOD average'], {
    'ID average': (_e, s) => idAverage(s.summary),
    'format-OOD average': (_e, s) => s.summary.eval.format_ood?.mean,
  }, BY_LABEL,
  ['Same data (the training tasks\' teacher conversations) and learning rate in every SFT row; only the epochs differ.',
    'final SFT loss = per seed, the training loss of the last update (how far the conversations are learnt by ' +
      'heart).']);
  insertIntervalColumns(t, exps, store, 'format_ood', OOD_COLUMNS, 'format-OOD', 'format-OOD average', 'base-model',
    'base', false);
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID', 'ID average', 'base-model', 'base');
  insertPerSeedColumn(t, exps, 'final SFT loss', null, (s) => s.summary.sft?.finalLoss ?? null,
    (v) => listCell(v, (x) => x.toFixed(3)));
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}
