/**
 * Greedy evaluation of a model on a list of tasks (docs/design.md A.7): binary checker accuracy per category, their
 * mean (the paper's headline average), and the share of each structural state over all assistant messages.
 */
import { Rng } from '../prng';
import { GPT } from '../model/gpt';
import { Tokenizer } from '../format/tokenizer';
import { CallSyntax, StructuralState, STRUCTURAL_STATES } from '../format/types';
import { stateShares } from '../format/states';
import { Task } from '../envs/task';
import { categoryAccuracy } from '../envs/evaluate';
import { Episode } from '../envs/episode';
import { rollout, RolloutConfig } from './rollout';
import { LogitMask, Trajectory } from './trajectory';

export interface EvalResult {
  perCategory: Record<string, { n: number; accuracy: number }>;
  /** Mean of the per-category accuracies (not of all tasks). */
  mean: number;
  states: Record<StructuralState, number>;
  results: { id: string; category: string; pass: boolean; errorTurn: number | null }[];
  /** Mean number of tokens per trajectory. */
  meanTokens: number;
}

export interface EvalOptions {
  syntax?: CallSyntax;
  /** Episodes rolled out together (one KV cache). */
  batchSize?: number;
  logitMask?: LogitMask;
  rollout?: Partial<RolloutConfig>;
  maxAssistantMessages?: number;
  onProgress?: (done: number, total: number) => void;
  /** Keep the trajectories (for inspection in notebooks). */
  keepTrajectories?: boolean;
  /** The paper's turn semantics: a message without a closed call block is a reply (lib/train/pipeline.ts, E1). */
  closedCallsOnly?: boolean;
}

/** Summarise trajectories into per-category accuracy, mean and state shares. */
export function summarizeTrajectories(trajs: Trajectory[]): EvalResult {
  const states: StructuralState[] = [];
  let tokens = 0;
  for (const t of trajs) {
    for (const m of t.messages) states.push(m.state);
    tokens += t.ids.length;
  }
  return {
    ...categoryAccuracy(trajs), states: stateShares(states),
    results: trajs.map((t) => ({ id: t.taskId, category: t.category, pass: t.pass, errorTurn: t.errorTurn })),
    meanTokens: trajs.length ? tokens / trajs.length : 0,
  };
}

/** Greedy rollouts of every task, in batches; returns the summary (and trajectories when asked). */
export function evaluateModel(model: GPT, tokenizer: Tokenizer, tasks: Task[],
  opts: EvalOptions = {}): EvalResult & { trajectories?: Trajectory[] } {
  const batchSize = opts.batchSize ?? 64;
  const syntax = opts.syntax ?? 'json';
  const all: Trajectory[] = [];
  for (let i = 0; i < tasks.length; i += batchSize) {
    const chunk = tasks.slice(i, i + batchSize);
    const episodes = chunk.map((t) => new Episode(t, { syntax, maxAssistantMessages: opts.maxAssistantMessages ?? 30,
      closedCallsOnly: opts.closedCallsOnly }));
    const trajs = rollout(model, tokenizer, episodes, {
      rng: new Rng(1), // unused by greedy decoding; kept for a uniform call
      syntax,
      logitMask: opts.logitMask,
      config: { ...(opts.rollout ?? {}), greedy: true, temperature: 0 },
    });
    all.push(...trajs);
    opts.onProgress?.(Math.min(i + batchSize, tasks.length), tasks.length);
  }
  const summary = summarizeTrajectories(all);
  return opts.keepTrajectories ? { ...summary, trajectories: all } : summary;
}

