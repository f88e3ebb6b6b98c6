/**
 * `--set key=value` overrides on an experiment. A key names the config it changes by prefix:
 *   grpo.<field>        every GRPO stage (lib/train/grpo/config.ts)
 *   sft.<field>         every SFT stage and SFT phase: interleaved ETS / PRS phases, the guard's (lib/train/sft.ts)
 *   ops. hbg. syncsft.  the synchronous signal of a GRPO stage (lib/train/signals)
 *   guard.<field>       the adaptive collapse guard (lib/experiments/run/guard.ts)
 *   interleave.lastSteps  the RL steps an interleaved SFT phase reads (lib/train/interleaved.ts)
 *   pipeline.<field>    the run's differences from the paper's pipeline (lib/train/pipeline.ts)
 * or, unprefixed, every SFT and GRPO config that has that field (`lr=3e-4` sets both learning rates). Every field is
 * declared once, with its kind and range (lib/util/fields.ts): a value is checked against it as it is set, and every
 * merged config again before the run touches its folder (validateStages), so `grpo.klCoef=-5` or `grpo.lr=1e30` is
 * refused with the key and its range, and a key that no stage accepts is an error naming it: a typo never runs the
 * default experiment silently.
 */
import { GRPO } from '../../train/grpo/config';
import { SFT } from '../../train/sft';
import { OPS } from '../../train/signals/ops';
import { HBG } from '../../train/signals/hbg';
import { SYNC_SFT } from '../../train/signals/syncsft';
import { INTERLEAVE } from '../../train/interleaved';
import { PIPELINE, PipelineConfig } from '../../train/pipeline';
import { ConfigDecl, FieldError, Fields } from '../../util/fields';
import { GUARD } from './guard';
import { StageSpec } from '../registry/spec';

type Obj = Record<string, unknown>;
type AnyDecl = ConfigDecl<Fields>;

/** Every declared config that `--set` reaches, by prefix (the docs' table of knobs lists them in this order). */
export const CONFIGS: AnyDecl[] = [GRPO, SFT, OPS, HBG, SYNC_SFT, GUARD, INTERLEAVE, PIPELINE];
const BY_PREFIX = new Map(CONFIGS.map((d) => [d.prefix, d]));
const SIGNAL_DECL: Record<string, AnyDecl> = { ops: OPS, hbg: HBG, 'sync-sft': SYNC_SFT };

/** One config of a stage that overrides can reach: its declaration and the object to change. */
interface Target {
  decl: AnyDecl;
  obj: Obj;
}

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
  if (s.kind === 'sft') return [{ decl: SFT, obj: s.config }];
  if (s.kind === 'sft-interleaved') return [{ decl: SFT, obj: s.config },
    { decl: INTERLEAVE, obj: s as unknown as Obj }];
  const out: Target[] = [{ decl: GRPO, obj: s.config }];
  if (s.signal) out.push({ decl: SIGNAL_DECL[s.signal.kind], obj: s.signal.config as Obj });
  if (s.guard) out.push({ decl: GUARD, obj: s.guard as Obj }, { decl: SFT, obj: s.guard.sft as Obj });
  return out;
}

/** A `--set` value as its field takes it: `null` for a field that may be null, else as the parser typed it. */
function valueFor(decl: AnyDecl, key: string, value: string | number | boolean): unknown {
  return value === 'null' && decl.fields[key]?.kind === 'number or null' ? null : value;
}

/** The stages with `overrides` applied (pipeline keys aside: pipelineOverrides); throws FieldError naming the key. */
export function applyOverrides(stages: StageSpec[], overrides: Record<string, string | number | boolean>): StageSpec[] {
  const out = stages.map(copyStage);
  for (const [rawKey, value] of Object.entries(overrides)) {
    const dot = rawKey.indexOf('.');
    const prefix = dot > 0 ? rawKey.slice(0, dot) : null;
    const key = dot > 0 ? rawKey.slice(dot + 1) : rawKey;
    if (prefix !== null && !BY_PREFIX.has(prefix)) {
      throw new FieldError(`--set ${rawKey}: unknown prefix "${prefix}" (use ` +
        `${CONFIGS.map((d) => d.prefix + '.').join(', ')})`);
    }
    if (prefix === 'pipeline') continue; // the run's, not a stage's (pipelineOverrides)
    let applied = 0;
    for (const s of out) {
      for (const t of targets(s)) {
        if (prefix === null ? t.decl !== SFT && t.decl !== GRPO : t.decl.prefix !== prefix) continue;
        if (!(key in t.decl.fields)) continue;
        const v = valueFor(t.decl, key, value);
        t.decl.checkField(key, v);
        t.obj[key] = v;
        applied++;
      }
    }
    if (applied === 0) throw new FieldError(`--set ${rawKey}: no stage of this experiment has a field "${key}"`);
  }
  return out;
}

/** The run's pipeline: the experiment's own differences, then the `pipeline.` keys of `overrides`. */
export function pipelineOverrides(base: Partial<PipelineConfig> | undefined, overrides: Record<string,
  string | number | boolean>):
  PipelineConfig {
  const out: PipelineConfig = { ...PIPELINE.defaults, ...(base ?? {}) };
  for (const [rawKey, value] of Object.entries(overrides)) {
    if (!rawKey.startsWith('pipeline.')) continue;
    const key = rawKey.slice('pipeline.'.length);
    PIPELINE.checkField(key, value);
    (out as Obj)[key] = value;
  }
  PIPELINE.check(out);
  return out;
}

/**
 * Check every stage's config merged over its declared defaults (what the stage will run with); throws naming the stage.
 */
export function validateStages(stages: StageSpec[]): void {
  stages.forEach((s, i) => {
    try {
      for (const t of targets(s)) {
        // the guard's object also holds its SFT config (a target of its own); an interleaved stage's object is the
        // stage (its kind, source, SFT config); every other target is the config itself, unknown keys included
        const { sft: _sft, ...guard } = t.obj as Obj & { sft?: unknown };
        void _sft;
        const own = t.decl === INTERLEAVE ? { lastSteps: t.obj.lastSteps } : t.decl === GUARD ? guard : t.obj;
        t.decl.check({ ...t.decl.defaults, ...own });
      }
      if (s.kind === 'grpo' && s.signal) {
        const groupSize = (s.config.groupSize ?? GRPO.defaults.groupSize) as number;
        const c = (s.signal.config ?? {}) as Obj;
        for (const k of ['offPolicyRollouts', 'hintedRollouts']) {
          const v = c[k];
          if (v !== undefined && (v as number) > groupSize) {
            throw new FieldError(`${SIGNAL_DECL[s.signal.kind].prefix}.${k} must be at most grpo.groupSize ` +
              `(${groupSize}), got ${v}`);
          }
        }
      }
    } catch (e) {
      throw new FieldError(`stage ${i} (${s.kind}): ${(e as Error).message}`);
    }
  });
}
