/**
 * The rule-based judge of process-reflection supervision (PRS, docs/design.md A.6). The paper asks a strong LLM to
 * read one rollout per group together with the per-turn ground truth and write a turn-by-turn reflection;
 * the policy is then fine-tuned to produce that reflection from the judge prompt. Our judge is a set of
 * rules over the replayed episode (no network, no API key), writing the same parts in templated English:
 *   per turn: the user's intent, what was right, the mistake class and its root cause, the corrected
 *   `<tool_call>` sequence; for a failed rollout: the first wrong turn with an analysis, and a few similar
 *   scenarios with their correct calls.
 * Every fixed word the judge writes is listed in JUDGE_TEXTS so the vocabulary covers it (lib/envs/data.ts).
 */
import type { CallSyntax, JsonValue, Message, ToolCall } from '../format/types';
import { renderToolCalls } from '../format/toolcall';
import { formatFault } from '../format/states';
import { Rng, hashString } from '../prng';
import { Episode } from './episode';
import { TurnRecord } from './checker';
import { callSummary } from './hints';
import { Task } from './task';

/** What the judge reads of a rollout (the step records GRPO writes). */
export interface RolloutRecord {
  taskId: string;
  /** The policy's assistant messages, in order. */
  messages: string[];
  reward: number;
  errorTurn: number | null;
}

export const JUDGE_SYSTEM =
  'You are a judge. Read the conversation and the correct calls of each turn, then write a reflection for each turn.';

export const MISTAKES = {
  none: ['none', 'the turn matches the correct calls.'],
  unfinished: ['unfinished turn', 'the conversation ended before this turn was done.'],
  missingCall: ['missing call', 'it replied without calling the needed function.'],
  badFormat: ['bad format',
    'a tool call was not well formed; write the tag, then one JSON call, then the closing tag.'],
  wrongFunction: ['wrong function', 'it did not call the function the request needs.'],
  wrongArguments: ['wrong arguments', 'a call used a wrong value.'],
  extraCall: ['extra call', 'it made a call that changed the state in a wrong way.'],
  guessedValue: ['guessed value', 'a required value was missing, so it should ask for it instead of calling.'],
  unavailable: ['unavailable function', 'the needed function was not offered, so it should say it is not available.'],
} as const;

/** Every fixed phrase the judge writes (for the vocabulary builder). */
export const JUDGE_TEXTS: string[] = [
  JUDGE_SYSTEM,
  // labels start lines and follow spaces, so both spellings of each word piece are needed
  'User: Assistant: Tool: Correct calls: Turn 1: Turn 2: Turn 3: Turn 4:\nUser\nAssistant\nTool\nCorrect\nSimilar',
  'Intent: Right: Mistake: Cause: Fix: First wrong turn: Analysis: Similar scenarios: If the user asks for',
  'nothing was right. it asked for the missing value. it said the function is not available. it did not call a ' +
    'function.',
  'the call was right. ask for the missing value. say the function is not available. The rollout passed. The ' +
    'rollout failed.',
  ...Object.values(MISTAKES).flat(),
];

function sameCall(a: ToolCall, b: ToolCall): boolean {
  return a.name === b.name && JSON.stringify(a.arguments) === JSON.stringify(b.arguments);
}

/** Replay the rollout's messages through a fresh episode: per-turn records and per-message turn indices. */
function replay(task: Task, messages: string[],
  syntax: CallSyntax): { turns: TurnRecord[]; msgTurn: number[]; log: string[] } {
  const ep = new Episode(task, { syntax, maxAssistantMessages: 1000 });
  const msgTurn: number[] = [];
  const log: string[] = [`User: ${task.turns[0].user}`];
  for (const m of messages) {
    if (ep.done) break;
    msgTurn.push(ep.turnIndex);
    const r = ep.step(m);
    log.push(`Assistant: ${m}`);
    if (r.observation) log.push(`${r.endedTurn ? 'User' : 'Tool'}: ${r.observation.content}`);
  }
  return { turns: ep.turnLog(), msgTurn, log };
}

interface TurnVerdict {
  intent: string;
  right: string;
  mistake: keyof typeof MISTAKES;
  fix: string;
}

/** Calls written as the policy writes them, without the newline that ends the last block (text follows). */
function callBlocks(calls: ToolCall[], syntax: CallSyntax): string {
  return renderToolCalls(calls, syntax).trimEnd();
}

function judgeTurn(task: Task, t: number, rec: TurnRecord | undefined, badFormat: boolean,
  syntax: CallSyntax): TurnVerdict {
  const gt = task.turns[t].gt;
  const intent = gt.length ? gt.map(callSummary).join(', then ')
    : task.category === 'miss_func' ? 'say the function is not available' : 'ask for the missing value';
  const fix = gt.length ? callBlocks(gt, syntax) : intent + '.';
  const calls = rec ? rec.calls : [];
  const rightCalls = calls.filter((c) => gt.some((g) => sameCall(g, c)));
  let right = rightCalls.length ?
    rightCalls.map((c) => `the call ${callSummary(c)} was right.`).join(' ') : 'nothing was right.';
  let mistake: keyof typeof MISTAKES = 'none';
  if (!rec || !rec.completed) mistake = 'unfinished';
  if (gt.length === 0) {
    if (rec && calls.length === 0) right = task.category === 'miss_func' ?
      'it said the function is not available.' : 'it asked for the missing value.';
    if (calls.length > 0) mistake = task.category === 'miss_func' ? 'unavailable' : 'guessedValue';
  } else if (mistake === 'none') {
    if (badFormat) mistake = 'badFormat';
    else if (calls.length === 0) mistake = 'missingCall';
    else if (gt.some((g) => !calls.some((c) => c.name === g.name))) mistake = 'wrongFunction';
    else if (gt.some((g) => !calls.some((c) => sameCall(c, g)))) mistake = 'wrongArguments';
    else if (calls.length > gt.length && rightCalls.length < calls.length) mistake = 'extraCall';
  }
  return { intent, right, mistake, fix };
}

/** Argument values seen per function and argument in a set of tasks (for "similar scenarios"). */
export function buildArgPool(tasks: Task[]): Map<string, JsonValue[]> {
  const pool = new Map<string, JsonValue[]>();
  for (const t of tasks) for (const turn of t.turns) for (const c of turn.gt) {
    for (const [k, v] of Object.entries(c.arguments)) {
      const key = `${c.name}.${k}`;
      const list = pool.get(key) ?? [];
      if (!list.some((x) => JSON.stringify(x) === JSON.stringify(v))) list.push(v);
      pool.set(key, list);
    }
  }
  return pool;
}

/** The judge prompt of PRS: the rollout transcript and the correct calls of each turn. */
export function judgePrompt(task: Task, record: RolloutRecord, syntax: CallSyntax = 'json'): Message[] {
  const { log } = replay(task, record.messages, syntax);
  const gt = task.turns.map((turn, i) => `Turn ${i + 1}: ${turn.gt.length ? callBlocks(turn.gt, syntax) : 'none'}`);
  return [
    { role: 'system', content: JUDGE_SYSTEM },
    { role: 'user', content: `${log.join('\n')}\nCorrect calls:\n${gt.join('\n')}` },
  ];
}

/** The reflection the judge writes for `record` (deterministic per task and rollout). */
export function judgeReflection(task: Task, record: RolloutRecord, pool: Map<string, JsonValue[]>,
  syntax: CallSyntax = 'json'): string {
  const { turns, msgTurn } = replay(task, record.messages, syntax);
  const lines: string[] = [];
  const verdicts = task.turns.map((_, t) => {
    const bad = record.messages.some((m, i) => msgTurn[i] === t && formatFault(m, syntax));
    return judgeTurn(task, t, turns[t], bad, syntax);
  });
  verdicts.forEach((v, t) => {
    const [cls, cause] = MISTAKES[v.mistake];
    lines.push(`Turn ${t + 1}: Intent: ${v.intent}. Right: ${v.right} Mistake: ${cls}. Cause: ${cause} Fix: ${v.fix}`);
  });
  if (record.reward === 1) {
    lines.push('The rollout passed.');
    return lines.join('\n');
  }
  const first = record.errorTurn !== null && record.errorTurn < task.turns.length ? record.errorTurn
    : Math.max(0, verdicts.findIndex((v) => v.mistake !== 'none'));
  lines.push(`The rollout failed. First wrong turn: Turn ${first + 1}. Analysis: ` +
    `${MISTAKES[verdicts[first].mistake][1]}`);
  // similar scenarios: the first wrong turn's first call with other values of one argument
  const base = task.turns[first].gt[0] ?? task.turns.flatMap((x) => x.gt)[0];
  if (base) {
    const rng = new Rng(hashString(task.id + record.messages.join('|')));
    const keys = Object.keys(base.arguments);
    const scenarios: string[] = [];
    for (let i = 0; i < 4 && scenarios.length < 2 && keys.length > 0; i++) {
      const k = rng.pick(keys);
      const options = (pool.get(`${base.name}.${k}`) ?? []).filter((v) =>
        JSON.stringify(v) !== JSON.stringify(base.arguments[k]));
      if (options.length === 0) continue;
      const varied: ToolCall = { name: base.name, arguments: { ...base.arguments, [k]: rng.pick(options) } };
      const text = `If the user asks for ${callSummary(varied)}: ${callBlocks([varied], syntax)}`;
      if (!scenarios.includes(text)) scenarios.push(text);
    }
    if (scenarios.length) lines.push(`Similar scenarios: ${scenarios.join(' ')}`);
  }
  return lines.join('\n');
}

/** One PRS SFT sample: judge prompt -> reflection. */
export function reflectionConversation(task: Task, record: RolloutRecord, pool: Map<string, JsonValue[]>): Message[] {
  return [...judgePrompt(task, record), { role: 'assistant', content: judgeReflection(task, record, pool) }];
}
