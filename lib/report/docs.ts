/**
 * The results as the repository shows them, written by `toolrl report --docs` from the committed stores and never
 * by hand (test/report.docs.test.ts fails when a committed file differs from what this writes):
 *   docs/results.md   both regimes side by side: the bases, findings F1-F7, every table of each store's report;
 *   README.md         the block between RESULTS_BEGIN and RESULTS_END: the findings' verdicts and the headline
 *                     ID averages of both regimes next to the paper's;
 *   docs/knobs.md     every `--set` knob with its default and range, from the config declarations
 *                     (lib/experiments/run/knobs.ts).
 * Deterministic: no timestamps, no machine paths, bootstrap seeds fixed (bootstrap.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { ResultsStore, byGroup, loadResults } from './store/results';
import { ReportTable, idAverage } from './tables/base';
import { writeKnobs } from '../experiments/run/knobs';
import { accuracyTable, oodTable } from './tables/headline';
import { capabilityTable, collapseRateTable, lrTable, stateTable } from './tables/collapse';
import { guardTable, guardTriggerTable, sftDoseTable } from './tables/beyond';
import { bestTable, memorisationTable, pointsTable } from './tables/learning';
import { precursorTable } from './tables/precursor';
import { branchTable } from './tables/branches';
import { findings, findingsTable, verdictLabel } from './tables/findings';
import { anatomyTable, collapseSummaryTable, loopRuleTable } from './tables/anatomy';
import { pipelineTable } from './tables/pipeline';
import { mdCell, toMarkdown } from './render/tables';
import { PAPER_ROWS, PAPER_SOURCE } from './paper';
import { REGIMES, getRegime } from '../experiments/registry/regimes';
import { getPreset } from '../experiments/registry/presets';
import { formatDuration } from '../util/progress';

export const RESULTS_BEGIN = '<!-- results:begin (written by `npx toolrl report --docs`; do not edit) -->';
export const RESULTS_END = '<!-- results:end -->';

/** The preset whose stores the docs show: the full one, the paper's shape. */
export const DOCS_PRESET = 'full';

export interface RegimeStore {
  regime: string;
  label: string;
  store: ResultsStore;
}

export function loadRegimeStores(root: string, preset = DOCS_PRESET): RegimeStore[] {
  return REGIMES.map((r) => ({ regime: r, label: r, store: loadResults(getPreset(preset, r).store, root) }));
}

/** The store of the pipeline study (docs/design.md E): vanilla GRPO under each of the paper's differences. */
export const PIPELINE_STORE = { preset: 'pipeline', regime: 'instruct' } as const;

export function loadPipelineStore(root: string): ResultsStore {
  return loadResults(getPreset(PIPELINE_STORE.preset, PIPELINE_STORE.regime).store, root);
}

/**
 * Every table of one store's report, in report order (as build.ts writes them): Tables 1 and 2 always, others when
 * present.
 */
export function storeTables(store: ResultsStore): ReportTable[] {
  const out = [accuracyTable(store), oodTable(store)];
  if (byGroup(store, 'lr-sweep').length) out.push(lrTable(store));
  out.push(stateTable(store));
  const capability = capabilityTable(store);
  if (capability.rows.length) out.push(capability);
  if (byGroup(store, 'extra').length) out.push(guardTable(store));
  const triggers = guardTriggerTable(store);
  if (triggers) out.push(triggers);
  if (byGroup(store, 'collapse-rate').length) out.push(collapseRateTable(store));
  if (byGroup(store, 'sft-dose').length) out.push(sftDoseTable(store));
  if (byGroup(store, 'pipeline').length) out.push(pipelineTable(store));
  const learned = [bestTable(store), memorisationTable(store), pointsTable(store)].filter((t) => t.rows.length);
  return [...out, ...learned, precursorTable(store), anatomyTable(store), ...store.branches.map(branchTable)];
}

const pct = (x: number | undefined | null) => (x === undefined || x === null ? '—' : `${(100 * x).toFixed(1)}%`);

interface Calibration {
  sampled?: { success?: number; mixedGroups?: number };
  greedy?: { id?: number; formatOod?: number; contentOod?: number; toolSyntax?: number };
}

function readCalibration(dir: string): Calibration | null {
  const file = path.join(dir, 'calibration.json');
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) as Calibration : null;
}

/** The two bases and their stores: what each regime starts from and how much of its study has run. */
export function regimesTable(stores: RegimeStore[]): string {
  const lines =
    ['| regime | base checkpoint | greedy ID | tool syntax | sampled success | mixed groups | prompts x rollouts ' +
    'per RL step | runs finished | run time (sum) |',
    '| :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (const s of stores) {
    const r = getRegime(s.regime);
    const p = getPreset(DOCS_PRESET, s.regime);
    const cal = readCalibration(r.base);
    const runs = s.store.experiments.reduce((a, e) => a + e.seeds.length, 0);
    const seconds = s.store.experiments.reduce((a, e) => a + e.seeds.reduce((b, x) => b + (x.summary.seconds ?? 0), 0),
      0);
    lines.push(`| ${s.label} | \`${r.base}\` | ${pct(cal?.greedy?.id)} | ${pct(cal?.greedy?.toolSyntax)} | ` +
      `${pct(cal?.sampled?.success)} | ` +
      `${pct(cal?.sampled?.mixedGroups)} | ${p.promptsPerStep} x 8 | ${runs} | ` +
        `${runs ? formatDuration(seconds) : '—'} |`);
  }
  return lines.join('\n');
}

/**
 * ID average per method: paper, then each regime ("mean (seeds)" over seeds, percent), Table 1's rows in registry
 * order; a row per method that any store holds. The README's and docs/results.md's headline table, and notebook 12's.
 */
export function headlineRows(stores: RegimeStore[]): Record<string, string>[] {
  const names: string[] = [];
  const labels = new Map<string, string>();
  for (const s of stores) {
    for (const e of s.store.experiments) {
      if (e.spec.group !== 'method' || labels.has(e.spec.name)) continue;
      names.push(e.spec.name);
      labels.set(e.spec.name, e.spec.label);
    }
  }
  return names.map((n) => {
    const paper = PAPER_ROWS[n]?.average;
    const row: Record<string, string> = { method: labels.get(n) as string,
      paper: paper === undefined ? '—' : paper.toFixed(2) };
    for (const s of stores) {
      const e = s.store.experiments.find((x) => x.spec.name === n);
      const v = (e?.seeds ?? []).map((x) => idAverage(x.summary)).filter((x): x is number => x !== undefined);
      row[`${s.label} (seeds)`] = v.length ?
        `${(100 * v.reduce((a, b) => a + b, 0) / v.length).toFixed(1)} (${v.length})` : '—';
    }
    return row;
  });
}

/** headlineRows as a Markdown table. */
export function headlineTable(stores: RegimeStore[]): string {
  const rows = headlineRows(stores);
  const columns = ['method', 'paper', ...stores.map((s) => `${s.label} (seeds)`)];
  const lines = [`| ${columns.join(' | ')} |`, `| :--- | ${columns.slice(1).map(() => '---:').join(' | ')} |`];
  for (const r of rows) lines.push(`| ${columns.map((c) => r[c]).join(' | ')} |`);
  return lines.join('\n');
}

/** The verdicts only (the evidence is in docs/results.md). */
function verdictTable(stores: RegimeStore[]): string {
  const per = stores.map((s) => findings(s.store));
  const lines = [`| # | the paper's claim | ${stores.map((s) => s.label).join(' | ')} |`,
    `| :--- | :--- | ${stores.map(() => ':---').join(' | ')} |`];
  per[0].forEach((f, i) =>
    lines.push(`| ${f.id} | ${mdCell(f.claim)} | ${per.map((p) => `**${verdictLabel(p[i])}**`).join(' | ')} |`));
  return lines.join('\n');
}

/** docs/results.md: the regimes' stores, then the pipeline study's when it holds runs. */
export function resultsMarkdown(stores: RegimeStore[], pipeline?: ResultsStore): string {
  const parts = [
    '# Results',
    '',
    `Written by \`npx toolrl report --docs\` from the committed stores ` +
      `${stores.map((s) => `\`data/results/${s.store.preset}\``).join(' and ')}; ` +
      'do not edit by hand. Each store is one regime (lib/experiments/registry/regimes.ts): the same study from a ' +
        'different base.',
    '',
    '## The two regimes',
    '',
    regimesTable(stores),
    '',
    'Base figures from each checkpoint\'s `calibration.json` (`toolrl calibrate`); tool syntax = healthy calls ' +
      'among the greedy ' +
      'ID messages that try to call a tool. Run time = the finished runs\' own timings added up (two run at a time).',
    '',
    '## Findings F1-F7',
    '',
    toMarkdown(findingsTable(stores.map((s) => ({ label: s.label, store: s.store })))),
    '## The collapse this lab has',
    '',
    'What the collapsed policies write (lib/report/tables/anatomy.ts, from the committed rollouts-sample.jsonl), ' +
      'against the paper\'s ' +
      'signature: a bare `<tool_call>` in 87% of the messages. Every collapsed run, with its modes, is in the table ' +
      '"How each run collapsed" of each regime below.',
    '',
    toMarkdown(collapseSummaryTable(stores.map((s) => ({ label: s.label, store: s.store })))),
    toMarkdown(loopRuleTable(stores.map((s) => ({ label: s.label, store: s.store })))),
    '## ID average per method, both regimes beside the paper',
    '',
    headlineTable(stores),
    '',
    `paper = ${PAPER_SOURCE}; percent; (n) = seeds. Per category, intervals and paired differences: Table 1 of each ` +
      `regime below.`,
    '',
  ];
  for (const s of stores) {
    parts.push(`## Regime: ${s.label} (\`data/results/${s.store.preset}\`)`, '', getRegime(s.regime).label + '.', '');
    if (!s.store.experiments.length) {
      parts.push('No finished runs yet.', '');
      continue;
    }
    // no "not finished" list here: docs/results.md is committed and must follow from committed files only, and an
    // unfinished run's folder is never committed (report.html and the notebooks list them)
    for (const t of storeTables(s.store)) parts.push(toMarkdown(t));
  }
  if (pipeline && pipeline.experiments.length) {
    parts.push(`## The paper's pipeline (\`data/results/${pipeline.preset}\`)`, '',
      'Vanilla GRPO from the instruct regime\'s bases under each difference of the paper\'s pipeline that can touch ' +
      'the control tokens (docs/design.md E.1; `--set pipeline.<name>=true`), at the paper\'s 300 RL steps, one ' +
      'seed per pilot; each run is checked against the paper\'s collapse as docs/design.md E.2 pre-registered it.',
      '', toMarkdown(pipelineTable(pipeline)), toMarkdown(anatomyTable(pipeline)));
  }
  return parts.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

/** The README's results block (between the markers, markers included). */
export function readmeBlock(stores: RegimeStore[]): string {
  return [
    RESULTS_BEGIN,
    '',
    verdictTable(stores),
    '',
    headlineTable(stores),
    '',
    `ID average (percent, mean over seeds), full preset; paper = ${PAPER_SOURCE}. Evidence, intervals and every ` +
      `table: ` +
      '[docs/results.md](docs/results.md).',
    '',
    RESULTS_END,
  ].join('\n');
}

/** README text with its results block replaced; throws when the markers are missing. */
export function withReadmeBlock(readme: string, block: string): string {
  const [a, b] = [readme.indexOf(RESULTS_BEGIN), readme.indexOf(RESULTS_END)];
  if (a < 0 || b < a) throw new Error(`README.md has no results block (${RESULTS_BEGIN} ... ${RESULTS_END})`);
  return readme.slice(0, a) + block + readme.slice(b + RESULTS_END.length);
}

/** Write docs/results.md, the README block and docs/knobs.md under `repo`; returns the files written. */
export function writeDocs(repo: string, root: string): string[] {
  const stores = loadRegimeStores(root);
  const docs = path.join(repo, 'docs', 'results.md');
  fs.writeFileSync(docs, resultsMarkdown(stores, loadPipelineStore(root)));
  const readme = path.join(repo, 'README.md');
  fs.writeFileSync(readme, withReadmeBlock(fs.readFileSync(readme, 'utf8'), readmeBlock(stores)));
  return [docs, readme, writeKnobs(repo)];
}
