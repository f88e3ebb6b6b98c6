// A run whose weights stop being finite is named as diverged (lib/train/diverged.ts): the step, the quantity and
// the learning rate, exit 1 with one line, and a run folder that keeps what was logged and says it diverged
// (diverged.json: unfinished, listed as such), never a bare sampler error and an empty metrics.jsonl.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../lib/backend';
import { getExperiment } from '../lib/experiments/registry/configs';
import { getPreset } from '../lib/experiments/registry/presets';
import { runExperiment } from '../lib/experiments/run/runner';
import { DIVERGED_FILE, unfinishedReason } from '../lib/experiments/store/folder';
import { loadCheckpoint, saveCheckpoint } from '../lib/model/checkpoint';
import { readMetrics } from '../lib/train/metrics';
import { AdamW } from '../lib/train/optim';
import { Diverged, DivergedInfo, NonFinite } from '../lib/train/diverged';

const TINY = { 'grpo.groupSize': 2, 'grpo.promptsPerStep': 1, 'grpo.promptsPerMiniBatch': 1, 'grpo.maxMessageTokens': 8,
  'grpo.maxAssistantMessages': 2, 'grpo.probeTasks': 1, 'grpo.steps': 3, 'grpo.valEvery': 3 };
const tmp = (tag: string) => fs.mkdtempSync(path.join(os.tmpdir(), `toolrl-div-${tag}-`));

/**
 * Every weight of `name` set to 3e38, near the float32 maximum: what an exploding update leaves. A checkpoint with
 * such weights is valid (a NaN one is refused when loaded), but the forward pass overflows: the logits are NaN.
 */
function poison(vars: Map<string, tf.Variable>, name: string): void {
  const v = vars.get(name)!;
  tf.tidy(() => v.assign(tf.fill(v.shape, 3e38)));
}

test('the gradient norm and the loss are checked: NonFinite names the quantity, and the weights are not touched',
  async () => {
  await initBackend({ backend: 'cpu' });
  const w = tf.variable(tf.ones([3]));
  const opt = new AdamW(new Map([['w', w]]));
  const g = tf.tensor1d([1, NaN, 0]);
  assert.throws(() => opt.step(new Map([['w', g]]), 1e-3), (e: Error) => e instanceof NonFinite &&
    e.quantity === 'gradient norm');
  assert.deepEqual(Array.from(w.dataSync()), [1, 1, 1]);
  g.dispose(); opt.dispose(); w.dispose();
});

test('GRPO: weights blown up after step 1 stop the run at step 2 with Diverged; the folder keeps step 1 and says so',
  async () => {
  await initBackend({ backend: 'cpu' });
  const out = path.join(tmp('grpo'), 'seed-1');
  const spec = getExperiment('vanilla-rl');
  const opts = { preset: getPreset('smoke'), seed: 1, out, progress: false,
    overrides: { ...TINY, 'grpo.checkpointEvery': 1 } };
  // step 1 as usual, then stopped (as a killed run would be) once its resume state is saved ...
  const saved = () => fs.existsSync(path.join(out, 'resume', 'state.json'));
  await assert.rejects(runExperiment(spec, { ...opts, shouldStop: () => (saved() ? 'test stop' : null) }), /test stop/);
  // ... and its saved final layer norm blown up to 3e38 (poison)
  const ckpt = path.join(out, 'resume', 'model');
  const { model, meta } = loadCheckpoint(ckpt);
  for (const n of model.params().keys()) if (n.startsWith('ln_f.')) poison(model.params(), n);
  saveCheckpoint(ckpt, model, meta);
  model.dispose();
  const tensors = tf.memory().numTensors;
  await assert.rejects(runExperiment(spec, { ...opts, resume: true }), (e: Error) => {
    assert.ok(e instanceof Diverged, String(e));
    const { lr, ...where } = e.info;
    assert.deepEqual(where, { phase: 'grpo', stage: 0, step: 2, quantity: 'logits', value: 'NaN' });
    assert.ok(lr > 0);
    assert.equal(e.message,
      `diverged: grpo step 2 (stage 0): the logits are NaN at learning rate ${Number(lr.toPrecision(4))}`);
    return true;
  });
  assert.equal(tf.memory().numTensors, tensors, 'tensors leaked');
  const info = JSON.parse(fs.readFileSync(path.join(out, DIVERGED_FILE), 'utf8')) as DivergedInfo;
  assert.equal(info.step, 2);
  const grpo = readMetrics(path.join(out, 'metrics.jsonl')).flatMap((r) => (r.phase === 'grpo' ? [r] : []));
  assert.deepEqual(grpo.map((r) => r.step), [1], 'metrics.jsonl keeps step 1');
  assert.match(unfinishedReason(out)!, /^diverged at grpo step 2 of stage 0 \(logits NaN at learning rate /);
});

test('the command line: a blown-up checkpoint exits 1 with one line naming the step, the quantity and the rate ' +
  '(GRPO: logits; SFT: loss)',
  async () => {
    await initBackend({ backend: 'cpu' });
    const dir = path.join(tmp('ckpt'), 'blown-up');
    const { model, meta } = loadCheckpoint(path.join('data', 'checkpoints', 'base'));
    for (const n of model.params().keys()) if (n.startsWith('ln_f.')) poison(model.params(), n);
    saveCheckpoint(dir, model, meta);
    model.dispose();
    const cases: [string, RegExp][] = [
      ['vanilla-rl', /^toolrl run: error: diverged: grpo step 1 \(stage 0\): the logits are NaN at learning rate [0-9.e-]+\n$/],
      ['fcl-sft', /^toolrl run: error: diverged: sft step 1 \(stage 0\): the loss is NaN at learning rate [0-9.e-]+\n$/],
    ];
    for (const [config, line] of cases) {
      const out = path.join(tmp('cli'), 'seed-1');
      const r = spawnSync(process.execPath, ['bin/toolrl.js', 'run', '--config', config, '--preset', 'micro', '--init',
        dir,
        '--backend', 'cpu', '--out', out], { encoding: 'utf8' });
      assert.equal(r.status, 1, `${config}: ${r.stderr}`);
      // the backend's banner, then one line: the error
      const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('[toolrl] tfjs backend'));
      assert.equal(lines.length, 1, `${config}: ${r.stderr}`);
      assert.match(lines[0] + '\n', line, config);
      assert.ok(fs.existsSync(path.join(out, DIVERGED_FILE)), `${config}: no ${DIVERGED_FILE}`);
      assert.ok(fs.existsSync(path.join(out, 'run.json')));
    }
  });
