/**
 * Structural state of one assistant message (docs/design.md A.5), the lens through which the collapse is measured:
 * the vanilla-RL model of the paper ends 87% of its messages right after a bare `<tool_call>`.
 *
 * Rules, applied in this order to the message content (after trimming trailing whitespace and stripping ONE
 * trailing `<|im_end|>`, so raw Qwen-style strings classify like our own decoded messages):
 *
 * 1. fullCollapse: degenerate output with no content, any of
 *    - the message is empty or whitespace only;
 *    - it consists only of control tags, bare role words on their own lines (`user`, `assistant`, `system`: the
 *      chat template's turn headers with the `<|im_start|>` token dropped) and whitespace, e.g.
 *      `<tool_call></tool_call>`, `user\nassistant\nuser`: the model emits conversation structure and nothing else;
 *    - some tag is repeated back to back (whitespace between allowed) 3 or more times;
 *    - a `<tool_call>` is followed, with only whitespace in between, by `<|im_end|>` or by the end of the
 *      message: the call was opened and the message closed with nothing inside (the collapse signature, even
 *      when some text or a good call precedes it).
 * 2. healthyCall: at least one call parsed (in the given syntax), zero parse errors, and no free text outside
 *    the call blocks (whitespace is fine).
 * 3. pollution: anything else that shows call or chat syntax:
 *    - tool tags or any other chat tag;
 *    - a leaked role header: a line that is only `user` / `assistant` / `system` next to real text. The model
 *      ran past the end of its turn and writes the next turns itself (replays the request, invents a tool
 *      result): the same failure as a `<|im_start|>user` inside a message, with the tag dropped, so it gets the
 *      same label; only when nothing but role words is left is it fullCollapse (rule 1);
 *    - JSON call syntax without tags: a `"name":` or `"arguments":` key, or a message made only of JSON
 *      punctuation (`{"`, `"}}`); such fragments are pieces of a call, not a reply to the user;
 *    - a python-style call `name(arg=...)` written like code, the name directly followed by `(` (in either
 *      syntax: it is the wrong format in json mode and text mixed with a call in python mode). Prose such as
 *      `Eve (use_name='Eve') retrieved it` has a space before the parenthesis: an aside in a sentence, not a call;
 *    - a JSON call in python mode, malformed calls, calls plus free text.
 * 4. healthyResponse: plain text with none of the above.
 *
 * Cost: the policy can emit anything (a million identifier characters, thousands of tags), so every check here
 * is one left-to-right pass over the text or a regex that cannot backtrack across a run more than once; the
 * whole classification is linear in the message length.
 */
import { CallSyntax, StructuralState, STRUCTURAL_STATES } from './types';
import { IM_END, TOOL_CALL_OPEN, CONTROL_TOKENS } from './tokens';
import { parseToolCalls } from './toolcall';

/** The role names of ChatML headers (`<|im_start|>user\n`); alone on a line they are a leaked turn boundary. */
const ROLE_WORDS = new Set(['system', 'user', 'assistant']);

/**
 * A python-style call with a keyword argument: `name(arg=` (not `==`), no space before `(`.
 * The lookbehind makes the name start at the beginning of a run of name characters: without it the engine
 * retried from every character of a long run (`aaaa...`) and rescanned the rest of it, O(n^2).
 */
const PY_CALL = /(?<![A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_.]*\(\s*[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)/;
/** A JSON call key: `"name":` or `"arguments":` (each quote anchors the match, so one pass). */
const JSON_CALL_KEY = /"(?:name|arguments)"\s*:/;
/** Any letter or digit, in any script. */
const WORD_CHAR = /[\p{L}\p{N}]/u;
/** Only JSON punctuation and whitespace (`{"`, `"}}`, `", {`); two simple tests, as one regex would backtrack. */
const JSON_PUNCT_ONLY = /^[\s{}[\]":,]*$/;
const BRACE_OR_QUOTE = /[{}"]/;

/** Drop trailing whitespace and one trailing `<|im_end|>` (a raw model string may still carry it). */
export function stripTrailingImEnd(content: string): string {
  const t = content.trimEnd();
  return t.endsWith(IM_END) ? t.slice(0, t.length - IM_END.length) : t;
}

/** What one pass over the message sees: its control tags in order, with or without text between them. */
export interface MessageShape {
  /** The message holds some control tag. */
  anyTag: boolean;
  /** Some tag is repeated 3+ times back to back (whitespace between allowed). */
  repeatedTag: boolean;
  /** A `<tool_call>` followed by only whitespace, then `<|im_end|>` or the end. */
  emptyOpenCall: boolean;
  /** A line that is only a role word. */
  roleLine: boolean;
  /** Text other than tags, role-word lines and whitespace. */
  content: boolean;
}

/** Exactly the characters of the regex class `\s` (what String.prototype.trim removes), by code unit. */
function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/** The tag that starts at `i`, or null. All tags start with '<' and there are 10 of them: O(1) per position. */
function tagAt(s: string, i: number): string | null {
  if (s.charCodeAt(i) !== 60 /* < */) return null;
  for (const t of CONTROL_TOKENS) if (s.startsWith(t, i)) return t;
  return null;
}

/** One left-to-right pass: tags, runs of tags, role-word lines, and whether anything else is there. */
export function messageShape(s: string): MessageShape {
  const out: MessageShape = { anyTag: false, repeatedTag: false, emptyOpenCall: false, roleLine: false, content: false };
  let prevTag: string | null = null; // last tag, if only whitespace followed it so far
  let run = 0; // how many times prevTag occurred back to back
  let line = ''; // the current line's text outside tags (kept short: only role words matter)
  let lineLong = false; // the line has more text than the 16 characters kept
  const endLine = () => {
    const w = line.trim();
    if (!lineLong && ROLE_WORDS.has(w)) out.roleLine = true;
    else if (lineLong || w.length > 0) out.content = true;
    line = '';
    lineLong = false;
  };
  for (let i = 0; i < s.length; ) {
    const tag = tagAt(s, i);
    if (tag !== null) {
      out.anyTag = true;
      if (tag === prevTag) {
        if (++run >= 3) out.repeatedTag = true;
      } else {
        if (prevTag === TOOL_CALL_OPEN && tag === IM_END) out.emptyOpenCall = true;
        prevTag = tag;
        run = 1;
      }
      i += tag.length;
      continue;
    }
    const c = s.charCodeAt(i);
    if (c === 10 /* \n */) endLine();
    else {
      const space = isSpace(c);
      if (!space) prevTag = null; // text breaks a run of tags
      // keep the line from its first non-space character, at most 16 characters of it
      if (line.length < 16) {
        if (line.length > 0 || !space) line += s[i];
      } else if (!space) lineLong = true;
    }
    i++;
  }
  endLine();
  if (prevTag === TOOL_CALL_OPEN) out.emptyOpenCall = true;
  return out;
}

export function classifyMessage(content: string, syntax: CallSyntax = 'json'): StructuralState {
  const raw = typeof content === 'string' ? content : String(content ?? '');
  const s = stripTrailingImEnd(raw);
  const shape = messageShape(s);
  if (!shape.content || shape.repeatedTag || shape.emptyOpenCall) return 'fullCollapse';

  const parsed = parseToolCalls(s, syntax);
  if (parsed.calls.length > 0 && parsed.errors.length === 0 && parsed.text.trim().length === 0) {
    return 'healthyCall';
  }
  if (
    parsed.hasCallSyntax ||
    parsed.calls.length > 0 ||
    parsed.errors.length > 0 ||
    shape.anyTag ||
    shape.roleLine ||
    JSON_CALL_KEY.test(s) ||
    (!WORD_CHAR.test(s) && JSON_PUNCT_ONLY.test(s) && BRACE_OR_QUOTE.test(s)) ||
    PY_CALL.test(s)
  ) {
    return 'pollution';
  }
  return 'healthyResponse';
}

/**
 * Whether a message tries to call a tool at all: a `<tool_call>` tag, call syntax the parser sees, a JSON call key
 * or a python-style call. The denominator of "healthy tool-call syntax" (does a policy know the call format?):
 * an empty message or a plain reply is not a tool message, a broken call is.
 */
export function attemptsCall(content: string, syntax: CallSyntax = 'json'): boolean {
  const s = stripTrailingImEnd(typeof content === 'string' ? content : String(content ?? ''));
  return s.includes(TOOL_CALL_OPEN) || JSON_CALL_KEY.test(s) || PY_CALL.test(s) || parseToolCalls(s, syntax).hasCallSyntax;
}

/** Share of each state (sums to 1; all zeros for an empty list). */
export function stateShares(states: StructuralState[]): Record<StructuralState, number> {
  const out = { healthyCall: 0, healthyResponse: 0, pollution: 0, fullCollapse: 0 } as Record<StructuralState, number>;
  for (const st of states) if (st in out) out[st] += 1;
  const n = states.length;
  if (n > 0) for (const st of STRUCTURAL_STATES) out[st] /= n;
  return out;
}
