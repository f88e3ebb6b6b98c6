/**
 * HBG hints (docs/design.md A.6): a short templated summary of the GT solution, appended to the system prompt of two
 * rollouts per group during sampling only. The paper allows up to 300 words; ours stay around 40 so the prompt
 * fits the tiny model's context: `Turn 1: cd docs, then ls. Turn 2: ask for the missing value.`
 */
import type { JsonValue, ToolCall } from '../format/types';
import { Task } from './task';

function valueText(v: JsonValue): string {
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** `cd docs`, `send_message bob see you at noon`, `ls`. */
export function callSummary(c: ToolCall): string {
  const vals = Object.keys(c.arguments).map((k) => valueText(c.arguments[k]));
  return [c.name, ...vals].join(' ');
}

export function makeHint(task: Task): string {
  return task.turns
    .map((turn, i) => {
      let body: string;
      if (turn.gt.length) body = turn.gt.map(callSummary).join(', then ');
      else body = task.category === 'miss_func' ? 'say the function is not available' : 'ask for the missing value';
      return `Turn ${i + 1}: ${body}.`;
    })
    .join(' ');
}
