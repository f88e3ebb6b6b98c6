/**
 * Policy-agnostic evaluation (docs/design.md A.7): run every task as an Episode, ask a batched policy for the next
 * assistant message of each live episode, and score with the checker. Reports per-category accuracy, their
 * mean (the paper's headline average) and the share of each structural state (A.5) over all messages.
 * The model-backed evaluation lives in lib/train/evaluate.ts; this one serves scripted policies (the teacher)
 * and any async policy.
 */
import type { CallSyntax, StructuralState } from '../format/types';
import { classifyMessage, stateShares } from '../format/states';
import { Episode } from './episode';
import { teacherAssistantMessages } from './teacher';
import { Task } from './task';

/** Given the live episodes, return the next assistant message of each (same order). */
export type Policy = (episodes: Episode[]) => Promise<string[]>;

export interface PolicyEvalOptions {
  /** Default call syntax; a task's own syntax wins (format-OOD tasks carry 'python'). */
  syntax?: CallSyntax;
  maxAssistantMessages?: number;
  /** Called after each finished episode: (done, total). */
  onProgress?: (done: number, total: number) => void;
}

export interface PolicyEvalResult {
  perCategory: Record<string, { n: number; accuracy: number }>;
  mean: number;
  states: Record<StructuralState, number>;
  results: { id: string; category: string; pass: boolean; errorTurn: number | null }[];
}

export async function evaluatePolicy(tasks: readonly Task[], policy: Policy,
  opts: PolicyEvalOptions = {}): Promise<PolicyEvalResult> {
  const episodes = tasks.map((t) => new Episode(t, { syntax: opts.syntax,
    maxAssistantMessages: opts.maxAssistantMessages }));
  const states: StructuralState[] = [];
  let finished = 0;
  for (;;) {
    const live = episodes.filter((e) => !e.done);
    if (!live.length) break;
    const msgs = await policy(live);
    if (!Array.isArray(msgs) || msgs.length !== live.length) {
      throw new Error(`evaluatePolicy: the policy returned ${Array.isArray(msgs) ? msgs.length : typeof msgs} ` +
        `messages for ${live.length} episodes`);
    }
    live.forEach((ep, i) => {
      const content = typeof msgs[i] === 'string' ? msgs[i] : '';
      states.push(classifyMessage(content, ep.syntax));
      ep.step(content);
      if (ep.done) opts.onProgress?.(++finished, episodes.length);
    });
  }
  const results = episodes.map((ep) => {
    const r = ep.result();
    return { id: ep.task.id, category: ep.task.category, pass: r.pass, errorTurn: r.errorTurn };
  });
  return { ...categoryAccuracy(results), states: stateShares(states), results };
}

/**
 * Accuracy per category and their mean, the paper's headline (docs/design.md A.7: the mean of the category
 * accuracies, not of all tasks).
 */
export function categoryAccuracy(results: readonly { category: string; pass: boolean }[]):
  { perCategory: Record<string, { n: number; accuracy: number }>; mean: number } {
  const perCategory: Record<string, { n: number; accuracy: number }> = {};
  for (const r of results) {
    const c = (perCategory[r.category] ??= { n: 0, accuracy: 0 });
    c.n++;
    c.accuracy += r.pass ? 1 : 0;
  }
  const cats = Object.keys(perCategory);
  for (const c of cats) perCategory[c].accuracy /= perCategory[c].n;
  return { perCategory, mean: cats.length ? cats.reduce((a, c) => a + perCategory[c].accuracy, 0) / cats.length : 0 };
}

/** The teacher as a policy: replays the teacher messages of each episode's task (accuracy 1.0 by design). */
export function teacherPolicy(): Policy {
  const cache = new WeakMap<Episode, string[]>();
  return async (eps) =>
    eps.map((ep) => {
      let msgs = cache.get(ep);
      if (!msgs) {
        msgs = teacherAssistantMessages(ep.task, ep.syntax);
        cache.set(ep, msgs);
      }
      return msgs[ep.assistantCount] ?? 'Done.';
    });
}
