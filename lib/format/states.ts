/**
 * What one assistant message is (docs/design.md A.5): its *mode*, a fine label of what the policy wrote, and its
 * *structural state*, the paper's four-way split, which follows from the mode. The collapse is measured through
 * both: the paper's vanilla-RL model ends 87% of its messages right after a bare `<tool_call>`, and a finding about
 * that collapse must count exactly those messages, not every degenerate one.
 *
 * Modes, in the order the rules are applied to the content (after trimming trailing whitespace and stripping ONE
 * trailing `<|im_end|>`, so raw Qwen-style strings classify like our own decoded messages):
 *
 * 1. voidTurn: empty or whitespace only: the turn is nothing but its `<|im_end|>`.
 * 2. emptyCall: a bare `<tool_call>` and nothing else: the paper's signature.
 * 3. tags: other control-tag degeneration: only control tags, bare role words on their own lines (`user`,
 *    `assistant`, `system`: turn headers with the `<|im_start|>` token dropped) and whitespace; or a tag repeated
 *    back to back (whitespace between allowed) 3 or more times; or a `<tool_call>` followed, with only whitespace
 *    in between, by `<|im_end|>` or the end after other text (a call opened and the message closed at once).
 * 4. healthyCall: at least one call parsed (in the given syntax), zero parse errors, no free text outside the calls.
 * 5. loop: degenerate repetition (lib/format/repetition.ts): at least half of a message of 12+ characters is one
 *    piece of 1-24 characters written 3+ times in a row (` to to to`, `_message_message`, `(symbol(symbol`).
 * 6. malformedCall: a call attempt and nothing else, with some block that does not parse (broken JSON, a missing
 *    key, a tag left open, also by the token cap).
 * 7. untaggedCall: the message opens with call JSON (`{"`) instead of `<tool_call>`: the tag is what was lost.
 * 8. pollution: anything else that shows call or chat syntax:
 *    - tool tags or any other chat tag among text, calls plus free text;
 *    - a leaked role header: a line that is only `user` / `assistant` / `system` next to real text (the model ran
 *      past the end of its turn and writes the next turns itself);
 *    - JSON call syntax without tags: a `"name":` or `"arguments":` key, a message made only of JSON punctuation
 *      (`{"`, `"}}`), or pieces of call JSON in prose (`{"`, `"}`, `}}`, `":`: no reply of the world or of the
 *      corpus contains one);
 *    - a python-style call `name(arg=...)` written like code (name directly followed by `(`); prose such as
 *      `Eve (use_name='Eve') retrieved it` has a space before the parenthesis and is not one;
 *    - a JSON call in python mode.
 * 9. reply: plain text with none of the above.
 *
 * States: healthyCall = mode healthyCall; healthyResponse = reply; pollution = malformedCall, untaggedCall or
 * pollution;
 * fullCollapse = voidTurn, emptyCall, tags or loop. A repetition loop is full collapse, not a healthy response and
 * not pollution: the paper's full collapse is degenerate output with no usable content (in its 1.5B model the
 * degeneration took the form of control tags), while text pollution is content in the wrong format. A loop carries
 * no content at all. Its own mode keeps it apart from the control-tag collapse of the paper.
 *
 * Two readers keep the rule the committed runs were made with, so that those runs repeat from their run.json:
 * the PRS judge asks `formatFault` (modes 1-3, or call/chat syntax outside a well-formed call; loops and call
 * fragments in prose not counted) and the collapse guard reads the share of `controlCollapse` modes (1-3).
 *
 * Cost: the policy can emit anything (a million identifier characters, thousands of tags), so every check here
 * is one left-to-right pass over the text or a regex that cannot backtrack across a run more than once; the
 * whole classification is linear in the message length.
 */
import { CallSyntax, MessageMode, MESSAGE_MODES, StructuralState, STRUCTURAL_STATES } from './types';
import { IM_END, JSON_OPEN, TOOL_CALL_OPEN, CONTROL_TOKENS } from './tokens';
import { ParsedCalls, parseToolCalls } from './toolcall';
import { isRepetitionLoop } from './repetition';

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
/** A piece of call JSON inside prose (rule 7): `{"`, `"}`, `}}` or `":`. */
const CALL_FRAGMENT = /\{"|"\}|\}\}|":/;

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
  const out: MessageShape = { anyTag: false, repeatedTag: false, emptyOpenCall: false, roleLine: false,
    content: false };
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

/** The mode of one assistant message (rules 1-9 of the file comment). */
export function messageMode(content: string, syntax: CallSyntax = 'json'): MessageMode {
  const raw = typeof content === 'string' ? content : String(content ?? '');
  const s = stripTrailingImEnd(raw);
  const shape = messageShape(s);
  const head = controlHead(s, shape);
  if (head !== null) return head;
  const parsed = parseToolCalls(s, syntax);
  if (isHealthyCall(parsed)) return 'healthyCall';
  if (isRepetitionLoop(s)) return 'loop';
  if (parsed.errors.length > 0 && parsed.text.trim().length === 0) return 'malformedCall';
  if (s.trimStart().startsWith(JSON_OPEN)) return 'untaggedCall';
  if (callSyntaxOutsideCalls(s, parsed, shape) || CALL_FRAGMENT.test(s)) return 'pollution';
  return 'reply';
}

/** The structural state of a mode (the file comment: a loop is full collapse). */
export function stateOfMode(mode: MessageMode): StructuralState {
  switch (mode) {
    case 'healthyCall': return 'healthyCall';
    case 'reply': return 'healthyResponse';
    case 'malformedCall':
    case 'untaggedCall':
    case 'pollution': return 'pollution';
    default: return 'fullCollapse';
  }
}

export function classifyMessage(content: string, syntax: CallSyntax = 'json'): StructuralState {
  return stateOfMode(messageMode(content, syntax));
}

/** Modes 1-3: the control-tag collapse (empty, a bare tag, only or repeated tags), what the collapse guard counts. */
export function controlCollapse(mode: MessageMode): boolean {
  return mode === 'voidTurn' || mode === 'emptyCall' || mode === 'tags';
}

/**
 * The PRS judge's test of a message that breaks the format: control-tag collapse, or call or chat syntax outside a
 * well-formed call. Loops and call fragments in prose do not count here: the judge keeps the rule its committed
 * runs were made with (the file comment).
 */
export function formatFault(content: string, syntax: CallSyntax = 'json'): boolean {
  const s = stripTrailingImEnd(typeof content === 'string' ? content : String(content ?? ''));
  const shape = messageShape(s);
  if (controlHead(s, shape) !== null) return true;
  const parsed = parseToolCalls(s, syntax);
  return !isHealthyCall(parsed) && callSyntaxOutsideCalls(s, parsed, shape);
}

/** Rules 1-3 on the stripped content, or null when the message has content of its own. */
function controlHead(s: string, shape: MessageShape): MessageMode | null {
  const t = s.trim();
  if (t.length === 0) return 'voidTurn';
  if (t === TOOL_CALL_OPEN) return 'emptyCall';
  return !shape.content || shape.repeatedTag || shape.emptyOpenCall ? 'tags' : null;
}

function isHealthyCall(parsed: ParsedCalls): boolean {
  return parsed.calls.length > 0 && parsed.errors.length === 0 && parsed.text.trim().length === 0;
}

/** Call or chat syntax in a message that is not a well-formed call (rule 7 without the prose fragments). */
function callSyntaxOutsideCalls(s: string, parsed: ParsedCalls, shape: MessageShape): boolean {
  return parsed.hasCallSyntax || parsed.calls.length > 0 || parsed.errors.length > 0 || shape.anyTag ||
    shape.roleLine ||
    JSON_CALL_KEY.test(s) || (!WORD_CHAR.test(s) && JSON_PUNCT_ONLY.test(s) && BRACE_OR_QUOTE.test(s)) ||
      PY_CALL.test(s);
}

/**
 * Whether a message tries to call a tool at all: a `<tool_call>` tag, call syntax the parser sees, a JSON call key
 * or a python-style call. The denominator of "healthy tool-call syntax" (does a policy know the call format?):
 * an empty message or a plain reply is not a tool message, a broken call is.
 */
export function attemptsCall(content: string, syntax: CallSyntax = 'json'): boolean {
  const s = stripTrailingImEnd(typeof content === 'string' ? content : String(content ?? ''));
  return s.includes(TOOL_CALL_OPEN) || JSON_CALL_KEY.test(s) || PY_CALL.test(s) ||
    parseToolCalls(s, syntax).hasCallSyntax;
}

/** Share of each state (sums to 1; all zeros for an empty list). */
export function stateShares(states: StructuralState[]): Record<StructuralState, number> {
  const out = { healthyCall: 0, healthyResponse: 0, pollution: 0, fullCollapse: 0 } as Record<StructuralState, number>;
  for (const st of states) if (st in out) out[st] += 1;
  const n = states.length;
  if (n > 0) for (const st of STRUCTURAL_STATES) out[st] /= n;
  return out;
}

/** Share of each mode (sums to 1; all zeros for an empty list). */
export function modeShares(modes: MessageMode[]): Record<MessageMode, number> {
  const out = Object.fromEntries(MESSAGE_MODES.map((m) => [m, 0])) as Record<MessageMode, number>;
  for (const m of modes) if (m in out) out[m] += 1;
  if (modes.length > 0) for (const m of MESSAGE_MODES) out[m] /= modes.length;
  return out;
}
