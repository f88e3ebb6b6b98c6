/**
 * The building blocks of templated user requests (docs/design.md A.1 / B: "templated English with several phrasings
 * per intent").
 *
 * An Intent reads the family's current state and proposes a request: the user text, the GT calls that satisfy
 * it, and optionally a miss_param variant (the same request with one required value left out, plus the
 * follow-up sentence that supplies it). The generator executes the calls on a simulator and keeps the draft
 * only if every call succeeds, so GT calls always replay.
 */
import type { JsonValue, ToolCall } from '../../format/types';
import { Rng } from '../../prng';

export interface IntentDraft {
  text: string;
  calls: ToolCall[];
  /** miss_param variant: `text` omits one required value, `supply` gives it in the next user turn. */
  miss?: { text: string; supply: string };
}

export interface IntentCtx<S> {
  rng: Rng;
  /** A copy of the simulator state before this request. */
  state: S;
  /** long_context task: prefer the request that produces the longest observation. */
  long: boolean;
  /** Facts carried across the turns of one task (e.g. the id of an order placed in an earlier turn). */
  memo: { [key: string]: JsonValue };
}

export interface Intent<S> {
  name: string;
  /** True when the request's observation grows with the state (used for long_context's first turn). */
  long?: boolean;
  make(ctx: IntentCtx<S>): IntentDraft | null;
}

/** A GT call literal. */
export function call(name: string, args: { [key: string]: JsonValue } = {}): ToolCall {
  return { name, arguments: args };
}

/** Fill `{slot}`s of one randomly chosen template; the first letter is upper-cased. */
export function say(rng: Rng, templates: readonly string[], vars: { [slot: string]: string | number } = {}): string {
  const t = rng.pick(templates);
  const s = t.replace(/\{(\w+)\}/g, (_m, k: string) => {
    if (!(k in vars)) throw new Error(`say: template slot {${k}} has no value in ${JSON.stringify(t)}`);
    return String(vars[k]);
  });
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Lower-case the first letter unless the first word is an all-caps symbol such as AAPL. */
export function lowerFirst(s: string): string {
  if (/^[A-Z]{2}/.test(s)) return s;
  return s.charAt(0).toLowerCase() + s.slice(1);
}
