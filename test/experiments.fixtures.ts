/**
 * The end-to-end subset of the registry: the configs `reproduce` trains in test/reproduce.smoke.test.ts.
 * Together with the runs they start from, they take the study's main code paths once through the CLI, the
 * sweep's child processes and the report (SFT from the base checkpoint, GRPO from another run's checkpoint,
 * OPS with LUFFY weights, PRS phases, whose data include ETS's);
 * test/experiments.configs.test.ts checks that the rest of the registry adds no path this subset and the
 * unit tests leave untouched.
 */
import { ExperimentSpec } from '../lib/experiments/registry/spec';
import { getPreset } from '../lib/experiments/registry/presets';

export const E2E_CONFIGS = ['fcl-sft-rl', 'ops-luffy', 'prs'];

/** The code paths one config takes, as names: how it starts, its stage kinds, data, signals, guard. */
export function codePaths(spec: ExperimentSpec): Set<string> {
  const out = new Set<string>([`init:${spec.init.kind}`]);
  for (const s of spec.stages(getPreset('smoke'))) {
    out.add(`stage:${s.kind}`);
    if (s.kind === 'sft') out.add(`sft-data:${s.data}`);
    if (s.kind === 'sft-interleaved') out.add(`interleaved:${s.source}`);
    if (s.kind === 'grpo' && s.signal) out.add(`signal:${s.signal.kind}${s.signal.kind === 'ops' && s.signal.config?.luffyGamma != null ? '-luffy' : ''}`);
    if (s.kind === 'grpo' && s.guard) out.add('guard');
  }
  for (const [k, on] of Object.entries(spec.pipeline ?? {})) if (on) out.add(`pipeline:${k}`);
  return out;
}
