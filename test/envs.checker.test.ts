import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToolCall } from '../lib/format/types';
import { renderToolCalls } from '../lib/format/toolcall';
import { FAMILIES } from '../lib/envs/families/index';
import { Task } from '../lib/envs/task';
import { Episode } from '../lib/envs/episode';
import { checkTask, multisetContains, TurnRecord } from '../lib/envs/checker';
import { teacherEpisode } from '../lib/envs/teacher';

const c = (name: string, args: { [k: string]: string } = {}): ToolCall => ({ name, arguments: args });
const call = (x: ToolCall) => renderToolCalls([x], 'json');

/** cd docs + ls, then rm a.txt. */
const task: Task = {
  id: 'hand-1',
  category: 'base',
  family: 'file_system',
  initialState: { cwd: [], root: { docs: { 'a.txt': 'x', 'b.txt': 'y' }, 'c.txt': 'z' } },
  tools: FAMILIES.file_system.tools.slice(),
  turns: [
    { user: 'Go into docs and list it.', gt: [c('cd', { folder: 'docs' }), c('ls')] },
    { user: 'Delete a.txt.', gt: [c('rm', { file_name: 'a.txt' })] },
  ],
};

function play(t: Task, msgs: string[], max = 30): Episode {
  const ep = new Episode(t, { maxAssistantMessages: max });
  for (const m of msgs) if (!ep.done) ep.step(m);
  return ep;
}

test('teacher passes; reward 1', () => {
  const r = teacherEpisode(task).result();
  assert.deepEqual(r, { pass: true, errorTurn: null, reason: 'ok', reward: 1 });
});

test('wrong state at turn 1 fails with errorTurn 1', () => {
  const ep = play(task, [call(c('cd', { folder: 'docs' })), call(c('ls')), 'Done.', call(c('rm', { file_name: 'b.txt' })), 'Done.']);
  assert.ok(ep.done);
  const r = ep.result();
  assert.equal(r.pass, false);
  assert.equal(r.errorTurn, 1);
  assert.match(r.reason, /state differs/);
});

test('a turn with no call fails at that turn', () => {
  const r = play(task, ['I will not.', call(c('rm', { file_name: 'a.txt' })), 'Done.']).result();
  assert.equal(r.errorTurn, 0);
  assert.match(r.reason, /no call/);
});

test('a missing read-only call (results not contained) fails even when the state matches', () => {
  const r = play(task, [call(c('cd', { folder: 'docs' })), 'Done.', call(c('rm', { file_name: 'a.txt' })), 'Done.']).result();
  assert.equal(r.pass, false);
  assert.equal(r.errorTurn, 0);
  assert.match(r.reason, /missing result/);
});

test('extra harmless calls still pass (state and results match)', () => {
  const r = play(task, [call(c('ls')), call(c('cat', { file_name: 'c.txt' })), call(c('cd', { folder: 'docs' })), call(c('ls')), 'Done.', call(c('rm', { file_name: 'a.txt' })), call(c('ls')), 'Done.']).result();
  assert.equal(r.pass, true, r.reason);
});

test('wrong turn count: unfinished episode fails at the first turn not completed', () => {
  const ep = play(task, [call(c('cd', { folder: 'docs' })), call(c('ls')), 'Done.', call(c('rm', { file_name: 'a.txt' }))], 4);
  assert.ok(ep.done);
  const r = ep.result();
  assert.equal(r.pass, false);
  assert.equal(r.errorTurn, 1);
  assert.match(r.reason, /completed 1 turns, expected 2/);
});

test('too many completed turns: errorTurn = turns.length', () => {
  const ep = teacherEpisode(task);
  const log = ep.turnLog();
  const extra: TurnRecord = { ...log[1], calls: [], results: [] };
  const r = checkTask(task, [...log, extra]);
  assert.equal(r.errorTurn, 2);
  assert.equal(r.pass, false);
});

test('GT turns without calls are skipped (miss_param), whatever the model does there', () => {
  const mp: Task = {
    ...task,
    id: 'hand-2',
    category: 'miss_param',
    turns: [
      { user: 'Delete a file.', gt: [] },
      { user: 'It is c.txt.', gt: [c('rm', { file_name: 'c.txt' })] },
    ],
  };
  assert.equal(teacherEpisode(mp).result().pass, true);
  // A harmless read during the refusal turn does not matter.
  assert.equal(play(mp, [call(c('ls')), 'Which file?', call(c('rm', { file_name: 'c.txt' })), 'Done.']).result().pass, true);
  // Acting on the missing-value turn changes the state: caught at the next GT turn.
  const r = play(mp, [call(c('rm', { file_name: 'c.txt' })), 'Done.', 'Already done.']).result();
  assert.equal(r.pass, false);
  assert.equal(r.errorTurn, 1);
});

test('multisetContains respects multiplicity', () => {
  assert.equal(multisetContains(['a', 'b', 'a'], ['a', 'a']), null);
  assert.equal(multisetContains(['a', 'b'], ['a', 'a']), 'a');
  assert.equal(multisetContains([], []), null);
});
