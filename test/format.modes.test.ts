// Message modes (lib/format/states.ts messageMode) and the repetition measure behind the loop mode: each rule on
// hand-made messages, a loop never healthy, and the two readers that keep the committed runs' rule (the PRS judge's
// formatFault, the guard's controlCollapse) checked against the states the committed runs recorded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MessageMode, classifyMessage, controlCollapse, formatFault, messageMode, modeShares, stateOfMode } from '../lib/format';
import { LOOP_SHARE, isRepetitionLoop, repetitionShare } from '../lib/format/repetition';

const CD = '{"name": "cd", "arguments": {"folder": "document"}}';

function expectMode(mode: MessageMode, cases: string[], syntax: 'json' | 'python' = 'json') {
  for (const c of cases) assert.equal(messageMode(c, syntax), mode, `${syntax}: ${JSON.stringify(c)}`);
}

test('repetitionShare: a piece written 3+ times back to back, tags as one character each', () => {
  assert.equal(repetitionShare(''), 0);
  assert.equal(repetitionShare('The required parameters are missing.'), 0);
  assert.equal(repetitionShare(' to'.repeat(40)), 1);
  assert.equal(repetitionShare('_message'.repeat(12)), 1);
  assert.equal(repetitionShare('abab'), 0, 'two copies are not a loop');
  assert.ok(Math.abs(repetitionShare('xyzxyzxyzABCDEFGHI') - 0.5) < 1e-9);
  assert.equal(repetitionShare(`user${' '.repeat(40)}\nHi.`), 0, 'a run of spaces is layout, not a loop');
  assert.equal(repetitionShare('</tool_call>\n'.repeat(5)), 1, 'tag + newline is a period of 2');
  // a piece longer than 24 characters is not counted
  assert.equal(repetitionShare('abcdefghijklmnopqrstuvwxy'.repeat(3)), 0);
  assert.ok(repetitionShare('abcdefghijklmnopqrstuvwx'.repeat(3)) === 1);
  // linear: a million characters take well under a second
  const t0 = Date.now();
  assert.equal(repetitionShare('a'.repeat(1_000_000)), 1);
  assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
});

test('isRepetitionLoop: long enough and at least half in repeats', () => {
  assert.equal(isRepetitionLoop('aaaaaaaa'), false, 'shorter than 12 characters');
  assert.equal(isRepetitionLoop(' to to to to to to'), true);
  assert.equal(isRepetitionLoop('(symbol(symbol(symbol(symbolNVDA'), true);
  assert.equal(isRepetitionLoop('Here is the result. Here is the result.'), false, 'two copies of a sentence');
  assert.ok(LOOP_SHARE === 0.5);
});

test('modes: one rule each, in order', () => {
  expectMode('voidTurn', ['', '  \n', '<|im_end|>', '\n<|im_end|>']);
  expectMode('emptyCall', ['<tool_call>', '<tool_call>\n', '<tool_call>\n<|im_end|>', ' <tool_call> ']);
  expectMode('tags', ['</tool_call>\n</tool_call>\n', '<tool_call></tool_call>', '<tool_call>\n<tool_call>', 'user\nassistant',
    '</tool_call>\n</tool_call>\n</tool_call>\nDone.', 'I will check.<tool_call>', `<tool_call>${CD}</tool_call>\n<tool_call>`]);
  expectMode('healthyCall', [`<tool_call>\n${CD}\n</tool_call>\n`, `<tool_call>${CD}</tool_call><tool_call>${CD}</tool_call>`]);
  expectMode('loop', [' to'.repeat(30), '_message'.repeat(10), '{"' + '_message'.repeat(10), 'yen'.repeat(20),
    '<tool_call>\n{"name": "fill_fuel", "arguments": {"liters": {"liters": {"liters": {"liters": {"liters": 26}}']);
  expectMode('malformedCall', ['<tool_call>\n{"name": "cd", "arguments": {"folder": "doc"}\n</tool_call>',
    '<tool_call>\n{"name": "cd", "arguments": {"folder":', '<tool_call>{"name": "cd"}</tool_call>']);
  expectMode('untaggedCall', [CD, ' {"name": "cd"', '{"order_id": 1}}']);
  expectMode('pollution', [`Sure! ${CD}`, `<tool_call>${CD}</tool_call> Done.`, 'Done.csv"}}\nDone.',
    'The required parameters15}}\nDone.', "I'll run cd(folder='document') now."]);
  expectMode('reply', ['Done.', 'The required function is not available.', 'Here is the result.', 'Eve (user_name) did it.']);
  expectMode('healthyCall', ["[cd(folder='document'), ls()]"], 'python');
  expectMode('pollution', [`<tool_call>${CD}</tool_call>`], 'python');
});

test('states follow from modes: a repetition loop is never a healthy response', () => {
  for (const loop of [' to'.repeat(30), 'yen'.repeat(20), '(symbol'.repeat(8), '_message'.repeat(10)]) {
    assert.equal(messageMode(loop), 'loop');
    assert.equal(classifyMessage(loop), 'fullCollapse', loop);
  }
  assert.equal(stateOfMode('reply'), 'healthyResponse');
  assert.equal(stateOfMode('malformedCall'), 'pollution');
  assert.equal(stateOfMode('untaggedCall'), 'pollution');
  for (const m of ['voidTurn', 'emptyCall', 'tags', 'loop'] as MessageMode[]) assert.equal(stateOfMode(m), 'fullCollapse');
  assert.deepEqual(Object.values(modeShares(['loop', 'loop', 'reply', 'emptyCall'])).reduce((a, b) => a + b, 0), 1);
  assert.equal(modeShares(['loop', 'loop', 'reply', 'emptyCall']).loop, 0.5);
  assert.equal(controlCollapse('emptyCall') && controlCollapse('voidTurn') && controlCollapse('tags') && !controlCollapse('loop'), true);
});

/** Every committed rollout sample, read per file: (message, the state recorded when the run was made). */
function committedMessages(limitFiles: number): { m: string; state: string }[][] {
  const out: { m: string; state: string }[][] = [];
  const files: string[] = [];
  for (const store of ['full', 'full-instruct']) {
    const root = path.join('data', 'results', store);
    if (!fs.existsSync(root)) continue;
    for (const cfg of fs.readdirSync(root).sort()) {
      for (const seed of ['seed-1']) {
        const f = path.join(root, cfg, seed, 'rollouts-sample.jsonl');
        if (fs.existsSync(f)) files.push(f);
      }
    }
  }
  for (const f of files.slice(0, limitFiles)) {
    const run: { m: string; state: string }[] = [];
    for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const r = JSON.parse(line) as { messages: string[]; states: string[] };
      r.messages.forEach((m, i) => run.push({ m, state: r.states[i] }));
    }
    out.push(run);
  }
  return out;
}

test('the judge and the guard keep the rule the committed runs were made with (their recorded states)', () => {
  const runs = committedMessages(80);
  assert.ok(runs.flat().length > 10000, `${runs.flat().length} committed messages`);
  let moved = 0;
  let oldRuleRuns = 0;
  for (const run of runs) {
    // a run made since the message modes recorded their states (every state is the current mode's); the others were
    // made with the earlier rule, which the PRS judge (formatFault) keeps
    const current = run.every(({ m, state }) => stateOfMode(messageMode(m)) === state);
    if (current) continue;
    oldRuleRuns++;
    // a run of the earlier rule must match it in every message, or the run follows neither rule
    for (const { m, state } of run) {
      const mode = messageMode(m);
      // the recorded full collapse is exactly the control-tag collapse the guard counts
      assert.equal(controlCollapse(mode), state === 'fullCollapse', `${state} vs ${mode}: ${JSON.stringify(m)}`);
      // the recorded "pollution or full collapse" is exactly the judge's format fault
      assert.equal(formatFault(m), state === 'pollution' || state === 'fullCollapse', `${state}: ${JSON.stringify(m)}`);
      assert.equal(mode === 'healthyCall', state === 'healthyCall', `${state} vs ${mode}: ${JSON.stringify(m)}`);
      if (stateOfMode(mode) !== state) moved++;
    }
  }
  assert.ok(oldRuleRuns > 0, 'no committed run made with the earlier rule');
  // what the current rule changes: loops and call fragments leave 'healthy response' (measured, not zero)
  assert.ok(moved > 0);
});
