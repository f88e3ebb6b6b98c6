/**
 * Teacher trajectories (docs/design.md A.6): the GT replayed through the simulator.
 *
 * Each GT call is its own assistant message, the environment's observation follows, and each turn ends with
 * a short reply (`Done.`); a miss_func turn gets the fixed refusal "The required function is not available."
 * and a miss_param turn "The required parameters are missing." Running the messages through a real Episode
 * (rather than assembling text by hand) guarantees the conversation is exactly what a policy would see.
 */
import type { CallSyntax, Message } from '../format/types';
import { renderToolCalls } from '../format/toolcall';
import { Episode, EpisodeOptions } from './episode';
import { REFUSAL_FUNC, REFUSAL_PARAM, TURN_DONE, Task } from './task';

/** The teacher's assistant messages for `task`, in order. */
export function teacherAssistantMessages(task: Task, syntax?: CallSyntax): string[] {
  const s = task.syntax ?? syntax ?? 'json';
  const out: string[] = [];
  for (const turn of task.turns) {
    if (turn.gt.length === 0) {
      out.push(task.category === 'miss_func' ? REFUSAL_FUNC : REFUSAL_PARAM);
      continue;
    }
    for (const c of turn.gt) out.push(renderToolCalls([c], s));
    out.push(TURN_DONE);
  }
  return out;
}

/** The full teacher conversation (system, users, assistant messages, observations) and its final episode. */
export function teacherEpisode(task: Task, opts: EpisodeOptions = {}): Episode {
  const ep = new Episode(task, { maxAssistantMessages: 1000, ...opts });
  for (const m of teacherAssistantMessages(task, ep.syntax)) {
    if (ep.done) break;
    ep.step(m);
  }
  return ep;
}

export function teacherTrajectory(task: Task, opts: EpisodeOptions = {}): Message[] {
  return teacherEpisode(task, opts).messages;
}
