// The notebooks' shared RETRAIN cell (lib/report/notebook/retrain.ts): off by default, refuses without the base
// checkpoint, rejects unknown names before training, and when on runs the configs and hands back their store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { retrainCell } from '../lib/report/notebook/retrain';
import { tmpDir } from './helpers';

test('off: nothing is trained or written, and no store comes back', async () => {
  const root = path.join(tmpDir('retrain-off'), 'store');
  assert.equal(await retrainCell(['vanilla-rl'], { enabled: false, root }), null);
  assert.equal(fs.existsSync(root), false);
});

test('on without the base checkpoint: nothing trained, no store', async () => {
  const root = path.join(tmpDir('retrain-nobase'), 'store');
  assert.equal(await retrainCell(['vanilla-rl'], { enabled: true, root, baseCheckpoint: path.join(root, 'missing') }), null);
  assert.equal(fs.existsSync(root), false);
});

test('on: an unknown config fails before any run starts', async () => {
  const root = path.join(tmpDir('retrain-typo'), 'store');
  await assert.rejects(retrainCell(['base-model', 'vanila-rl'], { enabled: true, preset: 'smoke', root }), /vanila-rl/);
  assert.equal(fs.existsSync(root), false);
});

test('on: runs each config at the preset and returns the store of the fresh runs', { timeout: 5 * 60 * 1000 }, async () => {
  const root = path.join(tmpDir('retrain-on'), 'store');
  // base-model only evaluates the committed checkpoint: the cheapest real config.
  const back = await retrainCell(['base-model'], { enabled: true, preset: 'smoke', root });
  assert.ok(back);
  assert.equal(back.root, root);
  assert.equal(back.preset, 'smoke');
  assert.deepEqual(back.experiments.map((e) => e.spec.name), ['base-model']);
  assert.deepEqual(back.experiments[0].seeds.map((s) => s.seed), [1]);
  assert.ok(fs.existsSync(path.join(root, 'smoke', 'base-model', 'seed-1', 'summary.json')));
});
