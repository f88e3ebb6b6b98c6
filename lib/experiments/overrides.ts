/**
 * `--set key=value` overrides on an experiment's stages. A key applies to every stage whose config kind
 * it names (`grpo.lr=3e-4`, `sft.epochs=2`) or, unprefixed, to every stage whose component config has that
 * field (`lr=3e-4` sets both SFT and GRPO learning rates). A key that no stage accepts is an error naming
 * it, so a typo never runs the default experiment silently. validateStages then checks every stage's merged
 * config, so a bad value is rejected before a run touches its output folder.
 */
import { defaultSFTConfig, SFTConfig } from '../train/sft';
import { defaultGRPOConfig, GRPOConfig, validateGRPOConfig } from '../train/grpo/config';
import { StageSpec } from './spec';

const FIELDS: Record<'sft' | 'grpo', object> = { sft: defaultSFTConfig, grpo: defaultGRPOConfig };
/** The config kind a stage's fields belong to (interleaved SFT phases take SFT fields). */
const kindOf = (s: StageSpec): 'sft' | 'grpo' => (s.kind === 'grpo' ? 'grpo' : 'sft');

export function applyOverrides(stages: StageSpec[], overrides: Record<string, string | number | boolean>): StageSpec[] {
  const out = stages.map((s) => ({ ...s, config: { ...s.config } })) as StageSpec[];
  for (const [rawKey, value] of Object.entries(overrides)) {
    const dot = rawKey.indexOf('.');
    const kind = dot > 0 ? rawKey.slice(0, dot) : null;
    const key = dot > 0 ? rawKey.slice(dot + 1) : rawKey;
    if (kind !== null && kind !== 'sft' && kind !== 'grpo') {
      throw new Error(`--set ${rawKey}: unknown prefix "${kind}" (use sft. or grpo.)`);
    }
    let applied = 0;
    for (const s of out) {
      if (kind !== null && kindOf(s) !== kind) continue;
      const defaults = FIELDS[kindOf(s)] as Record<string, unknown>;
      if (!(key in defaults)) continue;
      if (typeof defaults[key] !== typeof value) {
        throw new Error(`--set ${rawKey}=${value}: expected a ${typeof defaults[key]}`);
      }
      (s.config as Record<string, unknown>)[key] = value;
      applied++;
    }
    if (applied === 0) throw new Error(`--set ${rawKey}: no stage of this experiment has a field "${key}"`);
  }
  return out;
}

/** Reject SFT configs that cannot run, naming the field and value. */
export function validateSFTConfig(cfg: SFTConfig): void {
  for (const k of ['epochs', 'batchSize', 'maxLen'] as const) {
    if (!Number.isInteger(cfg[k]) || cfg[k] < 1) throw new Error(`sft config: ${k} must be an integer >= 1, got ${cfg[k]}`);
  }
  if (!(cfg.lr > 0)) throw new Error(`sft config: lr must be > 0, got ${cfg.lr}`);
  if (!(cfg.warmupRatio >= 0 && cfg.warmupRatio < 1)) throw new Error(`sft config: warmupRatio must be in [0, 1), got ${cfg.warmupRatio}`);
  if (!(cfg.weightDecay >= 0)) throw new Error(`sft config: weightDecay must be >= 0, got ${cfg.weightDecay}`);
  if (!(cfg.maxGradNorm > 0)) throw new Error(`sft config: maxGradNorm must be > 0, got ${cfg.maxGradNorm}`);
}

/** Check every stage's config merged over its defaults (what the stage will run with); throws naming the stage. */
export function validateStages(stages: StageSpec[]): void {
  stages.forEach((s, i) => {
    try {
      if (s.kind === 'grpo') validateGRPOConfig({ ...defaultGRPOConfig, ...s.config } as GRPOConfig);
      else validateSFTConfig({ ...defaultSFTConfig, ...s.config } as SFTConfig);
    } catch (e) {
      throw new Error(`stage ${i} (${s.kind}): ${(e as Error).message}`);
    }
  });
}
