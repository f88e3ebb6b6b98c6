/**
 * Turning conversations into training sequences, exactly as the rollout engine lays them out.
 *
 * A conversation [system, user, assistant, user(obs), assistant, ...] becomes one token sequence and a
 * loss mask that is 1 on every assistant message and the `<|im_end|>` closing it, and 0 on the prompt,
 * the `<|im_start|>assistant\n` header and every observation / user turn (docs/design.md A.4 loss mask, A.6 SFT).
 *
 * The paper's SFT makes one sample per assistant message (prompt = history, target = that message). For
 * a causal model, training the whole conversation once with every assistant message in the mask gives
 * the same per-token losses in one forward pass instead of one pass per message, which is how we do it.
 */
import { Tokenizer } from '../format/tokenizer';
import { renderConversation, renderMessage, ASSISTANT_PREFIX } from '../format/chat';
import { IM_END } from '../format/tokens';
import { Message } from '../format/types';

export interface TrainingSequence {
  ids: number[];
  /** 1 where the token is a training target (assistant content and its `<|im_end|>`). */
  lossMask: number[];
}

/**
 * Encode a conversation that contains at least one assistant message. Token boundaries match the rollout
 * engine (prompt + ASSISTANT_PREFIX, message tokens, `<|im_end|>`, then '\n' + next message + prefix).
 */
export function encodeConversation(tokenizer: Tokenizer, messages: Message[]): TrainingSequence {
  const first = messages.findIndex((m) => m.role === 'assistant');
  if (first < 0) throw new Error('encodeConversation: the conversation has no assistant message');
  const imEnd = tokenizer.id(IM_END);
  const ids: number[] = [];
  const lossMask: number[] = [];
  const push = (toks: number[], mask: number) => {
    for (const t of toks) { ids.push(t); lossMask.push(mask); }
  };
  push(tokenizer.encode(renderConversation(messages.slice(0, first)) + ASSISTANT_PREFIX), 0);
  let i = first;
  while (i < messages.length) {
    const m = messages[i];
    if (m.role !== 'assistant') throw new Error(`encodeConversation: expected an assistant message at ${i}`);
    push(tokenizer.encode(m.content), 1);
    push([imEnd], 1);
    // everything up to the next assistant message is read, not trained
    let j = i + 1;
    let between = '\n';
    while (j < messages.length && messages[j].role !== 'assistant') between += renderMessage(messages[j++]);
    if (j < messages.length) push(tokenizer.encode(between + ASSISTANT_PREFIX), 0);
    i = j;
  }
  return { ids, lossMask };
}

/** Token count of the targets (mask ones) of a set of sequences. */
export function countTargets(seqs: TrainingSequence[]): number {
  let n = 0;
  for (const s of seqs) for (const m of s.lossMask) n += m;
  return n;
}
