import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderToolCalls } from '../lib/format/toolcall';
import { FAMILIES } from '../lib/envs/families/index';
import { Task, REFUSAL_FUNC } from '../lib/envs/task';
import { Episode } from '../lib/envs/episode';
import { generateTasks } from '../lib/envs/generator';
import { teacherEpisode, teacherAssistantMessages } from '../lib/envs/teacher';
import { makeHint } from '../lib/envs/hints';

const mvSpec = FAMILIES.file_system.tools.find((t) => t.name === 'mv')!;
const mf: Task = {
  id: 'hand-mf',
  category: 'miss_func',
  family: 'file_system',
  initialState: { cwd: [], root: { docs: {}, 'a.txt': 'x' } },
  tools: FAMILIES.file_system.tools.filter((t) => t.name !== 'mv'),
  turns: [
    { user: 'Put a.txt in docs.', gt: [] },
    { user: 'Please do that now.', gt: [{ name: 'mv', arguments: { source: 'a.txt', destination: 'docs' } }], addedTools: [mvSpec] },
  ],
};
const mvCall = renderToolCalls([{ name: 'mv', arguments: { source: 'a.txt', destination: 'docs' } }], 'json');

test('initial messages: system with tools (and hint), then the first user turn', () => {
  const ep = new Episode(mf, { hint: 'Turn 1: refuse.' });
  const [sys, user] = ep.initialMessages();
  assert.equal(sys.role, 'system');
  assert.ok(sys.content.includes('"name": "cd"'));
  assert.ok(!sys.content.includes('"name": "mv"'), 'withheld function is not offered');
  assert.ok(sys.content.endsWith('Hint: Turn 1: refuse.'));
  assert.deepEqual(user, { role: 'user', content: 'Put a.txt in docs.' });
});

test('miss_func: the withheld function fails before it is re-offered, works after', () => {
  const ep = new Episode(mf);
  const s1 = ep.step(mvCall);
  assert.equal(s1.done, false);
  assert.equal(s1.endedTurn, false);
  assert.equal(s1.observation!.content, '<tool_response>\nError: function mv is not available\n</tool_response>');
  const s2 = ep.step(REFUSAL_FUNC);
  assert.equal(s2.endedTurn, true);
  assert.ok(s2.observation!.content.startsWith('New functions are available.\n<tools>\n{"name": "mv"'));
  assert.ok(s2.observation!.content.endsWith('Please do that now.'));
  const s3 = ep.step(mvCall);
  assert.equal(s3.observation!.content, '<tool_response>\n{"moved": "a.txt", "to": "docs"}\n</tool_response>');
  const s4 = ep.step('Done.');
  assert.deepEqual(s4, { observation: null, done: true, endedTurn: true });
  assert.equal(ep.result().pass, true);
  assert.equal(teacherEpisode(mf).result().pass, true);
});

test('calling the withheld function in the refusal turn leaves a failed call but no state change', () => {
  const ep = new Episode(mf);
  ep.step(mvCall);
  ep.step('Sorry.');
  ep.step(mvCall);
  ep.step('Done.');
  assert.equal(ep.result().pass, true);
  assert.equal(ep.turnLog()[0].results[0], 'Error: function mv is not available');
});

test('malformed calls become error texts; several calls in one message run in order', () => {
  const ep = new Episode(mf);
  const obs = ep.step('<tool_call>{"name": "ls", "arguments": {}}</tool_call>\n<tool_call>{broken</tool_call>').observation!;
  const blocks = obs.content.split('</tool_response>').filter((b) => b.trim());
  assert.equal(blocks.length, 2);
  assert.ok(blocks[0].includes('{"items": ["a.txt", "docs"]}'));
  assert.ok(blocks[1].includes('Error'));
  const bare = ep.step('<tool_call>').observation!;
  assert.match(bare.content, /Error/);
});

test('episode ends at maxAssistantMessages', () => {
  const ep = new Episode(mf, { maxAssistantMessages: 3 });
  assert.equal(ep.step('<tool_call>').done, false);
  assert.equal(ep.step('<tool_call>').done, false);
  const last = ep.step('<tool_call>');
  assert.deepEqual(last, { observation: null, done: true, endedTurn: false });
  assert.ok(ep.done);
  assert.equal(ep.assistantCount, 3);
  assert.deepEqual(ep.step('more'), { observation: null, done: true, endedTurn: false });
  assert.equal(ep.result().pass, false);
  assert.equal(ep.result().errorTurn, 0);
});

test('python syntax: system prompt asks for it; teacher passes', () => {
  const t = { ...mf, syntax: 'python' as const };
  const ep = new Episode(t);
  assert.ok(ep.initialMessages()[0].content.includes('python list'));
  assert.deepEqual(teacherAssistantMessages(t).slice(1, 2), ["[mv(source='a.txt', destination='docs')]"]);
  assert.equal(teacherEpisode(t).result().pass, true);
});

test('teacher conversation: refusals, one call per message, short replies; hints are short', () => {
  for (const cat of ['base', 'miss_param', 'miss_func', 'long_context'] as const) {
    for (const t of generateTasks(cat, 12, 5)) {
      const msgs = teacherEpisode(t).messages;
      assert.equal(msgs[0].role, 'system');
      const assistant = msgs.filter((m) => m.role === 'assistant').map((m) => m.content);
      const nCalls = t.turns.reduce((a, x) => a + x.gt.length, 0);
      assert.equal(assistant.length, nCalls + t.turns.length);
      if (cat === 'miss_param') assert.ok(assistant.includes('The required parameters are missing.'));
      if (cat === 'miss_func') assert.ok(assistant.includes('The required function is not available.'));
      const hint = makeHint(t);
      assert.ok(hint.split(' ').length <= 60, hint);
      assert.match(hint, /^Turn 1: /);
    }
  }
});

test('generator: categories have the promised shapes and GT calls replay', () => {
  for (const t of generateTasks('miss_param', 30, 9)) {
    const i = t.turns.findIndex((x) => x.gt.length === 0);
    assert.ok(i >= 0 && i + 1 < t.turns.length && t.turns[i + 1].gt.length > 0);
  }
  for (const t of generateTasks('miss_func', 30, 9)) {
    const i = t.turns.findIndex((x) => x.gt.length === 0);
    const next = t.turns[i + 1];
    assert.ok(next.addedTools && next.addedTools.length === 1);
    const f = next.addedTools![0].name;
    assert.ok(!t.tools.some((x) => x.name === f));
    assert.ok(next.gt.some((c) => c.name === f));
    for (const prev of t.turns.slice(0, i)) assert.ok(!prev.gt.some((c) => c.name === f));
  }
  for (const t of generateTasks('base', 40, 9)) {
    assert.ok(t.turns.length >= 1 && t.turns.length <= 3);
    for (const turn of t.turns) assert.ok(turn.gt.length >= 1 && turn.gt.length <= 4);
  }
  assert.deepEqual(generateTasks('base', 5, 42), generateTasks('base', 5, 42));
});
