// GRPO learns: the equivalence tests (loss = the verl reference, exact resume) cannot tell a trainer that learns
// from one that pushes the wrong way, so this one trains. A tiny model is fine-tuned on the four shortest training
// tasks until it half-knows them: two of them ask for a stock price (GOOG and TSLA), and the model mixes the two
// symbols up, so on the GOOG task its sampled reward sits near 0.4. GRPO on that task alone, ten steps, must lift
// the sampled reward by a set margin. Broken locally, it fails: with the advantage sign flipped in grpoAdvantages
// the reward went 0.39 -> 0.00, with the loss mask inverted (prompt and tool responses trained instead of the
// policy's tokens) 0.39 -> 0.03. A mask that also trains the tool responses still learns here (0.39 -> 0.64):
// train.rollout.test.ts is the test that catches that one. docs/design.md A.4 describes the algorithm.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { teacherTrajectory } from '../lib/envs/teacher';
import { teacherTokenCount } from '../lib/envs/generator';
import { Episode } from '../lib/envs/episode';
import { Task } from '../lib/envs/task';
import { GPT } from '../lib/model/gpt';
import { Rng } from '../lib/prng';
import { encodeConversation } from '../lib/train/encode';
import { trainSFT } from '../lib/train/sft';
import { rollout } from '../lib/train/rollout';
import { GRPOTrainer } from '../lib/train/grpo/trainer';
import { defaultGRPOConfig, GRPOConfig } from '../lib/train/grpo/config';
import { tokenizer, tasks, tinyModel } from './helpers';

before(async () => {
  await initBackend({ backend: 'wasm' });
});

const EPISODE = { maxAssistantMessages: 6, maxMessageTokens: 48, maxContext: 600 };

/** Mean reward of `k` rollouts of `task` at temperature 1 from a fixed PRNG stream (the same before and after). */
function sampledReward(model: GPT, task: Task, k: number): number {
  const episodes = Array.from({ length: k }, () => new Episode(task, { syntax: 'json', maxAssistantMessages: EPISODE.maxAssistantMessages }));
  const trajs = rollout(model, tokenizer(), episodes, {
    rng: new Rng(7), config: { temperature: 1, greedy: false, maxMessageTokens: EPISODE.maxMessageTokens, maxContext: EPISODE.maxContext },
  });
  return trajs.reduce((a, t) => a + t.reward, 0) / k;
}

test('GRPO lifts the sampled reward of a half-learned training task by >= 0.15 in 10 steps', async (t) => {
  const tok = tokenizer();
  const shortest = tasks('train').slice().sort((a, b) => teacherTokenCount(a) - teacherTokenCount(b)).slice(0, 4);
  const task = shortest[0];
  assert.match(task.id, /^train-base-/, 'the shortest training task is a one-call base task');

  const model = tinyModel(1, { nEmbd: 64, nHead: 2 });
  await trainSFT(model, shortest.map((t) => encodeConversation(tok, teacherTrajectory(t))),
    { lr: 1e-2, epochs: 40, batchSize: 4, warmupRatio: 0.05, seed: 1 }, { progress: false });
  const start = sampledReward(model, task, 64);
  assert.ok(start > 0.1 && start < 0.7, `the fine-tuned start must half-know the task (sampled reward ${start})`);

  // the paper's loss (clip 0.2, dual clip 3) at a tiny model's rate; three PPO epochs per batch of rollouts so that
  // ten steps are enough (the clipped ratio is what keeps the later epochs close to the sampler)
  const config: GRPOConfig = {
    ...defaultGRPOConfig, ...EPISODE, groupSize: 16, promptsPerStep: 1, promptsPerMiniBatch: 1, ppoEpochs: 3,
    steps: 10, lr: 1e-3, warmupSteps: 2, valEvery: 1000, probeTasks: 1, memoTasksPerCategory: 0, seed: 3,
  };
  const trainer = new GRPOTrainer({ model, ref: null, tokenizer: tok, trainTasks: [task], valTasks: [task], config });
  const tensors = tf.memory().numTensors;
  const rewards: number[] = [];
  for (let s = 0; s < config.steps; s++) rewards.push(trainer.step().record.reward);
  assert.equal(tf.memory().numTensors, tensors, 'GRPO steps leaked tensors');
  const end = sampledReward(model, task, 64);
  assert.ok(end - start >= 0.15, `sampled reward ${start.toFixed(3)} -> ${end.toFixed(3)} (per-step rollout rewards ${rewards.map((r) => r.toFixed(2)).join(' ')})`);
  t.diagnostic(`sampled reward on ${task.id}: ${start.toFixed(3)} -> ${end.toFixed(3)}`);
  trainer.dispose();
  model.dispose();
});
