/**
 * The batched multi-turn rollout engine (docs/design.md A.2, A.4).
 *
 * N episodes run in parallel, each with its own environment, through one batched KV cache. Every
 * iteration appends one token per live row: either a token the row must *read* (its prompt, an
 * observation, or a scripted message such as OPS's ground truth) or the token it just *sampled*. When
 * all live rows only read, they read in chunks, which makes prompt prefill a single forward pass.
 *
 * Each episode is a RolloutRow (rollout_row.ts). What comes back per episode, a Trajectory (trajectory.ts), is
 * what GRPO trains on: the token ids of the whole conversation, a loss mask that is 1 on assistant tokens
 * including each message's `<|im_end|>` and 0 on the prompt and every injected observation / user turn
 * (docs/design.md A.4), the sampling log-probs, per-message structural states, and the checker's verdict
 * (binary reward, errorTurn).
 */
import { Rng } from '../prng';
import { Tokenizer } from '../format/tokenizer';
import { IM_END, JSON_OPEN, TOOL_CALL_OPEN } from '../format/tokens';
import { CallSyntax } from '../format/types';
import { Episode } from '../envs/episode';
import * as tf from '@tensorflow/tfjs';
import { GPT } from '../model/gpt';
import { KVCache } from '../model/kvcache';
import { addPhase } from './phases';
import { RolloutRow, RowContext } from './rollout_row';
import { LogitMask, ScriptedRow, Trajectory } from './trajectory';
import { PipelineConfig } from './pipeline';

export interface RolloutConfig {
  /** Sampling temperature; 1.0 in the paper's GRPO script (validation: greedy). */
  temperature: number;
  greedy: boolean;
  /** Longest assistant message, in tokens; a longer one is cut and closed with a (masked) `<|im_end|>`. */
  maxMessageTokens: number;
  /** Context budget per episode (prompt + all messages + observations); an episode that would pass it ends. */
  maxContext: number;
  /** Prompt/observation tokens read per forward pass when no live row is sampling. */
  readChunk: number;
  /**
   * Observation tokens a row reads per forward pass while other rows sample (one token each). Decoding is
   * bound by per-op overhead, so a few more query slots cost little, while reading one token per pass
   * made the observations, not the sampling, set the number of passes.
   */
  readChunkWhileSampling: number;
  /**
   * Finished episodes leave the KV cache when the running rows fall to this share of the cache's rows
   * (1 = at every finish, 0 = never). Each drop copies the cache once; 0.75 keeps the copies geometric.
   */
  retainShare: number;
  /**
   * Rows with the same prompt read it once (readPrompts): the same samples, fewer passes over the prompts. Speed
   * only; off by default with GRPOConfig.sharePrompts, which turns it on for the RL rollouts.
   */
  sharePrompts: boolean;
}

export const defaultRolloutConfig: RolloutConfig = {
  temperature: 1.0,
  greedy: false,
  maxMessageTokens: 64,
  maxContext: 1024,
  readChunk: 64,
  readChunkWhileSampling: 1,
  retainShare: 0.75,
  sharePrompts: false,
};

export interface RolloutOptions {
  config?: Partial<RolloutConfig>;
  rng: Rng;
  syntax?: CallSyntax;
  logitMask?: LogitMask;
  /** Per-row scripts (same length as episodes; undefined rows sample). */
  scripts?: (ScriptedRow | undefined)[];
  onMessage?: (done: number) => void;
  /**
   * Where a message so far equals `prefix` (e.g. `<tool_call>\n`), record the probabilities of `tokens` and
   * the top other token before sampling (Trajectory.probeReads): the GRPO instruments then need no scoring pass.
   */
  probeRead?: { prefix: number[]; tokens: number[] };
  /** The paper's sampler-side pipeline differences (lib/train/pipeline.ts); absent: the exact pipeline. */
  pipeline?: Partial<Pick<PipelineConfig, 'retokenize' | 'trainCutEnd' | 'bf16Sampler'>>;
}

/** Run `episodes` to the end (or the context budget) with `model` and return one Trajectory each. */
export function rollout(model: GPT, tokenizer: Tokenizer, episodes: Episode[], opts: RolloutOptions): Trajectory[] {
  const cfg: RolloutConfig = { ...defaultRolloutConfig, ...(opts.config ?? {}) };
  const vocab = tokenizer.size;
  const counters = { messages: 0, envMs: 0 }; // envMs: time in the environments (phase clock, lib/train/phases.ts)
  const ctx: RowContext = {
    tokenizer, syntax: opts.syntax ?? 'json', sampling: cfg, rng: opts.rng, maxMessageTokens: cfg.maxMessageTokens,
    maxContext: Math.min(cfg.maxContext, model.config.blockSize), logitMask: opts.logitMask, probeRead: opts.probeRead,
    onMessage: opts.onMessage, counters,
    pipeline: { retokenize: false, trainCutEnd: false, bf16Sampler: false, ...(opts.pipeline ?? {}) },
  };
  const rows = episodes.map((ep, i) => new RolloutRow(ep, ctx, opts.scripts ? opts.scripts[i] : undefined));

  // K / V per layer for rows.length rows
  const { cache, logits: read } = readPrompts(model, rows, cfg.readChunk, cfg.sharePrompts);
  let ready = read; // the next pass's logits when readPrompts already made them
  // cacheRows[c] = the episode in cache row c; finished episodes leave the cache (KVCache.retain)
  let cacheRows = rows.map((_, i) => i);
  try {
    for (let guard = 0; rows.some((r) => r.live); guard++) {
      if (guard > 100000) throw new Error('rollout: no progress (internal error)');
      // Mid-message rows feed one sampled token per pass, so while any row samples the others read in short
      // chunks (the padding slots this gives the sampling rows are dropped when the cache merges its tail);
      // long chunks (prompts) only when no live row is mid-message.
      const anySampling = rows.some((r) => r.sampling);
      const chunk = anySampling ? cfg.readChunkWhileSampling : cfg.readChunk;
      const tModel = performance.now();
      let logitsT = ready; // [R, V]: next-token logits after each row's last token read
      ready = null;
      if (logitsT === null) {
        // [R][<= chunk] token ids
        const inputs = cacheRows.map((i) => (rows[i].live ? rows[i].pending.splice(0, chunk) : []));
        logitsT = model.append(cache, inputs);
      }
      const logits = logitsT.dataSync() as Float32Array; // row c at c * V
      logitsT.dispose();
      const tSample = performance.now();
      addPhase(anySampling ? 'decode' : 'prefill', tSample - tModel);
      const envBefore = counters.envMs;
      cacheRows.forEach((b, c) => rows[b].next(logits, c * vocab, b)); // sample, or start a scripted message
      cacheRows.forEach((b, c) => { // a re-tokenised message (pipeline E2) replaces tokens the row had read
        if (rows[b].rewind > 0) { cache.forget(c, rows[b].rewind); rows[b].rewind = 0; }
      });
      addPhase('environments', counters.envMs - envBefore);
      addPhase('sampling', performance.now() - tSample - (counters.envMs - envBefore));
      // Drop finished episodes from the cache once a quarter of its rows are done (one gather each time, so
      // a geometric number of them).
      const running = cacheRows.map((b, c) => (rows[b].live ? c : -1)).filter((c) => c >= 0);
      if (running.length > 0 && running.length <= cfg.retainShare * cacheRows.length) {
        const tRetain = performance.now();
        cache.retain(running);
        cacheRows = running.map((c) => cacheRows[c]);
        addPhase('decode', performance.now() - tRetain);
      }
    }
  } finally {
    cache.dispose();
  }
  return rows.map((r) => r.result());
}

/**
 * The rollout's first passes, which read the prompts, with rows of the same prompt (a GRPO group's rollouts)
 * reading it once. The distinct prompts are read in chunks of `chunk` tokens, exactly as `rollout`'s loop reads
 * them, up to the pass that finishes the shortest (from the next pass on, a row samples and the others read one
 * token at a time); then each is copied to the rows that share it (KVCache.retain). Every row's cache and
 * positions are then what its own passes would have made; it keeps the rest of its prompt in `pending`, and the
 * logits [R, V] of that last pass are returned for `rollout` to sample from (null when nothing was shared).
 */
function readPrompts(model: GPT, rows: RolloutRow[], chunk: number,
  share: boolean): { cache: KVCache; logits: tf.Tensor2D | null } {
  if (!share) return { cache: model.createCache(rows.length), logits: null }; // the loop reads every prompt
  const distinct = new Map<string, number>(); // prompt -> its row in the reading cache
  const prompts: number[][] = [];
  const source = rows.map((r) => {
    if (!r.live) return 0; // an episode over before it starts (its prompt alone fills the context) reads nothing
    const key = r.pending.join(',');
    if (!distinct.has(key)) { distinct.set(key, prompts.length); prompts.push(r.pending.slice()); }
    return distinct.get(key)!;
  });
  if (prompts.length === 0 || prompts.length === rows.filter((r) => r.live).length) {
    return { cache: model.createCache(rows.length), logits: null }; // nothing shared: the loop reads them
  }
  const cache = model.createCache(prompts.length);
  try {
    do {
      const t0 = performance.now();
      model.append(cache, prompts.map((p) => p.splice(0, chunk))).dispose(); // the cache keeps the last logits
      addPhase('prefill', performance.now() - t0);
    } while (prompts.every((p) => p.length > 0));
    cache.retain(source);
  } catch (e) {
    cache.dispose();
    throw e;
  }
  rows.forEach((r, i) => { if (r.live) r.pending = prompts[source[i]].slice(); });
  return { cache, logits: cache.lastLogits!.clone() };
}

/** True when the message so far ends with the probe context `<tool_call>\n` (see lib/diagnostics/probe.ts). */
function afterOpenTag(open: number, newline: number, soFar: readonly number[]): boolean {
  const n = soFar.length;
  return n >= 2 && soFar[n - 2] === open && soFar[n - 1] === newline;
}

/**
 * The stricter probe, for a policy whose mass after `<tool_call>\n` went to a text token rather than to a control
 * token: there only `{"` (the one canonical start of a JSON call) is allowed. JSON syntax only.
 */
export function jsonStartMask(tokenizer: Tokenizer): LogitMask {
  const open = tokenizer.id(TOOL_CALL_OPEN);
  const newline = tokenizer.id('\n');
  const start = tokenizer.id(JSON_OPEN);
  const banned = Array.from({ length: tokenizer.size }, (_, i) => i).filter((i) => i !== start);
  return (_row, soFar) => (afterOpenTag(open, newline, soFar) ? banned : null);
}

/**
 * Token ids that constrained decoding forbids after `<tool_call>\n`: closing at once or repeating the tag (the
 * paper's capability probe: the two control tokens that compete with `{"` there).
 */
export function structuralMask(tokenizer: Tokenizer): LogitMask {
  const open = tokenizer.id(TOOL_CALL_OPEN);
  const newline = tokenizer.id('\n');
  const banned = [tokenizer.id(IM_END), open];
  return (_row, soFar) => (afterOpenTag(open, newline, soFar) ? banned : null);
}
