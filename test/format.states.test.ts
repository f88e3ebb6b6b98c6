import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyMessage, stateShares, renderToolCalls, StructuralState, STRUCTURAL_STATES } from '../lib/format';
import { CALLS } from './format.fixtures';

const CD = '{"name": "cd", "arguments": {"folder": "document"}}';

function expectAll(state: StructuralState, cases: string[], syntax: 'json' | 'python' = 'json') {
  for (const c of cases) assert.equal(classifyMessage(c, syntax), state, `${syntax}: ${JSON.stringify(c)}`);
}

test('fullCollapse: the degenerate control-token outputs', () => {
  expectAll('fullCollapse', [
    '',
    '   \n ',
    '<tool_call>',
    '<tool_call><|im_end|>',
    '<tool_call>\n<|im_end|>',
    '<tool_call>\n',
    '<tool_call><tool_call>',
    '<tool_call></tool_call>',
    '<tool_call>\n</tool_call>',
    '<|im_end|>',
    '<|im_end|><|im_end|>',
    '<tool_call><tool_call><tool_call>{"name": "cd"',
    'Let me call it <tool_call> <tool_call>\n<tool_call>',
    'I will check the folder.<tool_call>', // opened a call and closed the message
    `<tool_call>${CD}</tool_call>\n<tool_call><|im_end|>`,
  ]);
  expectAll('fullCollapse', ['', '<tool_call>', '<|im_end|>'], 'python');
});

test('healthyCall: well-formed calls and nothing else', () => {
  expectAll('healthyCall', [
    renderToolCalls(CALLS, 'json'),
    `<tool_call>${CD}</tool_call>`,
    `<tool_call>\n${CD}\n</tool_call>`,
    `<tool_call>\n${CD}\n</tool_call><|im_end|>`,
    `\n<tool_call>${CD}</tool_call>\n\n<tool_call>{"name": "ls", "arguments": {}}</tool_call>\n`,
  ]);
  expectAll('healthyCall', [renderToolCalls(CALLS, 'python'), "[cd(folder='document')]<|im_end|>", " [ls()]\n"], 'python');
});

test('pollution: call syntax mixed with text, wrong format, malformed', () => {
  expectAll('pollution', [
    CD, // JSON without tags
    `Sure! ${CD}`,
    `I will change directory.\n<tool_call>${CD}</tool_call>`, // text + call
    `<tool_call>${CD}</tool_call> Done.`,
    "[cd(folder='document')]", // python-style call in json mode
    "I'll run cd(folder='document') now.",
    '<tool_call>{"name": "cd", "arguments": {"folder": "doc"}</tool_call>', // bad JSON
    '<tool_call>{"name": "cd", "arguments": {"folder": "doc"}}', // unclosed
    `${CD}</tool_call>`,
    'The result is in <tool_response>ok</tool_response>',
    '<tool_call>{"name": "cd", "arguments": {}}</tool_call><|im_start|>user',
  ]);
  expectAll('pollution', [
    `<tool_call>${CD}</tool_call>`, // JSON call in python mode
    CD,
    "Sure: [cd(folder='document')]",
    "[cd(folder='document')] Done.",
    "[cd(folder='doc'",
  ], 'python');
});

test('healthyResponse: plain text', () => {
  expectAll('healthyResponse', [
    'Done.',
    'Done.<|im_end|>',
    'The report is in temp, and USR002 was told.',
    'The required parameters are missing: which folder?',
    'The mean is 7.4375 (rounded).',
  ]);
  expectAll('healthyResponse', ['Done.', 'I need the folder name.'], 'python');
});

test('stateShares', () => {
  assert.deepEqual(stateShares([]), { healthyCall: 0, healthyResponse: 0, pollution: 0, fullCollapse: 0 });
  const s = stateShares(['healthyCall', 'fullCollapse', 'fullCollapse', 'pollution']);
  assert.deepEqual(s, { healthyCall: 0.25, healthyResponse: 0, pollution: 0.25, fullCollapse: 0.5 });
  assert.equal(STRUCTURAL_STATES.reduce((a, k) => a + s[k], 0), 1);
});
