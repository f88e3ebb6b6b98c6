import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'fs';
import { join } from 'path';
import { tmpdir } from 'os';
import {
  Tokenizer,
  loadTokenizer,
  pretokenize,
  SPECIAL_TOKENS,
  CONTROL_TOKENS,
  JSON_OPEN,
  PAD,
  UNK,
  TOOL_CALL_OPEN,
  IM_END,
  renderToolCall,
} from '../lib/format';
import { fixtureTokenizer, rendered, CALLS } from './format.fixtures';

const tok = fixtureTokenizer();

test('pad is id 0, unk id 1, then the 8 tags', () => {
  assert.equal(tok.id(PAD), 0);
  assert.equal(tok.id(UNK), 1);
  assert.equal(SPECIAL_TOKENS.length, 8);
  CONTROL_TOKENS.forEach((t, i) => assert.equal(tok.id(t), i));
});

test('each tag and {" is exactly one token, also inside text', () => {
  for (const t of [...SPECIAL_TOKENS, JSON_OPEN]) {
    assert.deepEqual(tok.encode(t), [tok.id(t)], t);
    const ids = tok.encode(`abc${t}def`);
    assert.ok(ids.includes(tok.id(t)), t);
  }
  // The probe position: right after `<tool_call>\n` comes {" as one token.
  const ids = tok.encode(renderToolCall(CALLS[0], 'json'));
  assert.equal(ids[0], tok.id(TOOL_CALL_OPEN));
  assert.equal(ids[1], tok.id('\n'));
  assert.equal(ids[2], tok.id(JSON_OPEN));
});

test('a JSON call is about a dozen tokens', () => {
  const pieces = pretokenize('{"name": "cd", "arguments": {"folder": "doc"}}');
  assert.deepEqual(pieces, ['{"', 'name', '": "', 'cd', '", "', 'arguments', '": ', '{"', 'folder', '": "', 'doc', '"}}']);
});

test('digits are one token each', () => {
  assert.deepEqual(pretokenize('12345'), ['1', '2', '3', '4', '5']);
  assert.deepEqual(pretokenize('USR002'), ['USR', '0', '0', '2']);
  assert.deepEqual(tok.encode('907'), ['9', '0', '7'].map((d) => tok.id(d)));
});

test('words merge one leading space; identifiers are sub-word pieces shared across names', () => {
  assert.deepEqual(pretokenize('send_message'), ['send', '_message']);
  assert.deepEqual(pretokenize('set_reminder_time'), ['set', '_reminder', '_time']);
  assert.deepEqual(pretokenize(' file_name_'), [' file', '_name', '_']);
  assert.deepEqual(pretokenize('_x _ 9_'), ['_x', ' ', '_', ' ', '9', '_']);
  // the held-out family's names are made of pieces the training world and corpus use
  const world = Tokenizer.fromTexts(['snooze_reminder', 'get_local_time', 'set_alarm']);
  assert.deepEqual(world.unknownPieces('set_reminder_time'), []);
  assert.deepEqual(pretokenize('a  b'), ['a', ' ', ' b']);
  assert.deepEqual(pretokenize('Done.\n'), ['Done', '.', '\n']);
  assert.notEqual(tok.id(' cd'), tok.id('cd'));
});

test('pretokenize is lossless', () => {
  for (const s of [rendered('json'), rendered('python'), 'héllo 🙂 wörld\t<|im', '"}}}"": ""']) {
    assert.equal(pretokenize(s).join(''), s);
  }
});

test('round trips on rendered conversations (json, python, hinted)', () => {
  for (const s of [rendered('json'), rendered('python'), rendered('json', 'first cd, then mv')]) {
    assert.deepEqual(tok.unknownPieces(s), []);
    const ids = tok.encode(s);
    assert.ok(!ids.includes(tok.id(UNK)));
    assert.equal(tok.decode(ids), s);
  }
});

test('unknown words encode to <unk>; a known bare word covers its spaced form', () => {
  const ids = tok.encode('zebra');
  assert.deepEqual(ids, [tok.id(UNK)]);
  assert.deepEqual(tok.unknownPieces('cd zebra 🙂 cd'), [' zebra', '🙂']);
  assert.throws(() => tok.id('zebra'), /unknown piece/);
  // ' Move' (or '_Move') may be absent but 'Move' known: falls back to ' ' (or '_') + 'Move'.
  const t2 = Tokenizer.fromTexts(['Move']);
  assert.deepEqual(t2.encode(' Move'), [t2.id(' '), t2.id('Move')]);
  assert.deepEqual(t2.encode('zz_Move'), [t2.id(UNK), t2.id('_'), t2.id('Move')]);
  assert.equal(t2.decode(t2.encode(' Move')), ' Move');
});

test('decode skips <pad>; piece() rejects bad ids', () => {
  assert.equal(tok.decode([0, tok.id('cd'), 0]), 'cd');
  assert.throws(() => tok.piece(tok.size), /out of range/);
  assert.throws(() => tok.piece(-1), /out of range/);
});

test('fingerprint is stable and changes when pieces change', () => {
  const again = fixtureTokenizer();
  assert.equal(again.fingerprint, tok.fingerprint);
  assert.match(tok.fingerprint, /^[0-9a-f]{16}$/);
  const other = Tokenizer.fromTexts([rendered('json'), 'zebra']);
  assert.notEqual(other.fingerprint, tok.fingerprint);
  // Same corpus in another order: same vocabulary (words are sorted).
  assert.equal(Tokenizer.fromTexts(['x y', 'z']).fingerprint, Tokenizer.fromTexts(['z', 'x y']).fingerprint);
});

test('minCount drops rare words', () => {
  const t = Tokenizer.fromTexts(['apple', 'apple pear'], { minCount: 2 });
  assert.ok(t.has('apple'));
  assert.ok(!t.has(' pear'));
});

test('toJSON/fromJSON round trip and loadTokenizer', () => {
  const json = JSON.parse(JSON.stringify(tok.toJSON()));
  assert.equal(json.version, 1);
  const back = Tokenizer.fromJSON(json);
  assert.equal(back.fingerprint, tok.fingerprint);
  assert.equal(back.size, tok.size);
  assert.deepEqual(back.encode(rendered('json')), tok.encode(rendered('json')));
  assert.throws(() => Tokenizer.fromJSON({ version: 2, pieces: [] }), /version/);
  assert.throws(() => new Tokenizer(['a', 'b']), /control token/);
  assert.throws(() => new Tokenizer([...tok.pieces, 'cd']), /duplicate/);

  const dir = mkdtempSync(join(tmpdir(), 'toolrl-vocab-'));
  const file = join(dir, 'vocab.json');
  writeFileSync(file, JSON.stringify(tok.toJSON()));
  assert.equal(loadTokenizer(file).fingerprint, tok.fingerprint);
  assert.throws(() => loadTokenizer(join(dir, 'missing.json')), /missing\.json.*npx toolrl data/);
});

test('tokens of the collapse probe are distinct ids', () => {
  const ids = new Set([tok.id(JSON_OPEN), tok.id(IM_END), tok.id(TOOL_CALL_OPEN)]);
  assert.equal(ids.size, 3);
});
