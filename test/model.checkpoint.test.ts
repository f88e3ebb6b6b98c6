import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { defaultGPTConfig } from '../lib/model/config';
import { GPT } from '../lib/model/gpt';
import { loadCheckpoint, loadOptimizerState, saveCheckpoint, saveOptimizerState } from '../lib/model/checkpoint';
import { AdamW } from '../lib/train/optim';

before(async () => {
  await initBackend({ backend: process.env.TOOLRL_BACKEND ?? 'wasm' });
});

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-ckpt-'));

describe('checkpoint', () => {
  it('round trip: identical weights and logits, meta kept, no temp files left', () => {
    const dir = tmp();
    const m = new GPT(defaultGPTConfig(30, { blockSize: 32, nEmbd: 32 }), 4);
    saveCheckpoint(dir, m, { vocabFingerprint: 'abc123', step: 7 });
    assert.deepEqual(fs.readdirSync(dir).sort(), ['model.json', 'weights.bin']);
    const { model, meta } = loadCheckpoint(dir, { expectVocabFingerprint: 'abc123' });
    assert.equal(meta.step, 7);
    assert.deepEqual(model.config, m.config);
    for (const [name, v] of m.params()) {
      assert.deepEqual(Array.from(model.params().get(name)!.dataSync()), Array.from(v.dataSync()), name);
    }
    const ids = tf.tensor2d([[1, 2, 3, 29]], [1, 4], 'int32');
    const [a, b] = [m.forward(ids), model.forward(ids)];
    assert.deepEqual(a.arraySync(), b.arraySync());
    // Overwrite in place: still no temp files.
    saveCheckpoint(dir, model, { vocabFingerprint: 'abc123' });
    assert.deepEqual(fs.readdirSync(dir).sort(), ['model.json', 'weights.bin']);
    tf.dispose([ids, a, b]);
    m.dispose();
    model.dispose();
    fs.rmSync(dir, { recursive: true });
  });

  it('a vocab fingerprint mismatch or a missing file throws a clear error', () => {
    const dir = tmp();
    const m = new GPT(defaultGPTConfig(30, { blockSize: 16, nEmbd: 16 }), 1);
    saveCheckpoint(dir, m, { vocabFingerprint: 'vocab-A' });
    assert.throws(() => loadCheckpoint(dir, { expectVocabFingerprint: 'vocab-B' }),
      (e: Error) => e.message.includes('vocab-A') && e.message.includes('vocab-B') && e.message.includes(dir));
    assert.throws(() => loadCheckpoint(path.join(dir, 'nope')), /directory not found: .*nope/);
    fs.unlinkSync(path.join(dir, 'weights.bin'));
    assert.throws(() => loadCheckpoint(dir), /missing file .*weights\.bin/);
    assert.throws(() => saveCheckpoint(dir, m, { vocabFingerprint: '' }), /vocabFingerprint/);
    m.dispose();
    fs.rmSync(dir, { recursive: true });
  });

  it('damaged checkpoints are refused, naming the file and what is wrong', () => {
    const dir = tmp();
    const m = new GPT(defaultGPTConfig(30, { blockSize: 16, nEmbd: 16 }), 1);
    saveCheckpoint(dir, m, { vocabFingerprint: 'v' });
    m.dispose();
    const jsonFile = path.join(dir, 'model.json');
    const binFile = path.join(dir, 'weights.bin');
    const good = JSON.parse(fs.readFileSync(jsonFile, 'utf8'));
    const goodBin = fs.readFileSync(binFile);
    const withJson = (edit: (j: typeof good) => void) => {
      const j = JSON.parse(JSON.stringify(good));
      edit(j);
      fs.writeFileSync(jsonFile, JSON.stringify(j));
    };
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    withJson((j) => delete j.tensors);
    assert.throws(() => loadCheckpoint(dir), new RegExp(`${esc(jsonFile)} has no "tensors" list`));
    withJson((j) => (j.tensors[1].offset = -4));
    assert.throws(() => loadCheckpoint(dir), new RegExp(`offset -4 into ${esc(binFile)}`));
    withJson((j) => (j.tensors[1].offset = j.tensors[0].offset)); // two tensors reading the same bytes
    assert.throws(() => loadCheckpoint(dir), /overlap in .*weights\.bin/);
    fs.writeFileSync(jsonFile, '{"format": "toolrl-gpt-v1", "con');
    assert.throws(() => loadCheckpoint(dir), new RegExp(`${esc(jsonFile)} is not valid JSON`));
    const nan = Buffer.from(goodBin);
    nan.writeFloatLE(NaN, 8);
    fs.writeFileSync(binFile, nan);
    withJson(() => undefined);
    assert.throws(() => loadCheckpoint(dir), new RegExp(`${esc(binFile)} is corrupt: its SHA-256`)); // the content hash
    withJson((j) => delete j.weightsSha256); // a checkpoint of before hashes: the weights themselves are checked
    assert.throws(() => loadCheckpoint(dir), new RegExp(`in ${esc(binFile)} holds a non-finite value \\(NaN\\) at index 2`));
    withJson(() => undefined);
    fs.writeFileSync(binFile, goodBin.subarray(0, goodBin.byteLength - 4));
    assert.throws(() => loadCheckpoint(dir), new RegExp(`${esc(binFile)} has ${goodBin.byteLength - 4} bytes`));
    fs.writeFileSync(binFile, goodBin);
    loadCheckpoint(dir).model.dispose(); // restored: loads again
    fs.rmSync(dir, { recursive: true });
  });

  it('optimizer state round trip', () => {
    const dir = tmp();
    const m = new GPT(defaultGPTConfig(10, { blockSize: 8, nEmbd: 8, nHead: 2, nLayer: 1 }), 1);
    const opt = new AdamW(m.params());
    const grads = new Map(Array.from(m.params()).map(([n, v]) => [n, tf.onesLike(v)] as [string, tf.Tensor]));
    opt.step(grads, 1e-3);
    saveOptimizerState(dir, opt.getState());
    const st = loadOptimizerState(dir);
    assert.equal(st.stepCount, 1);
    const orig = opt.getState();
    for (const n of m.params().keys()) {
      assert.deepEqual(Array.from(st.m[n]), Array.from(orig.m[n]));
      assert.deepEqual(Array.from(st.v[n]), Array.from(orig.v[n]));
    }
    tf.dispose(Array.from(grads.values()));
    opt.dispose();
    m.dispose();
    fs.rmSync(dir, { recursive: true });
  });
});
