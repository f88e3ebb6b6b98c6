/**
 * From a step's trajectories to what the update needs (docs/design.md A.4): PPO mini-batches of prompts,
 * each cut into length-sorted micro-batches under a token budget, with the "old" log-probs of the PPO ratio and
 * the reference log-probs of the KL term.
 *
 * Old log-probs. verl recomputes them with the actor before updating; here the sampler already computed
 * them, with the same weights and the same kernels (lib/model/gpt.ts: the KV-cache path agrees with the full
 * forward to ~1e-6), so for a rollout that was sampled from the training context they are taken from
 * the rollout, with its per-token entropies. Only rollouts whose training context is not the one they were
 * sampled from (Trajectory.rescore: OPS's scripted ground truth, HBG's hinted prompts) get a scoring pass. The
 * reference policy always needs its own pass.
 *
 * Instruments never change what is prepared: an observer that wants next-token probabilities at some positions of
 * a re-scored rollout (the logit-gradient split) names them in `reads`, and gets them back from the same pass.
 *
 * Shared prompts (GRPOConfig.sharePrompts). The rollouts of a group share their prompt, about half of their
 * tokens; a mini-batch then keeps each group's prompt once (MiniBatch.prefix) and its micro-batches hold the
 * continuations only, which read the prompts' keys and values (GPT.prefixKV, GPT.forwardAt): the same
 * log-probs and gradients up to the order of float sums, with the prompts read once per group instead of once
 * per rollout (docs/backends.md has the measured gain).
 */
import * as tf from '@tensorflow/tfjs';
import { GPT, PrefixContext } from '../../model/gpt';
import type { LayerKV } from '../../model/attention';
import { microBatches, padBatch, PaddedBatch, sharedPrefixes, SharedPrefixes, sharedPrefixLength } from '../batch';
import { ProbeRead, Trajectory } from '../trajectory';
import { timed } from '../phases';
import { scoreBatch } from './scoring';

/** Rows of one mini-batch that share a padded length; per-token values live at the trained positions ([M]). */
export interface MicroBatch {
  /** Its rows: inputs, trained positions, and the extras `adv` (advantage) and `off` (1 = scripted token). */
  batch: PaddedBatch;
  /** [M] log-probs of the pre-update policy. */
  old: tf.Tensor1D;
  /** [M] log-probs of the reference policy, or null without KL. */
  ref: tf.Tensor1D | null;
  /** [b] the group (into MiniBatch.prefix) each row continues, or null when prompts are not shared. */
  group: Int32Array | null;
}

/** One PPO mini-batch: `promptsPerMiniBatch` groups, as micro-batches whose losses add up. */
export interface MiniBatch {
  micro: MicroBatch[];
  /** Trained tokens of the whole mini-batch: the token-mean's denominator in every micro-batch. */
  targetCount: number;
  /** Rollouts in the mini-batch (veRL's mini-batch size, the weight of a micro-batch under pipeline E5). */
  rows: number;
  /** Index of the mini-batch's first group (its tasks are groups first .. first + promptsPerMiniBatch). */
  firstGroup: number;
  /** Each group's shared prompt (its micro-batches hold the rest of the rows), or null. */
  prefix: SharedPrefixes | null;
}

/**
 * What GPT.forwardAt needs to read a micro-batch after its mini-batch's prompts (kv: GPT.prefixKV of them), or
 * undefined.
 */
export function prefixContext(mb: MiniBatch, m: MicroBatch, kv: LayerKV[] | null): PrefixContext | undefined {
  return mb.prefix === null || m.group === null || kv === null ?
    undefined : { kv, lens: mb.prefix.lens, group: m.group };
}

/** Next-token probabilities an observer wants from the scoring pass of a re-scored rollout. */
export interface ReadRequest {
  /** Indices into the rollout's ids of the tokens whose predicted distribution to read (each a trained token). */
  positions(t: Trajectory): number[];
  /** The token ids whose probabilities to read there. */
  tokens: number[];
}

export interface Prepared {
  minibatches: MiniBatch[];
  /** Token-mean entropy of the policy over every trained token of the step (the sampler's or the scoring pass's). */
  entropy: number;
  /** Rollouts whose old log-probs came from a scoring pass (the rest: from the sampler). */
  rescored: number;
  /** The reads of `PrepareArgs.reads` for the re-scored rollouts: rollout index -> one read per requested position. */
  reads: Map<number, ProbeRead[]>;
}

export interface PrepareArgs {
  model: GPT;
  ref: GPT | null;
  /** The step's rollouts, group after group. */
  trajs: Trajectory[];
  /** Per-rollout advantage. */
  advantages: number[];
  groupSize: number;
  promptsPerMiniBatch: number;
  maxContext: number;
  microBatchTokens: number;
  /** Read each group's prompt once (see the file comment). */
  sharePrompts: boolean;
  /** An observer's reads during the scoring passes (see the file comment); none without. */
  reads?: ReadRequest;
}

export function prepareMiniBatches(a: PrepareArgs): Prepared {
  const mbSize = a.promptsPerMiniBatch * a.groupSize;
  const minibatches: MiniBatch[] = [];
  const reads = new Map<number, ProbeRead[]>();
  let entSum = 0;
  let entCount = 0;
  let rescored = 0;
  try {
    for (let s = 0; s < a.trajs.length; s += mbSize) {
      const rows = a.trajs.slice(s, s + mbSize);
      const groupOf = (b: number) => Math.floor(b / a.groupSize); // row -> its group in this mini-batch
      const prefix = a.sharePrompts ? groupPrompts(rows, a.groupSize, a.maxContext) : null;
      const mb: MiniBatch = { micro: [], targetCount: 0, rows: rows.length, firstGroup: s / a.groupSize, prefix };
      minibatches.push(mb);
      // [rows] first token of each row's own part
      const starts = rows.map((_, b) => (prefix === null ? 0 : prefix.lens[groupOf(b)]));
      // keys and values of the prompts, per policy, made when a micro-batch first needs them
      const kvOf = new Map<GPT, LayerKV[]>();
      const kv = (model: GPT) => {
        if (prefix === null) return null;
        if (!kvOf.has(model)) kvOf.set(model, model.prefixKV(prefix.ids));
        return kvOf.get(model)!;
      };
      const lengths = rows.map((t, b) => Math.min(t.ids.length, a.maxContext) - starts[b]);
      try {
        for (const idx of microBatches(lengths, a.microBatchTokens)) {
          const group = idx.map((b) => rows[b]);
          // inputs / targets / mask [b, T] for the b rows of this micro-batch (T = longest row's own part, <=
          // maxContext);
          // extras gathered at the M trained positions (mask = 1): adv, off, sampled, ent [M] each
          const batch = padBatch(group, a.maxContext, {
            adv: group.map((t, j) => t.ids.map(() => a.advantages[s + idx[j]])),
            off: group.map((t) => t.offPolicy),
            sampled: group.map((t) => t.sampleLogProbs),
            ent: group.map((t) => t.sampleEntropies),
          }, idx.map((b) => starts[b]));
          if (batch.targetCount === 0) { batch.dispose(); continue; } // nothing trained in these rows
          mb.targetCount += batch.targetCount;
          // old [M]: the sampler's log-probs
          const micro: MicroBatch = { batch, old: batch.extras.sampled, ref: null,
            group: prefix === null ? null : Int32Array.from(idx, groupOf) };
          mb.micro.push(micro);
          // old log-probs and entropies: the sampler's, except on rows that need a scoring pass
          const score = group.map((t) => t.rescore);
          let ent = batch.extras.ent;
          if (score.some((x) => x)) {
            rescored += score.filter((x) => x).length;
            const got = rescore(a.model, micro, prefixContext(mb, micro, kv(a.model)), group, score, a.reads);
            ent = got.entropies;
            got.reads.forEach((r, j) => { if (r) reads.set(s + idx[j], r); });
          }
          entSum += sumOf(ent);
          entCount += batch.targetCount;
          if (ent !== batch.extras.ent) ent.dispose();
          // the KL term's reference [M]
          if (a.ref) micro.ref = timed('scoring', () => scoreBatch(a.ref!, batch, [], [], false,
            prefixContext(mb, micro, kv(a.ref!))).logp);
        }
      } finally {
        for (const layers of kvOf.values()) for (const l of layers) tf.dispose([l.kT, l.v]);
      }
    }
  } catch (e) {
    disposeMiniBatches(minibatches);
    throw e;
  }
  return { minibatches, entropy: entCount > 0 ? entSum / entCount : 0, rescored, reads };
}

/**
 * The scoring pass of a micro-batch's rows flagged in `score` (scripted or hinted rows, `group[j]` the rollout of
 * row j): their old log-probs and entropies replace the sampler's in `micro.old`; the observer's requested reads of
 * each scored row come back in row order (null for rows not scored). Returns the [M] entropies with them.
 */
function rescore(model: GPT, micro: MicroBatch, prefix: PrefixContext | undefined, group: Trajectory[],
  score: boolean[],
  request: ReadRequest | undefined): { entropies: tf.Tensor1D; reads: (ProbeRead[] | null)[] } {
  const batch = micro.batch;
  // [M]: 1 where the scoring pass replaces the sampler's value
  const fromScoring = Array.from(batch.trainedRows, (j) => (score[j] ? 1 : 0));
  // the requested positions of the scored rows, as indices into the trained positions
  const trainedAt = new Map<string, number>();
  batch.trainedRows.forEach((j, m) => trainedAt.set(`${j}:${batch.trainedPositions[m] + 1}`, m));
  const probeIdx: number[] = [];
  const owner: { row: number; index: number }[] = [];
  if (request) {
    score.forEach((scored, j) => {
      if (!scored) return;
      for (const i of request.positions(group[j])) {
        const m = trainedAt.get(`${j}:${i}`);
        if (m !== undefined) { probeIdx.push(m); owner.push({ row: j, index: i }); }
      }
    });
  }
  // logp [M] and entropies [M] of the current (pre-update) policy, the requested probabilities at probeIdx
  const scored = timed('scoring', () => scoreBatch(model, batch, probeIdx, request?.tokens ?? [], true, prefix));
  const reads: (ProbeRead[] | null)[] = score.map((x) => (x ? [] : null));
  scored.probeProbs.forEach((p, k) => reads[owner[k].row]!.push({ index: owner[k].index, probs: p,
    topOther: scored.topOther[k] }));
  const w = tf.tensor1d(fromScoring, 'float32'); // [M]
  const pick = (sampler: tf.Tensor1D, scoring: tf.Tensor1D) =>
    tf.tidy(() => tf.add(tf.mul(scoring, w), tf.mul(sampler, tf.sub(1, w)))) as tf.Tensor1D; // [M]
  micro.old = pick(batch.extras.sampled, scored.logp);
  const entropies = pick(batch.extras.ent, scored.entropies!);
  tf.dispose([w, scored.logp, scored.entropies!]);
  return { entropies, reads };
}

/** sum(x) as a number. */
function sumOf(x: tf.Tensor): number {
  const t = tf.sum(x);
  const v = t.dataSync()[0];
  t.dispose();
  return v;
}

/**
 * The shared prompts of a mini-batch's groups (rows laid out group after group): per group, the tokens its rows can
 * read once (sharedPrefixLength).
 */
function groupPrompts(rows: Trajectory[], groupSize: number, maxContext: number): SharedPrefixes {
  const heads: number[][] = [];
  const lens: number[] = [];
  for (let g = 0; g * groupSize < rows.length; g++) {
    const members = rows.slice(g * groupSize, (g + 1) * groupSize);
    heads.push(members[0].ids);
    lens.push(sharedPrefixLength(members, maxContext));
  }
  return sharedPrefixes(heads, lens);
}

export function disposeMiniBatches(mbs: MiniBatch[]): void {
  for (const mb of mbs) {
    if (mb.prefix !== null) mb.prefix.ids.dispose();
    for (const m of mb.micro) {
      if (m.old !== m.batch.extras.sampled) m.old.dispose();
      m.ref?.dispose();
      m.batch.dispose();
    }
  }
}
