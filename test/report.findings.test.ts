// The findings' rules on synthetic stores whose outcome is known by construction: a vanilla run that collapses
// (F1 reproduced), one that learns above the base (F1 inverted), and the verdicts that need a missing precondition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExperimentSpec } from '../lib/experiments/spec';
import { loadResults } from '../lib/report/results';
import { findings, findingsTable } from '../lib/report/findings';

const CATS = ['base', 'miss_func', 'miss_param', 'long_context'];
const spec = (name: string, group: ExperimentSpec['group'], sweepLr?: number): ExperimentSpec => ({
  name, label: name, group, sweepLr, title: name, paper: '', init: name === 'base-model' ? { kind: 'checkpoint', path: 'x' } : { kind: 'base' },
  stages: () => [],
});
const SPECS = [spec('base-model', 'method'), spec('vanilla-rl', 'method', 3e-4), spec('vanilla-rl-lr1e-3', 'lr-sweep', 1e-3)];

/** 40 tasks per category, the first round(acc * 40) passed. */
function evalOf(acc: number) {
  const n = Math.round(acc * 40);
  const outcomes = Object.fromEntries(CATS.map((c) => [c, '1'.repeat(n).padEnd(40, '0')]));
  const perCategory = Object.fromEntries(CATS.map((c) => [c, { n: 40, accuracy: n / 40 }]));
  const states = { healthyCall: 1, healthyResponse: 0, pollution: 0, fullCollapse: 0 };
  return { perCategory, mean: n / 40, states, meanTokens: 1, outcomes };
}

/** A store in which the base scores 40% and vanilla RL ends at `final` with validation `vals` (every 10 steps). */
function store(final: number, vals: number[]) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-findings-'));
  const write = (config: string, seed: number, acc: number, metrics: object[], rl: object | null) => {
    const dir = path.join(root, 'full', config, `seed-${seed}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ config, seed, backend: 'cpu', seconds: 1, eval: { id: evalOf(acc) }, rl }));
    fs.writeFileSync(path.join(dir, 'metrics.jsonl'), metrics.map((m) => JSON.stringify(m)).join('\n') + '\n');
  };
  const rl = { steps: 10, peakValAccuracy: Math.max(...vals), peakStep: 10, finalValAccuracy: vals[vals.length - 1], collapseStep: null,
    finalStates: { healthyCall: 1, healthyResponse: 0, pollution: 0, fullCollapse: 0 }, finalProbe: { pJsonOpen: 1, pImEnd: 0, pToolCall: 0 }, finalReward: 0 };
  const grpo = vals.map((v, i) => ({ phase: 'grpo', step: 10 * (i + 1), globalStep: 10 * (i + 1), reward: v, pJsonOpen: 1, pImEnd: 0, pToolCall: 0, valAccuracy: v }));
  for (const seed of [1, 2, 3]) {
    write('base-model', seed, 0.4, [], null);
    write('vanilla-rl', seed, final, grpo, rl);
  }
  return loadResults('full', root, SPECS);
}

test('F1: a vanilla run whose validation falls to ~0 and stays there is a reproduced collapse', () => {
  const f = findings(store(0.0, [0.4, 0.3, 0.05, 0.0, 0.0]));
  assert.equal(f[0].id, 'F1');
  assert.equal(f[0].verdict, 'reproduced', f[0].evidence);
  assert.match(f[0].evidence, /collapsed in 3 of 3 seeds/);
});

test('F1: vanilla RL that ends above the base without collapsing is inverted; F2-F3 need a collapse', () => {
  const f = findings(store(0.7, [0.5, 0.6, 0.7]));
  assert.equal(f[0].verdict, 'inverted', f[0].evidence);
  assert.equal(f[1].verdict, 'not testable');
  assert.equal(f[2].verdict, 'not testable');
  // no signals, no sweep of two points or more: the rest cannot be judged
  for (const x of f.slice(3)) assert.equal(x.verdict, 'not testable', `${x.id}: ${x.evidence}`);
});

test('F1: no difference the intervals support and no collapse is "not shown"; the table has a column pair per store', () => {
  const s = store(0.4, [0.4, 0.4, 0.4]);
  assert.equal(findings(s)[0].verdict, 'not shown');
  const t = findingsTable([{ label: 'a', store: s }, { label: 'b', store: store(0.0, [0.4, 0.0, 0.0]) }]);
  assert.deepEqual(t.columns.slice(2), ['a', 'a: evidence', 'b', 'b: evidence']);
  assert.deepEqual(t.rows[0].slice(0, 1).concat([t.rows[0][2], t.rows[0][4]]), ['F1', 'not shown', 'reproduced']);
});
