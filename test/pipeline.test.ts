// The paper's pipeline differences (lib/train/pipeline.ts, docs/design.md E): each option changes exactly what it
// claims, and with every option off (the default) a rollout and an update are those of the exact pipeline.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { Rng } from '../lib/prng';
import { Episode } from '../lib/envs/episode';
import { IM_END, TOOL_CALL_OPEN } from '../lib/format/tokens';
import { rollout } from '../lib/train/rollout';
import { LogitMask, Trajectory } from '../lib/train/trajectory';
import { defaultPipelineConfig, roundLogits, toBf16 } from '../lib/train/pipeline';
import { disposeMiniBatches, prepareMiniBatches } from '../lib/train/grpo/prepare';
import { miniBatchGrads } from '../lib/train/grpo/update';
import { scoreBatch } from '../lib/train/grpo/scoring';
import { disposeGrads } from '../lib/train/optim';
import { pipelineOverrides } from '../lib/experiments/run/overrides';
import { tokenizer, tasks, tinyModel } from './helpers';

before(async () => {
  await initBackend({ backend: 'wasm' });
});

const cfg = { maxMessageTokens: 24, maxContext: 500 };
const all = (n: number) => Array.from({ length: n }, (_, i) => i);

/** A mask that makes message k of the (single) row be exactly `messages[k]` (token ids, its <|im_end|> last). */
function forcing(messages: number[][], vocab: number): LogitMask {
  let k = -1;
  return (_row, soFar) => {
    if (soFar.length === 0) k++;
    const want = messages[Math.min(k, messages.length - 1)][soFar.length];
    return want === undefined ? null : all(vocab).filter((i) => i !== want);
  };
}

test('every option off is the exact pipeline: the same rollouts as without the options', () => {
  const tok = tokenizer();
  const model = tinyModel(4);
  const eps = () => tasks('train').slice(0, 4).map((t) => new Episode(t));
  const plain = rollout(model, tok, eps(), { rng: new Rng(5), config: cfg });
  const off = rollout(model, tok, eps(), { rng: new Rng(5), config: cfg, pipeline: defaultPipelineConfig });
  assert.deepEqual(off, plain);
  assert.ok(plain.every((t) => !t.rescore));
  model.dispose();
  assert.deepEqual(pipelineOverrides(undefined, {}), defaultPipelineConfig);
  assert.equal(pipelineOverrides({ retokenize: true }, { 'pipeline.bf16Sampler': true }).bf16Sampler, true);
  assert.throws(() => pipelineOverrides(undefined, { 'pipeline.bf16': true }), /pipeline\.bf16: no such field.*retokenize/);
  assert.throws(() => pipelineOverrides(undefined, { 'pipeline.retokenize': 1 }), /pipeline\.retokenize must be true or false, got 1/);
});

test('E1 closedCallsOnly: a bare <tool_call> ends the turn like a reply; a closed block is still a call', () => {
  const task = tasks('train').find((t) => t.turns.length >= 2)!;
  for (const closed of [false, true]) {
    const ep = new Episode(task, { closedCallsOnly: closed });
    const step = ep.step('<tool_call>\n');
    assert.equal(step.endedTurn, closed, `closedCallsOnly ${closed}`);
    assert.equal(ep.turnIndex, closed ? 1 : 0);
    if (!closed) assert.match(step.observation!.content, /unbalanced <tool_call>/);
    const call = new Episode(task, { closedCallsOnly: closed }).step('<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>\n');
    assert.equal(call.endedTurn, false, 'a closed block is a call either way');
  }
  // format-OOD (python syntax) is not touched
  const py = new Episode(task, { syntax: 'python', closedCallsOnly: true }).step('[ls()]');
  assert.equal(py.endedTurn, false);
});

test('E2 retokenize: a non-canonical sample is trained as its re-encoding, and the next turn reads that', () => {
  const tok = tokenizer();
  const model = tinyModel(6);
  const task = tasks('train')[0];
  // the first message spells {" as { then " (what BPE would never produce), then ends; the second is free
  const first = [tok.id(TOOL_CALL_OPEN), tok.id('\n'), tok.id('{'), tok.id('"'), tok.id('name'), tok.id(IM_END)];
  const run = (retokenize: boolean) => rollout(model, tok, [new Episode(task)], {
    rng: new Rng(9), config: cfg, logitMask: forcing([first, []], tok.size), pipeline: { retokenize } })[0];
  const [exact, paper] = [run(false), run(true)];
  const m0 = (t: Trajectory) => t.ids.slice(t.messages[0].start, t.messages[0].end);
  assert.deepEqual(m0(exact), first, 'the exact pipeline trains the sampled ids');
  assert.deepEqual(m0(paper), [tok.id(TOOL_CALL_OPEN), tok.id('\n'), tok.id('{"'), tok.id('name'), tok.id(IM_END)]);
  assert.ok(paper.rescore && !exact.rescore, 'changed tokens get their old log-probs from the trainer');
  assert.ok(paper.messages[0].end - paper.messages[0].start === 5 && paper.lossMask[paper.messages[0].end - 1] === 1);
  // the sampler's log-probs of the later tokens are those of the re-encoded context: a scoring pass of the trained
  // ids agrees with them (a cache that still held `{` `"` would not)
  assert.ok(paper.messages.length >= 2);
  const prep = prepareMiniBatches({ model, ref: null, trajs: [{ ...paper, rescore: false }], advantages: [1], groupSize: 1,
    promptsPerMiniBatch: 1, maxContext: cfg.maxContext, microBatchTokens: 8192, sharePrompts: false });
  const micro = prep.minibatches[0].micro[0];
  const scored = scoreBatch(model, micro.batch, [], [], false);
  const [sampler, scoring] = [micro.old.arraySync(), scored.logp.arraySync()];
  const later = Array.from(micro.batch.trainedPositions).map((p, i) => ({ p: p + 1, i })).filter((x) => x.p >= paper.messages[1].start);
  assert.ok(later.length > 0);
  for (const { p, i } of later) {
    if (paper.sampleLogProbs[p] === 0) continue; // an appended end: no sampler value
    assert.ok(Math.abs(sampler[i] - scoring[i]) < 1e-4, `token ${p}: sampler ${sampler[i]} vs scoring ${scoring[i]}`);
  }
  scored.logp.dispose();
  disposeMiniBatches(prep.minibatches);
  model.dispose();
});

test('E3 trainCutEnd: the <|im_end|> closing a cut message is trained, and scored by the trainer', () => {
  const tok = tokenizer();
  const model = tinyModel(2);
  const task = tasks('train')[0];
  const noEnd: LogitMask = () => [tok.id(IM_END)]; // never end: every message is cut at the cap
  const run = (trainCutEnd: boolean) => rollout(model, tok, [new Episode(task, { maxAssistantMessages: 2 })], {
    rng: new Rng(1), config: { ...cfg, maxMessageTokens: 8 }, logitMask: noEnd, pipeline: { trainCutEnd } })[0];
  const [exact, paper] = [run(false), run(true)];
  assert.deepEqual(paper.ids, exact.ids);
  for (const m of exact.messages) assert.equal(exact.lossMask[m.end - 1], 0, 'the lab masks the forced end');
  for (const m of paper.messages) assert.equal(paper.lossMask[m.end - 1], 1, 'the paper trains it');
  assert.ok(paper.rescore && !exact.rescore);
  model.dispose();
});

test('E4 bf16Sampler: logits rounded to 8 significant bits, ties to even; every rollout scored by the trainer', () => {
  assert.equal(toBf16(1), 1);
  assert.equal(toBf16(1 + 2 ** -9), 1, 'half way: to even');
  assert.equal(toBf16(1 + 3 * 2 ** -9), 1 + 2 ** -7, 'half way: to even (up)');
  assert.equal(toBf16(1 + 2 ** -8 + 2 ** -12), 1 + 2 ** -7, 'above half way: up');
  assert.equal(toBf16(-3.14159), -3.140625);
  assert.ok(Number.isNaN(toBf16(NaN)) && toBf16(Infinity) === Infinity);
  const x = new Float32Array([0.1, -7.77, 12.3456]);
  const r = roundLogits(x, 0, 3);
  x.forEach((v, i) => assert.ok(Math.abs(r[i] - v) <= Math.abs(v) * 2 ** -8, `${v} -> ${r[i]}`));
  const tok = tokenizer();
  const model = tinyModel(3);
  const [t] = rollout(model, tok, [new Episode(tasks('train')[1])], { rng: new Rng(2), config: cfg, pipeline: { bf16Sampler: true } });
  assert.ok(t.rescore, 'the sampler is not the trainer: old log-probs come from the trainer');
  model.dispose();
});

test('E5 microBatchWeights: each micro-batch\'s token-mean weighted by its share of the rows (veRL dynamic batch size)', () => {
  const tok = tokenizer();
  const model = tinyModel(5);
  const trajs = rollout(model, tok, tasks('train').slice(0, 4).map((t) => new Episode(t)), { rng: new Rng(3), config: cfg });
  const adv = [1, -1, 0.5, -0.5];
  const loss = (microBatchWeights: boolean, budget: number) => {
    const prep = prepareMiniBatches({ model, ref: null, trajs, advantages: adv, groupSize: 4, promptsPerMiniBatch: 1,
      maxContext: cfg.maxContext, microBatchTokens: budget, sharePrompts: false });
    const mb = prep.minibatches[0];
    const r = miniBatchGrads(model, mb, { clipRatio: 0.2, dualClip: 3, klCoef: 0, entropyCoef: 0, microBatchWeights });
    disposeGrads(r.grads);
    const parts = mb.micro.map((m) => ({ rows: m.batch.inputs.shape[0], tokens: m.batch.targetCount }));
    disposeMiniBatches(prep.minibatches);
    return { loss: r.terms.pgLoss, parts, rows: mb.rows, tokens: mb.targetCount };
  };
  // one micro-batch: the row weight is 1 and both are the token-mean
  const [a, b] = [loss(false, 1e9), loss(true, 1e9)];
  assert.ok(Math.abs(a.loss - b.loss) < 1e-6);
  // one row per micro-batch: at ratio 1, pg = -A per token, so the token-mean is sum(-A n) / N and the row-weighted
  // mean is sum(-A) / rows: a short row's advantage counts as much as a long one's
  const [tm, rw] = [loss(false, 1), loss(true, 1)];
  assert.equal(rw.parts.length, 4);
  const n = new Map(trajs.map((t, i) => [i, t.lossMask.reduce((s, x) => s + x, 0)]));
  const tokenMean = adv.reduce((s, A, i) => s - A * n.get(i)!, 0) / tm.tokens;
  const rowMean = adv.reduce((s, A) => s - A, 0) / rw.rows;
  assert.ok(Math.abs(tm.loss - tokenMean) < 1e-5, `${tm.loss} vs ${tokenMean}`);
  assert.ok(Math.abs(rw.loss - rowMean) < 1e-5, `${rw.loss} vs ${rowMean}`);
  assert.ok(Math.abs(tokenMean - rowMean) > 1e-3, 'the two aggregations differ when rows differ in length');
  model.dispose();
});

test('KVCache.forget: the forgotten tokens leave attention and the positions, as if never read', () => {
  const tok = tokenizer();
  const model = tinyModel(7);
  const ids = tok.encode('<|im_start|>user\nhello there<|im_end|>\n');
  const extra = tok.encode(' extra words');
  const cache = model.createCache(1);
  const n0 = tf.memory().numTensors;
  model.append(cache, [ids.concat(extra)]).dispose();
  cache.forget(0, extra.length);
  const after = model.append(cache, [[tok.id('Done')]]);
  const fresh = model.createCache(1);
  model.append(fresh, [ids]).dispose();
  const want = model.append(fresh, [[tok.id('Done')]]);
  const [x, y] = [after.arraySync()[0], want.arraySync()[0]];
  x.forEach((v, i) => assert.ok(Math.abs(v - y[i]) < 1e-4, `logit ${i}: ${v} vs ${y[i]}`));
  assert.deepEqual(cache.positions, fresh.positions);
  tf.dispose([after, want]);
  fresh.dispose();
  cache.dispose();
  assert.ok(tf.memory().numTensors <= n0, 'forget leaks nothing');
  assert.throws(() => { const c = model.createCache(1); try { c.forget(0, 1); } finally { c.dispose(); } }, /holds 0 tokens/);
  model.dispose();
});
