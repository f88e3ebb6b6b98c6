// `toolrl bench` end to end at a tiny size: every part measured, the report's figures present and positive, the
// Backends table built from them, no tensors left behind; and the PyTorch anchor's failure named clearly.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { benchMarkdown, formatBench, runBench } from '../lib/cli/bench';
import { runAnchor } from '../lib/bench/anchor';

before(async () => {
  await initBackend({ backend: process.env.TOOLRL_BACKEND ?? 'wasm' });
});

test('runBench: training, sampling, rollout and a GRPO step from both bases, one run each, in one report', () => {
  const before = tf.memory().numTensors;
  // 32x1x2 is no base's shape: the rollout and GRPO parts run an untrained model of it
  const r = runBench({ runs: 1, dataDir: 'data', model: '32x1x2', prompts: 1, sharePrompts: true });
  assert.equal(tf.memory().numTensors, before, 'the benchmark leaked tensors');
  for (const k of ['train_tokens_per_s', 'sample_tokens_per_s', 'rollout_tokens_per_s'] as const) {
    assert.ok((r[k] ?? 0) > 0, `${k}: ${r[k]}`);
  }
  assert.deepEqual(Object.keys(r.grpo ?? {}).sort(), ['instruct', 'strong']);
  for (const g of Object.values(r.grpo!)) {
    assert.equal(g.trajectories, 8);
    assert.equal(g.runs.length, 1);
    const phases = Object.values(g.phases).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(phases - g.seconds) < 0.01 + 0.01 * g.seconds, `phases add up to the step: ${phases} vs ${g.seconds}`);
    assert.match(g.policy, /untrained/);
  }
  const table = benchMarkdown(r).split('\n');
  assert.equal(table.length, 5, 'header, rule, our row, blank line, footnote (no anchor row without --anchor)');
  assert.match(table[2], /^\| d32 x 1 x 2 \| \w+ \| [\d,]+ \| [\d,]+ \| [\d.]+ s \([\d.]+\) \| [\d.]+ s \([\d.]+\) \|$/);
  assert.match(formatBench(r), /grpo step .* from the instruct base, 8 trajectories/);
});

test('runBench --parts: only the parts asked for', () => {
  const r = runBench({ runs: 1, dataDir: 'data', model: '32x1x2', parts: ['sample'] });
  assert.ok((r.sample_tokens_per_s ?? 0) > 0);
  assert.equal(r.train_tokens_per_s, undefined);
  assert.equal(r.rollout_tokens_per_s, undefined);
  assert.equal(r.grpo, undefined);
});

test('the PyTorch anchor names the interpreter and what it needs when it cannot run', () => {
  assert.throws(() => runAnchor('/nonexistent/python3', '32x1x2', 100, 1), /--anchor \/nonexistent\/python3: .*ENOENT/);
  // an interpreter without torch (or one that fails the script) says to install it
  assert.throws(() => runAnchor('false', '32x1x2', 100, 1), /--anchor false: scripts\/bench-torch\.py failed .*pip install torch/);
});
