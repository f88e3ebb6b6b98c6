// Real conversations from rollout records: one example per structural state, replayed into the whole dialogue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exampleMarkdown, exampleMessages, replayConversation } from '../lib/report/notebook/conversations';
import { teacherAssistantMessages, teacherTrajectory } from '../lib/envs/teacher';
import type { RolloutRecord } from '../lib/train/records';
import { tasks } from './helpers';

const rec = (step: number, messages: string[], states: string[], extra: Partial<RolloutRecord> = {}): RolloutRecord => ({
  stage: 0, step, taskId: 't', category: 'base', group: 0, index: 0, reward: 0, errorTurn: null, messages, states, scripted: false, ...extra,
});

const CALL = '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>\n';
const LOOP = ' to'.repeat(30);

test('exampleMessages: per state the latest sampled message in it, by the current rule, whatever the record says', () => {
  const records = [
    rec(1, [CALL, `${CALL} Done.`], ['healthyCall', 'pollution']),
    // recorded as a healthy response by a run made before loops were full collapse: it is shown as the collapse it is
    rec(10, [`Sure. ${CALL}`, LOOP], ['pollution', 'healthyResponse'], { index: 3 }),
    rec(20, [CALL], ['healthyCall'], { scripted: true }),
  ];
  const ex = exampleMessages(records);
  assert.deepEqual(ex.map((e) => [e.state, e.record.step, e.message]), [['healthyCall', 1, 0], ['pollution', 10, 0], ['fullCollapse', 10, 1]]);
  assert.equal(ex[2].mode, 'loop');
  assert.match(exampleMarkdown(ex[2], 'vanilla-rl seed 1'),
    /^\*\*fullCollapse\*\* · repetition loop \(vanilla-rl seed 1, RL step 10 \(stage 0\), task t, rollout 3, message 2 of 2, reward 0\)\n\n```\n( to)+\n```$/);
  assert.match(exampleMarkdown({ ...ex[0], record: rec(1, [''], ['fullCollapse']) }, 'r'), /\(empty message\)/);
});

test('replayConversation: the recorded assistant messages through the task environment give the whole dialogue back', () => {
  const task = tasks('train')[0];
  const msgs = teacherAssistantMessages(task);
  const { messages, states } = replayConversation(task, rec(1, msgs, msgs.map(() => 'healthyCall'), { taskId: task.id }));
  assert.deepEqual(messages, teacherTrajectory(task));
  assert.equal(states.length, msgs.length);
  assert.throws(() => replayConversation(task, rec(1, [], [], { taskId: 'other' })), /record is of task other/);
});
