/**
 * The common shell of every API family: a stateful simulator in the spirit of BFCL-V3's Python API classes
 * (GorillaFileSystem, MessageAPI, TradingBot, VehicleControlAPI; docs/design.md A.1), cut down to a handful of
 * functions each.
 *
 * Why the rules below:
 * - The checker (docs/design.md A.3) compares the state reached by the model with the state reached by the GT calls,
 *   so the state must be plain JSON that deep-compares (no classes, Maps, undefined or NaN).
 * - It also checks that every GT call *result* appears among the model's results, so a result must be a
 *   deterministic function of (state, call): compact JSON text with a fixed key order.
 * - The model emits arbitrary text; whatever it calls with must come back as an `Error: ...` text inside
 *   `<tool_response>` and the turn continues (docs/design.md A.2). So `call` validates every argument against the
 *   ToolSpec and never throws.
 */
import type { JsonValue, ParamSpec, ToolSpec } from '../../format/types';
import { toJsonText } from '../../format/json';

export interface CallResult {
  ok: boolean;
  /** Compact JSON text on success (`{"current_directory": "docs"}`), `Error: ...` on failure. */
  result: string;
}

export type Args = { [key: string]: JsonValue };

/** Thrown inside a handler to report a bad value; `call` turns it into an `Error: ...` result. */
export class ApiError extends Error {}

/** Compact JSON with `", "` / `": "` separators (the tokenizer's punctuation pieces), keys in given order. */
export function toText(v: JsonValue): string {
  return toJsonText(v);
}

/** Deep copy of a JSON value (states are small; this is the simplest correct copy). */
export function cloneJson<T extends JsonValue>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** JSON text with object keys sorted at every level: two states are equal iff their canonical texts are. */
export function canonicalJson(v: JsonValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(canonicalJson).join(',') + ']';
  const keys = Object.keys(v).sort();
  return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonicalJson(v[k])).join(',') + '}';
}

export function deepEqualJson(a: JsonValue, b: JsonValue): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function typeOk(p: ParamSpec, v: JsonValue): boolean {
  switch (p.type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
  }
}

/** Shorthand for ToolSpec literals: `tool('cd', 'change the current folder', ['folder', 'string'])`. */
export function tool(name: string, description: string, ...params: [string, ParamSpec['type'], boolean?][]): ToolSpec {
  return { name, description, params: params.map(([n, type, req]) => ({ name: n, type, required: req !== false })) };
}

/**
 * One family instance. Subclasses declare `tools` and one handler per tool; handlers receive validated
 * arguments and may throw ApiError for a bad value (a missing file, an unknown contact, a negative amount).
 */
export abstract class ApiFamily<S extends JsonValue = JsonValue> {
  abstract readonly name: string;
  abstract readonly tools: readonly ToolSpec[];
  protected state: S;

  constructor(state: S) {
    this.state = cloneJson(state);
  }

  /** A deep copy of the current state (plain JSON). */
  getState(): S {
    return cloneJson(this.state);
  }

  protected abstract handle(name: string, args: Args): JsonValue;

  /** Execute one call. Never throws: every failure is an `Error: ...` result with ok=false. */
  call(name: unknown, args: unknown): CallResult {
    try {
      if (typeof name !== 'string') return fail('function name must be a string');
      const spec = this.tools.find((t) => t.name === name);
      if (!spec) return fail(`unknown function ${name}`);
      if (args === undefined || args === null) args = {};
      if (typeof args !== 'object' || Array.isArray(args)) return fail(`arguments of ${name} must be an object`);
      const a = args as Args;
      for (const k of Object.keys(a)) {
        if (!spec.params.some((p) => p.name === k)) return fail(`unknown argument ${k} for ${name}`);
      }
      for (const p of spec.params) {
        const v = a[p.name];
        if (v === undefined || v === null) {
          if (p.required) return fail(`missing required argument ${p.name} for ${name}`);
          continue;
        }
        if (!typeOk(p, v)) return fail(`argument ${p.name} of ${name} must be of type ${p.type}`);
      }
      // Work on a copy so that a handler failing half-way leaves the state untouched.
      const before = cloneJson(this.state);
      try {
        return { ok: true, result: toText(this.handle(name, a)) };
      } catch (e) {
        this.state = before;
        if (e instanceof ApiError) return fail(e.message);
        return fail(`internal error in ${name}`);
      }
    } catch {
      return fail('invalid call');
    }
  }
}

function fail(msg: string): CallResult {
  return { ok: false, result: `Error: ${msg}` };
}

/** A ToolSpec list's function names (for withholding and re-offering functions). */
export function toolNames(tools: readonly ToolSpec[]): string[] {
  return tools.map((t) => t.name);
}
