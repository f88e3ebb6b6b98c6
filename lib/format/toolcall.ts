/**
 * Tool calls in both syntaxes of the study: rendering (what the teacher writes) and parsing (what the
 * environment makes of whatever the policy wrote).
 *
 * - 'json' (training format, docs/design.md A.2), the layout of Qwen2.5's chat template and of the paper's data
 * converters:
 *       <tool_call>\n{"name": "cd", "arguments": {"folder": "doc"}}\n</tool_call>\n
 *   newlines inside the tags and one `\n` after every block (the converters' choice; the template would drop the
 *   last one before `<|im_end|>`). So "a tool-call tag, then a newline" is one context with three continuations:
 *   `{"` after an opening tag, `<tool_call>` (another call) or `<|im_end|>` after a closing one. These are exactly
 *   the three tokens the collapse probe (A.5) reads after `<tool_call>\n`. Parsing accepts any whitespace inside
 *   and between the tags.
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
  return `${TOOL_CALL_OPEN}\n${toJsonText({ name: c.name, arguments: c.arguments })}\n${TOOL_CALL_CLOSE}\n`;
}

/** The content of an assistant message that makes these calls. */
export function renderToolCalls(calls: ToolCall[], syntax: CallSyntax): string {
  if (syntax === 'python') return '[' + calls.map(renderPythonCall).join(', ') + ']';
  return calls.map((c) => renderToolCall(c, 'json')).join('');
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

/** Malformed blocks reported one by one before the parser gives up on the rest of a message. */
const MAX_BLOCK_ERRORS = 32;

function parseJson(s: string): ParsedCalls {
  const calls: ToolCall[] = [];
  const errors: string[] = [];
  const outside: string[] = [];
  const hasCallSyntax = s.includes(TOOL_CALL_OPEN) || s.includes(TOOL_CALL_CLOSE);
  const n = s.length;
  // Searching from scratch for every block costs O(n) per tag, O(n^2) for a message of thousands of tags:
  // remember where each tag occurs next and search again only once the cursor has passed that place.
  let openAt = -2;
  let closeAt = -2;
  const findOpen = (from: number) => (openAt !== -1 && openAt < from ?
    (openAt = s.indexOf(TOOL_CALL_OPEN, from)) : openAt);
  const findClose = (from: number) => (closeAt !== -1 && closeAt < from ?
    (closeAt = s.indexOf(TOOL_CALL_CLOSE, from)) : closeAt);
  let i = 0;
  while (i < n) {
    if (errors.length >= MAX_BLOCK_ERRORS) {
      // A message of thousands of broken blocks is garbage; more messages would only flood the observation.
      errors.push('Error: too many malformed tool calls; the rest of the message was not read');
      outside.push(s.slice(i));
      break;
    }
    const open = findOpen(i);
    const close = findClose(i);
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
    const nextOpen = findOpen(bodyStart);
    const end = findClose(bodyStart);
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
