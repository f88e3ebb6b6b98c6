/**
 * The control tokens of the chat format (docs/design.md A.2).
 *
 * Every string here is exactly ONE token of the tokenizer (lib/format/tokenizer.ts). That is the whole point:
 * the collapse of A.5 is a story about a handful of control tokens (`<tool_call>`, `<|im_end|>`) gaining
 * probability mass they should not have, and the next-token probe compares p(`{"`), p(`<|im_end|>`) and
 * p(`<tool_call>`) directly. If a tag were split over several tokens the probe would be ill-defined.
 */

/** Opens a ChatML message: `<|im_start|>{role}\n`. */
export const IM_START = '<|im_start|>';
/** Closes a ChatML message; generation of an assistant message stops at this token. */
export const IM_END = '<|im_end|>';
/** Wraps the function signatures in the system prompt (one JSON signature per line). */
export const TOOLS_OPEN = '<tools>';
export const TOOLS_CLOSE = '</tools>';
/** Wraps one JSON tool call in an assistant message. */
export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';
/** Wraps one tool result in the observation (a user message). */
export const TOOL_RESPONSE_OPEN = '<tool_response>';
export const TOOL_RESPONSE_CLOSE = '</tool_response>';

/** The healthy start of a JSON tool call, the token the probe of A.5 hopes to see after `<tool_call>\n`. */
export const JSON_OPEN = '{"';

/** Padding (id 0): fills batches, never appears in text, decodes to the empty string. */
export const PAD = '<pad>';
/** Unknown piece (id 1): whatever the closed vocabulary cannot spell. */
export const UNK = '<unk>';

/** The 8 chat tags, each one token. Order is part of the vocabulary layout (ids 2..9): do not reorder. */
export const SPECIAL_TOKENS: readonly string[] = [
  IM_START,
  IM_END,
  TOOLS_OPEN,
  TOOLS_CLOSE,
  TOOL_CALL_OPEN,
  TOOL_CALL_CLOSE,
  TOOL_RESPONSE_OPEN,
  TOOL_RESPONSE_CLOSE,
];

/**
 * Every token that is not text: `<pad>`, `<unk>` and the 8 tags, in vocabulary order (ids 0..9).
 * A message made only of these (and whitespace) is degenerate output (fullCollapse in lib/format/states.ts).
 */
export const CONTROL_TOKENS: readonly string[] = [PAD, UNK, ...SPECIAL_TOKENS];
