import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderToolCall, renderToolCalls, parseToolCalls, ToolCall, CallSyntax, toJsonText, toPythonText } from '../lib/format';
import { CALLS } from './format.fixtures';

const VARIED: ToolCall[] = [
  ...CALLS,
  { name: 'echo', arguments: { content: 'say "hi" and \'bye\'', path: 'a\\b\nc\td' } },
  { name: 'f', arguments: { x: -0.5, y: 1e-7, z: 12345678901, n: null, b: false, t: true } },
  { name: 'g', arguments: { nested: [[1, 2], [], ['a', 'b c']], obj: { k: 'v', n: [1] } } },
  { name: 'unicode', arguments: { s: 'héllo 🙂 ünïcode' } },
  { name: 'empty_string', arguments: { s: '' } },
];

test('json rendering is canonical: the paper layout, newlines inside the tags and after each block', () => {
  assert.equal(
    renderToolCall({ name: 'cd', arguments: { folder: 'doc' } }, 'json'),
    '<tool_call>\n{"name": "cd", "arguments": {"folder": "doc"}}\n</tool_call>\n',
  );
  assert.equal(toJsonText({ a: [1, 'x', null, true], b: {} }), '{"a": [1, "x", null, true], "b": {}}');
  assert.equal(
    renderToolCalls(CALLS.slice(0, 2), 'json'),
    '<tool_call>\n{"name": "cd", "arguments": {"folder": "document"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "mv", "arguments": {"source": "final_report.pdf", "destination": "temp"}}\n</tool_call>\n',
  );
});

test('python rendering is python', () => {
  assert.equal(renderToolCall({ name: 'cd', arguments: { folder: 'doc' } }, 'python'), "cd(folder='doc')");
  assert.equal(toPythonText({ a: [true, false, null, -1.5], "b'": "it's" }), "{'a': [True, False, None, -1.5], 'b\\'': 'it\\'s'}");
  assert.equal(
    renderToolCalls([{ name: 'a', arguments: { x: 1 } }, { name: 'b', arguments: { y: 'z' } }], 'python'),
    "[a(x=1), b(y='z')]",
  );
});

for (const syntax of ['json', 'python'] as CallSyntax[]) {
  test(`${syntax}: render -> parse round trip, one call and all calls`, () => {
    for (const c of VARIED) {
      const r = parseToolCalls(renderToolCalls([c], syntax), syntax);
      assert.deepEqual(r, { calls: [c], errors: [], hasCallSyntax: true, text: '' }, c.name);
    }
    const all = parseToolCalls(renderToolCalls(VARIED, syntax), syntax);
    assert.deepEqual(all.calls, VARIED);
    assert.deepEqual(all.errors, []);
  });
}

test('json: whitespace and newlines inside tags are accepted (Qwen style)', () => {
  const s = '<tool_call>\n{"name": "cd", "arguments": {"folder": "doc"}}\n</tool_call>\n<tool_call>\n{"name":"ls","arguments":{}}\n</tool_call>';
  const r = parseToolCalls(s, 'json');
  assert.deepEqual(r.calls, [
    { name: 'cd', arguments: { folder: 'doc' } },
    { name: 'ls', arguments: {} },
  ]);
  assert.deepEqual(r.errors, []);
  assert.equal(r.text, '');
});

test('json: text outside blocks is reported, trimmed', () => {
  const r = parseToolCalls('Let me look.\n<tool_call>{"name": "ls", "arguments": {}}</tool_call>\nDone.', 'json');
  assert.equal(r.calls.length, 1);
  assert.equal(r.text, 'Let me look.\nDone.');
  const plain = parseToolCalls('  The file was moved.  ', 'json');
  assert.deepEqual(plain, { calls: [], errors: [], hasCallSyntax: false, text: 'The file was moved.' });
});

test('json: malformed calls give errors, not throws', () => {
  const cases: [string, RegExp][] = [
    ['<tool_call>{"name": "cd", "arguments": {"folder": "doc"}</tool_call>', /^Error: could not parse tool call: /],
    ['<tool_call>{"arguments": {}}</tool_call>', /^Error: tool call is missing "name"$/],
    ['<tool_call>{"name": "cd"}</tool_call>', /missing "arguments"/],
    ['<tool_call>{"name": "cd", "arguments": "folder=doc"}</tool_call>', /must be a JSON object/],
    ['<tool_call>["cd"]</tool_call>', /must be a JSON object/],
    ['<tool_call></tool_call>', /empty tool call/],
    ['<tool_call>{"name": "cd", "arguments": {}}', /^Error: unbalanced <tool_call> tag/],
    ['{"name": "cd", "arguments": {}}</tool_call>', /^Error: unbalanced <\/tool_call> tag/],
    ["<tool_call>{'name': 'cd'}</tool_call>", /could not parse/],
  ];
  for (const [s, re] of cases) {
    const r = parseToolCalls(s, 'json');
    assert.equal(r.calls.length, 0, s);
    assert.equal(r.errors.length, 1, s);
    assert.match(r.errors[0], re, s);
    assert.equal(r.hasCallSyntax, true);
  }
});

test('json: one error per malformed attempt, good calls kept in order', () => {
  const s =
    '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{bad}</tool_call>' +
    '<tool_call>{"name": "b", "arguments": {"x": 1}}</tool_call><tool_call>{"name": "c"';
  const r = parseToolCalls(s, 'json');
  assert.deepEqual(r.calls.map((c) => c.name), ['a', 'b']);
  assert.equal(r.errors.length, 2);
  const unclosedThenGood = parseToolCalls('<tool_call>{"name": "a"<tool_call>{"name": "b", "arguments": {}}</tool_call>', 'json');
  assert.deepEqual(unclosedThenGood.calls.map((c) => c.name), ['b']);
  assert.equal(unclosedThenGood.errors.length, 1);
});

test('python: parser accepts python literals', () => {
  const r = parseToolCalls(
    ` [f(a=1, b='x', c=[1, 2], d=True, e=None, g=-3.5e2, h="dq \\"x\\"", i=(1, 2), j={'k': [False]}), g(),\n h(x = 'y',)] `,
    'python',
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.calls, [
    { name: 'f', arguments: { a: 1, b: 'x', c: [1, 2], d: true, e: null, g: -350, h: 'dq "x"', i: [1, 2], j: { k: [false] } } },
    { name: 'g', arguments: {} },
    { name: 'h', arguments: { x: 'y' } },
  ]);
  assert.equal(r.hasCallSyntax, true);
  assert.equal(r.text, '');
});

test('python: text after the list, non-call messages', () => {
  const r = parseToolCalls("[cd(folder='doc')] I moved there.", 'python');
  assert.equal(r.calls.length, 1);
  assert.equal(r.text, 'I moved there.');
  assert.deepEqual(parseToolCalls('Done.', 'python'), { calls: [], errors: [], hasCallSyntax: false, text: 'Done.' });
  assert.equal(parseToolCalls('[1, 2, 3]', 'python').hasCallSyntax, false);
  // JSON tags are not python calls.
  assert.equal(parseToolCalls('<tool_call>{"name": "ls", "arguments": {}}</tool_call>', 'python').hasCallSyntax, false);
});

test('python: malformed calls give errors, not throws', () => {
  const bad = [
    "[cd(folder='doc')",
    "[cd(folder='doc)]",
    "[cd('doc')]",
    '[cd(folder=doc)]',
    "[cd(folder='a', folder='b')]",
    '[cd(x=1 y=2)]',
    '[cd(x=[1, 2)]',
    '[cd(x=' + '['.repeat(5000) + ']',
    "[cd(x=1) ls(y=2)]",
    '[cd(x=--1)]',
    "[cd(x='\\x4')]",
  ];
  for (const s of bad) {
    const r = parseToolCalls(s, 'python');
    assert.equal(r.hasCallSyntax, true, s);
    assert.equal(r.errors.length, 1, s);
    assert.match(r.errors[0], /^Error: could not parse tool call: /, s);
  }
  // Calls before the error are kept.
  const partial = parseToolCalls("[a(x=1), b(y=", 'python');
  assert.deepEqual(partial.calls, [{ name: 'a', arguments: { x: 1 } }]);
  assert.equal(partial.errors.length, 1);
});

test('json: a flood of broken blocks is reported 32 times, then once as too many', () => {
  const good = '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>\n';
  const r = parseToolCalls('<tool_call>x'.repeat(1000) + good, 'json');
  assert.equal(r.errors.length, 33);
  assert.ok(r.errors.slice(0, 32).every((e) => /unbalanced <tool_call>/.test(e)));
  assert.match(r.errors[32], /^Error: too many malformed tool calls/);
  assert.equal(r.calls.length, 0); // the rest was not read
  assert.ok(r.text.length > 0);
  // below the cap every block is read as before
  const few = parseToolCalls('<tool_call>x'.repeat(3) + good, 'json');
  assert.equal(few.errors.length, 3);
  assert.deepEqual(few.calls, [{ name: 'ls', arguments: {} }]);
});

test('python: long string literals and escapes parse exactly', () => {
  const long = 'a'.repeat(100000);
  assert.deepEqual(parseToolCalls(`[f(x='${long}', y='a\\'b\\\\c\\n\\x41')]`, 'python').calls,
    [{ name: 'f', arguments: { x: long, y: "a'b\\c\nA" } }]);
});
