/**
 * The instruments of a GRPO step (docs/design.md A.5): what the trainer measures beside the algorithm, each as its
 * part of the step record (lib/train/records.ts GRPOStepRecord). None of it changes the update; the trainer calls
 * these after the policy moved, so the probe reads the updated policy, as the paper's per-step logs do.
 *
 *   rolloutFields     rewards, the groups without signal, trajectory sizes, rollout speed
 *   updateFields      the losses, clip fractions and gradient norm, averaged over the step's mini-batch updates
 *   probeFields       next-token probabilities right after `<tool_call>\n` on fixed validation prompts
 *   splitFields       the logit-gradient split on the control tokens at the step's own `<tool_call>\n` positions
 *   stateFields       structural-state shares of the sampled (never the scripted) assistant messages, and the share of
 *                     control-tag collapse among them (what the collapse guard reads)
 */
import { GPT } from '../../model/gpt';
import { Tokenizer } from '../../format/tokenizer';
import { controlCollapse, stateShares } from '../../format/states';
import { StructuralState } from '../../format/types';
import { runProbe } from '../../diagnostics/probe';
import { gradientSplit, topOtherSplit } from '../../diagnostics/gradsplit';
import { Trajectory } from '../trajectory';
import { GRPOStepRecord } from '../records';
import { zeroRewardGroupShare, zeroVarianceGroupShare } from './advantages';
import { SplitReads } from './prepare';
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
    loss: avg('loss'), pgLoss: avg('pgLoss'), kl: avg('kl'), clipFrac: avg('clipFrac'), dualClipFrac: avg('dualClipFrac'),
    gradNorm: avg('gradNorm'), trainSeconds: seconds, trainTokensPerS: tokens / Math.max(seconds, 1e-3),
  };
}

/** The A.5 probe of the current policy on `contexts` (token ids of fixed prompts, each ending in `<tool_call>\n`). */
export function probeFields(model: GPT, tok: Tokenizer, contexts: number[][]):
  Fields<'pJsonOpen' | 'pImEnd' | 'pToolCall' | 'probeTopOther' | 'pTopOther'> {
  const p = runProbe(model, tok, contexts);
  return { pJsonOpen: p.pJsonOpen, pImEnd: p.pImEnd, pToolCall: p.pToolCall, probeTopOther: p.topOther, pTopOther: p.pTopOther };
}

/**
 * The logit-gradient split (A.5) at the step's probe positions, read while preparing the mini-batches: per control
 * token ({", <|im_end|>, <tool_call>) the push its logit got where it was sampled vs where another token was.
 */
export function splitFields(split: SplitReads, probeIds: number[], tok: Tokenizer):
  Fields<'splitPositions' | 'selfJsonOpen' | 'otherJsonOpen' | 'selfImEnd' | 'otherImEnd' | 'selfToolCall' | 'otherToolCall' |
    'splitTopOther' | 'selfTopOther' | 'otherTopOther'> {
  const gs = gradientSplit({ probs: split.probs, sampled: split.sampled, advantages: split.advantages, tokenIds: probeIds });
  const go = topOtherSplit(split.sampled, split.advantages, split.topOthers);
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
  return { healthyCall: s.healthyCall, healthyResponse: s.healthyResponse, pollution: s.pollution, fullCollapse: s.fullCollapse,
    controlCollapse: states.length ? control / states.length : 0 };
}
