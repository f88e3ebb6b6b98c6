/**
 * Everything a run reads, loaded and validated before its folder is touched: the vocabulary, the training
 * and test tasks, every evaluation split, and the corpus when a stage trains on it. A damaged line in any of
 * these files (even content_ood.jsonl, read only by the final evaluation) is refused before the run starts,
 * naming the file and line, instead of failing an hour in with a half-written folder.
 *
 * Also here: the data of the SFT stages, drawn from those inputs (corpus, world sample, teacher
 * trajectories), and the never-seen tasks of the memorisation measure.
 */
import * as path from 'path';
import { Rng } from '../../prng';
import { loadTokenizer, Tokenizer } from '../../format/tokenizer';
import type { Message } from '../../format/types';
import { Task, TRAIN_CATEGORIES } from '../../envs/task';
import { generateTasks, taskContentKey } from '../../envs/generator';
import { loadTasks, loadCorpus } from '../../envs/data';
import { withEmptyCalls } from '../../envs/corpus';
import { teacherTrajectory } from '../../envs/teacher';
import { encodeConversation, TrainingSequence } from '../../train/encode';
import { SFTData, StageSpec } from '../registry/spec';
import { Preset } from '../registry/presets';

/**
 * The final evaluations: ID test tasks, the same with constrained decoding (the capability probe: only
 * structurally impossible tokens after `<tool_call>\n` forbidden), format-OOD, content-OOD, and format+content-OOD
 * (the held-out family in the python-list syntax: the paper's Table 2 has both ACEBench columns).
 */
export type EvalSplitName = 'id' | 'id_constrained' | 'format_ood' | 'content_ood' | 'format_content_ood';
export const EVAL_SPLITS: EvalSplitName[] = ['id', 'id_constrained', 'format_ood', 'content_ood', 'format_content_ood'];

/** The call syntax a split's prompts ask for: the python list on the format-OOD splits, tagged JSON elsewhere. */
export function splitSyntax(split: string): 'json' | 'python' {
  return split === 'format_ood' || split === 'format_content_ood' ? 'python' : 'json';
}

/** First `n` tasks of each category (all when n <= 0), in file order. */
export function perCategory(tasks: Task[], n: number): Task[] {
  if (n <= 0) return tasks;
  const count: Record<string, number> = {};
  return tasks.filter((t) => (count[t.category] = (count[t.category] ?? 0) + 1) <= n);
}

export interface RunInputs {
  dataDir: string;
  tok: Tokenizer;
  /** The whole training split, and the part of it the run trains on (the preset's trainTaskLimit). */
  trainSplit: Task[];
  trainTasks: Task[];
  /** The whole test split (validation takes a slice of it, the ID evaluation another). */
  testTasks: Task[];
  /** The tasks of each final evaluation, cut to the preset's evalTasksPerCategory. */
  evalTasks: Partial<Record<EvalSplitName, Task[]>>;
  /** The general corpus (cut to the preset's corpusLimit) when a stage trains on it or replays it, else null. */
  corpus: Message[][] | null;
}

/** Load every file the run `stages` under `preset` will read; throws naming the file (and line) that is wrong. */
export function loadInputs(stages: StageSpec[], preset: Preset, dataDir: string,
  evalSplits: EvalSplitName[]): RunInputs {
  const tok = loadTokenizer(path.join(dataDir, 'vocab.json'));
  const trainSplit = loadTasks('train', dataDir);
  const trainTasks = preset.trainTaskLimit > 0 ? perCategory(trainSplit,
    Math.ceil(preset.trainTaskLimit / 3)) : trainSplit;
  const testTasks = loadTasks('test', dataDir);
  const evalTasks: RunInputs['evalTasks'] = {};
  for (const split of evalSplits) {
    const id = split === 'id' || split === 'id_constrained';
    evalTasks[split] = perCategory(id ? testTasks : loadTasks(split, dataDir), preset.evalTasksPerCategory);
  }
  const needsCorpus = stages.some((s) => s.kind === 'sft' && (s.data === 'corpus' || (s.replay ?? 0) > 0));
  let corpus: Message[][] | null = null;
  if (needsCorpus) {
    corpus = loadCorpus(dataDir);
    if (preset.corpusLimit > 0) corpus = corpus.slice(0, preset.corpusLimit);
  }
  return { dataDir, tok, trainSplit, trainTasks, testTasks, evalTasks, corpus };
}

/** Seed of the world-sample tasks (distinct from the splits' seeds, and deduplicated against them). */
export const WORLD_SAMPLE_SEED = 7_000_001;

/** Seed of the corpus conversations a stage replays (SFT stage `replay`). */
export const REPLAY_SEED = 7_000_002;

/** Seed of the never-seen tasks of the memorisation measure (GRPOConfig.memoTasksPerCategory). */
export const UNSEEN_SEED = 7_000_003;
/** World-sample dialogues per category that the never-seen tasks avoid: the most any base config trains on. */
const WORLD_SAMPLE_MAX = 1500;

const unseenCache = new Map<string, Task[]>();
/**
 * `n` tasks per training category from the training distribution that neither split, nor any base's world
 * sample, holds: tasks RL never draws and no base has seen (memoised per data folder and n).
 */
export function unseenTasks(dataDir: string, n: number): Task[] {
  const key = `${path.resolve(dataDir)}:${n}`;
  if (!unseenCache.has(key)) {
    const splits = new Set(loadTasks('train', dataDir).concat(loadTasks('test', dataDir)).map(taskContentKey));
    const avoid = new Set(splits);
    // the world sample exactly as stageData draws it (a prefix of this for every count up to the maximum)
    for (const c of TRAIN_CATEGORIES) {
      for (const t of generateTasks(c, WORLD_SAMPLE_MAX, WORLD_SAMPLE_SEED,
        { idPrefix: 'instruct', avoid: splits })) avoid.add(taskContentKey(t));
    }
    unseenCache.set(key, TRAIN_CATEGORIES.flatMap((c) => generateTasks(c, n, UNSEEN_SEED,
      { idPrefix: 'unseen', avoid })));
  }
  return unseenCache.get(key)!;
}

/**
 * The training sequences of an SFT stage: its data, plus `extraWorld` world-sample dialogues per category, plus
 * `replay` corpus conversations drawn at random.
 */
export function sftData(
  stage: { data: SFTData; count?: number; replay?: number; extraWorld?: number; emptyCalls?: number },
  inputs: RunInputs): TrainingSequence[] {
  let data = stageData(stage.data, inputs, stage.count ?? 0, stage.emptyCalls ?? 0);
  if (stage.extraWorld) data = data.concat(stageData('world-sample', inputs, stage.extraWorld));
  if (!stage.replay) return data;
  const corpus = stageData('corpus', inputs, 0, stage.emptyCalls ?? 0);
  return data.concat(new Rng(REPLAY_SEED).sample(corpus, Math.min(stage.replay, corpus.length)));
}

/** Seed of the empty calls cut into the corpus (SFT stage `emptyCalls`). */
export const EMPTY_CALL_SEED = 7_000_004;

function stageData(kind: SFTData, inputs: RunInputs, count: number, emptyCalls = 0): TrainingSequence[] {
  const { tok } = inputs;
  if (kind === 'corpus') {
    const corpus = inputs.corpus ?? [];
    return (emptyCalls > 0 ? withEmptyCalls(corpus, emptyCalls, EMPTY_CALL_SEED) : corpus).map((c) =>
      encodeConversation(tok, c));
  }
  if (kind === 'world-sample') {
    // the world sample avoids every train and test task, whatever the preset's limit
    const avoid = new Set(inputs.trainSplit.concat(inputs.testTasks).map(taskContentKey));
    return TRAIN_CATEGORIES.flatMap((c) => generateTasks(c, count, WORLD_SAMPLE_SEED, { idPrefix: 'instruct', avoid }))
      .map((t) => encodeConversation(tok, teacherTrajectory(t, { syntax: 'json' })));
  }
  return inputs.trainTasks.map((t) => encodeConversation(tok, teacherTrajectory(t, { syntax: 'json' })));
}
