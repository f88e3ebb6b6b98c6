/**
 * The committed dataset (docs/design.md B, "World": splits are generated deterministically from a seed
 * and committed under data/): task splits, the general corpus, the vocabulary and summary statistics.
 *
 * - train: 100 tasks each of base / miss_param / miss_func (the paper's 300 training tasks, A.1).
 * - test: 100 per category including long_context, deduplicated against train by content.
 * - format_ood: the test tasks minus long_context in python syntax; content_ood: the held-out family.
 * - corpus: the ToolACE stand-in (lib/envs/corpus.ts).
 * - vocab: built from every text any split can show the model (both syntaxes, hints, error texts).
 * Output is byte-for-byte deterministic: fixed key order, '\n' line endings, no timestamps.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { CallSyntax, Message } from '../format/types';
import { renderConversation } from '../format/chat';
import { Tokenizer } from '../format/tokenizer';
import { CorpusConversation, CorpusConfig, generateCorpus } from './corpus';
import { generateTasks, taskContentKey } from './generator';
import { contentOodTasks, formatOodTasks } from './ood';
import { teacherTrajectory } from './teacher';
import { makeHint } from './hints';
import { Episode } from './episode';
import { errorProbeTexts } from './vocab';
import { JUDGE_TEXTS } from './judge';
import { readJsonl } from '../util/jsonl';
import { writing } from '../util/errors';
import { CATEGORIES, Category, REFUSAL_FUNC, REFUSAL_PARAM, TRAIN_CATEGORIES, Task, TURN_DONE } from './task';

export type TaskSplit = 'train' | 'test' | 'format_ood' | 'content_ood';
export const TASK_SPLITS: readonly TaskSplit[] = ['train', 'test', 'format_ood', 'content_ood'];

export const DEFAULT_DATA_SEED = 20260606;

export interface DatasetOptions {
  tasksPerCategory?: number;
  contentOodTotal?: number;
  corpus?: Partial<CorpusConfig>;
}

export interface Dataset {
  seed: number;
  splits: Record<TaskSplit, Task[]>;
  corpus: CorpusConversation[];
  tokenizer: Tokenizer;
  stats: DatasetStats;
}

export interface LengthStats {
  n: number;
  mean: number;
  max: number;
}

export interface DatasetStats {
  seed: number;
  counts: Record<string, Record<string, number>>;
  /** Teacher conversation length in tokens, per split and category. */
  teacherTokens: Record<string, Record<string, LengthStats>>;
  corpus: { n: number; kinds: Record<string, number>; tokens: LengthStats };
  vocabSize: number;
  vocabFingerprint: string;
  /** Word pieces that occur in test / OOD texts but in no train or corpus text (should be 0). */
  unseenPieces: { count: number; pieces: string[] };
}

function lengthStats(xs: number[]): LengthStats {
  if (!xs.length) return { n: 0, mean: 0, max: 0 };
  return { n: xs.length, mean: Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10,
    max: Math.max(...xs) };
}

function teacherText(t: Task, syntax?: CallSyntax): string {
  return renderConversation(teacherTrajectory(syntax ? { ...t, syntax: t.syntax ?? syntax } : t));
}

/** The hinted system prompt of a task (HBG shows it during sampling; docs/design.md A.6). */
function hintedPrompt(t: Task): string {
  return renderConversation(new Episode(t, { hint: makeHint(t) }).initialMessages());
}

/**
 * The texts the vocabulary is built from: every conversation of `texts`, the splits the model may meet in the
 * other call syntax (python list), the hinted prompts, and the refusal, error and judge phrases.
 */
function vocabularyTexts(splits: Record<TaskSplit, Task[]>, texts: string[]): string[] {
  const out = texts.slice();
  for (const split of ['train', 'test', 'content_ood'] as TaskSplit[]) {
    for (const t of splits[split]) {
      out.push(teacherText(t, 'python'));
      out.push(hintedPrompt(t));
    }
  }
  // the PRS judge's fixed phrases (its reflections otherwise reuse task words and tool calls)
  out.push(REFUSAL_FUNC, REFUSAL_PARAM, TURN_DONE, ...errorProbeTexts(), ...JUDGE_TEXTS);
  return out;
}

/** Tasks per split and category, and the token lengths of their teacher conversations. */
function splitCounts(splits: Record<TaskSplit, Task[]>, teacherBy: Record<string, Record<string, string[]>>,
  tokenizer: Tokenizer):
  Pick<DatasetStats, 'counts' | 'teacherTokens'> {
  const counts: Record<string, Record<string, number>> = {};
  const teacherTokens: Record<string, Record<string, LengthStats>> = {};
  for (const split of TASK_SPLITS) {
    counts[split] = {};
    teacherTokens[split] = {};
    const all: number[] = [];
    for (const cat of CATEGORIES) {
      const txts = teacherBy[split][cat] ?? [];
      if (!txts.length) continue;
      counts[split][cat] = txts.length;
      const lens = txts.map((x) => tokenizer.encode(x).length);
      all.push(...lens);
      teacherTokens[split][cat] = lengthStats(lens);
    }
    counts[split].total = splits[split].length;
    teacherTokens[split].all = lengthStats(all);
  }
  return { counts, teacherTokens };
}

export function buildDataset(seed: number = DEFAULT_DATA_SEED, opts: DatasetOptions = {}): Dataset {
  const per = opts.tasksPerCategory ?? 100;
  const train: Task[] = [];
  for (const c of TRAIN_CATEGORIES) train.push(...generateTasks(c, per, seed, { idPrefix: 'train' }));
  const avoid = new Set(train.map(taskContentKey));
  const test: Task[] = [];
  for (const c of CATEGORIES) test.push(...generateTasks(c, per, seed + 1, { idPrefix: 'test', avoid }));
  const splits: Record<TaskSplit, Task[]> = {
    train,
    test,
    format_ood: formatOodTasks(test),
    content_ood: contentOodTasks(seed + 2, opts.contentOodTotal ?? 100),
  };
  const corpus = generateCorpus({ seed: seed + 3, ...(opts.corpus ?? {}) });

  // Texts by origin: "seen" (train + corpus) vs "held" (test + OOD), for the unseen-piece check.
  const seenTexts: string[] = [];
  const heldTexts: string[] = [];
  const teacherBy: Record<string, Record<string, string[]>> = {};
  for (const split of TASK_SPLITS) {
    teacherBy[split] = {};
    for (const t of splits[split]) {
      const txt = teacherText(t);
      (teacherBy[split][t.category] ??= []).push(txt);
      (split === 'train' ? seenTexts : heldTexts).push(txt);
    }
  }
  const corpusTexts = corpus.map((c) => renderConversation(c.messages));
  seenTexts.push(...corpusTexts);

  const tokenizer = Tokenizer.fromTexts(vocabularyTexts(splits, seenTexts.concat(heldTexts)));

  const seenTok = Tokenizer.fromTexts(seenTexts);
  const unseen = new Set<string>();
  for (const h of heldTexts) for (const p of seenTok.unknownPieces(h)) unseen.add(p);

  const { counts, teacherTokens } = splitCounts(splits, teacherBy, tokenizer);
  const kinds: Record<string, number> = {};
  for (const c of corpus) kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
  const stats: DatasetStats = {
    seed,
    counts,
    teacherTokens,
    corpus: { n: corpus.length, kinds, tokens: lengthStats(corpusTexts.map((x) => tokenizer.encode(x).length)) },
    vocabSize: tokenizer.size,
    vocabFingerprint: tokenizer.fingerprint,
    unseenPieces: { count: unseen.size, pieces: Array.from(unseen).sort() },
  };
  return { seed, splits, corpus, tokenizer, stats };
}

function jsonl(rows: unknown[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/** The files of a dataset, path (relative to the data dir) -> content. */
export function serializeDataset(d: Dataset): Record<string, string> {
  const out: Record<string, string> = {};
  for (const split of TASK_SPLITS) out[`tasks/${split}.jsonl`] = jsonl(d.splits[split]);
  out['corpus.jsonl'] = jsonl(d.corpus);
  out['vocab.json'] = JSON.stringify(d.tokenizer.toJSON(), null, 1) + '\n';
  out['stats.json'] = JSON.stringify(d.stats, null, 2) + '\n';
  return out;
}

/** Build and write data/ (tasks/*.jsonl, corpus.jsonl, vocab.json, stats.json); returns the stats. */
export function writeDataset(dir: string = 'data', seed: number = DEFAULT_DATA_SEED): DatasetStats {
  const d = buildDataset(seed);
  const files = serializeDataset(d);
  for (const rel of Object.keys(files)) {
    const full = path.join(dir, rel);
    writing(full, () => {
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, files[rel]);
    });
  }
  return d.stats;
}

function readLines(file: string): { line: number; value: unknown }[] {
  // strict: the splits are written whole, never appended, so even a torn last line is damage to report
  return readJsonl(file, `${file} not found; run \`npx toolrl data\` to generate it`, true).rows;
}

/**
 * Upper bounds on what a task file may hold. The committed splits stay far below them (user turns of at most
 * ~130 characters, 3 turns, 6 tools, records under 3,000 characters); a record past them could never fit the model's
 * context of ~1,000 tokens
 * and would only cost memory (a 10 MB user turn took ~1 GB and never showed in a rollout).
 */
export const TASK_BOUNDS = { userChars: 4000, turns: 32, tools: 64, recordChars: 65536, messageChars: 16000,
  messages: 128 };

function checkTask(v: unknown, where: string): Task {
  const t = v as Task;
  const bad = (field: string) => new Error(`${where}: task field "${field}" is missing or has the wrong type`);
  if (!t || typeof t !== 'object') throw new Error(`${where}: expected a task object`);
  if (typeof t.id !== 'string') throw bad('id');
  if (!(CATEGORIES as readonly string[]).includes(t.category)) throw bad('category');
  if (typeof t.family !== 'string') throw bad('family');
  if (t.initialState === undefined) throw bad('initialState');
  if (!Array.isArray(t.tools)) throw bad('tools');
  if (!Array.isArray(t.turns) || t.turns.length === 0) throw bad('turns');
  for (const turn of t.turns) if (typeof turn.user !== 'string' ||
    !Array.isArray(turn.gt)) throw bad('turns[].user/gt');
  const over = (what: string, n: number, bound: keyof typeof TASK_BOUNDS) =>
    new Error(`${where}: ${what} ${n}, over the bound of ${TASK_BOUNDS[bound]} (TASK_BOUNDS.${bound})`);
  if (t.turns.length > TASK_BOUNDS.turns) throw over('task turns:', t.turns.length, 'turns');
  if (t.tools.length > TASK_BOUNDS.tools) throw over('task tools:', t.tools.length, 'tools');
  t.turns.forEach((turn, i) => {
    if (turn.user.length > TASK_BOUNDS.userChars) throw over(`characters in the user message of turn ${i}:`,
      turn.user.length, 'userChars');
  });
  const chars = JSON.stringify(t).length;
  if (chars > TASK_BOUNDS.recordChars) throw over('characters in the task record:', chars, 'recordChars');
  return t;
}

/**
 * Splits derived from a committed one when loaded, so they add no file (and change no data fingerprint):
 * format+content-OOD is the content-OOD family posed in the python-list syntax, the paper's ACEBench column
 * in ACEBench's own call format (docs/design.md A.7).
 */
export const DERIVED_SPLITS = ['format_content_ood'] as const;

/** Tasks of a split from `dir/tasks/{split}.jsonl` (or derived from one); errors name the file and line. */
export function loadTasks(split: string, dir: string = 'data'): Task[] {
  if (split === 'format_content_ood') return formatOodTasks(loadTasks('content_ood', dir));
  if (!(TASK_SPLITS as readonly string[]).includes(split)) {
    throw new Error(`loadTasks: unknown split ${JSON.stringify(split)} (known: ` +
      `${[...TASK_SPLITS, ...DERIVED_SPLITS].join(', ')})`);
  }
  const file = path.join(dir, 'tasks', `${split}.jsonl`);
  return readLines(file).map(({ line, value }) => checkTask(value, `${file}:${line}`));
}

/** Corpus records (id, kind, syntax, messages) from `dir/corpus.jsonl`. */
export function loadCorpusRecords(dir: string = 'data'): CorpusConversation[] {
  const file = path.join(dir, 'corpus.jsonl');
  return readLines(file).map(({ line, value }) => {
    const c = value as CorpusConversation;
    if (!c || !Array.isArray(c.messages) || !c.messages.every((m) => m && typeof m.role === 'string' &&
      typeof m.content === 'string')) {
      throw new Error(`${file}:${line}: expected {"messages": [{"role", "content"}, ...]}`);
    }
    const long = c.messages.find((m) => m.content.length > TASK_BOUNDS.messageChars);
    if (c.messages.length > TASK_BOUNDS.messages || long) {
      throw new Error(`${file}:${line}: a conversation over the bounds of ${TASK_BOUNDS.messages} messages and ` +
        `${TASK_BOUNDS.messageChars} characters a message (data.ts TASK_BOUNDS)`);
    }
    return c;
  });
}

/** The corpus conversations as message lists (what SFT encodes). */
export function loadCorpus(dir: string = 'data'): Message[][] {
  return loadCorpusRecords(dir).map((c) => c.messages);
}

export type { Category };
