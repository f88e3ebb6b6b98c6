/**
 * Fuzz: model output is arbitrary text, and one exception inside a rollout would kill a training run.
 * >= 10,000 seeded random and mutated messages go through the tokenizer, both parsers and the classifier;
 * nothing may throw, and a few invariants must hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../lib/prng';
import {
  parseToolCalls,
  classifyMessage,
  stripTrailingImEnd,
  renderToolCalls,
  SPECIAL_TOKENS,
  STRUCTURAL_STATES,
  CallSyntax,
  ToolCall,
} from '../lib/format';
import { CALLS, fixtureTokenizer, rendered } from './format.fixtures';

const tok = fixtureTokenizer();
const INSERTS = [...SPECIAL_TOKENS, '"', "'", '{', '}', '[', ']', '(', ')', '{"', '": "', ',', '=', ':', '\\', '\n', ' ', 'name', 'arguments', '"name": '];

function randomChar(rng: Rng): string {
  const r = rng.next();
  if (r < 0.6) return String.fromCharCode(rng.int(32, 126));
  if (r < 0.7) return rng.pick(['\n', '\t', '\r', '\0']);
  if (r < 0.8) return String.fromCharCode(rng.int(0xd800, 0xdfff)); // lone surrogates
  if (r < 0.9) return String.fromCodePoint(rng.int(0x80, 0x10ffff));
  return rng.pick(SPECIAL_TOKENS);
}

function garbage(rng: Rng, len: number): string {
  let s = '';
  while (s.length < len) s += randomChar(rng);
  return s;
}

function validMessage(rng: Rng, syntax: CallSyntax): string {
  const k = rng.int(1, 3);
  const calls: ToolCall[] = [];
  for (let i = 0; i < k; i++) calls.push(rng.pick(CALLS));
  let s = renderToolCalls(calls, syntax);
  if (rng.chance(0.2)) s = rng.pick(['Sure. ', 'Let me check.\n', '\n']) + s;
  if (rng.chance(0.2)) s += rng.pick(['<|im_end|>', '\n', ' Done.']);
  return s;
}

function mutate(rng: Rng, s: string): string {
  const steps = rng.int(1, 4);
  for (let k = 0; k < steps; k++) {
    const i = rng.int(0, s.length);
    switch (rng.int(0, 5)) {
      case 0: // delete a range
        s = s.slice(0, i) + s.slice(Math.min(s.length, i + rng.int(1, 8)));
        break;
      case 1: // insert a tag / quote / brace ...
        s = s.slice(0, i) + rng.pick(INSERTS) + s.slice(i);
        break;
      case 2: // truncate
        s = s.slice(0, i);
        break;
      case 3: {
        // duplicate a tag
        const tag = rng.pick(SPECIAL_TOKENS);
        s = s.slice(0, i) + tag.repeat(rng.int(2, 5)) + s.slice(i);
        break;
      }
      case 4: // random chars
        s = s.slice(0, i) + garbage(rng, rng.int(1, 5)) + s.slice(i);
        break;
      default: // deep nesting
        s = s.slice(0, i) + rng.pick(['[', '{"a": ', '(', "f(x="]).repeat(rng.int(10, 300)) + s.slice(i);
    }
  }
  return s;
}

function message(rng: Rng, i: number): string {
  if (i % 200 === 0) return garbage(rng, 10000);
  const r = rng.next();
  if (r < 0.55) return mutate(rng, validMessage(rng, rng.chance(0.5) ? 'json' : 'python'));
  if (r < 0.7) return validMessage(rng, rng.chance(0.5) ? 'json' : 'python');
  if (r < 0.85) return garbage(rng, rng.int(0, 80));
  if (r < 0.95) return mutate(rng, rendered(rng.chance(0.5) ? 'json' : 'python').slice(rng.int(0, 500), rng.int(500, 2000)));
  return rng.pick(['<tool_call>', '<|im_end|>', '']).repeat(rng.int(0, 50)) + mutate(rng, '<tool_call>');
}

test('10,000+ fuzzed messages: no exceptions, invariants hold', () => {
  const rng = new Rng(20261130);
  const N = 10000;
  const counts: Record<string, number> = {};
  for (let i = 0; i < N; i++) {
    const s = message(rng, i);
    const ids = tok.encode(s);
    const back = tok.decode(ids);
    if (tok.unknownPieces(s).length === 0) assert.equal(back, s);
    assert.equal(tok.pretokenize(s).join(''), s);
    for (const syntax of ['json', 'python'] as CallSyntax[]) {
      const p = parseToolCalls(s, syntax);
      assert.ok(Array.isArray(p.calls) && Array.isArray(p.errors) && typeof p.text === 'string');
      for (const c of p.calls) assert.ok(typeof c.name === 'string' && typeof c.arguments === 'object' && c.arguments !== null);
      for (const e of p.errors) assert.match(e, /^Error: /);
      const st = classifyMessage(s, syntax);
      assert.ok(STRUCTURAL_STATES.includes(st), st);
      if (st === 'healthyCall') assert.ok(parseToolCalls(stripTrailingImEnd(s), syntax).calls.length > 0);
      counts[`${syntax}:${st}`] = (counts[`${syntax}:${st}`] ?? 0) + 1;
    }
  }
  // The generator must reach every state in json mode (otherwise the fuzz is not exercising the classifier).
  for (const st of STRUCTURAL_STATES) assert.ok((counts[`json:${st}`] ?? 0) > 0, `json:${st} never reached`);
});

test('pathological inputs', () => {
  const cases = [
    '[' + 'f(x='.repeat(20000),
    '<tool_call>' + '{"a": '.repeat(20000) + '</tool_call>',
    '<tool_call>' + '['.repeat(100000) + ']'.repeat(100000) + '</tool_call>',
    '</tool_call>'.repeat(5000),
    '<tool_call>'.repeat(5000),
    ' '.repeat(20000) + '<tool_call>' + ' '.repeat(20000),
    "[f(x='" + '\\'.repeat(10001) + "')]",
  ];
  for (const s of cases) {
    tok.decode(tok.encode(s));
    for (const syntax of ['json', 'python'] as CallSyntax[]) {
      parseToolCalls(s, syntax);
      classifyMessage(s, syntax);
    }
  }
});
