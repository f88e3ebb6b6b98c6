/**
 * Shared fixtures of the format tests: six tools in the style of the toy world, a few calls, and a realistic
 * rendered conversation in each call syntax. Not a test file itself (no `.test.` in the name).
 */
import {
  Message,
  ToolCall,
  ToolSpec,
  CallSyntax,
  Tokenizer,
  renderSystemPrompt,
  renderToolCalls,
  renderToolResponses,
  renderToolsAdded,
  renderConversation,
} from '../lib/format';

export const TOOLS: ToolSpec[] = [
  {
    name: 'cd',
    description: 'change the current directory',
    params: [{ name: 'folder', type: 'string', required: true }],
  },
  { name: 'ls', description: 'list the files in the current directory', params: [{ name: 'a', type: 'boolean', required: false }] },
  {
    name: 'mv',
    description: 'move a file to a folder',
    params: [
      { name: 'source', type: 'string', required: true },
      { name: 'destination', type: 'string', required: true },
    ],
  },
  {
    name: 'send_message',
    description: 'send a message to a user',
    params: [
      { name: 'receiver_id', type: 'string', required: true },
      { name: 'message', type: 'string', required: true },
    ],
  },
  {
    name: 'tail',
    description: 'show the last lines of a file',
    params: [
      { name: 'file_name', type: 'string', required: true },
      { name: 'lines', type: 'integer', required: false },
    ],
  },
  {
    name: 'mean',
    description: 'compute the mean of a list of numbers',
    params: [{ name: 'numbers', type: 'array', required: true }],
  },
];

export const CALLS: ToolCall[] = [
  { name: 'cd', arguments: { folder: 'document' } },
  { name: 'mv', arguments: { source: 'final_report.pdf', destination: 'temp' } },
  { name: 'send_message', arguments: { receiver_id: 'USR002', message: "it's done: 3 files moved" } },
  { name: 'tail', arguments: { file_name: 'log.txt', lines: 20 } },
  { name: 'mean', arguments: { numbers: [1.5, -2, 30, 0.25] } },
  { name: 'ls', arguments: { a: true } },
  { name: 'ls', arguments: {} },
];

/** A multi-turn conversation with calls, observations, a mid-episode tools block and a hinted system prompt. */
export function conversation(syntax: CallSyntax, hint?: string): Message[] {
  return [
    { role: 'system', content: renderSystemPrompt(TOOLS.slice(0, 5), { syntax, hint }) },
    { role: 'user', content: 'Move final_report.pdf from document into temp, then tell USR002.' },
    { role: 'assistant', content: renderToolCalls(CALLS.slice(0, 2), syntax) },
    { role: 'user', content: renderToolResponses(['{"current_working_directory": "document"}', 'None']) },
    { role: 'assistant', content: renderToolCalls([CALLS[2]], syntax) },
    { role: 'user', content: renderToolResponses(['{"sent_status": true, "message_id": 12345}']) },
    { role: 'assistant', content: 'Done. The report is in temp and USR002 was told.' },
    { role: 'user', content: renderToolsAdded([TOOLS[5]]) + 'What is the mean of 1.5, -2, 30 and 0.25?' },
    { role: 'assistant', content: renderToolCalls([CALLS[4], CALLS[3]], syntax) },
    { role: 'user', content: renderToolResponses(['{"result": 7.4375}', 'Error: file not found']) },
    { role: 'assistant', content: 'The mean is 7.4375.' },
  ];
}

export function rendered(syntax: CallSyntax, hint?: string): string {
  return renderConversation(conversation(syntax, hint), { addGenerationPrompt: true });
}

/** A tokenizer whose corpus is the rendered fixtures (both syntaxes). */
export function fixtureTokenizer(): Tokenizer {
  return Tokenizer.fromTexts([rendered('json', 'first cd, then mv'), rendered('python')]);
}
