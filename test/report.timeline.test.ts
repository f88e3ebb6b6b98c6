// timeline.ts: the order of a collapse's events in one run, the sentences the notebooks print about it, and the
// marks on the collapse chart, on a hand-made run whose every event step is known.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collapseEvents, collapseVerdict, eventSentence, markEvents, ordered, showcaseSeed } from '../lib/report/figures/timeline';
import { collapseFigure, valAccuracyFigure } from '../lib/report/figures/curves';
import { shadeSftPhases } from '../lib/report/notebook/views';
import type { ExperimentResults } from '../lib/report/store/results';

/**
 * 12 RL steps at global steps 1..12: p(<tool_call>) reaches 0.01 at step 4, p({") falls below 0.9 at step 6,
 * the reward (0.5 for five steps) has a trailing 3-step mean under 0.25 from step 8; p(<|im_end|>) never rises.
 */
function records(): Record<string, unknown>[] {
  return Array.from({ length: 12 }, (_, i) => {
    const step = i + 1;
    return {
      phase: 'grpo', step, globalStep: step, stage: 0,
      reward: step <= 5 ? 0.5 : step === 6 ? 0.3 : 0.05,
      pToolCall: step >= 4 ? 0.02 : 0.001, pImEnd: 0.0005, pJsonOpen: step >= 6 ? 0.5 : 0.99,
      ...(step % 4 === 0 ? { valAccuracy: step >= 8 ? 0 : 0.4 } : {}),
    };
  });
}

function experiment(collapseSteps: (number | null)[]): ExperimentResults {
  const seeds = collapseSteps.map((c, i) => ({
    seed: i + 1, dir: `/nowhere/seed-${i + 1}`, metrics: records(),
    summary: { rl: { collapseStep: c, peakValAccuracy: 0.4, finalValAccuracy: 0 }, eval: {} },
  }));
  // init from a checkpoint: collapseVsStart takes the run's own summary.rl.collapseStep
  return { spec: { name: 'vanilla-rl-lr1e-3', label: 'lr 1e-3', init: { kind: 'checkpoint', path: 'x' } }, seeds } as unknown as ExperimentResults;
}

test('collapseEvents: each event at its first step, in the order they happened; the events that never happened named', () => {
  const e = experiment([8, null]);
  const events = collapseEvents(e.seeds[0], e, null);
  assert.deepEqual(events.map((v) => [v.kind, v.step]), [['toolCall', 4], ['imEnd', null], ['jsonOpen', 6], ['rewardHalved', 8], ['collapse', 8]]);
  assert.deepEqual(ordered(events).map((v) => v.kind), ['toolCall', 'jsonOpen', 'rewardHalved', 'collapse'], 'ties keep the fixed order');
  assert.equal(eventSentence(events), 'step 4: p(<tool_call>) ≥ 0.01 → step 6: p({") < 0.9 → step 8: sampled reward halved → ' +
    'step 8: collapse (validation stays below a quarter of its peak); never: p(<|im_end|>) ≥ 0.01');
  assert.equal(collapseVerdict(e, null), 'collapsed in 1 of 2 seeds (global step 8)');
  assert.equal(showcaseSeed(experiment([null, 9]), null).seed, 2, 'the notebook opens on the first seed that collapsed');
});

test('markEvents: one dotted line and one number per event that happened, close numbers stacked, a strip saying each', () => {
  const e = experiment([8]);
  const fig = markEvents(collapseFigure(e.seeds[0].metrics as never), collapseEvents(e.seeds[0], e, null));
  const shapes = fig.layout.shapes as { x0: number; line: { dash: string } }[];
  const labels = fig.layout.annotations as { x: number; y: number; text: string; xref: string }[];
  assert.deepEqual(shapes.map((s) => s.x0), [4, 6, 8, 8]);
  assert.ok(shapes.every((s) => s.line.dash === 'dot'));
  const numbers = labels.filter((a) => a.xref === 'x');
  assert.deepEqual(numbers.map((a) => a.text), ['<b>1</b>', '<b>2</b>', '<b>3</b>', '<b>4</b>']);
  // the reward-halved and collapse events share step 8: the second number goes a row lower
  assert.notEqual(numbers[2].y, numbers[3].y, 'numbers at one step must not overlap');
  const strip = labels.filter((a) => a.xref === 'paper');
  assert.equal(strip.length, 1);
  assert.equal(strip[0].text, '<b>1</b> p(&lt;tool_call>) ≥ 0.01, step 4 · <b>2</b> p({") &lt; 0.9, step 6 · ' +
    '<b>3</b> sampled reward halved, step 8 · <b>4</b> collapse, step 8');
});

test('shadeSftPhases: bands on a global-step chart; a chart on RL steps (SFT left out) is refused', () => {
  const recs = [{ phase: 'sft', globalStep: 1 }, { phase: 'sft', globalStep: 2 }, ...records().map((r) =>
    ({ ...r, globalStep: (r.globalStep as number) + 2 }))] as never;
  const methods = [{ label: 'ets', config: 'ets', runs: [recs] }];
  const fig = shadeSftPhases(valAccuracyFigure(methods, 'v', { axis: 'global' }), recs);
  assert.deepEqual((fig.layout.shapes as { x0: number; x1: number }[]).map((s) => [s.x0, s.x1]), [[0.5, 2.5]]);
  assert.throws(() => shadeSftPhases(valAccuracyFigure(methods), recs), /counts RL steps/);
});
