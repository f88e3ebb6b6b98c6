import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { Rng } from '../lib/prng';
import { Episode } from '../lib/envs/episode';
import { teacherAssistantMessages, teacherTrajectory } from '../lib/envs/teacher';
import { IM_END, TOOL_CALL_OPEN } from '../lib/format/tokens';
import { rollout, structuralMask, jsonStartMask } from '../lib/train/rollout';
import { encodeConversation } from '../lib/train/encode';
import { tokenizer, tasks, tinyModel } from './helpers';

before(async () => {
  await initBackend({ backend: 'wasm' });
});

const cfg = { maxMessageTokens: 24, maxContext: 420 };

test('rollout: masks cover exactly the assistant messages, each closed by <|im_end|>', () => {
  const tok = tokenizer();
  const model = tinyModel();
  const ts = tasks('train').slice(0, 3);
  const eps = ts.flatMap((t) => [new Episode(t), new Episode(t)]);
  const before = tf.memory().numTensors;
  const trajs = rollout(model, tok, eps, { rng: new Rng(3), config: cfg });
  assert.equal(tf.memory().numTensors, before, 'rollout leaked tensors');
  const imEnd = tok.id(IM_END);
  for (const t of trajs) {
    assert.equal(t.ids.length, t.lossMask.length);
    assert.ok(t.ids.length <= cfg.maxContext);
    const inMessages = new Array(t.ids.length).fill(0);
    for (const m of t.messages) {
      assert.equal(t.ids[m.end - 1], imEnd, 'each message ends with <|im_end|>');
      for (let i = m.start; i < m.end; i++) inMessages[i] = 1;
    }
    for (let i = 0; i < t.ids.length; i++) {
      // a message cut at maxMessageTokens is closed by a masked <|im_end|> the model did not choose
      if (t.lossMask[i] === 1) assert.equal(inMessages[i], 1, `trained token ${i} outside a message`);
      if (inMessages[i] === 1 && t.lossMask[i] === 0) assert.equal(t.ids[i], imEnd);
    }
    assert.ok(t.promptLength > 0 && t.lossMask.slice(0, t.promptLength).every((m) => m === 0));
    assert.ok(t.reward === 0 || t.reward === 1);
  }
  model.dispose();
});

test('rollout: same seed gives identical samples; another seed differs', () => {
  const tok = tokenizer();
  const model = tinyModel();
  const ts = tasks('train').slice(0, 2);
  const run = (seed: number) => rollout(model, tok, ts.map((t) => new Episode(t)), { rng: new Rng(seed), config: cfg }).map((t) => t.ids.join(','));
  assert.deepEqual(run(5), run(5));
  assert.notDeepEqual(run(5), run(6));
  model.dispose();
});

test('rollout: rows that share a prompt read it once and sample exactly as if each had read its own', () => {
  const tok = tokenizer();
  const model = tinyModel();
  const ts = tasks('train').slice(0, 3);
  const episodes = () => ts.flatMap((t) => Array.from({ length: 4 }, () => new Episode(t)));
  const passes = { shared: 0, each: 0 };
  const run = (sharePrompts: boolean) => {
    const n0 = tf.memory().numTensors;
    const orig = model.append.bind(model);
    let appended = 0;
    model.append = (c, tokens) => { appended += tokens.reduce((a, r) => a + r.length, 0); return orig(c, tokens); };
    try {
      const trajs = rollout(model, tok, episodes(), { rng: new Rng(3), config: { ...cfg, sharePrompts } });
      assert.equal(tf.memory().numTensors, n0, 'no tensor leaks');
      passes[sharePrompts ? 'shared' : 'each'] = appended;
      return trajs.map((t) => [t.ids.join(','), t.sampleLogProbs.map((x) => x.toFixed(5)).join(','), t.reward]);
    } finally {
      model.append = orig;
    }
  };
  assert.deepEqual(run(true), run(false));
  assert.ok(passes.shared < passes.each - 2 * 3 * 100, `tokens read: ${passes.shared} shared vs ${passes.each}`);
  model.dispose();
});

test('rollout: a scripted teacher row reproduces the teacher conversation token for token, reward 1', () => {
  const tok = tokenizer();
  const model = tinyModel();
  for (const t of [tasks('train')[0], tasks('train').find((x) => x.category === 'miss_func')!, tasks('train').find((x) => x.category === 'miss_param')!]) {
    const [traj] = rollout(model, tok, [new Episode(t)], {
      rng: new Rng(1), config: { maxContext: 1024 },
      scripts: [{ messages: teacherAssistantMessages(t) }],
    });
    assert.equal(traj.reward, 1, t.id);
    const enc = encodeConversation(tok, teacherTrajectory(t));
    assert.deepEqual(traj.ids, enc.ids, 'rollout and SFT encoding agree');
    assert.deepEqual(traj.lossMask, enc.lossMask);
    assert.ok(traj.messages.every((m) => m.scripted && m.state !== 'fullCollapse'));
    assert.equal(traj.offPolicy.reduce((a, b) => a + b, 0), enc.lossMask.reduce((a, b) => a + b, 0));
  }
  model.dispose();
});

test('constrained decoding never emits <|im_end|> or <tool_call> right after <tool_call>\\n', () => {
  const tok = tokenizer();
  const model = tinyModel(2);
  const open = tok.id(TOOL_CALL_OPEN);
  const newline = tok.id('\n');
  const imEnd = tok.id(IM_END);
  // force every message to open with `<tool_call>\n` (ban all else at positions 0 and 1), then apply the mask
  const allBut = (keep: number) => Array.from({ length: tok.size }, (_, i) => i).filter((i) => i !== keep);
  const structural = structuralMask(tok);
  const ts = tasks('train').slice(0, 4);
  const trajs = rollout(model, tok, ts.map((t) => new Episode(t)), {
    rng: new Rng(1), config: { ...cfg, greedy: true, temperature: 0 },
    logitMask: (row, soFar) => (soFar.length === 0 ? allBut(open) : soFar.length === 1 ? allBut(newline) : structural(row, soFar)),
  });
  let checked = 0;
  for (const t of trajs) {
    for (const m of t.messages) {
      assert.equal(t.ids[m.start], open);
      if (m.end - m.start > 2) {
        assert.equal(t.ids[m.start + 1], newline);
        assert.notEqual(t.ids[m.start + 2], imEnd);
        assert.notEqual(t.ids[m.start + 2], open);
        checked++;
      }
    }
  }
  assert.ok(checked > 0);
  model.dispose();
});

test('the json-start probe allows only {" right after <tool_call>\\n, nothing elsewhere', () => {
  const tok = tokenizer();
  const mask = jsonStartMask(tok);
  const banned = mask(0, tok.encode('<tool_call>\n')) as number[];
  assert.equal(banned.length, tok.size - 1);
  assert.ok(!banned.includes(tok.id('{"')));
  assert.ok(banned.includes(tok.id(IM_END)) && banned.includes(tok.id('{')));
  assert.equal(mask(0, []), null);
  assert.equal(mask(0, tok.encode('<tool_call>')), null, 'the tag alone is not the probe context');
  assert.equal(mask(0, tok.encode('<tool_call>\n{"')), null);
});
