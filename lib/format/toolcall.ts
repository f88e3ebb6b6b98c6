/**
 * Tool calls in both syntaxes of the study: rendering (what the teacher writes) and parsing (what the
 * environment makes of whatever the policy wrote).
 *
 * - 'json' (training format, DESIGN A.2): `<tool_call>{"name": "cd", "arguments": {"folder": "doc"}}</tool_call>`,
 *   several calls joined by '\n'. The canonical rendering has NO newline after `<tool_call>`, so the token right
 *   after the tag is `{"` and the collapse probe (A.5) compares `{"` / `<|im_end|>` / `<tool_call>` directly.
 *   Parsing still accepts whitespace and newlines inside the tags, as real Qwen outputs have them.
 * - 'python' (format-OOD, A.7): the whole message is a list `[cd(folder='doc'), ls()]`.
 *
 * Parsing is strict like BFCL (a call needs a string "name" AND an object "arguments") and total: any input,
 * however broken, returns a ParsedCalls; one error string per malformed attempt, which the environment returns
 * to the policy inside a <tool_response>.
 */
import { ToolCall, CallSyntax } from './types';
import { TOOL_CALL_OPEN, TOOL_CALL_CLOSE } from './tokens';
import { toJsonText, isJsonObject } from './json';
import { renderPythonCall, parsePythonCallList } from './python';

export interface ParsedCalls {
  /** Well-formed calls, in order. */
  calls: ToolCall[];
  /** One human-readable error per malformed call attempt, e.g. `Error: tool call is missing "name"`. */
  errors: string[];
  /** The message attempted a call (json: a <tool_call> or </tool_call> tag; python: starts like `[name(`). */
  hasCallSyntax: boolean;
  /** The message content outside the call blocks, trimmed ('' for a pure call message). */
  text: string;
}

export function renderToolCall(c: ToolCall, syntax: CallSyntax): string {
  if (syntax === 'python') return renderPythonCall(c);
  return TOOL_CALL_OPEN + toJsonText({ name: c.name, arguments: c.arguments }) + TOOL_CALL_CLOSE;
}

/** The content of an assistant message that makes these calls. */
export function renderToolCalls(calls: ToolCall[], syntax: CallSyntax): string {
  if (syntax === 'python') return '[' + calls.map(renderPythonCall).join(', ') + ']';
  return calls.map((c) => renderToolCall(c, 'json')).join('\n');
}

/** A python call list must open the (trimmed) message: `[name(`. */
const PY_LIST_START = /^\[\s*[A-Za-z_][A-Za-z0-9_.]*\s*\(/;

export function parseToolCalls(text: string, syntax: CallSyntax): ParsedCalls {
  const s = typeof text === 'string' ? text : String(text ?? '');
  try {
    return syntax === 'python' ? parsePython(s) : parseJson(s);
  } catch (e) {
    // Defensive: the parsers below are written not to throw; if one ever does, report it as a malformed call.
    return {
      calls: [],
      errors: [`Error: could not parse tool call: ${String((e as Error)?.message ?? e)}`],
      hasCallSyntax: true,
      text: s.trim(),
    };
  }
}

function parsePython(s: string): ParsedCalls {
  const trimmed = s.trim();
  if (!PY_LIST_START.test(trimmed)) return { calls: [], errors: [], hasCallSyntax: false, text: trimmed };
  const r = parsePythonCallList(trimmed, 0);
  return { calls: r.calls, errors: r.errors, hasCallSyntax: true, text: trimmed.slice(r.end).trim() };
}

function parseJson(s: string): ParsedCalls {
  const calls: ToolCall[] = [];
  const errors: string[] = [];
  const outside: string[] = [];
  const hasCallSyntax = s.includes(TOOL_CALL_OPEN) || s.includes(TOOL_CALL_CLOSE);
  const n = s.length;
  let i = 0;
  while (i < n) {
    const open = s.indexOf(TOOL_CALL_OPEN, i);
    const close = s.indexOf(TOOL_CALL_CLOSE, i);
    if (open < 0 && close < 0) {
      outside.push(s.slice(i));
      break;
    }
    if (close >= 0 && (open < 0 || close < open)) {
      outside.push(s.slice(i, close));
      errors.push(`Error: unbalanced ${TOOL_CALL_CLOSE} tag (no matching ${TOOL_CALL_OPEN})`);
      i = close + TOOL_CALL_CLOSE.length;
      continue;
    }
    outside.push(s.slice(i, open));
    const bodyStart = open + TOOL_CALL_OPEN.length;
    const nextOpen = s.indexOf(TOOL_CALL_OPEN, bodyStart);
    const end = s.indexOf(TOOL_CALL_CLOSE, bodyStart);
    if (end < 0 || (nextOpen >= 0 && nextOpen < end)) {
      // Unclosed: everything up to the next <tool_call> (or the end) was this failed attempt.
      errors.push(`Error: unbalanced ${TOOL_CALL_OPEN} tag (no matching ${TOOL_CALL_CLOSE})`);
      i = nextOpen >= 0 ? nextOpen : n;
      continue;
    }
    const r = parseJsonCall(s.slice(bodyStart, end));
    if (typeof r === 'string') errors.push(r);
    else calls.push(r);
    i = end + TOOL_CALL_CLOSE.length;
  }
  const text = outside
    .map((t) => t.trim())
    .filter((t) => t.length > 0)
    .join('\n');
  return { calls, errors, hasCallSyntax, text };
}

/** One block's inner text -> a call, or the error string the environment will show the policy. */
export function parseJsonCall(body: string): ToolCall | string {
  const src = body.trim();
  if (src.length === 0) return 'Error: empty tool call';
  let obj: unknown;
  try {
    obj = JSON.parse(src);
  } catch (e) {
    return `Error: could not parse tool call: ${String((e as Error)?.message ?? e)}`;
  }
  if (!isJsonObject(obj)) return 'Error: tool call must be a JSON object with "name" and "arguments"';
  const name = obj['name'];
  if (typeof name !== 'string' || name.length === 0) return 'Error: tool call is missing "name"';
  if (!Object.prototype.hasOwnProperty.call(obj, 'arguments')) return `Error: tool call ${name} is missing "arguments"`;
  const args = obj['arguments'];
  if (!isJsonObject(args)) return `Error: "arguments" of ${name} must be a JSON object`;
  return { name, arguments: args };
}
