/** The chat format (docs/design.md A.2, A.5): tokens, tokenizer, ChatML rendering, tool calls, structural states. */
export * from './types';
export * from './tokens';
export * from './tokenizer';
export * from './json';
export * from './python';
export * from './chat';
export * from './toolcall';
export * from './states';
