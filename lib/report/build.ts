/**
 * The study's report, rebuilt from the results store alone:
 *   <out>/tables/<id>.csv|md|html   every table (see tables.ts)
 *   <out>/report.html               self-contained page: tables, then figures (plotly inlined)
 *   <out>/summary.json              the tables as JSON (display cells and the statistics behind them)
 *   <out>/examples.md               one real sampled message per structural state of every RL run
 *   <out>/figures/*.png             the main figures, when headless Chromium is available
 * Rebuilding is cheap and deterministic, so the report is never edited by hand: change a run, rebuild.
 */
import * as path from 'path';
import { ResultsStore, loadResults } from './store/results';
import { ReportTable, baseValAccuracy, collapseVsStart, sweepExperiments, sweepRowName } from './tables/base';
import { exampleMarkdown, exampleMessages } from './notebook/conversations';
import { readRolloutSample } from './store/samples';
import { branchFigure } from './figures/curves';
import { branchLabels } from './tables/branches';
import { memorisationFigure } from './tables/learning';
import { storeTables } from './docs';
import { formatLr } from './stats/seeds';
import { COLLAPSE_LR } from '../experiments/registry/configs';
import { toCSV, toMarkdown, toHtml, toJSON } from './render/tables';
import { PlotlyFigure, ReportSection, escapeHtml, writeHtmlReport } from './figures/plotly';
import { collapseEvents, markEvents } from './figures/timeline';
import { valAccuracyFigure, rewardFigure, probeFigure, statesFigure, gradSplitFigure, collapseFigure,
  collapseRateFigure, methodRuns, methodPanels, sweepRuns, hasRL } from './figures/curves';
import { renderPngs } from './figures/png';
import { PAPER_ROWS, PAPER_SOURCE } from './paper';
import { ExperimentSpec } from '../experiments/registry/spec';
import { DEFAULT_RESULTS_ROOT } from '../experiments/store/folder';
import { writeFileAtomic } from '../util/atomic';

/** The run whose per-step diagnostics get PNGs: the collapse itself (else the first method with RL). */
const FOCUS_CONFIG = 'vanilla-rl';

export interface BuildOptions {
  root?: string;
  /** Render PNGs with headless Chromium (default true; skipped with a note when it is missing). */
  png?: boolean;
  log?: (line: string) => void;
  /** The experiment registry (default listExperiments(); tests pass their own). */
  specs?: ExperimentSpec[];
}

export interface BuiltReport {
  store: ResultsStore;
  tables: ReportTable[];
  /** Every file written. */
  files: string[];
  pngNote?: string;
}

interface NamedFigure {
  slug: string;
  title: string;
  figure: PlotlyFigure;
  /** Also written as figures/<slug>.png. */
  png: boolean;
}

/** The figures of the report, in page order. */
export function reportFigures(store: ResultsStore): NamedFigure[] {
  const figs: NamedFigure[] = [];
  const panels = methodPanels(methodRuns(store, ['method', 'extra']));
  panels.forEach((methods, i) => {
    const part = panels.length > 1 ? ` (${i + 1} of ${panels.length})` : '';
    const slug = panels.length > 1 ? `-${i + 1}` : '';
    figs.push({ slug: `val-accuracy${slug}`, title: `Validation accuracy per method${part}`,
      figure: valAccuracyFigure(methods, `Validation accuracy${part}`), png: true });
    const reward = rewardFigure(methods, `Sampled reward of the RL rollouts${part}`);
    if (reward.data.length) figs.push({ slug: `reward${slug}`, title: `RL reward per method${part}`, figure: reward,
      png: true });
  });
  const sweep = sweepRuns(store);
  if (sweep.length) {
    figs.push({ slug: 'lr-val-accuracy', title: 'Learning-rate sweep: validation accuracy',
      figure: valAccuracyFigure(sweep, 'Vanilla GRPO at each learning rate (mean over seeds)'), png: true });
  }
  const memo = memorisationFigure(store, ['vanilla-rl', 'ets-difflr', 'prs']);
  if (memo.data.length) figs.push({ slug: 'memorisation', title: 'Memorisation vs generalisation', figure: memo,
    png: true });
  const atCollapse = collapseRateFigure(store);
  if (atCollapse) {
    figs.push({ slug: 'collapse-rate-val-accuracy',
      title: `Supervisory signals at lr ${formatLr(COLLAPSE_LR)}: validation accuracy`, png: true,
      figure: atCollapse });
  }
  // one collapse chart per sweep run and seed, its order of events marked (timeline.ts); a PNG for every seed that
  // collapsed (as the LR table counts it)
  const start = baseValAccuracy(store);
  for (const e of sweepExperiments(store)) {
    for (const s of e.seeds) {
      figs.push({ slug: `collapse-${e.spec.name}-seed-${s.seed}`,
        title: `Collapse: lr ${sweepRowName(e)}, seed ${s.seed}`,
        figure: markEvents(collapseFigure(s.metrics, `Vanilla GRPO, lr ${sweepRowName(e)}, seed ${s.seed}`),
          collapseEvents(s, e, start)),
        png: collapseVsStart(s, e, start) !== null });
    }
  }
  const rlExps = store.experiments.filter((e) => e.spec.group !== 'lr-sweep' && hasRL(e.seeds[0].metrics));
  const focus = rlExps.find((e) => e.spec.name === FOCUS_CONFIG) ?? rlExps[0];
  for (const e of rlExps) {
    const s = e.seeds[0];
    const who = `${e.spec.label}, seed ${s.seed}`;
    const png = e === focus;
    figs.push({ slug: `probe-${e.spec.name}`, title: `Probe: ${who}`,
      figure: probeFigure(s.metrics, `Probe after <tool_call>\\n (${who})`), png });
    figs.push({ slug: `states-${e.spec.name}`, title: `States: ${who}`,
      figure: statesFigure(s.metrics, `Structural states of sampled messages (${who})`), png });
    figs.push({ slug: `gradsplit-${e.spec.name}`, title: `Gradient split: ${who}`,
      figure: gradSplitFigure(s.metrics, `Policy-gradient push on control-token logits (${who})`), png });
  }
  for (const b of store.branches) {
    figs.push({ slug: `branch-${b.name}`, title: `Branch: ${b.name}`, png: true,
      figure: branchFigure(b.parentMetrics, b.metrics, b.step, branchLabels(b),
        `${b.config} from ${b.from}, RL step ${b.step}`) });
  }
  return figs;
}

function overviewHtml(store: ResultsStore): string {
  const runs = store.experiments.reduce((a, e) => a + e.seeds.length, 0);
  const backends = Array.from(new Set(store.experiments.flatMap((e) =>
    e.seeds.map((s) => s.summary.backend)))).join(', ');
  const items = [
    `Preset <b>${escapeHtml(store.preset)}</b>: ${runs} finished run(s) of ${store.experiments.length} ` +
      `experiment(s), from ` +
      `<code>${escapeHtml(path.join(store.root, store.preset))}</code>; tfjs backend(s): ` +
        `${escapeHtml(backends || 'n/a')}.`,
    'Every number on this page is computed from that folder (summary.json and metrics.jsonl of each run).',
  ];
  if (store.incomplete.length) items.push(`Not finished (left out): ${escapeHtml(store.incomplete.join(', '))}.`);
  if (store.unknown.length) items.push(`Folders naming no registered config (ignored): ` +
    `${escapeHtml(store.unknown.join(', '))}.`);
  return `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
}

/**
 * examples.md: for every RL run of the methods' first seed, one real sampled message per structural state
 * (the latest in the committed rollout excerpt), the messages notebooks 02-04 show with their badges.
 */
export function examplesMarkdown(store: ResultsStore): string {
  const parts: string[] = [];
  for (const e of store.experiments) {
    const s = e.seeds[0];
    if (!s || !s.summary.rl) continue;
    const ex = exampleMessages(readRolloutSample(s.dir));
    if (!ex.length) continue;
    const run = `${e.spec.name} seed ${s.seed}`;
    parts.push(`## ${e.spec.label} (${run})`, ...ex.map((x) => exampleMarkdown(x, run)));
  }
  return parts.length ? ['# Example messages of the RL runs, one per structural state', '', ...parts].join('\n\n') +
    '\n' : '';
}

/** Rebuild the report of `preset` into `outDir`. Throws when the store has no finished run. */
export async function buildReport(preset: string, outDir: string, opts: BuildOptions = {}): Promise<BuiltReport> {
  const root = opts.root ?? DEFAULT_RESULTS_ROOT;
  const log = opts.log ?? ((l: string) => process.stdout.write(l + '\n'));
  const store = loadResults(preset, root, opts.specs);
  if (!store.experiments.length) {
    throw new Error(`no finished runs under ${path.join(root, preset)} (no <config>/seed-<n>/summary.json): ` +
      `run \`npx toolrl reproduce --preset ${preset}\` first`);
  }
  const tables = storeTables(store);
  const files: string[] = [];
  const write = (file: string, text: string) => {
    writeFileAtomic(file, text); // temp file + rename: a killed rebuild never leaves half a table
    files.push(file);
  };
  for (const t of tables) {
    write(path.join(outDir, 'tables', `${t.id}.csv`), toCSV(t));
    write(path.join(outDir, 'tables', `${t.id}.md`), toMarkdown(t));
    write(path.join(outDir, 'tables', `${t.id}.html`), toHtml(t));
  }

  const examples = examplesMarkdown(store);
  if (examples) write(path.join(outDir, 'examples.md'), examples);

  const figures = reportFigures(store);
  const sections: ReportSection[] = [
    { title: 'Overview', html: overviewHtml(store) },
    ...tables.map((t) => ({ title: t.title, html: toHtml(t) })),
    ...figures.map((f) => ({ title: f.title, figure: f.figure })),
  ];
  const html = path.join(outDir, 'report.html');
  writeHtmlReport(html, sections, { title: `toolrl-collapse: ${preset} preset` });
  files.push(html);

  const summary = {
    preset,
    resultsDir: path.join(root, preset),
    experiments: store.experiments.map((e) => ({ config: e.spec.name, label: e.spec.label, group: e.spec.group,
      seeds: e.seeds.map((s) => ({ seed: s.seed, backend: s.summary.backend, seconds: s.summary.seconds })) })),
    incomplete: store.incomplete,
    unknown: store.unknown,
    paper: { source: PAPER_SOURCE, rows: PAPER_ROWS },
    tables: Object.fromEntries(tables.map((t) => [t.id, toJSON(t)])),
  };
  write(path.join(outDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');

  let pngNote: string | undefined;
  if (opts.png !== false) {
    const jobs = figures.filter((f) => f.png).map((f) => ({ file: path.join(outDir, 'figures', `${f.slug}.png`),
      figure: f.figure }));
    const res = await renderPngs(jobs);
    files.push(...res.written);
    pngNote = res.note;
    if (pngNote) log(`note: ${pngNote}`);
  }
  return { store, tables, files, pngNote };
}

