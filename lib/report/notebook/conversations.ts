/**
 * Real conversations from committed runs: a run keeps the sampled rollouts of step 1 and every 10th RL step
 * (`rollouts-sample.jsonl`, lib/experiments/store/rollout_sample.ts), assistant messages only. Replaying those
 * messages through the task's environment gives back the whole conversation (system prompt, user turns,
 * tool responses), exactly as the policy saw it, since the environments are deterministic.
 *
 * `exampleMessages` picks, per structural state (docs/design.md A.5: healthy call, healthy response, pollution,
 * full collapse), the latest sampled message in that state, so a notebook can show a healthy call, a
 * polluted message and a collapsed one, each with its badge (state and mode), and the report can list them.
 * States and modes are those of the current rule (samples.ts), not the ones a run recorded when it was made.
 */
import type { Message, MessageMode, StructuralState } from '../../format/types';
import { MODE_LABEL, STRUCTURAL_STATES } from '../../format/types';
import { stateOfMode } from '../../format/states';
import { Episode } from '../../envs/episode';
import type { Task } from '../../envs/task';
import type { RolloutRecord } from '../../train/records';
import { showConversation } from './chat';
import { readRolloutSample, recordModes } from '../store/samples';

export interface ExampleMessage {
  state: StructuralState;
  mode: MessageMode;
  record: RolloutRecord;
  /** Index of the message within the record's assistant messages. */
  message: number;
}

/**
 * Per state, the latest sampled (not scripted) message in that state among `records` (latest step first,
 * then the earliest rollout and message): states that never occurred are absent.
 */
export function exampleMessages(records: readonly RolloutRecord[]): ExampleMessage[] {
  const byStep = records.filter((r) => !r.scripted).slice().sort((a, b) => b.step - a.step || (a.stage ?? 0) -
    (b.stage ?? 0));
  const out: ExampleMessage[] = [];
  const modes = new Map(byStep.map((r) => [r, recordModes(r)]));
  for (const state of STRUCTURAL_STATES) {
    for (const record of byStep) {
      const m = modes.get(record)!;
      const i = m.findIndex((x) => stateOfMode(x) === state);
      if (i >= 0) {
        out.push({ state, mode: m[i], record, message: i });
        break;
      }
    }
  }
  return out;
}

/**
 * The whole conversation of a rollout record, replayed through `task`'s environment, with each assistant
 * message's badge: its structural state and mode by the current rule ("fullCollapse · repetition loop").
 */
export function replayConversation(task: Task, record: RolloutRecord): { messages: Message[]; states: string[] } {
  if (task.id !== record.taskId) throw new Error(`replayConversation: record is of task ${record.taskId}, not ` +
    `${task.id}`);
  const ep = new Episode(task);
  for (const m of record.messages) {
    if (ep.done) break;
    ep.step(m);
  }
  return { messages: ep.messages, states: recordModes(record).map((m) => `${stateOfMode(m)} · ${MODE_LABEL[m]}`) };
}

/** One example as Markdown: where it comes from, then the message itself in a fence. */
export function exampleMarkdown(e: ExampleMessage, run: string): string {
  const r = e.record;
  const where =
    `${run}, RL step ${r.step}${r.stage !== undefined ? ` (stage ${r.stage})` : ''}, task ${r.taskId}, rollout ` +
    `${r.index}, ` +
    `message ${e.message + 1} of ${r.messages.length}, reward ${r.reward}`;
  const text = r.messages[e.message];
  return `**${e.state}** · ${MODE_LABEL[e.mode]} ` +
    `(${where})\n\n\`\`\`\n${text.length ? text : '(empty message)'}\n\`\`\``;
}

/**
 * In a notebook: for each example of a run (one per structural state), the whole conversation it came from,
 * every assistant message badged with its state. Outside a kernel, the same as text. Returns the examples.
 */
export function showExampleConversations(runDir: string, tasks: readonly Task[], label: string): ExampleMessage[] {
  const examples = exampleMessages(readRolloutSample(runDir));
  const byId = new Map(tasks.map((t) => [t.id, t] as [string, Task]));
  for (const e of examples) {
    const task = byId.get(e.record.taskId);
    if (!task) continue;
    const { messages, states } = replayConversation(task, e.record);
    showConversation(messages, {
      title: `${label}: a ${e.state} message, ${MODE_LABEL[e.mode]} (RL step ${e.record.step}, task ${task.id}, ` +
        `rollout ${e.record.index}, ` +
        `message ${e.message + 1}, reward ${e.record.reward})`,
      notes: states,
    });
  }
  return examples;
}
