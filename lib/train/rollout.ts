/**
 * The batched multi-turn rollout engine (docs/design.md A.2, A.4).
 *
 * N episodes run in parallel, each with its own environment, through one batched KV cache. Every
 * iteration appends one token per live row: either a token the row must *read* (its prompt, an
 * observation, or a scripted message such as OPS's ground truth) or the token it just *sampled*. When
 * all live rows only read, they read in chunks, which makes prompt prefill a single forward pass.
 *
 * What comes back per episode is what GRPO trains on: the token ids of the whole conversation, a loss
 * mask that is 1 on assistant tokens including each message's `<|im_end|>` and 0 on the prompt and every
 * injected observation / user turn (docs/design.md A.4), the sampling log-probs, per-message structural states,
 * and the checker's verdict (binary reward, errorTurn).
 */
import { Rng } from '../prng';
import { Tokenizer } from '../format/tokenizer';
import { renderConversation, renderMessage, ASSISTANT_PREFIX } from '../format/chat';
import { IM_END, JSON_OPEN, TOOL_CALL_OPEN } from '../format/tokens';
import { classifyMessage } from '../format/states';
import { CallSyntax, StructuralState } from '../format/types';
import { Episode } from '../envs/episode';
import { GPT } from '../model/gpt';
import { readProbs, sampleToken } from './sampling';
import { addPhase } from './phases';

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
}

export const defaultRolloutConfig: RolloutConfig = {
  temperature: 1.0,
  greedy: false,
  maxMessageTokens: 64,
  maxContext: 1024,
  readChunk: 64,
  readChunkWhileSampling: 1,
  retainShare: 0.75,
};

/**
 * Constrained decoding hook: given the row and the tokens of the current message so far, return token ids
 * that must not come next (or null). Used by the capability probe (docs/design.md A.5).
 */
export type LogitMask = (row: number, messageSoFar: readonly number[]) => readonly number[] | null;

/** A row whose assistant messages come from a script instead of the policy (OPS's ground-truth rollout). */
export interface ScriptedRow {
  /** The assistant messages to emit, in order; when they run out, the row samples. */
  messages: string[];
}

export interface MessageRecord {
  content: string;
  state: StructuralState;
  /** Token span [start, end) of the message in `ids`, its `<|im_end|>` included. */
  start: number;
  end: number;
  scripted: boolean;
}

export interface Trajectory {
  taskId: string;
  category: string;
  /** Every token of the conversation as the policy read it: prompt, messages, observations. */
  ids: number[];
  /** 1 on assistant tokens (each message's `<|im_end|>` included), 0 elsewhere. */
  lossMask: number[];
  /** log p of each token when it was sampled (0 where mask is 0 or the token was scripted). */
  sampleLogProbs: number[];
  /** Entropy of the distribution each token was sampled from (0 where it was not sampled). */
  sampleEntropies: number[];
  /** The sampler's reads at probe positions (RolloutOptions.probeRead), in order. */
  probeReads: ProbeRead[];
  /** 1 on tokens that came from a script (OPS ground truth) rather than from the policy. */
  offPolicy: number[];
  promptLength: number;
  messages: MessageRecord[];
  reward: number;
  pass: boolean;
  errorTurn: number | null;
  /** The episode stopped on the context budget rather than finishing. */
  truncated: boolean;
}

/** What the sampler saw at a probe position: the probabilities of the probe tokens and the top other token. */
export interface ProbeRead {
  /** Index in Trajectory.ids of the token sampled there. */
  index: number;
  probs: number[];
  topOther: { id: number; p: number };
}

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
}

interface RowState {
  ep: Episode;
  pending: number[];
  message: number[];
  messageStart: number;
  scriptIndex: number;
  live: boolean;
  truncated: boolean;
  traj: Trajectory;
}

/** Run `episodes` to the end (or the context budget) with `model` and return one Trajectory each. */
export function rollout(model: GPT, tokenizer: Tokenizer, episodes: Episode[], opts: RolloutOptions): Trajectory[] {
  const cfg: RolloutConfig = { ...defaultRolloutConfig, ...(opts.config ?? {}) };
  const syntax = opts.syntax ?? 'json';
  const imEnd = tokenizer.id(IM_END);
  const vocab = tokenizer.size;
  const maxContext = Math.min(cfg.maxContext, model.config.blockSize);

  const rows: RowState[] = episodes.map((ep) => {
    const prompt = tokenizer.encode(renderConversation(ep.initialMessages()) + ASSISTANT_PREFIX);
    const traj: Trajectory = {
      taskId: ep.task.id, category: ep.task.category,
      ids: prompt.slice(), lossMask: prompt.map(() => 0), sampleLogProbs: prompt.map(() => 0),
      sampleEntropies: prompt.map(() => 0), probeReads: [],
      offPolicy: prompt.map(() => 0), promptLength: prompt.length, messages: [],
      reward: 0, pass: false, errorTurn: null, truncated: false,
    };
    return { ep, pending: prompt, message: [], messageStart: prompt.length, scriptIndex: 0,
      live: prompt.length < maxContext, truncated: prompt.length >= maxContext, traj };
  });

  const record = (r: RowState, token: number, mask: number, logProb: number, offPolicy: number, entropy = 0) => {
    r.traj.ids.push(token);
    r.traj.lossMask.push(mask);
    r.traj.sampleLogProbs.push(logProb);
    r.traj.sampleEntropies.push(entropy);
    r.traj.offPolicy.push(offPolicy);
  };
  const probePrefix = opts.probeRead ? opts.probeRead.prefix : null;
  const atProbe = (message: number[]) =>
    probePrefix !== null && message.length === probePrefix.length && message.every((t, i) => t === probePrefix[i]);

  // Called when a row has read everything it had to: either start a scripted message or sample.
  const startScriptedIfAny = (r: RowState, rowIndex: number): boolean => {
    const script = opts.scripts ? opts.scripts[rowIndex] : undefined;
    if (!script || r.scriptIndex >= script.messages.length) return false;
    const text = script.messages[r.scriptIndex++];
    const toks = tokenizer.encode(text).concat([imEnd]);
    r.messageStart = r.traj.ids.length;
    for (const t of toks) record(r, t, 1, 0, 1);
    r.message = toks.slice(0, -1);
    finishMessage(r, toks, true);
    return true;
  };

  // A message is complete (its tokens are already recorded): step the environment and queue what to read.
  let messagesDone = 0;
  let envMs = 0; // time in the environments (phase clock, lib/train/phases.ts)
  const finishMessage = (r: RowState, toFeed: number[], scripted: boolean) => {
    const content = tokenizer.decode(r.message);
    r.traj.messages.push({ content, state: classifyMessage(content, syntax), start: r.messageStart,
      end: r.traj.ids.length, scripted });
    const tEnv = performance.now();
    const step = r.ep.step(content);
    messagesDone++;
    if (opts.onMessage) opts.onMessage(messagesDone);
    r.message = [];
    if (step.done || step.observation === null) {
      r.live = false;
      return;
    }
    const obs = tokenizer.encode('\n' + renderMessage(step.observation) + ASSISTANT_PREFIX);
    envMs += performance.now() - tEnv;
    if (r.traj.ids.length + obs.length + 2 > maxContext) {
      r.live = false;
      r.truncated = true;
      return;
    }
    for (const t of obs) record(r, t, 0, 0, 0);
    r.messageStart = r.traj.ids.length;
    r.pending = toFeed.concat(obs);
  };

  const cache = model.createCache(rows.length); // K / V per layer for rows.length rows, grown as tokens are read
  // cacheRows[c] = the episode in cache row c; finished episodes leave the cache (KVCache.retain)
  let cacheRows = rows.map((_, i) => i);
  try {
    for (let guard = 0; rows.some((r) => r.live); guard++) {
      if (guard > 100000) throw new Error('rollout: no progress (internal error)');
      // Mid-message rows feed one sampled token per pass, so while any row samples the others read in short
      // chunks (the padding slots this gives the sampling rows are dropped when the cache merges its tail);
      // long chunks (prompts) only when no live row is mid-message.
      const anySampling = rows.some((r) => r.live && r.message.length > 0);
      const chunk = anySampling ? cfg.readChunkWhileSampling : cfg.readChunk;
      const inputs = cacheRows.map((i) => (rows[i].live ? rows[i].pending.splice(0, chunk) : [])); // [R][<= chunk] token ids
      const tModel = performance.now();
      const logitsT = model.append(cache, inputs); // [R, V]: next-token logits after each row's last token read
      const logits = logitsT.dataSync() as Float32Array; // row c at c * V
      logitsT.dispose();
      const tSample = performance.now();
      addPhase(anySampling ? 'decode' : 'prefill', tSample - tModel);
      const envBefore = envMs;
      cacheRows.forEach((b, c) => {
        const r = rows[b];
        if (!r.live || r.pending.length > 0) return;
        if (r.message.length === 0 && startScriptedIfAny(r, b)) return;
        const forbidden = opts.logitMask ? opts.logitMask(b, r.message) : null;
        if (atProbe(r.message)) {
          r.traj.probeReads.push({ index: r.traj.ids.length, ...readProbs(logits, c * vocab, vocab, opts.probeRead!.tokens) });
        }
        const s = sampleToken(logits, c * vocab, vocab, cfg, opts.rng, forbidden);
        record(r, s.token, 1, s.logProb, 0, s.entropy);
        r.message.push(s.token);
        const room = r.traj.ids.length + 1 >= maxContext;
        if (s.token === imEnd || r.message.length >= cfg.maxMessageTokens || room) {
          const toFeed = [s.token];
          if (s.token === imEnd) r.message.pop();
          else {
            // cut message: close it so the conversation stays well-formed; the model did not choose this token
            record(r, imEnd, 0, 0, 0);
            toFeed.push(imEnd);
          }
          finishMessage(r, toFeed, false);
        } else {
          r.pending = [s.token];
        }
      });
      addPhase('environments', envMs - envBefore);
      addPhase('sampling', performance.now() - tSample - (envMs - envBefore));
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

  return rows.map((r) => {
    const res = r.ep.result();
    r.traj.reward = res.reward;
    r.traj.pass = res.pass;
    r.traj.errorTurn = res.errorTurn;
    r.traj.truncated = r.truncated;
    return r.traj;
  });
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
