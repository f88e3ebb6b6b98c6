/**
 * One declaration per config field: its type, default, range (lower and upper bound) and unit, written once next to
 * the doc comment that says where its default comes from (the paper or ours). Everything else follows from it:
 * the config's TypeScript type (`ConfigOf`), its defaults, `--set` parsing and checking with an error that names the
 * key and the range (lib/experiments/run/overrides.ts), and the table of knobs in docs/knobs.md (`knobsMarkdown`,
 * which reads the doc comments from the declaring file with the TypeScript parser).
 *
 * The checks are zod schemas (zod 3: the schema library most TypeScript projects use, and the one whose types
 * the tslab kernel's TypeScript 5.0 still compiles). The declaration keeps the range as numbers too, for the
 * messages and the docs, so a message never reads like zod's own.
 */
import { z } from 'zod';

/** What the value is: an integer, a real number, a flag, or a real number that may be null (an option off). */
export type FieldKind = 'integer' | 'number' | 'boolean' | 'number or null';

export interface Field<T> {
  kind: FieldKind;
  default: T;
  /** Bounds of the range; `open` says which of them is excluded. Absent for flags. */
  min?: number;
  max?: number;
  open?: 'min' | 'max' | 'both';
  /** What a number counts (rollouts, tokens, steps, ...), for the docs. */
  unit?: string;
  schema: z.ZodType<T>;
}

type Bounds = { min: number; max: number; open?: 'min' | 'max' | 'both'; unit?: string };

function bounded(n: z.ZodNumber, b: Bounds): z.ZodNumber {
  const lo = b.open === 'min' || b.open === 'both' ? n.gt(b.min) : n.gte(b.min);
  return b.open === 'max' || b.open === 'both' ? lo.lt(b.max) : lo.lte(b.max);
}

/** An integer field in [min, max]. */
export function int(def: number, min: number, max: number, unit?: string): Field<number> {
  return { kind: 'integer', default: def, min, max, unit, schema: bounded(z.number().int(), { min, max }) };
}

/** A real field in its range (closed unless `open` says otherwise). */
export function num(def: number, b: Bounds): Field<number> {
  return { kind: 'number', default: def, ...b, schema: bounded(z.number().finite(), b) };
}

/** A real field in its range, or null (the option it sets is off). */
export function numOrNull(def: number | null, b: Bounds): Field<number | null> {
  return { kind: 'number or null', default: def, ...b, schema: bounded(z.number().finite(), b).nullable() };
}

/** A flag. */
export function flag(def: boolean): Field<boolean> {
  return { kind: 'boolean', default: def, schema: z.boolean() };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Fields = Record<string, Field<any>>;
/** The config a declaration describes (homomorphic, so each field keeps its doc comment for the editor). */
export type ConfigOf<F extends Fields> = { [K in keyof F]: F[K] extends Field<infer T> ? T : never };

/** A value outside its field's declaration (the CLI turns it into exit 2). */
export class FieldError extends Error {}

export interface ConfigDecl<F extends Fields> {
  /** The `--set` prefix of the config (`grpo`, `sft`, ...). */
  prefix: string;
  fields: F;
  defaults: ConfigOf<F>;
  /** `prefix.key must be ... in [lo, hi], got v`; throws FieldError for an unknown key or a value outside. */
  checkField(key: string, value: unknown): void;
  /** Every field of a merged config (unknown keys too), then the cross-field rule; throws FieldError. */
  check(cfg: ConfigOf<F>): void;
}

/** "an integer in [1, 64]", "a number in (0, 1]", "true or false", "null or a number in (0, 10]". */
export function rangeText(f: Field<unknown>): string {
  if (f.kind === 'boolean') return 'true or false';
  const lo = f.open === 'min' || f.open === 'both' ? '(' : '[';
  const hi = f.open === 'max' || f.open === 'both' ? ')' : ']';
  const range = `${lo}${f.min}, ${f.max}${hi}`;
  if (f.kind === 'integer') return `an integer in ${range}`;
  return f.kind === 'number' ? `a number in ${range}` : `null or a number in ${range}`;
}

/**
 * Declare a config: its `--set` prefix, one Field per key, and optionally a rule across fields (a message when it is
 * broken, else null) that names the keys with their prefix: "grpo.promptsPerStep (8) must be a multiple of ...".
 */
export function declareConfig<F extends Fields>(prefix: string, fields: F,
  rule?: (cfg: ConfigOf<F>) => string | null): ConfigDecl<F> {
  const defaults = Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, f.default])) as ConfigOf<F>;
  const checkField = (key: string, value: unknown) => {
    const f = fields[key];
    if (!f) throw new FieldError(`${prefix}.${key}: no such field (fields: ${Object.keys(fields).join(', ')})`);
    if (!f.schema.safeParse(value).success) {
      const unit = f.unit ? ` (${f.unit})` : '';
      throw new FieldError(`${prefix}.${key} must be ${rangeText(f)}${unit}, got ${JSON.stringify(value)}`);
    }
  };
  return {
    prefix, fields, defaults, checkField,
    check(cfg) {
      for (const [k, v] of Object.entries(cfg)) checkField(k, v);
      const broken = rule?.(cfg);
      if (broken) throw new FieldError(broken);
    },
  };
}
