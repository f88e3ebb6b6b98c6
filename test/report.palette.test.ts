// palette.ts: a series means the same colour in every chart, through the figure functions the notebooks call.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MethodRuns, collapseFigure, probeFigure, statesFigure, gradSplitFigure, valAccuracyFigure, methodPanels }
  from '../lib/report/figures/curves';
import { PlotlyFigure } from '../lib/report/figures/plotly';
import { STATE_COLOURS, TOKEN_COLOURS, configStyles, parseConfigName } from '../lib/report/figures/palette';

/** Six RL steps with every probed and state field, validation every other step. */
function records(): Record<string, unknown>[] {
  return Array.from({ length: 6 }, (_, i) => ({
    phase: 'grpo', step: i + 1, globalStep: i + 1, stage: 0, reward: 0.5, pJsonOpen: 0.9, pImEnd: 0.01,
    pToolCall: 0.001, pTopOther: 0.05, healthyCall: 0.6, healthyResponse: 0.2, pollution: 0.1, fullCollapse: 0.1,
    selfJsonOpen: 1, otherJsonOpen: -1, selfImEnd: 0.5, otherImEnd: -0.5, selfToolCall: 0.1, otherToolCall: -0.1,
    ...(i % 2 ? { valAccuracy: 0.4 } : {}),
  }));
}

/** name -> colour of every trace with a legend entry. */
function colours(fig: PlotlyFigure): Map<string, string> {
  const out = new Map<string, string>();
  for (const d of fig.data) {
    if (d.showlegend === false) continue;
    out.set(String(d.name), String((d.line as { color: string }).color));
  }
  return out;
}

function colourOf(fig: PlotlyFigure, startsWith: string): string {
  const hit = [...colours(fig)].find(([n]) => n.startsWith(startsWith));
  assert.ok(hit, `no trace named ${startsWith}... in ${[...colours(fig).keys()].join(', ')}`);
  return hit[1];
}

const runs = (config: string, label = config, lr?: number): MethodRuns =>
  ({ label, config, lr, runs: [records() as never], seeds: [1] });

test("each probed token has one colour in notebook 02's collapse chart, 06's probe chart and the gradient split", () => {
  const r = records() as never;
  const collapse = collapseFigure(r);
  const probe = probeFigure(r);
  assert.equal(colourOf(collapse, 'p({")'), TOKEN_COLOURS.jsonOpen);
  assert.equal(colourOf(probe, 'p({")'), TOKEN_COLOURS.jsonOpen);
  assert.equal(colourOf(collapse, 'p(<|im_end|>)'), colourOf(probe, 'p(<|im_end|>)'));
  assert.equal(colourOf(collapse, 'p(<tool_call>)'), colourOf(probe, 'p(<tool_call>)'));
  assert.equal(colourOf(gradSplitFigure(r), '<|im_end|> self'), TOKEN_COLOURS.imEnd);
  assert.equal(colourOf(statesFigure(r), 'healthy call'), STATE_COLOURS.healthyCall);
  assert.equal(colourOf(statesFigure(r), 'full collapse'), STATE_COLOURS.fullCollapse);
});

test("lr 1e-3 has one colour in notebook 02's comparison (configs) and notebook 12's sweep (rates)", () => {
  const nb02 = valAccuracyFigure([runs('vanilla-rl'), runs('vanilla-rl-lr1e-3'), runs('vanilla-rl-lr3e-3')]);
  const nb12 = valAccuracyFigure([runs('vanilla-rl-lr1e-4', 'lr 1e-4', 1e-4), runs('vanilla-rl', 'lr 3e-4', 3e-4),
    runs('vanilla-rl-lr1e-3', 'lr 1e-3', 1e-3), runs('vanilla-rl-lr3e-3', 'lr 3e-3', 3e-3)]);
  assert.equal(colourOf(nb02, 'vanilla-rl-lr1e-3'), colourOf(nb12, 'lr 1e-3'));
  assert.equal(colourOf(nb02, 'vanilla-rl-lr3e-3'), colourOf(nb12, 'lr 3e-3'));
  assert.equal(colourOf(nb02, 'vanilla-rl ('), colourOf(nb12, 'lr 3e-4'), 'the main rate, named or not');
});

test("a method has one colour in notebook 06's figures and notebook 12's overview, whatever else is drawn", () => {
  const nb06 = valAccuracyFigure([runs('vanilla-rl-lr1e-3'), runs('ops-lr1e-3')]);
  const nb12 = valAccuracyFigure(['vanilla-rl', 'fcl-sft-rl', 'ops', 'hbg', 'sync-sft', 'ets', 'prs']
    .map((c) => runs(c)));
  assert.equal(colourOf(nb06, 'ops-lr1e-3'), colourOf(nb12, 'ops ('));
  assert.equal(colourOf(nb06, 'vanilla-rl-lr1e-3'), colourOf(nb12, 'vanilla-rl ('));
  const all = [...colours(nb12).values()];
  assert.equal(new Set(all).size, all.length, 'seven methods, seven colours');
});

test('configStyles: a variant keeps its family colour with another dash; unknown configs take unused colours', () => {
  assert.deepEqual(parseConfigName('vanilla-rl-lr1e-3'), { family: 'vanilla-rl', variant: '', lr: 1e-3 });
  assert.deepEqual(parseConfigName('ops-luffy'), { family: 'ops', variant: '-luffy', lr: undefined });
  assert.deepEqual(parseConfigName('fcl-sft-rl'), { family: 'fcl-sft-rl', variant: '', lr: undefined });
  const [ops, luffy, mystery] = configStyles(['ops', 'ops-luffy', 'mystery']);
  assert.equal(ops.color, luffy.color);
  assert.notEqual(ops.dash, luffy.dash);
  assert.ok(mystery.color !== ops.color, 'a config with no colour of its own never borrows a used one');
});

test('methodPanels: at most six lines a panel, vanilla GRPO in every one, each method once, in as even panels as fit', () => {
  const names = ['fcl-sft', 'vanilla-rl', 'fcl-sft-rl', 'ops', 'ops-luffy', 'hbg', 'sync-sft', 'ets', 'ets-difflr', 'prs',
    'guard', 'ace-sft', 'ace-sft-rl', 'base'];
  const panels = methodPanels(names.map((c) => runs(c)));
  assert.ok(panels.every((p) => p.length <= 6 && p[0].config === 'vanilla-rl'));
  assert.deepEqual(panels.map((p) => p.length), [6, 5, 5]);
  assert.deepEqual(panels.flatMap((p) => p.slice(1).map((m) => m.config)).sort(),
    names.filter((n) => n !== 'vanilla-rl').sort());
  assert.deepEqual(methodPanels([runs('a'), runs('b')]).map((p) => p.length), [2]);
  const opsIn = (i: number) => colourOf(valAccuracyFigure(panels[i]), 'ops (');
  assert.equal(opsIn(0), configStyles(['ops'])[0].color, 'a method keeps its colour in its panel');
});
