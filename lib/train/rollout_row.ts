/**
 * One episode of the batched rollout engine (lib/train/rollout.ts): its environment, the tokens it still has to
 * read, the assistant message it is writing and the Trajectory it grows. The engine feeds every live row's
 * `pending` tokens to the model; once a row has read them all, `next` either starts its next scripted message or
 * samples one token from the logits that reading produced.
 *
 * Every token is recorded with its loss mask (docs/design.md A.4): 1 on what the assistant wrote, its closing
 * `<|im_end|>` included; 0 on the prompt, on observations and on the `<|im_end|>` that closes a cut message.
 *
 * An HBG episode (a hint in its system prompt) reads the hinted prompt but records the hint-free one: the
 * Trajectory is the conversation as training sees it from the first token, and only the budgets count the tokens
 * the model actually read.
 */
import { Rng } from '../prng';
import { Tokenizer } from '../format/tokenizer';
import { renderConversation, renderMessage, ASSISTANT_PREFIX } from '../format/chat';
import { IM_END } from '../format/tokens';
import { messageMode, stateOfMode } from '../format/states';
import { CallSyntax } from '../format/types';
import { Episode } from '../envs/episode';
import { readProbs, sampleToken, SampleOptions } from './sampling';
import { LogitMask, ScriptedRow, Trajectory } from './trajectory';
import { PipelineConfig, roundLogits } from './pipeline';

/** What every row of one rollout shares: the tokenizer, the sampler and the budgets. */
export interface RowContext {
  tokenizer: Tokenizer;
  syntax: CallSyntax;
  sampling: SampleOptions;
  rng: Rng;
  maxMessageTokens: number;
  maxContext: number;
  logitMask?: LogitMask;
  /** Where a message so far equals `prefix`, read the probabilities of `tokens` before sampling. */
  probeRead?: { prefix: number[]; tokens: number[] };
  /** Called after each finished message (any row) with the count so far. */
  onMessage?: (done: number) => void;
  /** Messages finished and milliseconds spent in the environments, over all rows. */
  counters: { messages: number; envMs: number };
  /** The paper's sampler-side pipeline differences (lib/train/pipeline.ts); all off: the exact pipeline. */
  pipeline: Pick<PipelineConfig, 'retokenize' | 'trainCutEnd' | 'bf16Sampler'>;
}

export class RolloutRow {
  /** Tokens to read before the row may sample (prompt, observation, or the last sampled token). */
  pending: number[];
  /** Token ids of the assistant message being written (its `<|im_end|>` not included). */
  private message: number[] = [];
  private messageStart: number;
  private scriptIndex = 0;
  live: boolean;
  /**
   * Tokens at the end of the row's cached context that the engine must forget before it reads `pending`: a
   * re-tokenised message (pipeline E2) replaces sampled tokens the model has already read.
   */
  rewind = 0;
  readonly traj: Trajectory;
  private readonly imEnd: number;
  /** Tokens the model read beyond those recorded: the hint of an HBG prompt (0 otherwise). */
  private readonly unrecorded: number;

  constructor(private readonly ep: Episode, private readonly ctx: RowContext, private readonly script?: ScriptedRow) {
    const tok = ctx.tokenizer;
    this.imEnd = tok.id(IM_END);
    const read = tok.encode(renderConversation(ep.initialMessages()) + ASSISTANT_PREFIX); // what the model reads
    const prompt = ep.hint === undefined ? read : tok.encode(renderConversation(ep.unhintedMessages()) +
      ASSISTANT_PREFIX);
    this.unrecorded = read.length - prompt.length;
    this.traj = {
      taskId: ep.task.id, category: ep.task.category,
      ids: prompt.slice(), lossMask: prompt.map(() => 0), sampleLogProbs: prompt.map(() => 0),
      sampleEntropies: prompt.map(() => 0), probeReads: [],
      // bf16 sampling (E4): the trainer's float32 log-probs are not the sampler's, so every rollout is scored again
      offPolicy: prompt.map(() => 0), rescore: ep.hint !== undefined || ctx.pipeline.bf16Sampler,
      promptLength: prompt.length, messages: [],
      reward: 0, pass: false, errorTurn: null, truncated: read.length >= ctx.maxContext,
    };
    this.pending = read;
    this.messageStart = prompt.length;
    this.live = !this.traj.truncated;
  }

  /** Tokens in the model's context so far (the recorded ones plus an HBG hint). */
  private get contextLength(): number {
    return this.traj.ids.length + this.unrecorded;
  }

  /** True while the row is writing a message (so it needs one forward pass per token). */
  get sampling(): boolean {
    return this.live && this.message.length > 0;
  }

  /**
   * The row has read everything it had to; `logits` at `offset` are the model's next-token logits after it.
   * Start the next scripted message if the row has one, else sample a token. `row` is the episode's index.
   */
  next(logits: Float32Array, offset: number, row: number): void {
    if (!this.live || this.pending.length > 0) return;
    if (this.message.length === 0 && this.startScripted()) return;
    const ctx = this.ctx;
    const vocab = ctx.tokenizer.size;
    const forbidden = ctx.logitMask ? ctx.logitMask(row, this.message) : null;
    // what a bf16 engine samples from
    if (ctx.pipeline.bf16Sampler) [logits, offset] = [roundLogits(logits, offset, vocab), 0];
    if (this.atProbe()) {
      this.traj.probeReads.push({ index: this.traj.ids.length,
        ...readProbs(logits, offset, vocab, ctx.probeRead!.tokens) });
    }
    const s = sampleToken(logits, offset, vocab, ctx.sampling, ctx.rng, forbidden);
    this.record(s.token, 1, s.logProb, 0, s.entropy);
    this.message.push(s.token);
    const full = this.contextLength + 1 >= ctx.maxContext;
    if (s.token !== this.imEnd && this.message.length < ctx.maxMessageTokens && !full) {
      this.pending = [s.token];
      return;
    }
    if (s.token === this.imEnd) {
      this.message.pop();
      this.finishMessage(ctx.pipeline.retokenize ? this.retokenize(false) : [s.token], false);
    } else if (ctx.pipeline.retokenize) {
      this.finishMessage(this.retokenize(true), false);
    } else {
      // cut message: close it so the conversation stays well-formed; the model did not choose this token (masked),
      // unless the paper's pipeline trains it like a sampled one (E3: its old log-prob then comes from the trainer)
      this.closeCut();
      this.finishMessage([s.token, this.imEnd], false);
    }
  }

  /** The `<|im_end|>` that closes a cut message: masked, or trained with a recomputed old log-prob (E3). */
  private closeCut(): void {
    const trained = this.ctx.pipeline.trainCutEnd;
    this.record(this.imEnd, trained ? 1 : 0, 0, 0);
    if (trained) this.traj.rescore = true;
  }

  /**
   * E2: the message just finished (`cut`: at a cap, its last sampled token not read yet) is decoded with the special
   * tokens skipped and encoded again; its recorded tokens become that encoding and an `<|im_end|>` (trained; a cut
   * one as closeCut says). Where the encoding departs from what the model has read, the row forgets the rest of the
   * message (`rewind`) and reads the new tokens instead. Returns the tokens the row must read next.
   */
  private retokenize(cut: boolean): number[] {
    const tok = this.ctx.tokenizer;
    const sampled = this.message; // without a sampled <|im_end|>
    const ids = tok.encodeText(tok.decode(sampled, { skipSpecial: true }));
    const unchanged = ids.length === sampled.length && ids.every((t, i) => t === sampled[i]);
    if (unchanged && !cut) return [this.imEnd]; // the common case: the message and its sampled end stay as they are
    const read = cut ? sampled.length - 1 : sampled.length; // message tokens in the model's context
    let same = 0;
    while (same < Math.min(ids.length, read) && ids[same] === sampled[same]) same++;
    if (!unchanged) {
      // drop the record from where the encoding departs (a sampled <|im_end|> with it), write the encoding as the
      // policy's own tokens, and let the trainer score them (their sampler log-probs are not theirs)
      const keep = this.messageStart + same;
      for (const a of [this.traj.ids, this.traj.lossMask, this.traj.sampleLogProbs, this.traj.sampleEntropies,
        this.traj.offPolicy]) {
        a.length = keep;
      }
      this.traj.probeReads = this.traj.probeReads.filter((r) => r.index < keep);
      for (const t of ids.slice(same)) this.record(t, 1, 0, 0);
      this.traj.rescore = true;
      this.rewind = read - same;
      this.message = ids;
    }
    if (cut) this.closeCut();
    else this.record(this.imEnd, 1, 0, 0); // the appended end, where the sampled one was
    return [...ids.slice(same), this.imEnd];
  }

  /** The finished Trajectory with the checker's verdict. */
  result(): Trajectory {
    const res = this.ep.result();
    this.traj.reward = res.reward;
    this.traj.pass = res.pass;
    this.traj.errorTurn = res.errorTurn;
    return this.traj;
  }

  private record(token: number, mask: number, logProb: number, offPolicy: number, entropy = 0): void {
    this.traj.ids.push(token);
    this.traj.lossMask.push(mask);
    this.traj.sampleLogProbs.push(logProb);
    this.traj.sampleEntropies.push(entropy);
    this.traj.offPolicy.push(offPolicy);
    if (offPolicy === 1) this.traj.rescore = true; // a scripted token: the policy did not sample it
  }

  private atProbe(): boolean {
    const prefix = this.ctx.probeRead?.prefix;
    return prefix !== undefined && this.message.length === prefix.length &&
      this.message.every((t, i) => t === prefix[i]);
  }

  /** Emit the script's next message as off-policy tokens (trained, but never sampled). */
  private startScripted(): boolean {
    if (!this.script || this.scriptIndex >= this.script.messages.length) return false;
    const toks = this.ctx.tokenizer.encode(this.script.messages[this.scriptIndex++]).concat([this.imEnd]);
    this.messageStart = this.traj.ids.length;
    for (const t of toks) this.record(t, 1, 0, 1);
    this.message = toks.slice(0, -1);
    this.finishMessage(toks, true);
    return true;
  }

  /** A message is complete (its tokens already recorded): step the environment and queue what to read next. */
  private finishMessage(toFeed: number[], scripted: boolean): void {
    const ctx = this.ctx;
    // the environment reads the message as text; the paper's pipeline decodes it with the special tokens skipped (E2)
    const content = ctx.tokenizer.decode(this.message, { skipSpecial: ctx.pipeline.retokenize && !scripted });
    const mode = messageMode(content, ctx.syntax);
    this.traj.messages.push({ content, mode, state: stateOfMode(mode), start: this.messageStart,
      end: this.traj.ids.length, scripted });
    const tEnv = performance.now();
    const step = this.ep.step(content);
    ctx.counters.messages++;
    if (ctx.onMessage) ctx.onMessage(ctx.counters.messages);
    this.message = [];
    if (step.done || step.observation === null) {
      this.live = false;
      return;
    }
    const obs = ctx.tokenizer.encode('\n' + renderMessage(step.observation) + ASSISTANT_PREFIX);
    ctx.counters.envMs += performance.now() - tEnv;
    if (this.contextLength + obs.length + 2 > ctx.maxContext) {
      this.live = false;
      this.traj.truncated = true;
      return;
    }
    for (const t of obs) this.record(t, 0, 0, 0);
    this.messageStart = this.traj.ids.length;
    this.pending = toFeed.concat(obs);
  }
}
