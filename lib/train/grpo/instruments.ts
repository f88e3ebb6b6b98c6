/**
 * The instruments of a GRPO step (docs/design.md A.5): what the trainer measures beside the algorithm, each as its
 * part of the step record (lib/train/records.ts GRPOStepRecord). None of it changes the update; the trainer calls
 * these after the policy moved, so the probe reads the updated policy, as the paper's per-step logs do.
 *
 *   rolloutFields     rewards, the groups without signal, trajectory sizes, rollout speed
 *   updateFields      the losses, clip fractions and gradient norm, averaged over the step's mini-batch updates
 *   probeFields       next-token probabilities right after `<tool_call>\n` on fixed validation prompts
 *   splitFields       the logit-gradient split on the control tokens at the step's own `<tool_call>\n` positions: an
 *                     observer of the rollouts (the sampler's reads) and of the scoring passes (splitReadRequest)
 *   stateFields       structural-state shares of the sampled (never the scripted) assistant messages, and the share of
 *                     control-tag collapse among them (what the collapse guard reads)
 *   memorisation      sampled reward on drawn vs never-seen training-distribution tasks (at validation steps)
 */
import { Rng } from '../../prng';
import { GPT } from '../../model/gpt';
import { Tokenizer } from '../../format/tokenizer';
import { TOOL_CALL_OPEN } from '../../format/tokens';
import { Episode } from '../../envs/episode';
import { Task } from '../../envs/task';
import { rollout } from '../rollout';
import { evaluateModel } from '../evaluate';
import type { GRPOConfig } from './config';
import { PipelineConfig, defaultPipelineConfig } from '../pipeline';
import { controlCollapse, stateShares } from '../../format/states';
import { StructuralState } from '../../format/types';
import { runProbe } from '../../diagnostics/probe';
import { gradientSplit, topOtherSplit } from '../../diagnostics/gradsplit';
import { ProbeRead, Trajectory } from '../trajectory';
import { GRPOStepRecord, PerCategoryAccuracy, RolloutRecord } from '../records';
import { zeroRewardGroupShare, zeroVarianceGroupShare } from './advantages';
import { ReadRequest } from './prepare';
import { UpdateStats } from './update';

type Fields<K extends keyof GRPOStepRecord> = Pick<GRPOStepRecord, K>;

export function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/** The sampled rollouts of a step: `rewards` [promptsPerStep * groupSize], laid out group after group. */
export function rolloutFields(trajs: Trajectory[], rewards: number[], groupSize: number, seconds: number):
  Fields<'reward' | 'zeroRewardGroups' | 'zeroVarianceGroups' | 'messagesPerTrajectory' | 'tokensPerTrajectory' |
    'truncatedShare' | 'rolloutSeconds' | 'rolloutTokensPerS'> {
  const tokens = trajs.reduce((a, t) => a + t.ids.length, 0);
  return {
    reward: mean(rewards),
    zeroRewardGroups: zeroRewardGroupShare(rewards, groupSize),
    zeroVarianceGroups: zeroVarianceGroupShare(rewards, groupSize),
    messagesPerTrajectory: mean(trajs.map((t) => t.messages.length)),
    tokensPerTrajectory: tokens / trajs.length,
    truncatedShare: mean(trajs.map((t) => (t.truncated ? 1 : 0))),
    rolloutSeconds: seconds,
    rolloutTokensPerS: tokens / Math.max(seconds, 1e-3),
  };
}

/** The mini-batch updates of a step, averaged; `tokens` = padded positions the updates ran over. */
export function updateFields(updates: UpdateStats[], tokens: number, seconds: number):
  Fields<'loss' | 'pgLoss' | 'kl' | 'clipFrac' | 'dualClipFrac' | 'gradNorm' | 'trainSeconds' | 'trainTokensPerS'> {
  const avg = (k: keyof UpdateStats) => mean(updates.map((u) => u[k]));
  return {
    loss: avg('loss'), pgLoss: avg('pgLoss'), kl: avg('kl'), clipFrac: avg('clipFrac'),
      dualClipFrac: avg('dualClipFrac'),
    gradNorm: avg('gradNorm'), trainSeconds: seconds, trainTokensPerS: tokens / Math.max(seconds, 1e-3),
  };
}

/** The A.5 probe of the current policy on `contexts` (token ids of fixed prompts, each ending in `<tool_call>\n`). */
export function probeFields(model: GPT, tok: Tokenizer, contexts: number[][]):
  Fields<'pJsonOpen' | 'pImEnd' | 'pToolCall' | 'probeTopOther' | 'pTopOther'> {
  const p = runProbe(model, tok, contexts);
  return { pJsonOpen: p.pJsonOpen, pImEnd: p.pImEnd, pToolCall: p.pToolCall, probeTopOther: p.topOther,
    pTopOther: p.pTopOther };
}

/**
 * The position of the token after an assistant message's opening `<tool_call>\n` (the probe context), per
 * message of `t`, as an index into t.ids; the prediction for it is read at input position index - 1. Only
 * trained tokens count: a message cut by the context budget right after `<tool_call>\n` ends with a forced,
 * masked `<|im_end|>` that the policy never chose and the loss never sees.
 */
export function probePositions(t: Trajectory, openId: number, newlineId: number, maxContext: number): number[] {
  const out: number[] = [];
  const limit = Math.min(maxContext, t.ids.length) - 1; // the padded batch's prediction length for this row
  for (const m of t.messages) {
    const at = m.start + 1; // input position of the newline
    if (t.ids[m.start] === openId && t.ids[at] === newlineId && at + 1 < m.end && at < limit &&
      t.lossMask[at + 1] === 1) {
      out.push(at + 1);
    }
  }
  return out;
}

/** What the split asks of the scoring passes (prepare.ts): the probe tokens' probabilities at the probe positions. */
export function splitReadRequest(tok: Tokenizer, probeIds: number[], maxContext: number): ReadRequest {
  const [open, newline] = [tok.id(TOOL_CALL_OPEN), tok.id('\n')];
  return { tokens: probeIds, positions: (t) => probePositions(t, open, newline, maxContext) };
}

/**
 * The logit-gradient split (A.5) at the step's probe positions: per control token ({", <|im_end|>, <tool_call>) the
 * push its logit got where it was sampled vs where another token was. The probabilities there come from the sampler
 * (Trajectory.probeReads), or for re-scored rollouts from the scoring pass (`rescored`: prepare.ts Prepared.reads).
 */
export function splitFields(trajs: Trajectory[], advantages: number[], rescored: Map<number, ProbeRead[]>,
  request: ReadRequest, tok: Tokenizer):
  Fields<'splitPositions' | 'selfJsonOpen' | 'otherJsonOpen' | 'selfImEnd' | 'otherImEnd' | 'selfToolCall' |
    'otherToolCall' |
    'splitTopOther' | 'selfTopOther' | 'otherTopOther'> {
  const probs: number[][] = [];
  const sampled: number[] = [];
  const adv: number[] = [];
  const tops: { id: number; p: number }[] = [];
  trajs.forEach((t, b) => {
    const reads = rescored.get(b) ?? t.probeReads;
    for (const i of request.positions(t)) {
      const r = reads.find((x) => x.index === i);
      sampled.push(t.ids[i]);
      adv.push(advantages[b]);
      probs.push(r?.probs ?? []);
      tops.push(r?.topOther ?? { id: -1, p: 0 });
    }
  });
  const gs = gradientSplit({ probs, sampled, advantages: adv, tokenIds: request.tokens });
  const go = topOtherSplit(sampled, adv, tops);
  return {
    splitPositions: gs.positions,
    selfJsonOpen: gs.self[0], otherJsonOpen: gs.other[0],
    selfImEnd: gs.self[1], otherImEnd: gs.other[1],
    selfToolCall: gs.self[2], otherToolCall: gs.other[2],
    splitTopOther: go.id === null ? null : tok.piece(go.id), selfTopOther: go.self, otherTopOther: go.other,
  };
}

/** Structural-state shares of the policy's own messages (OPS's scripted ground truth is not the policy's). */
export function stateFields(trajs: Trajectory[]):
  Fields<'healthyCall' | 'healthyResponse' | 'pollution' | 'fullCollapse' | 'controlCollapse'> {
  const states: StructuralState[] = [];
  let control = 0;
  for (const t of trajs) {
    for (const m of t.messages) {
      if (m.scripted) continue;
      states.push(m.state);
      if (controlCollapse(m.mode)) control++;
    }
  }
  const s = stateShares(states);
  return { healthyCall: s.healthyCall, healthyResponse: s.healthyResponse, pollution: s.pollution,
    fullCollapse: s.fullCollapse,
    controlCollapse: states.length ? control / states.length : 0 };
}

/**
 * Greedy validation on `valTasks` (overall, per category, states): the paper's validation, as step-record fields, in
 * the environment the run trains in (`pipe`: lib/train/pipeline.ts).
 */
export function validationFields(model: GPT, tok: Tokenizer, valTasks: Task[], cfg: GRPOConfig,
  pipe: PipelineConfig = defaultPipelineConfig):
  Partial<GRPOStepRecord> {
  const val = evaluateModel(model, tok, valTasks, {
    maxAssistantMessages: cfg.maxAssistantMessages, closedCallsOnly: pipe.closedCallsOnly,
    rollout: { maxMessageTokens: cfg.maxMessageTokens, maxContext: cfg.maxContext },
  });
  const out: Partial<GRPOStepRecord> = { valAccuracy: val.mean };
  for (const [c, v] of Object.entries(val.perCategory)) out[`val_${c}` as keyof PerCategoryAccuracy] = v.accuracy;
  out.valFullCollapse = val.states.fullCollapse;
  out.valHealthyCall = val.states.healthyCall;
  return out;
}

/**
 * Memorisation vs generalisation: the sampled reward on `memoTasksPerCategory` training tasks per category drawn
 * before (`seen`; a fresh choice each time) and on as many never-seen ones (`unseen`, the same each time),
 * `memoGroupSize` rollouts each. Its own PRNG stream, so the training samples do not depend on whether it runs.
 */
export function memorisationFields(model: GPT, tok: Tokenizer, cfg: GRPOConfig, trainTasks: Task[],
  seen: ReadonlySet<string>,
  unseen: Task[], stepNo: number, pipe: PipelineConfig = defaultPipelineConfig): Partial<GRPOStepRecord> {
  const k = cfg.memoTasksPerCategory;
  if (k === 0 || unseen.length === 0) return {};
  const rng = new Rng(cfg.seed * 100_003 + stepNo);
  const cats = Array.from(new Set(unseen.map((t) => t.category)));
  const seenTasks = cats.flatMap((c) => {
    const drawn = trainTasks.filter((t) => t.category === c && seen.has(t.id));
    return rng.sample(drawn, Math.min(k, drawn.length));
  });
  const unseenTasks = cats.flatMap((c) => unseen.filter((t) => t.category === c).slice(0, k));
  const reward = (tasks: Task[]) => {
    if (tasks.length === 0) return NaN;
    const episodes = tasks.flatMap((t) => Array.from({ length: cfg.memoGroupSize }, () =>
      new Episode(t, { syntax: 'json', maxAssistantMessages: cfg.maxAssistantMessages,
        closedCallsOnly: pipe.closedCallsOnly })));
    const trajs = rollout(model, tok, episodes, { rng: rng.fork(), pipeline: pipe,
      config: { temperature: cfg.temperature, greedy: false, maxMessageTokens: cfg.maxMessageTokens,
        maxContext: cfg.maxContext } });
    return mean(trajs.map((t) => t.reward));
  };
  const [s, u] = [reward(seenTasks), reward(unseenTasks)];
  return { ...(Number.isFinite(s) ? { valSeenReward: s } : {}), valUnseenReward: u };
}

/** Trajectory `i` of step `step` of RL stage `stage` as a line of rollouts.jsonl. */
export function rolloutRecord(t: Trajectory, stage: number, step: number, i: number, groupSize: number): RolloutRecord {
  return {
    stage, step, taskId: t.taskId, category: t.category, group: Math.floor(i / groupSize), index: i % groupSize,
    reward: t.reward, errorTurn: t.errorTurn, messages: t.messages.map((m) => m.content),
      states: t.messages.map((m) => m.state),
    scripted: t.messages.some((m) => m.scripted),
  };
}
