// Every registered config, built for every preset without training: its stages resolve and validate, its
// start resolves, its step counts follow the preset, and the end-to-end subset covers its code paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { listExperiments, getExperiment, interleavedSteps, BASE_CHECKPOINT } from '../lib/experiments/registry/configs';
import { PRESETS, getPreset, studyGroups } from '../lib/experiments/registry/presets';
import { validateRun } from '../lib/experiments/run/runner';
import { applyOverrides, validateStages } from '../lib/experiments/run/overrides';
import { planJobs } from '../lib/experiments/sweep/plan';
import { REGIMES, getRegime } from '../lib/experiments/registry/regimes';
import { E2E_CONFIGS, codePaths } from './experiments.fixtures';
import { tmpDir } from './helpers';

const SPECS = listExperiments();

test('every config resolves and validates under every preset', () => {
  const root = tmpDir('configs');
  for (const preset of PRESETS.map((p) => getPreset(p))) {
    for (const spec of SPECS) {
      const what = `${spec.name} @ ${preset.name}`;
      const out = path.join(root, preset.name, spec.name, 'seed-1');
      // an 'experiment' start needs that run's checkpoint: stand in the base checkpoint for it
      const initCheckpoint = spec.init.kind === 'experiment' ? BASE_CHECKPOINT : undefined;
      const { stages } = validateRun(spec, { preset, seed: 1, out, initCheckpoint });
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
    // the plan of a whole study (the strong regime's): every config of its groups once per seed, each after the run it starts from
    const jobs = planJobs(preset, { root });
    for (const seed of preset.seeds) {
      const order = jobs.filter((j) => j.seed === seed).map((j) => j.config);
      assert.deepEqual([...order].sort(), SPECS.filter((s) => studyGroups(preset).includes(s.group)).map((s) => s.name).sort(), preset.name);
      for (const spec of SPECS) {
        if (spec.init.kind === 'experiment' && order.includes(spec.name)) {
          assert.ok(order.indexOf(spec.init.name) < order.indexOf(spec.name), `${spec.name} planned before ${spec.init.name}`);
        }
      }
    }
  }
});

test('names are unique, every config but the bases is in some regime\'s or preset\'s study, the interleaved split keeps the paper\'s 50 : 100 : 150', () => {
  assert.equal(new Set(SPECS.map((s) => s.name)).size, SPECS.length);
  const studied = new Set([...REGIMES.flatMap((r) => getRegime(r).groups), ...PRESETS.flatMap((p) => getPreset(p).groups ?? [])]);
  for (const s of SPECS) assert.equal(studied.has(s.group), s.group !== 'base', `${s.name} (group ${s.group})`);
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
  'init:checkpoint': 'test/signals.test.ts (its runs start from a checkpoint folder); the pipeline study\'s base variant',
  'pipeline:closedCallsOnly': 'test/pipeline.test.ts (E1)',
  'pipeline:retokenize': 'test/pipeline.test.ts (E2)',
  'pipeline:trainCutEnd': 'test/pipeline.test.ts (E3)',
  'pipeline:bf16Sampler': 'test/pipeline.test.ts (E4)',
  'pipeline:microBatchWeights': 'test/pipeline.test.ts (E5)',
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

test('--set reaches every typed config: GRPO, SFT phases, signals, the guard, interleaving; typos and bad values are refused', () => {
  const stagesOf = (name: string, overrides: Record<string, string | number | boolean>) =>
    applyOverrides(getExperiment(name).stages(getPreset('quick')), overrides);
  const [ops] = stagesOf('ops-luffy', { 'ops.luffyGamma': 0.2, 'grpo.entropyCoef': 0.01 });
  assert.ok(ops.kind === 'grpo' && ops.signal?.kind === 'ops');
  assert.equal(ops.signal.config?.luffyGamma, 0.2);
  assert.equal(ops.config.entropyCoef, 0.01);
  const [plainOps] = stagesOf('ops', { 'ops.luffyGamma': 0.1 });
  assert.ok(plainOps.kind === 'grpo' && plainOps.signal?.kind === 'ops' && plainOps.signal.config?.luffyGamma === 0.1,
    'a null default (LUFFY off) takes a number');
  const [hbg] = stagesOf('hbg', { 'hbg.hintedRollouts': 1 });
  assert.ok(hbg.kind === 'grpo' && hbg.signal?.kind === 'hbg' && hbg.signal.config?.hintedRollouts === 1);
  const [sync] = stagesOf('sync-sft', { 'syncsft.weight': 2 });
  assert.ok(sync.kind === 'grpo' && sync.signal?.kind === 'sync-sft' && sync.signal.config?.weight === 2);
  const [guard] = stagesOf('guard', { 'guard.pImEnd': 0.5, 'guard.maxPhases': 1, 'sft.epochs': 3 });
  assert.ok(guard.kind === 'grpo' && guard.guard);
  assert.deepEqual([guard.guard.pImEnd, guard.guard.maxPhases, guard.guard.sft?.epochs], [0.5, 1, 3]);
  const ets = stagesOf('ets', { 'interleave.lastSteps': 5, 'sft.lr': 1e-5 });
  const phases = ets.filter((s) => s.kind === 'sft-interleaved');
  assert.ok(phases.length === 2 && phases.every((s) => s.kind === 'sft-interleaved' && s.lastSteps === 5 && s.config.lr === 1e-5));
  // the registry itself is untouched
  const fresh = getExperiment('guard').stages(getPreset('quick'))[0];
  assert.ok(fresh.kind === 'grpo' && fresh.guard && fresh.guard.pImEnd === undefined);
  assert.throws(() => stagesOf('vanilla-rl', { 'guard.pImEnd': 0.5 }), /no stage of this experiment has a field "pImEnd"/);
  assert.throws(() => stagesOf('ops', { 'hbg.hintedRollouts': 1 }), /no stage/);
  assert.throws(() => stagesOf('ops', { 'opz.luffyGamma': 1 }), /unknown prefix "opz"/);
  // a value is checked against its field's declaration as it is set, and the merged stages again
  assert.throws(() => stagesOf('guard', { 'guard.pImEnd': 'high' }), /guard\.pImEnd must be a number in \[0, 1\], got "high"/);
  assert.throws(() => stagesOf('guard', { 'guard.pImEnd': 2 }), /guard\.pImEnd must be a number in \[0, 1\], got 2/);
  assert.throws(() => validateStages(stagesOf('hbg', { 'hbg.hintedRollouts': 9 })),
    /hbg\.hintedRollouts must be at most grpo\.groupSize \(8\), got 9/);
  assert.throws(() => stagesOf('ets', { 'interleave.lastSteps': 0 }), /interleave\.lastSteps must be an integer in \[1, 100000\]/);
  const [noLuffy] = stagesOf('ops-luffy', { 'ops.luffyGamma': 'null' });
  assert.ok(noLuffy.kind === 'grpo' && noLuffy.signal?.kind === 'ops' && noLuffy.signal.config?.luffyGamma === null,
    'null turns LUFFY off');
});
