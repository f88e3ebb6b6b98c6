import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { argumentValueSpans, balancedTasks, calibrate, formatCalibration, groupShares } from '../lib/experiments/calibrate';
import { topOtherSplit } from '../lib/diagnostics/gradsplit';
import { probeContexts } from '../lib/diagnostics/probe';
import { zeroRewardGroupShare, zeroVarianceGroupShare } from '../lib/train/grpo/advantages';
import { renderToolCalls } from '../lib/format/toolcall';
import { Episode } from '../lib/envs/episode';
import { tasks, tinyModel, tokenizer } from './helpers';

before(async () => {
  await initBackend({ backend: 'cpu' });
});

test('group shares: mixed groups carry signal, all-fail and all-success do not', () => {
  const r = [0, 0, 0, 0, /* */ 1, 1, 1, 1, /* */ 0, 1, 0, 0, /* */ 0, 0, 0, 0];
  assert.deepEqual(groupShares(r, 4), { mixed: 0.25, allFail: 0.5, allSuccess: 0.25 });
  assert.equal(zeroVarianceGroupShare(r, 4), 0.75);
  assert.equal(zeroRewardGroupShare(r, 4), 0.5, 'all-success groups are not zero-reward groups');
});

test('argument-value spans: the value tokens of each call, not keys or punctuation', () => {
  const tok = tokenizer();
  // a real ground-truth call with two or more string/number arguments
  const call = tasks('train').flatMap((t) => t.turns.flatMap((u) => u.gt))
    .find((c) => Object.keys(c.arguments).length >= 2 && Object.values(c.arguments).every((v) => typeof v === 'string' || typeof v === 'number'))!;
  const pieces = tok.encode(renderToolCalls([call], 'json')).map((id) => tok.piece(id));
  const spans = argumentValueSpans([...pieces, '<|im_end|>']);
  assert.equal(spans.length, 1);
  assert.equal(spans[0].map((i) => pieces[i]).join(''), Object.values(call.arguments).map(String).join(''));
  assert.ok(!spans[0].some((i) => pieces[i] === call.name), 'the function name is not an argument value');
});

test('balanced tasks alternate over categories', () => {
  const picked = balancedTasks(tasks('train'), 6);
  const cats = picked.map((t) => t.category);
  assert.equal(picked.length, 6);
  for (const c of new Set(cats)) assert.equal(cats.filter((x) => x === c).length, 2);
});

test('top-other split: the push on each position\'s own top non-probe token', () => {
  // position 0 sampled its top-other token (self), position 1 sampled something else (other)
  const r = topOtherSplit([7, 3], [-1, 2], [{ id: 7, p: 0.2 }, { id: 9, p: 0.5 }]);
  assert.ok(Math.abs(r.self - -1 * (1 - 0.2)) < 1e-12);
  assert.ok(Math.abs(r.other - -2 * 0.5) < 1e-12);
  assert.ok(r.id === 7 || r.id === 9);
  assert.equal(topOtherSplit([], [], []).id, null);
});

test('probe contexts end with the paper\'s `<tool_call>\\n`', () => {
  const tok = tokenizer();
  const ctx = probeContexts(tok, [new Episode(tasks('train')[0]).initialMessages()])[0];
  assert.deepEqual(ctx.slice(-2), [tok.id('<tool_call>'), tok.id('\n')]);
});

test('calibrate runs every measurement on a tiny model without leaking tensors', () => {
  const tok = tokenizer();
  const model = tinyModel(3);
  const before = tf.memory().numTensors;
  const r = calibrate(model, tok, {
    train: tasks('train'), id: tasks('test').slice(0, 2), formatOod: tasks('format_ood').slice(0, 1),
    contentOod: tasks('content_ood').slice(0, 1),
  }, { tasks: 3, groupSize: 2, batchTasks: 3, seed: 5, evalPerCategory: 0 }, () => undefined);
  assert.equal(tf.memory().numTensors, before, 'calibrate leaked tensors');
  assert.equal(r.sampled.tasks, 3);
  assert.equal(r.sampled.trajectories, 6);
  const s = r.sampled;
  assert.ok(Math.abs(s.mixedGroups + s.allFailGroups + s.allSuccessGroups - 1) < 1e-9);
  assert.ok(s.entropy > 0, 'a random model samples with positive entropy');
  assert.ok(r.argumentValues.tokens > 0 && r.argumentValues.tokenAccuracy >= 0 && r.argumentValues.tokenAccuracy <= 1);
  assert.equal(r.probe.top.length, 5);
  assert.ok(r.probe.top[0].p >= r.probe.top[4].p);
  for (const k of ['sampledSuccess', 'mixedGroups', 'greedyId', 'formatOod', 'contentOod']) assert.equal(typeof r.targets[k].met, 'boolean');
  assert.match(formatCalibration(r), /groups mixed/);
  model.dispose();
});
