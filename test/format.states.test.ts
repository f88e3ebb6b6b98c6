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

test('role-word leakage: a run of turn headers is fullCollapse, headers next to text are pollution', () => {
  expectAll('fullCollapse', ['user\nassistant\nuser\nassistant\n', 'assistant', 'user\n<tool_call>\nassistant']);
  expectAll('pollution', [
    'user\nList the files in the document folder.', // replays the request
    'user\n<tool_response>\n{"files": ["a.txt"]}\n</tool_response>', // invents a tool result
    'The folder holds a.txt.\nuser\nThanks!\nassistant\nYou are welcome.',
    `<tool_call>\n${CD}\n</tool_call>\nuser\n`,
  ]);
  expectAll('pollution', ['user\nList the files.'], 'python');
  // A role word inside a sentence is just a word.
  expectAll('healthyResponse', ['The user asked for the files.', 'Which user?\nPlease tell me.']);
});

test('prose with a parenthesis is not a call; code-style calls are', () => {
  expectAll('healthyResponse', [
    "Eve (use_name='Eve') retrieved the reminder",
    'Total (x = 3) is fine.',
    'We compared a==b (equal).',
  ]);
  expectAll('healthyResponse', ["Eve (use_name='Eve') retrieved the reminder"], 'python');
  expectAll('pollution', ["Eve get_reminder(use_name='Eve') retrieved it", "I'll run cd(folder='document') now."]);
});

test('JSON fragments are pieces of a call, not a reply', () => {
  expectAll('pollution', ['{"', '", "arguments": {}}', '"}}', '{"\n{"\n{"', '"arguments": {"folder": "doc"}}', '"name": "cd"']);
  expectAll('pollution', ['{"', '", "arguments": {}}'], 'python');
  expectAll('healthyResponse', ['"Done."', '...', 'The mean is {7.4}.']);
});

test('classification is linear: 1 MB pathological messages classify in < 100 ms, or under 8x the time of 256 KB', () => {
  const fill = (size: number, unit: string, prefix = '', suffix = '') =>
    prefix + unit.repeat(Math.ceil(size / unit.length)) + suffix;
  const cases: [string, string?, string?][] = [
    ['a'], // one long identifier run: the old python-call regex was O(n^2) here
    ['a.'],
    ['b', 'a('],
    ['a', '['],
    ['<tool_call>x'], // thousands of unclosed blocks
    ['</tool_call>x'],
    ['<tool_call>' + ' '.repeat(40), '', 'x'],
    ['{ "name" '],
    ['user\nassistant\n'],
    ['a', "[f(x='", "')]"],
    ['a=1, ', '[f(', ')]'],
    ['{{', '', '?'],
  ];
  // Best of 3: the check is about growth, not about a busy machine.
  const best = (s: string, syntax: 'json' | 'python') => {
    let ms = Infinity;
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      classifyMessage(s, syntax);
      ms = Math.min(ms, performance.now() - t0);
    }
    return ms;
  };
  for (const [unit, prefix, suffix] of cases) {
    for (const syntax of ['json', 'python'] as const) {
      const big = best(fill(1 << 20, unit, prefix, suffix), syntax);
      if (big < 100) continue;
      // slow, perhaps only because the machine is busy: linear work grows 4x from 256 KB to 1 MB, quadratic 16x
      const small = best(fill(1 << 18, unit, prefix, suffix), syntax);
      assert.ok(big < 8 * small, `${syntax} ${JSON.stringify((prefix ?? '') + unit)}...: 1 MB ${big.toFixed(0)} ms, ` +
        `256 KB ${small.toFixed(0)} ms (ratio ${(big / small).toFixed(1)}; linear 4, quadratic 16)`);
    }
  }
});

test('long runs of whitespace around tags and role words change nothing', () => {
  const pad = ' '.repeat(40);
  expectAll('fullCollapse', [pad + '<|im_end|>' + pad, pad + '\n' + pad, `${pad}user${pad}\n${pad}assistant${pad}`]);
  expectAll('pollution', [`${pad}user${pad}\nHi.`]);
  expectAll('healthyResponse', [`${pad}Done.${pad}\n${pad}Bye.`]);
});
