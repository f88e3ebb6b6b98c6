/**
 * What RL learned, two ways the paper does not tabulate but a reader needs:
 *   best vs final   the best validated checkpoint of every RL run next to its final one on the same ID test tasks
 *                   (the paper's Appendix D: some runs peak mid-training and then collapse);
 *   points          the branch points around a collapse on ID and format-OOD (points.json, `toolrl points`): does
 *                   the skill survive in the other call format while the own one breaks?
 *   memorisation    per validation step, the sampled reward on training tasks RL has already drawn vs on tasks of
 *                   the same distribution it never saw (GRPOConfig.memoTasksPerCategory): memorised or general?
 * Runs written before these were recorded have no row (their summary.json holds no `best`, their metrics no
 * valSeenReward).
 */
import * as fs from 'fs';
import * as path from 'path';
import { grpoRecords, numberField, stepOf } from '../../train/records';
import type { PointsFile } from '../../experiments/store/points';
import { ExperimentResults, ResultsStore } from '../store/results';
import { ReportTable, RawRow, ID_COLUMNS, idAverage } from './base';
import { differenceInterval, formatInterval, Outcomes } from '../stats/bootstrap';
import { formatPercent, seedStats } from '../stats/seeds';
import { PlotlyFigure, lineFigure } from '../figures/plotly';
import { meanCurve } from '../figures/curves';

const NA = '—';
type Seed = ExperimentResults['seeds'][number];

/** RL runs (a GRPO record in every seed) in registry order; `has` filters on what the table needs. */
function rlExperiments(store: ResultsStore, has: (s: Seed) => boolean): ExperimentResults[] {
  return store.experiments.filter((e) => e.seeds.length > 0 && e.seeds.every((s) => s.summary.rl && has(s)));
}

const cellOf = (xs: (number | undefined)[]) => {
  const v = xs.filter((x): x is number => x !== undefined);
  const st = seedStats(v.map((value) => ({ key: 'k', value }))).get('k');
  return st ? formatPercent(st) : NA;
};

/** The best validated checkpoint vs the final one, per RL run: where it peaked, and what its policy scores on ID. */
export function bestTable(store: ResultsStore): ReportTable {
  const exps = rlExperiments(store, (s) => s.summary.best !== undefined);
  const columns = ['method', 'seeds', 'best at step', 'best val', 'best ID average', 'final ID average',
    'best − final [95% CI]'];
  const raw: RawRow[] = [];
  const rows = exps.map((e) => {
    const best = e.seeds.map((s) => s.summary.best!);
    const bestOut = best.map((b) => b.id.outcomes).filter((o): o is Outcomes => o !== undefined);
    const finalOut = e.seeds.map((s) => s.summary.eval.id?.outcomes).filter((o): o is Outcomes => o !== undefined);
    const diff = bestOut.length === e.seeds.length && finalOut.length === e.seeds.length
      ? differenceInterval(bestOut, finalOut, ID_COLUMNS) : null;
    const bestAvg = best.map((b) => idAverage({ eval: { id: b.id } } as unknown as Seed['summary']));
    const finalAvg = e.seeds.map((s) => idAverage(s.summary));
    raw.push({ config: e.spec.name, label: e.spec.label, seeds: e.seeds.map((s) => s.seed),
      values: { 'best at step': best.map((b) => b.globalStep), 'best val': best.map((b) => b.valAccuracy),
        'best ID average': bestAvg.map((x) => x ?? null), 'final ID average': finalAvg.map((x) => x ?? null),
        'best − final [95% CI]': diff as unknown as RawRow['values'][string] } });
    return [e.spec.label, String(e.seeds.length), best.map((b) => b.globalStep).join(', '),
      cellOf(best.map((b) => b.valAccuracy)),
      cellOf(bestAvg), cellOf(finalAvg), diff ? formatInterval(diff, 1, true) : NA];
  });
  return {
    id: 'table-best', title: 'Best validated checkpoint vs final checkpoint (%)', columns, rows, raw,
    notes: exps.length ? [
      'best at step = per seed, the global step of the highest RL validation (ties keep the earlier); its policy ' +
        'was kept then ' +
      'and evaluated at the end on the same ID test tasks as the final one (the paper\'s Appendix D).',
      'The validation tasks are the first of each test category, so the best checkpoint is chosen on part of the ' +
        'test set: ' +
      'read best − final as how far a run fell from its peak, not as a held-out score.',
      'best − final: paired bootstrap over the test tasks and seeds; real where the interval excludes 0.',
    ] : ['No run in this store recorded its best validated checkpoint (runs of before that measure).'],
  };
}

/** Per RL run, the seen / unseen sampled reward (mean over seeds) at its first and last validation. */
export function memorisationTable(store: ResultsStore): ReportTable {
  const has = (s: Seed) => grpoRecords(s.metrics).some((r) => numberField(r, 'valUnseenReward') !== undefined);
  const exps = rlExperiments(store, has);
  const columns = ['method', 'seeds', 'first val step', 'seen', 'unseen', 'last val step', 'seen ', 'unseen ',
    'last seen − unseen'];
  const raw: RawRow[] = [];
  const rows = exps.map((e) => {
    const points = e.seeds.map((s) => grpoRecords(s.metrics).filter((r) =>
      numberField(r, 'valUnseenReward') !== undefined));
    const at = (pick: 'first' | 'last', key: string) => points.map((p) =>
      numberField(pick === 'first' ? p[0] : p[p.length - 1], key));
    const [fs, fu, ls, lu] = [at('first', 'valSeenReward'), at('first', 'valUnseenReward'),
      at('last', 'valSeenReward'), at('last', 'valUnseenReward')];
    const gap = ls.map((x, i) => (x === undefined || lu[i] === undefined ? undefined : x - lu[i]!));
    raw.push({ config: e.spec.name, label: e.spec.label, seeds: e.seeds.map((s) => s.seed),
      values: { 'first seen': fs.map((x) => x ?? null), 'first unseen': fu.map((x) => x ?? null),
        'last seen': ls.map((x) => x ?? null), 'last unseen': lu.map((x) => x ?? null) } });
    const steps = (pick: 'first' | 'last') => points.map((p) => stepOf(pick === 'first' ? p[0] : p[p.length - 1]) ??
      NA).join(', ');
    return [e.spec.label, String(e.seeds.length), steps('first'), cellOf(fs), cellOf(fu), steps('last'), cellOf(ls),
      cellOf(lu), cellOf(gap)];
  });
  return {
    id: 'table-memorisation',
      title: 'Memorisation vs generalisation: sampled reward on seen and unseen training-distribution tasks (%)',
    columns, rows, raw,
    notes: exps.length ? [
      'seen = training tasks RL had drawn by that step (a fresh choice of 6 per category each time); unseen = 6 per ' +
        'category ' +
      'of the same generator that neither split nor any base\'s world sample holds (the same tasks each time); 4 ' +
        'rollouts ' +
      'each at temperature 1. A rising seen line over a flat unseen one is memorisation.',
    ] : ['No run in this store recorded the memorisation measure (runs of before it).'],
  };
}

/** Seen and unseen sampled reward over the validation steps, mean over seeds, one pair of lines per run. */
export function memorisationFigure(store: ResultsStore, configs: string[]): PlotlyFigure {
  const series = store.experiments.filter((e) => configs.includes(e.spec.name)).flatMap((e) => {
    const runs = e.seeds.map((s) => s.metrics);
    const keep = (r: { phase?: unknown }) => r.phase === 'grpo';
    return [
      { name: `${e.spec.label}: seen`, ...meanCurve(runs, 'valSeenReward', keep) },
      { name: `${e.spec.label}: unseen`, ...meanCurve(runs, 'valUnseenReward', keep) },
    ].filter((c) => c.x.length);
  });
  const fig = lineFigure({ title: 'Sampled reward on seen vs never-seen tasks (mean over seeds)', x: [], series,
    xTitle: 'global step', yTitle: 'reward' });
  fig.data.forEach((d, i) => Object.assign(d, { mode: 'lines+markers', line: { dash: i % 2 ? 'dot' : 'solid' } }));
  return fig;
}

/** Every run of the store with a points.json: one row per evaluated branch point, next to its final checkpoint. */
export function pointsTable(store: ResultsStore): ReportTable {
  const columns = ['run', 'collapse step', 'step', 'ID average', 'format-OOD average'];
  const rows: string[][] = [];
  const raw: RawRow[] = [];
  for (const e of store.experiments) {
    for (const s of e.seeds) {
      const file = path.join(s.dir, 'points.json');
      if (!fs.existsSync(file)) continue;
      const p = JSON.parse(fs.readFileSync(file, 'utf8')) as PointsFile;
      const run = `${e.spec.label}, seed ${s.seed}`;
      const add = (step: string, ev: Seed['summary']['eval']) => {
        rows.push([run, String(p.collapseStep ?? NA), step,
          pctOf(idAverage({ eval: ev } as unknown as Seed['summary'])), pctOf(ev.format_ood?.mean)]);
        raw.push({ config: e.spec.name, label: run, seeds: [s.seed],
          values: { step, id: ev.id?.mean ?? null, format_ood: ev.format_ood?.mean ?? null } });
      };
      for (const pt of p.points) add(String(pt.step), pt.eval as Seed['summary']['eval']);
      add('final', s.summary.eval);
    }
  }
  return {
    id: 'table-points', title: 'Branch points around the collapse: own format vs the python-list format (%)', columns,
      rows, raw,
    notes: rows.length ?
      ['Greedy evaluations of the policy kept at each branch point (`npx toolrl points --run DIR`), all 400 ID and ' +
      '300 format-OOD test tasks; "final" = the run\'s final checkpoint. The paper\'s evidence that the skill is ' +
        'intact: the ' +
      'collapsed model keeps its score in another call format.'] : ['No run has points.json.'],
  };
}

const pctOf = (x: number | undefined) => (x === undefined ? NA : (100 * x).toFixed(1));
