/**
 * Types shared by the chat format, the environments and the trainers.
 * Kept in one small file so that every part of lib agrees on what a message and a tool call are.
 */

export type Role = 'system' | 'user' | 'assistant';

/**
 * One chat message, as in ChatML (docs/design.md A.2). Observations are user messages holding <tool_response> blocks.
 */
export interface Message {
  role: Role;
  content: string;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A parsed function call: `{"name": ..., "arguments": {...}}` or `name(arg=value, ...)`. */
export interface ToolCall {
  name: string;
  arguments: { [key: string]: JsonValue };
}

/**
 * The two call syntaxes of the study: tagged JSON (`<tool_call>\n{"name": .., "arguments": {..}}\n</tool_call>\n`,
 * the training format) and the python-list syntax `[func(arg=value), ...]` (format-OOD, docs/design.md A.7).
 */
export type CallSyntax = 'json' | 'python';

export type ParamType = 'string' | 'integer' | 'number' | 'boolean' | 'array';

export interface ParamSpec {
  name: string;
  type: ParamType;
  required: boolean;
}

/** A function offered to the model in the system prompt's <tools> block. */
export interface ToolSpec {
  name: string;
  /** A few words; the model matches them against the user's request. */
  description: string;
  params: ParamSpec[];
}

/**
 * Structural state of one assistant message (docs/design.md A.5); it follows from the message's mode
 * (lib/format/states.ts has the exact rules).
 * - healthyCall: one or more well-formed tool calls and nothing else
 * - healthyResponse: plain text for the user, no tags or call syntax
 * - pollution: call syntax or tags mixed with free text, JSON without tags, python-style calls in the JSON format,
 *   malformed calls
 * - fullCollapse: degenerate output: bare `<tool_call>` then end, empty, only or repeated tags, repetition loops
 */
export type StructuralState = 'healthyCall' | 'healthyResponse' | 'pollution' | 'fullCollapse';

export const STRUCTURAL_STATES: StructuralState[] = ['healthyCall', 'healthyResponse', 'pollution', 'fullCollapse'];

/**
 * What one assistant message is, finer than its state (lib/format/states.ts messageMode): the collapse a finding
 * talks about is one of these, not any full collapse.
 */
export type MessageMode =
  | 'healthyCall'
  | 'reply'
  | 'voidTurn'
  | 'emptyCall'
  | 'tags'
  | 'loop'
  | 'malformedCall'
  | 'untaggedCall'
  | 'pollution';

export const MESSAGE_MODES: MessageMode[] = ['healthyCall', 'reply', 'voidTurn', 'emptyCall', 'tags', 'loop',
  'malformedCall',
  'untaggedCall', 'pollution'];

/** A few words per mode, for tables and legends. */
export const MODE_LABEL: Record<MessageMode, string> = {
  healthyCall: 'healthy call', reply: 'plain reply', voidTurn: 'void turn (empty message)',
  emptyCall: 'empty call (bare <tool_call>)', tags: 'bare or repeated tags', loop: 'repetition loop',
  malformedCall: 'malformed call', untaggedCall: 'untagged call JSON', pollution: 'other pollution',
};
