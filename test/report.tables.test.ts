// Tables and figures from a synthetic results store: two seeds per config with hand-picked accuracies,
// so every "mean ± std" below can be checked by hand (sample std of two values a, b = |a - b| / sqrt 2).

import type { GRPOMetric, MetricRecord } from '../lib/train/records';
import { grpoRecords } from '../lib/train/records';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExperimentSpec } from '../lib/experiments/registry/spec';
import { loadResults, ResultsStore } from '../lib/report/store/results';
import { accuracyTable, oodTable } from '../lib/report/tables/headline';
import { lrTable, stateTable, capabilityTable } from '../lib/report/tables/collapse';
import { guardTable, guardTriggerTable, sftDoseTable } from '../lib/report/tables/beyond';
import { guardFiredOn } from '../lib/experiments/run/guard';
import { collapseCell, baseValAccuracy } from '../lib/report/tables/base';
import { summarizeRL } from '../lib/experiments/run/summary';
import { toCSV, toMarkdown, toHtml, toText } from '../lib/report/render/tables';
import { fitColumns, tableHtml } from '../lib/report/render/rows';
import { valAccuracyFigure, rewardFigure, probeFigure, gradSplitFigure, collapseFigure, methodRuns, meanCurve, branchFigure } from '../lib/report/figures/curves';
import { buildReport } from '../lib/report/build';
import { branchLabels, branchTable } from '../lib/report/tables/branches';
import { precursorTable, rewardHalvedAt } from '../lib/report/tables/precursor';
import { formatLr } from '../lib/report/stats/seeds';

const spec = (name: string, group: ExperimentSpec['group'], sweepLr?: number): ExperimentSpec => ({
  name, label: `L-${name}`, group, sweepLr, title: name, paper: '', init: { kind: 'checkpoint', path: 'x' }, stages: () => [],
});
// 'vanilla-rl' so that the paper column maps, and it is also the sweep's point at 1e-3 (as in the registry);
// 'lr-b' is registered before 'lr-a' but has the larger lr
const SPECS = [spec('fcl-sft', 'method'), spec('vanilla-rl', 'method', 1e-3), spec('lr-b', 'lr-sweep', 3e-3), spec('lr-a', 'lr-sweep', 1e-4)];

const states = (c: number) => ({ healthyCall: 1 - c, healthyResponse: 0, pollution: 0, fullCollapse: c });
function evalOf(acc: number[], collapse = 0) {
  const cats = ['base', 'miss_func', 'miss_param', 'long_context'];
  const perCategory = Object.fromEntries(cats.map((c, i) => [c, { n: 10, accuracy: acc[i] }]));
  // per-task outcomes behind the accuracies: the first acc x 10 of the 10 tasks of each category passed
  const outcomes = Object.fromEntries(cats.map((c, i) => [c, '1'.repeat(Math.round(acc[i] * 10)).padEnd(10, '0')]));
  return { perCategory, mean: acc.reduce((a, b) => a + b, 0) / acc.length, states: states(collapse), meanTokens: 50, outcomes };
}
const rl = (peak: number, final: number, collapseStep: number | null, fullCollapse: number) => ({
  steps: 10, peakValAccuracy: peak, peakStep: 5, finalValAccuracy: final, collapseStep, finalStates: states(fullCollapse),
  finalProbe: { pJsonOpen: 0.5, pImEnd: 0.3, pToolCall: 0.1 }, finalReward: 0.1,
});

/**
 * A run folder. An RL run also gets a rollout sample at its last RL step whose ten messages are full collapse (loops)
 * in the share its summary's finalStates names and healthy calls otherwise: the tables read the RL states from there.
 */
function writeRun(root: string, config: string, seed: number, summary: object, metrics: object[]): void {
  const dir = path.join(root, 'quick', config, `seed-${seed}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ config, seed, backend: 'cpu', seconds: 1, ...summary }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), metrics.map((m) => JSON.stringify(m)).join('\n') + '\n');
  writeSample(dir, summary, metrics);
}

function writeSample(dir: string, summary: object, metrics: object[]): void {
  const last = (metrics as { phase?: string; step?: number; stage?: number }[]).filter((m) => m.phase === 'grpo').pop();
  const rl = (summary as { rl?: { finalStates?: { fullCollapse: number } } | null }).rl;
  const collapse = rl?.finalStates?.fullCollapse;
  if (last && collapse !== undefined) {
    const n = Math.round(collapse * 10);
    const messages = Array.from({ length: 10 }, (_, i) => (i < n ? ' to'.repeat(30) : '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>\n'));
    fs.writeFileSync(path.join(dir, 'rollouts-sample.jsonl'), JSON.stringify({ stage: last.stage ?? 0, step: last.step, taskId: 't',
      category: 'base', group: 0, index: 0, reward: 0, errorTurn: null, messages, states: [], scripted: false }) + '\n');
  }
}
const grpo = (step: number, val: number | null, reward: number) => ({
  phase: 'grpo', step, globalStep: step, reward, pJsonOpen: 0.5, pImEnd: 0.2, pToolCall: 0.1,
  selfJsonOpen: 0.1, otherJsonOpen: -0.1, selfImEnd: 0, otherImEnd: 0.2, selfToolCall: 0, otherToolCall: 0.05,
  healthyCall: 0.5, healthyResponse: 0.2, pollution: 0.1, fullCollapse: 0.2, ...(val === null ? {} : { valAccuracy: val }),
});

let cached: { root: string; store: ResultsStore } | null = null;
function fixture(): { root: string; store: ResultsStore } {
  if (cached) return cached;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-tables-'));
  writeRun(root, 'fcl-sft', 1, { eval: { id: evalOf([0.5, 0.4, 0.3, 0.2]) }, rl: null },
    [{ phase: 'sft', globalStep: 1, loss: 2 }, { phase: 'sft-val', globalStep: 1, valAccuracy: 0.3 }]);
  writeRun(root, 'vanilla-rl', 1, { eval: { id: evalOf([0.1, 0.2, 0.3, 0.0], 0.6), id_constrained: evalOf([0.3, 0.4, 0.5, 0.2]), format_ood: evalOf([0.05, 0.05, 0.05, 0.05]),
    content_ood: evalOf([0, 0, 0, 0]) }, rl: rl(0.4, 0.1, 35, 0.8) }, [grpo(1, null, 0.2), grpo(5, 0.4, 0.3), grpo(10, 0.1, 0.1)]);
  writeRun(root, 'vanilla-rl', 2, { eval: { id: evalOf([0.3, 0.2, 0.1, 0.2], 0.4), id_constrained: evalOf([0.4, 0.2, 0.1, 0.3]), format_ood: evalOf([0.15, 0.15, 0.15, 0.15]),
    content_ood: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: rl(0.6, 0.5, null, 0.6) }, [grpo(1, null, 0.4), grpo(5, 0.6, 0.5), grpo(10, 0.5, 0.3)]);
  writeRun(root, 'lr-a', 1, { eval: { id: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: rl(0.4, 0.1, 35, 0.8) }, [grpo(5, 0.4, 0.2)]);
  writeRun(root, 'lr-a', 2, { eval: { id: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: rl(0.6, 0.5, null, 0.6) }, [grpo(5, 0.6, 0.2)]);
  writeRun(root, 'lr-b', 1, { eval: { id: evalOf([0, 0, 0, 0]) }, rl: rl(0.2, 0.2, null, 0) }, [grpo(5, 0.2, 0.2)]);
  fs.mkdirSync(path.join(root, 'quick', 'vanilla-rl', 'seed-3'), { recursive: true }); // a run still going
  cached = { root, store: loadResults('quick', root, SPECS) };
  return cached;
}

const row = (t: { columns: string[]; rows: string[][] }, first: string) => {
  const r = t.rows.find((x) => x[0] === first);
  assert.ok(r, `row ${first} in ${JSON.stringify(t.rows)}`);
  return (col: string) => r[t.columns.indexOf(col)];
};

test('loadResults: registry order, finished seeds only, broken files named', () => {
  const { store, root } = fixture();
  assert.deepEqual(store.experiments.map((e) => e.spec.name), ['fcl-sft', 'vanilla-rl', 'lr-b', 'lr-a']);
  assert.deepEqual(store.experiments[1].seeds.map((s) => s.seed), [1, 2]);
  assert.deepEqual(store.incomplete, ['vanilla-rl/seed-3']);
  const bad = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-bad-'));
  writeRun(bad, 'fcl-sft', 1, { eval: { id: { ...evalOf([0, 0, 0, 0]), mean: 'x' } }, rl: null }, []);
  assert.throws(() => loadResults('quick', bad, SPECS), /fcl-sft[/\\]seed-1[/\\]summary\.json: field eval\.id\.mean/);
  fs.writeFileSync(path.join(bad, 'quick', 'fcl-sft', 'seed-1', 'summary.json'), '{oops');
  assert.throws(() => loadResults('quick', bad, SPECS), /summary\.json: not valid JSON/);
  void root;
});

test('Table 1: mean ± std over seeds per category, the four-category average, the paper column', () => {
  const t = accuracyTable(fixture().store);
  // the paper's figure beside the average it compares to
  assert.deepEqual(t.columns, ['method', 'seeds', 'base', 'miss_func', 'miss_param', 'long_context', 'average',
    'paper', 'ID [95% CI]', 'ID − base [95% CI]', 'average − vanilla RL [95% CI]']);
  assert.deepEqual(t.rows.map((r) => r[0]), ['L-fcl-sft', 'L-vanilla-rl']);
  const v = row(t, 'L-vanilla-rl');
  assert.equal(v('seeds'), '2');
  assert.equal(v('base'), '20.0 ± 14.1'); // 0.1, 0.3
  assert.equal(v('miss_func'), '20.0 ± 0.0');
  assert.equal(v('long_context'), '10.0 ± 14.1'); // 0.0, 0.2
  assert.equal(v('average'), '17.5 ± 3.5'); // averages 0.15, 0.20
  assert.equal(v('paper'), '0.00 (0 / 0 / 0 / 0)'); // the paper's GRPO row, per category
  const f = row(t, 'L-fcl-sft');
  assert.equal(f('base'), '50.0'); // one seed: no spread shown
  assert.equal(f('average'), '35.0');
  assert.equal(f('paper'), '—');
  // intervals: the point estimate is the average; the paired difference to vanilla RL's 17.5 is +17.5
  const [mean, lo, hi] = /^([\d.]+) \[([\d.]+), ([\d.]+)\]$/.exec(f('ID [95% CI]'))!.slice(1).map(Number);
  assert.ok(mean === 35 && lo < 35 && hi > 35, f('ID [95% CI]'));
  assert.equal(f('ID − base [95% CI]'), '—', 'no base-model run in this store');
  assert.match(f('average − vanilla RL [95% CI]'), /^\+17\.5 \[/);
  assert.equal(v('average − vanilla RL [95% CI]'), '—', 'the baseline has no difference to itself');
});

test('Table 2: format-OOD and content-OOD averages; missing splits stay empty', () => {
  const t = oodTable(fixture().store);
  const v = row(t, 'L-vanilla-rl');
  assert.equal(v('format-OOD average'), '10.0 ± 7.1'); // 0.05, 0.15
  assert.equal(v('content-OOD average'), '5.0 ± 7.1'); // 0.0, 0.1
  assert.equal(row(t, 'L-fcl-sft')('format-OOD average'), '—');
  // each paper column right after the lab's average it compares to
  for (const split of ['content-OOD', 'format+content-OOD']) {
    assert.equal(t.columns.indexOf(`paper ${split}`), t.columns.indexOf(`${split} average`) + 1, split);
  }
  assert.equal(t.rows[0].length, t.columns.length);
});

test('LR table: sorted by lr, per-seed collapse steps, RL final states', () => {
  const t = lrTable(fixture().store);
  assert.deepEqual(t.rows.map((r) => r[0]), ['1e-4', '1e-3 (L-vanilla-rl)', '3e-3']);
  const a = row(t, '1e-4');
  assert.equal(a('peak val'), '50.0 ± 14.1');
  assert.equal(a('final val'), '30.0 ± 28.3');
  assert.equal(a('collapse step'), '35, none');
  assert.equal(a('full collapse'), '70.0 ± 14.1');
  assert.equal(row(t, '3e-3')('collapse step'), 'none');
  assert.equal(collapseCell([null, null]), 'none');
  assert.equal(formatLr(2.5e-5), '2.5e-5');
});

test('state table: eval states for every method, RL states only for RL runs', () => {
  const t = stateTable(fixture().store);
  assert.equal(row(t, 'L-vanilla-rl')('eval full collapse'), '50.0 ± 14.1'); // 0.6, 0.4
  assert.equal(row(t, 'L-vanilla-rl')('RL full collapse'), '70.0 ± 14.1');
  assert.equal(row(t, 'L-fcl-sft')('RL full collapse'), '—');
});

test('capability table: free vs constrained ID average and their per-seed difference, only runs with both', () => {
  const t = capabilityTable(fixture().store);
  assert.deepEqual(t.rows.map((r) => r[0]), ['L-vanilla-rl']);
  const v = row(t, 'L-vanilla-rl');
  assert.equal(v('free'), '17.5 ± 3.5'); // 0.15, 0.20
  assert.equal(v('constrained'), '30.0 ± 7.1'); // 0.35, 0.25
  assert.equal(v('constrained − free'), '12.5 ± 10.6'); // 0.20, 0.05
});

test('guard table: the guard next to vanilla RL and ETS, SFT phases per seed, the probe at its worst', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-guard-'));
  const specs = [spec('vanilla-rl', 'method'), spec('ets', 'method'), spec('fcl-sft', 'method'), spec('guard', 'extra')];
  const probe = (step: number, pJsonOpen: number, pImEnd: number) => ({ ...grpo(step, null, 0), pJsonOpen, pImEnd });
  const run = { eval: { id: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: rl(0.2, 0.1, null, 0) };
  writeRun(root, 'vanilla-rl', 1, run, [probe(1, 0.9, 0.01), probe(2, 0.4, 0.05)]);
  writeRun(root, 'ets', 1, run, [probe(1, 0.8, 0), { phase: 'interleave', stage: 1 }, probe(2, 0.7, 0), { phase: 'interleave', stage: 3 }]);
  writeRun(root, 'fcl-sft', 1, { eval: { id: evalOf([0.5, 0.5, 0.5, 0.5]) }, rl: null }, []);
  writeRun(root, 'guard', 1, run, [probe(1, 0.6, 0.3), { phase: 'guard', stage: 0, step: 1 }, probe(2, 0.95, 0.02)]);
  writeRun(root, 'guard', 2, run, [probe(1, 0.99, 0.01)]);
  const t = guardTable(loadResults('quick', root, specs));
  assert.deepEqual(t.rows.map((r) => r[0]), ['L-vanilla-rl', 'L-ets', 'L-guard']); // no SFT-only rows
  assert.deepEqual(t.columns.slice(0, 3), ['method', 'seeds', 'SFT phases']);
  assert.equal(row(t, 'L-guard')('SFT phases'), '1, 0');
  assert.equal(row(t, 'L-ets')('SFT phases'), '2');
  assert.equal(row(t, 'L-vanilla-rl')('min p({")'), '40.0');
  assert.equal(row(t, 'L-vanilla-rl')('max p(<|im_end|>)'), '5.0');
  assert.equal(row(t, 'L-guard')('min p({")'), '79.5 ± 27.6'); // 0.60, 0.99
});

test('guard trigger table: each firing with the instrument that crossed, thresholds from the run\'s stage', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-triggers-'));
  const guarded = { ...spec('guard', 'extra'),
    stages: () => [{ kind: 'grpo' as const, config: {}, guard: { pImEnd: 0.3, sft: {} } }] };
  const specs = [spec('vanilla-rl', 'method'), guarded];
  const run = { eval: { id: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: rl(0.2, 0.1, null, 0) };
  writeRun(root, 'vanilla-rl', 1, run, []);
  writeRun(root, 'guard', 1, run, [{ phase: 'guard', stage: 0, step: 7, globalStep: 7, pImEnd: 0.31, pJsonOpen: 0.95,
    fullCollapse: 0.3, failedTasks: 12 }]);
  writeRun(root, 'guard', 2, run, []);
  const t = guardTriggerTable(loadResults('quick', root, specs));
  assert.ok(t);
  assert.deepEqual(t.rows, [['L-guard', '1', '7', '7', 'p(<|im_end|>) 0.3100 >= 0.3; control collapse 0.3000 >= 0.25', '12']]);
  assert.match(t.notes[0], /L-guard: p\(<\|im_end\|>\) >= 0\.3, p\(\{"\) < 0\.9/); // the stage's 0.3, the default 0.9
  assert.equal(guardTriggerTable(loadResults('quick', root, [spec('vanilla-rl', 'method')])), null);
  // the same rule the trainer reads: nothing crossed, nothing said
  assert.deepEqual(guardFiredOn({ pImEnd: 0.25, pJsonOpen: 0.9, fullCollapse: 0.25 },
    { pImEnd: 0.2, pJsonOpen: 0.9, fullCollapse: 0.1 }), []);
});

test('SFT dose table: base, FCL-SFT and its longer runs, ID and format-OOD against the base, the last SFT loss per seed', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-dose-'));
  const specs = [spec('base-model', 'method'), spec('fcl-sft', 'method'), spec('vanilla-rl', 'method'), spec('fcl-sft-8x', 'sft-dose')];
  const sft = (acc: number, fmt: number, loss: number) => ({ eval: { id: evalOf([acc, acc, acc, acc]), format_ood: evalOf([fmt, fmt, fmt, fmt]) },
    rl: null, sft: { stages: 1, finalLoss: loss } });
  writeRun(root, 'base-model', 1, { eval: { id: evalOf([0.1, 0.1, 0.1, 0.1]), format_ood: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: null }, []);
  writeRun(root, 'fcl-sft', 1, sft(0.2, 0.1, 0.3), []);
  writeRun(root, 'vanilla-rl', 1, { eval: { id: evalOf([0, 0, 0, 0]) }, rl: rl(0.2, 0.1, null, 0) }, []);
  writeRun(root, 'fcl-sft-8x', 1, sft(0.5, 0, 0.05), []);
  writeRun(root, 'fcl-sft-8x', 2, sft(0.3, 0, 0.04), []);
  const t = sftDoseTable(loadResults('quick', root, specs));
  assert.deepEqual(t.rows.map((r) => r[0]), ['L-base-model', 'L-fcl-sft', 'L-fcl-sft-8x']); // no RL rows
  assert.deepEqual(t.columns, ['method', 'seeds', 'ID average', 'ID [95% CI]', 'ID − base [95% CI]', 'format-OOD average',
    'format-OOD − base [95% CI]', 'final SFT loss']);
  const d = row(t, 'L-fcl-sft-8x');
  assert.equal(d('ID average'), '40.0 ± 14.1'); // 0.5, 0.3
  assert.match(d('ID − base [95% CI]'), /^\+30\.0 \[/);
  assert.match(d('format-OOD − base [95% CI]'), /^-10\.0 \[|^−10\.0 \[/);
  assert.equal(d('final SFT loss'), '0.050, 0.040');
  assert.equal(row(t, 'L-base-model')('final SFT loss'), '—', 'the base row trained nothing');
  assert.equal(row(t, 'L-base-model')('ID − base [95% CI]'), '—');
});

test('CSV, Markdown, HTML and text shapes', () => {
  const t = lrTable(fixture().store);
  const csv = toCSV(t).trimEnd().split('\n');
  assert.equal(csv.length, 1 + t.rows.length);
  assert.equal(csv[0], t.columns.join(','));
  assert.ok(csv[1].includes('"35, none"'), 'a cell with a comma is quoted');
  const md = toMarkdown(accuracyTable(fixture().store)).split('\n');
  const tableLines = md.filter((l) => l.startsWith('|'));
  assert.equal(tableLines.length, 2 + 2); // header, alignment, two rows
  assert.match(tableLines[1], /^\| :--- \| ---: \|/);
  assert.equal(tableLines[0].split(' | ').length, 11);
  assert.ok(toHtml(t).includes('<table class="toolrl-table">'));
  assert.match(toText(t), /^Learning-rate sweep/);
});

test('fitColumns: a column empty or constant in every row leaves the table with a note saying what it held', () => {
  const t = { columns: ['run', 'ID', 'paper', 'lr', 'seed'], notes: ['n1'],
    rows: [['a', '29.0 [24.7, 33.2]', '—', '3e-4', '1'], ['b', '30.1', '—', '3e-4', '2']] };
  const fit = fitColumns(t);
  assert.deepEqual(fit.columns, ['run', 'ID', 'seed']);
  assert.deepEqual(fit.rows, [['a', '29.0 [24.7, 33.2]', '1'], ['b', '30.1', '2']]);
  assert.deepEqual(fit.notes, ['n1', 'Not shown, empty in every row: paper.', 'Not shown, the same in every row: lr = 3e-4.']);
  assert.deepEqual(t.columns.length, 5, 'the input is not changed');
  const one = { columns: ['run', 'lr', 'paper'], rows: [['a', '3e-4', '—']], notes: [] };
  assert.deepEqual(fitColumns(one).columns, ['run', 'lr'], 'one row: nothing is "constant", only empty goes');
  assert.match(tableHtml([{ ID: '29.0 [24.7, 33.2]' }]), /white-space:nowrap[^>]*>29\.0 \[24\.7, 33\.2\]</,
    'an interval never wraps mid-number');
});

test('figures: per method a mean line and a lowest-to-highest-seed band, in percent, on RL steps', () => {
  const methods = methodRuns(fixture().store);
  const val = valAccuracyFigure(methods);
  const legend = val.data.filter((d) => d.showlegend !== false);
  // SFT-only methods do not stretch the RL-step axis: their last SFT validation is a dotted level
  assert.deepEqual(legend.map((d) => d.name), ['L-vanilla-rl (mean of 2 seeds)', 'L-fcl-sft (no RL: its last SFT validation)']);
  const v = legend[0];
  assert.deepEqual(v.x, [2, 3], 'validations at RL steps 2 and 3 (global steps 5 and 10)');
  const close = (a: unknown, b: number[]) => (a as number[]).every((x, i) => Math.abs(x - b[i]) < 1e-9);
  assert.ok(close(v.y, [50, 30]), `mean in percent: ${JSON.stringify(v.y)}`);
  const band = val.data.filter((d) => d.showlegend === false);
  assert.equal(band.length, 2);
  assert.ok(close(band[0].y, [60, 50]) && close(band[1].y, [40, 10]), 'band from the highest to the lowest seed');
  assert.equal(band[1].fill, 'tonexty');
  assert.ok(close(legend[1].y, [30, 30]));
  // every drawn series of a figure has its own colour
  const colours = legend.map((d) => (d.line as { color: string }).color);
  assert.equal(new Set(colours).size, colours.length);
  // seeds on demand; the global axis keeps the logged steps
  const seeds = valAccuracyFigure(methods, 'v', { seeds: true }).data.filter((d) => d.showlegend === false);
  assert.deepEqual(seeds.map((d) => d.name), ['L-vanilla-rl, seed 1', 'L-vanilla-rl, seed 2']);
  // on global steps an SFT-only method is a curve of its own (its SFT validations where they happened)
  const global = valAccuracyFigure(methods, 'v', { axis: 'global' }).data.filter((d) => d.showlegend !== false);
  assert.deepEqual(global.map((d) => [d.name, d.x]), [['L-fcl-sft (1 seed)', [1]], ['L-vanilla-rl (mean of 2 seeds)', [5, 10]]]);
  assert.deepEqual(rewardFigure(methods).data.filter((d) => d.showlegend !== false).map((d) => d.name), ['L-vanilla-rl (mean of 2 seeds)']);
  const run = fixture().store.experiments[1].seeds[0].metrics;
  const probe = probeFigure(run);
  assert.equal(probe.data.length, 3); // the fixture logs no pTopOther: its line is left out
  assert.equal((probe.layout.yaxis as { type: string }).type, 'log', 'probabilities on a log axis');
  assert.equal(gradSplitFigure(run).data.length, 6);
  const collapse = collapseFigure(run);
  assert.deepEqual(collapse.data.map((d) => d.name),
    ['validation accuracy (%)', 'sampled reward (%)', 'healthy-call share, sampled (%)', 'p({")', 'p(<|im_end|>)', 'p(<tool_call>)']);
  assert.deepEqual(collapse.data[0].x, [5, 10]); // validated steps only
  assert.equal(collapse.data[0].mode, 'lines+markers');
  assert.ok(close(collapse.data[0].y, [40, 10]), 'accuracy in percent');
  assert.ok(close(collapse.data[3].y, [0.5, 0.5, 0.5]), 'probabilities on their own scale');
  assert.deepEqual(collapse.data.map((d) => d.yaxis ?? 'y'), ['y', 'y', 'y', 'y2', 'y2', 'y2'], 'the probe on the log axis, the rest linear');
  const lg = collapse.layout.legend as { x: number; xanchor: string };
  assert.ok(lg.x > 1 && lg.xanchor === 'left', 'the legend sits right of the plot, past the second axis');
  const rec = (globalStep: number, reward: number) => ({ phase: 'grpo', stage: 0, globalStep, step: globalStep, reward }) as unknown as MetricRecord;
  assert.deepEqual(meanCurve([[rec(1, 1)], [rec(1, 3), rec(2, 5)]], 'reward'), { x: [1, 2], y: [2, 5] });
});

test('buildReport writes tables, report.html and summary.json from the store alone', async () => {
  const { root } = fixture();
  const out = path.join(root, 'out');
  const built = await buildReport('quick', out, { root, png: false, specs: SPECS, log: () => undefined });
  for (const f of ['report.html', 'summary.json', 'tables/table1-id.csv', 'tables/table1-id.md', 'tables/table-lr.html',
    'tables/table-capability.md']) {
    assert.ok(fs.existsSync(path.join(out, f)), f);
  }
  const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
  assert.deepEqual(Object.keys(summary.tables), built.tables.map((t) => t.id));
  assert.equal(summary.tables['table1-id'].raw[1].values.average.n, 2);
  await assert.rejects(buildReport('full', out, { root, png: false, specs: SPECS }), /no finished runs under/);
});

test('branch runs under <preset>/branches/ load with their parent; branchFigure and branchTable show both from the branch step', () => {
  const { root, store } = fixture();
  const parent = path.join(root, 'quick', 'vanilla-rl', 'seed-1');
  const dir = path.join(root, 'quick', 'branches', 'ets-from-vanilla-rl-seed-1-at-5');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ config: 'ets', branch: { from: parent, step: 5 } }));
  fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ config: 'ets', seed: 1, backend: 'cpu', seconds: 1,
    eval: { id: evalOf([0.2, 0.2, 0.2, 0.2]) }, rl: rl(0.4, 0.3, null, 0.1) }));
  const after = { ...grpo(10, 0.3, 0.2), pToolCall: 0.7 };
  const branchMetrics = [grpo(1, null, 0.2), grpo(5, 0.4, 0.3), after];
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), branchMetrics.map((m) => JSON.stringify(m)).join('\n') + '\n');
  writeSample(dir, { rl: rl(0.4, 0.3, null, 0.1) }, branchMetrics);
  const again = loadResults('quick', root, SPECS);
  assert.deepEqual(again.branches.map((b) => [b.name, b.config, b.step]), [['ets-from-vanilla-rl-seed-1-at-5', 'ets', 5]]);
  assert.equal(again.branches[0].parentMetrics.length, 3);
  assert.deepEqual(again.unknown, store.unknown, 'branches/ is not an unknown experiment');
  const fig = branchFigure(again.branches[0].parentMetrics, again.branches[0].metrics, 5, ['vanilla', 'ets']);
  const val = fig.data.find((d) => d.name === 'ets: validation accuracy')!;
  assert.deepEqual(val.x, [5, 10], 'the branch drawn from its branch step on');
  const colorOf = (name: string) => (fig.data.find((d) => d.name === name)!.line as { color: string }).color;
  assert.equal(colorOf('ets: sampled reward'), colorOf('ets: validation accuracy'), 'one color per run');
  assert.notEqual(colorOf('vanilla: validation accuracy'), colorOf('ets: validation accuracy'));
  assert.deepEqual(branchLabels(again.branches[0]), ['vanilla-rl, seed 1', 'ets (branch)']);
  const t = branchTable(again.branches[0]);
  assert.equal(t.id, 'table-branch-ets-from-vanilla-rl-seed-1-at-5');
  // parent: ID 10/20/30/0 % (average 15), final val 10 %, full collapse 80 %; branch: 20 % everywhere, final val 30 %
  const [parentRow, branchRow] = [row(t, 'vanilla-rl, seed 1'), row(t, 'ets (branch)')];
  const cols = ['final val', 'max p(<|im_end|>) after', 'max p(<tool_call>) after', 'RL full collapse'];
  assert.deepEqual(cols.map((c) => parentRow(c)), ['10.0', '0.20', '0.10', '80.0']);
  assert.deepEqual(cols.map((c) => branchRow(c)), ['30.0', '0.20', '0.70', '10.0'], 'the probe after the branch point only');
  assert.match(parentRow('ID average [95% CI]'), /^15\.0 \[/);
  assert.equal(parentRow('− parent [95% CI]'), '—', 'no difference of the parent to itself');
  assert.match(branchRow('− parent [95% CI]'), /^\+5\.0 \[/);
  assert.match(t.notes[0], /share RL steps 1-5 \(validation accuracy at step 5: 40\.0%\)/);
  fs.rmSync(path.join(root, 'quick', 'branches'), { recursive: true });
});


test('precursorTable: per RL run, the first step each probe crosses its level next to the step the reward halved', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-precursor-'));
  const rec = (step: number, reward: number, pToolCall = 1e-4, pImEnd = 1e-4, pJsonOpen = 0.99) =>
    ({ ...grpo(step, null, reward), pToolCall, pImEnd, pJsonOpen });
  // start reward 0.4; trailing 3-step means: step 6 0.37, step 7 0.27, step 8 0.17 < 0.2 = half the start
  writeRun(root, 'vanilla-rl', 1, { eval: { id: evalOf([0.1, 0.1, 0.1, 0.1]) }, rl: rl(0.4, 0.1, 35, 0.8) }, [rec(1, 0.4), rec(2, 0.4),
    rec(3, 0.4, 0.02), rec(4, 0.4), rec(5, 0.4), rec(6, 0.3), rec(7, 0.1, 0.01, 0.5, 0.5), rec(8, 0.1)]);
  writeRun(root, 'fcl-sft', 1, { eval: { id: evalOf([0.5, 0.4, 0.3, 0.2]) }, rl: null }, [{ phase: 'sft', globalStep: 1, loss: 2 }]);
  const t = precursorTable(loadResults('quick', root, SPECS));
  assert.deepEqual(t.rows.map((r) => r[0]), ['vanilla-rl, seed 1'], 'runs without RL steps are not rows');
  assert.deepEqual(t.rows[0].slice(1), ['0.40', '8', '3', '7', '7', '0.02', '0.50', '35']);
  assert.equal(rewardHalvedAt(grpoRecords(loadResults('quick', root, SPECS).experiments[1].seeds[0].metrics).slice(0, 5)), null,
    'no verdict within the start window');
});

test('collapse step against the start: a run already down at its first validation collapses there', () => {
  const down = [grpo(10, 0.0, 0), grpo(20, 0.05, 0)] as unknown as GRPOMetric[];
  assert.equal(summarizeRL(down).collapseStep, null, 'its own peak (0.05) says nothing collapsed');
  assert.equal(summarizeRL(down, 5, 0.44).collapseStep, 10, 'below a quarter of the start (0.11) from step 10 on');
  const recovered = [grpo(10, 0.05, 0), grpo(20, 0.3, 0)] as unknown as GRPOMetric[];
  assert.equal(summarizeRL(recovered, 5, 0.44).collapseStep, null);
});

test('baseValAccuracy: the base-model run\'s outcomes on the first valTasksPerCategory tasks of each category', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-baseval-'));
  // quick validates on 4 tasks per category: '1111', '1111', '1110', '1100' -> (1 + 1 + 0.75 + 0.5) / 4
  writeRun(root, 'base-model', 1, { eval: { id: evalOf([0.5, 0.4, 0.3, 0.2]) }, rl: null }, []);
  const store = loadResults('quick', root, [spec('base-model', 'method')]);
  assert.equal(baseValAccuracy(store), 0.8125);
  assert.equal(baseValAccuracy(loadResults('quick', root, [spec('fcl-sft', 'method')])), null);
});
