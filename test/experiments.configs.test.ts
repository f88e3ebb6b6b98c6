// Every registered config, built for every preset without training: its stages resolve and validate, its
// start resolves, its step counts follow the preset, and the end-to-end subset covers its code paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { listExperiments, getExperiment, interleavedSteps, BASE_CHECKPOINT } from '../lib/experiments/configs';
import { PRESETS, getPreset } from '../lib/experiments/presets';
import { validateRun } from '../lib/experiments/runner';
import { planJobs } from '../lib/experiments/sweep';
import { E2E_CONFIGS, codePaths } from './experiments.fixtures';
import { tmpDir } from './helpers';

const SPECS = listExperiments();

test('every config resolves and validates under every preset', () => {
  const root = tmpDir('configs');
  for (const preset of PRESETS.map(getPreset)) {
    for (const spec of SPECS) {
      const what = `${spec.name} @ ${preset.name}`;
      const out = path.join(root, preset.name, spec.name, 'seed-1');
      // an 'experiment' start needs that run's checkpoint: stand in the base checkpoint for it
      const initCheckpoint = spec.init.kind === 'experiment' ? BASE_CHECKPOINT : undefined;
      const stages = validateRun(spec, { preset, seed: 1, out, initCheckpoint });
      assert.equal(fs.existsSync(out), false, `${what}: validation wrote ${out}`);
      if (spec.init.kind === 'experiment') assert.equal(getExperiment(spec.init.name).name, spec.init.name, what);
      if (spec.init.kind === 'scratch') assert.equal(spec.group, 'base', `${what}: only the base config trains from scratch`);
      if (spec.group === 'lr-sweep') assert.ok(spec.sweepLr! > 0, what);
      // an interleaved SFT phase reads the previous RL stage's rollouts
      stages.forEach((s, i) => {
        if (s.kind === 'sft-interleaved') assert.equal(stages[i - 1]?.kind, 'grpo', `${what}: stage ${i} has no RL stage before it`);
      });
      const rlSteps = stages.filter((s) => s.kind === 'grpo').map((s) => (s.kind === 'grpo' ? s.config.steps : 0));
      if (rlSteps.length === 1) assert.equal(rlSteps[0], preset.rlSteps, what);
      if (rlSteps.length === 3) assert.deepEqual(rlSteps, interleavedSteps(preset.rlSteps), what);
    }
    // the plan of a whole study: every non-base config once per seed, each after the run it starts from
    const jobs = planJobs(preset, { root });
    for (const seed of preset.seeds) {
      const order = jobs.filter((j) => j.seed === seed).map((j) => j.config);
      assert.deepEqual([...order].sort(), SPECS.filter((s) => s.group !== 'base').map((s) => s.name).sort(), preset.name);
      for (const spec of SPECS) {
        if (spec.init.kind === 'experiment' && order.includes(spec.name)) {
          assert.ok(order.indexOf(spec.init.name) < order.indexOf(spec.name), `${spec.name} planned before ${spec.init.name}`);
        }
      }
    }
  }
});

test('names are unique and the interleaved split keeps the paper\'s 50 : 100 : 150', () => {
  assert.equal(new Set(SPECS.map((s) => s.name)).size, SPECS.length);
  assert.deepEqual(interleavedSteps(300), [50, 100, 150]);
  for (const n of [1, 2, 3, 7, 40]) {
    const parts = interleavedSteps(n);
    assert.ok(parts.every((x) => Number.isInteger(x) && x >= 1), `${n}: ${parts}`);
    if (n >= 3) assert.equal(parts[0] + parts[1] + parts[2], n);
  }
});

/** Paths the end-to-end subset leaves out, and the test that runs each of them for real. */
const COVERED_ELSEWHERE: Record<string, string> = {
  'init:scratch': 'base only: it builds the committed checkpoint and is never part of reproduce',
  'sft-data:corpus': 'base only; the corpus loader: test/envs.data.test.ts',
  'sft-data:world-sample': 'base only; task generation: test/envs.episode.test.ts, test/envs.fuzz.test.ts',
  'signal:ops': 'the OPS code path of ops-luffy without the weights: test/signals.test.ts (OPS, LUFFY on and off)',
  'signal:hbg': 'test/signals.test.ts (HBG)',
  'signal:sync-sft': 'test/signals.test.ts (synchronous per-update SFT loss)',
  guard: 'test/signals.test.ts (collapse guard)',
  'interleaved:ets': 'test/signals.test.ts (ETS and PRS); PRS phases train on ETS data too',
};

test('the end-to-end subset plus the unit tests cover every code path of the registry', () => {
  const inE2E = new Set<string>();
  for (const job of planJobs('smoke', { only: E2E_CONFIGS, seeds: [1] })) for (const p of codePaths(getExperiment(job.config))) inE2E.add(p);
  const all = new Set<string>();
  for (const spec of SPECS) for (const p of codePaths(spec)) all.add(p);
  const missing = [...all].filter((p) => !inE2E.has(p)).sort();
  // A new stage kind, signal or start in the registry fails here until a test runs it.
  assert.deepEqual(missing, Object.keys(COVERED_ELSEWHERE).sort());
});
