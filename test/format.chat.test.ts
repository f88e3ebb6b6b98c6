import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  renderMessage,
  renderConversation,
  renderToolSignature,
  renderSystemPrompt,
  renderToolsAdded,
  renderToolResponses,
  ASSISTANT_PREFIX,
  parseToolCalls,
} from '../lib/format';
import { TOOLS, conversation, fixtureTokenizer } from './format.fixtures';

test('renderMessage is ChatML', () => {
  assert.equal(renderMessage({ role: 'user', content: 'hi' }), '<|im_start|>user\nhi<|im_end|>\n');
});

test('renderConversation concatenates messages and can open the assistant turn', () => {
  const msgs = conversation('json').slice(0, 2);
  const s = renderConversation(msgs);
  assert.equal(s, renderMessage(msgs[0]) + renderMessage(msgs[1]));
  assert.equal(renderConversation(msgs, { addGenerationPrompt: true }), s + ASSISTANT_PREFIX);
  assert.equal(ASSISTANT_PREFIX, '<|im_start|>assistant\n');
});

test('renderToolSignature is one compact JSON line', () => {
  const sig = renderToolSignature({
    name: 'cd',
    description: 'change the current directory',
    params: [
      { name: 'folder', type: 'string', required: true },
      { name: 'limit', type: 'integer', required: false },
    ],
  });
  assert.equal(
    sig,
    '{"name": "cd", "description": "change the current directory", "parameters": {"folder": "string", "limit": "integer"}, "optional": ["limit"]}',
  );
  assert.ok(!sig.includes('\n'));
  assert.deepEqual(JSON.parse(sig).optional, ['limit']);
  // all parameters required: no "optional" key
  assert.equal(renderToolSignature({ name: 'cd', description: 'go', params: [{ name: 'folder', type: 'string', required: true }] }),
    '{"name": "cd", "description": "go", "parameters": {"folder": "string"}}');
});

test('system prompt: preamble, tools block, call format, hint last', () => {
  const s = renderSystemPrompt(TOOLS);
  const lines = s.split('\n');
  assert.ok(lines[0].split(/\s+/).length <= 25, 'short preamble');
  assert.equal(lines[1], '<tools>');
  for (let i = 0; i < TOOLS.length; i++) assert.equal(lines[2 + i], renderToolSignature(TOOLS[i]));
  assert.equal(lines[2 + TOOLS.length], '</tools>');
  // the format sentence shows the paper's layout: tag, newline, JSON, newline, closing tag
  assert.match(lines.slice(3 + TOOLS.length).join('\n'),
    /<tool_call>\n\{"name": <function-name>, "arguments": <args-json-object>\}\n<\/tool_call>$/);
  assert.equal(lines.length, 6 + TOOLS.length);

  const py = renderSystemPrompt(TOOLS, { syntax: 'python' });
  assert.match(py, /python list \[func_name\(arg=value\), \.\.\.\]/);
  assert.ok(!py.includes('<tool_call>'));

  const hinted = renderSystemPrompt(TOOLS, { hint: 'call cd first' });
  assert.ok(hinted.endsWith('\nHint: call cd first'));
  assert.equal(hinted, s + '\nHint: call cd first');
});

test('the system prompt does not parse as a tool call attempt with calls', () => {
  // The format sentence shows the tags with placeholders: not a well-formed call.
  const r = parseToolCalls(renderSystemPrompt(TOOLS), 'json');
  assert.equal(r.calls.length, 0);
});

test('tools added mid-episode and tool responses', () => {
  assert.equal(renderToolsAdded([TOOLS[0]]), `New functions are available.\n<tools>\n${renderToolSignature(TOOLS[0])}\n</tools>\n`);
  assert.equal(
    renderToolResponses(['a', 'Error: no such file']),
    '<tool_response>\na\n</tool_response>\n<tool_response>\nError: no such file\n</tool_response>',
  );
  assert.equal(renderToolResponses([]), '');
});

test('token budget: a 6-tool system prompt stays small', () => {
  const tok = fixtureTokenizer();
  const n = tok.encode(renderMessage({ role: 'system', content: renderSystemPrompt(TOOLS) })).length;
  assert.ok(n < 400, `system prompt is ${n} tokens`);
});
