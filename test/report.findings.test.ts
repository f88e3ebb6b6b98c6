// Every verdict of every findings rule (lib/report/tables/findings.ts) on a hand-made store whose outcome is known by
// construction: one fixture per verdict, so loosening a rule (calling a loss "not shown", a one-run spike "partly")
// fails here. Accuracies are spread evenly over each category's tasks, so a 40% run passes 40% of any prefix too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExperimentSpec } from '../lib/experiments/registry/spec';
import { loadResults } from '../lib/report/store/results';
import { Verdict, findings, findingsTable, verdictLabel } from '../lib/report/tables/findings';

const ID_CATS = ['base', 'miss_func', 'miss_param', 'long_context'];
const OOD_CATS = ['base', 'miss_param', 'miss_func'];

const spec = (name: string, group: ExperimentSpec['group'], sweepLr?: number): ExperimentSpec => ({
  name, label: name, group, sweepLr, title: name, paper: '',
  init: name === 'base-model' ? { kind: 'checkpoint', path: 'x' } : { kind: 'base' }, stages: () => [],
});
const SPECS: ExperimentSpec[] = [
  spec('base-model', 'method'), spec('fcl-sft', 'method'), spec('vanilla-rl', 'method', 3e-4), spec('ops', 'method'), spec('hbg', 'method'),
  spec('sync-sft', 'method'), spec('ets', 'method'), spec('ets-difflr', 'method'), spec('prs', 'method'),
  spec('vanilla-rl-lr1e-4', 'lr-sweep', 1e-4), spec('vanilla-rl-lr1e-3', 'lr-sweep', 1e-3),
  spec('ops-lr1e-3', 'collapse-rate'), spec('hbg-lr1e-3', 'collapse-rate'), spec('ets-difflr-lr1e-3', 'collapse-rate'),
  spec('prs-lr1e-3', 'collapse-rate'),
];

/** `n` tasks, the passes spread evenly: task i passes when floor((i + 1) acc) > floor(i acc). */
function outcome(acc: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += Math.floor((i + 1) * acc + 1e-9) > Math.floor(i * acc + 1e-9) ? '1' : '0';
  return s;
}
function split(acc: number, cats: string[], n: number) {
  const outcomes = Object.fromEntries(cats.map((c) => [c, outcome(acc, n)]));
  const perCategory = Object.fromEntries(cats.map((c) => [c, { n, accuracy: [...outcomes[c]].filter((x) => x === '1').length / n }]));
  const mean = Object.values(perCategory).reduce((a, p) => a + p.accuracy, 0) / cats.length;
  return { perCategory, mean, states: { healthyCall: 1, healthyResponse: 0, pollution: 0, fullCollapse: 0 }, meanTokens: 1, outcomes };
}

interface RunSpec {
  id: number;
  formatOod?: number;
  /** Greedy validation every 10 RL steps (none: no RL). */
  vals?: number[];
  /** Probe at every RL step. */
  probe?: { pJsonOpen?: number; pImEnd?: number; pToolCall?: number; probeTopOther?: string; pTopOther?: number };
  /** The sampled messages of every sampled step (rollouts-sample.jsonl). */
  messages?: string[];
  idConstrained?: number;
  /** Tasks per category of format-OOD (default TASKS). */
  oodTasks?: number;
  /** Seeds of this config when fewer than the store's (a row still landing). */
  seeds?: number;
}

const TASKS = 100;

/** A store under a temp root: every config of `runs` with `seeds` identical seeds. */
function store(runs: Record<string, RunSpec>, seeds = 3) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-findings-'));
  for (const [config, r] of Object.entries(runs)) {
    for (let seed = 1; seed <= (r.seeds ?? seeds); seed++) {
      const dir = path.join(root, 'full', config, `seed-${seed}`);
      fs.mkdirSync(dir, { recursive: true });
      const evals: Record<string, unknown> = { id: split(r.id, ID_CATS, TASKS) };
      if (r.formatOod !== undefined) evals.format_ood = split(r.formatOod, OOD_CATS, r.oodTasks ?? TASKS);
      if (r.idConstrained !== undefined) evals.id_constrained = split(r.idConstrained, ID_CATS, TASKS);
      const vals = r.vals ?? [];
      const steps = 10 * vals.length;
      const grpo = Array.from({ length: steps }, (_, i) => ({
        phase: 'grpo', stage: 0, step: i + 1, globalStep: i + 1, reward: 0.2, pJsonOpen: 0.99, pImEnd: 0, pToolCall: 0,
        probeTopOther: '</tool_call>', pTopOther: 0.001, ...(r.probe ?? {}),
        ...((i + 1) % 10 === 0 ? { valAccuracy: vals[(i + 1) / 10 - 1] } : {}),
      }));
      const rl = vals.length ? { steps, peakValAccuracy: Math.max(...vals), peakStep: 10, finalValAccuracy: vals[vals.length - 1],
        collapseStep: null, finalStates: { healthyCall: 1, healthyResponse: 0, pollution: 0, fullCollapse: 0 },
        finalProbe: { pJsonOpen: 1, pImEnd: 0, pToolCall: 0 }, finalReward: 0 } : null;
      fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ config, seed, backend: 'cpu', seconds: 1, eval: evals, rl }));
      fs.writeFileSync(path.join(dir, 'metrics.jsonl'), grpo.map((m) => JSON.stringify(m)).join('\n') + (grpo.length ? '\n' : ''));
      if (r.messages && steps) {
        const sample = [1, ...Array.from({ length: steps / 10 }, (_, i) => 10 * (i + 1))].map((step) => JSON.stringify({ stage: 0, step,
          taskId: 't', category: 'base', group: 0, index: 0, reward: 0, errorTurn: 1, messages: r.messages, states: [], scripted: false }));
        fs.writeFileSync(path.join(dir, 'rollouts-sample.jsonl'), sample.join('\n') + '\n');
      }
    }
  }
  return loadResults('full', root, SPECS);
}

const verdict = (runs: Record<string, RunSpec>, id: string, seeds = 3): { verdict: Verdict; evidence: string } => {
  const f = findings(store(runs, seeds)).find((x) => x.id === id)!;
  return { verdict: f.verdict, evidence: f.evidence };
};
function expect(runs: Record<string, RunSpec>, id: string, want: Verdict, pattern?: RegExp) {
  const f = verdict(runs, id);
  assert.equal(f.verdict, want, `${id}: ${f.evidence}`);
  if (pattern) assert.match(f.evidence, pattern);
}

const HELD = [0.4, 0.4, 0.4];
const COLLAPSED = [0.4, 0.05, 0.0];
const BARE = ['<tool_call>', '<tool_call>\n', '<tool_call>', 'Done.'];
const LOOPS = [' to'.repeat(30), '_message'.repeat(10), ' to'.repeat(30), 'Done.'];
const base = { id: 0.4, formatOod: 0.3, vals: undefined };

test('F1: collapse at the main rate is reproduced, only at higher rates partly, a gain inverted, a level run not shown', () => {
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.0, vals: COLLAPSED } }, 'F1', 'reproduced', /collapsed in 3 of 3 seeds/);
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD }, 'vanilla-rl-lr1e-3': { id: 0, vals: COLLAPSED } }, 'F1', 'partly');
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.7, vals: [0.5, 0.6, 0.7] } }, 'F1', 'inverted');
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD } }, 'F1', 'not shown');
  expect({ 'vanilla-rl': { id: 0.4, vals: HELD } }, 'F1', 'not testable');
});

test('F2: judged on the paper\'s signature (bare <tool_call>) and the spike, the lab\'s own mode named', () => {
  const spike = { pImEnd: 0.8, pJsonOpen: 0.1 };
  expect({ 'base-model': base, 'vanilla-rl': { id: 0, vals: COLLAPSED, probe: spike, messages: BARE } }, 'F2', 'reproduced');
  // the spike without the signature (the messages are loops): half the claim
  expect({ 'base-model': base, 'vanilla-rl': { id: 0, vals: COLLAPSED, probe: spike, messages: LOOPS } }, 'F2', 'partly', /repetition loop/);
  // neither: the collapse is another disease, and the evidence says which
  expect({ 'base-model': base, 'vanilla-rl': { id: 0, vals: COLLAPSED, probe: { pJsonOpen: 0.2, probeTopOther: ' to', pTopOther: 0.7 },
    messages: LOOPS } }, 'F2', 'not shown', /repetition loop 75\.0%.*mass from \{" to " to"/);
  // a spike in one run of three is not "partly" (it was before)
  const runs = store({ 'base-model': base, 'vanilla-rl': { id: 0, vals: COLLAPSED, messages: LOOPS } });
  const one = runs.experiments.find((e) => e.spec.name === 'vanilla-rl')!.seeds[0];
  const lines = fs.readFileSync(path.join(one.dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => ({ ...JSON.parse(l), pImEnd: 0.9 }));
  fs.writeFileSync(path.join(one.dir, 'metrics.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const f = findings(loadResults('full', runs.root, SPECS))[1];
  assert.equal(f.verdict, 'not shown', f.evidence);
  assert.match(f.evidence, /≥ 0\.5 at some RL step in 1 of 3/);
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD } }, 'F2', 'not testable');
});

test('F3: collapsed runs that lose the other format are inverted, not "not shown"', () => {
  const collapsed = (formatOod: number) => ({ 'base-model': base, 'vanilla-rl': { id: 0, formatOod, vals: COLLAPSED, idConstrained: 0 } });
  expect(collapsed(0.25), 'F3', 'reproduced', /kept 83\.\d% of the base's score/);
  expect(collapsed(0.0), 'F3', 'inverted', /collapsed − base -30\.0/);
  // below half of the base, but on ten tasks per category the interval does not exclude 0
  expect({ 'base-model': { id: 0.4, formatOod: 0.1, oodTasks: 10 }, 'vanilla-rl': { id: 0, formatOod: 0, oodTasks: 10, vals: COLLAPSED } },
    'F3', 'not shown');
  expect({ 'base-model': { id: 0.4, formatOod: 0 }, 'vanilla-rl': { id: 0, formatOod: 0, vals: COLLAPSED } }, 'F3', 'not testable');
});

test('F4: the central contrast, interleaved − synchronous at the same rate, with its multiple comparisons named', () => {
  const at = (ops: number, hbg: number, ets: number, prs: number) => ({
    'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD }, 'vanilla-rl-lr1e-3': { id: 0, vals: COLLAPSED },
    'ops-lr1e-3': { id: ops, vals: ops > 0.1 ? HELD : COLLAPSED }, 'hbg-lr1e-3': { id: hbg, vals: hbg > 0.1 ? HELD : COLLAPSED },
    'ets-difflr-lr1e-3': { id: ets, vals: ets > 0.1 ? HELD : COLLAPSED }, 'prs-lr1e-3': { id: prs, vals: prs > 0.1 ? HELD : COLLAPSED },
  });
  expect(at(0.0, 0.0, 0.4, 0.4), 'F4', 'reproduced', /4 paired comparisons; with a Bonferroni correction \(each at 98\.75%\)/);
  // a synchronous signal holds while the interleaved ones collapse: the strong regime's pattern
  expect(at(0.3, 0.0, 0.0, 0.0), 'F4', 'inverted');
  expect(at(0.0, 0.0, 0.4, 0.0), 'F4', 'partly');
  expect(at(0.2, 0.2, 0.2, 0.2), 'F4', 'not shown');
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD }, ops: { id: 0.4, vals: HELD } }, 'F4', 'not testable');
});

test('F5: reproduced only when ETS and PRS beat vanilla RL, every synchronous signal and the base', () => {
  const rows = (ets: number, prs: number, rivals: number, syncSft = rivals) => ({
    'base-model': { id: rivals }, 'vanilla-rl': { id: rivals, vals: HELD }, ops: { id: rivals, vals: HELD }, hbg: { id: rivals, vals: HELD },
    'sync-sft': { id: syncSft, vals: HELD }, 'ets-difflr': { id: ets, vals: HELD }, prs: { id: prs, vals: HELD },
  });
  expect(rows(0.5, 0.5, 0.2), 'F5', 'reproduced', /10 paired comparisons/);
  // wins over every rival but the synchronous SFT loss, which beats them: more wins than losses
  expect(rows(0.5, 0.5, 0.2, 0.7), 'F5', 'partly');
  // level with most, below one: a loss and no win
  expect(rows(0.3, 0.3, 0.3, 0.6), 'F5', 'inverted');
  expect(rows(0.3, 0.3, 0.3), 'F5', 'not shown');
});

test('F6: supervised rows must lose the other format against the base AND against vanilla RL', () => {
  const rows = (sft: number, rl: number) => ({ 'base-model': { id: 0.4, formatOod: 0.4 }, 'vanilla-rl': { id: 0.3, formatOod: rl, vals: HELD },
    'fcl-sft': { id: 0.4, formatOod: sft }, 'ets-difflr': { id: 0.4, formatOod: sft, vals: HELD }, prs: { id: 0.4, formatOod: sft, vals: HELD } });
  expect(rows(0.05, 0.4), 'F6', 'reproduced');
  // the strong regime's pattern: SFT loses against the base, but vanilla RL loses as much
  expect(rows(0.1, 0.1), 'F6', 'partly');
  expect(rows(0.4, 0.1), 'F6', 'inverted');
  expect(rows(0.4, 0.4), 'F6', 'not shown');
  expect({ 'base-model': { id: 0.4, formatOod: 0 }, 'vanilla-rl': { id: 0.3, formatOod: 0, vals: HELD }, 'fcl-sft': { id: 0.4, formatOod: 0 } },
    'F6', 'not testable');
});

test('F7: both halves, the GRPO learning rate and ETS\'s SFT rate', () => {
  const rows = (lowLr: number, highLr: number, etsHigh: number, etsLow: number) => ({
    'base-model': base, 'vanilla-rl-lr1e-4': { id: lowLr, vals: HELD }, 'vanilla-rl': { id: 0.3, vals: HELD },
    'vanilla-rl-lr1e-3': { id: highLr, vals: HELD }, 'ets-difflr': { id: etsHigh, vals: HELD }, ets: { id: etsLow, vals: HELD } });
  expect(rows(0.4, 0.0, 0.5, 0.3), 'F7', 'reproduced', /2 paired comparisons/);
  // the committed stores: the rate half holds, ETS's SFT-rate half is level
  expect(rows(0.4, 0.0, 0.3, 0.3), 'F7', 'partly');
  expect(rows(0.0, 0.4, 0.3, 0.3), 'F7', 'inverted');
  expect(rows(0.3, 0.3, 0.3, 0.3), 'F7', 'not shown');
  expect({ 'base-model': base, 'vanilla-rl': { id: 0.3, vals: HELD } }, 'F7', 'not testable');
});

test('findingsTable: a column pair per store', () => {
  const a = store({ 'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD } });
  const b = store({ 'base-model': base, 'vanilla-rl': { id: 0, vals: COLLAPSED } });
  const t = findingsTable([{ label: 'a', store: a }, { label: 'b', store: b }]);
  assert.deepEqual(t.columns.slice(2), ['a', 'a: evidence', 'b', 'b: evidence']);
  assert.deepEqual([t.rows[0][0], t.rows[0][2], t.rows[0][4]], ['F1', 'not shown', 'reproduced']);
});

test('a verdict on rows with fewer seeds than the study\'s is preliminary and names them; complete rows are not', () => {
  const runs = (prsSeeds: number) => ({
    'base-model': base, 'vanilla-rl': { id: 0.4, vals: HELD }, 'vanilla-rl-lr1e-3': { id: 0, vals: COLLAPSED },
    'ops-lr1e-3': { id: 0.3, vals: HELD }, 'hbg-lr1e-3': { id: 0, vals: COLLAPSED },
    'ets-difflr-lr1e-3': { id: 0, vals: COLLAPSED }, 'prs-lr1e-3': { id: 0, vals: COLLAPSED, seeds: prsSeeds },
  });
  const f4 = (prsSeeds: number) => findings(store(runs(prsSeeds))).find((f) => f.id === 'F4')!;
  const short = f4(1);
  assert.equal(short.verdict, 'inverted', short.evidence);
  assert.equal(short.preliminary, 'prs-lr1e-3: 1 of 3');
  assert.equal(verdictLabel(short), 'inverted (preliminary)');
  assert.match(short.evidence, /^Preliminary, rows with fewer seeds than the study's \(prs-lr1e-3: 1 of 3\)\. /);
  const full = f4(3);
  assert.equal(full.preliminary, undefined);
  assert.equal(verdictLabel(full), 'inverted');
  // only the rows a rule compares count: F1 reads vanilla-rl and the base, both complete
  assert.equal(findings(store(runs(1))).find((f) => f.id === 'F1')!.preliminary, undefined);
  const t = findingsTable([{ label: 'a', store: store(runs(1)) }]);
  assert.equal(t.rows.find((r) => r[0] === 'F4')![2], 'inverted (preliminary)');
});
