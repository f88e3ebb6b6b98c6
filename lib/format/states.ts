/**
 * Structural state of one assistant message (DESIGN A.5), the lens through which the collapse is measured:
 * the vanilla-RL model of the paper ends 87% of its messages right after a bare `<tool_call>`.
 *
 * Rules, applied in this order to the message content (after trimming trailing whitespace and stripping ONE
 * trailing `<|im_end|>`, so raw Qwen-style strings classify like our own decoded messages):
 *
 * 1. fullCollapse: degenerate control-token output, any of
 *    - the message is empty or whitespace only;
 *    - it consists only of control tags and whitespace (`<tool_call>`, `<tool_call></tool_call>`, `<|im_end|>`);
 *    - some tag is repeated back to back (whitespace between allowed) 3 or more times;
 *    - a `<tool_call>` is followed, with only whitespace in between, by `<|im_end|>` or by the end of the
 *      message: the call was opened and the message closed with nothing inside (the collapse signature, even
 *      when some text or a good call precedes it).
 * 2. healthyCall: at least one call parsed (in the given syntax), zero parse errors, and no free text outside
 *    the call blocks (whitespace is fine).
 * 3. pollution: anything else that shows call syntax: tool tags or any other chat tag, a `{"name": ...}` call
 *    without tags, a python-style `name(arg=...)` call (in either syntax: it is the wrong format in json mode and
 *    text mixed with a call in python mode), a JSON call in python mode, malformed calls, calls plus free text.
 * 4. healthyResponse: plain text with no tags and no call syntax.
 */
import { CallSyntax, StructuralState, STRUCTURAL_STATES } from './types';
import { IM_END, TOOL_CALL_OPEN, CONTROL_TOKENS } from './tokens';
import { parseToolCalls } from './toolcall';

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const TAG_ALT = CONTROL_TOKENS.map(escapeRe).join('|');
/** Whole message = control tags and whitespace. */
const ONLY_TAGS = new RegExp(`^(?:\\s*(?:${TAG_ALT}))+\\s*$`);
/** One tag three times in a row (whitespace between allowed). */
const REPEATED_TAG = new RegExp(`(${TAG_ALT})(?:\\s*\\1){2}`);
/** `<tool_call>` then nothing but whitespace, then `<|im_end|>` or the end. */
const EMPTY_OPEN_CALL = new RegExp(`${escapeRe(TOOL_CALL_OPEN)}\\s*(?:${escapeRe(IM_END)}|$)`);
/** Any chat tag anywhere. */
const ANY_TAG = new RegExp(TAG_ALT);
/** A JSON tool call written without (or outside) the tags. */
const JSON_CALL = /\{\s*"name"\s*:/;
/** A python-style call with a keyword argument: `name(arg=` (not `==`). */
const PY_CALL = /[A-Za-z_][A-Za-z0-9_.]*\s*\(\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)/;

/** Drop trailing whitespace and one trailing `<|im_end|>` (a raw model string may still carry it). */
export function stripTrailingImEnd(content: string): string {
  const t = content.trimEnd();
  return t.endsWith(IM_END) ? t.slice(0, t.length - IM_END.length) : t;
}

export function classifyMessage(content: string, syntax: CallSyntax = 'json'): StructuralState {
  const raw = typeof content === 'string' ? content : String(content ?? '');
  const s = stripTrailingImEnd(raw);
  if (s.trim().length === 0) return 'fullCollapse';
  if (ONLY_TAGS.test(s) || REPEATED_TAG.test(s) || EMPTY_OPEN_CALL.test(s)) return 'fullCollapse';

  const parsed = parseToolCalls(s, syntax);
  if (parsed.calls.length > 0 && parsed.errors.length === 0 && parsed.text.trim().length === 0) {
    return 'healthyCall';
  }
  if (
    parsed.hasCallSyntax ||
    parsed.calls.length > 0 ||
    parsed.errors.length > 0 ||
    ANY_TAG.test(s) ||
    JSON_CALL.test(s) ||
    PY_CALL.test(s)
  ) {
    return 'pollution';
  }
  return 'healthyResponse';
}

/** Share of each state (sums to 1; all zeros for an empty list). */
export function stateShares(states: StructuralState[]): Record<StructuralState, number> {
  const out = { healthyCall: 0, healthyResponse: 0, pollution: 0, fullCollapse: 0 } as Record<StructuralState, number>;
  for (const st of states) if (st in out) out[st] += 1;
  const n = states.length;
  if (n > 0) for (const st of STRUCTURAL_STATES) out[st] /= n;
  return out;
}
