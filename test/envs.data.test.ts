import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { renderConversation } from '../lib/format/chat';
import { buildDataset, serializeDataset, loadTasks, loadCorpus, TASK_SPLITS, writeDataset } from '../lib/envs/data';
import { taskContentKey } from '../lib/envs/generator';
import { teacherEpisode, teacherTrajectory } from '../lib/envs/teacher';
import { evaluatePolicy, teacherPolicy } from '../lib/envs/evaluate';
import { OOD_FAMILIES, TRAIN_FAMILIES } from '../lib/envs/families/index';

const d = buildDataset();

test('deterministic: building twice gives identical files; committed data/ is up to date', () => {
  const small = { tasksPerCategory: 20, contentOodTotal: 30, corpus: { n: 300 } };
  const a = serializeDataset(buildDataset(11, small));
  const b = serializeDataset(buildDataset(11, small));
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort());
  for (const k of Object.keys(a)) assert.ok(a[k] === b[k], `${k} differs`);
  for (const k of Object.keys(a)) assert.ok(!a[k].includes('\r') && a[k].endsWith('\n'), k);
  const full = serializeDataset(d);
  for (const k of Object.keys(full)) {
    const f = path.join('data', k);
    if (fs.existsSync(f)) assert.ok(fs.readFileSync(f, 'utf8') === full[k], `${f} is stale: run \`npx toolrl data\``);
  }
});

test('split sizes, unique ids, test disjoint from train, families where they belong', () => {
  assert.equal(d.splits.train.length, 300);
  assert.equal(d.splits.test.length, 400);
  assert.equal(d.splits.format_ood.length, 300);
  assert.equal(d.splits.content_ood.length, 100);
  const ids = TASK_SPLITS.flatMap((s) => d.splits[s].map((t) => t.id));
  assert.equal(new Set(ids).size, ids.length);
  const trainKeys = new Set(d.splits.train.map(taskContentKey));
  for (const t of d.splits.test) assert.ok(!trainKeys.has(taskContentKey(t)), t.id);
  for (const s of ['train', 'test'] as const) for (const t of d.splits[s]) assert.ok(TRAIN_FAMILIES.includes(t.family));
  for (const t of d.splits.content_ood) assert.ok(OOD_FAMILIES.includes(t.family));
  for (const t of d.splits.format_ood) assert.equal(t.syntax, 'python');
});

test('teacher passes the checker on every task of every split, both syntaxes', () => {
  for (const s of TASK_SPLITS) {
    for (const t of d.splits[s]) {
      for (const syntax of ['json', 'python'] as const) {
        const r = teacherEpisode(t.syntax ? t : { ...t, syntax }).result();
        assert.ok(r.pass, `${t.id} (${syntax}): ${r.reason}`);
      }
    }
  }
});

test('evaluatePolicy(teacher) = 1.0 in every category of every split', async () => {
  for (const s of ['test', 'format_ood', 'content_ood'] as const) {
    const r = await evaluatePolicy(d.splits[s], teacherPolicy(), { syntax: s === 'format_ood' ? 'python' : 'json' });
    for (const [cat, v] of Object.entries(r.perCategory)) assert.equal(v.accuracy, 1, `${s}/${cat}`);
    assert.equal(r.mean, 1);
    assert.equal(r.states.pollution + r.states.fullCollapse, 0);
  }
});

test('vocabulary: every test / OOD text encodes without <unk>; unseen pieces only capitalised seen words or of the held-out family; sizes within budget', () => {
  const unk = d.tokenizer.id('<unk>');
  for (const s of ['test', 'format_ood', 'content_ood'] as const) {
    for (const t of d.splits[s]) assert.ok(!d.tokenizer.encode(renderConversation(teacherTrajectory(t))).includes(unk), t.id);
  }
  // A sentence-initial capital of a word that training text has in lower case ("Turn" vs "turn") can be
  // missing from train + corpus by chance; any other held-out-only piece would be a new word.
  // The held-out family (content-OOD) may bring words of its own; test and format-OOD may not.
  const seen = new Set(d.tokenizer.pieces);
  const oodText = d.splits.content_ood.map((t) => renderConversation(teacherTrajectory(t))).join('\n');
  for (const p of d.stats.unseenPieces.pieces) {
    const capital = p !== p.toLowerCase() && seen.has(p.toLowerCase());
    assert.ok(capital || oodText.includes(p), `piece "${p}" occurs only in test/format-OOD text`);
  }
  assert.ok(d.stats.vocabSize < 2000);
  for (const s of TASK_SPLITS) {
    for (const [cat, v] of Object.entries(d.stats.teacherTokens[s])) {
      assert.ok(v.max <= (cat === 'long_context' || cat === 'all' ? 1000 : s === 'content_ood' ? 600 : 512), `${s}/${cat} max ${v.max}`);
    }
  }
});

test('writeDataset + loadTasks / loadCorpus round trip; clear errors', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'envs-data-'));
  try {
    const stats = writeDataset(dir);
    assert.deepEqual(stats, d.stats);
    assert.deepEqual(loadTasks('test', dir), JSON.parse(JSON.stringify(d.splits.test)));
    assert.equal(loadCorpus(dir).length, d.corpus.length);
    assert.throws(() => loadTasks('nope', dir), /unknown split "nope"/);
    assert.throws(() => loadTasks('train', path.join(dir, 'missing')), /train\.jsonl not found/);
    fs.writeFileSync(path.join(dir, 'tasks', 'train.jsonl'), '{"id": "x"}\n');
    assert.throws(() => loadTasks('train', dir), /train\.jsonl:1: task field "category"/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
