/**
 * A small, strict command-line parser: `toolrl <command> [--opt value] [--flag] [--set k=v ...]`.
 *
 * Strict on purpose: an unknown option or a bad value exits non-zero with a message that names the
 * argument, instead of silently running a different experiment than the one the user asked for.
 */

export interface OptionSpec {
  /** Takes a value (`--split id`) or is a boolean flag (`--json`). */
  kind: 'string' | 'number' | 'flag' | 'list';
  /** Allowed values for a string option. */
  choices?: string[];
  help: string;
  default?: string | number | boolean;
}

export interface CommandSpec {
  name: string;
  summary: string;
  options: Record<string, OptionSpec>;
}

/** A bad command line or config: exits 2, before any work starts (and before the backend line). */
export class UsageError extends Error {}

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
    if (value === undefined || (inline === undefined && value.startsWith('--'))) {
      throw new UsageError(`--${key} needs a value`);
    }
    if (opt.kind === 'number') {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new UsageError(`--${key} must be a number, got "${value}"`);
      out[key] = n;
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
  return lines.join('\n');
}

/** `value` as an integer >= 1, or a UsageError naming the option. */
export function positiveInt(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new UsageError(`${option} must be an integer >= 1, got ${value}`);
  }
  return value;
}

/** Parse repeated `--set key=value` overrides into an object (numbers and booleans typed). */
export function parseOverrides(items: string[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set expects key=value, got "${item}"`);
    const key = item.slice(0, eq);
    const raw = item.slice(eq + 1);
    if (raw === 'true' || raw === 'false') out[key] = raw === 'true';
    else if (raw !== '' && Number.isFinite(Number(raw))) out[key] = Number(raw);
    else out[key] = raw;
  }
  return out;
}
