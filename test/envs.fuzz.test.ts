import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../lib/prng';
import type { ToolCall, JsonValue } from '../lib/format/types';
import { renderToolCalls } from '../lib/format/toolcall';
import { FAMILIES } from '../lib/envs/families/index';
import { generateTasks } from '../lib/envs/generator';
import { Episode } from '../lib/envs/episode';
import { teacherAssistantMessages } from '../lib/envs/teacher';
import { Task } from '../lib/envs/task';

const WEIRD: JsonValue[] = ['', 'x', -1, 0, 1.5, 1e12, true, false, null, [], [1, 'a'], { a: 1 }, '..', 'docs', 'AAPL', '<tool_call>'];

function mutateCall(rng: Rng, c: ToolCall, family: string): ToolCall {
  const names = FAMILIES[family].tools.map((t) => t.name);
  const args = { ...c.arguments };
  const keys = Object.keys(args);
  switch (rng.int(0, 5)) {
    case 0:
      return { name: rng.pick(['foo', 'rm_rf', '', 'ls ', c.name.toUpperCase()]), arguments: args };
    case 1:
      if (keys.length) delete args[rng.pick(keys)];
      return { name: c.name, arguments: args };
    case 2:
      if (keys.length) args[rng.pick(keys)] = rng.pick(WEIRD);
      return { name: c.name, arguments: args };
    case 3:
      args[rng.pick(['extra', 'folder', 'amount', 'lock'])] = rng.pick(WEIRD);
      return { name: c.name, arguments: args };
    case 4:
      return { name: rng.pick(names), arguments: args };
    default:
      return c;
  }
}

function garbage(rng: Rng, n: number): string {
  const alphabet = '<>{}[]()"\':,=_ \n\tabcxyz019|/\\';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[rng.int(0, alphabet.length - 1)];
  return s;
}

function randomMessage(rng: Rng, task: Task, teacher: string[]): string {
  const syntax = task.syntax ?? 'json';
  const gt = task.turns.flatMap((t) => t.gt);
  const some = gt.length ? rng.pick(gt) : { name: 'ls', arguments: {} };
  const t = rng.pick(teacher);
  switch (rng.int(0, 13)) {
    case 0: return renderToolCalls([mutateCall(rng, some, task.family)], syntax);
    case 1: return renderToolCalls([mutateCall(rng, some, task.family), mutateCall(rng, some, task.family)], rng.chance(0.5) ? 'json' : 'python');
    case 2: return t.slice(0, rng.int(0, t.length));
    case 3: return t + t;
    case 4: return '<tool_call>';
    case 5: return '<tool_call>'.repeat(rng.int(2, 6));
    case 6: return '</tool_call><tool_call>{"name": "' + some.name + '"';
    case 7: return '';
    case 8: return garbage(rng, rng.int(1, 200));
    case 9: return garbage(rng, 10000);
    case 10: return '<tool_call>{"name": "' + some.name + '", "arguments": ' + garbage(rng, 30) + '</tool_call>';
    case 11: return '[' + some.name + '(' + garbage(rng, 20);
    case 12: return 'Sure! ' + t;
    default: return t;
  }
}

test('fuzz: >= 10,000 random and mutated assistant messages never throw; episodes always terminate', () => {
  const rng = new Rng(2024);
  const tasks: Task[] = [];
  for (const fam of Object.keys(FAMILIES)) {
    for (const cat of ['base', 'miss_param', 'miss_func'] as const) tasks.push(...generateTasks(cat, 4, 77, { families: [fam] }));
  }
  tasks.push(...generateTasks('long_context', 4, 77));
  const withPython = tasks.concat(tasks.slice(0, 20).map((t) => ({ ...t, id: t.id + '-py', syntax: 'python' as const })));
  let messages = 0;
  let episodes = 0;
  while (messages < 10000) {
    const task = withPython[episodes % withPython.length];
    const teacher = teacherAssistantMessages(task);
    const ep = new Episode(task, { maxAssistantMessages: rng.int(1, 30) });
    let steps = 0;
    while (!ep.done) {
      const r = ep.step(randomMessage(rng, task, teacher));
      steps++;
      messages++;
      assert.ok(steps <= 30, 'episode must end by maxAssistantMessages');
      if (!r.done) assert.ok(r.observation && typeof r.observation.content === 'string');
    }
    const res = ep.result();
    assert.ok(res.reward === 0 || res.reward === 1);
    assert.ok(res.errorTurn === null || (res.errorTurn >= 0 && res.errorTurn <= task.turns.length));
    episodes++;
  }
  assert.ok(messages >= 10000);
});
