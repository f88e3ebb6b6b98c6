/**
 * `--set key=value` overrides on an experiment's stages. A key names the config it changes by prefix:
 *   grpo.<field>        every GRPO stage (lib/train/grpo/config.ts)
 *   sft.<field>         every SFT stage and SFT phase: interleaved ETS / PRS phases, the guard's (lib/train/sft.ts)
 *   ops. hbg. syncsft.  the synchronous signal of a GRPO stage (lib/train/signals)
 *   guard.<field>       the adaptive collapse guard (lib/experiments/run/guard.ts)
 *   interleave.lastSteps  the RL steps an interleaved SFT phase reads
 *   pipeline.<field>    the run's pipeline differences from the paper's code (lib/train/pipeline.ts; pipelineOverrides)
 * or, unprefixed, every SFT and GRPO config that has that field (`lr=3e-4` sets both learning rates). A key that
 * no stage accepts is an error naming it, so a typo never runs the default experiment silently. validateStages
 * then checks every merged config, so a bad value is rejected before a run touches its output folder, including
 * an upper bound on every size knob (SIZE_BOUNDS): `grpo.groupSize=1e6` is refused at once instead of running
 * out of memory an hour later.
 */
import { defaultSFTConfig, SFTConfig } from '../../train/sft';
import { defaultGRPOConfig, GRPOConfig, validateGRPOConfig } from '../../train/grpo/config';
import { defaultOPSConfig } from '../../train/signals/ops';
import { defaultHBGConfig } from '../../train/signals/hbg';
import { defaultSyncSFTConfig } from '../../train/signals/syncsft';
import { defaultGuardConfig, GuardConfig, validateGuardConfig } from './guard';
import { checkSeed } from '../../prng';
import { StageSpec } from '../registry/spec';
import { PIPELINE_OPTIONS, PipelineConfig, defaultPipelineConfig } from '../../train/pipeline';

/**
 * Upper bounds of the size knobs, as `--set` names them (the lower bounds are the configs' own checks). Each is
 * far above what any preset uses and below what a two-core machine could run: past them a run would only
 * exhaust memory or never finish.
 */
export const SIZE_BOUNDS: Record<string, { max: number; why: string }> = {
  'grpo.groupSize': { max: 64, why: 'paper: 8' },
  'grpo.promptsPerStep': { max: 512, why: 'paper: 60; the training split holds 300 tasks' },
  'grpo.promptsPerMiniBatch': { max: 512, why: 'at most promptsPerStep' },
  'grpo.microBatchTokens': { max: 1 << 20, why: 'ours: 8192' },
  'grpo.ppoEpochs': { max: 16, why: 'paper: 1' },
  'grpo.steps': { max: 100_000, why: 'paper: 300' },
  'grpo.maxAssistantMessages': { max: 64, why: 'paper: 30' },
  'grpo.maxMessageTokens': { max: 4096, why: 'ours: 64' },
  'grpo.maxContext': { max: 8192, why: 'ours: 1024, the default model\'s context' },
  'grpo.valTasksPerCategory': { max: 100, why: 'the test split holds 100 per category' },
  'grpo.probeTasks': { max: 400, why: 'the test split holds 400' },
  'grpo.memoTasksPerCategory': { max: 100, why: 'ours: 6' },
  'grpo.memoGroupSize': { max: 64, why: 'ours: 4' },
  'sft.epochs': { max: 1000, why: 'paper: 3' },
  'sft.batchSize': { max: 4096, why: 'paper: 128' },
  'sft.maxLen': { max: 8192, why: 'ours: 1024, the default model\'s context' },
  'syncsft.maxLen': { max: 8192, why: 'ours: 1024, the default model\'s context' },
  'guard.lastSteps': { max: 100_000, why: 'paper: 10' },
  'interleave.lastSteps': { max: 100_000, why: 'paper: 10' },
};

/** Throw naming the knob and its bound when a field of `cfg` (a config of `prefix`) is over SIZE_BOUNDS. */
function checkBounds(prefix: string, cfg: Fields): void {
  for (const [key, v] of Object.entries(cfg)) {
    const b = SIZE_BOUNDS[`${prefix}.${key}`];
    if (b && typeof v === 'number' &&
      v > b.max) throw new Error(`${prefix}.${key} must be at most ${b.max} (${b.why}), got ${v}`);
    if (key === 'seed' && v !== undefined) checkSeed(v, `${prefix}.seed`);
  }
}

type Fields = Record<string, unknown>;

/** One config of a stage that overrides can reach: its prefix, the object to change, its defaults. */
interface Target {
  prefix: string;
  obj: Fields;
  defaults: Fields;
}

const SIGNAL_PREFIX = { ops: 'ops', hbg: 'hbg', 'sync-sft': 'syncsft' } as const;
const SIGNAL_DEFAULTS: Record<string, Fields> = { ops: { ...defaultOPSConfig }, hbg: { ...defaultHBGConfig },
  syncsft: { ...defaultSyncSFTConfig } };
const PREFIXES = ['grpo', 'sft', 'ops', 'hbg', 'syncsft', 'guard', 'interleave', 'pipeline'];

/** A deep enough copy of a stage that overrides never change the registry's objects. */
function copyStage(s: StageSpec): StageSpec {
  if (s.kind !== 'grpo') return { ...s, config: { ...s.config } };
  return {
    ...s, config: { ...s.config },
    signal: s.signal ? { ...s.signal, config: { ...(s.signal.config ?? {}) } } as typeof s.signal : undefined,
    guard: s.guard ? { ...s.guard, sft: { ...(s.guard.sft ?? {}) } } : undefined,
  };
}

function targets(s: StageSpec): Target[] {
  if (s.kind === 'sft') return [{ prefix: 'sft', obj: s.config, defaults: defaultSFTConfig as unknown as Fields }];
  if (s.kind === 'sft-interleaved') {
    return [{ prefix: 'sft', obj: s.config, defaults: defaultSFTConfig as unknown as Fields },
      { prefix: 'interleave', obj: s as unknown as Fields, defaults: { lastSteps: s.lastSteps } }];
  }
  const out: Target[] = [{ prefix: 'grpo', obj: s.config, defaults: defaultGRPOConfig as unknown as Fields }];
  if (s.signal) {
    const prefix = SIGNAL_PREFIX[s.signal.kind];
    out.push({ prefix, obj: s.signal.config as Fields, defaults: SIGNAL_DEFAULTS[prefix] });
  }
  if (s.guard) {
    const { sft: _sft, ...guardFields } = defaultGuardConfig;
    void _sft;
    out.push({ prefix: 'guard', obj: s.guard as Fields, defaults: guardFields });
    out.push({ prefix: 'sft', obj: s.guard.sft as Fields, defaults: defaultSFTConfig as unknown as Fields });
  }
  return out;
}

/**
 * A value fits a default of the same type; a null default (an optional variant, e.g. ops.luffyGamma) takes a number.
 */
function fits(def: unknown, value: unknown): boolean {
  return def === null ? typeof value === 'number' : typeof def === typeof value;
}

export function applyOverrides(stages: StageSpec[], overrides: Record<string, string | number | boolean>): StageSpec[] {
  const out = stages.map(copyStage);
  for (const [rawKey, value] of Object.entries(overrides)) {
    const dot = rawKey.indexOf('.');
    const prefix = dot > 0 ? rawKey.slice(0, dot) : null;
    const key = dot > 0 ? rawKey.slice(dot + 1) : rawKey;
    if (prefix !== null && !PREFIXES.includes(prefix)) {
      throw new Error(`--set ${rawKey}: unknown prefix "${prefix}" (use ${PREFIXES.map((p) => p + '.').join(', ')})`);
    }
    if (prefix === 'pipeline') continue; // the run's, not a stage's (pipelineOverrides)
    let applied = 0;
    for (const s of out) {
      for (const t of targets(s)) {
        if (prefix === null ? t.prefix !== 'sft' && t.prefix !== 'grpo' : t.prefix !== prefix) continue;
        if (!(key in t.defaults)) continue;
        if (!fits(t.defaults[key],
          value)) throw new Error(`--set ${rawKey}=${value}: expected a ${typeof t.defaults[key]}`);
        t.obj[key] = value;
        applied++;
      }
    }
    if (applied === 0) throw new Error(`--set ${rawKey}: no stage of this experiment has a field "${key}"`);
  }
  return out;
}

/** The run's pipeline: the experiment's own differences, then the `pipeline.` keys of `overrides` (booleans). */
export function pipelineOverrides(base: Partial<PipelineConfig> | undefined, overrides: Record<string,
  string | number | boolean>):
  PipelineConfig {
  const out: PipelineConfig = { ...defaultPipelineConfig, ...(base ?? {}) };
  for (const [rawKey, value] of Object.entries(overrides)) {
    if (!rawKey.startsWith('pipeline.')) continue;
    const key = rawKey.slice('pipeline.'.length) as keyof PipelineConfig;
    if (!(key in defaultPipelineConfig)) {
      throw new Error(`--set ${rawKey}: the pipeline has no option "${key}" (options: ${PIPELINE_OPTIONS.join(', ')})`);
    }
    if (typeof value !== 'boolean') throw new Error(`--set ${rawKey}=${value}: expected true or false`);
    out[key] = value;
  }
  return out;
}

/** Reject SFT configs that cannot run, naming the field and value. */
export function validateSFTConfig(cfg: SFTConfig): void {
  for (const k of ['epochs', 'batchSize', 'maxLen'] as const) {
    if (!Number.isInteger(cfg[k]) ||
      cfg[k] < 1) throw new Error(`sft config: ${k} must be an integer >= 1, got ${cfg[k]}`);
  }
  if (!(cfg.lr > 0)) throw new Error(`sft config: lr must be > 0, got ${cfg.lr}`);
  if (!(cfg.warmupRatio >= 0 &&
    cfg.warmupRatio < 1)) throw new Error(`sft config: warmupRatio must be in [0, 1), got ${cfg.warmupRatio}`);
  if (!(cfg.weightDecay >= 0)) throw new Error(`sft config: weightDecay must be >= 0, got ${cfg.weightDecay}`);
  if (!(cfg.maxGradNorm > 0)) throw new Error(`sft config: maxGradNorm must be > 0, got ${cfg.maxGradNorm}`);
}

/** Check every stage's config merged over its defaults (what the stage will run with); throws naming the stage. */
export function validateStages(stages: StageSpec[]): void {
  stages.forEach((s, i) => {
    try {
      if (s.kind === 'grpo') {
        const g = { ...defaultGRPOConfig, ...s.config } as GRPOConfig;
        checkBounds('grpo', g as unknown as Fields);
        if (g.maxMessageTokens > g.maxContext) {
          throw new Error(`grpo.maxMessageTokens must be at most grpo.maxContext (${g.maxContext}), got ` +
            `${g.maxMessageTokens}`);
        }
        validateGRPOConfig(g);
        if (s.guard) {
          const { sft, ...guard } = s.guard;
          checkBounds('guard', guard as Fields);
          checkBounds('sft', (sft ?? {}) as Fields);
          validateGuardConfig({ ...defaultGuardConfig, ...s.guard } as GuardConfig);
          validateSFTConfig({ ...defaultSFTConfig, ...s.guard.sft } as SFTConfig);
        }
        if (s.signal?.kind === 'sync-sft') checkBounds('syncsft', (s.signal.config ?? {}) as Fields);
        const c = s.signal?.config as Record<string, unknown> | undefined;
        for (const k of ['offPolicyRollouts', 'hintedRollouts'] as const) {
          const v = c?.[k];
          if (v !== undefined && !(Number.isInteger(v) && (v as number) >= 0 && (v as number) <= g.groupSize)) {
            throw new Error(`${s.signal!.kind} config: ${k} must be an integer in [0, groupSize ${g.groupSize}], ` +
              `got ${v}`);
          }
        }
      } else {
        checkBounds('sft', { ...defaultSFTConfig, ...s.config });
        if (s.kind === 'sft-interleaved') checkBounds('interleave', { lastSteps: s.lastSteps });
        validateSFTConfig({ ...defaultSFTConfig, ...s.config } as SFTConfig);
        if (s.kind === 'sft-interleaved' && !(Number.isInteger(s.lastSteps) && s.lastSteps >= 1)) {
          throw new Error(`interleave: lastSteps must be an integer >= 1, got ${s.lastSteps}`);
        }
      }
    } catch (e) {
      throw new Error(`stage ${i} (${s.kind}): ${(e as Error).message}`);
    }
  });
}
