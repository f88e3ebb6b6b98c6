// What the notebooks' markdown says about the committed stores and the recipe, checked against them. Most numbers a
// notebook shows are printed by its cells; the few facts its prose states are listed here, each with the sentence
// (whitespace-normalised) that must still be in the notebook and a check of the fact. A sentence edited away fails
// its claim (drop or update the claim); a store or recipe that changes under a sentence fails its check (update the
// prose). The committed stores are read as the notebooks read them (loadResults, the report's collapse rule).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { COLLAPSE_LR, INTERLEAVE_LAST_STEPS, RL_LR, getExperiment } from '../lib/experiments/registry/configs';
import { getPreset } from '../lib/experiments/registry/presets';
import { GUARD } from '../lib/experiments/run/guard';
import { defaultGRPOConfig } from '../lib/train/grpo/config';
import { loadTasks } from '../lib/envs/data';
import { ExperimentResults, ResultsStore, loadResults } from '../lib/report/store/results';
import { baseValAccuracy } from '../lib/report/tables/base';
import { collapsedSeeds } from '../lib/report/figures/timeline';
import { formatLr } from '../lib/report/stats/seeds';
import { isFinished } from '../lib/experiments/store/folder';
import { recordsOf } from '../lib/train/records';
import { findings, verdictLabel } from '../lib/report/tables/findings';

const ROOT = path.resolve(__dirname, '..');
const NOTEBOOKS = path.join(ROOT, 'notebooks');
const RESULTS = path.join(ROOT, 'data', 'results');

/** A notebook's markdown, whitespace-normalised (line breaks inside a sentence do not matter). */
function markdown(notebook: string): string {
  const nb = JSON.parse(fs.readFileSync(path.join(NOTEBOOKS, notebook), 'utf8')) as
    { cells: { cell_type: string; source: string | string[] }[] };
  return nb.cells.filter((c) => c.cell_type === 'markdown')
    .map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source)).join('\n').replace(/\s+/g, ' ');
}

const stores = new Map<string, ResultsStore>();
function store(name: string): ResultsStore {
  if (!stores.has(name)) stores.set(name, loadResults(name, RESULTS));
  return stores.get(name)!;
}
function experiment(storeName: string, config: string): ExperimentResults {
  const e = store(storeName).experiments.find((x) => x.spec.name === config);
  assert.ok(e, `${storeName} has no finished run of ${config}`);
  return e;
}
/** How many seeds of a config collapsed, by the rule the notebooks print (collapseReport). */
function collapsed(storeName: string, config: string): { collapsed: number; seeds: number } {
  const e = experiment(storeName, config);
  return { collapsed: collapsedSeeds(e, baseValAccuracy(store(storeName))).length, seeds: e.seeds.length };
}
const holds = (storeName: string, config: string) => assert.deepEqual(collapsed(storeName, config).collapsed, 0,
  `${config} in ${storeName} collapsed in some seed`);
const collapsesAll = (storeName: string, config: string) => {
  const c = collapsed(storeName, config);
  assert.equal(c.collapsed, c.seeds, `${config} in ${storeName}: ${c.collapsed} of ${c.seeds} seeds collapsed`);
};
const collapseName = `vanilla-rl-${'lr' + COLLAPSE_LR.toExponential(0).replace('+', '')}`;

interface Claim { notebook: string; says: string; check: () => void }

const CLAIMS: Claim[] = [
  {
    notebook: '02-vanilla-rl.ipynb',
    says: `At the study's main learning rate (${formatLr(RL_LR)}) vanilla GRPO does **not** collapse in our strong ` +
      `regime; at ${formatLr(COLLAPSE_LR)} it does`,
    check: () => { holds('full', 'vanilla-rl'); collapsesAll('full', collapseName); },
  },
  {
    notebook: '02-vanilla-rl.ipynb',
    says: 'its RL steps hold 32 prompts x 8 rollouts',
    check: () => {
      assert.equal(getPreset('full', 'instruct').promptsPerStep, 32);
      assert.equal(defaultGRPOConfig.groupSize, 8);
    },
  },
  {
    notebook: '03-why-it-collapses.ipynb',
    says: 'at 3.3 times the main rate',
    check: () => assert.equal((COLLAPSE_LR / RL_LR).toFixed(1), '3.3'),
  },
  {
    notebook: '06-ops.ipynb',
    says: `The study's main rate (${formatLr(RL_LR)}), where vanilla GRPO does not collapse in the strong regime`,
    check: () => holds('full', 'vanilla-rl'),
  },
  {
    notebook: '06-ops.ipynb',
    says: `lr ${formatLr(COLLAPSE_LR)} (notebook 02)`,
    check: () => collapsesAll('full', collapseName),
  },
  {
    notebook: '07-hbg.ipynb',
    says: 'at this rate it does not collapse in the strong regime',
    check: () => holds('full', 'vanilla-rl'),
  },
  {
    notebook: '10-sync-vs-interleaved.ipynb',
    says: 'At the main learning rate vanilla RL does not collapse',
    check: () => holds('full', 'vanilla-rl'),
  },
  {
    notebook: '10-sync-vs-interleaved.ipynb',
    says: 'the per-update SFT loss, the signal that held at that rate from the start (section 2)',
    check: () => holds('full', 'sync-sft-lr1e-3'),
  },
  {
    notebook: '10-sync-vs-interleaved.ipynb',
    says: 'from RL step 10, where its validation was already falling, and from RL step 30, where it had already collapsed',
    check: () => {
      const branches = store('full').branches;
      const at = (step: number) => branches.find((b) => b.step === step && b.config === 'sync-sft-lr1e-3');
      const [b10, b30] = [at(10), at(30)];
      assert.ok(b10 && b30, 'the store has no sync-sft-lr1e-3 branches at RL steps 10 and 30');
      // "falling": below the base checkpoint's validation accuracy (the policy the parent started from)
      const at10 = recordsOf(b10.parentMetrics, 'grpo').find((r) => r.step === 10 && r.valAccuracy !== undefined);
      const start = baseValAccuracy(store('full'));
      assert.ok(at10 && start !== null && at10.valAccuracy! < start,
        `the parent's validation at step 10 (${at10?.valAccuracy}) is not below its start (${start})`);
      const step = b30.parentSummary?.rl?.collapseStep;
      assert.ok(step !== null && step !== undefined && step <= 30, `the parent collapsed at ${step}, not by step 30`);
    },
  },
  {
    notebook: '10-sync-vs-interleaved.ipynb',
    says: 'the probe\'s p(`<|im_end|>`) after `<tool_call>\\n` ≥ 0.25, its p(`{"`) below 0.9, or a control-collapse ' +
      'share (empty messages, bare or only tags) ≥ 0.25 in the step\'s messages (at most 2 phases, 10 steps apart',
    check: () => assert.deepEqual(
      [GUARD.defaults.pImEnd, GUARD.defaults.pJsonOpen, GUARD.defaults.fullCollapse, GUARD.defaults.maxPhases,
        GUARD.defaults.minGap], [0.25, 0.9, 0.25, 2, 10]),
  },
  {
    notebook: '10-sync-vs-interleaved.ipynb',
    says: 'while one of them has fewer than three seeds its verdict reads "(preliminary)"',
    check: () => {
      const f4 = findings(store('full-instruct')).find((f) => f.id === 'F4')!;
      const rows = ['ops', 'hbg', 'ets-difflr', 'prs'].map((c) => store('full-instruct').experiments
        .find((e) => e.spec.name === `${c}-lr1e-3`)).filter((e): e is ExperimentResults => !!e);
      const short = rows.filter((e) => e.seeds.length < 3);
      if (f4.verdict === 'not testable') return;
      assert.equal(verdictLabel(f4).endsWith('(preliminary)'), short.length > 0, `F4: ${verdictLabel(f4)}`);
    },
  },
  ...['08-ets.ipynb', '09-prs.ipynb'].map((notebook): Claim => ({
    notebook,
    says: 'each RL stage starts with a fresh optimizer and 5 warmup steps, and each SFT phase trains 2 epochs on data ' +
      'built from the **last 10 RL steps** before it',
    check: () => {
      const stages = getExperiment(notebook.startsWith('08') ? 'ets' : 'prs').stages(getPreset('full'));
      for (const st of stages) {
        if (st.kind === 'grpo') assert.equal(st.config.warmupSteps, 5);
        if (st.kind === 'sft-interleaved') assert.deepEqual([st.config.epochs, st.lastSteps], [2, 10]);
      }
      assert.equal(INTERLEAVE_LAST_STEPS, 10);
    },
  })),
  {
    notebook: '01-policy-and-base-checkpoint.ipynb',
    says: 'the committed results of later notebooks evaluate every test task (100 per category, the `full` presets)',
    check: () => {
      assert.equal(getPreset('full').evalTasksPerCategory, 0);
      const counts = new Map<string, number>();
      for (const t of loadTasks('test', path.join(ROOT, 'data'))) counts.set(t.category, (counts.get(t.category) ?? 0) + 1);
      assert.deepEqual([...new Set(counts.values())], [100]);
    },
  },
  {
    notebook: '11-ood.ipynb',
    says: 'all of them at the `full` presets: 300 format-OOD tasks, 100 per category, and 100 content-OOD tasks, so ' +
      'one content-OOD task is 1 point), and each row averages three seeds',
    check: () => {
      assert.equal(getPreset('full').evalTasksPerCategory, 0);
      const format = loadTasks('format_ood', path.join(ROOT, 'data'));
      const counts = new Map<string, number>();
      for (const t of format) counts.set(t.category, (counts.get(t.category) ?? 0) + 1);
      assert.deepEqual([format.length, ...new Set(counts.values())], [300, 100]);
      assert.equal(loadTasks('content_ood', path.join(ROOT, 'data')).length, 100);
      assert.equal(getPreset('full').seeds.length, 3);
    },
  },
  {
    // the generated Setup cell (lib/report/notebook/cells.ts), the same in every results notebook
    notebook: '02-vanilla-rl.ipynb',
    says: 'one store per preset and regime (`full` and `quick` from the strong base, `full-instruct` and the pipeline ' +
      'study\'s `pipeline-instruct` from the instruct base)',
    check: () => {
      const committed = fs.readdirSync(RESULTS).filter((d) => {
        const dir = path.join(RESULTS, d);
        return fs.statSync(dir).isDirectory() && fs.readdirSync(dir).some((c) => fs.existsSync(path.join(dir, c)) &&
          fs.statSync(path.join(dir, c)).isDirectory() && fs.readdirSync(path.join(dir, c))
          .some((seed) => isFinished(path.join(dir, c, seed))));
      }).sort();
      assert.deepEqual(committed, ['full', 'full-instruct', 'pipeline-instruct', 'quick']);
    },
  },
  {
    notebook: '02-vanilla-rl.ipynb',
    says: '`class` (16 RL steps of 4 prompts',
    check: () => assert.deepEqual([getPreset('class').rlSteps, getPreset('class').promptsPerStep], [16, 4]),
  },
];

for (const c of CLAIMS) {
  test(`${c.notebook} says "${c.says.slice(0, 70)}${c.says.length > 70 ? '…' : ''}", and it holds`, () => {
    assert.ok(markdown(c.notebook).includes(c.says.replace(/\s+/g, ' ')),
      `${c.notebook} no longer says this: update or drop the claim in test/notebooks.claims.test.ts`);
    c.check();
  });
}
