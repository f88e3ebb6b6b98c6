/**
 * The multi-turn checker of docs/design.md A.3 (BFCL-V3 multi-turn, reduced to one API family per task).
 *
 * 1. The number of user turns the model completed must equal the GT's number of turns.
 * 2. For every GT turn t with calls:
 *    - the model's turn t must be non-empty (at least one executed call);
 *    - the family state after the model's turn t must deep-equal the state reached by executing the GT calls
 *      of turns 0..t on a fresh instance;
 *    - the multiset of GT results of turns 0..t must be contained in the model's results of turns 0..t
 *      (so read-only calls such as `ls` count: their results must have been fetched).
 *    GT turns without calls (miss_param / miss_func turns) are skipped.
 * The first failing turn is reported as errorTurn (ETS and PRS use it, docs/design.md A.6). When all completed turns
 * pass but the count is wrong, errorTurn is the first GT turn the model did not complete (or turns.length when
 * the model completed more turns than the GT has).
 *
 * Extra calls are harmless as long as state and results still match, as in BFCL.
 */
import type { JsonValue, ToolCall } from '../format/types';
import { canonicalJson } from './families/base';
import { createFamily } from './families/index';
import { Task } from './task';

/** What the episode records for one user turn of the model. */
export interface TurnRecord {
  /** Calls the environment executed in this turn (parsed calls, whether they succeeded or not). */
  calls: ToolCall[];
  /** Their results, same order. */
  results: string[];
  /** The family state when the turn ended (or now, for an unfinished turn). */
  state: JsonValue;
  /** The model ended the turn with a reply. */
  completed: boolean;
}

export interface CheckResult {
  pass: boolean;
  errorTurn: number | null;
  reason: string;
}

/** States and cumulative results the GT reaches after each turn (executed on a fresh instance). */
export function groundTruthTrace(task: Task): { states: JsonValue[]; results: string[][] } {
  const fam = createFamily(task.family, task.initialState);
  const states: JsonValue[] = [];
  const results: string[][] = [];
  for (const turn of task.turns) {
    const rs: string[] = [];
    for (const c of turn.gt) rs.push(fam.call(c.name, c.arguments).result);
    states.push(fam.getState());
    results.push(rs);
  }
  return { states, results };
}

/** Multiset containment: every element of `need` (with multiplicity) occurs in `have`. */
export function multisetContains(have: readonly string[], need: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const h of have) counts.set(h, (counts.get(h) ?? 0) + 1);
  for (const n of need) {
    const c = counts.get(n) ?? 0;
    if (c === 0) return n;
    counts.set(n, c - 1);
  }
  return null;
}

export function checkTask(task: Task, turns: readonly TurnRecord[]): CheckResult {
  const completed = turns.filter((t) => t.completed).length;
  const gt = groundTruthTrace(task);
  const gtResults: string[] = [];
  const modelResults: string[] = [];
  const upto = Math.min(completed, task.turns.length);
  for (let t = 0; t < upto; t++) {
    const mt = turns[t];
    modelResults.push(...mt.results);
    gtResults.push(...gt.results[t]);
    if (task.turns[t].gt.length === 0) continue;
    if (mt.calls.length === 0) return { pass: false, errorTurn: t, reason: `turn ${t}: the model made no call` };
    if (canonicalJson(mt.state) !== canonicalJson(gt.states[t])) {
      return { pass: false, errorTurn: t, reason: `turn ${t}: state differs from the ground truth` };
    }
    const missing = multisetContains(modelResults, gtResults);
    if (missing !== null) return { pass: false, errorTurn: t, reason: `turn ${t}: missing result ${missing}` };
  }
  if (completed !== task.turns.length) {
    const errorTurn = completed < task.turns.length ? completed : task.turns.length;
    return { pass: false, errorTurn, reason: `completed ${completed} turns, expected ${task.turns.length}` };
  }
  return { pass: true, errorTurn: null, reason: 'ok' };
}
