/**
 * A small, strict command-line parser: `toolrl <command> [--opt value] [--flag] [--set k=v ...]`.
 *
 * Strict on purpose: an unknown option or a bad value exits non-zero with a message that names the
 * argument, instead of silently running a different experiment than the one the user asked for. Numbers are
 * decimal only (`0x10`, `0b1` and an empty string are not numbers here, whatever JavaScript's Number() says),
 * and seeds are integers in [0, 2^32 - 1] written in digits: `--seed 4294967297` is refused rather than run as
 * another seed's twin.
 */
import { InputError } from '../util/errors';
import { SEED_MAX } from '../prng';

export interface OptionSpec {
  /** Takes a value (`--split id`) or is a boolean flag (`--json`). */
  kind: 'string' | 'number' | 'seed' | 'flag' | 'list';
  /** Allowed values for a string option. */
  choices?: string[];
  help: string;
  default?: string | number | boolean;
  /** The value may itself start with `--` (`--sbatch-line --account=lab`): the next word is taken whatever it is. */
  dashValue?: boolean;
}

export interface CommandSpec {
  name: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Printed after the options by --help (e.g. the exit codes). */
  notes?: string;
}

/** A bad command line or config: exits 2, before any work starts (and before the backend line). */
export class UsageError extends InputError {}

/** A number written in decimal (optionally signed, with a fraction and an exponent): `3e-4`, `-1`, `0.5`. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** `text` as a decimal number, or undefined when it is not one. */
export function decimalNumber(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** `text` as a seed (digits only, in [0, 2^32 - 1]), or a UsageError naming `option`. */
export function parseSeed(option: string, text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n <= SEED_MAX)) throw new UsageError(`${option} must be an integer in [0, ${SEED_MAX}] written in decimal ` +
    `digits, got "${text}"`);
  return n;
}

/** A subcommand: its option spec and what it does with the parsed options. */
export interface Command {
  spec: CommandSpec;
  run(args: ParsedArgs): Promise<void>;
}

export type ParsedArgs = Record<string, string | number | boolean | string[] | undefined>;

/**
 * Parse argv (after the command name) against a command spec; throws UsageError naming the argument (the
 * caller prefixes messages with `toolrl <command>: error:`).
 */
export function parseArgs(spec: CommandSpec, argv: string[]): ParsedArgs {
  const out: ParsedArgs = {};
  for (const [key, opt] of Object.entries(spec.options)) {
    if (opt.kind === 'list') out[key] = [];
    else if (opt.default !== undefined) out[key] = opt.default;
    else if (opt.kind === 'flag') out[key] = false;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    let key = arg.slice(2);
    let inline: string | undefined;
    const eq = key.indexOf('=');
    if (eq >= 0) {
      inline = key.slice(eq + 1);
      key = key.slice(0, eq);
    }
    const opt = spec.options[key];
    if (!opt) {
      const known = Object.keys(spec.options).map((k) => `--${k}`).join(', ');
      throw new UsageError(`unknown option "--${key}" (known: ${known || 'none'})`);
    }
    if (opt.kind === 'flag') {
      if (inline !== undefined) throw new UsageError(`--${key} takes no value`);
      out[key] = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || (inline === undefined && value.startsWith('--') && !opt.dashValue)) {
      throw new UsageError(`--${key} needs a value`);
    }
    if (opt.kind === 'number') {
      const n = decimalNumber(value);
      if (n === undefined) throw new UsageError(`--${key} must be a decimal number, got "${value}"`);
      out[key] = n;
    } else if (opt.kind === 'seed') {
      out[key] = parseSeed(`--${key}`, value);
    } else if (opt.kind === 'list') {
      (out[key] as string[]).push(value);
    } else {
      if (opt.choices && !opt.choices.includes(value)) {
        throw new UsageError(`--${key} must be one of ${opt.choices.join(', ')}, got "${value}"`);
      }
      out[key] = value;
    }
  }
  return out;
}

/** Help text for one command: one line per option, the help column aligned after the longest option. */
export function commandHelp(spec: CommandSpec): string {
  const lines = [`toolrl ${spec.name}: ${spec.summary}`, '', 'options:'];
  const entries = Object.entries(spec.options).map(([key, opt]) => {
    const arg = opt.kind === 'flag' ? '' : opt.choices ? ` <${opt.choices.join('|')}>` : ' <value>';
    const def = opt.default !== undefined ? ` (default ${opt.default})` : '';
    return { left: `  --${key}${arg}`, right: opt.help + def };
  });
  const width = Math.max(0, ...entries.map((e) => e.left.length)) + 2;
  for (const e of entries) lines.push(e.left.padEnd(width) + e.right);
  if (spec.notes) lines.push('', spec.notes);
  return lines.join('\n');
}

/** `value` as an integer >= 1 (and <= max), or a UsageError naming the option. */
export function positiveInt(option: string, value: unknown, max = Infinity): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new UsageError(`${option} must be an integer >= 1, got ${value}`);
  }
  if (value > max) throw new UsageError(`${option} must be at most ${max}, got ${value}`);
  return value;
}

/**
 * Parse repeated `--set key=value` overrides into an object (decimal numbers and booleans typed; a seed field,
 * `grpo.seed` or `sft.seed`, must be a seed in digits).
 */
export function parseOverrides(items: string[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set expects key=value, got "${item}"`);
    const key = item.slice(0, eq);
    const raw = item.slice(eq + 1);
    if (/(^|\.)seed$/.test(key)) out[key] = parseSeed(`--set ${key}`, raw);
    else if (raw === 'true' || raw === 'false') out[key] = raw === 'true';
    else out[key] = decimalNumber(raw) ?? raw;
  }
  return out;
}
