/**
 * ChatML rendering (docs/design.md A.2): `<|im_start|>{role}\n{content}<|im_end|>\n` per message.
 *
 * The system message lists the functions inside `<tools>...</tools>`, one compact JSON signature per line, and
 * says how to call them. Token budget matters on a CPU: every prompt repeats every signature, and a whole
 * multi-turn trajectory should stay a few hundred tokens, so the preamble is one short sentence and signatures
 * name parameter types only (no per-parameter descriptions).
 *
 * Observations come back as a user message of `<tool_response>` blocks, one per call, in call order.
 */
import { Message, ToolSpec, CallSyntax, JsonValue } from './types';
import {
  IM_START,
  IM_END,
  TOOLS_OPEN,
  TOOLS_CLOSE,
  TOOL_CALL_OPEN,
  TOOL_CALL_CLOSE,
  TOOL_RESPONSE_OPEN,
  TOOL_RESPONSE_CLOSE,
} from './tokens';
import { toJsonText } from './json';

/** What the policy is conditioned on when it starts an assistant message. */
export const ASSISTANT_PREFIX = IM_START + 'assistant\n';

export function renderMessage(m: Message): string {
  return `${IM_START}${m.role}\n${m.content}${IM_END}\n`;
}

/** All messages; with addGenerationPrompt, the open `<|im_start|>assistant\n` the model continues from. */
export function renderConversation(msgs: Message[], opts: { addGenerationPrompt?: boolean } = {}): string {
  let s = '';
  for (const m of msgs) s += renderMessage(m);
  return opts.addGenerationPrompt ? s + ASSISTANT_PREFIX : s;
}

/**
 * One JSON line per function:
 * `{"name": "cd", "description": "change the current directory", "parameters": {"folder": "string"}}`.
 * Parameters are required unless listed under `"optional"`; the key is omitted when every parameter is
 * required (every function of our world), because signatures are repeated in every prompt and the tokens
 * saved shorten every trajectory the model trains on.
 */
export function renderToolSignature(t: ToolSpec): string {
  const parameters: { [key: string]: JsonValue } = {};
  for (const p of t.params) parameters[p.name] = p.type;
  const optional: JsonValue[] = t.params.filter((p) => !p.required).map((p) => p.name);
  return toJsonText(optional.length > 0
    ? { name: t.name, description: t.description, parameters, optional }
    : { name: t.name, description: t.description, parameters });
}

/** The `<tools>` block: tag, one signature per line, closing tag (no trailing newline). */
export function renderToolsBlock(tools: ToolSpec[]): string {
  return [TOOLS_OPEN, ...tools.map(renderToolSignature), TOOLS_CLOSE].join('\n');
}

/** The short preamble of every system prompt (kept under ~25 words). */
export const SYSTEM_PREAMBLE =
  'You may call one or more functions to help the user. If no function fits or a required value is missing, reply ' +
    'in plain text.';

/** The sentence that states the call format, per syntax. */
export function callFormatSentence(syntax: CallSyntax): string {
  if (syntax === 'python') return 'Call functions as a python list [func_name(arg=value), ...] and nothing else.';
  return `Call functions as ${TOOL_CALL_OPEN}\n{"name": <function-name>, "arguments": ` +
    `<args-json-object>}\n${TOOL_CALL_CLOSE}`;
}

/**
 * The system prompt: preamble, `<tools>` block, call-format sentence, and for HBG an optional
 * `\nHint: {hint}` at the very end (HBG shows it during sampling only; docs/design.md A.6).
 */
export function renderSystemPrompt(tools: ToolSpec[], opts: { syntax?: CallSyntax; hint?: string } = {}): string {
  let s = `${SYSTEM_PREAMBLE}\n${renderToolsBlock(tools)}\n${callFormatSentence(opts.syntax ?? 'json')}`;
  if (opts.hint !== undefined && opts.hint.length > 0) s += `\nHint: ${opts.hint}`;
  return s;
}

/**
 * The text a user turn starts with when functions that were withheld become available mid-episode
 * (miss_func category, docs/design.md A.1). The user's request follows it.
 */
export function renderToolsAdded(tools: ToolSpec[]): string {
  return `New functions are available.\n${renderToolsBlock(tools)}\n`;
}

/** The content of the observation (user) message: one `<tool_response>` block per call, joined by '\n'. */
export function renderToolResponses(results: string[]): string {
  return results.map((r) => `${TOOL_RESPONSE_OPEN}\n${r}\n${TOOL_RESPONSE_CLOSE}`).join('\n');
}
