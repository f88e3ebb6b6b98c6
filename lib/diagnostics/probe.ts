/**
 * The control-token probe (docs/design.md A.5). The paper's code appends `<|im_start|>assistant\n<tool_call>\n` to
 * prompts and reads the next-token distribution. Three probabilities tell the story:
 *   p(`{"`)          the healthy start of a JSON call,
 *   p(`<|im_end|>`)  closing the message at once: the collapse signature,
 *   p(`<tool_call>`) repeating the tag.
 * In our tokenizer each is a single token. "A tool-call tag, then a newline" is the one context in which all
 * three are legal continuations (`{"` after an opening tag; `<tool_call>` or `<|im_end|>` after a closing one,
 * lib/format/toolcall.ts), so the probe measures which reading of that context the policy takes.
 */
import * as tf from '@tensorflow/tfjs';
import { GPT } from '../model/gpt';
import { Tokenizer } from '../format/tokenizer';
import { renderConversation, ASSISTANT_PREFIX } from '../format/chat';
import { IM_END, JSON_OPEN, TOOL_CALL_OPEN } from '../format/tokens';
import { Message } from '../format/types';

export interface ProbeResult {
  /** Mean p(`{"`) over the probe prompts. */
  pJsonOpen: number;
  /** Mean p(`<|im_end|>`). */
  pImEnd: number;
  /** Mean p(`<tool_call>`). */
  pToolCall: number;
  /**
   * The token outside the three with the highest mean probability, and that probability: where the mass went
   * when p(`{"`) fell but neither control token rose (a collapse into text rather than into `<|im_end|>`).
   */
  topOther: string;
  pTopOther: number;
  /** The `topK` most likely next tokens overall (probe tokens included), most likely first. */
  top: { token: string; p: number }[];
}

/** The three probe token ids in a fixed order: `{"`, `<|im_end|>`, `<tool_call>`. */
export function probeTokenIds(tokenizer: Tokenizer): [number, number, number] {
  return [tokenizer.id(JSON_OPEN), tokenizer.id(IM_END), tokenizer.id(TOOL_CALL_OPEN)];
}

/** What every probe context ends with: the opening tag of a call and its newline. */
export const PROBE_SUFFIX = TOOL_CALL_OPEN + '\n';

/** Token ids of the probe contexts: each prompt (system + first user turn) + `<|im_start|>assistant\n<tool_call>\n`. */
export function probeContexts(tokenizer: Tokenizer, prompts: Message[][]): number[][] {
  return prompts.map((msgs) => tokenizer.encode(renderConversation(msgs) + ASSISTANT_PREFIX + PROBE_SUFFIX));
}

/** Run the probe: one batched pass through a fresh KV cache (no gradient). */
export function runProbe(model: GPT, tokenizer: Tokenizer, contexts: number[][], topK = 5): ProbeResult {
  if (contexts.length === 0) throw new Error('runProbe: no probe contexts');
  const ids = probeTokenIds(tokenizer);
  const cache = model.createCache(contexts.length);
  try {
    const probs = tf.tidy(() => {
      const logits = model.append(cache, contexts); // [N, V] at each context's last token
      return tf.softmax(logits).arraySync() as number[][];
    });
    const mean = probs[0].map((_, id) => probs.reduce((a, row) => a + row[id], 0) / probs.length); // [V]
    let top = -1;
    for (let id = 0; id < mean.length; id++) if (!ids.includes(id) && (top < 0 || mean[id] > mean[top])) top = id;
    const ranked = mean.map((p, id) => ({ token: tokenizer.piece(id), p })).sort((a, b) => b.p - a.p).slice(0, topK);
    return { pJsonOpen: mean[ids[0]], pImEnd: mean[ids[1]], pToolCall: mean[ids[2]], topOther: tokenizer.piece(top),
      pTopOther: mean[top], top: ranked };
  } finally {
    cache.dispose();
  }
}
