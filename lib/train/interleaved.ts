/**
 * Data of the interleaved schemes' SFT phases (docs/design.md A.6), built from the step records an RL stage wrote:
 * - ETS (erroneous-trajectory supervision): every task with at least one failed rollout in the last 10 RL
 *   steps -> its teacher trajectory.
 * - PRS (process-reflection supervision): one rollout per group from the last 10 steps -> the judge prompt
 *   and the judge's reflection (lib/envs/judge.ts), trained jointly with the ETS data.
 */
import { Tokenizer } from '../format/tokenizer';
import { JsonValue } from '../format/types';
import { Task } from '../envs/task';
import { teacherTrajectory } from '../envs/teacher';
import { reflectionConversation } from '../envs/judge';
import { encodeConversation, TrainingSequence } from './encode';
import { readJsonlValues } from '../util/jsonl';
import type { RolloutRecord } from './records';
import { ConfigOf, declareConfig, int } from '../util/fields';

const INTERLEAVE_FIELDS = {
  /** RL steps of rollout records an interleaved SFT phase reads. Paper: the last 10 (ETS / PRS). */
  lastSteps: int(10, 1, 100_000, 'steps'),
};

/** What an interleaved SFT phase reads (`--set interleave.lastSteps`); its SFT settings are an SFT config. */
export const INTERLEAVE = declareConfig('interleave', INTERLEAVE_FIELDS);
export type InterleaveConfig = ConfigOf<typeof INTERLEAVE_FIELDS>;

/** Read rollouts.jsonl back (blank lines ignored, a torn final line absent, a broken line named). */
export function readStepRecords(file: string): RolloutRecord[] {
  return readJsonlValues<RolloutRecord>(file, `step records not found: ${file}`);
}

/** Records of the last `lastSteps` steps of RL stage `stage` (all stages when stage is undefined). */
export function lastSteps(records: RolloutRecord[], lastStepsN: number, stage?: number): RolloutRecord[] {
  const mine = records.filter((r) => stage === undefined || r.stage === stage);
  if (mine.length === 0) return [];
  const maxStep = Math.max(...mine.map((r) => r.step));
  return mine.filter((r) => r.step > maxStep - lastStepsN);
}

/** ETS: tasks with any failed (sampled) rollout among `records`, in first-seen order. */
export function failedTasks(records: RolloutRecord[], taskById: Map<string, Task>): Task[] {
  const out: Task[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    if (r.reward < 1 && !r.scripted && !seen.has(r.taskId)) {
      const t = taskById.get(r.taskId);
      if (!t) throw new Error(`step record names unknown task ${r.taskId}`);
      seen.add(r.taskId);
      out.push(t);
    }
  }
  return out;
}

export function etsData(tok: Tokenizer, tasks: Task[]): TrainingSequence[] {
  return tasks.map((t) => encodeConversation(tok, teacherTrajectory(t)));
}

/** PRS: the judge's reflection on one rollout per (step, group): the first sampled rollout of each group. */
export function prsData(tok: Tokenizer, records: RolloutRecord[], taskById: Map<string, Task>,
  pool: Map<string, JsonValue[]>): TrainingSequence[] {
  const picked = new Map<string, RolloutRecord>();
  for (const r of records) {
    const key = `${r.stage ?? 0}/${r.step}/${r.group}`;
    if (!r.scripted && !picked.has(key)) picked.set(key, r);
  }
  return Array.from(picked.values()).map((r) => {
    const task = taskById.get(r.taskId);
    if (!task) throw new Error(`step record names unknown task ${r.taskId}`);
    return encodeConversation(tok, reflectionConversation(task, r, pool));
  });
}
