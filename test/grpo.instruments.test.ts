// The paper's instruments (the probe, the logit-gradient split, the message states) observe a GRPO step and never
// change it: two trainers from the same weights and seed, one with every instrument on and one with none, sample
// the same rollouts and end with bit-identical weights, OPS (scripted rows) and HBG (hinted rows) included, whose
// scoring passes also serve the split's reads.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { GRPOTrainer } from '../lib/train/grpo/trainer';
import { defaultGRPOConfig, GRPOConfig } from '../lib/train/grpo/config';
import { opsSignal } from '../lib/train/signals/ops';
import { hbgSignal } from '../lib/train/signals/hbg';
import { SyncSignal } from '../lib/train/grpo/signal';
import { tokenizer, tasks, tinyModel } from './helpers';

before(async () => {
  await initBackend({ backend: 'wasm' });
});

const config: GRPOConfig = {
  ...defaultGRPOConfig, groupSize: 4, promptsPerStep: 2, promptsPerMiniBatch: 1, steps: 2, lr: 1e-2, warmupSteps: 0,
  maxContext: 400, maxMessageTokens: 12, probeTasks: 2, memoTasksPerCategory: 0, seed: 7,
};

const weights = (m: ReturnType<typeof tinyModel>) => new Map([...m.params()].map(([k, v]) => [k, Array.from(v.dataSync())]));

for (const [name, signal] of [['vanilla', undefined], ['OPS', opsSignal()], ['HBG', hbgSignal()]] as [string, SyncSignal | undefined][]) {
  test(`${name}: the update is identical with every instrument on or off`, () => {
    const tok = tokenizer();
    const run = (instruments: boolean) => {
      const [model, ref] = [tinyModel(3), tinyModel(3)];
      const trainer = new GRPOTrainer({ model, ref, tokenizer: tok, trainTasks: tasks('train').slice(0, 6),
        valTasks: tasks('test').slice(0, 2), config, signal, instruments });
      const n0 = tf.memory().numTensors;
      const out = [trainer.step(), trainer.step()];
      assert.equal(tf.memory().numTensors, n0, 'two steps leak nothing');
      const w = weights(model);
      trainer.dispose();
      model.dispose();
      ref.dispose();
      return { records: out.map((o) => o.record), messages: out.map((o) => o.trajs.map((t) => t.messages.map((m) => m.content))), w };
    };
    const [on, off] = [run(true), run(false)];
    assert.deepEqual(on.messages, off.messages, 'the same rollouts');
    for (const k of ['reward', 'loss', 'pgLoss', 'kl', 'clipFrac', 'dualClipFrac', 'gradNorm', 'entropy', 'tokensPerTrajectory'] as const) {
      assert.deepEqual(on.records.map((r) => r[k]), off.records.map((r) => r[k]), k);
    }
    for (const [k, v] of on.w) assert.deepEqual(v, off.w.get(k), `weights ${k}`);
    // and the instruments did measure, where they were on
    assert.ok(on.records.every((r) => r.pJsonOpen > 0 && r.healthyCall >= 0) && off.records.every((r) => Number.isNaN(r.pJsonOpen)));
    if (name !== 'vanilla') assert.ok(on.records.some((r) => r.splitPositions >= 0));
  });
}
